"""Shape and indexing operations with PyTorch's signatures: joining and splitting, moving
and flipping axes, triangles and diagonals, gather/scatter, masks, ``nonzero``,
``repeat_interleave``, ``meshgrid`` and ``Tensor.unfold``.

Two primitives are new, and each is the other's adjoint (written once, as a pair; their
rows, with scatter_reduce's, are in ``duograd/rows/indexing.py`` and re-exported here):

- ``gather_p(x, index, axis)``: ``out[i][j] = x[i][index[i][j]]`` along ``axis`` (torch.gather);
- ``scatter_add_along_p(src, index, axis, shape)``: a zero tensor of ``shape`` with ``src``
  added at ``index`` along ``axis`` (repeated indices accumulate); ``scatter_along_p`` writes
  instead (a repeated index keeps the last value: max_unpool).

They are the one gather/scatter along an axis: the pools in ``conv`` use them too.

``index`` is an input of both, a Tensor that never requires grad (its rule is None), so an
index computed inside a step (``sort``'s permutation, ``nonzero``) is recomputed when a
recorded step is replayed. Everything else here is a composition of primitives: the
triangles multiply by a constant mask, the diagonals are ``getitem`` with constant index
arrays, ``flip``/``roll``/``split`` are slices, ``index_select``/``take_along_dim`` are gathers.

Errors follow torch: a dim out of range is an IndexError, other misuse a RuntimeError, each
naming the operation and the shapes.

>>> import duograd as dg
>>> x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dg.gather(x, 1, dg.tensor([[1], [0]])).detach().numpy()
array([[2.],
       [3.]])
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from . import ops
from .ops import (concatenate_p, getitem_p, reshape_p, scatter_add_p,
                  sum_p, transpose_p, where_p)
from ._tensor import Tensor, _derive, _lift_all, _wrap
from .shapes import dim_index
# The rows, every one re-exported (rows/indexing.py).
from .rows.indexing import (  # noqa: F401
    gather_p, scatter_add_along_p, scatter_along_p, flatnonzero_p, nonzero_p, hit_p,
    scatter_extremum_p, scatter_prod_p, repeat_index_p,
    _move_from_end, _move_to_end)

_INT64 = np.dtype(np.int64)

# ====================================================================== argument helpers


def as_index(index: Any, op: str) -> Tensor:
    """An index as an int64 Tensor: int64 (or other integer) Tensors and arrays, lists, and,
    until integer dtypes land everywhere, float Tensors holding whole numbers."""
    if isinstance(index, Tensor):
        if index.dtype == _INT64:
            return index
        if index.dtype.kind == "f" and not np.all(index._data == np.round(index._data)):
            raise RuntimeError(f"{op}: an index must hold integers, got a {index.dtype} tensor "
                               "with fractions")
        if index.dtype.kind not in "iuf":
            raise RuntimeError(f"{op}: expected an integer index tensor, got {index.dtype}")
        return ops.cast_p(ops.detach_p(index), dtype=_INT64)  # an index has no gradient
    arr = np.asarray(index)
    if arr.dtype.kind not in "iu" and arr.size:
        raise RuntimeError(f"{op}: expected an integer index, got {arr.dtype}")
    return _wrap(_derive(lambda a: np.asarray(a, dtype=np.int64), index))


def _check_range(index: Tensor, size: int, op: str, dim: int, err: type = RuntimeError) -> None:
    """torch's error when an index is outside [0, size); derived from the index, so that a
    dg.compile replay checks each call's index too."""
    _derive(_in_range, index, size=size, op=op, dim=dim, err=err)


def _in_range(data: np.ndarray, size: int, op: str, dim: int, err: type) -> np.ndarray:
    if data.size and (data.max() >= size or data.min() < 0):
        bad = data.max() if data.max() >= size else data.min()
        raise err(f"{op}: index {bad} is out of bounds for dimension {dim} with size {size}")
    return data


_as_bool = ops._as_bool


