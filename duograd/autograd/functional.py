"""``dg.autograd.functional``, as ``torch.autograd.functional``: ``jacobian``, ``hessian``,
``vjp``, ``jvp``, ``hvp`` and ``vhp`` of a function of a Tensor or a tuple of Tensors.

Each takes the function, its inputs (a Tensor or a tuple of them) and gives results shaped
as the inputs and outputs were: a bare Tensor where a bare Tensor came, a tuple where a
tuple came, and for ``jacobian`` / ``hessian`` a tuple of tuples (outputs outermost) when
both sides are tuples. The function runs on fresh stand-ins of the inputs, so the caller's
tensors are never differentiated in place; without ``create_graph`` every result is
detached, with it the results keep their history (and that of the inputs that required
grad), so they can be differentiated again. ``strict=True`` raises torch's errors where
an output does not depend on an input (instead of giving zeros).

``jvp`` and ``hvp`` use the double-backward trick, as torch does: a vector-Jacobian
product is linear in its cotangent, so differentiating it with respect to that cotangent
gives the Jacobian-vector product. ``jacobian(strategy="forward-mode")`` runs the forward
mode (``engine.enter_forward_level``), one sweep per input element.

``vectorize=True`` batches the sweeps through ``func.vmap``, as torch: reverse mode is one
backward sweep of all the unit cotangents at once (``autograd.grad(...,
is_grads_batched=True)``), forward mode one forward sweep of all the unit tangents;
``vectorize=False`` runs one sweep per output element (reverse) in a Python loop.

>>> import duograd as dg
>>> from duograd.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, dg.tensor([1.0, 2.0])).numpy()
array([[2., 0.],
       [0., 4.]])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._tensor import Tensor, _wrap
from .engine import (enable_grad, enter_forward_level, exit_forward_level, grad as _engine_grad,
                     is_grad_enabled, pop_tangent, set_grad_enabled, set_tangent, zeros_like_p)

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---------------------------------------------------------------- helpers

def _as_tuple(x: Any, what: str, fn: str) -> tuple[bool, tuple]:
    """(whether ``x`` was a tuple, ``x`` as a tuple of Tensors); torch's TypeError otherwise."""
    if isinstance(x, tuple):
        for i, el in enumerate(x):
            if not isinstance(el, Tensor):
                raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                                f"Tensors but the value at index {i} has type {type(el)}.")
        return True, x
    if isinstance(x, list):
        return _as_tuple(tuple(x), what, fn)
    if not isinstance(x, Tensor):
        raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors "
                        f"but the given {what} has type {type(x)}.")
    return False, (x,)


def _stand_ins(xs: tuple, create_graph: bool, need_graph: bool = True) -> tuple:
    """What the function runs on: under ``create_graph`` an input that requires grad is
    passed through an identity (its history stays), otherwise a detached copy of the
    reference (``need_graph``: one that requires grad)."""
    from ..ops import identity_p
    out = []
    for x in xs:
        if create_graph and x.requires_grad:
            out.append(identity_p(x))
        else:
            d = x.detach()
            out.append(d.requires_grad_() if need_graph else d)
    return tuple(out)


def _finish(ts: tuple, create_graph: bool) -> tuple:
    return ts if create_graph else tuple(t.detach() for t in ts)


def _shaped(res: Any, is_tuple: Any) -> Any:
    """``res`` as the call had it: one level (bool) or two levels (a pair of bools)."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if is_tuple else res[0]


def _check_v(v: tuple, refs: tuple, refs_tuple: bool) -> None:
    if len(v) != len(refs):
        if refs_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, refs)):
        if a.shape != b.shape:
            where = f"Entry {i} in " if refs_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


def _check_requires_grad(ts: tuple, kind: str, strict: bool) -> None:
    """torch's strict-mode checks on outputs, gradients and Jacobians."""
    if not strict:
        return
    for i, t in enumerate(ts):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               "inputs of the user-provided function. This is not allowed in "
                               "strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           "gradients. The outputs must be computed in a differentiable manner "
                           "from the input when running in strict mode.")


