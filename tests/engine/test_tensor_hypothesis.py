"""Property-based broadcasting: random pairs of shapes that broadcast, every binary op,
and random axes for every op with an axis.

For each generated pair the gradient must have its input's shape, and its values must
equal the NumPy closed form: the elementwise partial derivative times the cotangent,
scattered back onto the input with ``np.add.at`` through the broadcast index map (a
different route from test_tensor_broadcast.py's reductions, and from the engine's).
For each op of specs.AXIS_OPS (sum, mean, max, ..., cumsum) and random shapes, axes and
keepdims, the value must equal NumPy's and the gradient the op's closed form.
The ops and their derivatives come from specs.BINARY_OPS and specs.AXIS_OPS.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duograd as dg
from specs import AXIS_OPS, BINARY_OPS, draw

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def broadcastable_pair(draw, max_ndim: int = 4, max_side: int = 4):
    """Two shapes that broadcast: cut from one full shape, each dropping some leading
    axes and setting some of the remaining ones to 1."""
    full = draw(st.lists(st.integers(1, max_side), min_size=0, max_size=max_ndim))
    shapes = []
    for _ in range(2):
        drop = draw(st.integers(0, len(full)))
        kept = full[drop:]
        ones = draw(st.lists(st.booleans(), min_size=len(kept), max_size=len(kept)))
        shapes.append(tuple(1 if one else n for n, one in zip(kept, ones)))
    return tuple(shapes)


def scatter_back(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Add every element of ``a`` onto the element of a ``shape`` array it was copied from."""
    if shape == ():
        return np.array(a.sum())  # every element came from the single one
    out = np.zeros(shape)
    lead = a.ndim - len(shape)
    index = np.indices(a.shape)
    source = tuple(index[lead + d] if n != 1 else np.zeros_like(index[lead + d])
                   for d, n in enumerate(shape))
    np.add.at(out, source, a)
    return out


@pytest.mark.parametrize("op", list(BINARY_OPS))
@SETTINGS
@given(shapes=broadcastable_pair(), seed=st.integers(0, 2 ** 16))
def test_broadcast_gradient_property(op, shapes, seed):
    sx, sy = shapes
    spec = BINARY_OPS[op]
    x, y = draw([sx, sy], spec.domains, np.random.default_rng(seed))  # DISTINCT: never a tie
    out_shape = np.broadcast_shapes(sx, sy)
    rng = np.random.default_rng(seed + 1)
    c = rng.random(out_shape) > 0.5
    G = rng.standard_normal(out_shape)
    f, partials = spec.fn, spec.partials

    tx, ty = dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)
    out = f(tx, ty, c)
    assert out.shape == out_shape
    out.backward(G)
    dx, dy = partials(np.broadcast_to(x, out_shape), np.broadcast_to(y, out_shape), c)
    for t, d, shape in ((tx, dx, sx), (ty, dy, sy)):
        assert t.grad.shape == shape
        np.testing.assert_allclose(t.grad.numpy(), scatter_back(G * d, shape), rtol=1e-10, atol=1e-12)


@SETTINGS
@given(shapes=broadcastable_pair(max_ndim=3), seed=st.integers(0, 2 ** 16),
       m=st.integers(1, 3), k=st.integers(1, 3), n=st.integers(1, 3))
def test_matmul_batch_broadcast_property(shapes, seed, m, k, n):
    """Batched matmul over random broadcast batch shapes, against einsum + scatter."""
    bx, by = shapes
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(bx + (m, k)), rng.standard_normal(by + (k, n))
    tx, ty = dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)
    out = tx @ ty
    batch = np.broadcast_shapes(bx, by)
    assert out.shape == batch + (m, n)
    G = rng.standard_normal(out.shape)
    out.backward(G)
    yb, xb = np.broadcast_to(y, batch + (k, n)), np.broadcast_to(x, batch + (m, k))
    gx = scatter_back(np.einsum("...ij,...kj->...ik", G, yb), x.shape)
    gy = scatter_back(np.einsum("...ki,...kj->...ij", xb, G), y.shape)
    assert tx.grad.shape == x.shape and ty.grad.shape == y.shape
    np.testing.assert_allclose(tx.grad.numpy(), gx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ty.grad.numpy(), gy, rtol=1e-10, atol=1e-12)


@st.composite
def shape_and_axes(draw_, one_axis: bool = False):
    """A shape, an axis argument (None, an int, possibly negative, or a tuple, possibly
    empty; one int only when ``one_axis``) and keepdims."""
    shape = tuple(draw_(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    nd = len(shape)
    kind = "int" if one_axis else draw_(st.sampled_from(["None", "int", "tuple"]))
    if kind == "None":
        axis = None
    elif kind == "int":
        axis = draw_(st.integers(-nd, nd - 1))
    else:
        axis = tuple(draw_(st.lists(st.integers(-nd, nd - 1), unique_by=lambda a: a % nd)))
    return shape, axis, draw_(st.booleans())


@pytest.mark.parametrize("name", list(AXIS_OPS))
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2 ** 16))
def test_axis_op_gradient_property(name, data, seed):
    """Random shapes, axes and keepdims: the value is NumPy's, the gradient has the input's
    shape and equals the op's closed form (for sum: the cotangent copied back along the
    reduced axes; for mean: divided by the count; ...)."""
    op = AXIS_OPS[name]
    shape, axis, keepdims = data.draw(shape_and_axes(one_axis=op.one_axis))
    keepdims = keepdims and op.keepdims
    rng = np.random.default_rng(seed)
    (x,) = draw([shape], [op.domain], rng)  # max and min: DISTINCT, never a tie
    want = np.asarray(op.ref(x, axis, keepdims))
    G = rng.standard_normal(want.shape)
    t = dg.tensor(x, requires_grad=True)
    out = op.fn(t, axis, keepdims)
    assert out.shape == want.shape
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    out.backward(G)
    assert t.grad.shape == shape
    np.testing.assert_allclose(t.grad.numpy(), op.grad(x, axis, keepdims, G), rtol=1e-12, atol=1e-12)
