"""Function transforms in the style of JAX and ``torch.func``.

Each transform takes a function of Tensors that returns Tensors and gives back a
new function, so they compose: ``grad(grad(f))``, ``jacfwd(jacrev(f))``.

- ``grad`` / ``value_and_grad`` / ``vjp`` / ``jacrev`` run reverse mode. They record
  the backward pass (``create_graph``) only when something outside the transform
  can differentiate the result: an argument or a captured tensor that requires grad.
- ``jvp`` / ``jacfwd`` run forward mode: one sweep carries a tangent through every
  primitive's JVP rule. Nested calls get their own level, so ``jacfwd(jacfwd(f))``
  works too.
- ``hessian(f)`` is ``jacfwd(jacrev(f))`` and ``hvp`` is forward-over-reverse:
  ``jvp`` of ``grad(f)``. It costs about one gradient evaluation with a tangent
  riding along (roughly 2-3x a gradient) and keeps no second graph in memory,
  whereas reverse-over-reverse must record the whole backward pass
  (``create_graph=True``) and then run backward through it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import autograd, ops
from ._node import Node
from .autograd import (_toposort, enable_grad, enter_forward_level, exit_forward_level, pop_tangent,
                       set_tangent)
from ._tensor import Tensor, _as_tensor, _wrap

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "hvp",
           "grad_and_value", "functional_call", "stack_module_state"]

Argnums = int | Sequence[int]


def _alias(x: Any) -> Tensor:
    """A fresh node standing for ``x``: it carries x's tangents, passes gradients on to
    x when x requires grad, and can be differentiated with respect to."""
    return ops.identity_p(_as_tensor(x)).requires_grad_()


def _needs_graph(outs: Sequence[Tensor], aliases: Sequence[Tensor]) -> bool:
    """Whether a tensor outside ``aliases`` that requires grad feeds ``outs``: only then
    can anyone differentiate the gradients, so only then are they recorded."""
    if not autograd.is_grad_enabled():
        return False
    ids = {id(a) for a in aliases if a.is_leaf}
    roots = [o for o in outs if o.requires_grad]
    return any(type(n) is not Node and id(n) not in ids for n in _toposort(roots)) if roots else False


def _argnums(argnums: Argnums, nargs: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{fn}: argnums is empty; select at least one argument")
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"{fn}: argnums {argnums} out of range for {nargs} positional arguments")
    return tuple(n % nargs for n in nums)


def _restrict(f: Callable, args: tuple, nums: tuple[int, ...]) -> Callable:
    """``f`` as a function of the arguments at ``nums`` only, the rest held fixed."""
    def g(*sel):
        full = list(args)
        for n, s in zip(nums, sel):
            full[n] = s
        return f(*full)
    return g


def vjp(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``f(*primals)`` and a function mapping an output cotangent to one cotangent per primal.

    >>> import duograd as dg
    >>> out, vjp_fn = dg.func.vjp(lambda x: x * x, dg.tensor([1.0, 3.0]))
    >>> vjp_fn(dg.ones(2))[0].numpy()
    array([2., 6.])
    """
    with enable_grad():
        aliases = [_alias(p) for p in primals]
        out = f(*aliases)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    create = _needs_graph(outs, aliases)

    def vjp_fn(ct: Any) -> tuple[Tensor, ...]:
        cts = (ct,) if isinstance(out, Tensor) else tuple(ct)
        live = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
        if not live:
            return tuple(ops.zeros_like_p(a) for a in aliases)
        make = create or any(isinstance(c, Tensor) and c.requires_grad for _, c in live)
        with enable_grad():
            gs = autograd.grad([o for o, _ in live], aliases, grad_outputs=[c for _, c in live],
                               retain_graph=True, create_graph=make, allow_unused=True)
        return tuple(g if g is not None else ops.zeros_like_p(a) for g, a in zip(gs, aliases))

    if not create:  # nobody outside can differentiate it: hand back the value without its graph
        shown = tuple(ops.stop_gradient_p(o) for o in outs)
        return (shown[0] if isinstance(out, Tensor) else shown), vjp_fn
    return out, vjp_fn


