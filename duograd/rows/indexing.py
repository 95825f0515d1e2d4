"""The indexing rows: the one gather/scatter pair along an axis, and what scatter_reduce adds.

- ``gather_p(x, index, axis)``: ``out[i][j] = x[i][index[i][j]]`` along ``axis`` (torch.gather);
- ``scatter_add_along_p(src, index, axis, shape)``: a zero tensor of ``shape`` with ``src``
  added at ``index`` along ``axis`` (repeated indices accumulate); ``scatter_along_p`` writes
  instead (a repeated index keeps the last value: max_unpool);
- ``scatter_extremum_p`` and ``scatter_prod_p``: scatter_reduce's ``amax``/``amin`` and
  ``prod``, whose rules share the gradient among ties and treat zeros as torch does;
- the selectors ``flatnonzero_p``, ``nonzero_p``, ``hit_p`` (where a scatter writes) and
  ``repeat_index_p`` (repeat_interleave's index).

``index`` is an input of each, a Tensor that never requires grad (its rule is None), so an
index computed inside a step is recomputed when a recorded step is replayed. The public
functions (torch's signatures) are in ``duograd/indexing.py``, the layer above.
"""

from __future__ import annotations

import numpy as np

from ..autograd import Primitive, ones_like_p
from .._tensor import Tensor
from .core import equal_p, transpose_p, where_p

# ====================================================================== the gather/scatter pair


