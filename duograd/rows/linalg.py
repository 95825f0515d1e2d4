"""The linear-algebra rows: ``einsum_p`` (a multilinear ``Variadic`` whose VJP is again an
einsum, with the selector ``eye_of_p`` for a diagonal's adjoint), the p-norm ``pnorm_p``,
and the decompositions: ``det_p``, ``logabsdet_p`` (with the selector ``detsign_p``),
``qr_p``, ``eigh_p``, ``svd_p`` (one output each, chosen by ``which``) and
``matrix_exp_p``. Their public functions (``einsum``, the matrix products, the norms,
torch's signatures) are in ``duograd/linalg.py``, and those of the decompositions in
``duograd/linalg_more.py``, the layer above.
"""

from __future__ import annotations

import functools
import string
from typing import Any

import numpy as np

from ..autograd import Primitive, Variadic, zeros_like_p
from .._tensor import Tensor
from .core import (_expand, _mT, _selector, _unsqueeze, abs_p, broadcast_to_p, concatenate_p, equal_p,
                   reshape_p, sum_p, where_p)
from .distributions import trisolve_p
from .tensor_api import _inverse_p

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

# ====================================================================== decompositions
# det, slogdet, qr, eigh, svd and matrix_exp: their public functions (torch's checks and
# result tuples) are in ``duograd/linalg_more.py``.


def _gm(g: Tensor) -> Tensor:
    """A batch of scalars as a batch of 1x1 matrices (to scale matrices)."""
    return _unsqueeze(_unsqueeze(g, -1), -1)


def _sum_last2(x: Tensor) -> Tensor:
    """The sum over the last two axes (a trace, of an elementwise product)."""
    return sum_p(x, axis=(x.ndim - 2, x.ndim - 1), keepdims=False)


