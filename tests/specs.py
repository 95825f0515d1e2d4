"""OP_SPECS: the tests' twin of the op table in duograd/ops.py.

One ``OpSpec`` per operation of API.md section 3 (and per interesting variant: each
reduction for every kind of ``axis`` with ``keepdims`` both ways, every kind of index,
every 1-D matmul case). A spec holds the operation three times over -- written on
duograd Tensors, on NumPy arrays (the independent reference) and on torch tensors
(the oracle) -- plus the input shapes and the domain its random inputs are drawn from.
The domains keep finite differences honest: logs and square roots see positive
numbers, and piecewise-linear ops (relu, abs, clip, max, maximum, ...) see inputs
well away from their kinks and ties.

Adding an op to ops.py means adding a row here; every check in test_tensor_ops.py,
test_higher_ops.py and test_tensor_oracle.py then picks it up.

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

Shape = tuple[int, ...]

# The domains a spec's inputs may be drawn from (see make_inputs).
REAL = "real"            # standard normal, clipped to [-2, 2]
POSITIVE = "positive"    # uniform on [0.5, 2]: log, sqrt, pow bases, denominators
NONZERO = "nonzero"      # |x| in [0.3, 2] with a random sign: relu and abs, away from 0
DISTINCT = "distinct"    # every element of every DISTINCT input differs from every other by
                         # at least ~0.1: max/min, maximum/minimum, never a tie
CLIP = "clip"            # standard normal pushed at least 0.05 away from the bounds +-0.5
DOMAINS = (REAL, POSITIVE, NONZERO, DISTINCT, CLIP)


@dataclass(frozen=True)
class OpSpec:
    """One operation, written three ways, with the inputs it is checked on.

    ``fn`` takes duograd Tensors, ``ref`` NumPy arrays, ``torch_fn`` the torch module
    followed by torch tensors. ``domains`` has one entry per input. ``torch_skip``
    says why an op has no torch twin (``torch_fn`` is then None).

    >>> spec = OpSpec("twice", lambda x: x * 2, lambda x: x * 2, lambda torch, x: x * 2,
    ...               shapes=((3,),), domains=(REAL,), elementwise=True)
    >>> spec.arity
    1
    """

    name: str
    fn: Callable[..., dg.Tensor]
    ref: Callable[..., np.ndarray]
    torch_fn: Callable[..., Any] | None
    shapes: tuple[Shape, ...]
    domains: tuple[str, ...]
    elementwise: bool = False
    group: str = "elementwise"
    torch_skip: str | None = None

    @property
    def arity(self) -> int:
        return len(self.shapes)

    def __repr__(self) -> str:  # pytest shows this on failure
        return f"OpSpec({self.name!r}, shapes={self.shapes})"


def make_inputs(spec: OpSpec, seed: int = 0, dtype: Any = np.float64) -> list[np.ndarray]:
    """Random inputs for ``spec`` from its domains; the same seed gives the same arrays.

    The generator is seeded from the spec's name and ``seed``, so every spec gets its
    own numbers and a test that wants a second draw passes another seed.

    >>> spec = SPECS_BY_NAME["log"]
    >>> bool((make_inputs(spec, seed=3)[0] > 0).all())
    True
    """
    rng = np.random.default_rng([zlib.crc32(spec.name.encode()), seed])
    return draw(spec.shapes, spec.domains, rng, dtype)


def draw(shapes: Sequence[Shape], domains: Sequence[str], rng: np.random.Generator,
         dtype: Any = np.float64) -> list[np.ndarray]:
    """One array per shape, each from its domain (one of ``DOMAINS``).

    >>> a, b = draw([(2,), (3,)], [DISTINCT, DISTINCT], np.random.default_rng(0))
    >>> len(set(a) | set(b))
    5
    """
    # DISTINCT inputs share one pool of well-separated values, so they never tie
    # with each other either (maximum(x, y) must not see x == y anywhere).
    n_distinct = sum(int(np.prod(s)) for s, d in zip(shapes, domains) if d == DISTINCT)
    pool = list(rng.permutation(np.linspace(-2.0, 2.0, max(n_distinct, 2))))
    out = []
    for shape, domain in zip(shapes, domains):
        if domain == REAL:
            a = np.clip(rng.standard_normal(shape), -2.0, 2.0)
        elif domain == POSITIVE:
            a = rng.uniform(0.5, 2.0, shape)
        elif domain == NONZERO:
            a = rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        elif domain == DISTINCT:
            n = int(np.prod(shape))
            a = np.array(pool[:n]).reshape(shape)
            del pool[:n]
        elif domain == CLIP:
            a = rng.standard_normal(shape)
            near = np.abs(np.abs(a) - 0.5) < 0.05
            a = np.where(near, a + 0.2 * np.sign(a), a)
        else:
            raise ValueError(f"draw: unknown domain {domain!r}")
        out.append(np.asarray(a, dtype=dtype))
    return out


def make_tensors(spec: OpSpec, seed: int = 0, dtype: Any = np.float64,
                 requires_grad: bool = True) -> list[dg.Tensor]:
    """``make_inputs`` wrapped as duograd leaves.

    >>> [t.requires_grad for t in make_tensors(SPECS_BY_NAME["add"])]
    [True, True]
    """
    return [dg.tensor(a, requires_grad=requires_grad) for a in make_inputs(spec, seed, dtype)]


# ====================================================================== the table

OP_SPECS: list[OpSpec] = []


def _row(name: str, fn: Callable, ref: Callable, torch_fn: Callable | None, shapes, domains=None,
         **flags: Any) -> None:
    """Append one OpSpec; domains default to REAL for every input."""
    shapes = tuple(tuple(s) for s in shapes)
    domains = tuple(domains) if domains is not None else (REAL,) * len(shapes)
    assert len(domains) == len(shapes), name
    OP_SPECS.append(OpSpec(name, fn, ref, torch_fn, shapes, domains, **flags))


def _elementwise(name: str, fn, ref, torch_fn, shapes, domains=None, **flags: Any) -> None:
    _row(name, fn, ref, torch_fn, shapes, domains, elementwise=True, **flags)


# ---------------------------------------------------------------- arithmetic
SAME, BCAST = ((3, 4), (3, 4)), ((3, 4), (4,))
for suffix, shapes in (("", SAME), (".broadcast", BCAST)):
    _elementwise("add" + suffix, lambda x, y: x + y, np.add, lambda torch, x, y: x + y, shapes,
                 group="arithmetic")
    _elementwise("sub" + suffix, lambda x, y: x - y, np.subtract, lambda torch, x, y: x - y, shapes,
                 group="arithmetic")
    _elementwise("mul" + suffix, lambda x, y: x * y, np.multiply, lambda torch, x, y: x * y, shapes,
                 group="arithmetic")
    _elementwise("div" + suffix, lambda x, y: x / y, np.divide, lambda torch, x, y: x / y, shapes,
                 (REAL, NONZERO), group="arithmetic")
    _elementwise("pow.tensor_tensor" + suffix, lambda x, y: x ** y, np.power,
                 lambda torch, x, y: x ** y, shapes, (POSITIVE, REAL), group="arithmetic")
_elementwise("add.scalar_tensor", lambda x, y: x + y, np.add, lambda torch, x, y: x + y,
             ((), (2, 3)), group="arithmetic")
_elementwise("mul.outer_broadcast", lambda x, y: x * y, np.multiply, lambda torch, x, y: x * y,
             ((3, 1), (1, 4)), group="arithmetic")
_elementwise("rsub.number", lambda x: 2.0 - x, lambda x: 2.0 - x, lambda torch, x: 2.0 - x,
             ((3, 4),), group="arithmetic")
_elementwise("rdiv.number", lambda x: 2.0 / x, lambda x: 2.0 / x, lambda torch, x: 2.0 / x,
             ((3, 4),), (NONZERO,), group="arithmetic")
_elementwise("pow.tensor_number", lambda x: x ** 2.5, lambda x: x ** 2.5, lambda torch, x: x ** 2.5,
             ((3, 4),), (POSITIVE,), group="arithmetic")
_elementwise("pow.tensor_negative_number", lambda x: x ** -1.5, lambda x: x ** -1.5,
             lambda torch, x: x ** -1.5, ((3, 4),), (POSITIVE,), group="arithmetic")
_elementwise("pow.tensor_int_negative_base", lambda x: x ** 3, lambda x: x ** 3,
             lambda torch, x: x ** 3, ((3, 4),), group="arithmetic")
_elementwise("pow.number_tensor", lambda x: 2.0 ** x, lambda x: 2.0 ** x, lambda torch, x: 2.0 ** x,
             ((3, 4),), group="arithmetic")
_elementwise("neg", lambda x: -x, np.negative, lambda torch, x: -x, ((3, 4),), group="arithmetic")
_elementwise("abs", lambda x: x.abs(), np.abs, lambda torch, x: x.abs(), ((3, 4),), (NONZERO,),
             group="arithmetic")
_elementwise("abs.builtin", lambda x: abs(x), np.abs, lambda torch, x: abs(x), ((2, 3),), (NONZERO,),
             group="arithmetic")

# ---------------------------------------------------------------- elementwise functions
_elementwise("exp", lambda x: x.exp(), np.exp, lambda torch, x: x.exp(), ((3, 4),))
_elementwise("log", lambda x: x.log(), np.log, lambda torch, x: x.log(), ((3, 4),), (POSITIVE,))
_elementwise("sqrt", lambda x: x.sqrt(), np.sqrt, lambda torch, x: x.sqrt(), ((3, 4),), (POSITIVE,))
_elementwise("tanh", lambda x: x.tanh(), np.tanh, lambda torch, x: x.tanh(), ((3, 4),))
_elementwise("sigmoid", lambda x: x.sigmoid(), lambda x: 1.0 / (1.0 + np.exp(-x)),
             lambda torch, x: x.sigmoid(), ((3, 4),))
_elementwise("relu", lambda x: x.relu(), lambda x: np.where(x > 0, x, 0.0),
             lambda torch, x: x.relu(), ((3, 4),), (NONZERO,))
_elementwise("sin", lambda x: x.sin(), np.sin, lambda torch, x: x.sin(), ((3, 4),))
_elementwise("cos", lambda x: x.cos(), np.cos, lambda torch, x: x.cos(), ((3, 4),))
for suffix, shapes in (("", SAME), (".broadcast", BCAST), (".both_broadcast", ((3, 1), (1, 4)))):
    _elementwise("maximum" + suffix, dg.maximum, np.maximum, lambda torch, x, y: torch.maximum(x, y),
                 shapes, (DISTINCT, DISTINCT))
    _elementwise("minimum" + suffix, dg.minimum, np.minimum, lambda torch, x, y: torch.minimum(x, y),
                 shapes, (DISTINCT, DISTINCT))

# cond is a constant of the spec: where never differentiates it.
_COND = np.random.default_rng(7).random((3, 4)) > 0.5
_COND3 = np.random.default_rng(8).random((2, 3, 4)) > 0.5
for suffix, shapes, cond in (("", SAME, _COND), (".broadcast", ((3, 1), (4,)), _COND),
                             (".cond_broadcasts", SAME, _COND3)):
    _elementwise("where" + suffix, lambda x, y, c=cond: dg.where(c, x, y),
                 lambda x, y, c=cond: np.where(c, x, y),
                 lambda torch, x, y, c=cond: torch.where(torch.from_numpy(c), x, y), shapes)
_elementwise("where.tensor_cond_number", lambda x, c=_COND: dg.where(dg.tensor(c.astype(float)), x, 0.5),
             lambda x, c=_COND: np.where(c, x, 0.5),
             lambda torch, x, c=_COND: torch.where(torch.from_numpy(c), x, 0.5), ((3, 4),))
_elementwise("clip", lambda x: x.clip(-0.5, 0.5), lambda x: np.minimum(np.maximum(x, -0.5), 0.5),
             lambda torch, x: x.clamp(-0.5, 0.5), ((3, 4),), (CLIP,))
_elementwise("clip.lo_only", lambda x: x.clip(lo=-0.5), lambda x: np.maximum(x, -0.5),
             lambda torch, x: x.clamp(min=-0.5), ((3, 4),), (CLIP,))
_elementwise("clip.hi_only", lambda x: x.clip(hi=0.5), lambda x: np.minimum(x, 0.5),
             lambda torch, x: x.clamp(max=0.5), ((3, 4),), (CLIP,))


# ---------------------------------------------------------------- reductions
def _dims(axis: Any, ndim: int) -> tuple[int, ...]:
    """torch's spelling of a NumPy axis argument (None means every axis)."""
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def _np_logsumexp(x, axis=None, keepdims=False):
    # Written without a shift on purpose: the spec's inputs are small, and the shifted
    # form is what the engine does (this is the plain definition).
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def _np_softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


