"""``dg.autograd.Function``: PyTorch's way to define an operation, built on ``Primitive``.

A subclass gives its forward in one of torch's two styles:

- ``@staticmethod forward(ctx, *args)``, which fills ``ctx`` itself;
- ``@staticmethod forward(*args)`` and ``@staticmethod setup_context(ctx, inputs, output)``,
  which fills it from the inputs and the output afterwards;

and ``@staticmethod backward(ctx, *grads)`` (one gradient per output in, one per forward
argument out, None where an argument needs none), and optionally ``@staticmethod
jvp(ctx, *tangents)`` for forward mode (``func.jvp``, ``autograd.forward_ad``). The forward
runs with recording and tangents off. ``apply`` makes each output a node whose VJP rules
call ``backward`` and whose JVP rules call ``jvp``, so a backward written in Tensor
operations is recorded under ``create_graph`` like any rule and can be differentiated again
(``once_differentiable`` forbids that).

How it maps onto the engine, where a node has one output: each output is its own node, and
its rule calls ``backward`` with that output's gradient and zeros (None under
``set_materialize_grads(False)``) for the others; ``backward`` is linear in its gradients,
so the engine's sum over outputs is torch's single call. Likewise ``jvp`` is called once per
input that carries a tangent, with zeros for the others.

``vmap`` / ``generate_vmap_rule`` are kept on the class for ``func.vmap`` to read.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from .. import _context as _ctx
from .._node import LEAF
from .._tensor import Tensor
from .engine import Primitive, is_grad_enabled, no_grad, zeros_like_p

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


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
    """The ``ctx`` of a ``Function``: what ``forward`` keeps for ``backward`` and ``jvp``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._saved: tuple = ()
        self._versions: tuple = ()
        self._saved_fwd: tuple | None = None
        self._in_jvp = False
        self._non_differentiable: set[int] = set()
        self._dirty: set[int] = set()
        self._outputs: dict[int, Tensor] = {}   # id(forward's output) -> the node returned
        self._last: dict = {}                   # output k -> (its cotangent, backward's result)
        self._last_jvp: dict = {}               # input i -> (its tangent, jvp's result)
        self._name = "Function"
        self._loop: Any = None                  # under vmap without a rule: backward per example

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (inputs, outputs, or None) for ``backward``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save Tensors or None, got "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(None if t is None else t._version for t in tensors)

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep ``tensors`` for ``jvp`` (read there as ``ctx.saved_tensors``)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; got "
                                f"{type(t).__name__}")
        self._saved_fwd = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors (an output saved in ``forward`` is the output ``apply``
        returned); raises if one was modified in place since it was saved. Inside ``jvp``,
        those of ``save_for_forward`` (if any)."""
        if self._in_jvp:  # as torch: jvp reads what save_for_forward kept, nothing else
            return tuple(self._outputs.get(id(t), t) if t is not None else None
                         for t in self._saved_fwd or ())
        out = []
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != v and id(t) not in self._dirty:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [saved tensor {i} of {self._name}, shape {t.shape}] is "
                    f"at version {t._version}; expected version {v} instead")
            out.append(self._outputs.get(id(t), t) if t is not None else None)
        return tuple(out)

    def mark_non_differentiable(self, *outputs: Tensor) -> None:
        """Outputs that get no gradient (their nodes have no VJP: indices, masks)."""
        self._non_differentiable.update(id(t) for t in outputs)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Inputs that ``forward`` modified in place (and returns): after ``apply`` each
        takes the output's history, as in torch."""
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """With False, an output that gets no gradient hands ``backward`` None for it (and
        ``jvp`` None for an input without a tangent) instead of zeros."""
        self.materialize_grads = bool(value)


