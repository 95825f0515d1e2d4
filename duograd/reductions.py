"""Reductions, scans and sorting with PyTorch's signatures and results: ``prod``, ``all``,
``any``, ``cumprod``, ``cummax``/``cummin``, ``logcumsumexp``, ``sort``, ``argsort``, ``topk``,
``kthvalue``, ``median``, ``mode``, ``unique``.

Three primitives are new:

- ``cumprod_p``: its adjoint at a zero is where a division ``out / x`` would fail, so the
  rule never divides. For an axis of length n it builds the (n, n) products of the elements
  strictly between i and k (a ``cumprod`` of a masked copy) and contracts them with ``g``.
- ``prod_p``: its rule is ``g`` times the product of the *other* elements, the exclusive
  running products from the left and from the right (two ``cumprod``s), again no division,
  so ``prod`` of a row with one zero has the gradient torch gives.
- ``logcumsumexp_p``: the running ``logsumexp``.

Everything that picks elements (sort, topk, kthvalue, median, mode, cummax, cummin) is a
*selector* that finds the int64 indices (never differentiated) followed by
``indexing.gather_p``, whose adjoint adds ``g`` back at those indices; so the values get
torch's gradient and the indices none. ``all``, ``any`` and ``unique`` are selectors.

>>> import duograd as dg
>>> x = dg.tensor([2.0, 0.0, 3.0], requires_grad=True)
>>> dg.prod(x).backward()
>>> x.grad.numpy()
array([0., 6., 0.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import return_types
from .autograd import Primitive
from .indexing import _move_from_end, _move_to_end, gather_p
from .shapes import dim_index
from . import ops
from .ops import concatenate_p, exp_p, getitem_p, reshape_p, row_max_p, sum_p, where_p
from ._tensor import Tensor

# ====================================================================== helpers


def _along(axis: int, ndim: int, i: Any) -> tuple:
    return (slice(None),) * axis + (i,) + (slice(None),) * (ndim - axis - 1)


def _flip(x: Tensor, axis: int) -> Tensor:
    return getitem_p(x, index=_along(axis, x.ndim, slice(None, None, -1)), basic=True)


def _shift_in_ones(x: Tensor, axis: int) -> Tensor:
    """x moved one place along ``axis``: a 1 comes in first, the last element drops out."""
    n = x.shape[axis]
    head = ops.ones_like_p(getitem_p(x, index=_along(axis, x.ndim, slice(0, 1)), basic=True))
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
    return _move_from_end(sum_p(_between(xl) * ops.unsqueeze(weighted, -1), axis=(xl.ndim - 1,),
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
        return ops.zeros_like_p(x) + (g if x.ndim == 0 else 0.0)
    if not keepdims:
        g = _unsqueeze(g, axis)
    return g * _others(x, axis)


def _prod_jvp(t: Tensor, out: Tensor, x: Tensor, axis: int, keepdims: bool) -> Tensor:
    if x.ndim == 0:
        return t
    if x.shape[axis] == 0:
        return ops.zeros_like_p(out)
    return sum_p(t * _others(x, axis), axis=(axis,), keepdims=keepdims)


prod_p = Primitive("prod", lambda x, axis, keepdims:
                   np.prod(x, axis=axis, keepdims=keepdims) if x.ndim else x.copy(),
                   vjp=(_prod_vjp,), jvp=(_prod_jvp,))


def prod(x: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The product over ``dim`` (None: every element, a 0-d result). Its gradient is the
    product of the other elements, exact with zeros.

    >>> import duograd as dg
    >>> dg.prod(dg.tensor([[1.0, 2.0], [3.0, 4.0]]), 1).numpy()
    array([ 2., 12.])
    """
    if dtype is not None:
        x = ops.astype(x, dtype)
    if dim is None:
        return prod_p(reshape_p(x, shape=(x.numel(),)), axis=0, keepdims=False)
    return prod_p(x, axis=dim_index(dim, x.ndim, "prod", x.shape), keepdims=bool(keepdim))