R3 = (2, 3, 4)
AXES = (None, 1, -1, (0, 2))
REDUCTIONS = {
    # name: (duograd method, NumPy reference, torch, domain)
    "sum": (lambda x, a, k: x.sum(a, k), lambda x, a, k: np.sum(x, axis=a, keepdims=k),
            lambda x, a, k: x.sum(dim=_dims(a, x.ndim), keepdim=k), REAL),
    "mean": (lambda x, a, k: x.mean(a, k), lambda x, a, k: np.mean(x, axis=a, keepdims=k),
             lambda x, a, k: x.mean(dim=_dims(a, x.ndim), keepdim=k), REAL),
    "max": (lambda x, a, k: x.max(a, k), lambda x, a, k: np.max(x, axis=a, keepdims=k),
            lambda x, a, k: x.amax(dim=_dims(a, x.ndim), keepdim=k), DISTINCT),
    "min": (lambda x, a, k: x.min(a, k), lambda x, a, k: np.min(x, axis=a, keepdims=k),
            lambda x, a, k: x.amin(dim=_dims(a, x.ndim), keepdim=k), DISTINCT),
    "logsumexp": (lambda x, a, k: x.logsumexp(a, k), _np_logsumexp,
                  lambda x, a, k: x.logsumexp(dim=_dims(a, x.ndim), keepdim=k), REAL),
    "var": (lambda x, a, k: x.var(a, k), lambda x, a, k: np.var(x, axis=a, keepdims=k),
            lambda x, a, k: x.var(dim=_dims(a, x.ndim), keepdim=k, correction=0), REAL),
}
for rname, (fn, ref, tfn, domain) in REDUCTIONS.items():
    for axis in AXES:
        for keepdims in (False, True):
            _row(f"{rname}(axis={axis}, keepdims={keepdims})",
                 lambda x, f=fn, a=axis, k=keepdims: f(x, a, k),
                 lambda x, f=ref, a=axis, k=keepdims: f(x, a, k),
                 lambda torch, x, f=tfn, a=axis, k=keepdims: f(x, a, k),
                 (R3,), (domain,), group="reduction")
