"""More of torch's functions, composed of the op rows: splits and stacks, flips, the
``*_scatter`` family, statistics (quantiles, ``cov``, ``corrcoef``, ``histogram``,
``renorm``, ``cdist``), the elementwise odds (``float_power``, ``logaddexp2``, ``frexp``,
``ldexp``, ``gcd``/``lcm``, shifts, ``isin``, ``isposinf``/``isneginf``), the ``*_copy``
forms of the views, the ``torch.*`` spellings of the in-place methods, window functions and
a few configuration queries. Every differentiable one gets its gradient from the rows it
is made of; integer-valued ones (``gcd``, shifts, ``isin``, ``histogram``'s counts) are
selectors without history, as torch's.

>>> import duograd as dg
>>> x = dg.arange(6.0, requires_grad=True)
>>> [t.shape for t in dg.tensor_split(x, 4)]
[(2,), (2,), (1,), (1,)]
>>> dg.hstack([x[:2], x[4:]]).sum().backward()
>>> x.grad.tolist()
[1.0, 1.0, 0.0, 0.0, 1.0, 1.0]
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import _context, _tensor, elementwise as ew, indexing, ops
from ._tensor import Tensor, _as_tensor, _wrap
from .shapes import dim_index
from .tensor_api import _out
# The rows of the elementwise odds (rows/elementwise.py), re-exported, and the selectors
# the functions below use.
from .rows.elementwise import (  # noqa: F401
    bitwise_left_shift_p, bitwise_right_shift_p, gcd_p, lcm_p, nextafter_p,
    isneginf_p as _isneginf_p, isposinf_p as _isposinf_p)
from .rows.indexing import flatnonzero_p
from .rows.reductions import nanmedian_index_p, quantile_plan_p, unique_consecutive_p
from .rows.tensor_api import (frexp_exponent_p, frexp_mantissa_p, histogram_edges_p, histogram_p,
                               histogram_w_p, isin_p, unravel_p)

_int, _bool, _float = builtins.int, builtins.bool, builtins.float


class _HistogramResult(NamedTuple):
    hist: Tensor
    bin_edges: Tensor


class _FrexpResult(NamedTuple):
    mantissa: Tensor
    exponent: Tensor


class _NanmedianResult(NamedTuple):
    values: Tensor
    indices: Tensor


_HistogramResult.__name__ = _HistogramResult.__qualname__ = "histogram"
_FrexpResult.__name__ = _FrexpResult.__qualname__ = "frexp"
_NanmedianResult.__name__ = _NanmedianResult.__qualname__ = "nanmedian"


def _t(x: Any, op: str) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor(x, op=op)


def _d(x: Tensor, dim: Any, op: str) -> int:
    return dim_index(dim, x.ndim, op, x.shape)


# ====================================================================== splits


def tensor_split(input: Any, indices_or_sections: Any, dim: _int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """Views of ``input`` split along ``dim``: into n nearly equal parts (the first ``size % n``
    one longer) or at the given indices, as ``torch.tensor_split``.

    >>> import duograd as dg
    >>> [t.tolist() for t in dg.tensor_split(dg.arange(5), [1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    x = _t(input, "tensor_split")
    if x.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                           "with 0 dims")
    d = _d(x, dim, "tensor_split")
    size = x.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.kind not in "iu" or ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have integer dtype and "
                               "be 0-D or 1-D")
        ios = ios.tolist()
    if isinstance(ios, (int, np.integer)):
        n = int(ios)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, at = [], 0
        for i in range(n - 1):
            at += q + (1 if i < r else 0)
            bounds.append(at)
    else:
        bounds = [int(i) for i in ios]
    edges = [0] + bounds + [size]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        a2 = builtins.min(builtins.max(a if a >= 0 else a + size, 0), size)
        b2 = builtins.min(builtins.max(b if b >= 0 else b + size, 0), size)
        sl = [slice(None)] * x.ndim
        sl[d] = slice(a2, builtins.max(a2, b2))
        out.append(x[tuple(sl)])
    return tuple(out)


def _dir_split(name: str, dim_of: Any, need: int) -> Any:
    def fn(input: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
        x = _t(input, name)
        if x.ndim < need:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a "
                               f"tensor with {x.ndim} dimensions!")
        d = dim_of(x)
        if isinstance(indices_or_sections, (int, np.integer)):
            if indices_or_sections == 0 or x.shape[d] % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of "
                                   f"the dimension {x.shape[d]} is not divisible by the split_size "
                                   f"{indices_or_sections}!")
        return tensor_split(x, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    return fn


hsplit = _dir_split("hsplit", lambda x: 0 if x.ndim == 1 else 1, 1)
hsplit.__doc__ = """Split along dim 1 (dim 0 for a vector), as ``torch.hsplit``.

    >>> import duograd as dg
    >>> [t.shape for t in dg.hsplit(dg.zeros(2, 4), 2)]
    [(2, 2), (2, 2)]
    """
vsplit = _dir_split("vsplit", lambda x: 0, 2)
vsplit.__doc__ = """Split along dim 0 of a tensor of 2 or more dims, as ``torch.vsplit``.

    >>> import duograd as dg
    >>> [t.shape for t in dg.vsplit(dg.zeros(4, 2), [1])]
    [(1, 2), (3, 2)]
    """
dsplit = _dir_split("dsplit", lambda x: 2, 3)
dsplit.__doc__ = """Split along dim 2 of a tensor of 3 or more dims, as ``torch.dsplit``.

    >>> import duograd as dg
    >>> len(dg.dsplit(dg.zeros(1, 1, 4), 2))
    2
    """


def split_with_sizes(input: Any, split_sizes: Sequence[int], dim: _int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``torch.split_with_sizes``: split into parts of the given sizes (which must add up).

    >>> import duograd as dg
    >>> [t.tolist() for t in dg.split_with_sizes(dg.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    x = _t(input, "split_with_sizes")
    d = _d(x, dim, "split_with_sizes")
    if builtins.sum(split_sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[d]} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={list(split_sizes)}")
    return tuple(indexing.split(x, list(split_sizes), d))


def unsafe_split(input: Any, split_size: Any, dim: _int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``torch.unsafe_split``: ``split`` (duograd's views are always safe).

    >>> import duograd as dg
    >>> len(dg.unsafe_split(dg.arange(4), 2))
    2
    """
    return tuple(indexing.split(_t(input, "unsafe_split"), split_size, dim))


def unsafe_split_with_sizes(input: Any, split_sizes: Sequence[int], dim: _int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``torch.unsafe_split_with_sizes``: ``split_with_sizes``.

    >>> import duograd as dg
    >>> len(dg.unsafe_split_with_sizes(dg.arange(4), [1, 3]))
    2
    """
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input: Any, chunks: _int, dim: _int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``torch.unsafe_chunk``: ``chunk``.

    >>> import duograd as dg
    >>> len(dg.unsafe_chunk(dg.arange(4), 2))
    2
    """
    return tuple(indexing.chunk(_t(input, "unsafe_chunk"), chunks, dim))


# ====================================================================== stacks


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least 1 dim (a 0-d one becomes shape (1,)), as ``torch.atleast_1d``.

    >>> import duograd as dg
    >>> dg.atleast_1d(dg.tensor(1.0)).shape
    (1,)
    """
    return _atleast(tensors, 1, "atleast_1d")


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dims (new leading ones), as ``torch.atleast_2d``.

    >>> import duograd as dg
    >>> dg.atleast_2d(dg.ones(3)).shape
    (1, 3)
    """
    return _atleast(tensors, 2, "atleast_2d")


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims ((n,) -> (1, n, 1); (m, n) -> (m, n, 1)), as ``torch.atleast_3d``.

    >>> import duograd as dg
    >>> dg.atleast_3d(dg.ones(2, 3)).shape
    (2, 3, 1)
    """
    return _atleast(tensors, 3, "atleast_3d")


def _atleast(tensors: tuple, n: int, op: str) -> Any:
    single = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    items = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in items:
        x = _t(t, op)
        if x.ndim == 0:
            x = x.reshape(*([1] * n))
        elif n >= 2 and x.ndim == 1:
            x = ops.unsqueeze(x, 0)
            if n == 3:
                x = ops.unsqueeze(x, -1)
        elif n == 3 and x.ndim == 2:
            x = ops.unsqueeze(x, -1)
        out.append(x)
    return out[0] if single else tuple(out)


def _seq(tensors: Any, op: str) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    return [_t(t, op) for t in tensors]


def hstack(tensors: Sequence[Any], *, out: Any = None) -> Tensor:
    """Concatenate along dim 1 (dim 0 for vectors), as ``torch.hstack``.

    >>> import duograd as dg
    >>> dg.hstack([dg.ones(2), dg.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    ts = list(atleast_1d(_seq(tensors, "hstack")))
    return _out(indexing.cat(ts, 0 if ts and ts[0].ndim == 1 else 1), out, "hstack")


def vstack(tensors: Sequence[Any], *, out: Any = None) -> Tensor:
    """Concatenate along dim 0 after ``atleast_2d``, as ``torch.vstack``.

    >>> import duograd as dg
    >>> dg.vstack([dg.ones(2), dg.zeros(2)]).shape
    (2, 2)
    """
    return _out(indexing.cat(list(atleast_2d(_seq(tensors, "vstack"))), 0), out, "vstack")


row_stack = vstack


def dstack(tensors: Sequence[Any], *, out: Any = None) -> Tensor:
    """Concatenate along dim 2 after ``atleast_3d``, as ``torch.dstack``.

    >>> import duograd as dg
    >>> dg.dstack([dg.ones(2), dg.zeros(2)]).shape
    (1, 2, 2)
    """
    return _out(indexing.cat(list(atleast_3d(_seq(tensors, "dstack"))), 2), out, "dstack")


def column_stack(tensors: Sequence[Any], *, out: Any = None) -> Tensor:
    """Vectors (and 0-d) as columns, then ``hstack``, as ``torch.column_stack``.

    >>> import duograd as dg
    >>> dg.column_stack([dg.ones(2), dg.zeros(2)]).shape
    (2, 2)
    """
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in _seq(tensors, "column_stack")]
    return _out(indexing.cat(ts, 1), out, "column_stack")


def block_diag(*tensors: Any) -> Tensor:
    """A block-diagonal matrix of the given 0-, 1- or 2-d tensors, as ``torch.block_diag``.

    >>> import duograd as dg
    >>> dg.block_diag(dg.ones(1, 1), dg.ones(1, 2) * 2).tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 2.0]]
    """
    ts = []
    for i, t in enumerate(tensors):
        x = _t(t, "block_diag")
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} "
                               f"has {x.ndim} dimensions")
        ts.append(x.reshape(1, -1) if x.ndim < 2 else x)
    if not ts:
        return _wrap(np.zeros((1, 0)))
    dt = ts[0].dtype
    for x in ts[1:]:
        dt = promote_types(dt, x.dtype)
    rows = builtins.sum(x.shape[0] for x in ts)
    cols = builtins.sum(x.shape[1] for x in ts)
    pieces, r, c = [], 0, 0
    for x in ts:
        x = ops.cast_p(x, dtype=dt) if x.dtype != dt else x
        h, w = x.shape
        pieces.append(ops.pad(x, ((r, rows - r - h), (c, cols - c - w))) if hasattr(ops, "pad") else
                      _place(x, rows, cols, r, c))
        r, c = r + h, c + w
    total = pieces[0]
    for p in pieces[1:]:
        total = total + p
    return total


def _place(x: Tensor, rows: int, cols: int, r: int, c: int) -> Tensor:
    h, w = x.shape
    parts = []
    if c:
        parts.append(_wrap(np.zeros((h, c), x.dtype)))
    parts.append(x)
    if cols - c - w:
        parts.append(_wrap(np.zeros((h, cols - c - w), x.dtype)))
    band = indexing.cat(parts, 1) if len(parts) > 1 else x
    parts = []
    if r:
        parts.append(_wrap(np.zeros((r, cols), x.dtype)))
    parts.append(band)
    if rows - r - h:
        parts.append(_wrap(np.zeros((rows - r - h, cols), x.dtype)))
    return indexing.cat(parts, 0) if len(parts) > 1 else band


def cartesian_prod(*tensors: Any) -> Tensor:
    """The Cartesian product of 1-d tensors as rows (a single tensor: itself), as
    ``torch.cartesian_prod``.

    >>> import duograd as dg
    >>> dg.cartesian_prod(dg.tensor([1, 2]), dg.tensor([3])).tolist()
    [[1, 3], [2, 3]]
    """
    ts = [_t(t, "cartesian_prod") for t in tensors]
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = indexing.meshgrid(*ts, indexing="ij")
    return indexing.stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Any, r: _int = 2, with_replacement: _bool = False) -> Tensor:  # noqa: A002
    """The length-r combinations of a 1-d tensor's elements as rows, as ``torch.combinations``.

    >>> import duograd as dg
    >>> dg.combinations(dg.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    import itertools  # noqa: PLC0415
    x = _t(input, "combinations")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(np.zeros((0,), x.dtype))
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if idx.shape[0] == 0:
        return x[_wrap(idx)] if r > 1 else x[_wrap(idx[:, 0])]
    return x[_wrap(idx)] if r > 1 else x[_wrap(idx[:, 0])]


# ====================================================================== flips


def fliplr(input: Any) -> Tensor:  # noqa: A002
    """Reverse dim 1 (at least 2 dims), as ``torch.fliplr``.

    >>> import duograd as dg
    >>> dg.fliplr(dg.tensor([[1, 2]])).tolist()
    [[2, 1]]
    """
    x = _t(input, "fliplr")
    if x.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return indexing.flip(x, [1])


def flipud(input: Any) -> Tensor:  # noqa: A002
    """Reverse dim 0 (at least 1 dim), as ``torch.flipud``.

    >>> import duograd as dg
    >>> dg.flipud(dg.tensor([1, 2])).tolist()
    [2, 1]
    """
    x = _t(input, "flipud")
    if x.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return indexing.flip(x, [0])


def rot90(input: Any, k: _int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """Rotate by 90 degrees k times in the plane of ``dims`` (from the first towards the
    second), as ``torch.rot90``.

    >>> import duograd as dg
    >>> dg.rot90(dg.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    x = _t(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = _d(x, dims[0], "rot90"), _d(x, dims[1], "rot90")
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = k % 4
    if k == 1:
        return indexing.flip(x, [d1]).transpose(d0, d1)
    if k == 2:
        return indexing.flip(x, [d0, d1])
    if k == 3:
        return indexing.flip(x, [d0]).transpose(d0, d1)
    return x.clone()


def diagflat(input: Any, offset: _int = 0) -> Tensor:  # noqa: A002
    """The flattened input on the ``offset`` diagonal of a square matrix, as ``torch.diagflat``.

    >>> import duograd as dg
    >>> dg.diagflat(dg.tensor([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    return indexing.diag(_t(input, "diagflat").reshape(-1), offset)


def msort(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Sorted along dim 0, as ``torch.msort``.

    >>> import duograd as dg
    >>> dg.msort(dg.tensor([3, 1, 2])).tolist()
    [1, 2, 3]
    """
    from .reductions import sort  # noqa: PLC0415
    return _out(sort(_t(input, "msort"), 0)[0], out, "msort")


# ====================================================================== scatters


def _embed(op: str, x: Tensor, src: Any, index: Any, view_shape: tuple) -> Tensor:
    from .inplace import setitem_p  # noqa: PLC0415
    s = _t(src, op)
    if tuple(s.shape) != tuple(view_shape):
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(s.shape)}, slice size = {list(view_shape)}")
    if s.dtype != x.dtype:
        s = ops.cast_p(s, dtype=x.dtype)
    return setitem_p(x, s, index=index, basic=True)


def select_scatter(input: Any, src: Any, dim: _int, index: _int) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` written at ``index`` of ``dim`` (differentiable in both),
    as ``torch.select_scatter``.

    >>> import duograd as dg
    >>> dg.select_scatter(dg.zeros(2, 2), dg.ones(2), 0, 0).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    x = _t(input, "select_scatter")
    d = _d(x, dim, "select_scatter")
    n = x.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    idx = tuple([slice(None)] * d + [index % n])
    return _embed("select_scatter", x, src, idx, x.shape[:d] + x.shape[d + 1:])


def slice_scatter(input: Any, src: Any, dim: _int = 0, start: Any = None, end: Any = None,  # noqa: A002
                  step: _int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``start:end:step`` of ``dim``, as
    ``torch.slice_scatter``.

    >>> import duograd as dg
    >>> dg.slice_scatter(dg.zeros(4), dg.ones(2), start=2).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    x = _t(input, "slice_scatter")
    d = _d(x, dim, "slice_scatter")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    sl = slice(start, end, step)
    idx = tuple([slice(None)] * d + [sl])
    shape = np.empty(x.shape, dtype=np.bool_)[idx].shape
    return _embed("slice_scatter", x, src, idx, shape)


def diagonal_scatter(input: Any, src: Any, offset: _int = 0, dim1: _int = 0, dim2: _int = 1) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` on its ``offset`` diagonal of (dim1, dim2), as
    ``torch.diagonal_scatter``.

    >>> import duograd as dg
    >>> dg.diagonal_scatter(dg.zeros(2, 2), dg.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    x = _t(input, "diagonal_scatter")
    d1, d2 = _d(x, dim1, "diagonal_scatter"), _d(x, dim2, "diagonal_scatter")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = x.shape[d1], x.shape[d2]
    i = np.arange(n1)
    j = i + offset
    keep = (j >= 0) & (j < n2)
    i, j = i[keep], j[keep]
    s = _t(src, "diagonal_scatter")
    want = tuple(n for k, n in enumerate(x.shape) if k not in (d1, d2)) + (len(i),)
    if tuple(s.shape) != want:
        raise RuntimeError(f"diagonal_scatter: expected src to have a size equal to the slice of self. src "
                           f"size = {list(s.shape)}, slice size = {list(want)}")
    # move (d1, d2) last, write the advanced-index diagonal, move back
    xm = indexing.movedim(x, (d1, d2), (-2, -1))
    from .inplace import setitem_p  # noqa: PLC0415
    s = ops.cast_p(s, dtype=x.dtype) if s.dtype != x.dtype else s
    idx = (Ellipsis, i, j)
    y = setitem_p(xm, s, index=idx, basic=False)
    return indexing.movedim(y, (-2, -1), (d1, d2))


def index_put(input: Any, indices: Sequence[Any], values: Any, accumulate: _bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``values`` at ``input[indices]`` (added when ``accumulate``), as
    ``torch.index_put``.

    >>> import duograd as dg
    >>> dg.index_put(dg.zeros(3), (dg.tensor([0, 0]),), dg.tensor(1.0), accumulate=True).tolist()
    [2.0, 0.0, 0.0]
    """
    x = _t(input, "index_put")
    idx = tuple(i if isinstance(i, Tensor) or i is None else _t(i, "index_put") for i in indices)
    v = _t(values, "index_put")
    if v.dtype != x.dtype:
        if v.ndim == 0 and not v.requires_grad:
            v = ops.cast_p(v, dtype=x.dtype)
        else:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{x.dtype} for the destination and {v.dtype} for the source.")
    if accumulate:
        # the flat positions the indices name, picked by a primitive (the index arrays are
        # the Tensors' own, so that a dg.compile replay reads them again)
        flat = _wrap(np.arange(x._data.size).reshape(x.shape))
        pos = ops.getitem_p(flat, index=tuple(i._data if isinstance(i, Tensor) else i for i in idx),
                            basic=False)
        vv = v.expand(*pos.shape) if tuple(v.shape) != pos.shape else v
        from .tensor_api import put  # noqa: PLC0415
        return put(x, pos.reshape(-1), vv.reshape(-1), accumulate=True)
    from .inplace import setitem_p  # noqa: PLC0415
    np_idx = tuple(i._data if isinstance(i, Tensor) else i for i in idx)
    return setitem_p(x, v, index=np_idx, basic=False)


def index_put_(input: Tensor, indices: Sequence[Any], values: Any, accumulate: _bool = False) -> Tensor:  # noqa: A002
    """In place ``index_put``, as ``torch.index_put_``; returns ``input``.

    >>> import duograd as dg
    >>> x = dg.zeros(2)
    >>> x.index_put_((dg.tensor([1]),), dg.tensor([5.0])).tolist()
    [0.0, 5.0]
    """
    from .inplace import write  # noqa: PLC0415
    return write(input, lambda t: index_put(t, indices, values, accumulate), name="index_put_")


def masked_scatter(input: Any, mask: Any, source: Any) -> Tensor:  # noqa: A002
    """``input`` with the elements where ``mask`` is True (broadcast) taken in order from
    ``source``, as ``torch.masked_scatter``.

    >>> import duograd as dg
    >>> dg.masked_scatter(dg.zeros(3), dg.tensor([True, False, True]), dg.tensor([1.0, 2.0])).tolist()
    [1.0, 0.0, 2.0]
    """
    x = _t(input, "masked_scatter")
    m = _t(mask, "masked_scatter")
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {m.dtype}")
    s = _t(source, "masked_scatter")
    shape = np.broadcast_shapes(x.shape, m.shape)
    mk = ops.broadcast_to_p(m, shape=shape)
    xb = x.expand(*shape) if tuple(x.shape) != shape else x
    # the flat positions the mask picks, found by a primitive: a dg.compile replay finds them
    # again (and records again when their number changes)
    size = math.prod(shape)
    pos = flatnonzero_p(ops.reshape_p(mk, shape=(size,)))
    k = pos.shape[0]
    if s._data.size < k:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as the ones "
                           "selected by the mask")
    from .inplace import setitem_p  # noqa: PLC0415
    vals = s.reshape(-1)[:k]
    vals = ops.cast_p(vals, dtype=x.dtype) if vals.dtype != x.dtype else vals
    res = setitem_p(ops.reshape_p(xb, shape=(size,)), vals, index=(pos._data,), basic=False)
    return ops.reshape_p(res, shape=shape)


def masked_scatter_(input: Tensor, mask: Any, source: Any) -> Tensor:  # noqa: A002
    """In place ``masked_scatter``; returns ``input``.

    >>> import duograd as dg
    >>> dg.zeros(2).masked_scatter_(dg.tensor([False, True]), dg.tensor([3.0])).tolist()
    [0.0, 3.0]
    """
    from .inplace import write  # noqa: PLC0415
    return write(input, lambda t: masked_scatter(t, mask, source), name="masked_scatter_")


# ====================================================================== statistics


def _q_in_range(q: np.ndarray, name: str) -> np.ndarray:
    """``q`` itself, or the quantile's error when a value is outside [0, 1]."""
    if np.any((q < 0) | (q > 1)):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    return q


def _quantile(name: str, nan: bool) -> Any:
    def fn(input: Any, q: Any, dim: Any = None, keepdim: _bool = False, *,  # noqa: A002
           interpolation: str = "linear", out: Any = None) -> Tensor:
        x = _t(input, name)
        if x.dtype.kind != "f":
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        qt = q if isinstance(q, Tensor) else None
        qs = np.atleast_1d(np.asarray(qt._data if qt is not None else q, dtype=np.float64))
        if qt is not None and qt.dtype != x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if qt is not None and qt.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if qt is not None:  # (derived, so that a dg.compile replay checks each call's q)
            _tensor._derive(_q_in_range, qt, name=name)
        else:
            _q_in_range(qs, name)
        if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
            raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
                               f"nearest. Got {interpolation}")
        if x._data.size == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        if dim is None:
            src, d = x.reshape(-1), 0
        else:
            src, d = x, _d(x, dim, name)
        from .reductions import sort  # noqa: PLC0415
        srt = sort(src, d)[0]
        srt = indexing.movedim(srt, d, -1)
        # the positions and weights from q and the sorted values by a primitive, so that a
        # dg.compile replay computes them from its own (q a tensor, rows with NaN)
        qin = ops.detach_p(qt).reshape(-1) if qt is not None else _wrap(qs)
        sd = ops.detach_p(srt)

        def plan(which: str) -> Tensor:
            return quantile_plan_p(qin, sd, nan=nan, interpolation=interpolation, which=which,
                                   dtype=x.dtype)
        Q = len(qs)  # noqa: N806
        srt_q = srt.expand(Q, *srt.shape)
        a = indexing.take_along_dim(srt_q, plan("lo"), -1)
        b = indexing.take_along_dim(srt_q, plan("hi"), -1)
        r = a + (b - a) * plan("w")
        r = ops.squeeze(r, -1)  # (Q, ...rest)
        r = ops.where_p(plan("nan"), np.asarray(np.nan, x.dtype), r)
        if keepdim:
            if dim is None:
                r = r.reshape(Q, *([1] * x.ndim))
            else:
                r = ops.unsqueeze(r, d + 1)
        if qt is None and np.ndim(q) == 0 or (qt is not None and qt.ndim == 0):
            r = ops.squeeze(r, 0)
        return _out(r, out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


quantile = _quantile("quantile", False)
quantile.__doc__ = """The q-th quantiles along ``dim`` (or of all elements), interpolated as
    ``interpolation`` says, as ``torch.quantile`` (NaN where a reduced row has NaN).

    >>> import duograd as dg
    >>> dg.quantile(dg.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).tolist()
    2.5
    """
nanquantile = _quantile("nanquantile", True)
nanquantile.__doc__ = """``quantile`` ignoring NaN, as ``torch.nanquantile``.

    >>> import duograd as dg
    >>> dg.nanquantile(dg.tensor([1.0, float('nan'), 3.0]), 0.5).tolist()
    2.0
    """


def nanmedian(input: Any, dim: Any = None, keepdim: _bool = False, *, out: Any = None) -> Any:  # noqa: A002
    """The lower median ignoring NaN (all-NaN rows: NaN), as ``torch.nanmedian``; with ``dim``,
    (values, indices).

    >>> import duograd as dg
    >>> dg.nanmedian(dg.tensor([1.0, float('nan'), 3.0, 2.0])).tolist()
    2.0
    """
    from .reductions import sort  # noqa: PLC0415
    x = _t(input, "nanmedian")
    if dim is None:
        flat = x.reshape(-1)
        if flat.shape[0] == 0:
            return _wrap(np.asarray(np.nan, x.dtype))
        vals, _ = sort(flat, 0)
        k = nanmedian_index_p(ops.detach_p(flat), axis=0)  # (by a primitive, as below)
        return ops.reshape_p(indexing.take_along_dim(vals, k, 0), shape=())
    d = _d(x, dim, "nanmedian")
    vals, idx = sort(x, d)
    # where the median sits, by a primitive: a dg.compile replay finds it from its values
    k = nanmedian_index_p(ops.detach_p(x), axis=d)
    v = indexing.take_along_dim(vals, k, d)
    i = indexing.take_along_dim(idx, k, d)
    if not keepdim:
        v, i = ops.squeeze(v, d), ops.squeeze(i, d)
    return _out(_NanmedianResult(v, i), out, "nanmedian")


def cov(input: Any, *, correction: _int = 1, fweights: Any = None, aweights: Any = None) -> Tensor:  # noqa: A002
    """The covariance matrix of the rows of ``input`` (variables) over its columns
    (observations), weighted, as ``torch.cov``.

    >>> import duograd as dg
    >>> dg.cov(dg.tensor([[0.0, 2.0], [1.0, 1.0]])).tolist()
    [[2.0, 0.0], [0.0, 0.0]]
    """
    x = _t(input, "cov")
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{x.ndim} dimensions")
    if x.ndim < 2:
        x = x.reshape(1, -1)
    if x.dtype.kind != "f":
        x = ops.cast_p(x, dtype=np.dtype(_tensor.get_default_dtype()))
    n = x.shape[1]
    w = None
    if fweights is not None:
        fw = _t(fweights, "cov")
        if fw.dtype.kind not in "iu":
            raise RuntimeError("cov(): expected fweights to have integral dtype")
        w = ops.cast_p(fw, dtype=x.dtype)
    if aweights is not None:
        aw = _t(aweights, "cov")
        if aw.dtype.kind != "f":
            raise RuntimeError("cov(): expected aweights to have floating point dtype")
        w = aw if w is None else w * aw
    if w is None:
        avg = ops.mean(x, 1)
        wsum = _wrap(np.asarray(n, x.dtype))
        norm = wsum - correction
        xc = x - ops.unsqueeze(avg, 1)
        c = (xc @ xc.transpose(0, 1).conj() if False else xc @ xc.transpose(0, 1))
    else:
        wsum = ops.sum(w)
        avg = ops.sum(x * w, 1) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * ops.sum(w * _t(aweights, "cov")) / wsum
        xc = x - ops.unsqueeze(avg, 1)
        c = (xc * w) @ xc.transpose(0, 1)
    norm = ops.maximum_p(norm, np.asarray(0.0, x.dtype))
    c = c / norm
    return c.reshape(()) if _t(input, "cov").ndim < 2 or c.shape == (1, 1) and _t(input, "cov").ndim < 2 \
        else c


def corrcoef(input: Any) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the rows, clipped to [-1, 1], as ``torch.corrcoef``.

    >>> import duograd as dg
    >>> dg.corrcoef(dg.tensor([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = indexing.diagonal(c, 0, 0, 1)
    s = ops.sqrt(d)
    c = c / ops.unsqueeze(s, 1) / ops.unsqueeze(s, 0)
    return ops.clamp(c, -1, 1)


def histogram(input: Any, bins: Any = 100, *, range: Any = None, weight: Any = None,  # noqa: A002
              density: _bool = False, out: Any = None) -> Any:
    """(hist, bin_edges) of the values, as ``torch.histogram`` (no history).

    >>> import duograd as dg
    >>> dg.histogram(dg.tensor([1.0, 2.0, 1.0]), bins=2).hist.tolist()
    [2.0, 1.0]
    """


    x = _t(input, "histogram")
    if x.dtype.kind != "f":
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, "
                           f"but got input {x.dtype}")
    x = ops.detach_p(x)
    if isinstance(bins, Tensor):
        edges = ops.detach_p(bins)
    else:
        if range is not None and range[0] > range[1]:
            raise RuntimeError("torch.histogram: min should not exceed max")
        edges = histogram_edges_p(x, bins=int(bins), range=None if range is None else tuple(range))
    if weight is None:
        hist = histogram_p(x, edges, density=density, dtype=x.dtype)
    else:
        hist = histogram_w_p(x, edges, ops.detach_p(_t(weight, "histogram")), density=density,
                             dtype=x.dtype)
    return _out(_HistogramResult(hist, ops.cast_nodiff_p(edges, dtype=x.dtype)), out, "histogram")


def renorm(input: Any, p: _float, dim: _int, maxnorm: _float) -> Tensor:  # noqa: A002
    """Each slice along ``dim`` rescaled so its p-norm is at most ``maxnorm``, as
    ``torch.renorm``.

    >>> import duograd as dg
    >>> dg.renorm(dg.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).numpy().round(6)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    x = _t(input, "renorm")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if x.dtype.kind != "f":
        raise RuntimeError(f"renorm: Expected a floating point tensor, got {x.dtype}")
    d = _d(x, dim, "renorm")
    from .linalg import vector_norm  # noqa: PLC0415
    others = tuple(i for i in builtins.range(x.ndim) if i != d)
    norms = vector_norm(x, p, others, True)
    factor = ops.where_p(ops.greater_p(norms, maxnorm), maxnorm / (norms + 1e-7), 1.0)
    return x * ops.cast_p(factor, dtype=x.dtype) if factor.dtype != x.dtype else x * factor


def cdist(x1: Any, x2: Any, p: _float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row pair of two batches of row vectors, as ``torch.cdist``.

    >>> import duograd as dg
    >>> dg.cdist(dg.tensor([[0.0, 0.0]]), dg.tensor([[3.0, 4.0]])).tolist()
    [[5.0]]
    """
    a, b = _t(x1, "cdist"), _t(x2, "cdist")
    if a.ndim < 2 or b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: "
                           f"{b.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = ops.unsqueeze(a, -2) - ops.unsqueeze(b, -3)
    from .linalg import vector_norm  # noqa: PLC0415
    return vector_norm(diff, p, -1)


def pdist(input: Any, p: _float = 2) -> Tensor:  # noqa: A002
    """The p-norm distances between the rows of a matrix, upper triangle row by row, as
    ``torch.pdist``.

    >>> import duograd as dg
    >>> dg.pdist(dg.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.242640687119285]
    """
    x = _t(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    from .linalg import vector_norm  # noqa: PLC0415
    return vector_norm(x[_wrap(i)] - x[_wrap(j)], p, -1)


# ====================================================================== elementwise


def _num(x: Any, op: str) -> Tensor:
    return _t(x, op)


def float_power(input: Any, exponent: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """input ** exponent in float64, as ``torch.float_power``.

    >>> import duograd as dg
    >>> dg.float_power(dg.tensor([2]), 3).tolist()
    [8.0]
    """
    x = ops.cast_p(_num(input, "float_power"), dtype=np.dtype(np.float64)) if isinstance(input, Tensor) or \
        not isinstance(input, (int, float)) else input
    e = ops.cast_p(exponent, dtype=np.dtype(np.float64)) if isinstance(exponent, Tensor) else \
        (float(exponent) if not isinstance(exponent, (list, tuple, np.ndarray)) else
         _wrap(np.asarray(exponent, np.float64)))
    if not isinstance(x, Tensor):
        x = _wrap(np.asarray(float(x)))
    return _out(ops.pow_p(x, e), out, "float_power")


def logaddexp2(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """log2(2^x + 2^y), as ``torch.logaddexp2``.

    >>> import duograd as dg
    >>> dg.logaddexp2(dg.tensor([1.0]), dg.tensor([1.0])).tolist()
    [2.0]
    """
    ln2 = math.log(2)
    x, y = _num(input, "logaddexp2"), _num(other, "logaddexp2")
    return _out(ew.logaddexp(x * ln2, y * ln2) / ln2, out, "logaddexp2")


def ldexp(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """input * 2 ** other (a float result), as ``torch.ldexp``.

    >>> import duograd as dg
    >>> dg.ldexp(dg.tensor([1.0]), dg.tensor([3])).tolist()
    [8.0]
    """
    x, e = _num(input, "ldexp"), _num(other, "ldexp")
    if x.dtype.kind != "f":
        x = ops.cast_p(x, dtype=np.dtype(_tensor.get_default_dtype()))
    two = ops.pow_p(_wrap(np.asarray(2.0, x.dtype)), ops.cast_p(e, dtype=x.dtype) if e.dtype.kind != "f" else e)
    return _out(x * two, out, "ldexp")


def frexp(input: Any, *, out: Any = None) -> Any:  # noqa: A002
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, as ``torch.frexp``.

    >>> import duograd as dg
    >>> m, e = dg.frexp(dg.tensor([8.0]))
    >>> m.tolist(), e.tolist()
    ([0.5], [4])
    """


    x = _num(input, "frexp")
    if x.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _out(_FrexpResult(frexp_mantissa_p(x), frexp_exponent_p(x)), out, "frexp")


def _int_binary(name: str, prim: Any, doc: str) -> Any:
    def f(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        x, y = _num(input, name), _num(other, name)
        if x.dtype.kind not in "iub" or y.dtype.kind not in "iub":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{"Float" if x.dtype == np.float32 else "Double"}\'')
        return _out(prim(x, y), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


gcd = _int_binary("gcd", gcd_p, """The greatest common divisor, elementwise (integers), as ``torch.gcd``.

    >>> import duograd as dg
    >>> dg.gcd(dg.tensor([12, 7]), dg.tensor([8, 0])).tolist()
    [4, 7]
    """)
lcm = _int_binary("lcm", lcm_p, """The least common multiple, elementwise (integers), as ``torch.lcm``.

    >>> import duograd as dg
    >>> dg.lcm(dg.tensor([4, 3]), dg.tensor([6, 5])).tolist()
    [12, 15]
    """)
bitwise_left_shift = _int_binary("bitwise_left_shift", bitwise_left_shift_p,
                                 """input << other, as ``torch.bitwise_left_shift``.

    >>> import duograd as dg
    >>> dg.bitwise_left_shift(dg.tensor([1, 3]), 2).tolist()
    [4, 12]
    """)
bitwise_right_shift = _int_binary("bitwise_right_shift", bitwise_right_shift_p,
                                  """input >> other (arithmetic), as ``torch.bitwise_right_shift``.

    >>> import duograd as dg
    >>> dg.bitwise_right_shift(dg.tensor([8, -8]), 2).tolist()
    [2, -2]
    """)


def nextafter(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The next float after input towards other, as ``torch.nextafter`` (no history).

    >>> import duograd as dg
    >>> float(dg.nextafter(dg.tensor(1.0), dg.tensor(2.0))) > 1.0
    True
    """
    x, y = _num(input, "nextafter"), _num(other, "nextafter")
    return _out(nextafter_p(x, y), out, "nextafter")


def isposinf(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Whether each element is +inf, as ``torch.isposinf``.

    >>> import duograd as dg
    >>> dg.isposinf(dg.tensor([float('inf'), -float('inf'), 1.0])).tolist()
    [True, False, False]
    """
    return _out(_isposinf_p(_num(input, "isposinf")), out, "isposinf")


def isneginf(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Whether each element is -inf, as ``torch.isneginf``.

    >>> import duograd as dg
    >>> dg.isneginf(dg.tensor([float('inf'), -float('inf'), 1.0])).tolist()
    [False, True, False]
    """
    return _out(_isneginf_p(_num(input, "isneginf")), out, "isneginf")


def isreal(input: Any) -> Tensor:  # noqa: A002
    """All True: duograd's tensors are real, as ``torch.isreal`` of a real tensor.

    >>> import duograd as dg
    >>> dg.isreal(dg.tensor([1.0, 2.0])).tolist()
    [True, True]
    """
    x = _num(input, "isreal")
    return _wrap(np.ones(x.shape, np.bool_))


def isin(elements: Any, test_elements: Any, *, assume_unique: _bool = False, invert: _bool = False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements``, as ``torch.isin``.

    >>> import duograd as dg
    >>> dg.isin(dg.tensor([1, 2, 3]), dg.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: expected a Tensor")
    e, t = (ops.detach_p(a) if isinstance(a, Tensor) else _wrap(np.asarray(a))
            for a in (elements, test_elements))
    return isin_p(e, t, invert=_bool(invert))


def unique_consecutive(input: Any, return_inverse: _bool = False, return_counts: _bool = False,  # noqa: A002
                       dim: Any = None) -> Any:
    """The input with each run of equal consecutive elements (along ``dim``, or flattened)
    kept once, and optionally the inverse indices and run lengths, as
    ``torch.unique_consecutive``.

    >>> import duograd as dg
    >>> dg.unique_consecutive(dg.tensor([1, 1, 2, 2, 1]), return_counts=True)[1].tolist()
    [2, 2, 1]
    """
    x = ops.detach_p(_num(input, "unique_consecutive"))
    axis = None if dim is None else _d(x, dim, "unique_consecutive")
    res = [unique_consecutive_p(x, which=w, axis=axis)
           for w, want in (("values", True), ("inverse", return_inverse), ("counts", return_counts)) if want]
    return res[0] if len(res) == 1 else tuple(res)


# ====================================================================== windows and creation


def _window(name: str, fn: Any) -> Any:
    def w(window_length: _int, periodic: _bool = True, *, dtype: Any = None, layout: Any = None,
          device: Any = None, pin_memory: _bool = False, requires_grad: _bool = False) -> Tensor:
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got window_length="
                               f"{window_length}")
        dt = np.dtype(_tensor.get_default_dtype() if dtype is None else _tensor._np_dtype(dtype)) \
            if hasattr(_tensor, "_np_dtype") else np.dtype(dtype or _tensor.get_default_dtype())
        if window_length == 0:
            v = np.zeros(0)
        elif window_length == 1:
            v = np.ones(1)
        else:
            n = window_length + 1 if periodic else window_length
            v = fn(n)[:window_length]
        t = _wrap(v.astype(dt))
        if requires_grad:
            t.requires_grad_(True)
        return t
    w.__name__ = w.__qualname__ = name
    w.__doc__ = (f"``torch.{name}``: the window of length ``window_length`` (``periodic``: one longer, "
                 f"last dropped).\n\n    >>> import duograd as dg\n    >>> dg.{name}(3, periodic=False)"
                 f".shape\n    (3,)\n")
    return w


bartlett_window = _window("bartlett_window", np.bartlett)
blackman_window = _window("blackman_window", np.blackman)
hann_window = _window("hann_window", np.hanning)


def hamming_window(window_length: _int, periodic: _bool = True, alpha: _float = 0.54, beta: _float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: _bool = False,
                   requires_grad: _bool = False) -> Tensor:
    """``torch.hamming_window``: alpha - beta cos(2 pi n / (N - 1)).

    >>> import duograd as dg
    >>> dg.hamming_window(3, periodic=False).tolist()
    [0.08000000000000002, 1.0, 0.08000000000000002]
    """
    f = _window("hamming_window", lambda n: alpha - beta * np.cos(2 * np.pi * np.arange(n) / (n - 1)))
    return f(window_length, periodic, dtype=dtype, requires_grad=requires_grad)


def kaiser_window(window_length: _int, periodic: _bool = True, beta: _float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, pin_memory: _bool = False,
                  requires_grad: _bool = False) -> Tensor:
    """``torch.kaiser_window`` with shape parameter ``beta``.

    >>> import duograd as dg
    >>> dg.kaiser_window(3, periodic=False).shape
    (3,)
    """
    f = _window("kaiser_window", lambda n: np.kaiser(n, beta))
    return f(window_length, periodic, dtype=dtype, requires_grad=requires_grad)


def logspace(start: Any, end: Any, steps: _int, base: _float = 10.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: _bool = False, out: Any = None) -> Tensor:
    """base ** linspace(start, end, steps), as ``torch.logspace``.

    >>> import duograd as dg
    >>> dg.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = np.dtype(_tensor.get_default_dtype()) if dtype is None else np.dtype(_tensor.tensor([], dtype=dtype).dtype)
    v = np.power(base, np.linspace(float(start), float(end), steps))
    t = _wrap(v.astype(dt))
    if requires_grad:
        t.requires_grad_(True)
    return _out(t, out, "logspace")


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: _bool = False, requires_grad: _bool = False) -> Tensor:
    """A 0-d tensor of the default float dtype (or ``dtype``), as ``torch.scalar_tensor``.

    >>> import duograd as dg
    >>> dg.scalar_tensor(3).dtype
    dtype('float64')
    """
    return _tensor.tensor(float(s) if dtype is None else s, dtype=dtype or _tensor.get_default_dtype(),
                          requires_grad=requires_grad)


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape the given shapes broadcast to, as ``torch.broadcast_shapes``.

    >>> import duograd as dg
    >>> tuple(dg.broadcast_shapes((2, 1), (3,)))
    (2, 3)
    """
    try:
        s = np.broadcast_shapes(*[(x,) if isinstance(x, int) else tuple(x) for x in shapes])
    except ValueError as e:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape ({e})") from None
    return _tensor.Size(s)


def broadcast_tensors(*tensors: Any) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape, as ``torch.broadcast_tensors``.

    >>> import duograd as dg
    >>> [t.shape for t in dg.broadcast_tensors(dg.ones(2, 1), dg.ones(3))]
    [(2, 3), (2, 3)]
    """
    ts = [_t(t, "broadcast_tensors") for t in tensors]
    try:
        s = np.broadcast_shapes(*[t.shape for t in ts])
    except ValueError:
        raise RuntimeError("The size of tensors do not match at a non-singleton dimension: "
                           f"{[list(t.shape) for t in ts]}") from None
    return tuple(t.expand(*s) for t in ts)


def promote_types(type1: Any, type2: Any) -> Any:
    """The dtype of the smallest size and kind both promote to, as ``torch.promote_types``.

    >>> import duograd as dg
    >>> dg.promote_types(dg.int32, dg.float32)
    dtype('float32')
    """
    a, b = np.dtype(type1), np.dtype(type2)
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if (a.kind == "f") != (b.kind == "f"):  # an integer meets a float: the float's dtype
        return a if a.kind == "f" else b
    return np.promote_types(a, b)


def can_cast(from_: Any, to: Any) -> _bool:
    """Whether torch's casting rules allow ``from_`` to ``to`` (no float to int, no to bool):
    as ``torch.can_cast``.

    >>> import duograd as dg
    >>> dg.can_cast(dg.float64, dg.int32), dg.can_cast(dg.int32, dg.float32)
    (False, True)
    """
    a, b = np.dtype(from_), np.dtype(to)
    order = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    return order[a.kind] <= order[b.kind]


def is_same_size(input: Tensor, other: Tensor) -> _bool:  # noqa: A002
    """Whether the two shapes are equal, as ``torch.is_same_size``.

    >>> import duograd as dg
    >>> dg.is_same_size(dg.ones(2), dg.zeros(2))
    True
    """
    return tuple(input.shape) == tuple(other.shape)


def typename(obj: Any) -> str:
    """torch's type name ("torch.DoubleTensor", ...) of a tensor, or the type's qualified name.

    >>> import duograd as dg
    >>> dg.typename(dg.ones(1))
    'torch.DoubleTensor'
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    return (module + "." if module not in ("builtins", None) else "") + type(obj).__qualname__


# ====================================================================== copies of the views


def _copy_of(name: str, view: Any) -> Any:
    def fn(input: Any, *args: Any, out: Any = None, **kw: Any) -> Any:  # noqa: A002
        r = view(_t(input, name), *args, **kw)
        r = tuple(v.clone() for v in r) if isinstance(r, (tuple, list)) else r.clone()
        return _out(r, out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: a copy of the view, not sharing memory.\n\n    >>> import duograd as dg\n"
                  f"    >>> dg.{name} is not None\n    True\n")
    return fn


COPIES = {
    "alias_copy": lambda x: x[...],
    "detach_copy": lambda x: x.detach(),
    "diagonal_copy": lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
    "expand_copy": lambda x, size, *, implicit=False: x.expand(*size),
    "permute_copy": lambda x, dims: x.permute(*dims),
    "select_copy": lambda x, dim, index: x.select(dim, index),
    "slice_copy": lambda x, dim=0, start=None, end=None, step=1: x[
        (slice(None),) * dim_index(dim, x.ndim, "slice_copy", x.shape) + (slice(start, end, step),)],
    "split_copy": lambda x, split_size, dim=0: x.split(split_size, dim),
    "split_with_sizes_copy": lambda x, split_sizes, dim=0: split_with_sizes(x, split_sizes, dim),
    "squeeze_copy": lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim),
    "t_copy": lambda x: x.t(),
    "transpose_copy": lambda x, dim0, dim1: x.transpose(dim0, dim1),
    "unbind_copy": lambda x, dim=0: x.unbind(dim),
    "unfold_copy": lambda x, dimension, size, step: x.unfold(dimension, size, step),
    "unsqueeze_copy": lambda x, dim: x.unsqueeze(dim),
    "view_copy": lambda x, size: x.view(*size) if isinstance(size, (list, tuple)) else x.view(size),
    "as_strided_copy": lambda x, size, stride, storage_offset=None: as_strided(x, size, stride, storage_offset),
}


def narrow_copy(input: Any, dim: _int, start: _int, length: _int, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.narrow_copy``: a copy of ``narrow``.

    >>> import duograd as dg
    >>> dg.narrow_copy(dg.arange(4), 0, 1, 2).tolist()
    [1, 2]
    """
    from .tensor_api import narrow  # noqa: PLC0415
    return _out(narrow(input, dim, start, length).clone(), out, "narrow_copy")


def as_strided(input: Any, size: Sequence[int], stride: Sequence[int], storage_offset: Any = None) -> Tensor:  # noqa: A002
    """The elements of ``input``'s row-major memory at ``offset + sum(i_k * stride_k)``, shaped
    ``size``, as ``torch.as_strided`` of a contiguous tensor (a gather: differentiable; the
    result does not share memory).

    >>> import duograd as dg
    >>> dg.as_strided(dg.arange(6.0), (2, 2), (1, 2)).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    x = _t(input, "as_strided")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    off = int(storage_offset or 0)
    idx = np.full(size, off, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        idx = idx + (np.arange(n) * s).reshape(shape)
    if idx.size and (idx.max() >= x._data.size or idx.min() < 0):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off} "
                           f"requiring a storage size of {int(idx.max()) + 1} are out of bounds for storage "
                           f"of size {x._data.size}")
    return x.reshape(-1)[_wrap(idx)] if idx.size else _wrap(np.zeros(size, x.dtype))


# ====================================================================== configuration

_STATE: dict[str, Any] = {"warn_always": False, "debug_mode": 0, "default_device": "cpu", "flush": False}


def is_warn_always_enabled() -> _bool:
    """Whether ``set_warn_always(True)`` is on (as torch's flag).

    >>> import duograd as dg
    >>> dg.is_warn_always_enabled()
    False
    """
    return _STATE["warn_always"]


def set_warn_always(b: _bool) -> None:
    """Record torch's warn-always flag (duograd warns as Python does either way).

    >>> import duograd as dg
    >>> dg.set_warn_always(False)
    """
    _STATE["warn_always"] = bool(b)


def get_deterministic_debug_mode() -> _int:
    """0, 1 or 2 as last set (duograd is deterministic).

    >>> import duograd as dg
    >>> dg.get_deterministic_debug_mode()
    0
    """
    return _STATE["debug_mode"]


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """Record the mode ("default"/0, "warn"/1, "error"/2), as torch's.

    >>> import duograd as dg
    >>> dg.set_deterministic_debug_mode("default")
    """
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    _STATE["debug_mode"] = debug_mode


def get_default_device() -> Any:
    """The default device: the CPU.

    >>> import duograd as dg
    >>> dg.get_default_device()
    device(type='cpu')
    """
    return _tensor.device("cpu")


def set_default_device(device: Any) -> None:
    """Only the CPU (or None) is accepted, as on a machine without a GPU.

    >>> import duograd as dg
    >>> dg.set_default_device("cpu")
    """
    if device is not None:
        _tensor._check_device(device)


def set_flush_denormal(mode: _bool) -> _bool:
    """Whether the request could be met: not flushing denormals (NumPy's way) succeeds, flushing does not.

    >>> import duograd as dg
    >>> dg.set_flush_denormal(False)
    True
    """
    return not mode  # not flushing is what NumPy does: that request succeeds


def is_anomaly_enabled() -> _bool:
    """Whether ``detect_anomaly`` is active.

    >>> import duograd as dg
    >>> dg.is_anomaly_enabled()
    False
    """
    return bool(_STATE.get("anomaly", False) or getattr(_context, "anomaly", False))


def is_anomaly_check_nan_enabled() -> _bool:
    """Whether anomaly mode checks for NaN (it does when enabled).

    >>> import duograd as dg
    >>> dg.is_anomaly_check_nan_enabled()
    True
    """
    return _STATE.get("check_nan", True)


# ====================================================================== the torch.* spellings of methods

_INPLACE_TORCH = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
    "atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ "
    "expm1_ fill_ fix_ floor_ frac_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ "
    "reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ "
    "gcd_ lcm_ ldexp_ index_put_"
).split()
_METHOD_TORCH = "adjoint bitwise_and bitwise_not bitwise_or bitwise_xor get_device is_signed permute".split()


# A doc example for each delegate: the call after ``x = dg.tensor([0.25, 0.5])`` and what it shows.
# An in-place form returns its input, as torch's (``... is x``).
_DELEGATE_EXAMPLES = {
    "clamp_": "dg.clamp_(x, 0.3) is x", "clamp_max_": "dg.clamp_max_(x, 0.3) is x",
    "clamp_min_": "dg.clamp_min_(x, 0.3) is x", "clip_": "dg.clip_(x, 0.3) is x",
    "fill_": "dg.fill_(x, 1.0) is x", "xlogy_": "dg.xlogy_(x, 2.0) is x",
    "addmv_": "dg.addmv_(x, dg.eye(2), x) is x", "ldexp_": "dg.ldexp_(x, dg.tensor([1, 2])) is x",
    "index_put_": "dg.index_put_(x, (dg.tensor([0]),), dg.tensor([1.0])) is x",
    "gcd_": "dg.gcd_(dg.tensor([4, 6]), dg.tensor([6, 4])).tolist()  # [2, 2]",
    "lcm_": "dg.lcm_(dg.tensor([4, 6]), dg.tensor([6, 4])).tolist()  # [12, 12]",
    "resize_as_": "dg.resize_as_(x, dg.zeros(2)) is x", "celu_": "dg.celu_(x) is x",
    "adjoint": "dg.adjoint(x[None]).shape  # (2, 1)", "get_device": "dg.get_device(x)  # -1",
    "is_signed": "dg.is_signed(x)  # True", "permute": "dg.permute(x[None], (1, 0)).shape  # (2, 1)",
    "bitwise_and": "dg.bitwise_and(dg.tensor([12]), dg.tensor([10])).tolist()  # [8]",
    "bitwise_or": "dg.bitwise_or(dg.tensor([12]), dg.tensor([10])).tolist()  # [14]",
    "bitwise_xor": "dg.bitwise_xor(dg.tensor([12]), dg.tensor([10])).tolist()  # [6]",
    "bitwise_not": "dg.bitwise_not(dg.tensor([0])).tolist()  # [-1]",
}


def _example(name: str) -> str:
    call = _DELEGATE_EXAMPLES.get(name, f"dg.{name}(x) is x")
    call, _, shown = call.partition("  # ")
    return (f"\n\n    >>> import duograd as dg\n    >>> x = dg.tensor([0.25, 0.5])\n    >>> {call}\n"
            f"    {shown or 'True'}\n")


def _delegate(name: str) -> Any:
    def fn(input: Tensor, *args: Any, **kw: Any) -> Any:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kw)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``." + _example(name)
    return fn


TORCH: dict[str, Any] = {
    "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "unsafe_chunk": unsafe_chunk,
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d, "hstack": hstack,
    "vstack": vstack, "row_stack": row_stack, "dstack": dstack, "column_stack": column_stack,
    "block_diag": block_diag, "cartesian_prod": cartesian_prod, "combinations": combinations,
    "fliplr": fliplr, "flipud": flipud, "rot90": rot90, "diagflat": diagflat, "msort": msort,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter,
    "index_put": index_put, "masked_scatter": masked_scatter, "quantile": quantile,
    "nanquantile": nanquantile, "nanmedian": nanmedian, "cov": cov, "corrcoef": corrcoef,
    "histogram": histogram, "renorm": renorm, "cdist": cdist, "pdist": pdist, "float_power": float_power,
    "logaddexp2": logaddexp2, "ldexp": ldexp, "frexp": frexp, "gcd": gcd, "lcm": lcm,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "nextafter": nextafter, "isposinf": isposinf, "isneginf": isneginf, "isreal": isreal, "isin": isin,
    "unique_consecutive": unique_consecutive, "bartlett_window": bartlett_window,
    "blackman_window": blackman_window, "hann_window": hann_window, "hamming_window": hamming_window,
    "kaiser_window": kaiser_window, "logspace": logspace, "scalar_tensor": scalar_tensor,
    "broadcast_shapes": broadcast_shapes, "broadcast_tensors": broadcast_tensors,
    "can_cast": can_cast, "is_same_size": is_same_size, "typename": typename, "promote_types": promote_types,
    "narrow_copy": narrow_copy, "as_strided": as_strided, "is_warn_always_enabled": is_warn_always_enabled,
    "set_warn_always": set_warn_always, "get_deterministic_debug_mode": get_deterministic_debug_mode,
    "set_deterministic_debug_mode": set_deterministic_debug_mode, "get_default_device": get_default_device,
    "set_default_device": set_default_device, "set_flush_denormal": set_flush_denormal,
    "is_anomaly_enabled": is_anomaly_enabled, "is_anomaly_check_nan_enabled": is_anomaly_check_nan_enabled,
}
for _n, _v in COPIES.items():
    TORCH[_n] = _copy_of(_n, _v)
for _n in _INPLACE_TORCH + _METHOD_TORCH:
    TORCH[_n] = _delegate(_n)


def _m(fn: Any) -> Any:
    return fn


METHODS: dict[str, Any] = {
    "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "unsafe_chunk": unsafe_chunk,
    "fliplr": fliplr, "flipud": flipud, "rot90": rot90, "diagflat": diagflat, "msort": msort,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter,
    "index_put": index_put, "index_put_": index_put_, "masked_scatter": masked_scatter,
    "masked_scatter_": masked_scatter_, "quantile": quantile, "nanquantile": nanquantile,
    "nanmedian": nanmedian, "corrcoef": corrcoef, "histogram": histogram, "renorm": renorm,
    "float_power": float_power, "logaddexp2": logaddexp2, "ldexp": ldexp, "frexp": frexp, "gcd": gcd,
    "lcm": lcm, "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "nextafter": nextafter, "isposinf": isposinf, "isneginf": isneginf, "isreal": isreal,
    "unique_consecutive": unique_consecutive, "narrow_copy": narrow_copy, "as_strided": as_strided,
    "is_same_size": is_same_size,
}


def _cov_method(self: Tensor, *, correction: _int = 1, fweights: Any = None, aweights: Any = None) -> Tensor:
    return cov(self, correction=correction, fweights=fweights, aweights=aweights)


METHODS["cov"] = _cov_method
_TWINS = ("float_power", "ldexp", "gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "nextafter",
          "renorm")


def install(namespace: dict) -> None:
    """Bind the names above onto ``namespace`` (``dg``) and the Tensor (with in-place twins)."""
    from . import inplace  # noqa: PLC0415
    for n, f in TORCH.items():
        namespace[n] = f
    for n, f in METHODS.items():
        setattr(Tensor, n, f)
    for n in _TWINS:
        def method_(self: Tensor, *args: Any, _n: str = n, **kw: Any) -> Tensor:
            return inplace.twin(self, _n, *args, **kw)
        method_.__name__ = method_.__qualname__ = n + "_"
        method_.__doc__ = f"In place: ``t`` becomes ``t.{n}(...)``, as torch's ``Tensor.{n}_``."
        setattr(Tensor, n + "_", method_)
    for n in ("gcd_", "lcm_", "ldexp_"):
        namespace[n] = _delegate(n)


# ====================================================================== Tensor-only: shape-changing in-place ops


def _sq_dims(x: Tensor, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return tuple(i for i, n in enumerate(x.shape) if n == 1)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(i for i in (_d(x, d, "squeeze_") for d in dims) if x.shape[i] == 1)


def t_(self: Tensor) -> Tensor:
    """In place ``t()``: ``self`` becomes its transpose (at most 2 dims); returns ``self``.

    >>> import duograd as dg
    >>> dg.ones(2, 3).t_().shape
    (3, 2)
    """
    from .inplace import write_shape  # noqa: PLC0415
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return write_shape(self, lambda a: a.T, lambda s: s.t(), name="t_")


def transpose_(self: Tensor, dim0: _int, dim1: _int) -> Tensor:
    """In place ``transpose(dim0, dim1)``; returns ``self``.

    >>> import duograd as dg
    >>> dg.ones(2, 3, 4).transpose_(0, 2).shape
    (4, 3, 2)
    """
    from .inplace import write_shape  # noqa: PLC0415
    a, b = _d(self, dim0, "transpose_"), _d(self, dim1, "transpose_")
    return write_shape(self, lambda x: np.swapaxes(x, a, b), lambda s: s.transpose(a, b), name="transpose_")


def swapaxes_(self: Tensor, axis0: _int, axis1: _int) -> Tensor:
    """In place ``swapaxes``; returns ``self``.

    >>> import duograd as dg
    >>> dg.ones(2, 3).swapaxes_(0, 1).shape
    (3, 2)
    """
    return transpose_(self, axis0, axis1)


def swapdims_(self: Tensor, dim0: _int, dim1: _int) -> Tensor:
    """In place ``swapdims``; returns ``self``.

    >>> import duograd as dg
    >>> dg.ones(2, 3).swapdims_(0, 1).shape
    (3, 2)
    """
    return transpose_(self, dim0, dim1)


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """In place ``squeeze(dim)``; returns ``self``.

    >>> import duograd as dg
    >>> dg.ones(1, 3, 1).squeeze_().shape
    (3,)
    """
    from .inplace import write_shape  # noqa: PLC0415
    dims = _sq_dims(self, dim)
    shape = tuple(n for i, n in enumerate(self.shape) if i not in dims)
    return write_shape(self, lambda a: a.reshape(shape), lambda s: s.reshape(shape), name="squeeze_")


def unsqueeze_(self: Tensor, dim: _int) -> Tensor:
    """In place ``unsqueeze(dim)``; returns ``self``.

    >>> import duograd as dg
    >>> dg.ones(3).unsqueeze_(0).shape
    (1, 3)
    """
    from .inplace import write_shape  # noqa: PLC0415
    d = dim_index(dim, self.ndim + 1, "unsqueeze_", self.shape)
    return write_shape(self, lambda a: np.expand_dims(a, d), lambda s: ops.unsqueeze(s, d), name="unsqueeze_")


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes``, keeping its first elements in row-major order (new
    ones are zero here; torch leaves them uninitialised); not for tensors that require grad,
    as torch.

    >>> import duograd as dg
    >>> dg.arange(6).resize_(2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, _tensor.Size)):
        sizes = tuple(sizes[0])
    shape = tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    n = int(np.prod(shape))
    if _context.on_write:  # a dg.compile recording: the new array from primitives, redone
        self._data = _resized(self, shape, n)._data
        _context.write(self, "resize_()")
    elif n == self._data.size:
        self._data = self._data.reshape(shape)
    else:
        new = np.zeros(shape, self.dtype)
        flat = self._data.reshape(-1)
        k = builtins.min(n, flat.size)
        new.reshape(-1)[:k] = flat[:k]
        self._data = new
    from . import _versions  # noqa: PLC0415
    _versions.bump(self._data, recorded=False)
    return self


def _resized(t: Tensor, shape: tuple, n: int) -> Tensor:
    """``t``'s first ``n`` elements (row-major), zeros after them, in ``shape``."""
    with _no_grad():
        flat = ops.reshape_p(t, shape=(t._data.size,))
        if n > flat.shape[0]:
            flat = ops.concatenate_p(flat, _wrap(np.zeros(n - flat.shape[0], t.dtype)), axis=0)
        elif n < flat.shape[0]:
            flat = ops.getitem_p(flat, index=(slice(0, n),), basic=True)
        return ops.reshape_p(flat, shape=shape)


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape.

    >>> import duograd as dg
    >>> dg.zeros(4).resize_as_(dg.zeros(2, 2)).shape
    (2, 2)
    """
    return resize_(self, tuple(the_template.shape))


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """A resized copy (``Tensor.resize``, deprecated in torch).

    >>> import duograd as dg
    >>> dg.arange(4).resize(2, 2).shape
    (2, 2)
    """
    return resize_(self.detach().clone(), *sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """A copy resized to ``tensor``'s shape.

    >>> import duograd as dg
    >>> dg.arange(4).resize_as(dg.zeros(2, 2)).shape
    (2, 2)
    """
    return resize(self, *tensor.shape)


# ====================================================================== Tensor-only: real-tensor identities


def _H(self: Tensor) -> Tensor:  # noqa: N802
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return self.t() if self.ndim == 2 else self


def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The conjugate: a real tensor itself, as ``torch.conj``.

    >>> import duograd as dg
    >>> x = dg.ones(2); dg.conj(x) is x
    True
    """
    return input


def conj_physical(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of a real tensor (its conjugate), as ``torch.conj_physical``.

    >>> import duograd as dg
    >>> dg.conj_physical(dg.ones(2)).tolist()
    [1.0, 1.0]
    """
    return _out(ops.clone_p(_t(input, "conj_physical")), out, "conj_physical")


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real part: a real tensor itself, as ``torch.real``.

    >>> import duograd as dg
    >>> dg.real(dg.ones(2)).tolist()
    [1.0, 1.0]
    """
    return input


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """torch's error: ``imag`` is not implemented for real tensors.

    >>> import duograd as dg
    >>> try:
    ...     dg.imag(dg.ones(2))
    ... except RuntimeError as e:
    ...     print("non-complex" in str(e))
    True
    """
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def angle(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The argument of each element: pi where negative, 0 otherwise (NaN kept), as
    ``torch.angle`` of a real tensor (no gradient but zero).

    >>> import duograd as dg
    >>> dg.angle(dg.tensor([-2.0, 3.0])).tolist()
    [3.141592653589793, 0.0]
    """
    x = _t(input, "angle")
    if x.dtype.kind != "f":
        x = ops.cast_p(x, dtype=np.dtype(_tensor.get_default_dtype()))
    return _out(ops.where_p(ops.less_p(x, 0.0), np.asarray(math.pi, x.dtype), x * 0), out, "angle")


def _false(self: Any) -> _bool:
    return False


def is_conj(input: Tensor) -> _bool:  # noqa: A002
    """False: a real tensor has no conjugate bit.

    >>> import duograd as dg
    >>> dg.is_conj(dg.ones(1))
    False
    """
    return False


def is_neg(input: Tensor) -> _bool:  # noqa: A002
    """False: duograd has no lazy negation bit.

    >>> import duograd as dg
    >>> dg.is_neg(dg.ones(1))
    False
    """
    return False


def is_inference(input: Tensor) -> _bool:  # noqa: A002
    """False: duograd's tensors made in ``inference_mode`` are ordinary tensors.

    >>> import duograd as dg
    >>> dg.is_inference(dg.ones(1))
    False
    """
    return False


def is_distributed(input: Tensor) -> _bool:  # noqa: A002
    """False (one process).

    >>> import duograd as dg
    >>> dg.is_distributed(dg.ones(1))
    False
    """
    return False


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor itself (no conjugate bit).

    >>> import duograd as dg
    >>> dg.resolve_conj(dg.ones(1)).tolist()
    [1.0]
    """
    return input


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor itself (no negation bit).

    >>> import duograd as dg
    >>> dg.resolve_neg(dg.ones(1)).tolist()
    [1.0]
    """
    return input


def _cast(dtype: Any, name: str) -> Any:
    def fn(self: Tensor, memory_format: Any = None) -> Tensor:
        return self.to(dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``self.to({np.dtype(dtype).name})``, as torch's ``Tensor.{name}``."
    return fn


def _is_set_to(self: Tensor, tensor: Tensor) -> _bool:
    return self._data is tensor._data or (self._data.__array_interface__ == tensor._data.__array_interface__)


def _each(a: np.ndarray, each: Any) -> np.ndarray:
    """``each`` of every element of ``a``, in ``a``'s dtype."""
    return np.vectorize(each, otypes=[a.dtype])(a) if a.size else a.copy()


def _apply_(self: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """Apply a Python function to each element in place (CPU only, no gradient), as torch's.
    A ``dg.compile`` replay calls it again on that call's values (a derived array)."""
    from .inplace import write  # noqa: PLC0415
    vals = _tensor._derive(_each, self._data, each=callable)
    with _no_grad():
        return write(self, lambda t: _wrap(np.asarray(vals, self.dtype)), name="apply_")


def _map_(self: Tensor, tensor: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """``self[i] = callable(self[i], tensor[i])`` in place (broadcasting ``tensor``), as torch's."""
    from .inplace import write  # noqa: PLC0415
    _context.read(tensor, "Tensor.map_()")  # (a replay keeps the recorded values)
    other = np.broadcast_to(tensor._data, self.shape)
    vals = np.vectorize(callable, otypes=[self.dtype])(self._data, other) if self._data.size else self._data.copy()
    with _no_grad():
        return write(self, lambda t: _wrap(np.asarray(vals, self.dtype)), name="map_")


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable: Any) -> Tensor:  # noqa: A002
    from .inplace import write  # noqa: PLC0415
    _context.read(self, "Tensor.map2_()")  # (a replay keeps the recorded values)
    a, b = np.broadcast_to(x._data, self.shape), np.broadcast_to(y._data, self.shape)
    vals = np.vectorize(callable, otypes=[self.dtype])(self._data, a, b) if self._data.size else self._data.copy()
    with _no_grad():
        return write(self, lambda t: _wrap(np.asarray(vals, self.dtype)), name="map2_")


def _no_grad() -> Any:
    from .autograd import no_grad  # noqa: PLC0415
    return no_grad()


def _hardshrink(input: Any, lambd: _float = 0.5) -> Tensor:  # noqa: A002
    """x where |x| > lambd, else 0, as ``torch.hardshrink``.

    >>> import duograd as dg
    >>> dg.hardshrink(dg.tensor([0.25, -1.0])).tolist()
    [0.0, -1.0]
    """
    x = _t(input, "hardshrink")
    return ops.where_p(ops.greater_p(ops.abs_p(x), lambd), x, x * 0)


def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: _bool = False) -> Tensor:
    """Fill the main diagonal in place (all dims equal, or a tall matrix with ``wrap``), as torch's."""
    from .inplace import setitem_p, write  # noqa: PLC0415
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = builtins.min(self.shape)
    if self.ndim == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        rows = np.arange(self.shape[0])
        rows = rows[rows % (self.shape[1] + 1) != self.shape[1]]
        cols = np.arange(len(rows)) % self.shape[1]
        idx = (rows, cols)
    else:
        idx = tuple(np.arange(n) for _ in range(self.ndim))
    return write(self, lambda t: setitem_p(t, np.asarray(fill_value, self.dtype), index=idx, basic=False),
                 name="fill_diagonal_")


def _new(self: Tensor, *args: Any, **kw: Any) -> Tensor:
    """``Tensor.new``: a tensor of ``self``'s dtype, from data or sizes (torch's legacy form)."""
    dtype = kw.pop("dtype", None) or self.dtype
    kw.pop("device", None)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        a = args[0]
        if isinstance(a, _tensor.Size):
            return _wrap(np.zeros(tuple(a), dtype))
        return _tensor.tensor(a, dtype=dtype)
    return _wrap(np.zeros(tuple(int(s) for s in args), dtype))


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                       requires_grad: _bool = False, layout: Any = None, pin_memory: _bool = False) -> Tensor:
    t = _wrap(np.zeros(tuple(size), dtype or self.dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple[int, ...]:
    return tuple(range(self.ndim))


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: _bool = False, pin_memory: _bool = False) -> Tensor:
    """A zero-filled tensor of ``size`` (duograd's arrays are row-major; ``stride`` is accepted),
    as ``torch.empty_strided``.

    >>> import duograd as dg
    >>> dg.empty_strided((2, 3), (3, 1)).shape
    (2, 3)
    """
    if device is not None:
        _tensor._check_device(device)
    t = _wrap(np.zeros(tuple(size), np.dtype(dtype or _tensor.get_default_dtype())))
    if requires_grad:
        t.requires_grad_(True)
    return t


def randint_like(input: Tensor, low: _int = 0, high: Any = None, *, dtype: Any = None, layout: Any = None,  # noqa: A002
                 device: Any = None, requires_grad: _bool = False, memory_format: Any = None,
                 generator: Any = None) -> Tensor:
    """Random integers in [low, high) of ``input``'s shape and dtype, as ``torch.randint_like``.

    >>> import duograd as dg
    >>> dg.randint_like(dg.zeros(3), 5).shape
    (3,)
    """
    from .random import randint  # noqa: PLC0415
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, generator=generator)


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A tensor of ``input``'s shape and dtype filled with ``value`` (differentiable in a tensor
    value), as ``torch.fill``.

    >>> import duograd as dg
    >>> dg.fill(dg.zeros(2), 3.0).tolist()
    [3.0, 3.0]
    """
    from .inplace import assign_p  # noqa: PLC0415
    v = value if isinstance(value, Tensor) else np.asarray(value, input.dtype)
    return assign_p(input, v)


EXTRA_METHODS: dict[str, Any] = {
    "t_": t_, "transpose_": transpose_, "swapaxes_": swapaxes_, "swapdims_": swapdims_, "squeeze_": squeeze_,
    "unsqueeze_": unsqueeze_, "resize_": resize_, "resize_as_": resize_as_, "resize": resize,
    "resize_as": resize_as, "conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg, "is_conj": is_conj, "is_neg": is_neg, "is_inference": is_inference,
    "is_distributed": is_distributed, "angle": angle, "is_set_to": _is_set_to, "apply_": _apply_,
    "map_": _map_, "map2_": _map2_, "hardshrink": _hardshrink, "fill_diagonal_": _fill_diagonal_,
    "new": _new, "new_empty_strided": _new_empty_strided, "dim_order": _dim_order,
    "byte": _cast(np.uint8, "byte"), "char": _cast(np.int8, "char"), "short": _cast(np.int16, "short"),
    "half": _cast(np.float16, "half"),
}
EXTRA_PROPERTIES: dict[str, Any] = {
    "H": _H, "real": real, "mH": lambda self: self.transpose(-2, -1),
    "output_nr": lambda self: 0, "layout": lambda self: "torch.strided", "name": lambda self: None,
}
EXTRA_TORCH: dict[str, Any] = {
    "conj": conj, "conj_physical": conj_physical, "real": real, "imag": imag, "angle": angle,
    "is_conj": is_conj, "is_neg": is_neg, "is_inference": is_inference, "is_distributed": is_distributed,
    "resolve_conj": resolve_conj, "resolve_neg": resolve_neg, "hardshrink": _hardshrink,
    "empty_strided": empty_strided, "randint_like": randint_like, "fill": fill,
    "conj_physical_": _delegate("conj_physical_"), "fill_": _delegate("fill_"),
}


def _conj_physical_(self: Tensor) -> Tensor:
    return self


def install_extra(namespace: dict) -> None:
    """The Tensor-only names above, and their torch.* spellings."""
    for n, f in EXTRA_METHODS.items():
        setattr(Tensor, n, f)
    Tensor.conj_physical_ = _conj_physical_
    for n, f in EXTRA_PROPERTIES.items():
        if not isinstance(vars(Tensor).get(n), property) or n in ("H", "real"):
            setattr(Tensor, n, property(f))
    Tensor.imag = property(imag)
    for n, f in EXTRA_TORCH.items():
        namespace[n] = f
    TORCH.update(EXTRA_TORCH)


# ====================================================================== torch.* forms of nn.functional, and more


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Tensor:
    """The sum of products over the last ``dims`` dims of a and the first of b (or the given
    pairs of dim lists), as ``torch.tensordot``.

    >>> import duograd as dg
    >>> dg.tensordot(dg.ones(2, 3), dg.ones(3, 4), dims=1).shape
    (2, 4)
    """
    x, y = _t(a, "tensordot"), _t(b, "tensordot")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(x.ndim - dims, x.ndim)), list(range(dims))
    else:
        da, db = list(dims[0]) if isinstance(dims[0], (list, tuple)) else [dims[0]], \
            list(dims[1]) if isinstance(dims[1], (list, tuple)) else [dims[1]]
    da = [_d(x, d, "tensordot") for d in da]
    db = [_d(y, d, "tensordot") for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for i, j in zip(da, db):
        if x.shape[i] != y.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {x.shape[i]} in dim {i}"
                               f" and second has size {y.shape[j]} in dim {j}")
    fa = [i for i in range(x.ndim) if i not in da]
    fb = [j for j in range(y.ndim) if j not in db]
    k = int(np.prod([x.shape[i] for i in da]))
    xa = x.permute(*fa, *da).reshape(int(np.prod([x.shape[i] for i in fa])), k)
    yb = y.permute(*db, *fb).reshape(k, int(np.prod([y.shape[j] for j in fb])))
    r = (xa @ yb).reshape(*[x.shape[i] for i in fa], *[y.shape[j] for j in fb])
    return _out(r, out, "tensordot")


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat indices in ``shape`` (int64), as ``torch.unravel_index``.

    >>> import duograd as dg
    >>> [t.tolist() for t in dg.unravel_index(dg.tensor([4, 1]), (2, 3))]
    [[1, 0], [1, 1]]
    """
    i = _t(indices, "unravel_index")
    if i.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {i.dtype}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = int(np.prod(shape))
    if np.any((i._data < -n) | (i._data >= n)):  # (a check of the eager call only)
        raise RuntimeError("'indices' must be in range [-prod(shape), prod(shape) - 1]")
    i = ops.detach_p(i)
    return tuple(unravel_p(i, shape=shape, axis=k) for k in builtins.range(len(shape)))


def frobenius_norm(input: Any, dim: Any = (-2, -1), keepdim: _bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """sqrt(sum x^2) over ``dim``, as ``torch.frobenius_norm``.

    >>> import duograd as dg
    >>> float(dg.frobenius_norm(dg.tensor([[3.0, 4.0]])))
    5.0
    """
    from .linalg import vector_norm  # noqa: PLC0415
    return _out(vector_norm(input, 2, dim, keepdim), out, "frobenius_norm")


def nuclear_norm(input: Any, dim: Any = None, keepdim: _bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """The sum of the singular values (of the last two dims or ``dim``), as ``torch.nuclear_norm``.

    >>> import duograd as dg
    >>> float(dg.nuclear_norm(dg.tensor([[3.0, 0.0], [0.0, -2.0]])))
    5.0
    """
    from .linalg_more import svdvals  # noqa: PLC0415
    x = _t(input, "nuclear_norm")
    if isinstance(dim, _bool):
        dim, keepdim = None, dim
    if x.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = (-2, -1) if dim is None else tuple(_d(x, d, "nuclear_norm") for d in dim)
    xm = indexing.movedim(x, dims, (-2, -1))
    r = ops.sum(svdvals(xm), -1)
    if keepdim:
        r = ops.unsqueeze(ops.unsqueeze(r, -1), -1)
        r = indexing.movedim(r, (-2, -1), tuple(d % x.ndim for d in dims))  # (-2, -1) or normalised
    return _out(r, out, "nuclear_norm")


def threshold(input: Any, threshold: _float, value: _float) -> Tensor:  # noqa: A002
    """x where x > threshold, else ``value``, as ``torch.threshold``.

    >>> import duograd as dg
    >>> dg.threshold(dg.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    x = _t(input, "threshold")
    return ops.where_p(ops.greater_p(x, threshold), x, np.asarray(value, x.dtype))


def threshold_(input: Tensor, threshold: _float, value: _float) -> Tensor:  # noqa: A002
    """In place ``threshold``.

    >>> import duograd as dg
    >>> dg.threshold_(dg.tensor([0.5, 2.0]), 1.0, 0.0).tolist()
    [0.0, 2.0]
    """
    from .inplace import write  # noqa: PLC0415
    th = threshold
    return write(input, lambda t: globals()["threshold"](t, th, value), name="threshold_")


def rrelu(input: Any, lower: _float = 1.0 / 8, upper: _float = 1.0 / 3, training: _bool = False,  # noqa: A002
          generator: Any = None) -> Tensor:
    """Leaky ReLU with slope ``(lower + upper) / 2`` (training: a uniform random slope per
    element), as ``torch.rrelu``.

    >>> import duograd as dg
    >>> dg.rrelu(dg.tensor([-1.0, 1.0]), 0.2, 0.4).tolist()
    [-0.30000000000000004, 1.0]
    """
    x = _t(input, "rrelu")
    if training:
        from .random import as_rng  # noqa: PLC0415
        slope = _wrap(as_rng(generator).uniform(lower, upper, x.shape).astype(x.dtype))
    else:
        slope = (lower + upper) / 2
    return ops.where_p(ops.greater_equal_p(x, 0.0), x, x * slope)


def rrelu_(input: Tensor, lower: _float = 1.0 / 8, upper: _float = 1.0 / 3, training: _bool = False,  # noqa: A002
           generator: Any = None) -> Tensor:
    """In place ``rrelu``.

    >>> import duograd as dg
    >>> dg.rrelu_(dg.tensor([-1.0]), 0.5, 0.5).tolist()
    [-0.5]
    """
    from .inplace import write  # noqa: PLC0415
    return write(input, lambda t: rrelu(t, lower, upper, training, generator), name="rrelu_")


def _dropout_mask(x: Tensor, p: _float, feature: _bool, op: str) -> np.ndarray:
    from .random import as_rng  # noqa: PLC0415
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    shape = x.shape
    if feature:
        if x.ndim < 2:
            raise RuntimeError(f"{op}: Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    return (as_rng(None).random(shape) >= p).astype(x.dtype)


def _dropout_impl(name: str, alpha: _bool, feature: _bool) -> Any:
    def fn(input: Any, p: _float, train: _bool) -> Tensor:  # noqa: A002
        x = _t(input, name)
        if not train or p == 0:
            return x.clone() if False else x
        keep = _dropout_mask(x, p, feature, name)
        if p == 1:
            return x * 0
        if not alpha:
            return x * _wrap(keep / (1 - p))
        a_ = 1.7580993408473766
        a = 1.0 / math.sqrt((a_ * a_ * p + 1) * (1 - p))
        b = (keep - 1) * (a_ * a) + a_ * a * p
        return x * _wrap(keep * a) + _wrap(b.astype(x.dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}(input, p, train)``: identity unless ``train``.\n\n    >>> import duograd as dg\n"
                  f"    >>> dg.{name}(dg.ones(2, 2), 0.5, False).tolist()\n    [[1.0, 1.0], [1.0, 1.0]]\n")

    def fn_(input: Tensor, p: _float, train: _bool) -> Tensor:  # noqa: A002
        from .inplace import write  # noqa: PLC0415
        return write(input, lambda t: fn(t, p, train), name=name + "_")
    fn_.__name__ = fn_.__qualname__ = name + "_"
    fn_.__doc__ = (f"In place ``{name}``; returns ``input``.\n\n    >>> import duograd as dg\n"
                   f"    >>> x = dg.ones(2)\n    >>> dg.{name}_(x, 0.5, False) is x\n    True\n")
    return fn, fn_


dropout, dropout_ = _dropout_impl("dropout", False, False)
alpha_dropout, alpha_dropout_ = _dropout_impl("alpha_dropout", True, False)
feature_dropout, feature_dropout_ = _dropout_impl("feature_dropout", False, True)
feature_alpha_dropout, feature_alpha_dropout_ = _dropout_impl("feature_alpha_dropout", True, True)


def _F() -> Any:  # noqa: N802
    from .nn import functional  # noqa: PLC0415
    return functional


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: _float = 1e-05,  # noqa: A002
               cudnn_enable: _bool = True) -> Tensor:
    """``torch.layer_norm``: ``F.layer_norm``.

    >>> import duograd as dg
    >>> dg.layer_norm(dg.tensor([[1.0, 3.0]]), [2]).tolist()
    [[-0.9999950000374997, 0.9999950000374997]]
    """
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Any, num_groups: _int, weight: Any = None, bias: Any = None, eps: _float = 1e-05,  # noqa: A002
               cudnn_enabled: _bool = True) -> Tensor:
    """``torch.group_norm``: ``F.group_norm``.

    >>> import duograd as dg
    >>> dg.group_norm(dg.ones(1, 2, 2), 1).shape
    (1, 2, 2)
    """
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: _bool,  # noqa: A002
               momentum: _float, eps: _float, cudnn_enabled: _bool) -> Tensor:
    """``torch.batch_norm`` (torch's positional order): ``F.batch_norm``.

    >>> import duograd as dg
    >>> dg.batch_norm(dg.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 1e-5, False).tolist()
    [[-0.9999950000374997], [0.9999950000374997]]
    """
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,  # noqa: A002
                  use_input_stats: _bool, momentum: _float, eps: _float, cudnn_enabled: _bool) -> Tensor:
    """``torch.instance_norm``: each (sample, channel) normalised over its spatial dims.

    >>> import duograd as dg
    >>> dg.instance_norm(dg.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1, 1e-5, False).tolist()
    [[[-0.9999950000374997, 0.9999950000374997]]]
    """
    x = _t(input, "instance_norm")
    dims = tuple(range(2, x.ndim))
    if use_input_stats or running_mean is None:
        mean = ops.mean(x, dims, True)
        var = ops.var(x, dims, keepdim=True, correction=0)
    else:
        shape = (1, -1) + (1,) * (x.ndim - 2)
        mean, var = running_mean.reshape(*shape), running_var.reshape(*shape)
    y = (x - mean) / ops.sqrt(var + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(*shape)
    if bias is not None:
        y = y + bias.reshape(*shape)
    return y


def embedding(weight: Any, indices: Any, padding_idx: _int = -1, scale_grad_by_freq: _bool = False,
              sparse: _bool = False) -> Tensor:
    """``torch.embedding(weight, indices)``: the rows of ``weight``.

    >>> import duograd as dg
    >>> dg.embedding(dg.eye(3), dg.tensor([2])).tolist()
    [[0.0, 0.0, 1.0]]
    """
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduce(loss: Tensor, reduction: _int) -> Tensor:
    r = _REDUCTIONS[int(reduction)] if not isinstance(reduction, str) else reduction
    return loss if r == "none" else ops.mean(loss) if r == "mean" else ops.sum(loss)


def kl_div(input: Any, target: Any, reduction: _int = 0, *, log_target: _bool = False) -> Tensor:  # noqa: A002
    """``torch.kl_div`` (an integer reduction: 0 none, 1 mean, 2 sum).

    >>> import duograd as dg
    >>> float(dg.kl_div(dg.tensor([0.0]), dg.tensor([1.0])))
    0.0
    """
    return _F().kl_div(input, target, reduction=_REDUCTIONS[int(reduction)], log_target=log_target)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, pos_weight: Any = None,  # noqa: A002
                                     reduction: _int = 0) -> Tensor:
    """``torch.binary_cross_entropy_with_logits`` (an integer reduction).

    >>> import duograd as dg
    >>> round(float(dg.binary_cross_entropy_with_logits(dg.tensor([0.0]), dg.tensor([1.0]))), 6)
    0.693147
    """
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_REDUCTIONS[int(reduction)],
                                                 pos_weight=pos_weight)


def pairwise_distance(x1: Any, x2: Any, p: _float = 2.0, eps: _float = 1e-06, keepdim: _bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim, as ``torch.pairwise_distance``.

    >>> import duograd as dg
    >>> dg.pairwise_distance(dg.tensor([[0.0, 0.0]]), dg.tensor([[3.0, 4.0]]), eps=0.0).tolist()
    [5.0]
    """
    from .linalg import vector_norm  # noqa: PLC0415
    a, b = _t(x1, "pairwise_distance"), _t(x2, "pairwise_distance")
    return vector_norm(a - b + eps, p, -1, keepdim)


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: _float = 0.0, reduction: _int = 0) -> Tensor:
    """max(0, -target (x1 - x2) + margin), reduced, as ``torch.margin_ranking_loss``.

    >>> import duograd as dg
    >>> float(dg.margin_ranking_loss(dg.tensor([1.0]), dg.tensor([0.0]), dg.tensor([1.0])))
    0.0
    """
    a, b, y = _t(input1, "margin_ranking_loss"), _t(input2, "margin_ranking_loss"), _t(target, "margin_ranking_loss")
    return _reduce(ops.relu(-y * (a - b) + margin), reduction)


def hinge_embedding_loss(input: Any, target: Any, margin: _float = 1.0, reduction: _int = 0) -> Tensor:  # noqa: A002
    """x where target is 1, max(0, margin - x) where it is -1, reduced, as ``torch.hinge_embedding_loss``.

    >>> import duograd as dg
    >>> dg.hinge_embedding_loss(dg.tensor([0.3, 2.0]), dg.tensor([1.0, -1.0])).tolist()
    [0.3, 0.0]
    """
    x, y = _t(input, "hinge_embedding_loss"), _t(target, "hinge_embedding_loss")
    zeros = x * 0
    pos = ops.where_p(ops.not_equal_p(y, 1.0), zeros, x)
    neg = ops.where_p(ops.not_equal_p(y, -1.0), zeros, ops.relu(margin - x))
    return _reduce(pos + neg, reduction)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: _float = 0.0,
                          reduction: _int = 0) -> Tensor:
    """1 - cos where target is 1, max(0, cos - margin) where it is -1, reduced, as
    ``torch.cosine_embedding_loss``.

    >>> import duograd as dg
    >>> round(float(dg.cosine_embedding_loss(dg.tensor([[1.0, 0.0]]), dg.tensor([[1.0, 0.0]]), dg.tensor([1.0]))), 6)
    0.0
    """
    a, b, y = (_t(v, "cosine_embedding_loss") for v in (input1, input2, target))
    eps = 1e-12
    prod = ops.sum(a * b, -1)
    m1 = ops.sum(a * a, -1) + eps
    m2 = ops.sum(b * b, -1) + eps
    cos = prod / ops.sqrt(m1 * m2)
    zeros = cos * 0
    pos = ops.where_p(ops.equal_p(y, 1.0), 1 - cos, zeros)
    neg = ops.where_p(ops.equal_p(y, -1.0), ops.relu(cos - margin), zeros)
    return _reduce(pos + neg, reduction)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: _float = 1.0, p: _float = 2,
                        eps: _float = 1e-06, swap: _bool = False, reduction: _int = 0) -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0), reduced, as ``torch.triplet_margin_loss``.

    >>> import duograd as dg
    >>> float(dg.triplet_margin_loss(dg.zeros(1, 2), dg.zeros(1, 2), dg.ones(1, 2) * 3))
    0.0
    """
    a, po, ne = (_t(v, "triplet_margin_loss") for v in (anchor, positive, negative))
    dp = pairwise_distance(a, po, p, eps)
    dn = pairwise_distance(a, ne, p, eps)
    if swap:
        ds = pairwise_distance(po, ne, p, eps)
        dn = ops.minimum(dn, ds) if hasattr(ops, "minimum") else ops.where_p(ops.less_p(ds, dn), ds, dn)
    return _reduce(ops.relu(dp - dn + margin), reduction)


def poisson_nll_loss(input: Any, target: Any, log_input: _bool, full: _bool, eps: _float, reduction: _int) -> Tensor:  # noqa: A002
    """The Poisson negative log-likelihood, as ``torch.poisson_nll_loss`` (all arguments positional).

    >>> import duograd as dg
    >>> float(dg.poisson_nll_loss(dg.tensor([0.0]), dg.tensor([0.0]), True, False, 1e-8, 1))
    1.0
    """
    x, y = _t(input, "poisson_nll_loss"), _t(target, "poisson_nll_loss")
    loss = ops.exp(x) - y * x if log_input else x - y * ops.log(x + eps)
    if full:
        safe = ops.where_p(ops.greater_p(y, 1.0), y, 2.0)
        st = safe * ops.log(safe) - safe + 0.5 * ops.log(2 * math.pi * safe)
        loss = loss + ops.where_p(ops.greater_p(y, 1.0), st, y * 0)
    return _reduce(loss, reduction)


def pixel_shuffle(input: Any, upscale_factor: _int) -> Tensor:  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r), as ``torch.pixel_shuffle``.

    >>> import duograd as dg
    >>> dg.pixel_shuffle(dg.zeros(1, 4, 2, 3), 2).shape
    (1, 1, 4, 6)
    """
    x = _t(input, "pixel_shuffle")
    r = int(upscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{x.ndim} dimension(s)")
    *b, c, h, w = x.shape
    if r <= 0 or c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(b)
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    y = y.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*b, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Any, downscale_factor: _int) -> Tensor:  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W), as ``torch.pixel_unshuffle``.

    >>> import duograd as dg
    >>> dg.pixel_unshuffle(dg.zeros(1, 1, 4, 6), 2).shape
    (1, 4, 2, 3)
    """
    x = _t(input, "pixel_unshuffle")
    r = int(downscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{x.ndim} dimension(s)")
    *b, c, hh, ww = x.shape
    if r <= 0 or hh % r or ww % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but "
                           f"got {hh}x{ww} and {r}")
    n = len(b)
    y = x.reshape(*b, c, hh // r, r, ww // r, r)
    y = y.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*b, c * r * r, hh // r, ww // r)


def channel_shuffle(input: Any, groups: _int) -> Tensor:  # noqa: A002
    """(N, g k, *) -> the channels regrouped as (k, g) , as ``torch.channel_shuffle``.

    >>> import duograd as dg
    >>> dg.channel_shuffle(dg.arange(4.0).reshape(1, 4, 1), 2).reshape(-1).tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    x = _t(input, "channel_shuffle")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if x.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{x.ndim} dimension(s)")
    n, c = x.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = x.shape[2:]
    return x.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def constant_pad_nd(input: Any, pad: Sequence[int], value: _float = 0) -> Tensor:  # noqa: A002
    """Pad the last dims by (left, right) pairs from the last dim back (negative: crop), as
    ``torch.constant_pad_nd``.

    >>> import duograd as dg
    >>> dg.constant_pad_nd(dg.ones(2), [1, 0]).tolist()
    [0.0, 1.0, 1.0]
    """
    x = _t(input, "constant_pad_nd")
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    y = x
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        lo, hi = int(pad[2 * k]), int(pad[2 * k + 1])
        if lo < 0:
            y = y.narrow(d, -lo, y.shape[d] + lo)
            lo = 0
        if hi < 0:
            y = y.narrow(d, 0, y.shape[d] + hi)
            hi = 0
        parts = []
        if lo:
            s = list(y.shape)
            s[d] = lo
            parts.append(_wrap(np.full(s, value, y.dtype)))
        parts.append(y)
        if hi:
            s = list(y.shape)
            s[d] = hi
            parts.append(_wrap(np.full(s, value, y.dtype)))
        y = indexing.cat(parts, d) if len(parts) > 1 else y
    return y


def torch_range(start: Any = 0, end: Any = None, step: Any = 1, *, out: Any = None, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: _bool = False) -> Tensor:
    """``torch.range`` (deprecated in torch): start to end *inclusive*, default float dtype.

    >>> import duograd as dg
    >>> dg.range(1, 3).tolist()
    [1.0, 2.0, 3.0]
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = int(math.floor((float(end) - float(start)) / float(step))) + 1
    dt = np.dtype(_tensor.get_default_dtype()) if dtype is None else np.dtype(dtype)
    t = _wrap((float(start) + np.arange(builtins.max(n, 0)) * float(step)).astype(dt))
    if requires_grad:
        t.requires_grad_(True)
    return _out(t, out, "range")


def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, as ``torch.cond`` eagerly.

    >>> import duograd as dg
    >>> dg.cond(dg.tensor(True), lambda x: x + 1, lambda x: x - 1, (dg.tensor(1),)).tolist()
    2
    """
    p = bool(pred.item() if isinstance(pred, Tensor) else pred)
    return (true_fn if p else false_fn)(*operands)


def while_loop(cond_fn: Any, body_fn: Any, carried_inputs: Any) -> Any:
    """Apply ``body_fn`` while ``cond_fn`` holds, as ``torch.while_loop`` eagerly.

    >>> import duograd as dg
    >>> dg.while_loop(lambda i: i < 3, lambda i: (i + 1,), (dg.tensor(0),))[0].tolist()
    3
    """
    vals = tuple(carried_inputs)
    while bool(cond_fn(*vals)):
        out = body_fn(*vals)
        vals = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return vals


_AUTOCAST = {"enabled": {}, "cache": True, "nesting": 0}


def _cfg(name: str, fn: Any, doc: str) -> Any:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + f"\n\n    >>> import duograd as dg\n    >>> dg.{name} is not None\n    True\n"
    return fn


AUTOCAST_FUNCS = {
    "is_autocast_enabled": _cfg("is_autocast_enabled", lambda device_type=None: bool(
        _AUTOCAST["enabled"].get(device_type or "cuda", False)), "Whether autocast is on (False unless set)."),
    "set_autocast_enabled": _cfg("set_autocast_enabled", lambda *a: _AUTOCAST["enabled"].__setitem__(
        a[0] if len(a) == 2 else "cuda", bool(a[-1])), "Record autocast's enabled flag."),
    "is_autocast_cpu_enabled": _cfg("is_autocast_cpu_enabled", lambda: bool(_AUTOCAST["enabled"].get("cpu", False)),
                                    "Whether CPU autocast is on."),
    "set_autocast_cpu_enabled": _cfg("set_autocast_cpu_enabled", lambda enabled: _AUTOCAST["enabled"].__setitem__(
        "cpu", bool(enabled)), "Record CPU autocast's flag."),
    "is_autocast_ipu_enabled": _cfg("is_autocast_ipu_enabled", lambda: False, "False: no IPU."),
    "is_autocast_xla_enabled": _cfg("is_autocast_xla_enabled", lambda: False, "False: no XLA."),
    "set_autocast_ipu_enabled": _cfg("set_autocast_ipu_enabled", lambda enabled: None, "Accepted, no effect."),
    "set_autocast_xla_enabled": _cfg("set_autocast_xla_enabled", lambda enabled: None, "Accepted, no effect."),
    "is_autocast_cache_enabled": _cfg("is_autocast_cache_enabled", lambda: _AUTOCAST["cache"],
                                      "Whether autocast's weight cache is on (True by default)."),
    "set_autocast_cache_enabled": _cfg("set_autocast_cache_enabled", lambda enabled: _AUTOCAST.__setitem__(
        "cache", bool(enabled)), "Record the cache flag."),
    "clear_autocast_cache": _cfg("clear_autocast_cache", lambda: None, "Nothing is cached: no effect."),
    "autocast_increment_nesting": _cfg("autocast_increment_nesting", lambda: _nest(1), "Count one level in."),
    "autocast_decrement_nesting": _cfg("autocast_decrement_nesting", lambda: _nest(-1), "Count one level out."),
}


def _nest(k: int) -> int:
    _AUTOCAST["nesting"] += k
    return _AUTOCAST["nesting"]


def set_anomaly_enabled(enabled: _bool, check_nan: _bool = True) -> None:
    """Record torch's global anomaly flag (read by ``is_anomaly_enabled``; ``dg.detect_anomaly``
    is duograd's way to turn the checks on).

    >>> import duograd as dg
    >>> dg.set_anomaly_enabled(False)
    """
    _STATE["anomaly"] = bool(enabled)
    _STATE["check_nan"] = bool(check_nan)


def set_default_tensor_type(t: Any) -> None:
    """Set the default float dtype from torch's tensor type (``torch.DoubleTensor``,
    ``"torch.FloatTensor"``), as ``torch.set_default_tensor_type``.

    >>> import duograd as dg
    >>> dg.set_default_tensor_type(dg.DoubleTensor); dg.get_default_dtype()
    dtype('float64')
    """
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    name = name.replace("torch.", "")
    if name == "FloatTensor":
        _tensor.set_default_dtype(_tensor.float32)
    elif name == "DoubleTensor":
        _tensor.set_default_dtype(_tensor.float64)
    else:
        raise TypeError(f"only floating-point types are supported as the default type, got {name}")


def set_printoptions(precision: Any = None, threshold: Any = None, edgeitems: Any = None, linewidth: Any = None,
                     profile: Any = None, sci_mode: Any = None) -> None:
    """torch's print options, given to NumPy's (``profile``: "default", "short", "full").

    >>> import duograd as dg
    >>> dg.set_printoptions(profile="default")
    """
    opts: dict[str, Any] = {}
    if profile == "default":
        opts = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
    elif profile == "short":
        opts = {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80}
    elif profile == "full":
        opts = {"precision": 4, "threshold": sys_maxsize(), "edgeitems": 3, "linewidth": 80}
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            opts[k] = v
    if sci_mode is not None:
        opts["suppress"] = not sci_mode
    if profile == "default" and precision is None and threshold is None:
        return  # duograd's own printing is the default
    np.set_printoptions(**opts)


def sys_maxsize() -> int:
    import sys  # noqa: PLC0415
    return sys.maxsize


# ====================================================================== the legacy typed constructors


class _LegacyMeta(type):
    def __instancecheck__(cls, obj: Any) -> _bool:
        return isinstance(obj, Tensor) and obj.dtype == cls._dtype

    def __call__(cls, *args: Any, **kw: Any) -> Tensor:
        kw.pop("device", None)
        if not args:
            return _wrap(np.zeros((0,), cls._dtype))
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(cls._dtype)
        if builtins.all(isinstance(a, (int, np.integer)) and not isinstance(a, _bool) for a in args) or \
                (len(args) == 1 and isinstance(args[0], _tensor.Size)):
            shape = tuple(args[0]) if isinstance(args[0], _tensor.Size) else tuple(int(a) for a in args)
            return _wrap(np.zeros(shape, cls._dtype))
        if len(args) == 1:
            return _tensor.tensor(args[0], dtype=cls._dtype)
        raise TypeError(f"{cls.__name__}(): expected sizes or one sequence of data")


def _legacy(name: str, dtype: Any) -> type:
    return _LegacyMeta(name, (), {"_dtype": np.dtype(dtype), "__doc__": (
        f"``torch.{name}``: the legacy constructor of {np.dtype(dtype).name} tensors (``{name}([1, 2])`` "
        f"from data, ``{name}(2, 3)`` from sizes); ``isinstance(t, {name})`` checks the dtype.")})


LEGACY = {n: _legacy(n, d) for n, d in (("FloatTensor", np.float32), ("DoubleTensor", np.float64),
                                          ("LongTensor", np.int64), ("IntTensor", np.int32),
                                          ("ShortTensor", np.int16), ("CharTensor", np.int8),
                                          ("ByteTensor", np.uint8), ("BoolTensor", np.bool_),
                                          ("HalfTensor", np.float16))}

MORE_TORCH: dict[str, Any] = {
    "tensordot": tensordot, "unravel_index": unravel_index, "frobenius_norm": frobenius_norm,
    "nuclear_norm": nuclear_norm, "threshold": threshold, "threshold_": threshold_, "rrelu": rrelu,
    "rrelu_": rrelu_, "dropout": dropout, "dropout_": dropout_, "alpha_dropout": alpha_dropout,
    "alpha_dropout_": alpha_dropout_, "feature_dropout": feature_dropout, "feature_dropout_": feature_dropout_,
    "feature_alpha_dropout": feature_alpha_dropout, "feature_alpha_dropout_": feature_alpha_dropout_,
    "layer_norm": layer_norm, "group_norm": group_norm, "batch_norm": batch_norm, "instance_norm": instance_norm,
    "embedding": embedding, "kl_div": kl_div, "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
    "pairwise_distance": pairwise_distance, "margin_ranking_loss": margin_ranking_loss,
    "hinge_embedding_loss": hinge_embedding_loss, "cosine_embedding_loss": cosine_embedding_loss,
    "triplet_margin_loss": triplet_margin_loss, "poisson_nll_loss": poisson_nll_loss,
    "pixel_shuffle": pixel_shuffle, "pixel_unshuffle": pixel_unshuffle, "channel_shuffle": channel_shuffle,
    "native_channel_shuffle": channel_shuffle, "constant_pad_nd": constant_pad_nd, "range": torch_range,
    "cond": cond, "while_loop": while_loop, "set_anomaly_enabled": set_anomaly_enabled,
    "set_default_tensor_type": set_default_tensor_type, "set_printoptions": set_printoptions,
    "celu_": _delegate("celu_"), "selu_": _delegate("selu_"), "resize_as_": _delegate("resize_as_"),
    **AUTOCAST_FUNCS,
}


def install_more(namespace: dict) -> None:
    """The torch.* names of this last part, and the legacy constructors."""
    from .nn import functional as F  # noqa: N812,PLC0415
    for n, f in MORE_TORCH.items():
        namespace[n] = f
    for n, c in LEGACY.items():
        namespace[n] = c
    TORCH.update(MORE_TORCH)
    Tensor.celu_ = lambda self, alpha=1.0: _twin_of(self, F.celu, alpha=alpha, name="celu_")
    Tensor.selu_ = lambda self: _twin_of(self, F.selu, name="selu_")


def _twin_of(t: Tensor, fn: Any, *, name: str, **kw: Any) -> Tensor:
    from .inplace import write  # noqa: PLC0415
    return write(t, lambda s: fn(s, **kw), name=name, keep=True)