def _not_negative(data: np.ndarray, message: str) -> np.ndarray:
    """``data`` itself, or torch's RuntimeError ``message`` when a value is negative (a
    derive: a dg.compile replay checks each call's values)."""
    if data.size and data.min() < 0:
        raise RuntimeError(message)
    return data


def _index_along(axis: int, ndim: int, i: Any) -> tuple:
    return (slice(None),) * axis + (i,) + (slice(None),) * (ndim - axis - 1)

# ====================================================================== joining


def cat(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dim (torch.cat; ``axis`` is NumPy's name). As torch,
    1-D empty tensors are skipped.

    >>> import duograd as dg
    >>> dg.cat([dg.ones(2, 1), dg.zeros(2, 2)], dim=1).shape
    (2, 3)
    """
    return ops._join(tensors, dim if axis is None else axis, "cat")


def concat(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """torch.concat: the same as ``cat``.

    >>> import duograd as dg
    >>> dg.concat([dg.ones(1), dg.zeros(2)]).numpy()
    array([1., 0., 0.])
    """
    return ops._join(tensors, dim if axis is None else axis, "concat")


concatenate, stack = ops.concatenate, ops.stack  # one implementation each, in ops

# ====================================================================== splitting


def split(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes.

    >>> import duograd as dg
    >>> [p.shape for p in dg.split(dg.ones(5), 2)]
    [(2,), (2,), (1,)]
    """
    d = dim_index(dim, x.ndim, "split", x.shape)
    if x.ndim == 0:
        raise RuntimeError("split: expected at least a 1-dimensional tensor")
    n = x.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n):
            raise RuntimeError(f"split: split_size must be positive, got {size} (shape {x.shape})")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size and n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(f"split: sizes {sizes} do not sum to {n}, the size of dim {d} of a "
                               f"tensor of shape {x.shape}")
    out, start = [], 0
    for s in sizes:
        out.append(getitem_p(x, index=_index_along(d, x.ndim, slice(start, start + s)), basic=True))
        start += s
    return tuple(out)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunks`` pieces of ceil(n / chunks) along ``dim`` (fewer when they run out, as torch).

    >>> import duograd as dg
    >>> [p.shape for p in dg.chunk(dg.ones(5), 3)]
    [(2,), (2,), (1,)]
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk: expects `chunks` to be greater than 0, got: {chunks}")
    d = dim_index(dim, x.ndim, "chunk", x.shape)
    n = x.shape[d] if x.ndim else 1
    if n == 0:  # torch gives ``chunks`` empty pieces
        return tuple(getitem_p(x, index=_index_along(d, x.ndim, slice(0, 0)), basic=True)
                     for _ in range(chunks))
    return split(x, math.ceil(n / chunks), d)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, that dim removed.

    >>> import duograd as dg
    >>> [p.shape for p in dg.unbind(dg.ones((2, 3)), 1)]
    [(2,), (2,), (2,)]
    """
    if x.ndim == 0:
        raise IndexError("unbind: dimension specified as 0 but tensor has no dimensions")
    d = dim_index(dim, x.ndim, "unbind", x.shape)
    return tuple(getitem_p(x, index=_index_along(d, x.ndim, i), basic=True) for i in range(x.shape[d]))


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Dim ``dim`` split into ``sizes`` (one may be -1).

    >>> import duograd as dg
    >>> dg.unflatten(dg.ones((2, 6)), 1, (3, 2)).shape
    (2, 3, 2)
    """
    d = dim_index(dim, x.ndim, "unflatten", x.shape)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = x.shape[d] if x.ndim else 1
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 in sizes and (known == 0 or n % known)) or \
            (-1 not in sizes and known != n):
        raise RuntimeError(f"unflatten: provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {d} ({n}) in the input tensor of shape {x.shape}")
    if -1 in sizes:
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape_p(x, shape=x.shape[:d] + sizes + x.shape[d + 1:])