def _tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two axes (on and below ``diagonal``), as ``tril``."""
    m, n = x.shape[-2:]
    return where_p(np.tri(m, n, diagonal, dtype=bool), x, 0)


def _det_fwd(a: np.ndarray) -> np.ndarray:
    return np.asarray(np.linalg.det(a), dtype=a.dtype) if a.size else np.ones(a.shape[:-2], a.dtype)


def _slog_fwd(a: np.ndarray) -> np.ndarray:
    if not a.size:
        return np.zeros(a.shape[:-2], a.dtype)
    return np.asarray(np.linalg.slogdet(a)[1], dtype=a.dtype)


def _sign_fwd(a: np.ndarray) -> np.ndarray:
    if not a.size:
        return np.ones(a.shape[:-2], a.dtype)
    return np.asarray(np.linalg.slogdet(a)[0], dtype=a.dtype)


# d det A = det A tr(inv(A) dA): the cotangent is g det(A) inv(A)^T
det_p = Primitive("det", _det_fwd,
                  vjp=(lambda g, out, a: _gm(g * out) * _mT(_inverse_p(a)),),
                  jvp=(lambda t, out, a: out * _sum_last2(_mT(_inverse_p(a)) * t),))
# log |det A| has the cotangent g inv(A)^T (the sign is a selector)
logabsdet_p = Primitive("slogdet", _slog_fwd,
                        vjp=(lambda g, out, a: _gm(g) * _mT(_inverse_p(a)),),
                        jvp=(lambda t, out, a: _sum_last2(_mT(_inverse_p(a)) * t),))
detsign_p = _selector("slogdet_sign", _sign_fwd)


def _copyltu(m: Tensor) -> Tensor:
    """The lower triangle of m mirrored onto the upper one."""
    return _tril(m) + _mT(_tril(m, -1))


def _qr_fwd(a: np.ndarray, which: int, mode: str) -> np.ndarray:
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    return (q, r)[which].astype(a.dtype, copy=False)


def _qr_vjp(g: Tensor, out: Tensor, a: Tensor, which: int, mode: str) -> Tensor:
    # A = QR (m >= n, reduced): with M = R gR^T - gQ^T Q, gA = (gQ + Q copyltu(M)) R^{-T}
    q = qr_p(a, which=0, mode=mode)
    r = qr_p(a, which=1, mode=mode)
    if which == 0:
        m = -(_mT(g) @ q)
        ga = g + q @ _copyltu(m)
    else:
        m = r @ _mT(g)
        ga = q @ _copyltu(m)
    return _mT(trisolve_p(r, _mT(ga), upper=True))


qr_p = Primitive("qr", _qr_fwd, vjp=(_qr_vjp,))


def _eigh_fwd(a: np.ndarray, which: int, uplo: str) -> np.ndarray:
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return (w, v)[which].astype(a.dtype, copy=False)


def _eigh_vjp(g: Tensor, out: Tensor, a: Tensor, which: int, uplo: str) -> Tensor:
    lam = eigh_p(a, which=0, uplo=uplo)
    v = eigh_p(a, which=1, uplo=uplo)
    if which == 0:
        inner = _unsqueeze(g, -1) * np.eye(a.shape[-1], dtype=a.dtype)
    else:
        vg = _mT(v) @ g
        vg = 0.5 * (vg - _mT(vg))  # the skew part: the tangent space of the orthogonal group
        n = a.shape[-1]
        eye = np.eye(n, dtype=a.dtype)
        e = _unsqueeze(lam, -2) - _unsqueeze(lam, -1) + eye
        inner = vg / e * (1 - eye)
    return v @ inner @ _mT(v)


eigh_p = Primitive("eigh", _eigh_fwd, vjp=(_eigh_vjp,))


def _svd_fwd(a: np.ndarray, which: int, full: bool) -> np.ndarray:
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    return (u, s, vh)[which].astype(a.dtype, copy=False)


def _svd_vjp(g: Tensor, out: Tensor, a: Tensor, which: int, full: bool) -> Tensor:
    u = svd_p(a, which=0, full=False)
    s = svd_p(a, which=1, full=False)
    vh = svd_p(a, which=2, full=False)
    k = s.shape[-1]
    eye = np.eye(k, dtype=a.dtype)
    if which == 1:
        return u @ (_unsqueeze(g, -1) * vh)
    # U or Vh: the reduced-SVD rule (distinct nonzero singular values)
    s2 = s * s
    f = 1 / (_unsqueeze(s2, -2) - _unsqueeze(s2, -1) + eye) * (1 - eye)  # 1/(s_j^2 - s_i^2)
    sm = _unsqueeze(s, -2)  # row of s
    if which == 0:
        ug = _mT(u) @ g
        j = f * (ug - _mT(ug))
        term = u @ (j * sm) @ vh  # (J S)_ij = J_ij s_j
        if a.shape[-2] > k:  # (I - U U^T) gU S^{-1} Vh
            term = term + (g - u @ ug) / sm @ vh
        return term
    v = _mT(vh)
    gv = _mT(g)
    vg = _mT(v) @ gv
    j = f * (vg - _mT(vg))
    term = u @ (_unsqueeze(s, -1) * j) @ vh
    if a.shape[-1] > k:
        term = term + u @ _mT((gv - v @ vg) / sm)
    return term


svd_p = Primitive("svd", _svd_fwd, vjp=(_svd_vjp,))


def _expm(a: np.ndarray) -> np.ndarray:
    import scipy.linalg  # noqa: PLC0415
    if a.ndim == 2:
        return scipy.linalg.expm(a).astype(a.dtype, copy=False)
    flat = a.reshape(-1, *a.shape[-2:])
    return np.stack([scipy.linalg.expm(m) for m in flat]).reshape(a.shape).astype(a.dtype, copy=False) \
        if flat.shape[0] else np.zeros_like(a)


def _expm_vjp(g: Tensor, out: Tensor, a: Tensor) -> Tensor:
    # the Frechet derivative's adjoint: the top-right block of exp([[A^T, g], [0, A^T]])
    n = a.shape[-1]
    at = _mT(a)
    top = concatenate_p(at, g, axis=at.ndim - 1)
    bottom = concatenate_p(g * 0, at, axis=at.ndim - 1)
    big = matrix_exp_p(concatenate_p(top, bottom, axis=at.ndim - 2))
    return big[..., :n, n:]


matrix_exp_p = Primitive("matrix_exp", _expm, vjp=(_expm_vjp,))