def _coords(index: np.ndarray, axis: int) -> tuple:
    """The full coordinates ``index`` names along ``axis``: an open grid elsewhere."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[axis] = index
    return tuple(grid)


def _gather_fwd(x: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    return x[_coords(index, axis)]


def _scatter_add_along_fwd(src: np.ndarray, index: np.ndarray, axis: int,
                           shape: tuple[int, ...]) -> np.ndarray:
    z = np.zeros(shape, dtype=src.dtype)
    if index.shape[axis] == 1:  # one index per line: nothing repeats, so a plain write adds
        z[_coords(index, axis)] = src
    else:
        np.add.at(z, _coords(index, axis), src)
    return z


def _scatter_along_fwd(src: np.ndarray, index: np.ndarray, axis: int,
                       shape: tuple[int, ...]) -> np.ndarray:
    z = np.zeros(shape, dtype=src.dtype)
    z[_coords(index, axis)] = src  # a repeated index keeps the last value written
    return z


# gather is linear in x; its adjoint adds g back where each element came from.
gather_p = Primitive(
    "gather", _gather_fwd,
    vjp=(lambda g, out, x, index, axis: scatter_add_along_p(g, index, axis=axis, shape=x.shape), None),
    jvp=(lambda t, out, x, index, axis: gather_p(t, index, axis=axis), None))
# scatter_add_along is gather's adjoint, and gather is its adjoint.
scatter_add_along_p = Primitive(
    "scatter_add_along", _scatter_add_along_fwd,
    vjp=(lambda g, out, src, index, axis, shape: gather_p(g, index, axis=axis), None),
    jvp=(lambda t, out, src, index, axis, shape:
         scatter_add_along_p(t, index, axis=axis, shape=shape), None))
# scatter_along writes instead of adding (torch's max_unpool: an index given twice keeps the
# last value); its VJP is a gather too, so both writers of a position get its gradient.
scatter_along_p = Primitive(
    "scatter_along", _scatter_along_fwd,
    vjp=(lambda g, out, src, index, axis, shape: gather_p(g, index, axis=axis), None),
    jvp=(lambda t, out, src, index, axis, shape:
         scatter_along_p(t, index, axis=axis, shape=shape), None))


def _flatnonzero(x: np.ndarray) -> np.ndarray:
    return np.flatnonzero(x).astype(np.int64)


def _nonzero(x: np.ndarray) -> np.ndarray:
    return np.argwhere(x).astype(np.int64)


def _nonzero_along(x: np.ndarray, axis: int) -> np.ndarray:
    return np.nonzero(x)[axis].astype(np.int64)


# Which elements are nonzero: selectors (int64, never differentiated), their result's
# length that of the values (a replay checks it). ``nonzero_along`` is one axis of the
# indices (a bool mask in a subscript, as the integer arrays of its nonzeros).
flatnonzero_p = Primitive("flatnonzero", _flatnonzero, differentiable=False, value_shape=True)
nonzero_p = Primitive("nonzero", _nonzero, differentiable=False, value_shape=True)
nonzero_along_p = Primitive("nonzero_along", _nonzero_along, differentiable=False, value_shape=True)
# Where an index hits: 1 at every position a scatter along ``axis`` writes to.
hit_p = Primitive("scatter_hit", lambda index, axis, shape, dtype: _scatter_add_along_fwd(
    np.ones(index.shape, dtype), index, axis, shape) > 0, differentiable=False)

# ====================================================================== moving an axis to the end and back


def _move_to_end(x: Tensor, axis: int) -> Tensor:
    perm = tuple(i for i in range(x.ndim) if i != axis) + (axis,)
    return transpose_p(x, axes=perm) if perm != tuple(range(x.ndim)) else x


def _move_from_end(x: Tensor, axis: int) -> Tensor:
    nd = x.ndim
    perm = list(range(nd - 1))
    perm.insert(axis, nd - 1)
    return transpose_p(x, axes=tuple(perm)) if perm != list(range(nd)) else x

# ====================================================================== scatter_reduce's amax/amin and prod


def _extremum_fwd(x: np.ndarray, index: np.ndarray, src: np.ndarray, axis: int, reduce: str,
                  include_self: bool) -> np.ndarray:
    fn = np.maximum if reduce == "amax" else np.minimum
    coords = _coords(index, axis)
    out = x.copy()
    if not include_self:
        hit = np.zeros(x.shape, bool)
        hit[coords] = True
        out[hit] = -np.inf if reduce == "amax" else np.inf
    fn.at(out, coords, src)
    return out


def _extremum_shares(out: Tensor, x: Tensor, index: Tensor, src: Tensor, axis: int,
                     include_self: bool) -> tuple[Tensor, Tensor]:
    """How much of each output's gradient goes to x and to each src element: the elements
    equal to the result share it evenly."""
    # NOTE: ties share the gradient evenly among every element equal to the result, as torch;
    # with include_self=False x's own value still counts among the ties (so a src element
    # tied with it gets half) but x gets nothing where src landed, as torch.
    from_src = equal_p(src, gather_p(out, index, axis=axis))
    count = scatter_add_along_p(where_p(from_src, 1.0, 0.0), index, axis=axis, shape=x.shape)
    hit = hit_p(index, axis=axis, shape=x.shape, dtype=x.dtype)
    ties = where_p(hit, equal_p(x, out), True)
    self_wins = ties if include_self else where_p(hit, False, True)
    count = count + where_p(ties, 1.0, 0.0)
    share_x = where_p(self_wins, 1.0, 0.0) / count
    share_src = where_p(from_src, 1.0, 0.0) / gather_p(count, index, axis=axis)
    return share_x, share_src


scatter_extremum_p = Primitive(
    "scatter_extremum", _extremum_fwd,
    vjp=(lambda g, out, x, index, src, axis, reduce, include_self:
         g * _extremum_shares(out, x, index, src, axis, include_self)[0],
         None,
         lambda g, out, x, index, src, axis, reduce, include_self:
         gather_p(g, index, axis=axis) * _extremum_shares(out, x, index, src, axis, include_self)[1]),
    jvp=(lambda t, out, x, index, src, axis, reduce, include_self:
         t * _extremum_shares(out, x, index, src, axis, include_self)[0],
         None,
         lambda t, out, x, index, src, axis, reduce, include_self: scatter_add_along_p(
             t * _extremum_shares(out, x, index, src, axis, include_self)[1], index, axis=axis,
             shape=x.shape)))


def _prod_fwd(x: np.ndarray, index: np.ndarray, src: np.ndarray, axis: int,
              include_self: bool) -> np.ndarray:
    coords = _coords(index, axis)
    out = x.copy()
    if not include_self:
        out[coords] = 1
    np.multiply.at(out, coords, src)
    return out


def _prod_parts(out: Tensor, x: Tensor, index: Tensor, src: Tensor, axis: int,
                include_self: bool) -> tuple[Tensor, Tensor]:
    """d out / d x, and for each src element the product of everything else at its position."""
    # NOTE: zeros as torch: a src element that is the only zero at its position gets the
    # product of the others (taken with that zero read as 1); with two zeros it gets 0.
    kw = dict(axis=axis, include_self=include_self)
    dx = scatter_prod_p(ones_like_p(x), index, src, **kw)
    if not include_self:
        dx = where_p(hit_p(index, axis=axis, shape=x.shape, dtype=x.dtype), 0.0, dx)
    z = equal_p(src, 0.0)
    zeros_here = gather_p(scatter_add_along_p(where_p(z, 1.0, 0.0), index, axis=axis, shape=x.shape),
                          index, axis=axis)
    single = where_p(z, equal_p(zeros_here, 1.0), False)
    without_zero = gather_p(scatter_prod_p(x, index, where_p(z, 1.0, src), **kw), index, axis=axis)
    others = where_p(z, where_p(single, without_zero, 0.0),
                     gather_p(out, index, axis=axis) / where_p(z, 1.0, src))
    return dx, others


scatter_prod_p = Primitive(
    "scatter_prod", _prod_fwd,
    vjp=(lambda g, out, x, index, src, axis, include_self:
         g * _prod_parts(out, x, index, src, axis, include_self)[0],
         None,
         lambda g, out, x, index, src, axis, include_self:
         gather_p(g, index, axis=axis) * _prod_parts(out, x, index, src, axis, include_self)[1]),
    jvp=(lambda t, out, x, index, src, axis, include_self:
         t * _prod_parts(out, x, index, src, axis, include_self)[0],
         None,
         lambda t, out, x, index, src, axis, include_self: scatter_add_along_p(
             t * _prod_parts(out, x, index, src, axis, include_self)[1], index, axis=axis,
             shape=x.shape)))


def _repeat_index(reps: np.ndarray, n: int) -> np.ndarray:
    return np.repeat(np.arange(n), np.broadcast_to(reps.astype(np.int64), (n,)))


# Each of 0..n-1 repeated its count in ``reps`` (one count, or n): repeat_interleave's index,
# as long as the counts' sum (a replay checks it).
repeat_index_p = Primitive("repeat_index", _repeat_index, differentiable=False, value_shape=True)
