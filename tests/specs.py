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
import conv_reference
import opinfo
from opinfo import CLIP, DISTINCT, DOMAINS, INTEGER, NONZERO, POSITIVE, REAL, Arg, Sample  # noqa: F401

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


# ====================================================================== the rows

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


def condition(shape: Shape, seed: int = 7) -> np.ndarray:
    """A fixed random bool array: where's condition in a spec (a constant, never differentiated)."""
    return np.random.default_rng(seed).random(shape) > 0.5


for _op in BINARY_OPS.values():
    for _suffix, _shapes in BINARY_PATTERNS.items():
        _c = condition(np.broadcast_shapes(*_shapes))
        _row(_op.name + _suffix, lambda x, y, o=_op, c=_c: o.fn(x, y, c),
             lambda x, y, o=_op, c=_c: o.ref(x, y, c),
             lambda torch, x, y, o=_op, c=_c: o.torch_fn(torch, x, y, c), _shapes, _op.domains)

# ---------------------------------------------------------------- arithmetic: the other forms
_row("add.scalar_tensor", lambda x, y: x + y, np.add, lambda torch, x, y: x + y, ((), (2, 3)))
_row("mul.outer_broadcast", lambda x, y: x * y, np.multiply, lambda torch, x, y: x * y,
     ((3, 1), (1, 4)))
_row("rsub.number", lambda x: 2.0 - x, lambda x: 2.0 - x, lambda torch, x: 2.0 - x, ((3, 4),))
_row("rdiv.number", lambda x: 2.0 / x, lambda x: 2.0 / x, lambda torch, x: 2.0 / x,
     ((3, 4),), (NONZERO,))
_row("pow.tensor_number", lambda x: x ** 2.5, lambda x: x ** 2.5, lambda torch, x: x ** 2.5,
     ((3, 4),), (POSITIVE,))
_row("pow.tensor_negative_number", lambda x: x ** -1.5, lambda x: x ** -1.5,
     lambda torch, x: x ** -1.5, ((3, 4),), (POSITIVE,))
_row("pow.tensor_int_negative_base", lambda x: x ** 3, lambda x: x ** 3,
     lambda torch, x: x ** 3, ((3, 4),))
_row("pow.number_tensor", lambda x: 2.0 ** x, lambda x: 2.0 ** x, lambda torch, x: 2.0 ** x,
     ((3, 4),))
_row("abs.builtin", lambda x: abs(x), np.abs, lambda torch, x: abs(x), ((2, 3),), (NONZERO,))
_row("where.cond_broadcasts", lambda x, y, c=condition((2, 3, 4), 8): dg.where(c, x, y),
     lambda x, y, c=condition((2, 3, 4), 8): np.where(c, x, y),
     lambda torch, x, y, c=condition((2, 3, 4), 8): torch.where(_tc(torch, c), x, y), SAME)
_row("where.tensor_cond_number", lambda x, c=condition((3, 4)): dg.where(dg.tensor(c.astype(float)), x, 0.5),
     lambda x, c=condition((3, 4)): np.where(c, x, 0.5),
     lambda torch, x, c=condition((3, 4)): torch.where(_tc(torch, c), x, 0.5), ((3, 4),))

# ---------------------------------------------------------------- elementwise functions
# (neg, abs, exp, log, sqrt, tanh, sigmoid, relu, sin and cos: their spec samples are in
# their entries in tests/conformance/rows_core.py)
_row("softplus", lambda x: x.softplus(), lambda x: np.logaddexp(0, x),
     lambda torch, x: torch.nn.functional.softplus(x), ((3, 4),))
_row("clip", lambda x: x.clip(-0.5, 0.5), lambda x: np.minimum(np.maximum(x, -0.5), 0.5),
     lambda torch, x: x.clamp(-0.5, 0.5), ((3, 4),), (CLIP,))
_row("clip.lo_only", lambda x: x.clip(min=-0.5), lambda x: np.maximum(x, -0.5),
     lambda torch, x: x.clamp(min=-0.5), ((3, 4),), (CLIP,))
_row("clip.hi_only", lambda x: x.clip(max=0.5), lambda x: np.minimum(x, 0.5),
     lambda torch, x: x.clamp(max=0.5), ((3, 4),), (CLIP,))


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

# ---------------------------------------------------------------- shape
_row("reshape", lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6),
     lambda torch, x: x.reshape(4, 6), (R3,))
_row("reshape.tuple_with_minus_one", lambda x: x.reshape((-1, 2)), lambda x: x.reshape(-1, 2),
     lambda torch, x: x.reshape(-1, 2), (R3,))
