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

import functools
import itertools

from . import _context as _ctx, autograd, batching, ops
from ._node import Node
from .autograd import (_toposort, enable_grad, enter_forward_level, exit_forward_level, pop_tangent,
                       set_tangent)
from ._tensor import Tensor, _as_tensor, _wrap

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "hvp",
           "grad_and_value", "functional_call", "stack_module_state", "vmap"]

Argnums = int | Sequence[int]


def _alias(x: Any) -> Tensor:
    """A fresh node standing for ``x``: it carries x's tangents, passes gradients on to
    x when x requires grad, and can be differentiated with respect to."""
    return ops.identity_p(_as_tensor(x)).requires_grad_()


def _needs_graph(outs: Sequence[Tensor], aliases: Sequence[Tensor], primals: Sequence[Any] = ()) -> bool:
    """Whether a tensor outside ``aliases`` that requires grad feeds ``outs``: only then
    can anyone differentiate the gradients, so only then are they recorded."""
    if not autograd.is_grad_enabled():
        return False
    ids = {id(a) for a in aliases if a.is_leaf}
    roots = [o for o in outs if o.requires_grad]
    if not roots:
        return False
    order = _toposort(roots)
    if any(type(n) is not Node and id(n) not in ids for n in order):
        return True
    if not _ctx.batch_levels:
        return False
    # inside vmap: a batched tensor's batch may require grad (differentiated outside the
    # vmap) while its example has no history: the primals, and the tensors the graph captured
    return any(_batch_requires_grad(p) for p in primals) or any(
        _batch_requires_grad(x) for n in order if type(n) is Node for x in n.inputs or ())


def _batch_requires_grad(t: Any) -> bool:
    """Whether ``t`` is a batched tensor without history of its example whose batch (at any
    level) requires grad: something outside the vmap differentiates through it. (One with
    history got it from this transform's aliases, whose batches need no graph of their own.)"""
    while type(t) is batching.BatchedTensor and t._node is None:
        t = t._value
        if t.requires_grad:
            return True
    return False


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
    create = _needs_graph(outs, aliases, primals)

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


def _basis(n: int, shape: tuple, dtype: Any) -> Tensor:
    """The ``n`` unit vectors of a tensor of ``shape``, stacked: shape (n,) + shape."""
    return _wrap(np.eye(n, dtype=dtype).reshape((n,) + tuple(shape)))


