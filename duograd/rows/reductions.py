"""The reduction, scan and sorting rows: ``cumprod_p``, ``prod_p``, ``logcumsumexp_p``, the
logical reductions ``all_p``/``any_p``, and the index selectors of sort, cummax/cummin, mode
and unique; and the selectors of ``more_ops``' unique_consecutive, nanmedian and
quantile/nanquantile (``unique_consecutive_p``, ``nanmedian_index_p``, ``quantile_plan_p``).
Their public functions (torch's signatures) are in ``duograd/reductions.py`` (and
``duograd/more_ops.py``), the layer above.

- ``cumprod_p``: its adjoint at a zero is where a division ``out / x`` would fail, so the
  rule never divides. For an axis of length n it builds the (n, n) products of the elements
  strictly between i and k (a ``cumprod`` of a masked copy) and contracts them with ``g``.
- ``prod_p``: its rule is ``g`` times the product of the *other* elements, the exclusive
  running products from the left and from the right (two ``cumprod``s), again no division,
  so ``prod`` of a row with one zero has the gradient torch gives.
- ``logcumsumexp_p``: the running ``logsumexp``.
- the selectors find int64 indices (never differentiated); the public functions pick the
  values with ``rows.indexing.gather_p``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import Primitive, ones_like_p, zeros_like_p
from .._tensor import Tensor
from .core import concatenate_p, cumsum_p, exp_p, getitem_p, reshape_p, row_max_p, sum_p, where_p
from .indexing import _move_from_end, _move_to_end

# ====================================================================== helpers


def _along(axis: int, ndim: int, i: Any) -> tuple:
    return (slice(None),) * axis + (i,) + (slice(None),) * (ndim - axis - 1)


def _flip(x: Tensor, axis: int) -> Tensor:
    return getitem_p(x, index=_along(axis, x.ndim, slice(None, None, -1)), basic=True)


def _shift_in_ones(x: Tensor, axis: int) -> Tensor:
    """x moved one place along ``axis``: a 1 comes in first, the last element drops out."""
    n = x.shape[axis]
    head = ones_like_p(getitem_p(x, index=_along(axis, x.ndim, slice(0, 1)), basic=True))
    body = getitem_p(x, index=_along(axis, x.ndim, slice(0, n - 1)), basic=True)
    return concatenate_p(head, body, axis=axis)


def _exclusive_left(x: Tensor, axis: int) -> Tensor:
    """prod_{j < i} x_j along ``axis`` (1 for the first)."""
    return cumprod_p(_shift_in_ones(x, axis), axis=axis)


def _unsqueeze(x: Tensor, axis: int) -> Tensor:
    return reshape_p(x, shape=x.shape[:axis] + (1,) + x.shape[axis:])

# ====================================================================== cumprod


def _between(x: Tensor) -> Tensor:
    """For x's last axis of length n: M[..., i, k] = prod_{i < j <= k} x_j for k >= i, else 0."""
    n = x.shape[-1]
    later = np.triu(np.ones((n, n), dtype=bool), 1)         # j > i
    reach = np.triu(np.ones((n, n), dtype=bool))            # k >= i
    rows = where_p(later, _unsqueeze(x, x.ndim - 1), 1.0)    # row i: x_j where j > i, else 1
    return where_p(reach, cumprod_p(rows, axis=rows.ndim - 1), 0.0)


def _cumprod_vjp(g: Tensor, out: Tensor, x: Tensor, axis: int) -> Tensor:
    # d out_k / d x_i = prod_{j < i} x_j * prod_{i < j <= k} x_j for i <= k: no division, so a
    # zero anywhere is exact (as torch).
    if x.ndim == 0:
        return g
    xl, gl = _move_to_end(x, axis), _move_to_end(g, axis)
    inner = sum_p(_between(xl) * _unsqueeze(gl, gl.ndim - 1), axis=(xl.ndim,), keepdims=False)
    return _move_from_end(_exclusive_left(xl, xl.ndim - 1) * inner, axis)


def _cumprod_jvp(t: Tensor, out: Tensor, x: Tensor, axis: int) -> Tensor:
    if x.ndim == 0:
        return t
    xl, tl = _move_to_end(x, axis), _move_to_end(t, axis)
    weighted = _exclusive_left(xl, xl.ndim - 1) * tl
    return _move_from_end(sum_p(_between(xl) * _unsqueeze(weighted, weighted.ndim), axis=(xl.ndim - 1,),
                                keepdims=False), axis)


cumprod_p = Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis) if x.ndim else x.copy(),
                      vjp=(_cumprod_vjp,), jvp=(_cumprod_jvp,))

