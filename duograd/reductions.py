"""Reductions, scans and sorting with PyTorch's signatures and results: ``prod``, ``all``,
``any``, ``cumprod``, ``cummax``/``cummin``, ``logcumsumexp``, ``sort``, ``argsort``, ``topk``,
``kthvalue``, ``median``, ``mode``, ``unique``.

Three primitives are new, ``cumprod_p``, ``prod_p`` and ``logcumsumexp_p``: their rows,
with the selectors', are in ``duograd/rows/reductions.py`` (whose docstring says how each
rule avoids dividing at a zero) and are re-exported here.

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
from .indexing import gather_p
from .shapes import dim_index
from . import ops
from .ops import getitem_p, reshape_p, sum_p
from ._tensor import Tensor
# The rows, every one re-exported (rows/reductions.py).
from .rows.reductions import (  # noqa: F401
    cumprod_p, prod_p, logcumsumexp_p, all_p, any_p, sort_indices_p, cum_extremum_indices_p,
    mode_indices_p, unique_p,
    _along, _unsqueeze)

# ====================================================================== prod, cumprod


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


def logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow.

    >>> import duograd as dg
    >>> dg.logcumsumexp(dg.tensor([0.0, 0.0]), 0).numpy()
    array([0.        , 0.69314718])
    """
    return logcumsumexp_p(x, axis=dim_index(dim, x.ndim, "logcumsumexp", x.shape) if x.ndim else 0)

# ====================================================================== all, any


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