def _split_aux(f: Callable, has_aux: bool, fn: str, holder: list) -> Callable:
    if not has_aux:
        return f

    def g(*xs):
        res = f(*xs)
        if not isinstance(res, tuple) or len(res) != 2:
            raise RuntimeError(f"{fn}(f, ...)(*args): output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        holder.append(res[1])
        return res[0]
    return g


def _plain_aux(aux: Any) -> Any:
    """The aux output without the graph of the transform (as torch.func: its value only)."""
    if isinstance(aux, Tensor):
        return ops.stop_gradient_p(aux)
    if isinstance(aux, (tuple, list)):
        return type(aux)(_plain_aux(a) for a in aux)
    if isinstance(aux, dict):
        return {k: _plain_aux(v) for k, v in aux.items()}
    return aux


def jacrev(f: Callable, argnums: Argnums = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable:
    """The Jacobian by reverse mode: the VJPs of every output element at once, as one
    batched backward sweep (``vmap`` of the VJP over the unit cotangents; ``chunk_size`` of
    them at a time). Shape: out.shape + x.shape. A tuple of outputs or of ``argnums`` gives
    tuples, nested outputs-first as ``torch.func`` (``jac[i][j]`` is d out_i / d
    args[argnums[j]]); ``has_aux``: ``f`` returns ``(output, aux)`` and so does the result.

    >>> import duograd as dg
    >>> dg.func.jacrev(lambda x: x * x)(dg.tensor([1.0, 2.0])).numpy()
    array([[2., 0.],
           [0., 4.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0, got {chunk_size}")

    def fn(*args):
        nums = _argnums(argnums, len(args), "jacrev")
        sel = [_as_tensor(args[n]) for n in nums]
        holder: list = []
        out, vjp_fn = vjp(_restrict(_split_aux(f, has_aux, "jacrev", holder), args, nums), *sel)
        single = isinstance(out, Tensor)
        outs = (out,) if single else tuple(out)
        jacs = []  # jacs[i][k]: output i with respect to selected argument k
        for i, o in enumerate(outs):
            m = o.numel()
            if m == 0:
                jacs.append(tuple(_wrap(np.zeros(o.shape + x.shape, dtype=o.dtype)) for x in sel))
                continue
            if single:
                rows = vmap(vjp_fn, chunk_size=chunk_size, _loop_on_access=True)(_basis(m, o.shape, o.dtype))
            else:
                others = tuple(None if k == i else ops.zeros_like_p(p) for k, p in enumerate(outs))

                def one(ct, i=i, others=others):
                    return vjp_fn(tuple(ct if k == i else z for k, z in enumerate(others)))
                rows = vmap(one, chunk_size=chunk_size, _loop_on_access=True)(_basis(m, o.shape, o.dtype))
            jacs.append(tuple(r.reshape(o.shape + x.shape) for r, x in zip(rows, sel)))
        res = _nest(jacs, single, isinstance(argnums, int))
        return (res, _plain_aux(holder[0])) if has_aux else res
    return fn


def jacfwd(f: Callable, argnums: Argnums = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian by forward mode: the JVPs along every input element at once, one
    batched forward sweep (``vmap`` of ``jvp`` over the unit tangents). Shape: out.shape +
    x.shape. Tuples of outputs or of ``argnums`` nest as in ``jacrev``; ``has_aux`` too.

    >>> import duograd as dg
    >>> dg.func.jacfwd(lambda x: x * x)(dg.tensor([1.0, 2.0])).numpy()
    array([[2., 0.],
           [0., 4.]])
    """
    def fn(*args):
        nums = _argnums(argnums, len(args), "jacfwd")
        by_arg = []  # by_arg[k][i]: output i with respect to selected argument k
        aux_out: list = []
        single = True
        for n in nums:
            x = _as_tensor(args[n])
            holder: list = []
            g = _restrict(_split_aux(f, has_aux, "jacfwd", holder), args, (n,))
            m = x.numel()
            if m == 0:
                out = g(x)
                single = isinstance(out, Tensor)
                outs = (out,) if single else tuple(out)
                by_arg.append([_wrap(np.zeros(o.shape + x.shape, dtype=o.dtype)) for o in outs])
            else:
                shown: list = []

                def tangent_of(t, g=g, x=x, shown=shown):
                    out, t_out = jvp(g, (x,), (t,))
                    shown.append(out)
                    return t_out
                cols = vmap(tangent_of, out_dims=-1, randomness=randomness,
                            _loop_on_access=True)(_basis(m, x.shape, x.dtype))
                single = isinstance(cols, Tensor)
                cols = (cols,) if single else tuple(cols)
                by_arg.append([c.reshape(tuple(c.shape[:-1]) + x.shape) for c in cols])
            if holder and not aux_out:
                aux_out.append(holder[0])
        jacs = [tuple(col[i] for col in by_arg) for i in range(len(by_arg[0]))]
        res = _nest(jacs, single, isinstance(argnums, int))
        if has_aux:
            aux = aux_out[0]
            return res, _plain_aux(aux)
        return res
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



# ====================================================================== vmap

_vmap_levels = itertools.count(1)


class _RandomSeen(Exception):
    """A random draw inside a vmap(randomness="different") run: redone example by example."""


class _RandomWatch:
    """A listener of the draws made inside one vmap call (``_tensor._draw`` reports them)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def on_effect(self, e: Any) -> None:
        if isinstance(e, _ctx.Draw):
            if self.mode == "error":
                raise RuntimeError("vmap: called random operation while in randomness error mode. "
                                   "Please either use the 'same' or 'different' randomness flags "
                                   "on vmap or perform the randomness operation out of vmap")
            raise _RandomSeen


def _tree_leaves(tree: Any) -> list:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _tree_leaves(t)]
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in _tree_leaves(tree[k])]
    return [tree]


def _tree_map(fn: Callable, tree: Any, dims: Any, what: str) -> Any:
    """``fn(leaf, dim)`` over ``tree`` with ``dims`` a prefix of its structure (an int or
    None applies to every leaf under it), as torch's in_dims/out_dims."""
    if dims is None or isinstance(dims, int) and not isinstance(dims, bool):
        if isinstance(tree, (tuple, list)):
            return type(tree)(_tree_map(fn, t, dims, what) for t in tree)
        if isinstance(tree, dict):
            return {k: _tree_map(fn, v, dims, what) for k, v in tree.items()}
        return fn(tree, dims)
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)) and len(dims) == len(tree):
        return type(tree)(_tree_map(fn, t, d, what) for t, d in zip(tree, dims))
    if isinstance(dims, dict) and isinstance(tree, dict) and set(dims) == set(tree):
        return {k: _tree_map(fn, tree[k], dims[k], what) for k in tree}
    raise ValueError(f"vmap: {what} is not compatible with the structure of the "
                     f"{'inputs' if what == 'in_dims' else 'outputs'}: {what}={dims!r} against "
                     f"{type(tree).__name__}" + (f" of length {len(tree)}"
                                                 if isinstance(tree, (tuple, list)) else ""))