_row("reshape.to_0d", lambda x: x.reshape(()), lambda x: x.reshape(()),
     lambda torch, x: x.reshape(()), ((1, 1),))
_row("transpose.numpy_no_axes", lambda x: np.transpose(x), lambda x: x.transpose(),
     lambda torch, x: x.permute(2, 1, 0), (R3,))
_row("transpose.dims", lambda x: x.transpose(0, 1), lambda x: x.swapaxes(0, 1),
     lambda torch, x: x.transpose(0, 1), (R3,))
_row("permute.axes_tuple", lambda x: x.permute((2, 0, 1)), lambda x: x.transpose(2, 0, 1),
     lambda torch, x: x.permute(2, 0, 1), (R3,))
_row("permute.negative_axes", lambda x: x.permute(-1, 0, -2), lambda x: x.transpose(-1, 0, -2),
     lambda torch, x: x.permute(-1, 0, -2), (R3,))
_row("T.matrix", lambda x: x.T, lambda x: x.T, lambda torch, x: x.T, ((3, 4),))
_row("T.rank3", lambda x: x.T, lambda x: x.T, lambda torch, x: x.permute(2, 1, 0), (R3,))
for src, dst in (((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), (2, 3)), ((2, 1, 3), (2, 4, 3))):
    _row(f"broadcast_to{src}->{dst}", lambda x, s=dst: x.broadcast_to(s),
         lambda x, s=dst: np.broadcast_to(x, s), lambda torch, x, s=dst: x.expand(*s), (src,))
for shape, axis in (((2, 1, 3), 1), ((2, 3, 1), -1), ((2, 1, 3, 1), None), ((1, 3, 1), (0, 2))):
    _row(f"squeeze(axis={axis})", lambda x, a=axis: x.squeeze(a), lambda x, a=axis: np.squeeze(x, a),
         (lambda torch, x, a=axis: x.squeeze() if a is None else x.squeeze(a)), (shape,))
for axis in (0, 1, -1, -3):
    _row(f"unsqueeze(axis={axis})", lambda x, a=axis: x.unsqueeze(a),
         lambda x, a=axis: np.expand_dims(x, a), lambda torch, x, a=axis: x.unsqueeze(a),
         ((2, 3),))