def once_differentiable(fn: Callable) -> Callable:
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording,
    and differentiating its result again (``create_graph``) raises torch's error.

    >>> import duograd as dg
    >>> from duograd.autograd.function import once_differentiable
    >>> class Sq(dg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = dg.tensor(3.0, requires_grad=True)
    >>> float(dg.grad(Sq.apply(x), x)[0])
    6.0
    """
    @functools.wraps(fn)
    def wrapper(ctx: FunctionCtx, *args: Any) -> Any:
        with no_grad():
            res = fn(ctx, *args)
        if not is_grad_enabled():
            return res
        # as torch: only gradients that require grad (a recorded double backward) make the
        # result differentiable, and then differentiating it raises
        live = tuple(a for a in args if isinstance(a, Tensor) and a.requires_grad)
        if not live:
            return res

        def refuse(*_: Any) -> Tensor:
            raise RuntimeError("trying to differentiate twice a function that was marked with "
                               "@once_differentiable")

        def wrap(r: Any) -> Any:
            if not isinstance(r, Tensor):
                return r
            prim = Primitive("OnceDifferentiableBackward", lambda *xs, data=r._data: data,
                             vjp=(refuse,) * len(live), checkable=False)
            return prim(*live)

        return tuple(wrap(r) for r in res) if isinstance(res, tuple) else wrap(res)
    return wrapper


def _defines(cls: type, name: str) -> bool:
    """Whether ``cls`` overrides ``Function``'s ``name``."""
    own = getattr(cls, name, None)
    base = Function.__dict__[name]
    return getattr(own, "__func__", own) is not getattr(base, "__func__", base)


class Function:
    """Subclass with static ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grads)``, optionally
    ``jvp(ctx, *tangents)``; call ``apply``, as ``torch.autograd.Function``.

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

    generate_vmap_rule: bool = False  # read by func.vmap: batch the forward itself when True

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        name = cls.__name__
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        ctx._name = name
        level = _batched_level(args)
        masked = _ctx.mask_levels(0)  # the forward sees no tangents: jvp gives them
        try:
            if level is None:
                with no_grad():
                    result = _forward(cls, ctx, args, kwargs)
            else:  # inside func.vmap: generate_vmap_rule, the vmap staticmethod, or a loop
                from .. import batching  # noqa: PLC0415
                result = batching.function_forward(cls, ctx, args, kwargs, level)
        finally:
            _ctx.mask_levels(masked)
        many = isinstance(result, tuple)
        outs = result if many else (result,)
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                raise TypeError(f"{name}.forward must return Tensors; output {i} is a "
                                f"{type(o).__name__}")
        where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        inputs = tuple(args[i] for i in where)
        backward = cls.backward if _defines(cls, "backward") else cls.vjp

        def grads_for(k: int, g: Tensor) -> tuple:
            """backward's gradients for the forward arguments, given ``g`` for output k
            (zeros, or None, for the others; backward is linear in them). Cached per output."""
            last = ctx._last.get(k)
            if last is not None and last[0] is g:
                return last[1]
            gs = tuple(g if j == k else (zeros_like_p(o_node) if ctx.materialize_grads else None)
                       for j, o_node in enumerate(nodes))
            res = backward(ctx, *gs) if ctx._loop is None else ctx._loop(gs)
            res = res if isinstance(res, tuple) else (res,)
            if len(res) != len(args):
                raise RuntimeError(f"{name}.backward returned an incorrect number of gradients "
                                   f"(expected {len(args)}, got {len(res)})")
            ctx._last[k] = (g, res)
            return res

        def rule_for(k: int, i: int) -> Any:
            def rule(g: Tensor, out: Tensor, *xs: Tensor) -> Tensor:
                gx = grads_for(k, g)[where[i]]
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

        def tangents_for(i: int, t: Tensor) -> tuple:
            """jvp's output tangents, given ``t`` for input i (zeros or None for the rest)."""
            last = ctx._last_jvp.get(i)
            if last is not None and last[0] is t:
                return last[1]
            ts = [None] * len(args)
            for m, a in zip(where, inputs):
                ts[m] = t if m == where[i] else (zeros_like_p(a) if ctx.materialize_grads else None)
            ctx._in_jvp = True
            try:
                res = cls.jvp(ctx, *ts)
            finally:
                ctx._in_jvp = False
            res = res if isinstance(res, tuple) else (res,)
            if len(res) != len(outs):
                raise RuntimeError(f"{name}.jvp returned an incorrect number of tangents "
                                   f"(expected {len(outs)}, got {len(res)})")
            ctx._last_jvp[i] = (t, res)
            return res

        def jvp_for(k: int, i: int) -> Any:
            def rule(t: Tensor, out: Tensor, *xs: Tensor) -> Tensor:
                tk = tangents_for(i, t)[k]
                return zeros_like_p(out) if tk is None else tk
            return rule

        nodes: list[Tensor] = []
        for k, o in enumerate(outs):
            data = o._data
            label = name if len(outs) == 1 else f"{name}[{k}]"
            # under vmap, the row's batching rule hands on the batch forward computed
            given = None if level is None else _given(o, level)
            if id(o) in ctx._non_differentiable:
                prim = Primitive(label, lambda *xs, data=data: data, differentiable=False,
                                 checkable=False, batch=given)
            else:
                prim = Primitive(label, lambda *xs, data=data: data,
                                 vjp=tuple(rule_for(k, i) for i in range(len(inputs))),
                                 jvp=tuple(jvp_for(k, i) for i in range(len(inputs))),
                                 checkable=False, batch=given)
            node = prim(*inputs) if inputs else o
            if id(o) in ctx._dirty and node is not o:
                node = _dirtied(o, node, args, name)
            ctx._outputs[id(o)] = node
            nodes.append(node)
        return tuple(nodes) if many else nodes[0]


def _forward(cls: type, ctx: FunctionCtx, args: tuple, kwargs: dict) -> Any:
    """``cls.forward`` in either style: ``forward(ctx, ...)``, or ``forward(...)`` followed by
    ``setup_context(ctx, inputs, output)``."""
    if _defines(cls, "setup_context"):
        result = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, args, result)
        return result
    return cls.forward(ctx, *args, **kwargs)


def _dirtied(o: Tensor, node: Tensor, args: tuple, name: str) -> Tensor:
    """``o``, an input that ``forward`` modified in place and returned, given the history
    (and tangents) of the output ``node``, as torch's ``mark_dirty``."""
    if not any(a is o for a in args):
        raise RuntimeError(f"{name}: mark_dirty only accepts input tensors that forward "
                           "modified in place and returned")
    if o._node is LEAF and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation.")
    if node._node is not None or o._node is not None:
        o._node = node._node
    o._tangent = node._tangent
    return o