for axis, keepdims in ((None, False), (-1, True), ((0, 2), False)):
    _row(f"var(axis={axis}, keepdims={keepdims}, ddof=1)",
         lambda x, a=axis, k=keepdims: x.var(a, k, ddof=1),
         lambda x, a=axis, k=keepdims: np.var(x, axis=a, keepdims=k, ddof=1),
         lambda torch, x, a=axis, k=keepdims: x.var(dim=_dims(a, x.ndim), keepdim=k, correction=1),
         (R3,), group="reduction")
_row("sum.of_vector", lambda x: x.sum(), np.sum, lambda torch, x: x.sum(), ((5,),), group="reduction")
_row("mean.of_0d", lambda x: x.mean(), np.mean, lambda torch, x: x.mean(), ((),), group="reduction")
for axis in (-1, 0, 1):
    _row(f"softmax(axis={axis})", lambda x, a=axis: x.softmax(a), lambda x, a=axis: _np_softmax(x, a),
         lambda torch, x, a=axis: x.softmax(dim=a), (R3,), group="reduction")
    _row(f"log_softmax(axis={axis})", lambda x, a=axis: x.log_softmax(a),
         lambda x, a=axis: np.log(_np_softmax(x, a)),
         lambda torch, x, a=axis: x.log_softmax(dim=a), (R3,), group="reduction")