def _dims(d: Any) -> tuple:
    return tuple(d) if isinstance(d, (tuple, list)) else (d,)


def movedim(x: Tensor, source: Any, destination: Any) -> Tensor:
    """Dims ``source`` moved to positions ``destination`` (ints or sequences), the others
    kept in order.

    >>> import duograd as dg
    >>> dg.movedim(dg.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    src, dst = _dims(source), _dims(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: invalid source or destination dims: source ({list(src)}) and "
                           f"destination ({list(dst)}) must have the same number of elements")
    src = [dim_index(s, x.ndim, "movedim", x.shape) for s in src]
    dst = [dim_index(s, x.ndim, "movedim", x.shape) for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in source {src} or destination {dst}")
    if x.ndim == 0:
        return x
    rest = iter(i for i in range(x.ndim) if i not in src)
    where = dict(zip(dst, src))
    perm = tuple(where[i] if i in where else next(rest) for i in range(x.ndim))
    return transpose_p(x, axes=perm)


moveaxis = movedim


def flip(x: Tensor, dims: Any) -> Tensor:
    """The order of elements reversed along ``dims``.

    >>> import duograd as dg
    >>> dg.flip(dg.tensor([1.0, 2.0, 3.0]), (0,)).numpy()
    array([3., 2., 1.])
    """
    ds = {dim_index(d, x.ndim, "flip", x.shape) for d in _dims(dims)}
    if x.ndim == 0:
        return ops.identity_p(x)
    index = tuple(slice(None, None, -1) if i in ds else slice(None) for i in range(x.ndim))
    return getitem_p(x, index=index, basic=True)


def roll(x: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Elements shifted along ``dims`` by ``shifts``, wrapping around (no dims: the flattened
    tensor, shape kept).

    >>> import duograd as dg
    >>> dg.roll(dg.tensor([1.0, 2.0, 3.0]), 1).numpy()
    array([3., 1., 2.])
    """
    if dims is None:
        if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
            raise RuntimeError(f"roll: shifts {shifts} need dims")
        flat = reshape_p(x, shape=(x.numel(),))
        return reshape_p(roll(flat, _dims(shifts)[0], 0), shape=x.shape)
    shifts, dims = _dims(shifts), _dims(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts ({len(shifts)}) and dims ({len(dims)}) must align")
    out = x
    for s, d in zip(shifts, dims):
        d = dim_index(d, x.ndim, "roll", x.shape)
        n = x.shape[d] if x.ndim else 1
        if x.ndim == 0 or n == 0 or int(s) % n == 0:
            continue
        k = int(s) % n
        tail = getitem_p(out, index=_index_along(d, x.ndim, slice(n - k, None)), basic=True)
        head = getitem_p(out, index=_index_along(d, x.ndim, slice(0, n - k)), basic=True)
        out = concatenate_p(tail, head, axis=d)
    return out if out is not x else ops.identity_p(x)

# ====================================================================== triangles and diagonals


def _triangle(x: Tensor, diagonal: int, op: str, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got shape {x.shape}")
    m, n = x.shape[-2:]
    keep = np.tri(m, n, diagonal, dtype=bool) if lower else ~np.tri(m, n, diagonal - 1, dtype=bool)
    return where_p(keep, x, 0)


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (on and below ``diagonal``), zeros elsewhere.

    >>> import duograd as dg
    >>> dg.tril(dg.ones((2, 2))).numpy()
    array([[1., 0.],
           [1., 1.]])
    """
    return _triangle(x, diagonal, "tril", True)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (on and above ``diagonal``), zeros elsewhere.

    >>> import duograd as dg
    >>> dg.triu(dg.ones((2, 2))).numpy()
    array([[1., 1.],
           [0., 1.]])
    """
    return _triangle(x, diagonal, "triu", False)


def _diag_coords(m: int, n: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    k = builtins.max(0, builtins.min(m + builtins.min(offset, 0), n - builtins.max(offset, 0)))
    i = np.arange(k) + builtins.max(-offset, 0)
    return i, i + offset


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the matrices in dims (dim1, dim2), as a new last dim.

    >>> import duograd as dg
    >>> dg.diagonal(dg.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([1., 4.])
    """
    if x.ndim < 2:
        raise RuntimeError(f"diagonal: expected a tensor of at least 2 dims, got shape {x.shape}")
    d1 = dim_index(dim1, x.ndim, "diagonal", x.shape)
    d2 = dim_index(dim2, x.ndim, "diagonal", x.shape)
    if d1 == d2:
        raise RuntimeError(f"diagonal: dimensions cannot be identical {dim1}, {dim2}")
    moved = movedim(x, (d1, d2), (-2, -1))
    i, j = _diag_coords(moved.shape[-2], moved.shape[-1], int(offset))
    return getitem_p(moved, index=(Ellipsis, i, j), basic=False)


_take_diagonal = diagonal  # diag's parameter is called diagonal, as torch's


def diag_embed(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices in dims (dim1, dim2) whose ``offset`` diagonal is the last dim of ``x``.

    >>> import duograd as dg
    >>> dg.diag_embed(dg.tensor([1.0, 2.0])).numpy()
    array([[1., 0.],
           [0., 2.]])
    """
    nd = x.ndim + 1
    d1 = dim_index(dim1, nd, "diag_embed", x.shape)
    d2 = dim_index(dim2, nd, "diag_embed", x.shape)
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    if x.ndim == 0:
        x = reshape_p(x, shape=(1,))
    n = x.shape[-1] + abs(int(offset))
    i, j = _diag_coords(n, n, int(offset))
    # getitem's adjoint: zeros of the matrix shape with x written on the diagonal.
    mat = scatter_add_p(x, index=(Ellipsis, i, j), shape=x.shape[:-1] + (n, n), basic=False)
    return movedim(mat, (-2, -1), (d1, d2))


def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor made the ``diagonal`` of a square matrix, or a matrix's diagonal as 1-D.

    >>> import duograd as dg
    >>> dg.diag(dg.tensor([1.0, 2.0])).shape
    (2, 2)
    """
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return _take_diagonal(x, diagonal)
    raise RuntimeError(f"diag: supports 1D or 2D tensors, got {x.ndim}D (shape {x.shape})")


def trace(x: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix.

    >>> import duograd as dg
    >>> float(dg.trace(dg.tensor([[1.0, 2.0], [3.0, 4.0]])))
    5.0
    """
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim} (shape {x.shape})")
    return sum_p(diagonal(x), axis=(0,), keepdims=False)

# ====================================================================== gather and scatter


def _gather_args(x: Tensor, dim: int, index: Any, op: str) -> tuple[int, Tensor]:
    d = dim_index(dim, x.ndim, op, x.shape)
    idx = as_index(index, op)
    if idx.ndim != builtins.max(x.ndim, 1) and not (x.ndim == 0 and idx.ndim == 0):
        raise RuntimeError(f"{op}: index tensor must have the same number of dimensions as the input "
                           f"tensor (index {idx.shape}, input {x.shape})")
    return d, idx


def gather(x: Tensor, dim: int, index: Any, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = x[i][index[i][j]]`` along ``dim`` (torch.gather); ``index`` may be smaller
    than ``x`` in the other dims. The gradient is added back where each value came from.

    >>> import duograd as dg
    >>> dg.gather(dg.tensor([1.0, 2.0, 3.0]), 0, dg.tensor([2, 2])).numpy()
    array([3., 3.])
    """
    d, idx = _gather_args(x, dim, index, "gather")
    if x.ndim == 0:
        return reshape_p(gather(reshape_p(x, shape=(1,)), 0, reshape_p(idx, shape=(1,))), shape=())
    for i, (a, b) in enumerate(zip(idx.shape, x.shape)):
        if i != d and a > b:
            raise RuntimeError(f"gather: size of index {idx.shape} exceeds the input {x.shape} in dim {i}")
    _check_range(idx, x.shape[d], "gather", d)
    return gather_p(x, idx, axis=d)


def _scatter_src(src: Any, idx: Tensor, x: Tensor, op: str) -> Tensor:
    """``src`` cut to ``index``'s shape (torch reads only that corner), or a number filled."""
    if not isinstance(src, Tensor):
        return ops.broadcast_to(_lift_all(op, (x, src))[1], idx.shape)
    if src.ndim != idx.ndim or any(a > b for a, b in zip(idx.shape, src.shape)):
        raise RuntimeError(f"{op}: index {idx.shape} must be no larger than src {src.shape}")
    if src.shape == idx.shape:
        return src
    return getitem_p(src, index=tuple(slice(0, n) for n in idx.shape), basic=True)


def _scatter_args(x: Tensor, dim: int, index: Any, src: Any, op: str) -> tuple[int, Tensor, Tensor]:
    d, idx = _gather_args(x, dim, index, op)
    for i, (a, b) in enumerate(zip(idx.shape, x.shape)):
        if i != d and a > b:
            raise RuntimeError(f"{op}: size of index {idx.shape} exceeds the input {x.shape} in dim {i}")
    _check_range(idx, x.shape[d] if x.ndim else 1, op, d)
    s = _scatter_src(src, idx, x, op)
    if s.dtype != x.dtype:
        s = ops.astype(s, x.dtype)
    return d, idx, s


def _on_0d(fn: Any) -> Any:
    """Run a scatter-type function on 0-d tensors as 1-element ones (torch allows dim 0)."""
    def wrapper(x: Tensor, dim: int, index: Any, src: Any = None, *args: Any, **kw: Any) -> Tensor:
        if isinstance(x, Tensor) and x.ndim == 0:
            dim_index(dim, 0, fn.__name__, x.shape)
            one = (lambda t: reshape_p(t, shape=(1,)) if isinstance(t, Tensor) else t)
            idx = as_index(index, fn.__name__)
            return reshape_p(fn(one(x), 0, one(idx), one(src), *args, **kw), shape=())
        return fn(x, dim, index, src, *args, **kw)
    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


@_on_0d
def scatter_add(x: Tensor, dim: int, index: Any, src: Any) -> Tensor:
    """``x`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate).

    >>> import duograd as dg
    >>> dg.scatter_add(dg.zeros(3), 0, dg.tensor([0, 0]), dg.ones(2)).numpy()
    array([2., 0., 0.])
    """
    d, idx, s = _scatter_args(x, dim, index, src, "scatter_add")
    return x + scatter_add_along_p(s, idx, axis=d, shape=x.shape)


@_on_0d
def scatter(x: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """``x`` with ``src`` (or the number ``value``) written at ``index`` along ``dim``.

    NOTE: with a repeated index torch leaves which write wins unspecified; here the written
    values of a repeated position add up, so keep indices unique (as torch asks).

    >>> import duograd as dg
    >>> dg.scatter(dg.zeros(3), 0, dg.tensor([2]), dg.ones(1)).numpy()
    array([0., 0., 1.])
    """
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter: give src or value")
    if reduce is not None:
        return scatter_reduce(x, dim, index, src, {"add": "sum", "multiply": "prod"}.get(reduce, reduce))
    d, idx, s = _scatter_args(x, dim, index, src, "scatter")
    hit = hit_p(idx, axis=d, shape=x.shape, dtype=x.dtype)
    return where_p(hit, scatter_add_along_p(s, idx, axis=d, shape=x.shape), x)


@_on_0d
def scatter_reduce(x: Tensor, dim: int, index: Any, src: Any, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``x`` with the ``src`` values at each index combined by ``reduce`` ("sum", "prod",
    "mean", "amax", "amin"), ``x``'s own value included unless ``include_self=False``.

    >>> import duograd as dg
    >>> dg.scatter_reduce(dg.zeros(2), 0, dg.tensor([0, 0, 1]), dg.tensor([1.0, 3.0, 5.0]),
    ...                   "mean", include_self=False).numpy()
    array([2., 5.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch accepts both spellings
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"scatter_reduce: reduce argument must be sum, prod, mean, amax or amin, "
                           f"got {reduce!r}")
    d, idx, s = _scatter_args(x, dim, index, src, "scatter_reduce")
    if reduce in ("amax", "amin"):
        return scatter_extremum_p(x, idx, s, axis=d, reduce=reduce, include_self=bool(include_self))
    if reduce == "prod":
        return scatter_prod_p(x, idx, s, axis=d, include_self=bool(include_self))
    hit = hit_p(idx, axis=d, shape=x.shape, dtype=x.dtype)
    base = x if include_self else where_p(hit, 0.0, x)
    total = base + scatter_add_along_p(s, idx, axis=d, shape=x.shape)
    if reduce == "sum":
        return total
    # mean: the sum over the values that landed (and x's own unless include_self=False)
    count = scatter_add_along_p(ops.ones_like_p(s), idx, axis=d, shape=x.shape)
    if include_self:
        count = count + 1.0
    return where_p(hit, total / where_p(hit, count, 1.0), x)


def index_select(x: Tensor, dim: int, index: Any) -> Tensor:
    """The entries of ``x`` at ``index`` (1-D) along ``dim``; repeats accumulate in the gradient.

    >>> import duograd as dg
    >>> dg.index_select(dg.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, dg.tensor([1, 1, 0])).numpy()
    array([[2., 2., 1.],
           [4., 4., 3.]])
    """
    d = dim_index(dim, x.ndim, "index_select", x.shape)
    idx = as_index(index, "index_select")
    if idx.ndim > 1:
        raise IndexError(f"index_select: index should have at most one dimension, got {idx.shape}")
    if x.ndim == 0:
        _check_range(idx, 1, "index_select", 0, IndexError)
        return ops.identity_p(x)
    _check_range(idx, x.shape[d], "index_select", d, IndexError)
    idx = reshape_p(idx, shape=(1,) * d + (idx.numel(),) + (1,) * (x.ndim - d - 1))
    shape = x.shape[:d] + (idx.numel(),) + x.shape[d + 1:]
    return gather_p(x, ops.broadcast_to_p(idx, shape=shape), axis=d)


def index_add(x: Tensor, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Tensor:
    """``x`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats accumulate).

    >>> import duograd as dg
    >>> dg.index_add(dg.zeros(3), 0, dg.tensor([2, 2]), dg.ones(2)).numpy()
    array([0., 0., 2.])
    """
    d = dim_index(dim, x.ndim, "index_add", x.shape)
    idx = as_index(index, "index_add")
    source = _lift_all("index_add", (x, source))[1]
    n = x.shape[d] if x.ndim else 1
    if idx.ndim > 1 or source.ndim != x.ndim or idx.numel() != (source.shape[d] if source.ndim else 1):
        raise RuntimeError(f"index_add: source {source.shape} and index {idx.shape} do not fit an "
                           f"input of shape {x.shape} along dim {d}")
    _check_range(idx, n, "index_add", d, IndexError)
    if x.ndim == 0:
        return x + source * alpha
    idx = reshape_p(idx, shape=(1,) * d + (idx.numel(),) + (1,) * (x.ndim - d - 1))
    add = source * alpha if alpha != 1 else source
    return x + scatter_add_along_p(add, ops.broadcast_to_p(idx, shape=source.shape), axis=d, shape=x.shape)


def take_along_dim(x: Tensor, indices: Any, dim: int | None = None) -> Tensor:
    """``x`` gathered at ``indices`` along ``dim``, the two broadcast against each other in the
    other dims (no dim: both flattened).

    >>> import duograd as dg
    >>> dg.take_along_dim(dg.tensor([[1.0, 2.0], [3.0, 4.0]]), dg.tensor([[1], [0]]), 1).numpy()
    array([[2.],
           [3.]])
    """
    idx = as_index(indices, "take_along_dim")
    if dim is None:
        flat = reshape_p(x, shape=(x.numel(),))
        return gather(flat, 0, reshape_p(idx, shape=(idx.numel(),)))
    d = dim_index(dim, x.ndim, "take_along_dim", x.shape)
    if idx.ndim != x.ndim:
        raise RuntimeError(f"take_along_dim: input {x.shape} and indices {idx.shape} should have "
                           "the same number of dimensions")
    if x.ndim == 0:
        return gather(x, 0, idx)
    xs = list(x.shape)
    is_ = list(idx.shape)
    xs[d] = is_[d] = 1
    try:
        b = list(np.broadcast_shapes(tuple(xs), tuple(is_)))
    except ValueError:
        raise RuntimeError(f"take_along_dim: shapes {x.shape} and {idx.shape} do not broadcast "
                           f"outside dim {d}") from None
    xb = ops.broadcast_to(x, tuple(b[:d] + [x.shape[d]] + b[d + 1:]))
    ib = ops.broadcast_to_p(idx, shape=tuple(b[:d] + [idx.shape[d]] + b[d + 1:]))
    return gather(xb, d, ib)

# ====================================================================== masks and selection


def masked_fill(x: Tensor, mask: Any, value: Any) -> Tensor:
    """``x`` with ``value`` (a number or a 0-d tensor) where ``mask`` is True.

    >>> import duograd as dg
    >>> dg.masked_fill(dg.ones(3), dg.tensor([True, False, True]), 0.0).numpy()
    array([0., 1., 0.])
    """
    m = _as_bool(mask, "masked_fill")
    try:
        np.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise RuntimeError(f"masked_fill: the mask {m.shape} does not broadcast to the input "
                           f"{x.shape}") from None
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill: only supports a 0-dimensional value tensor, got "
                               f"{value.shape}")
        if value.dtype != x.dtype:
            value = ops.astype(value, x.dtype)
    return where_p(m, *_lift_all("masked_fill", (value, x)))


def masked_select(x: Tensor, mask: Any) -> Tensor:
    """The elements of ``x`` where ``mask`` is True, as a 1-D tensor (both broadcast first).

    >>> import duograd as dg
    >>> dg.masked_select(dg.tensor([1.0, 2.0, 3.0]), dg.tensor([True, False, True])).numpy()
    array([1., 3.])
    """
    m = _as_bool(mask, "masked_select")
    try:
        shape = np.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise RuntimeError(f"masked_select: shapes {x.shape} and {m.shape} do not broadcast") from None
    flat = reshape_p(ops.broadcast_to(x, shape), shape=(math.prod(shape),))
    mflat = reshape_p(ops.broadcast_to_p(m, shape=shape), shape=(math.prod(shape),))
    return gather_p(flat, flatnonzero_p(mflat), axis=0)


def nonzero(x: Tensor, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: an (n, ndim) int64 tensor, or with ``as_tuple``
    one 1-D tensor per dim (a 0-d input counts as 1-D).

    >>> import duograd as dg
    >>> dg.nonzero(dg.tensor([0.0, 2.0, 3.0])).numpy().ravel()
    array([1, 2])
    """
    if not isinstance(x, Tensor):
        x = _lift_all("nonzero", (x,))[0]
    if not as_tuple:
        return nonzero_p(x)
    y = x if x.ndim else reshape_p(x, shape=(1,))
    idx = nonzero_p(y)
    return tuple(getitem_p(idx, index=(slice(None), k), basic=True) for k in range(y.ndim))


def where(condition: Any, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other`` (either may be a number, as torch);
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.

    >>> import duograd as dg
    >>> dg.where(dg.tensor([True, False]), 1.0, 0.0).numpy()
    array([1., 0.])
    """
    if input is None and other is None:
        return nonzero(condition if isinstance(condition, Tensor) else _as_bool(condition, "where"),
                       as_tuple=True)
    if input is None or other is None:
        raise TypeError(f"where: give both input and other, or neither (got "
                        f"{type(input).__name__} and {type(other).__name__})")
    return ops.where(condition, input, other)


def repeat_interleave(x: Tensor, repeats: Any, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element repeated ``repeats`` times (an int, or one count per element along ``dim``);
    no dim: the flattened tensor. The gradient sums the copies.

    >>> import duograd as dg
    >>> dg.repeat_interleave(dg.tensor([1.0, 2.0]), 2).numpy()
    array([1., 1., 2., 2.])
    """
    if dim is None:
        x, d = reshape_p(x, shape=(x.numel(),)), 0
    else:
        d = dim_index(dim, x.ndim, "repeat_interleave", x.shape)
        if x.ndim == 0:
            x = reshape_p(x, shape=(1,))
    n = x.shape[d]
    given = repeats if isinstance(repeats, Tensor) else _wrap(np.asarray(repeats))
    reps = given._data
    if reps.ndim > 1 or (reps.ndim == 1 and reps.size not in (1, n)):
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along dim, "
                           f"but got repeats.size(0) = {reps.size} and input.size({d}) = {n}")
    _derive(_not_negative, given, message="repeat_interleave: repeats can not be negative")
    # the index computed by a primitive from the counts, so that a dg.compile replay reads them
    return index_select(x, d, repeat_index_p(ops.detach_p(given), n=n))


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D (or 0-d) tensors: "ij" (matrix, torch's default) or "xy"
    (Cartesian: the first two dims swapped).

    >>> import duograd as dg
    >>> [g.shape for g in dg.meshgrid(dg.ones(2), dg.ones(3))]
    [(2, 3), (2, 3)]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    ts = _lift_all("meshgrid", tensors)
    if not ts:
        raise RuntimeError("meshgrid: expects a non-empty list of tensors")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if any(t.ndim > 1 for t in ts):
        raise RuntimeError(f"meshgrid: expects 0D or 1D tensors, got shapes {[t.shape for t in ts]}")
    ts = [reshape_p(t, shape=(t.numel(),)) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    order = [1, 0] + list(range(2, len(ts))) if swap else list(range(len(ts)))
    shape = tuple(ts[k].shape[0] for k in order)
    out = []
    for k, t in enumerate(ts):
        pos = order.index(k)
        one = tuple(t.shape[0] if i == pos else 1 for i in range(len(ts)))
        out.append(ops.broadcast_to_p(reshape_p(t, shape=one), shape=shape))
    return tuple(out)


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: the windows of ``size`` every ``step`` along ``dimension``, that dim
    becoming the number of windows and the window a new last dim.

    >>> import duograd as dg
    >>> dg.tensor([1.0, 2.0, 3.0, 4.0]).unfold(0, 2, 2).numpy()
    array([[1., 2.],
           [3., 4.]])
    """
    d = dim_index(dimension, x.ndim, "unfold", x.shape)
    n = x.shape[d] if x.ndim else 1
    if size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if x.ndim == 0:
        return reshape_p(x, shape=(1,))
    windows = (n - size) // step + 1
    index = np.arange(windows)[:, None] * step + np.arange(size)[None, :]
    picked = getitem_p(x, index=_index_along(d, x.ndim, index), basic=False)
    return movedim(picked, d + 1, -1)


__all__ = ["cat", "concat", "concatenate", "stack", "split", "chunk", "unbind", "unflatten",
           "movedim", "moveaxis", "flip", "roll", "tril", "triu", "diag", "diagonal", "diag_embed",
           "trace", "gather", "scatter", "scatter_add", "scatter_reduce", "index_select",
           "index_add", "take_along_dim", "masked_fill", "masked_select", "where", "nonzero",
           "repeat_interleave", "meshgrid", "unfold"]