_row("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), lambda torch, x: x.flatten(), (R3,))


# ---------------------------------------------------------------- indexing
def _torch_index(torch, index: Any) -> Any:
    """The same index for torch: NumPy arrays become torch tensors."""
    parts = index if isinstance(index, tuple) else (index,)
    conv = tuple(torch.from_numpy(np.asarray(p)) if isinstance(p, (np.ndarray, list)) else p
                 for p in parts)
    return conv if isinstance(index, tuple) else conv[0]


_MASK_34 = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
INDICES = [
    # (label, shape, index)
    ("int", R3, 1),
    ("negative_int", R3, -1),
    ("int_pair", R3, (1, 2)),
    ("every_axis_int", R3, (1, 2, 3)),
    ("slice", R3, slice(0, 1)),
    ("slices_with_steps", R3, (slice(None), slice(None, None, 2), slice(1, None))),
    ("None", R3, (None, 1)),
    ("Ellipsis", R3, (Ellipsis, 1)),
    ("Ellipsis_None_slice", R3, (Ellipsis, None, slice(1, 3))),
    ("int_array_repeats", (3, 4), np.array([0, 2, 0, 0])),
    ("list_repeats", (3, 4), [1, 1]),
    ("int_array_2d", (3, 4), np.array([[0, 1], [1, 0], [2, 2]])),
    ("negative_int_array", (3, 4), np.array([-1, 0, -1])),
    ("paired_int_arrays", (3, 4), (np.array([0, 1, 1, 1]), np.array([2, 2, 0, 2]))),
    ("bool_mask_full", (3, 4), _MASK_34),
    ("bool_mask_leading", R3, np.array([True, False])),
    ("mixed_slice_int_array", (3, 4), (slice(1, None), np.array([0, 2, 2]))),
    ("mixed_arrays_split_by_slice", R3, (np.array([0, 1]), slice(None), np.array([3, 3]))),
    ("mixed_Ellipsis_bool", R3, (Ellipsis, np.array([True, False, True, True]))),
]
for label, shape, index in INDICES:
    _row(f"getitem.{label}", lambda x, i=index: x[i], lambda x, i=index: x[i],
         lambda torch, x, i=index: x[_torch_index(torch, i)], (shape,))
# torch selects with the int first, so the array's axis stays in place: shape (2, 3).
# (NumPy counts the int as an advanced index separated from the array by a slice and would
# put that axis first: (3, 2).) The NumPy reference spells torch's order out.
_row("getitem.mixed_int_slice_array", lambda x: x[1, :2, np.array([0, 0, 3])],
     lambda x: x[1][:2, np.array([0, 0, 3])],
     lambda torch, x: x[1, :2, torch.tensor([0, 0, 3])], (R3,))
_row("getitem.negative_step", lambda x: x[::-1, 1:], lambda x: x[::-1, 1:],
     # torch has no negative steps; flipping is the same selection
     lambda torch, x: x.flip(0)[:, 1:], ((3, 4),))

# ---------------------------------------------------------------- joining
for shapes, axis in ((((2, 3), (1, 3), (3, 3)), 0), (((2, 1), (2, 3)), -1), (((2, 1, 4), (2, 3, 4)), 1)):
    _row(f"concatenate(axis={axis}){shapes}", lambda *xs, a=axis: dg.concatenate(xs, axis=a),
         lambda *xs, a=axis: np.concatenate(xs, axis=a),
         lambda torch, *xs, a=axis: torch.cat(xs, dim=a), shapes)
for n, axis in ((2, 0), (3, 1), (2, -1), (2, -2)):
    _row(f"stack(axis={axis})x{n}", lambda *xs, a=axis: dg.stack(xs, axis=a),
         lambda *xs, a=axis: np.stack(xs, axis=a),
         lambda torch, *xs, a=axis: torch.stack(xs, dim=a), ((2, 3),) * n)

# ---------------------------------------------------------------- matmul
MATMULS = [
    ("vec@vec", (3,), (3,)),
    ("vec@mat", (3,), (3, 4)),
    ("mat@vec", (2, 3), (3,)),
    ("vec@batched", (3,), (2, 3, 4)),
    ("batched@vec", (2, 2, 3), (3,)),
    ("mat@mat", (2, 3), (3, 4)),
    ("batched@batched", (2, 2, 3), (2, 3, 4)),
    ("mat@batched", (2, 3), (2, 3, 4)),
    ("batched@mat", (2, 2, 3), (3, 4)),
    ("broadcast_batch_dims", (2, 1, 2, 3), (3, 3, 2)),
]
for label, sx, sy in MATMULS:
    _row(f"matmul.{label}", lambda x, y: x @ y, np.matmul, lambda torch, x, y: x @ y, (sx, sy))
_row("matmul.function", lambda x, y: dg.matmul(x, y), np.matmul, lambda torch, x, y: torch.matmul(x, y),
     ((2, 3), (3, 2)))

# ---------------------------------------------------------------- convolution and pooling
# NCHW input, OIHW weight; the reference is a loop over output pixels (conv_reference.py).
# Small shapes: gradgradcheck differentiates every input element twice.
CONVS = [
    # (label, x shape, w shape, bias, stride, padding)
    ("", (2, 2, 5, 4), (3, 2, 3, 2), True, 1, 0),
    ("stride_padding", (1, 2, 5, 6), (2, 2, 2, 3), True, (2, 1), (1, 2)),
    ("no_bias_1x1", (2, 3, 3, 4), (2, 3, 1, 1), False, 1, 0),
    ("kernel_is_padded_input", (1, 2, 3, 2), (2, 2, 5, 4), True, 1, 1),
]
for label, sx, sw, with_bias, stride, padding in CONVS:
    shapes = (sx, sw) + (((sw[0],),) if with_bias else ())
    _row("conv2d" + (f".{label}" if label else ""),
         lambda *a, s=stride, p=padding: dg.conv2d(*a, stride=s, padding=p),
         lambda *a, s=stride, p=padding: conv_reference.conv2d_loop(*a, stride=s, padding=p),
         lambda torch, *a, s=stride, p=padding: torch.nn.functional.conv2d(*a, stride=s, padding=p),
         shapes)
POOLS = [
    # (label, x shape, kernel, stride, padding)
    ("", (2, 2, 4, 6), 2, None, 0),
    ("overlapping_padded", (1, 2, 5, 4), (3, 2), (2, 1), 1),
]
for label, sx, kernel, stride, padding in POOLS:
    for name, domain in (("max_pool2d", DISTINCT), ("avg_pool2d", REAL)):
        _row(name + (f".{label}" if label else ""),
             lambda x, f=getattr(dg, name), k=kernel, s=stride, p=padding: f(x, k, s, p),
             lambda x, f=getattr(conv_reference, f"{name}_loop"), k=kernel, s=stride, p=padding:
             f(x, k, s, p),
             lambda torch, x, n=name, k=kernel, s=stride, p=padding:
             getattr(torch.nn.functional, n)(x, k, s, p),
             (sx,), (domain,))

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
