"""The broadcasting adjoint, pattern by pattern.

Broadcasting copies an operand along new or size-1 axes; its adjoint sums the
gradient back over exactly those axes. A wrong adjoint still trains (a bias gradient
64x too small, or one with the output's shape), so every test here asserts BOTH the
gradient's shape AND its values, against two independent answers computed in NumPy
only: the closed form (elementwise partial derivative times the cotangent, summed
over the broadcast axes with NumPy's own reductions) and central finite differences
of the NumPy reference.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from specs import BINARY_OPS, draw

# ---------------------------------------------------------------- NumPy-only helpers


def sum_to_shape(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` created."""
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead)))
    return a.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


def numeric_grad(f, arrays, G, i, h=1e-6):
    """d/d(arrays[i]) of sum(G * f(*arrays)) by central differences, NumPy only."""
    x = np.array(arrays[i], dtype=np.float64)
    out = np.zeros_like(x)
    for e in np.ndindex(*x.shape):
        vals = []
        for step in (h, -h):
            moved = x.copy()
            moved[e] += step
            args = list(arrays)
            args[i] = moved
            vals.append(np.sum(G * f(*args)))
        out[e] = (vals[0] - vals[1]) / (2 * h)
    return out


def check_grad(t: dg.Tensor, want: np.ndarray, numeric: np.ndarray | None = None):
    assert t.grad is not None
    assert t.grad.shape == t.shape, f"gradient shape {t.grad.shape} != input shape {t.shape}"
    assert t.grad.dtype == t.dtype
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-12, atol=1e-12)
    if numeric is not None:
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- the binary ops
# Every binary elementwise op of specs.BINARY_OPS (its duograd and NumPy forms, its
# partial derivatives in NumPy and its domains), through every pattern below.

PATTERNS = {
    "0-d tensor with matrix": ((), (3, 4)),
    "matrix with 0-d tensor": ((3, 4), ()),
    "bias (64,10) with row (10,)": ((64, 10), (10,)),
    "row (10,) with (64,10)": ((10,), (64, 10)),
    "column (64,1) with (64,10)": ((64, 1), (64, 10)),
    "(4,3,5) with size-1 middle axis (4,1,5)": ((4, 3, 5), (4, 1, 5)),
    "rank difference 1": ((2, 3, 4), (3, 4)),
    "rank difference 2": ((4,), (2, 3, 4)),
    "rank difference 3": ((2, 3, 2, 4), (4,)),
    "rank difference 3 onto a size-1 axis": ((1,), (2, 2, 3, 4)),
    "both broadcast (3,1) with (1,4)": ((3, 1), (1, 4)),
    "both broadcast, different ranks (2,1,4) with (3,1)": ((2, 1, 4), (3, 1)),
    "same shape (no broadcast)": ((3, 4), (3, 4)),
}

CASES = [(op, pat) for op in BINARY_OPS for pat in PATTERNS]


def setup_binary(op: str, sx, sy, seed: int = 0):
    spec = BINARY_OPS[op]
    rng = np.random.default_rng(seed)
    x, y = draw([sx, sy], spec.domains, rng)
    out_shape = np.broadcast_shapes(sx, sy)
    c = rng.random(out_shape) > 0.5
    G = rng.standard_normal(out_shape)
    return spec.fn, spec.ref, spec.partials, x, y, c, G


@pytest.mark.parametrize("op, pattern", CASES, ids=[f"{o} | {p}" for o, p in CASES])
def test_binary_broadcast_gradient(op, pattern):
    sx, sy = PATTERNS[pattern]
    f, ref, partials, x, y, c, G = setup_binary(op, sx, sy)
    tx, ty = dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)
    out = f(tx, ty, c)
    assert out.shape == G.shape
    np.testing.assert_allclose(out.detach().numpy(), ref(x, y, c), rtol=1e-13)
    out.backward(G)

    xb, yb = np.broadcast_to(x, G.shape), np.broadcast_to(y, G.shape)
    dx, dy = partials(xb, yb, c)
    check_grad(tx, sum_to_shape(G * dx, sx), numeric_grad(lambda a, b: ref(a, b, c), [x, y], G, 0))
    check_grad(ty, sum_to_shape(G * dy, sy), numeric_grad(lambda a, b: ref(a, b, c), [x, y], G, 1))