def _check_dims(dims: Any, what: str) -> None:
    for d in _tree_leaves(dims):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap: expected {what} to be int or a (potentially nested) tuple "
                             f"matching the structure of the {'inputs' if what == 'in_dims' else 'outputs'}"
                             f", got: {type(d).__name__}")


def _select(x: Tensor, d: int, start: int, stop: int | None) -> Tensor:
    """Examples ``start:stop`` of ``x`` along ``d`` (``stop`` None: the one example ``start``)."""
    idx = (slice(None),) * d + ((start,) if stop is None else (slice(start, stop),))
    return ops.getitem_p(x, index=idx, basic=True)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None, _loop_on_access: bool = False) -> Callable:
    """``func`` mapped over a batch dimension of its inputs, as ``torch.func.vmap``: each
    primitive runs once on the whole batch through its batching rule (``duograd.batching``;
    a row without one runs in a loop and warns once). ``in_dims`` says which dimension of
    each input is the batch (None: the input is shared), ``out_dims`` where the batch goes in
    each output; both are ints, None, or trees (tuples, lists, dicts) shaped like the
    arguments and the outputs. ``randomness``: "error" (a random draw inside raises),
    "same" (one draw for the whole batch) or "different" (a draw per example, by running
    the examples one by one). ``chunk_size`` maps that many examples at a time. Nests, and
    composes with ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``.

    >>> import duograd as dg
    >>> x, w = dg.tensor([[1.0, 2.0], [3.0, 4.0]]), dg.tensor([1.0, -1.0])
    >>> dg.func.vmap(dg.dot, in_dims=(0, None))(x, w).numpy()
    array([-1., -1.])
    >>> loss = lambda w, x: (x * w).sum() ** 2
    >>> dg.func.vmap(dg.func.grad(loss), in_dims=(None, 0))(w, x).numpy()   # per-sample grads
    array([[-2., -4.],
           [-6., -8.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_dims(in_dims, "in_dims")
    _check_dims(out_dims, "out_dims")
    name = getattr(func, "__name__", type(func).__name__)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not isinstance(in_dims, (int, tuple, list, dict)) and in_dims is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...): expected `in_dims` to be "
                             "int or a (potentially nested) tuple matching the structure of inputs")
        dims = (in_dims,) * len(args) if in_dims is None or isinstance(in_dims, int) else in_dims
        if isinstance(dims, list):
            dims = tuple(dims)
        if not isinstance(dims, tuple) or len(dims) != len(args):
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not "
                             f"compatible with the structure of `inputs`. in_dims has structure "
                             f"of length {len(dims) if isinstance(dims, tuple) else 1} but inputs "
                             f"has {len(args)} positional arguments")
        sizes: list = []

        def check(x, d):
            if d is None:
                return None
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} "
                                 f"for an input but the input is of type {type(x)}. We cannot vmap "
                                 "over non-Tensor arguments, please use None as the respective in_dim")
            nd = x.ndim
            if not -nd <= d < nd:
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} "
                                 f"for some input, but that input is a Tensor of dimensionality {nd} "
                                 f"so expected in_dim to satisfy {-nd} <= in_dim < {nd}.")
            sizes.append(x.shape[d % nd])
            return d % nd

        flat_dims = _tree_map(check, args, dims, "in_dims")
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): At least one of the "
                             "inputs must be a Tensor with a mapped (not None) in_dim")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        size = sizes[0]
        step = size if chunk_size is None else min(chunk_size, size)
        parts = []
        for start in range(0, size, max(step, 1)):
            stop = min(start + step, size)
            parts.append((_run(func, args, kwargs, flat_dims, start, stop, size, randomness, name),
                          stop - start))
        if len(parts) == 1:
            return parts[0][0]
        return _cat_chunks([p for p, _ in parts], out_dims)

    def _run(func, args, kwargs, flat_dims, start, stop, size, randomness, name):
        n = stop - start
        if randomness == "same":
            return _vectorised(func, args, kwargs, flat_dims, start, stop, n, None, name)
        try:
            return _vectorised(func, args, kwargs, flat_dims, start, stop, n, randomness, name)
        except _RandomSeen:
            pass
        except batching.ValueAccessError:
            if not _loop_on_access:  # jacrev/jacfwd of a rule that reads values: row by row
                raise
        outs = []  # "different": one example at a time, each with draws of its own
        for b in range(start, stop):
            one = _tree_map(lambda x, d: x if d is None else _select(x, d, b, None), args,
                            flat_dims, "in_dims")
            outs.append(func(*one, **kwargs))
        return _stack_examples(outs, out_dims, name)

    def _vectorised(func, args, kwargs, flat_dims, start, stop, n, watch, name):
        level = next(_vmap_levels)

        def enter(x, d):
            if d is None:
                return x
            v = x if start == 0 and stop == x.shape[d] else _select(x, d, start, stop)
            return batching.wrap(batching.movedim(v, d, 0), level)

        _ctx.batch_levels.append((level, n))
        listener = _RandomWatch(watch) if watch is not None else None
        try:
            if listener is not None:
                _ctx.push(listener)
            try:
                batched = _tree_map(enter, args, flat_dims, "in_dims")
                out = func(*batched, **kwargs)
            finally:
                if listener is not None:
                    _ctx.remove(listener)
            return _tree_map(lambda o, d: _leave(o, d, level, n, name), out, out_dims, "out_dims")
        finally:
            _ctx.batch_levels.remove((level, n))

    return wrapped


def _leave(o: Any, d: int | None, level: int, n: int, name: str) -> Tensor:
    if not isinstance(o, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(o)}. Did you mean to set out_dims= to None for output?"
                         if d is not None else
                         f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}")
    batched = type(o) is batching.BatchedTensor and o._level == level
    if d is None:
        if batched:
            raise ValueError(f"vmap({name}, ...): out_dims=None for an output that is batched "
                             f"(it depends on the mapped inputs); give it an out_dim")
        return o
    value = o._value if batched else batching._expand(o, n)
    nd = value.ndim
    if not -nd <= d < nd:
        raise ValueError(f"vmap({name}, ...): Got out_dim={d} for an output of dimensionality "
                         f"{nd - 1}, so expected out_dim to satisfy {-nd} <= out_dim < {nd}")
    return batching.movedim(value, 0, d % nd)


def _stack_examples(outs: list, out_dims: Any, name: str) -> Any:
    first = outs[0]
    flat = [_tree_leaves(o) for o in outs]
    dims = _tree_leaves(_tree_map(lambda o, d: d, first, out_dims, "out_dims"))
    res = []
    for k, d in enumerate(dims):
        col = [f[k] for f in flat]
        if not isinstance(col[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(col[0])}")
        res.append(col[0] if d is None else ops.stack(col, d % (col[0].ndim + 1)))
    it = iter(res)
    return _tree_map(lambda o, d: next(it), first, out_dims, "out_dims")


def _cat_chunks(parts: list, out_dims: Any) -> Any:
    first = parts[0]
    flat = [_tree_leaves(p) for p in parts]
    dims = _tree_leaves(_tree_map(lambda o, d: d, first, out_dims, "out_dims"))
    res = []
    for k, d in enumerate(dims):
        col = [f[k] for f in flat]
        res.append(col[0] if d is None else ops.concatenate_p(*col, axis=d % col[0].ndim))
    it = iter(res)
    return _tree_map(lambda o, d: next(it), first, out_dims, "out_dims")


# torch's pytree arguments (dicts of parameters), has_aux and keyword arguments for the
# transforms above, and functional_call / stack_module_state: duograd/func_module.py
from .func_module import functional_call, stack_module_state, tree_transforms as _tree  # noqa: E402
from .func_module import tree_jacobians as _tree_jac  # noqa: E402
grad, value_and_grad, grad_and_value, vjp, jvp = _tree(grad, value_and_grad, vjp, jvp)
jacrev, jacfwd = _tree_jac(jacrev, jacfwd)  # hessian (jacfwd of jacrev) takes pytrees through them
