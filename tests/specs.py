"""The spec samples of the op table (tests/opinfo.py), and OP_SPECS, their view.

One spec sample per operation of docs/api.md (and per interesting variant: each
reduction for every kind of ``axis`` with ``keepdims`` both ways, every kind of index,
every 1-D matmul case). A spec sample is a ``Sample`` of its op's one ``OpInfo`` entry in
``opinfo.OPS`` (``_row`` puts it there, beside the entry's conformance samples) that holds
the operation three times over -- written on duograd Tensors, on NumPy arrays (the
independent reference) and on torch tensors (the oracle) -- with the input shapes and the
domain its random inputs are drawn from (``opinfo.draw``).
The domains keep finite differences honest: logs and square roots see positive
numbers, and piecewise-linear ops (relu, abs, clip, max, maximum, ...) see inputs
well away from their kinks and ties.

Two families are described once, declaratively, and every file that needs them reads
the description instead of keeping its own list:

- ``BINARY_OPS``: each binary elementwise op with its partial derivatives in NumPy.
  It makes the op's OP_SPECS rows, the broadcasting tests (test_tensor_broadcast.py,
  test_tensor_hypothesis.py) and the shape and operand-type error tests
  (test_tensor_errors.py).
- ``AXIS_OPS``: each op with an ``axis`` argument (reductions, softmax, cumsum) with its
  gradient in closed form. It makes the op's OP_SPECS rows, the random-axes property
  test (test_tensor_hypothesis.py) and the axis error tests (test_tensor_errors.py).

``SELECTOR_SPECS`` holds the operations that are never differentiated (comparisons,
argmax, argmin): forward, "no history" and torch checks, and the replay, in
test_tensor_selectors.py. docs/adding-an-op.md says which checks pick a row up.

``OP_SPECS`` (the differentiable spec samples, in the order they are written) and
``SELECTOR_SPECS`` are views of ``opinfo.OPS``; the conformance driver runs the same
samples against torch in float64 and float32.

>>> spec = SPECS_BY_NAME["mul.broadcast"]
>>> [a.shape for a in make_inputs(spec)]
[(3, 4), (4,)]
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

import duograd as dg
import opinfo
from opinfo import CLIP, DISTINCT, DOMAINS, INTEGER, NONZERO, POSITIVE, REAL, Arg, Sample, condition  # noqa: F401

Shape = tuple[int, ...]


def make_inputs(spec: Sample, seed: int = 0, dtype: Any = np.float64) -> list[np.ndarray]:
    """Random inputs for ``spec`` from its domains; the same seed gives the same arrays.

    The generator is seeded from the spec's name and ``seed``, so every spec gets its
    own numbers and a test that wants a second draw passes another seed.

    >>> spec = SPECS_BY_NAME["log"]
    >>> bool((make_inputs(spec, seed=3)[0] > 0).all())
    True
    """
    rng = np.random.default_rng([zlib.crc32(spec.name.encode()), seed])
    return opinfo.draw(spec.args, rng, dtype, joint=True)


def draw(shapes: Sequence[Shape], domains: Sequence[str], rng: np.random.Generator,
         dtype: Any = np.float64) -> list[np.ndarray]:
    """One float array per shape, each from its domain (one of ``DOMAINS``), DISTINCT ones
    from one pool (``opinfo.draw`` with ``joint=True``).

    >>> a, b = draw([(2,), (3,)], [DISTINCT, DISTINCT], np.random.default_rng(0))
    >>> len(set(a) | set(b))
    5
    """
    return opinfo.draw([Arg(tuple(s), "float", d) for s, d in zip(shapes, domains)], rng, dtype,
                       joint=True)


def make_tensors(spec: Sample, seed: int = 0, dtype: Any = np.float64,
                 requires_grad: bool = True) -> list[dg.Tensor]:
    """``make_inputs`` wrapped as duograd leaves.

    >>> [t.requires_grad for t in make_tensors(SPECS_BY_NAME["add"])]
    [True, True]
    """
    return [dg.tensor(a, requires_grad=requires_grad) for a in make_inputs(spec, seed, dtype)]


# ====================================================================== the declared families
# The two families other tests read as tables (BINARY_OPS, AXIS_OPS) and the comparisons make
# their gradient-check variants here; every other variant is written with its family's rows
# in tests/conformance/rows_<family>.py.

# A variant with its own three functions (fn on Tensors, a NumPy ref, torch_fn), and one never
# differentiated (SELECTOR_SPECS): tests/opinfo.py's spec_row and selector_row.
_row = opinfo.spec_row
_selector = opinfo.selector_row


# ---------------------------------------------------------------- binary elementwise ops


@dataclass(frozen=True)
class BinaryOp:
    """A binary elementwise op, declared once for every test that needs it.

    Every function takes ``(x, y, c)``: ``c`` is a bool array of the output's shape, the
    condition of ``where`` (the other ops ignore it). ``partials`` gives the elementwise
    partial derivatives (d out/dx, d out/dy) in NumPy, on arrays already broadcast to
    the output's shape; the broadcasting tests sum them back themselves. ``name`` is
    how the op's error messages name it.

    >>> BINARY_OPS["mul"].partials(np.array([2.0]), np.array([3.0]), None)
    (array([3.]), array([2.]))
    """

    name: str
    fn: Callable[..., dg.Tensor]
    ref: Callable[..., np.ndarray]
    torch_fn: Callable[..., Any]
    partials: Callable[..., tuple[np.ndarray, np.ndarray]]
    domains: tuple[str, str] = (REAL, REAL)


def _tc(torch, c):
    return torch.from_numpy(np.asarray(c))


BINARY_OPS: dict[str, BinaryOp] = {op.name: op for op in [
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
]}

# The broadcasting patterns every binary op gets a spec row for (test_tensor_broadcast.py
# goes through many more).
SAME, BCAST = ((3, 4), (3, 4)), ((3, 4), (4,))
BINARY_PATTERNS = {"": SAME, ".broadcast": BCAST, ".both_broadcast": ((3, 1), (4,))}


for _op in BINARY_OPS.values():
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


@dataclass(frozen=True)
class AxisOp:
    """An op with an ``axis`` argument (a reduction, softmax, a running sum), declared once.

    ``fn(x, axis, keepdims)`` on a Tensor, ``ref`` on a NumPy array, ``torch_fn`` on a
    torch tensor (ops without ``keepdims`` ignore it). ``grad(x, axis, keepdims, g)`` is
    the gradient of ``sum(g * op(x))`` in closed form, in NumPy. ``axes`` are the axis
    arguments its OP_SPECS rows use on a (2, 3, 4) input. ``one_axis``: the op takes a
    single int (a tuple is a TypeError); otherwise None, an int or a tuple of ints.
    ``name`` is how its errors name it.

    >>> op = AXIS_OPS["sum"]
    >>> op.grad(np.zeros((2, 3)), 0, False, np.array([1.0, 2.0, 3.0]))
    array([[1., 2., 3.],
           [1., 2., 3.]])
    """

    name: str
    fn: Callable[..., dg.Tensor]
    ref: Callable[..., np.ndarray]
    torch_fn: Callable[..., Any]
    grad: Callable[..., np.ndarray]
    domain: str = REAL
    axes: tuple[Any, ...] = (None, 1, -1, (0, 2))
    keepdims: bool = True
    one_axis: bool = False


AXIS_OPS: dict[str, AxisOp] = {op.name: op for op in [
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
]}


def axis_label(op: AxisOp, axis: Any, keepdims: bool) -> str:
    """The spec name of one axis/keepdims variant: ``sum(axis=1, keepdims=True)``."""
    return f"{op.name}(axis={axis}, keepdims={keepdims})" if op.keepdims else f"{op.name}(axis={axis})"


R3 = (2, 3, 4)
for _op in AXIS_OPS.values():
    for _axis in _op.axes:
        for _keepdims in ((False, True) if _op.keepdims else (False,)):
            _row(axis_label(_op, _axis, _keepdims),
                 lambda x, o=_op, a=_axis, k=_keepdims: o.fn(x, a, k),
                 lambda x, o=_op, a=_axis, k=_keepdims: o.ref(x, a, k),
                 lambda torch, x, o=_op, a=_axis, k=_keepdims: o.torch_fn(x, a, k),
                 (R3,), (_op.domain,))
for axis, keepdims in ((None, False), (-1, True), ((0, 2), False)):
    _row(f"var(axis={axis}, keepdims={keepdims}, ddof=1)",
         lambda x, a=axis, k=keepdims: x.var(a, keepdim=k),  # torch's default: correction=1
         lambda x, a=axis, k=keepdims: np.var(x, axis=a, keepdims=k, ddof=1),
         lambda torch, x, a=axis, k=keepdims: x.var(dim=_dims(a, x.ndim), keepdim=k, correction=1),
         (R3,))
_row("sum.of_vector", lambda x: x.sum(), np.sum, lambda torch, x: x.sum(), ((5,),))
_row("mean.of_0d", lambda x: x.mean(), np.mean, lambda torch, x: x.mean(), ((),))
_row("softmax.default_axis", lambda x: x.softmax(), lambda x: _np_softmax(x, -1),
     lambda torch, x: x.softmax(dim=-1), ((3, 4),))
_row("log_softmax.default_axis", lambda x: x.log_softmax(), lambda x: np.log(_np_softmax(x, -1)),
     lambda torch, x: x.log_softmax(dim=-1), ((3, 4),))

# ====================================================================== never differentiated
# Comparisons, argmax and argmin: their output is bool or int64, carries no history and
# has no derivative, so they are not in OP_SPECS (which every gradient check reads).
# test_tensor_selectors.py checks them against NumPy and torch and replays them.

COMPARISONS = {
    # symbol: (duograd and torch, NumPy)
    "<": (lambda x, y: x < y, np.less),
    "<=": (lambda x, y: x <= y, np.less_equal),
    ">": (lambda x, y: x > y, np.greater),
    ">=": (lambda x, y: x >= y, np.greater_equal),
    "==": (lambda x, y: x == y, np.equal),
    "!=": (lambda x, y: x != y, np.not_equal),
}
_NUMBER = 1.0  # a value INTEGER inputs hit, so == and != see ties with it too
for _sym, (_cmp, _np_cmp) in COMPARISONS.items():
    for _suffix, _shapes in (("", SAME), (".broadcast", BCAST), (".both_broadcast", ((3, 1), (4,)))):
        _selector(f"{_sym}{_suffix}", _cmp, _np_cmp, lambda torch, x, y, f=_cmp: f(x, y),
                  _shapes, (INTEGER, INTEGER))
    _selector(f"{_sym}.number", lambda x, f=_cmp: f(x, _NUMBER), lambda x, f=_np_cmp: f(x, _NUMBER),
              lambda torch, x, f=_cmp: f(x, _NUMBER), ((3, 4),), (INTEGER,))
    _selector(f"{_sym}.number_on_the_left", lambda x, f=_cmp: f(_NUMBER, x),
              lambda x, f=_np_cmp: f(_NUMBER, x),
              lambda torch, x, f=_cmp: f(_NUMBER, x), ((3, 4),), (INTEGER,))
for _name in ("argmax", "argmin"):
    for _axis in (None, 0, 1, -1):
        _selector(
            f"{_name}(axis={_axis})", lambda x, n=_name, a=_axis: getattr(x, n)(a),
            lambda x, n=_name, a=_axis: getattr(np, n)(x, axis=a),
            lambda torch, x, n=_name, a=_axis: getattr(torch, n)(x.reshape(-1) if a is None else x,
                                                                **({} if a is None else {"dim": a})),
            (R3,), (DISTINCT,))

opinfo.load_all()  # the entries written with their conformance samples (rows_*.py) hold spec samples too
OP_SPECS: list[Sample] = opinfo.spec_samples(differentiable=True)
SELECTOR_SPECS: list[Sample] = opinfo.spec_samples(differentiable=False)
SPECS_BY_NAME: dict[str, Sample] = {s.name: s for s in OP_SPECS}
assert len(SPECS_BY_NAME) == len(OP_SPECS), "spec names must be unique: " + str(sorted(n for n in SPECS_BY_NAME if sum(s.name == n for s in OP_SPECS) > 1))
assert len({s.name for s in SELECTOR_SPECS}) == len(SELECTOR_SPECS), "selector names must be unique"