def value_and_grad(f: Callable, argnums: Argnums = 0) -> Callable:
    """A function returning ``(f(*args), gradient)``; ``f`` must return a one-element Tensor.

    >>> import duograd as dg
    >>> v, g = dg.func.value_and_grad(lambda x: (x ** 2).sum())(dg.tensor([1.0, 2.0]))
    >>> float(v), g.numpy()
    (5.0, array([2., 4.]))
    """
    def fn(*args):
        nums = _argnums(argnums, len(args), "grad")
        out, vjp_fn = vjp(_restrict(f, args, nums), *[args[n] for n in nums])
        if not isinstance(out, Tensor) or out.numel() != 1:
            shape = out.shape if isinstance(out, Tensor) else type(out).__name__
            raise ValueError(f"grad: f must return a one-element Tensor, got {shape}")
        gs = vjp_fn(ops.ones_like_p(out))
        return out, (gs[0] if isinstance(argnums, int) else gs)
    return fn


def grad(f: Callable, argnums: Argnums = 0) -> Callable:
    """The gradient of a scalar-valued ``f``; compose it for higher derivatives.

    >>> import duograd as dg
    >>> d2 = dg.func.grad(dg.func.grad(lambda x: x.sin()))
    >>> round(float(d2(dg.tensor(1.0))), 6)   # -sin(1)
    -0.841471
    """
    vg = value_and_grad(f, argnums)
    return lambda *args: vg(*args)[1]


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(f(*primals), J·tangents)`` in one forward sweep.

    >>> import duograd as dg
    >>> out, t = dg.func.jvp(lambda x: x.exp(), (dg.tensor([0.0, 1.0]),), (dg.ones(2),))
    >>> t.numpy().round(4)
    array([1.    , 2.7183])
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    xs = [_as_tensor(p) for p in primals]
    ts = [_as_tensor(t) for t in tangents]
    for i, (x, t) in enumerate(zip(xs, ts)):
        if x.shape != t.shape:
            raise ValueError(f"jvp: tangent {i} has shape {t.shape} but its primal has shape {x.shape}")
    lvl = enter_forward_level()
    try:
        duals = []
        for x, t in zip(xs, ts):
            d = ops.identity_p(x)
            set_tangent(d, lvl, t if t.dtype == x.dtype else t.astype(x.dtype))
            duals.append(d)
        out = f(*duals)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        touts = []
        for o in outs:
            t = pop_tangent(o, lvl)
            touts.append(t if t is not None else ops.zeros_like_p(o))
    finally:
        exit_forward_level(lvl)
    return out, (touts[0] if isinstance(out, Tensor) else tuple(touts))


def jacrev(f: Callable, argnums: Argnums = 0) -> Callable:
    """The Jacobian by reverse mode: one VJP per output element. Shape: out.shape + x.shape.
    A tuple of outputs or of ``argnums`` gives tuples, nested outputs-first as ``torch.func``
    (``jac[i][j]`` is d out_i / d args[argnums[j]]).

    >>> import duograd as dg
    >>> dg.func.jacrev(lambda x: x * x)(dg.tensor([1.0, 2.0])).numpy()
    array([[2., 0.],
           [0., 4.]])
    """
    def fn(*args):
        nums = _argnums(argnums, len(args), "jacrev")
        sel = [_as_tensor(args[n]) for n in nums]
        out, vjp_fn = vjp(_restrict(f, args, nums), *sel)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        jacs = []  # jacs[i][k]: output i with respect to selected argument k
        for i, o in enumerate(outs):
            rows = []
            for j in range(o.numel()):
                e = np.zeros(o.numel(), dtype=o.dtype)
                e[j] = 1
                seed = _wrap(e.reshape(o.shape))
                cts = seed if isinstance(out, Tensor) else tuple(
                    seed if m == i else ops.zeros_like_p(p) for m, p in enumerate(outs))
                rows.append(vjp_fn(cts))
            jacs.append(tuple(ops.stack([r[k].reshape(-1) for r in rows]).reshape(o.shape + x.shape)
                              if rows else _wrap(np.zeros(o.shape + x.shape, dtype=o.dtype))
                              for k, x in enumerate(sel)))
        return _nest(jacs, isinstance(out, Tensor), isinstance(argnums, int))
    return fn