def test_bias_gradient_is_64_times_the_row_value():
    """d/db sum(x + b) over 64 rows is 64 for every entry: not 1, and not shape (64, 10)."""
    x = dg.tensor(np.random.default_rng(0).standard_normal((64, 10)), requires_grad=True)
    b = dg.tensor(np.zeros(10), requires_grad=True)
    (x + b).sum().backward()
    assert b.grad.shape == (10,)
    np.testing.assert_array_equal(b.grad.numpy(), np.full(10, 64.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((64, 10)))


def test_bias_of_a_linear_layer():
    """relu(x @ W + b): the bias gradient is the column sums of the masked cotangent."""
    rng = np.random.default_rng(1)
    xv, Wv, bv = rng.standard_normal((64, 5)), rng.standard_normal((5, 10)), rng.standard_normal(10)
    x, W, b = (dg.tensor(v, requires_grad=True) for v in (xv, Wv, bv))
    G = rng.standard_normal((64, 10))
    (x @ W + b).relu().backward(G)
    masked = G * (xv @ Wv + bv > 0)
    check_grad(b, masked.sum(axis=0))
    check_grad(W, xv.T @ masked)
    check_grad(x, masked @ Wv.T)


# ---------------------------------------------------------------- Python numbers and NumPy arrays

NUMBER = 0.37  # not on the DISTINCT grid, so maximum/minimum never tie with it


@pytest.mark.parametrize("side", ["tensor op number", "number op tensor"])
@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_python_number_operand(op, side):
    f, ref, partials, x, y, c, G = setup_binary(op, (3, 4), (3, 4), seed=3)
    free = x if side == "tensor op number" else y
    assert np.all(free != NUMBER)
    t = dg.tensor(free, requires_grad=True)
    if side == "tensor op number":
        out, want_out = f(t, NUMBER, c), ref(free, NUMBER, c)
        d = partials(free, np.full_like(free, NUMBER), c)[0]
        numeric = numeric_grad(lambda a: ref(a, NUMBER, c), [free], G, 0)
    else:
        out, want_out = f(NUMBER, t, c), ref(NUMBER, free, c)
        d = partials(np.full_like(free, NUMBER), free, c)[1]
        numeric = numeric_grad(lambda a: ref(NUMBER, a, c), [free], G, 0)
    assert isinstance(out, dg.Tensor)
    np.testing.assert_allclose(out.detach().numpy(), want_out, rtol=1e-13)
    out.backward(G)
    check_grad(t, G * d, numeric)


@pytest.mark.parametrize("side", ["tensor op array", "array op tensor"])
@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_numpy_array_operand_broadcasts(op, side):
    """A NumPy array on either side, with a tensor of shape (4,) broadcast against (3, 4)."""
    if side == "tensor op array":
        f, ref, partials, x, y, c, G = setup_binary(op, (4,), (3, 4), seed=4)
        t = dg.tensor(x, requires_grad=True)
        out = f(t, y, c)
        d = partials(np.broadcast_to(x, G.shape), y, c)[0]
        numeric = numeric_grad(lambda a: ref(a, y, c), [x], G, 0)
    else:
        f, ref, partials, x, y, c, G = setup_binary(op, (3, 4), (4,), seed=4)
        t = dg.tensor(y, requires_grad=True)
        out = f(x, t, c)  # numpy on the left: Tensor.__array_ufunc__ = None hands over to Tensor
        d = partials(x, np.broadcast_to(y, G.shape), c)[1]
        numeric = numeric_grad(lambda b: ref(x, b, c), [y], G, 0)
    assert isinstance(out, dg.Tensor), type(out)
    np.testing.assert_allclose(out.detach().numpy(), ref(x, y, c), rtol=1e-13)
    out.backward(G)
    check_grad(t, sum_to_shape(G * d, t.shape), numeric)


REFLECTED = {
    "np_array + tensor": (lambda a, t: a + t, lambda a, x: a + x, lambda a, x: np.ones_like(a + x)),
    "np_array - tensor": (lambda a, t: a - t, lambda a, x: a - x, lambda a, x: -np.ones_like(a + x)),
    "np_array * tensor": (lambda a, t: a * t, lambda a, x: a * x, lambda a, x: a + 0 * x),
    "np_array / tensor": (lambda a, t: a / t, lambda a, x: a / x, lambda a, x: -a / x ** 2),
    "np_array ** tensor": (lambda a, t: np.abs(a) ** t, lambda a, x: np.abs(a) ** x,
                           lambda a, x: np.abs(a) ** x * np.log(np.abs(a))),
    "2 + tensor": (lambda a, t: 2 + t, lambda a, x: 2 + x, lambda a, x: np.ones_like(x)),
    "2 - tensor": (lambda a, t: 2 - t, lambda a, x: 2 - x, lambda a, x: -np.ones_like(x)),
    "2 * tensor": (lambda a, t: 2 * t, lambda a, x: 2 * x, lambda a, x: np.full_like(x, 2.0)),
    "2 / tensor": (lambda a, t: 2 / t, lambda a, x: 2 / x, lambda a, x: -2 / x ** 2),
    "2 ** tensor": (lambda a, t: 2 ** t, lambda a, x: 2.0 ** x, lambda a, x: 2.0 ** x * np.log(2.0)),
}


@pytest.mark.parametrize("form", list(REFLECTED))
def test_reflected_forms(form):
    f, ref, d = REFLECTED[form]
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 2.0, (2, 3, 4))      # the NumPy operand (broadcast shape)
    x = rng.uniform(0.5, 2.0, (3, 4))         # the tensor, broadcast along a new axis
    t = dg.tensor(x, requires_grad=True)
    out = f(a, t)
    assert isinstance(out, dg.Tensor)
    want = ref(a, x)
    assert out.shape == np.shape(want)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-13)
    G = rng.standard_normal(out.shape)
    out.backward(G)
    numeric = numeric_grad(lambda v: ref(a, v), [x], G, 0)
    check_grad(t, sum_to_shape(G * np.broadcast_to(d(a, x), G.shape), x.shape), numeric)