# ====================================================================== prod


def _others(x: Tensor, axis: int) -> Tensor:
    """prod_{j != i} x_j along ``axis``: exclusive products from both ends, no division."""
    return _exclusive_left(x, axis) * _flip(_exclusive_left(_flip(x, axis), axis), axis)


def _prod_vjp(g: Tensor, out: Tensor, x: Tensor, axis: int, keepdims: bool) -> Tensor:
    # NOTE: the gradient is the product of the other elements (0 at every place of a row with
    # two zeros, the product of the rest at a lone zero), as torch.
    if x.ndim == 0 or x.shape[axis] == 0:
        return zeros_like_p(x) + (g if x.ndim == 0 else 0.0)
    if not keepdims:
        g = _unsqueeze(g, axis)
    return g * _others(x, axis)


def _prod_jvp(t: Tensor, out: Tensor, x: Tensor, axis: int, keepdims: bool) -> Tensor:
    if x.ndim == 0:
        return t
    if x.shape[axis] == 0:
        return zeros_like_p(out)
    return sum_p(t * _others(x, axis), axis=(axis,), keepdims=keepdims)


prod_p = Primitive("prod", lambda x, axis, keepdims:
                   np.prod(x, axis=axis, keepdims=keepdims) if x.ndim else x.copy(),
                   vjp=(_prod_vjp,), jvp=(_prod_jvp,))


# ====================================================================== logcumsumexp


def _logcumsumexp_fwd(x: np.ndarray, axis: int) -> np.ndarray:
    if x.ndim == 0:
        return x.copy()
    return np.logaddexp.accumulate(x, axis=axis)


def _logcumsumexp_vjp(g: Tensor, out: Tensor, x: Tensor, axis: int) -> Tensor:
    # d out_k / d x_i = exp(x_i - out_k) for i <= k: a running sum from the other end of
    # g_k exp(-out_k), times exp(x_i), both shifted by the max of x (held constant) so that
    # neither overflows for large x.
    if x.ndim == 0:
        return g
    m = row_max_p(x, axis=(axis,))
    tail = _flip(cumsum_p(_flip(g * exp_p(m - out), axis), axis=axis), axis)
    return exp_p(x - m) * tail


def _logcumsumexp_jvp(t: Tensor, out: Tensor, x: Tensor, axis: int) -> Tensor:
    if x.ndim == 0:
        return t
    m = row_max_p(x, axis=(axis,))
    return cumsum_p(t * exp_p(x - m), axis=axis) * exp_p(m - out)


logcumsumexp_p = Primitive("logcumsumexp", _logcumsumexp_fwd, vjp=(_logcumsumexp_vjp,),
                           jvp=(_logcumsumexp_jvp,))


# ====================================================================== all, any