_row("softmax.default_axis", lambda x: x.softmax(), lambda x: _np_softmax(x, -1),
     lambda torch, x: x.softmax(dim=-1), ((3, 4),), group="reduction")
_row("log_softmax.default_axis", lambda x: x.log_softmax(), lambda x: np.log(_np_softmax(x, -1)),
     lambda torch, x: x.log_softmax(dim=-1), ((3, 4),), group="reduction")

# ---------------------------------------------------------------- shape
_row("reshape", lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6),
     lambda torch, x: x.reshape(4, 6), (R3,), group="shape")
_row("reshape.tuple_with_minus_one", lambda x: x.reshape((-1, 2)), lambda x: x.reshape(-1, 2),
     lambda torch, x: x.reshape(-1, 2), (R3,), group="shape")
_row("reshape.to_0d", lambda x: x.reshape(()), lambda x: x.reshape(()),
     lambda torch, x: x.reshape(()), ((1, 1),), group="shape")
_row("transpose.no_axes", lambda x: x.transpose(), lambda x: x.transpose(),
     lambda torch, x: x.permute(2, 1, 0), (R3,), group="shape")
_row("transpose.axes", lambda x: x.transpose(1, 0, 2), lambda x: x.transpose(1, 0, 2),
     lambda torch, x: x.permute(1, 0, 2), (R3,), group="shape")