def _grads(outs: tuple, ins: tuple, seeds: Any, create_graph: bool) -> tuple:
    """``autograd.grad`` of the outputs that have a graph (others contribute nothing),
    None for an input nothing reaches."""
    seeds = (None,) * len(outs) if seeds is None else tuple(seeds)
    live = [(o, s) for o, s in zip(outs, seeds) if o is not None and o.requires_grad]
    if not live:
        return (None,) * len(ins)
    return _engine_grad([o for o, _ in live], list(ins), grad_outputs=[s for _, s in live],
                        retain_graph=True, create_graph=create_graph, allow_unused=True)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_zeros(gs: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    out = []
    for i, (g, ref) in enumerate(zip(gs, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = zeros_like_p(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _v_or_none(v: Any, refs: tuple, refs_tuple: bool, fn: str, create_graph: bool,
               what: str) -> tuple | None:
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with "
                               "a single element.")
        return None
    _, vs = _as_tuple(v, "v", fn)
    vs = _stand_ins(vs, create_graph, need_graph=False)
    _check_v(vs, refs, refs_tuple)
    return vs


def _single_output(out: Any, fn: str, strict: bool) -> tuple:
    is_t, outs = _as_tuple(out, "outputs of the user-provided function", fn)
    _check_requires_grad(outs, "outputs", strict)
    if is_t or not isinstance(outs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a "
                           "single element")
    return outs


# ---------------------------------------------------------------- products

def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``, as ``torch.autograd.functional.vjp``.

    >>> import duograd as dg
    >>> out, g = dg.autograd.functional.vjp(lambda x: x * 3, dg.tensor([1.0, 2.0]), dg.ones(2))
    >>> g.numpy()
    array([3., 3.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _stand_ins(ins, create_graph)
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outs, "outputs", strict)
        vs = _v_or_none(v, outs, out_tuple, "vjp", create_graph,
                        "user-provided function returns")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        gs = _fill_zeros(_grads(outs, ins, vs, create_graph), ins, strict, create_graph, "back")
    return (_shaped(_finish(outs, create_graph), out_tuple),
            _shaped(_finish(gs, create_graph), in_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``, as ``torch.autograd.functional.jvp`` (by the double-backward
    trick, as torch).

    >>> import duograd as dg
    >>> out, t = dg.autograd.functional.jvp(lambda x: x ** 2, dg.tensor([1.0, 2.0]), dg.ones(2))
    >>> t.numpy()
    array([2., 4.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _stand_ins(ins, create_graph)
        vs = _v_or_none(v, ins, in_tuple, "jvp", create_graph, "input to the user-provided function is")
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outs, "outputs", strict)
        cts = tuple(zeros_like_p(o).requires_grad_() for o in outs)
        g_in = _grads(outs, ins, cts, True)
        _check_requires_grad(g_in, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        live = [(g, s) for g, s in zip(g_in, vs if vs is not None else (None,) * len(ins))
                if g is not None]
        res = _grads(tuple(g for g, _ in live), cts, tuple(s for _, s in live), create_graph)
        ts = _fill_zeros(res, outs, strict, create_graph, "back_trick")
    return (_shaped(_finish(outs, create_graph), out_tuple),
            _shaped(_finish(ts, create_graph), out_tuple))


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """``(func(inputs), v^T H)`` of a scalar ``func``, as ``torch.autograd.functional.vhp``.

    >>> import duograd as dg
    >>> _, h = dg.autograd.functional.vhp(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0]), dg.ones(2))
    >>> h.numpy()
    array([ 6., 12.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "vhp")
        ins = _stand_ins(ins, create_graph)
        vs = _v_or_none(v, ins, in_tuple, "vhp", create_graph,
                        "input to the user-provided function is")
        outs = _single_output(func(*ins), "vhp", strict)
        jac = _grads(outs, ins, None, True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        live = [(j, s) for j, s in zip(jac, vs if vs is not None else (None,) * len(ins))
                if j is not None]
        res = _grads(tuple(j for j, _ in live), ins, tuple(s for _, s in live), create_graph)
        hs = _fill_zeros(res, ins, strict, create_graph, "double_back")
    return _finish(outs, create_graph)[0], _shaped(_finish(hs, create_graph), in_tuple)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """``(func(inputs), H v)`` of a scalar ``func``, as ``torch.autograd.functional.hvp``
    (by the double-backward trick, as torch; ``vhp`` is cheaper and equal for a symmetric H).

    >>> import duograd as dg
    >>> _, h = dg.autograd.functional.hvp(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0]), dg.ones(2))
    >>> h.numpy()
    array([ 6., 12.])
    """
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "hvp")
        ins = _stand_ins(ins, create_graph)
        vs = _v_or_none(v, ins, in_tuple, "hvp", create_graph,
                        "input to the user-provided function is")
        outs = _single_output(func(*ins), "hvp", strict)
        jac = _grads(outs, ins, None, True)
        _check_requires_grad(jac, "jacobian", strict)
        gjac = tuple(zeros_like_p(x).requires_grad_() for x in ins)
        live = [(j, g) for j, g in zip(jac, gjac) if j is not None]
        back = _grads(tuple(j for j, _ in live), ins, tuple(g for _, g in live), True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        live = [(b, s) for b, s in zip(back, vs if vs is not None else (None,) * len(ins))
                if b is not None]
        res = _grads(tuple(b for b, _ in live), gjac, tuple(s for _, s in live), create_graph)
        hs = _fill_zeros(res, ins, strict, create_graph, "double_back_trick")
    return _finish(outs, create_graph)[0], _shaped(_finish(hs, create_graph), in_tuple)


# ---------------------------------------------------------------- Jacobians

def _jacfwd(func: Callable, inputs: Any, strict: bool, vectorize: bool) -> Any:
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    from ..func import vmap
    from ..ops import identity_p
    blocks: list[list[Tensor] | None] = []  # blocks[j][i]: d output i / d input j
    outs: tuple = ()
    out_tuple = False
    for j, x in enumerate(ins):
        m = x.numel()
        if m == 0:
            blocks.append(None)
            continue
        shown: list = []

        def column(t: Tensor, j: int = j, shown: list = shown) -> tuple:
            lvl = enter_forward_level()
            try:
                duals = []
                for k, y in enumerate(ins):
                    d = identity_p(y)
                    if k == j:
                        set_tangent(d, lvl, t)
                    duals.append(d)
                shown.append(_as_tuple(func(*duals), "outputs of the user-provided function",
                                       "jacobian"))
                res = tuple(pop_tangent(o, lvl) for o in shown[-1][1])
            finally:
                exit_forward_level(lvl)
            return tuple(zeros_like_p(o) if t is None else t for t, o in zip(res, shown[-1][1]))
        basis = _wrap(np.eye(m, dtype=x.dtype).reshape((m,) + tuple(x.shape)))
        cols = vmap(column, out_dims=-1, _loop_on_access=True)(basis)
        out_tuple, outs = shown[-1]
        blocks.append([c.reshape(tuple(o.shape) + tuple(x.shape)).detach()
                       for c, o in zip(cols, outs)])
    if not outs:
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
    jac = tuple(tuple(
        blocks[j][i] if blocks[j] is not None else _wrap(np.zeros(o.shape + x.shape, dtype=o.dtype))
        for j, x in enumerate(ins)) for i, o in enumerate(outs))
    if in_tuple:  # torch's forward-mode gives lists for tuple inputs
        lists = [list(blocks) for blocks in jac]
        return lists if out_tuple else lists[0]
    return _shaped(jac, (out_tuple, in_tuple))


def _jacrev_vectorized(outs: tuple, ins: tuple, create_graph: bool) -> tuple:
    """The reverse-mode Jacobian blocks by one batched backward sweep per output: every unit
    cotangent at once (``autograd.grad(..., is_grads_batched=True)``, through ``vmap``)."""
    jac = []
    for o in outs:
        m = o.numel()
        if m == 0 or not o.requires_grad:
            jac.append(tuple(_wrap(np.zeros(o.shape + x.shape, dtype=o.dtype)) for x in ins))
            continue
        basis = _wrap(np.eye(m, dtype=o.dtype).reshape((m,) + tuple(o.shape)))
        with set_grad_enabled(create_graph):
            gs = _engine_grad([o], list(ins), grad_outputs=[basis], retain_graph=True,
                              create_graph=create_graph, allow_unused=True, is_grads_batched=True)
        jac.append(tuple(
            (g.reshape(o.shape + x.shape) if g is not None
             else _wrap(np.zeros(o.shape + x.shape, dtype=o.dtype)))
            for g, x in zip(gs, ins)))
    return tuple(_finish(blocks, create_graph) for blocks in jac)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``, as ``torch.autograd.functional.jacobian``:
    block ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``.

    >>> import duograd as dg
    >>> J = dg.autograd.functional.jacobian(lambda a, b: a * b, (dg.tensor([1.0, 2.0]), dg.tensor(3.0)))
    >>> J[0].numpy(), J[1].numpy()
    (array([[3., 0.],
           [0., 3.]]), array([1., 2.]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                'mode"` are not supported together (yet). Please either set `create_graph=False` '
                'or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _stand_ins(ins, create_graph)
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        if vectorize:
            jac = _jacrev_vectorized(outs, ins, create_graph)
            return _shaped(jac, (out_tuple, in_tuple))
        from ..ops import stack
        jac = []
        for i, o in enumerate(outs):
            rows: list[list[Tensor]] = [[] for _ in ins]
            for k in range(o.numel()):
                e = np.zeros(o.numel(), dtype=o.dtype)
                e[k] = 1
                with set_grad_enabled(create_graph):
                    gs = _grads((o,), ins, (_wrap(e.reshape(o.shape)),), create_graph)
                for j, (g, x) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {j}. This is not allowed in "
                                               "strict mode.")
                        g = zeros_like_p(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[j].append(g.reshape(-1))
            jac.append(tuple(
                stack(rows[j]).reshape(o.shape + x.shape) if rows[j]
                else _wrap(np.zeros(o.shape + x.shape, dtype=o.dtype))
                for j, x in enumerate(ins)))
        jac = tuple(_finish(blocks, create_graph) for blocks in jac)
    return _shaped(jac, (out_tuple, in_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func``, as ``torch.autograd.functional.hessian``: the
    Jacobian of its Jacobian (the outer one by ``outer_jacobian_strategy``); block
    ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.

    >>> import duograd as dg
    >>> dg.autograd.functional.hessian(lambda x: (x ** 3).sum(), dg.tensor([1.0, 2.0])).numpy()
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*xs: Tensor) -> Tensor:
        return _single_output(func(*xs), "hessian", strict)[0].squeeze()

    def jac_of(*xs: Tensor) -> tuple:
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        j = jacobian(scalar, xs, create_graph=True)
        _check_requires_grad(j, "jacobian", strict)
        return j

    res = jacobian(jac_of, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _shaped(res, (in_tuple, in_tuple))