def test_numpy_matrix_at_tensor():
    rng = np.random.default_rng(6)
    A, x = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    t = dg.tensor(x, requires_grad=True)
    out = A @ t
    assert isinstance(out, dg.Tensor)
    G = rng.standard_normal((2, 4))
    out.backward(G)
    check_grad(t, A.T @ G, numeric_grad(lambda v: A @ v, [x], G, 0))


def test_where_condition_adds_a_rank():
    """cond of shape (2,3,4) with x, y of shape (3,4): both gradients are summed over axis 0."""
    rng = np.random.default_rng(7)
    c = rng.random((2, 3, 4)) > 0.5
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    tx, ty = dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)
    out = dg.where(c, tx, ty)
    assert out.shape == (2, 3, 4)
    G = rng.standard_normal(out.shape)
    out.backward(G)
    check_grad(tx, (G * c).sum(axis=0))
    check_grad(ty, (G * ~c).sum(axis=(0, 1)))


def test_one_leaf_broadcast_against_itself():
    """x * x.T with x of shape (3,1): d/dx_k sum(G * x_i x_j) = (G + G^T)[k] . x."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 1))
    t = dg.tensor(x, requires_grad=True)
    G = rng.standard_normal((3, 3))
    (t * t.T).backward(G)
    check_grad(t, (G + G.T) @ x, numeric_grad(lambda v: v * v.T, [x], G, 0))


def test_one_leaf_in_two_different_broadcasts():
    """b (4,) enters once against (3,4) and once against (2,1,4): the two sums add up."""
    rng = np.random.default_rng(9)
    b = rng.standard_normal(4)
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((2, 1, 4))
    t = dg.tensor(b, requires_grad=True)
    ((A * t).sum() + (B + t).exp().sum()).backward()
    want = A.sum(axis=0) + np.exp(B + b).sum(axis=(0, 1))
    check_grad(t, want)


# ---------------------------------------------------------------- matmul


def matmul_grads(x: np.ndarray, y: np.ndarray, G: np.ndarray):
    """The closed-form gradients of sum(G * (x @ y)) for 2-D-or-more operands,
    summed over broadcast batch axes."""
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    xb = np.broadcast_to(x, batch + x.shape[-2:])
    yb = np.broadcast_to(y, batch + y.shape[-2:])
    gx = np.einsum("...ij,...kj->...ik", G, yb)
    gy = np.einsum("...ki,...kj->...ij", xb, G)
    return sum_to_shape(gx, x.shape), sum_to_shape(gy, y.shape)


@pytest.mark.parametrize("sx, sy", [((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)),
                                    ((2, 3, 4), (4, 5)), ((1, 2, 3), (4, 3, 2))],
                         ids=["(2,1,3,4)@(5,4,6)", "(3,4)@(2,4,5)", "(2,3,4)@(4,5)", "(1,2,3)@(4,3,2)"])
def test_matmul_broadcast_batch_dims(sx, sy):
    rng = np.random.default_rng(10)
    x, y = rng.standard_normal(sx), rng.standard_normal(sy)
    tx, ty = dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)
    out = tx @ ty
    want = np.matmul(x, y)
    assert out.shape == want.shape
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    G = rng.standard_normal(want.shape)
    out.backward(G)
    gx, gy = matmul_grads(x, y, G)
    check_grad(tx, gx, numeric_grad(np.matmul, [x, y], G, 0))
    check_grad(ty, gy, numeric_grad(np.matmul, [x, y], G, 1))


# (shape of x, shape of y, closed-form gradients of sum(G * (x @ y)) via einsum)
ONE_D = {
    "(k,)@(k,)": ((3,), (3,), lambda x, y, G: (G * y, G * x)),
    "(k,)@(k,n)": ((3,), (3, 4), lambda x, y, G: (np.einsum("kn,n->k", y, G), np.einsum("k,n->kn", x, G))),
    "(m,k)@(k,)": ((2, 3), (3,), lambda x, y, G: (np.einsum("m,k->mk", G, y), np.einsum("mk,m->k", x, G))),
    "(k,)@(b,k,n)": ((3,), (2, 3, 4),
                     lambda x, y, G: (np.einsum("bkn,bn->k", y, G), np.einsum("k,bn->bkn", x, G))),
    "(b,m,k)@(k,)": ((2, 2, 3), (3,),
                     lambda x, y, G: (np.einsum("bm,k->bmk", G, y), np.einsum("bmk,bm->k", x, G))),
}


@pytest.mark.parametrize("case", list(ONE_D))
def test_matmul_one_dimensional_cases(case):
    sx, sy, closed = ONE_D[case]
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(sx), rng.standard_normal(sy)
    tx, ty = dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)
    out = dg.matmul(tx, ty)
    want = np.matmul(x, y)
    assert out.shape == want.shape
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    G = np.asarray(rng.standard_normal(want.shape))
    out.backward(G)
    gx, gy = closed(x, y, G)
    check_grad(tx, gx, numeric_grad(np.matmul, [x, y], G, 0))
    check_grad(ty, gy, numeric_grad(np.matmul, [x, y], G, 1))


# ---------------------------------------------------------------- broadcast_to


@pytest.mark.parametrize("src, dst", [((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), (2, 3)),
                                      ((2, 1, 3), (2, 4, 3)), ((1, 1), (1, 5))])
def test_broadcast_to_gradient(src, dst):
    rng = np.random.default_rng(12)
    x = rng.standard_normal(src)
    t = dg.tensor(x, requires_grad=True)
    out = t.broadcast_to(dst)
    assert out.shape == dst
    np.testing.assert_array_equal(out.detach().numpy(), np.broadcast_to(x, dst))
    G = rng.standard_normal(dst)
    out.backward(G)
    check_grad(t, sum_to_shape(G, src), numeric_grad(lambda v: np.broadcast_to(v, dst), [x], G, 0))
