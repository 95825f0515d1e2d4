"""The three declared families, on their entries, with the spec samples each declaration makes.

A declaration (``opinfo.BinaryOp``, ``AxisOp``, ``Comparison``) sits on the ``OpInfo`` entry of
its public name (``OpInfo.family``) and says, once, what the family's tests need:

- ``BinaryOp``: each binary elementwise op with its partial derivatives in NumPy. It makes the
  op's spec samples (one per pattern of ``BINARY_PATTERNS``), the broadcasting tests
  (test_tensor_broadcast.py, test_tensor_hypothesis.py) and the shape and operand-type error
  tests (test_tensor_errors.py).
- ``AxisOp``: each op with an ``axis`` argument (reductions, softmax, cumsum) with its gradient
  in closed form. It makes the op's spec samples (each axis of ``axes``, ``keepdims`` both
  ways), the random-axes property test (test_tensor_hypothesis.py) and the axis error tests
  (test_tensor_errors.py).
- ``Comparison``: each comparison operator and its NumPy ufunc: its selector samples
  (SELECTOR_SPECS) and the comparison tests of test_tensor_selectors.py.

The tests read them through ``opinfo.families`` (``specs.BINARY_OPS``, ``AXIS_OPS``,
``COMPARISONS``). The other spec samples of these entries (argmax and argmin, var with its
default correction, the default axes) are here too.

>>> BINARY_OPS = families(BinaryOp)
>>> BINARY_OPS["mul"].partials(np.array([2.0]), np.array([3.0]), None)
(array([3.]), array([2.]))
>>> op = families(AxisOp)["sum"]
>>> op.grad(np.zeros((2, 3)), 0, False, np.array([1.0, 2.0, 3.0]))
array([[1., 2., 3.],
       [1., 2., 3.]])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import duograd as dg
from opinfo import (DISTINCT, INTEGER, NONZERO, POSITIVE, REAL, AxisOp, BinaryOp, Comparison,
                    condition, declare, families, selector_row as _selector, spec_entry_name,
                    spec_row as _row)

# ---------------------------------------------------------------- binary elementwise ops


def _tc(torch, c):
    return torch.from_numpy(np.asarray(c))


_BINARY = [
    BinaryOp("add", lambda x, y, c: x + y, lambda x, y, c: x + y, lambda torch, x, y, c: x + y,
             lambda x, y, c: (np.ones_like(x), np.ones_like(y))),
    BinaryOp("sub", lambda x, y, c: x - y, lambda x, y, c: x - y, lambda torch, x, y, c: x - y,
             lambda x, y, c: (np.ones_like(x), -np.ones_like(y))),
    BinaryOp("mul", lambda x, y, c: x * y, lambda x, y, c: x * y, lambda torch, x, y, c: x * y,
             lambda x, y, c: (y, x)),
    BinaryOp("div", lambda x, y, c: x / y, lambda x, y, c: x / y, lambda torch, x, y, c: x / y,
             lambda x, y, c: (1 / y, -x / y ** 2), (REAL, NONZERO)),
    BinaryOp("pow", lambda x, y, c: x ** y, lambda x, y, c: x ** y, lambda torch, x, y, c: x ** y,
             lambda x, y, c: (y * x ** (y - 1), x ** y * np.log(x)), (POSITIVE, REAL)),
    BinaryOp("maximum", lambda x, y, c: dg.maximum(x, y), lambda x, y, c: np.maximum(x, y),
             lambda torch, x, y, c: torch.maximum(x, y),
             lambda x, y, c: ((x > y) * 1.0, (y > x) * 1.0), (DISTINCT, DISTINCT)),
    BinaryOp("minimum", lambda x, y, c: dg.minimum(x, y), lambda x, y, c: np.minimum(x, y),
             lambda torch, x, y, c: torch.minimum(x, y),
             lambda x, y, c: ((x < y) * 1.0, (y < x) * 1.0), (DISTINCT, DISTINCT)),
    BinaryOp("where", lambda x, y, c: dg.where(c, x, y), lambda x, y, c: np.where(c, x, y),
             lambda torch, x, y, c: torch.where(_tc(torch, c), x, y),
             lambda x, y, c: (c * 1.0, ~c * 1.0)),
]

# The broadcasting patterns every binary op gets a spec sample for (test_tensor_broadcast.py
# goes through many more).
SAME, BCAST = ((3, 4), (3, 4)), ((3, 4), (4,))
BINARY_PATTERNS = {"": SAME, ".broadcast": BCAST, ".both_broadcast": ((3, 1), (4,))}

for _op in _BINARY:
    declare(spec_entry_name(_op.name), _op)
    for _suffix, _shapes in BINARY_PATTERNS.items():
        _c = condition(np.broadcast_shapes(*_shapes))
        _row(_op.name + _suffix, lambda x, y, o=_op, c=_c: o.fn(x, y, c),
             lambda x, y, o=_op, c=_c: o.ref(x, y, c),
             lambda torch, x, y, o=_op, c=_c: o.torch_fn(torch, x, y, c), _shapes, _op.domains)


# ---------------------------------------------------------------- ops with an axis

def _dims(axis: Any, ndim: int) -> tuple[int, ...]:
    """torch's spelling of a NumPy axis argument (None means every axis)."""
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def _np_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    return tuple(a % ndim for a in _dims(axis, ndim))