_row("transpose.axes_tuple", lambda x: x.transpose((2, 0, 1)), lambda x: x.transpose(2, 0, 1),
     lambda torch, x: x.permute(2, 0, 1), (R3,), group="shape")
_row("transpose.negative_axes", lambda x: x.transpose(-1, 0, -2), lambda x: x.transpose(-1, 0, -2),
     lambda torch, x: x.permute(-1, 0, -2), (R3,), group="shape")
_row("T.matrix", lambda x: x.T, lambda x: x.T, lambda torch, x: x.T, ((3, 4),), group="shape")
_row("T.rank3", lambda x: x.T, lambda x: x.T, lambda torch, x: x.permute(2, 1, 0), (R3,), group="shape")
for src, dst in (((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), (2, 3)), ((2, 1, 3), (2, 4, 3))):
    _row(f"broadcast_to{src}->{dst}", lambda x, s=dst: x.broadcast_to(s),
         lambda x, s=dst: np.broadcast_to(x, s), lambda torch, x, s=dst: x.expand(*s), (src,),
         group="shape")
for shape, axis in (((2, 1, 3), 1), ((2, 3, 1), -1), ((2, 1, 3, 1), None), ((1, 3, 1), (0, 2))):
    _row(f"squeeze(axis={axis})", lambda x, a=axis: x.squeeze(a), lambda x, a=axis: np.squeeze(x, a),
         (lambda torch, x, a=axis: x.squeeze() if a is None else x.squeeze(a)), (shape,), group="shape")
for axis in (0, 1, -1, -3):
    _row(f"unsqueeze(axis={axis})", lambda x, a=axis: x.unsqueeze(a),
         lambda x, a=axis: np.expand_dims(x, a), lambda torch, x, a=axis: x.unsqueeze(a),
         ((2, 3),), group="shape")
_row("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), lambda torch, x: x.flatten(), (R3,),
     group="shape")


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
         lambda torch, x, i=index: x[_torch_index(torch, i)], (shape,), group="index")
# NumPy counts the int as an advanced index, separated from the array by a slice, so the
# advanced axis goes first: shape (3, 2). torch selects with the int first: (2, 3).
_row("getitem.mixed_int_slice_array", lambda x: x[1, :2, np.array([0, 0, 3])],
     lambda x: x[1, :2, np.array([0, 0, 3])],
     lambda torch, x: x[1][:2, torch.tensor([0, 0, 3])].T, (R3,), group="index")
_row("getitem.negative_step", lambda x: x[::-1, 1:], lambda x: x[::-1, 1:],
     # torch has no negative steps; flipping is the same selection
     lambda torch, x: x.flip(0)[:, 1:], ((3, 4),), group="index")

# ---------------------------------------------------------------- joining
for shapes, axis in ((((2, 3), (1, 3), (3, 3)), 0), (((2, 1), (2, 3)), -1), (((2, 1, 4), (2, 3, 4)), 1)):
    _row(f"concatenate(axis={axis}){shapes}", lambda *xs, a=axis: dg.concatenate(xs, axis=a),
         lambda *xs, a=axis: np.concatenate(xs, axis=a),
         lambda torch, *xs, a=axis: torch.cat(xs, dim=a), shapes, group="join")
for n, axis in ((2, 0), (3, 1), (2, -1), (2, -2)):
    _row(f"stack(axis={axis})x{n}", lambda *xs, a=axis: dg.stack(xs, axis=a),
         lambda *xs, a=axis: np.stack(xs, axis=a),
         lambda torch, *xs, a=axis: torch.stack(xs, dim=a), ((2, 3),) * n, group="join")

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
    _row(f"matmul.{label}", lambda x, y: x @ y, np.matmul, lambda torch, x, y: x @ y, (sx, sy),
         group="matmul")
_row("matmul.function", lambda x, y: dg.matmul(x, y), np.matmul, lambda torch, x, y: torch.matmul(x, y),
     ((2, 3), (3, 2)), group="matmul")

SPECS_BY_NAME: dict[str, OpSpec] = {s.name: s for s in OP_SPECS}
assert len(SPECS_BY_NAME) == len(OP_SPECS), "spec names must be unique"