def _logical(reduce: Any) -> Any:
    def fwd(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
        return np.asarray(reduce(x != 0, axis=axis, keepdims=keepdims))
    return fwd


all_p = Primitive("all", _logical(np.all), differentiable=False)
any_p = Primitive("any", _logical(np.any), differentiable=False)


# ====================================================================== the index selectors


def _sort_indices(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros((), np.int64)
    key = x
    if descending:
        key = x.astype(np.int64) if x.dtype == bool else x
        # Stable in both directions, as torch's stable sort; NaN counts as the largest.
        key = np.where(np.isnan(key), -np.inf, -key) if key.dtype.kind == "f" else -key
    return np.argsort(key, axis=axis, kind="stable").astype(np.int64)


sort_indices_p = Primitive("sort_indices", _sort_indices, differentiable=False)


def _cum_extremum_indices(x: np.ndarray, axis: int, larger: bool) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros((), np.int64)
    xl = np.moveaxis(x, axis, -1)
    idx = np.zeros(xl.shape, np.int64)
    if xl.shape[-1]:
        best = xl[..., 0].copy()
        cur = np.zeros(best.shape, np.int64)
        for k in range(xl.shape[-1]):
            v = xl[..., k]
            # NOTE: a tie moves the index to the later element, as torch's cummax/cummin.
            take = (v >= best if larger else v <= best) | np.isnan(v)
            take &= ~np.isnan(best) | np.isnan(v)
            best = np.where(take, v, best)
            cur = np.where(take, k, cur)
            idx[..., k] = cur
    return np.moveaxis(idx, -1, axis)


cum_extremum_indices_p = Primitive("cum_extremum_indices", _cum_extremum_indices, differentiable=False)


def _mode_indices(x: np.ndarray, axis: int) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros((), np.int64)
    xl = np.moveaxis(x, axis, -1)
    rows = xl.reshape(-1, xl.shape[-1])
    out = np.zeros(rows.shape[0], np.int64)
    for r, row in enumerate(rows):
        vals, counts = np.unique(row, return_counts=True)
        v = vals[np.argmax(counts)]             # the smallest of the most frequent values
        out[r] = np.flatnonzero(row == v)[-1]   # its last place, as torch
    return out.reshape(xl.shape[:-1])


mode_indices_p = Primitive("mode_indices", _mode_indices, differentiable=False)


def _unique(x: np.ndarray, which: str, axis: Any) -> np.ndarray:
    vals, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=axis)
    if which == "values":
        return vals
    if which == "inverse":
        return inverse.astype(np.int64).reshape(x.shape if axis is None else (x.shape[axis],))
    return counts.astype(np.int64)


unique_p = Primitive("unique", _unique, differentiable=False, value_shape=True)


def _unique_consecutive(x: np.ndarray, which: str, axis: Any) -> np.ndarray:
    """One of unique_consecutive's results: the first element of each run of equal ones
    ("values"; along ``axis``: equal slices), each element's run ("inverse"), or the runs'
    lengths ("counts")."""
    m = x.reshape(-1) if axis is None else np.moveaxis(x, axis, 0)
    n = m.shape[0]
    if n == 0:
        starts = np.zeros(0, np.int64)
    else:
        diff = (m[1:] != m[:-1]).reshape(n - 1, int(np.prod(m.shape[1:]))).any(1)
        starts = np.concatenate([[0], np.nonzero(diff)[0] + 1])
    if which == "values":
        return m[starts].copy() if axis is None else np.moveaxis(m[starts], 0, axis).copy()
    if which == "inverse":
        ids = np.zeros(n, np.int64)
        if n:
            ids[starts[1:]] = 1
            ids = np.cumsum(ids)
        return ids.reshape(x.shape if axis is None else (n,))
    ends = np.concatenate([starts[1:], [n]]) if n else np.zeros(0, np.int64)
    return (ends - starts).astype(np.int64)


unique_consecutive_p = Primitive("unique_consecutive", _unique_consecutive, differentiable=False,
                                 value_shape=True)


def _nanmedian_index(x: np.ndarray, axis: int) -> np.ndarray:
    valid = (~np.isnan(x)).sum(axis, keepdims=True)
    return np.maximum((valid - 1) // 2, 0).astype(np.int64)


# Where the lower median of the values that are not NaN sits in the sorted values along
# ``axis`` (kept, length 1): nanmedian's index into its sort.
nanmedian_index_p = Primitive("nanmedian_index", _nanmedian_index, differentiable=False)


def _quantile_plan(q: np.ndarray, srt: np.ndarray, nan: bool, interpolation: str, which: str,
                   dtype: Any) -> np.ndarray:
    """One of quantile's arrays for the q-th quantiles (``q`` 1-D) of the rows ``srt``
    (sorted along the last axis, NaN last): the positions of the two neighbours ("lo",
    "hi", int64 of shape (Q, ..., 1)), the weight of the upper one ("w", ``dtype``), or
    where the result is NaN ("nan", (Q, ...)): a row with NaN, or with ``nan``
    (nanquantile, which skips NaN) a row of NaN only."""
    isn = np.isnan(srt)
    n = srt.shape[-1]
    qs = np.asarray(q, dtype=np.float64)
    valid = (~isn).sum(-1, keepdims=True) if nan else np.full(isn.shape[:-1] + (1,), n)
    rank = qs.reshape((-1,) + (1,) * srt.ndim) * (valid - 1)   # (Q, ..., 1)
    full = (len(qs),) + srt.shape[:-1] + (1,)
    if which == "nan":
        hit = (~isn).sum(-1) == 0 if nan else isn.any(-1)
        return np.broadcast_to(hit, full[:-1]).copy()
    lo = np.floor(rank).astype(np.int64)
    hi = np.ceil(rank).astype(np.int64)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = np.round(rank).astype(np.int64)  # half to even, as torch
    lo, hi = np.clip(lo, 0, n - 1), np.clip(hi, 0, n - 1)
    if which == "w":
        if interpolation == "midpoint":
            w = np.where(lo == hi, 0.0, np.full(rank.shape, 0.5))
        elif interpolation == "linear":
            w = rank - np.floor(rank)
        else:
            w = np.zeros(rank.shape)
        return np.broadcast_to(w, full).astype(dtype)
    return np.broadcast_to(lo if which == "lo" else hi, full).copy()


quantile_plan_p = Primitive("quantile_plan", _quantile_plan, differentiable=False, promote=None)