def _np_logsumexp(x, axis=None, keepdims=False):
    # Written without a shift on purpose: the spec's inputs are small, and the shifted
    # form is what the engine does (this is the plain definition).
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def _np_softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _back(g: np.ndarray, x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    """A reduction's cotangent ``g`` copied back along the reduced axes to ``x``'s shape."""
    axes = _np_axes(axis, x.ndim)
    kept = g if keepdims else np.reshape(g, [1 if i in axes else n for i, n in enumerate(x.shape)])
    return np.broadcast_to(kept, x.shape)


def _count(x: np.ndarray, axis: Any) -> int:
    return int(np.prod([x.shape[a] for a in _np_axes(axis, x.ndim)]))


def _extremum_grad(reduce: Callable) -> Callable:
    def grad(x, axis, keepdims, g):
        hit = x == reduce(x, axis=_np_axes(axis, x.ndim), keepdims=True)
        return _back(g, x, axis, keepdims) * hit / hit.sum(axis=_np_axes(axis, x.ndim), keepdims=True)
    return grad


def _softmax_grad(x, axis, keepdims, g):
    s = _np_softmax(x, _np_axes(axis, x.ndim))
    return s * (g - np.sum(g * s, axis=_np_axes(axis, x.ndim), keepdims=True))


def _log_softmax_grad(x, axis, keepdims, g):
    return g - _np_softmax(x, _np_axes(axis, x.ndim)) * np.sum(g, axis=_np_axes(axis, x.ndim), keepdims=True)


def _cumsum_grad(x, axis, keepdims, g):
    # d/dx_i sum_j g_j cumsum(x)_j = sum of g_j over j >= i: the total minus the sum before i.
    return np.sum(g, axis=axis, keepdims=True) - np.cumsum(g, axis=axis) + g


_AXIS = [
    AxisOp("sum", lambda x, a, k: x.sum(a, k), lambda x, a, k: np.sum(x, axis=a, keepdims=k),
           lambda x, a, k: x.sum(dim=_dims(a, x.ndim), keepdim=k),
           lambda x, a, k, g: _back(g, x, a, k)),
    AxisOp("mean", lambda x, a, k: x.mean(a, k), lambda x, a, k: np.mean(x, axis=a, keepdims=k),
           lambda x, a, k: x.mean(dim=_dims(a, x.ndim), keepdim=k),
           lambda x, a, k, g: _back(g, x, a, k) / _count(x, a)),
    AxisOp("amax", lambda x, a, k: x.amax(a, k), lambda x, a, k: np.max(x, axis=a, keepdims=k),
           lambda x, a, k: x.amax(dim=_dims(a, x.ndim), keepdim=k), _extremum_grad(np.max), DISTINCT),
    AxisOp("amin", lambda x, a, k: x.amin(a, k), lambda x, a, k: np.min(x, axis=a, keepdims=k),
           lambda x, a, k: x.amin(dim=_dims(a, x.ndim), keepdim=k), _extremum_grad(np.min), DISTINCT),
    AxisOp("logsumexp", lambda x, a, k: x.logsumexp(a, k), _np_logsumexp,
           lambda x, a, k: x.logsumexp(dim=_dims(a, x.ndim), keepdim=k),
           lambda x, a, k, g: _back(g, x, a, k) * np.exp(x - _np_logsumexp(x, _np_axes(a, x.ndim), True))),
    AxisOp("var", lambda x, a, k: x.var(axis=a, keepdims=k, correction=0),
           lambda x, a, k: np.var(x, axis=a, keepdims=k),
           lambda x, a, k: x.var(dim=_dims(a, x.ndim), keepdim=k, correction=0),
           lambda x, a, k, g: _back(g, x, a, k) * 2 * (x - np.mean(x, axis=_np_axes(a, x.ndim), keepdims=True))
           / _count(x, a)),
    AxisOp("softmax", lambda x, a, k: x.softmax(a), lambda x, a, k: _np_softmax(x, a),
           lambda x, a, k: x.softmax(dim=a), _softmax_grad, axes=(-1, 0, 1), keepdims=False,
           one_axis=True),
    AxisOp("log_softmax", lambda x, a, k: x.log_softmax(a), lambda x, a, k: np.log(_np_softmax(x, a)),
           lambda x, a, k: x.log_softmax(dim=a), _log_softmax_grad, axes=(-1, 0, 1), keepdims=False,
           one_axis=True),
    AxisOp("cumsum", lambda x, a, k: x.cumsum(a), lambda x, a, k: np.cumsum(x, axis=a),
           lambda x, a, k: x.cumsum(dim=a), _cumsum_grad, axes=(0, 1, -1, -3), keepdims=False,
           one_axis=True),
]


def axis_label(op: AxisOp, axis: Any, keepdims: bool) -> str:
    """The spec name of one axis/keepdims variant: ``sum(axis=1, keepdims=True)``."""
    return f"{op.name}(axis={axis}, keepdims={keepdims})" if op.keepdims else f"{op.name}(axis={axis})"


R3 = (2, 3, 4)
for _op in _AXIS:
    declare(spec_entry_name(_op.name), _op)
    for _axis in _op.axes:
        for _keepdims in ((False, True) if _op.keepdims else (False,)):
            _row(axis_label(_op, _axis, _keepdims),
                 lambda x, o=_op, a=_axis, k=_keepdims: o.fn(x, a, k),
                 lambda x, o=_op, a=_axis, k=_keepdims: o.ref(x, a, k),
                 lambda torch, x, o=_op, a=_axis, k=_keepdims: o.torch_fn(x, a, k),
                 (R3,), (_op.domain,))
for _axis, _keepdims in ((None, False), (-1, True), ((0, 2), False)):
    _row(f"var(axis={_axis}, keepdims={_keepdims}, ddof=1)",
         lambda x, a=_axis, k=_keepdims: x.var(a, keepdim=k),  # torch's default: correction=1
         lambda x, a=_axis, k=_keepdims: np.var(x, axis=a, keepdims=k, ddof=1),
         lambda torch, x, a=_axis, k=_keepdims: x.var(dim=_dims(a, x.ndim), keepdim=k, correction=1),
         (R3,))
_row("sum.of_vector", lambda x: x.sum(), np.sum, lambda torch, x: x.sum(), ((5,),))
_row("mean.of_0d", lambda x: x.mean(), np.mean, lambda torch, x: x.mean(), ((),))
_row("softmax.default_axis", lambda x: x.softmax(), lambda x: _np_softmax(x, -1),
     lambda torch, x: x.softmax(dim=-1), ((3, 4),))
_row("log_softmax.default_axis", lambda x: x.log_softmax(), lambda x: np.log(_np_softmax(x, -1)),
     lambda torch, x: x.log_softmax(dim=-1), ((3, 4),))

# ---------------------------------------------------------------- never differentiated
# Comparisons, argmax and argmin: their output is bool or int64, carries no history and has
# no derivative, so they are selectors (SELECTOR_SPECS), not in OP_SPECS (which every
# gradient check reads). test_tensor_selectors.py checks them against NumPy and torch and
# replays them.

_COMPARISONS = [
    # symbol, duograd and torch, NumPy
    Comparison("<", lambda x, y: x < y, np.less),
    Comparison("<=", lambda x, y: x <= y, np.less_equal),
    Comparison(">", lambda x, y: x > y, np.greater),
    Comparison(">=", lambda x, y: x >= y, np.greater_equal),
    Comparison("==", lambda x, y: x == y, np.equal),
    Comparison("!=", lambda x, y: x != y, np.not_equal),
]
_NUMBER = 1.0  # a value INTEGER inputs hit, so == and != see ties with it too
for _cmp in _COMPARISONS:
    declare(spec_entry_name(_cmp.name), _cmp)
    _sym, _fn, _np_fn = _cmp.name, _cmp.fn, _cmp.ref
    for _suffix, _shapes in (("", SAME), (".broadcast", BCAST), (".both_broadcast", ((3, 1), (4,)))):
        _selector(f"{_sym}{_suffix}", _fn, _np_fn, lambda torch, x, y, f=_fn: f(x, y),
                  _shapes, (INTEGER, INTEGER))
    _selector(f"{_sym}.number", lambda x, f=_fn: f(x, _NUMBER), lambda x, f=_np_fn: f(x, _NUMBER),
              lambda torch, x, f=_fn: f(x, _NUMBER), ((3, 4),), (INTEGER,))
    _selector(f"{_sym}.number_on_the_left", lambda x, f=_fn: f(_NUMBER, x),
              lambda x, f=_np_fn: f(_NUMBER, x),
              lambda torch, x, f=_fn: f(_NUMBER, x), ((3, 4),), (INTEGER,))
for _name in ("argmax", "argmin"):
    for _axis in (None, 0, 1, -1):
        _selector(
            f"{_name}(axis={_axis})", lambda x, n=_name, a=_axis: getattr(x, n)(a),
            lambda x, n=_name, a=_axis: getattr(np, n)(x, axis=a),
            lambda torch, x, n=_name, a=_axis: getattr(torch, n)(x.reshape(-1) if a is None else x,
                                                                **({} if a is None else {"dim": a})),
            (R3,), (DISTINCT,))

assert len(families(BinaryOp)) == len(_BINARY) and len(families(AxisOp)) == len(_AXIS)
