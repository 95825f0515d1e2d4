"""``gradcheck`` and ``gradgradcheck``: every Jacobian entry against central differences.

The analytic Jacobian comes from the engine, one backward pass per output element;
the numeric one from central finite differences in float64, one pair of forward
evaluations per input element. They are independent: the numeric side only ever
calls ``f`` on plain values.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import autograd, ops
from ._tensor import Tensor, _wrap, tensor


class GradcheckError(AssertionError):
    """An analytic derivative disagrees with its finite-difference estimate.

    >>> import duograd as dg
    >>> wrong = dg.Primitive("wrong_square", forward=lambda x: x * x,
    ...                      vjp=(lambda g, out, x: g * x,))      # should be 2 g x
    >>> try:
    ...     dg.gradcheck(wrong, (dg.tensor([1.5], requires_grad=True),))
    ... except dg.GradcheckError as e:
    ...     print(str(e)[:48])
    gradcheck: input 0 (shape (1,)), element (0,), o
    """


def _float64_inputs(inputs: Sequence[Any]) -> list[Tensor]:
    if isinstance(inputs, Tensor):  # one tensor stands for a tuple of one, as torch's
        inputs = (inputs,)
    out = []
    for x in inputs:
        t = x if isinstance(x, Tensor) else Tensor(x)
        out.append(tensor(t._data.astype(np.float64), requires_grad=t.requires_grad))
    return out


def _jacobians(f: Callable, xs: list[Tensor], which: list[int], eps: float):
    out = f(*xs)
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: f must return a Tensor, got {type(out).__name__}")
    n_out = out.numel()
    analytic = [np.zeros((n_out, xs[i].numel())) for i in which]
    if out.requires_grad:
        for j in range(n_out):
            seed = np.zeros(n_out)
            seed[j] = 1.0
            gs = autograd.grad(out, [xs[i] for i in which], grad_outputs=_wrap(seed.reshape(out.shape)),
                               retain_graph=True, allow_unused=True)
            for k, g in enumerate(gs):
                if g is not None:
                    analytic[k][j] = g._data.reshape(-1)
    numeric = [np.zeros((n_out, xs[i].numel())) for i in which]
    with autograd.no_grad():
        for k, i in enumerate(which):
            base = xs[i]._data
            for e in range(base.size):
                cols = []
                for step in (eps, -eps):
                    moved = base.copy().reshape(-1)
                    moved[e] += step
                    args = list(xs)
                    args[i] = _wrap(moved.reshape(base.shape))
                    cols.append(np.asarray(f(*args)._data, dtype=np.float64).reshape(-1))
                numeric[k][:, e] = (cols[0] - cols[1]) / (2 * eps)
    return out, analytic, numeric


def gradcheck(f: Callable[..., Tensor], inputs: Sequence[Any], eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """Compare every Jacobian entry of ``f`` at ``inputs`` with central differences.

    Inputs that require grad are checked (all of them if none does). Returns True,
    or raises ``GradcheckError`` naming the input, the element and both values.

    >>> import duograd as dg
    >>> dg.gradcheck(lambda x: (x * x).sin(), (dg.tensor([0.3, -1.2], requires_grad=True),))
    True
    >>> dg.gradcheck(lambda x: x.square(), dg.tensor([0.5], requires_grad=True))  # one tensor
    True
    """
    xs = _float64_inputs(inputs)
    which = [i for i, x in enumerate(xs) if x.requires_grad] or list(range(len(xs)))
    for i in which:
        xs[i].requires_grad = True
    _, analytic, numeric = _jacobians(f, xs, which, eps)
    for k, i in enumerate(which):
        a, n = analytic[k], numeric[k]
        bad = np.abs(a - n) > atol + rtol * np.abs(n)
        bad |= np.isnan(a) != np.isnan(n)
        if bad.any():
            j, e = map(int, np.argwhere(bad)[0])
            index = np.unravel_index(e, xs[i].shape)
            raise GradcheckError(
                f"gradcheck: input {i} (shape {xs[i].shape}), element {tuple(map(int, index))}, "
                f"output element {j}: analytic {a[j, e]:.10g} vs numeric {n[j, e]:.10g}")
    return True


def gradgradcheck(f: Callable[..., Tensor], inputs: Sequence[Any], grad_outputs: Any = None,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, seed: int = 0) -> bool:
    """``gradcheck`` of the gradient: the map (x, v) -> d<f(x), v>/dx, with the cotangent
    ``v`` random (seeded) unless ``grad_outputs`` gives it. Checks second derivatives,
    which only an engine whose backward pass is itself differentiable gets right.

    ``v`` is checked as an input too (as in PyTorch's gradgradcheck): a VJP rule that is
    detached from its cotangent passes for every fixed ``v`` on a linear op, but its
    derivative with respect to ``v`` comes out zero.

    >>> import duograd as dg
    >>> dg.gradgradcheck(lambda x: (x ** 3).sum(), (dg.tensor([0.5, 2.0], requires_grad=True),))
    True
    """
    xs = _float64_inputs(inputs)
    which = [i for i, x in enumerate(xs) if x.requires_grad] or list(range(len(xs)))
    for i in which:
        xs[i].requires_grad = True
    out = f(*xs)
    v = grad_outputs if grad_outputs is not None else np.random.default_rng(seed).standard_normal(out.shape)
    v = Tensor(np.asarray(v._data if isinstance(v, Tensor) else v, dtype=np.float64), requires_grad=True)
    n = len(xs)

    @autograd.enable_grad()
    def first_derivatives(*args):
        args = list(args)
        for i in which + [n]:
            if not args[i].requires_grad:  # the finite-difference side passes plain values
                args[i] = tensor(args[i]._data, requires_grad=True)
        y = f(*args[:n])
        if not y.requires_grad:
            return _wrap(np.zeros(sum(args[i].numel() for i in which)))
        gs = autograd.grad(y, [args[i] for i in which], grad_outputs=args[n], create_graph=True,
                           allow_unused=True)
        flat = [g.reshape(-1) if g is not None else _wrap(np.zeros(args[i].numel()))
                for g, i in zip(gs, which)]
        return ops.concatenate(flat)

    try:
        return gradcheck(first_derivatives, xs + [v], eps=eps, atol=atol, rtol=rtol)
    except GradcheckError as e:
        raise GradcheckError(str(e).replace(f"gradcheck: input {n} ", "gradgradcheck: the cotangent v ")
                             .replace("gradcheck:", "gradgradcheck:", 1)) from None