def jacfwd(f: Callable, argnums: Argnums = 0) -> Callable:
    """The Jacobian by forward mode: one JVP per input element. Shape: out.shape + x.shape.
    Tuples of outputs or of ``argnums`` nest as in ``jacrev``.

    >>> import duograd as dg
    >>> dg.func.jacfwd(lambda x: x * x)(dg.tensor([1.0, 2.0])).numpy()
    array([[2., 0.],
           [0., 4.]])
    """
    def fn(*args):
        nums = _argnums(argnums, len(args), "jacfwd")
        by_arg = []  # by_arg[k][i]: output i with respect to selected argument k
        for n in nums:
            x = _as_tensor(args[n])
            g = _restrict(f, args, (n,))
            cols = []
            for k in range(x.numel()):
                e = np.zeros(x.numel(), dtype=x.dtype)
                e[k] = 1
                out, t = jvp(g, (x,), (_wrap(e.reshape(x.shape)),))
                cols.append((t,) if isinstance(t, Tensor) else t)
            if not cols:
                out = g(x)
            outs = (out,) if isinstance(out, Tensor) else tuple(out)
            by_arg.append([ops.stack([c[i].reshape(-1) for c in cols], axis=-1).reshape(o.shape + x.shape)
                           if cols else _wrap(np.zeros(o.shape + x.shape, dtype=o.dtype))
                           for i, o in enumerate(outs)])
        jacs = [tuple(col[i] for col in by_arg) for i in range(len(by_arg[0]))]
        return _nest(jacs, isinstance(out, Tensor), isinstance(argnums, int))
    return fn


def _nest(jacs: list[tuple[Tensor, ...]], single_out: bool, single_arg: bool) -> Any:
    """Jacobian blocks ``jacs[i][k]`` shaped like the call: a bare Tensor for one output
    and an int ``argnums``, otherwise tuples, outputs outermost."""
    per_out = [blocks[0] if single_arg else tuple(blocks) for blocks in jacs]
    return per_out[0] if single_out else tuple(per_out)


def hessian(f: Callable, argnums: Argnums = 0) -> Callable:
    """The Hessian of a scalar-valued ``f``, as ``jacfwd(jacrev(f))`` (forward-over-reverse).

    >>> import duograd as dg
    >>> dg.func.hessian(lambda x: (x ** 3).sum())(dg.tensor([1.0, 2.0])).numpy()
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacfwd(jacrev(f, argnums), argnums)


def hvp(f: Callable, primals: Any, tangents: Any) -> tuple[Tensor, Any]:
    """``(f(*primals), H·v)`` as ``torch.autograd.functional.hvp``, computed
    forward-over-reverse (``jvp`` of the gradient; see the module docstring for why).
    A single Tensor in gives a single Tensor out; a tuple gives a tuple.

    >>> import duograd as dg
    >>> _, hv = dg.func.hvp(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0]), dg.ones(2))
    >>> hv.numpy()
    array([ 6., 12.])
    """
    single = isinstance(primals, Tensor)
    ps = (primals,) if single else tuple(primals)
    vs = (tangents,) if isinstance(tangents, Tensor) else tuple(tangents)
    holder: list[Tensor] = []

    def gradients(*xs):
        value, gs = value_and_grad(f, tuple(range(len(xs))))(*xs)
        holder.append(value)
        return gs

    _, hv = jvp(gradients, ps, vs)
    return holder[0], (hv[0] if single else hv)



# torch's pytree arguments (dicts of parameters), has_aux and keyword arguments for the
# transforms above, and functional_call / stack_module_state: duograd/func_module.py
from .func_module import functional_call, stack_module_state, tree_transforms as _tree  # noqa: E402
grad, value_and_grad, grad_and_value, vjp, jvp = _tree(grad, value_and_grad, vjp, jvp)
