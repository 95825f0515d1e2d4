"""``dg.autograd.Function``: PyTorch's way to define an operation, built on ``Primitive``.

A subclass gives ``@staticmethod forward(ctx, *args)`` (Tensors in, Tensors out; run with
recording off) and ``@staticmethod backward(ctx, *grads)`` (one gradient per output in, one
per forward argument out, None where an argument needs none). ``apply`` makes each output a
node whose VJP rules call ``backward``, so a backward written in Tensor operations is
recorded under ``create_graph`` like any rule and can be differentiated again.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from .. import _context as _ctx
from .engine import Primitive, no_grad, zeros_like_p

def _batched_level(args: tuple) -> int | None:
    """The innermost ``func.vmap`` level among ``args`` (None: none is batched)."""
    if not _ctx.batch_levels:
        return None
    levels = [a._level for a in args if hasattr(a, "_level") and isinstance(a, Tensor)]
    return max(levels) if levels else None


def _given(o: Tensor, level: int) -> Any:
    """A batching rule that returns forward's batched output ``o`` (computed already)."""
    def rule(args: tuple, dims: tuple) -> tuple:
        if getattr(o, "_level", None) == level:
            return o._value, 0
        return o, None
    return rule


class FunctionCtx:
    """The ``ctx`` of a ``Function``: what ``forward`` keeps for ``backward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self._saved: tuple = ()
        self._versions: tuple = ()
        self._non_differentiable: set[int] = set()
        self._outputs: dict[int, Tensor] = {}   # id(forward's output) -> the node returned
        self._last: tuple = (None, None)         # (the cotangents, backward's result) cached
        self._loop: Any = None                   # under vmap without a rule: backward per example

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (inputs, outputs, or None) for ``backward``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save Tensors or None, got "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors (an output saved in ``forward`` is the output ``apply``
        returned); raises if one was modified in place since it was saved."""
        out = []
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [saved tensor {i} of {self._name}, shape {t.shape}] is "
                    f"at version {t._version}; expected version {v} instead")
            out.append(self._outputs.get(id(t), t) if t is not None else None)
        return tuple(out)

    def mark_non_differentiable(self, *outputs: Tensor) -> None:
        """Outputs that get no gradient (their nodes have no VJP: indices, masks)."""
        self._non_differentiable.update(id(t) for t in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """Accepted for torch's API; gradients are always materialised (zeros, not None)."""


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``apply``, as ``torch.autograd.Function``.

    >>> import duograd as dg
    >>> class Cube(dg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 3 * x ** 2
    >>> x = dg.tensor(2.0, requires_grad=True)
    >>> (gx,) = dg.grad(Cube.apply(x), x, create_graph=True)
    >>> (gxx,) = dg.grad(gx, x)
    >>> float(gx), float(gxx)
    (12.0, 12.0)
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Function.forward: define it in the subclass")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError("Function.backward: define it in the subclass")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        name = cls.__name__
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        ctx._name = name
        level = _batched_level(args)
        if level is None:
            with no_grad():
                result = cls.forward(ctx, *args, **kwargs)
        else:  # inside func.vmap: generate_vmap_rule, the vmap staticmethod, or a loop
            from .. import batching
            result = batching.function_forward(cls, ctx, args, kwargs, level)
        many = isinstance(result, tuple)
        outs = result if many else (result,)
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                raise TypeError(f"{name}.forward must return Tensors; output {i} is a "
                                f"{type(o).__name__}")
        where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        inputs = tuple(args[i] for i in where)
        n_out = len(outs)

        def grads_for(k: int, g: Tensor, out: Tensor, xs: tuple) -> tuple:
            """backward's gradients for the forward arguments, given ``g`` for output k
            (zeros for the others; backward is linear in them). Cached for one ``g``."""
            if ctx._last[0] is g:
                return ctx._last[1]
            gs = tuple(g if j == k else zeros_like_p(o_node) for j, o_node in enumerate(nodes))
            res = cls.backward(ctx, *gs) if ctx._loop is None else ctx._loop(gs)
            res = res if isinstance(res, tuple) else (res,)
            if len(res) != len(args):
                raise RuntimeError(f"{name}.backward returned an incorrect number of gradients "
                                   f"(expected {len(args)}, got {len(res)})")
            ctx._last = (g, res)
            return res

        def rule_for(k: int, i: int) -> Any:
            def rule(g: Tensor, out: Tensor, *xs: Tensor) -> Tensor:
                gx = grads_for(k, g, out, xs)[where[i]]
                if gx is None:
                    return zeros_like_p(xs[i])
                if not isinstance(gx, Tensor):
                    raise TypeError(f"{name}.backward: the gradient of argument {where[i]} is a "
                                    f"{type(gx).__name__}, not a Tensor or None")
                if gx.shape != xs[i].shape:
                    raise RuntimeError(f"{name}.backward: the gradient of argument {where[i]} has "
                                       f"shape {gx.shape}; the argument has shape {xs[i].shape}")
                return gx
            return rule

        nodes: list[Tensor] = []
        for k, o in enumerate(outs):
            data = o._data
            label = name if n_out == 1 else f"{name}[{k}]"
            # under vmap, the row's batching rule hands on the batch forward computed
            given = None if level is None else _given(o, level)
            if id(o) in ctx._non_differentiable:
                prim = Primitive(label, lambda *xs, data=data: data, differentiable=False,
                                 batch=given)
            else:
                prim = Primitive(label, lambda *xs, data=data: data,
                                 vjp=tuple(rule_for(k, i) for i in range(len(inputs))), batch=given)
            node = prim(*inputs) if inputs else o
            ctx._outputs[id(o)] = node
            nodes.append(node)
        return tuple(nodes) if many else nodes[0]
