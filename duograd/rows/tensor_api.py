"""The rows of ``tensor_api``'s functions: the selectors ``signbit_p``, ``heaviside_p``,
``bincount_p``/``bincount_w_p``, ``histc_p`` and ``search_p`` (no history, as torch gives
none), ``fmax_p``/``fmin_p`` (NaN-ignoring maximum and minimum), and the matrix inverse and
log-determinant (``_inverse_p``, ``_logdet_p``, which ``linalg`` reuses). Their public
functions (torch's signatures) are in ``duograd/tensor_api.py``, the layer above. Also the
selectors of ``more_ops``' isin, frexp, unravel_index and histogram.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import ELEMENTWISE, Primitive
from .core import _mT, _selector, greater_equal_p, less_equal_p, where_p
from .elementwise import isnan_p, logical_or_p

_bool, _float = builtins.bool, builtins.float


signbit_p = _selector("signbit", np.signbit)


heaviside_p = _selector("heaviside", lambda x, v: np.heaviside(x, v).astype(np.result_type(x, v)))


def _first_wins(cmp: Primitive) -> Any:
    """Where fmax/fmin's result is its first input: ``cmp(x, y)`` (ties included) or y NaN."""
    def wins(x: Tensor, y: Tensor) -> Tensor:
        return logical_or_p(cmp(x, y), isnan_p(y))
    return wins


# NOTE: at a tie the whole gradient goes to the first input, as torch's fmax/fmin.
_fmax_x, _fmin_x = _first_wins(greater_equal_p), _first_wins(less_equal_p)


fmax_p = Primitive("fmax", np.fmax, vjp=(lambda g, out, x, y: where_p(_fmax_x(x, y), g, 0.0),
                                         lambda g, out, x, y: where_p(_fmax_x(x, y), 0.0, g)),
                   jvp=ELEMENTWISE)


fmin_p = Primitive("fmin", np.fmin, vjp=(lambda g, out, x, y: where_p(_fmin_x(x, y), g, 0.0),
                                         lambda g, out, x, y: where_p(_fmin_x(x, y), 0.0, g)),
                   jvp=ELEMENTWISE)


bincount_p = Primitive("bincount", lambda x, minlength: np.bincount(x, minlength=minlength),
                       differentiable=False, value_shape=True)


# the weights' dtype for both operands (a primitive promotes them); the counts read back as ints
bincount_w_p = Primitive("bincount_weighted", lambda x, w, minlength: np.bincount(
    x.astype(np.int64), weights=w, minlength=minlength).astype(w.dtype), differentiable=False,
    value_shape=True)


def _histc(x: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    if lo == hi and x.size:
        lo, hi = _float(x.min()), _float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep = x[(x >= lo) & (x <= hi)]
    idx = np.floor((keep - lo) * bins / (hi - lo)).astype(np.int64)
    idx = np.minimum(idx, bins - 1)  # the upper edge belongs to the last bin
    return np.bincount(idx, minlength=bins).astype(x.dtype)


histc_p = _selector("histc", _histc)


def _search(seq: np.ndarray, values: np.ndarray, right: _bool, dtype: Any) -> np.ndarray:
    side = "right" if right else "left"
    if seq.ndim <= 1:
        return np.searchsorted(seq, values, side=side).astype(dtype)
    flat_s = seq.reshape(-1, seq.shape[-1])
    flat_v = values.reshape(-1, values.shape[-1])
    res = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(flat_s, flat_v)]) \
        if flat_s.shape[0] else np.zeros(flat_v.shape, np.int64)
    return res.reshape(values.shape).astype(dtype)


search_p = _selector("searchsorted", _search)


def _logdet_fwd(a: np.ndarray) -> np.ndarray:
    sign, logabs = np.linalg.slogdet(a)
    # torch's values: log|det| for det > 0, -inf for det = 0, nan for det < 0
    return np.where(sign > 0, logabs, np.where(sign == 0, -np.inf, np.nan)).astype(a.dtype, copy=False)


def _inverse_fwd(a: np.ndarray) -> np.ndarray:
    return np.linalg.inv(a)


# d inv(A) = -inv(A) dA inv(A): the cotangent is -inv(A)^T g inv(A)^T
_inverse_p = Primitive("inverse", _inverse_fwd,
                       vjp=(lambda g, out, a: -(_mT(out) @ g @ _mT(out)),),
                       jvp=(lambda t, out, a: -(out @ t @ out),))


# d log det A = tr(inv(A) dA): the cotangent is g inv(A)^T
_logdet_p = Primitive("logdet", _logdet_fwd,
                      vjp=(lambda g, out, a: g.unsqueeze(-1).unsqueeze(-1) * _mT(_inverse_p(a)),),
                      jvp=(lambda t, out, a: (_mT(_inverse_p(a)) * t).sum((-2, -1)),))


# ---------------------------------------------------------------- computed from the values
#
# Selectors (no history, as torch gives none) that more_ops' functions once computed in
# Python from ``t._data``: as rows, a dg.compile replay computes them again from its values.
# Their operands keep their own dtypes (``promote=None``).


def _no_promote(name: str, forward: Any, value_shape: _bool = False) -> Primitive:
    return Primitive(name, forward, differentiable=False, value_shape=value_shape, promote=None)


isin_p = _no_promote("isin", lambda e, t, invert: np.isin(e, t, invert=invert))
# frexp's two results, one row each: x = mantissa * 2 ** exponent
frexp_mantissa_p = _no_promote("frexp_mantissa", lambda x: np.frexp(x)[0])
frexp_exponent_p = _no_promote("frexp_exponent", lambda x: np.frexp(x)[1].astype(np.int32))


def _unravel(i: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    n = int(np.prod(shape))
    return np.unravel_index(i % builtins.max(n, 1), shape)[axis].astype(np.int64)


# one coordinate (``axis``) of flat indices in ``shape``; a negative index counts from the end
unravel_p = _no_promote("unravel_index", _unravel)


def _histogram_edges(x: np.ndarray, bins: int, range: Any) -> np.ndarray:  # noqa: A002
    if range is None:
        lo, hi = (_float(x.min()), _float(x.max())) if x.size else (0.0, 0.0)
    else:
        lo, hi = range
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, int(bins) + 1)


# ``bins`` equal bins over ``range`` (None: the values' min and max), float64
histogram_edges_p = _no_promote("histogram_edges", _histogram_edges)
# the counts (weighted: the sums of ``w``) of the flat values in the bins ``edges`` bound
histogram_p = _no_promote("histogram", lambda x, edges, density, dtype: np.histogram(
    x.reshape(-1), bins=edges, density=density)[0].astype(dtype))
histogram_w_p = _no_promote("histogram_weighted", lambda x, edges, w, density, dtype: np.histogram(
    x.reshape(-1), bins=edges, weights=w.reshape(-1), density=density)[0].astype(dtype))