def cumprod(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The running product along ``dim``; the gradient is exact where x has zeros.

    >>> import duograd as dg
    >>> dg.cumprod(dg.tensor([1.0, 2.0, 3.0]), 0).numpy()
    array([1., 2., 6.])
    """
    if dtype is not None:
        x = ops.astype(x, dtype)
    return cumprod_p(x, axis=dim_index(dim, x.ndim, "cumprod", x.shape) if x.ndim else 0)

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
    tail = _flip(ops.cumsum_p(_flip(g * exp_p(m - out), axis), axis=axis), axis)
    return exp_p(x - m) * tail


def _logcumsumexp_jvp(t: Tensor, out: Tensor, x: Tensor, axis: int) -> Tensor:
    if x.ndim == 0:
        return t
    m = row_max_p(x, axis=(axis,))
    return ops.cumsum_p(t * exp_p(x - m), axis=axis) * exp_p(m - out)


logcumsumexp_p = Primitive("logcumsumexp", _logcumsumexp_fwd, vjp=(_logcumsumexp_vjp,),
                           jvp=(_logcumsumexp_jvp,))


def logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow.

    >>> import duograd as dg
    >>> dg.logcumsumexp(dg.tensor([0.0, 0.0]), 0).numpy()
    array([0.        , 0.69314718])
    """
    return logcumsumexp_p(x, axis=dim_index(dim, x.ndim, "logcumsumexp", x.shape) if x.ndim else 0)

# ====================================================================== all, any


def _logical(reduce: Any) -> Any:
    def fwd(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
        return np.asarray(reduce(x != 0, axis=axis, keepdims=keepdims))
    return fwd


all_p = Primitive("all", _logical(np.all), differentiable=False)
any_p = Primitive("any", _logical(np.any), differentiable=False)


def _bool_reduce(p: Primitive, x: Tensor, dim: Any, keepdim: bool, op: str) -> Tensor:
    if dim is None:
        axis = None if not keepdim else tuple(range(x.ndim))
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axis = tuple(dim_index(d, x.ndim, op, x.shape) for d in dims) if x.ndim else ()
        if len(set(axis)) != len(axis):
            raise RuntimeError(f"{op}: dim {dim} appears more than once")
    return p(x, axis=axis, keepdims=bool(keepdim))


def all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether every element (over ``dim``) is nonzero: a bool tensor.

    >>> import duograd as dg
    >>> bool(dg.all(dg.tensor([1.0, 2.0])))
    True
    """
    return _bool_reduce(all_p, x, dim, keepdim, "all")


def any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether some element (over ``dim``) is nonzero: a bool tensor.

    >>> import duograd as dg
    >>> bool(dg.any(dg.tensor([0.0, 2.0])))
    True
    """
    return _bool_reduce(any_p, x, dim, keepdim, "any")

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


unique_p = Primitive("unique", _unique, differentiable=False)

# ====================================================================== picking


def _pick(x: Tensor, idx: Tensor, axis: int) -> Tensor:
    return gather_p(x, idx, axis=axis) if x.ndim else ops.identity_p(x)


def _sort_args(x: Tensor, dim: int, op: str) -> int:
    return dim_index(dim, x.ndim, op, x.shape) if x.ndim else 0


def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """(values, indices) sorted along ``dim``. The sort is stable (equal elements keep their
    order), so ties give torch's stable indices; the gradient goes back through the indices.

    >>> import duograd as dg
    >>> dg.sort(dg.tensor([3.0, 1.0, 2.0])).indices.numpy()
    array([1, 2, 0])
    """
    d = _sort_args(x, dim, "sort")
    idx = sort_indices_p(x, axis=d, descending=bool(descending))
    return return_types.sort(_pick(x, idx, d), idx)


def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``x`` along ``dim`` (stable).

    >>> import duograd as dg
    >>> dg.argsort(dg.tensor([3.0, 1.0, 2.0]), descending=True).numpy()
    array([0, 2, 1])
    """
    return sort_indices_p(x, axis=_sort_args(x, dim, "argsort"), descending=bool(descending))


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """(values, indices) of the ``k`` largest (or smallest) elements along ``dim``, in order.

    >>> import duograd as dg
    >>> dg.topk(dg.tensor([1.0, 5.0, 3.0]), 2).values.numpy()
    array([5., 3.])
    """
    d = _sort_args(x, dim, "topk")
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k={k} out of range for dim {d} of shape {x.shape}")
    order = sort_indices_p(x, axis=d, descending=bool(largest))
    idx = getitem_p(order, index=_along(d, x.ndim, slice(0, k)), basic=True) if x.ndim else order
    return return_types.topk(_pick(x, idx, d), idx)


def _kth(x: Tensor, k: int, d: int, keepdim: bool, kind: Any) -> Any:
    order = sort_indices_p(x, axis=d, descending=False)
    if x.ndim == 0:
        return kind(ops.identity_p(x), order)
    idx = getitem_p(order, index=_along(d, x.ndim, slice(k - 1, k)), basic=True)
    vals = gather_p(x, idx, axis=d)
    if not keepdim:
        idx, vals = (reshape_p(t, shape=x.shape[:d] + x.shape[d + 1:]) for t in (idx, vals))
    return kind(vals, idx)


def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """(values, indices) of the ``k``-th smallest element (1-based) along ``dim``.

    >>> import duograd as dg
    >>> dg.kthvalue(dg.tensor([3.0, 1.0, 2.0]), 2).values.item()
    2.0
    """
    d = _sort_args(x, dim, "kthvalue")
    n = x.shape[d] if x.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue: selected number k={k} out of range for dimension {d} of "
                           f"shape {x.shape}")
    return _kth(x, k, d, keepdim, return_types.kthvalue)


def median(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median: of every element (a 0-d tensor), or (values, indices) along ``dim``.

    >>> import duograd as dg
    >>> float(dg.median(dg.tensor([4.0, 1.0, 3.0, 2.0])))
    2.0
    """
    if dim is None:
        if x.numel() == 0:
            return sum_p(reshape_p(x, shape=(0,)), axis=(0,), keepdims=False) + np.nan
        flat = reshape_p(x, shape=(x.numel(),))
        return reshape_p(_kth(flat, (x.numel() + 1) // 2, 0, False, return_types.median).values, shape=())
    d = _sort_args(x, dim, "median")
    n = x.shape[d] if x.ndim else 1
    if n == 0:
        raise IndexError(f"median: expected reduction dim {d} to have non-zero size (shape {x.shape})")
    return _kth(x, (n + 1) // 2, d, keepdim, return_types.median)


def mode(x: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """(values, indices): the most frequent value along ``dim`` (the smallest of equally
    frequent ones) and the index of its last occurrence, as torch.

    >>> import duograd as dg
    >>> dg.mode(dg.tensor([2.0, 1.0, 2.0])).values.item()
    2.0
    """
    d = _sort_args(x, dim, "mode")
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"mode: expected reduction dim {d} to have non-zero size (shape {x.shape})")
    idx = mode_indices_p(x, axis=d)
    if x.ndim == 0:
        return return_types.mode(ops.identity_p(x), idx)
    vals = gather_p(x, _unsqueeze(idx, d), axis=d)
    if keepdim:
        return return_types.mode(vals, _unsqueeze(idx, d))
    return return_types.mode(reshape_p(vals, shape=idx.shape), idx)


def _cum_extremum(x: Tensor, dim: int, larger: bool, op: str, kind: Any) -> Any:
    d = _sort_args(x, dim, op)
    idx = cum_extremum_indices_p(x, axis=d, larger=larger)
    return kind(_pick(x, idx, d), idx)


def cummax(x: Tensor, dim: int) -> Any:
    """(values, indices): the running maximum along ``dim`` and where it was found (a tie
    moves the index to the later element, as torch).

    >>> import duograd as dg
    >>> dg.cummax(dg.tensor([1.0, 3.0, 2.0]), 0).values.numpy()
    array([1., 3., 3.])
    """
    return _cum_extremum(x, dim, True, "cummax", return_types.cummax)


def cummin(x: Tensor, dim: int) -> Any:
    """(values, indices): the running minimum along ``dim`` and where it was found.

    >>> import duograd as dg
    >>> dg.cummin(dg.tensor([3.0, 1.0, 2.0]), 0).indices.numpy()
    array([0, 1, 1])
    """
    return _cum_extremum(x, dim, False, "cummin", return_types.cummin)


def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values (sorted), with the inverse indices and counts if asked for; never
    differentiated, as torch.

    >>> import duograd as dg
    >>> dg.unique(dg.tensor([3.0, 1.0, 3.0]), return_counts=True)[1].numpy()
    array([1, 2])
    """
    axis = None if dim is None else dim_index(dim, x.ndim, "unique", x.shape)
    vals = unique_p(x, which="values", axis=axis)
    extra = []
    if return_inverse:
        extra.append(unique_p(x, which="inverse", axis=axis))
    if return_counts:
        extra.append(unique_p(x, which="counts", axis=axis))
    return (vals, *extra) if extra else vals


__all__ = ["prod", "all", "any", "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort",
           "topk", "kthvalue", "median", "mode", "unique"]
