"""Property-based broadcasting: random pairs of shapes that broadcast, every binary op.

For each generated pair the gradient must have its input's shape, and its values must
equal the NumPy closed form: the elementwise partial derivative times the cotangent,
scattered back onto the input with ``np.add.at`` through the broadcast index map (a
different route from test_tensor_broadcast.py's reductions, and from the engine's).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duograd as dg

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


# name: (duograd, (d/dx, d/dy) in NumPy on the broadcast arrays, how to make y)
OPS = {
    "+": (lambda x, y, c: x + y, lambda x, y, c: (np.ones_like(x), np.ones_like(y))),
    "-": (lambda x, y, c: x - y, lambda x, y, c: (np.ones_like(x), -np.ones_like(y))),
    "*": (lambda x, y, c: x * y, lambda x, y, c: (y, x)),
    "/": (lambda x, y, c: x / y, lambda x, y, c: (1 / y, -x / y ** 2)),
    "maximum": (lambda x, y, c: dg.maximum(x, y), lambda x, y, c: (1.0 * (x > y), 1.0 * (y > x))),
    "minimum": (lambda x, y, c: dg.minimum(x, y), lambda x, y, c: (1.0 * (x < y), 1.0 * (y < x))),
    "where": (lambda x, y, c: dg.where(c, x, y), lambda x, y, c: (1.0 * c, 1.0 * ~c)),
    "**": (lambda x, y, c: x ** y, lambda x, y, c: (y * x ** (y - 1), x ** y * np.log(x))),
}


def operands(op: str, sx, sy, seed: int):
    rng = np.random.default_rng(seed)
    if op in ("maximum", "minimum"):  # all values distinct: no ties, so the gradient is 0/1
        vals = rng.permutation(int(np.prod(sx)) + int(np.prod(sy))) * 0.25 - 1.0
        return vals[:int(np.prod(sx))].reshape(sx), vals[int(np.prod(sx)):].reshape(sy)
    x = rng.uniform(0.5, 2.0, sx) if op == "**" else rng.standard_normal(sx)
    if op == "/":
        y = rng.uniform(0.5, 2.0, sy) * rng.choice([-1.0, 1.0], sy)
    else:
        y = rng.standard_normal(sy)
    return x, y


@pytest.mark.parametrize("op", list(OPS))
@SETTINGS
@given(shapes=broadcastable_pair(), seed=st.integers(0, 2 ** 16))
def test_broadcast_gradient_property(op, shapes, seed):
    sx, sy = shapes
    x, y = operands(op, sx, sy, seed)
    out_shape = np.broadcast_shapes(sx, sy)
    rng = np.random.default_rng(seed + 1)
    c = rng.random(out_shape) > 0.5
    G = rng.standard_normal(out_shape)
    f, partials = OPS[op]

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
def shape_and_axes(draw):
    """A shape, an axis argument (None, an int, possibly negative, or a tuple, possibly
    empty) and keepdims."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    nd = len(shape)
    kind = draw(st.sampled_from(["None", "int", "tuple"]))
    if kind == "None":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axis = tuple(draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda a: a % nd)))
    return shape, axis, draw(st.booleans())


@SETTINGS
@given(case=shape_and_axes(), seed=st.integers(0, 2 ** 16))
def test_sum_and_mean_gradient_property(case, seed):
    """sum and mean over random axes: the gradient is the cotangent copied back along the
    reduced axes (divided by the count for mean)."""
    shape, axis, keepdims = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    want_sum = np.sum(x, axis=axis, keepdims=keepdims)
    G = rng.standard_normal(np.shape(want_sum))
    axes = tuple(range(len(shape))) if axis is None else tuple(
        a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis))
    G_kept = G.reshape([1 if i in axes else s for i, s in enumerate(shape)])
    count = int(np.prod([shape[a] for a in axes]))
    for name, scale in (("sum", 1.0), ("mean", 1.0 / count)):
        t = dg.tensor(x, requires_grad=True)
        out = getattr(t, name)(axis, keepdims)
        assert out.shape == np.shape(want_sum)
        np.testing.assert_allclose(out.numpy(), want_sum * scale, rtol=1e-12, atol=1e-12)
        out.backward(G)
        assert t.grad.shape == shape
        np.testing.assert_allclose(t.grad.numpy(), np.broadcast_to(G_kept * scale, shape), rtol=1e-12)
