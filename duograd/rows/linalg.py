"""The linear-algebra rows: ``einsum_p`` (a multilinear ``Variadic`` whose VJP is again an
einsum, with the selector ``eye_of_p`` for a diagonal's adjoint) and the p-norm ``pnorm_p``.
Their public functions (``einsum``, the matrix products, the norms, torch's signatures)
are in ``duograd/linalg.py``, the layer above.
"""

from __future__ import annotations

import functools
import string
from typing import Any

import numpy as np

from ..autograd import Primitive, Variadic, zeros_like_p
from .._tensor import Tensor
from .core import _expand, _selector, abs_p, broadcast_to_p, equal_p, reshape_p, sum_p, where_p

_LETTERS = string.ascii_letters

# ====================================================================== einsum


def _einsum_fwd(*xs: np.ndarray, subs: tuple[str, ...], to: str) -> np.ndarray:
    return np.einsum(",".join(subs) + "->" + to, *xs, optimize=len(xs) > 2)


# The identity matrix of g's dtype: a diagonal's adjoint puts g back on the diagonal.
eye_of_p = _selector("eye_of", lambda g, n: np.eye(n, dtype=g.dtype))


def _einsum_grad(i: int, g: Tensor, out: Tensor, *xs: Tensor, subs: tuple[str, ...], to: str) -> Tensor:
    """The cotangent of input ``i``: the einsum of g with the other inputs, onto ``subs[i]``.

    A letter repeated in ``subs[i]`` (a diagonal) gets a fresh letter and the identity
    matrix joining the two; a letter found in no other operand and not in the output (a
    sum over it) is left out of the einsum and broadcast back."""
    s = subs[i]
    used = set("".join(subs) + to)
    fresh = iter(c for c in _LETTERS if c not in used)
    target, seen, ops, op_subs = [], set(), [g], [to]
    for j, x in enumerate(xs):
        if j != i:
            ops.append(x)
            op_subs.append(subs[j])
    for c in s:
        if c in seen:
            f = next(fresh)
            target.append(f)
            ops.append(eye_of_p(g, n=xs[i].shape[s.index(c)]))
            op_subs.append(c + f)
        else:
            seen.add(c)
            target.append(c)
    have = set("".join(op_subs))
    kept = "".join(c for c in target if c in have)
    gx = einsum_p(*ops, subs=tuple(op_subs), to=kept)
    if len(kept) < len(target):  # summed letters: put size-1 axes back, then broadcast
        shape = tuple(gx.shape[kept.index(c)] if c in have else 1 for c in target)
        gx = broadcast_to_p(reshape_p(gx, shape=shape),
                            shape=tuple(n if c in have else xs[i].shape[k]
                                        for k, (c, n) in enumerate(zip(target, shape))))
    return gx


def _einsum_jvp(i: int, t: Tensor, out: Tensor, *xs: Tensor, subs: tuple[str, ...], to: str) -> Tensor:
    # einsum is linear in each input: the tangent's share is the einsum with t in its place.
    return einsum_p(*xs[:i], t, *xs[i + 1:], subs=subs, to=to)


class _Multilinear(Variadic):
    """A Variadic whose JVP rule, like its VJP rule, takes the input's index first."""

    __slots__ = ()

    def jvp_rule(self, i: int) -> Any:
        return functools.partial(self.jvp[0], i)


einsum_p = _Multilinear("einsum", _einsum_fwd, vjp=(_einsum_grad,), jvp=(_einsum_jvp,))

# ====================================================================== norms


def _pnorm_fwd(x: np.ndarray, ord: float, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:  # noqa: A002
    if ord == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
    if ord == 2:
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
    return np.sum(np.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _pnorm_weight(out: Tensor, x: Tensor, ord: float, axis: tuple[int, ...], keepdims: bool) -> Tensor:  # noqa: A002
    """d out / d x, elementwise (out broadcast back over the reduced axes)."""
    zero = _expand(equal_p(out, 0.0), x.shape, axis, keepdims)
    n = _expand(out, x.shape, axis, keepdims)
    safe = where_p(zero, 1.0, n)
    # NOTE: where the norm is 0 the gradient is 0, not 0/0 (torch's choice for every p).
    if ord == 2:
        return where_p(zero, 0.0, x / safe)
    return where_p(zero, 0.0, x * abs_p(x) ** (ord - 2) / safe ** (ord - 1))


def _pnorm_vjp(g: Tensor, out: Tensor, x: Tensor, ord: float, axis: tuple[int, ...], keepdims: bool) -> Tensor:  # noqa: A002
    if ord == 0:  # a count of nonzeros: piecewise constant, zero gradient (torch: none)
        return zeros_like_p(x)
    return _expand(g, x.shape, axis, keepdims) * _pnorm_weight(out, x, ord, axis, keepdims)


def _pnorm_jvp(t: Tensor, out: Tensor, x: Tensor, ord: float, axis: tuple[int, ...], keepdims: bool) -> Tensor:  # noqa: A002
    if ord == 0:
        return zeros_like_p(out)
    return sum_p(t * _pnorm_weight(out, x, ord, axis, keepdims), axis=axis, keepdims=keepdims)


# The p-norm for finite p other than 1: (sum |x|^p)^(1/p); p = 0 counts the nonzeros.
pnorm_p = Primitive("pnorm", _pnorm_fwd, vjp=(_pnorm_vjp,), jvp=(_pnorm_jvp,))
