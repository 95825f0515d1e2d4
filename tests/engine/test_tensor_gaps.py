"""Checks that close the gaps a mutation run found (issue 9, section 6).

Each test pins a behaviour that no other test pinned, or gives a behaviour that hung
on a single test a second, independent check. Every expectation comes from outside
the engine: values derived by hand, NumPy, central differences, or PyTorch (marked
``oracle``). Only the public API is used.

- clip at its bounds (PyTorch's inclusive rule), first and second order and forward mode;
- the cotangent cast back to its input's dtype across a float32/float64 edge, at first
  and second order;
- gradcheck comparing every Jacobian entry (an error at the last element, and one off
  the diagonal of a two-output function) and honouring its tolerances;
- second derivatives through every linear op, where the cotangent depends on the input
  (a rule detached from its cotangent passes every first-order check but fails these);
- maximum/minimum's tie split against hand values, torch and forward mode;
- the scalar engines' gradient accumulation against hand values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg
from duograd.func import hvp, jvp
from duograd.scalar import Value
from duograd.scalar.higher import Var
from duograd.scalar.higher import grad as var_grad

LO, HI = -0.5, 0.5
# On both bounds exactly, strictly outside each, and inside.
CLIP_X = np.array([LO, HI, -0.7, 0.7, 0.0, 0.25])
CLIP_PASSES = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 1.0])   # torch.clamp: lo <= x <= hi passes


# ---------------------------------------------------------------- clip at its bounds

def test_clip_passes_the_gradient_at_both_bounds():
    x = dg.tensor(CLIP_X, requires_grad=True)
    y = x.clip(LO, HI)
    np.testing.assert_array_equal(y.detach().numpy(), np.clip(CLIP_X, LO, HI))
    u = np.arange(1.0, 7.0)                      # a cotangent with no two entries alike
    y.backward(u)
    np.testing.assert_array_equal(x.grad.numpy(), u * CLIP_PASSES)


@pytest.mark.parametrize("lo, hi, want", [
    (0.0, None, [1.0, 1.0, 0.0]),    # clip(lo=0) at 0 passes the gradient (unlike relu)
    (None, 0.0, [1.0, 0.0, 1.0]),
])
def test_one_sided_clip_includes_its_bound(lo, hi, want):
    x = dg.tensor([0.0, 1.0, -1.0], requires_grad=True)
    x.clip(lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_clip_second_order_at_the_bounds():
    """f = sum(clip(x)^2): f' = 2 clip(x) [lo <= x <= hi], f'' = 2 [lo <= x <= hi]."""
    x = dg.tensor(CLIP_X, requires_grad=True)
    (gx,) = dg.grad((x.clip(LO, HI) ** 2).sum(), x, create_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), 2 * np.clip(CLIP_X, LO, HI) * CLIP_PASSES)
    (gxx,) = dg.grad(gx.sum(), x)
    np.testing.assert_array_equal(gxx.numpy(), 2 * CLIP_PASSES)


def test_clip_forward_mode_at_the_bounds():
    t = np.arange(1.0, 7.0)
    _, tout = jvp(lambda x: x.clip(LO, HI), (dg.tensor(CLIP_X),), (dg.tensor(t),))
    np.testing.assert_array_equal(tout.numpy(), t * CLIP_PASSES)


@pytest.mark.oracle
def test_clip_at_the_bounds_matches_torch_clamp(torch):
    x = dg.tensor(CLIP_X, requires_grad=True)
    tx = torch.tensor(CLIP_X, dtype=torch.float64, requires_grad=True)
    (gx,) = dg.grad((x.clip(LO, HI) ** 2).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad((tx.clamp(LO, HI) ** 2).sum(), tx, create_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), tgx.detach().numpy())
    (gxx,) = dg.grad(gx.sum(), x)
    (tgxx,) = torch.autograd.grad(tgx.sum(), tx)
    np.testing.assert_array_equal(gxx.numpy(), tgxx.numpy())


# ---------------------------------------------------------------- the cotangent's dtype

X32 = np.array([0.5, -1.25, 2.0], dtype=np.float32)
Y64 = np.array([1.5, 0.75, -0.3])


def test_mixed_product_casts_each_gradient_to_its_input():
    x = dg.tensor(X32, requires_grad=True)
    y = dg.tensor(Y64, requires_grad=True)
    out = (x * y).sum()
    assert out.dtype == np.float64
    out.backward()
    assert x.grad.dtype == np.float32 and y.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), Y64.astype(np.float32))
    np.testing.assert_array_equal(y.grad.numpy(), X32.astype(np.float64))


def test_mixed_product_through_grad_casts_too():
    x = dg.tensor(X32, requires_grad=True)
    y = dg.tensor(Y64, requires_grad=True)
    gx, gy = dg.grad((x * y * y).sum(), [x, y])
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    np.testing.assert_allclose(gx.numpy(), Y64 ** 2, rtol=1e-7)
    np.testing.assert_allclose(gy.numpy(), 2 * X32.astype(np.float64) * Y64, rtol=1e-15)


def test_upcast_then_float64_computation_gives_a_float32_gradient():
    x = dg.tensor(X32, requires_grad=True)
    x64 = x.astype(np.float64)
    assert x64.dtype == np.float64
    (x64.sin() * x64).sum().backward()
    assert x.grad.dtype == np.float32
    xd = X32.astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xd) * xd + np.sin(xd), rtol=1e-6)


def test_downcast_then_float32_computation_gives_a_float64_gradient():
    y = dg.tensor(Y64, requires_grad=True)
    (y.astype(np.float32) ** 2).sum().backward()
    assert y.grad.dtype == np.float64
    np.testing.assert_allclose(y.grad.numpy(), 2 * Y64, rtol=1e-6)


def test_mixed_dtypes_at_second_order():
    """f = sum(x^3 y) with x float32, y float64, at first and second order."""
    x = dg.tensor(X32, requires_grad=True)
    y = dg.tensor(Y64, requires_grad=True)
    xd = X32.astype(np.float64)
    gx, gy = dg.grad((x.astype(np.float64) ** 3 * y).sum(), [x, y], create_graph=True)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    assert gx.requires_grad and gy.requires_grad
    np.testing.assert_allclose(gx.detach().numpy(), 3 * xd ** 2 * Y64, rtol=1e-6)
    np.testing.assert_allclose(gy.detach().numpy(), xd ** 3, rtol=1e-6)

    gxx, gxy = dg.grad(gx.sum(), [x, y], retain_graph=True)   # d/dx, d/dy of sum(3 x^2 y)
    assert gxx.dtype == np.float32 and gxy.dtype == np.float64
    np.testing.assert_allclose(gxx.numpy(), 6 * xd * Y64, rtol=1e-6)
    np.testing.assert_allclose(gxy.numpy(), 3 * xd ** 2, rtol=1e-6)

    gyx, gyy = dg.grad(gy.sum(), [x, y], allow_unused=True)   # d/dx, d/dy of sum(x^3)
    assert gyx.dtype == np.float32
    np.testing.assert_allclose(gyx.numpy(), 3 * xd ** 2, rtol=1e-6)
    assert gyy is None or not np.any(gyy.numpy())


def test_mixed_dtypes_backward_with_create_graph_accumulates_in_each_dtype():
    x = dg.tensor(X32, requires_grad=True)
    y = dg.tensor(Y64, requires_grad=True)
    (x * y * y).sum().backward(create_graph=True)
    assert x.grad.dtype == np.float32 and y.grad.dtype == np.float64
    gx = x.grad
    x.grad = y.grad = None
    gx.sum().backward()                             # d/dy sum(y^2) = 2 y; x does not appear
    assert y.grad.dtype == np.float64
    np.testing.assert_allclose(y.grad.numpy(), 2 * Y64, rtol=1e-7)


# ---------------------------------------------------------------- gradcheck sees every entry

XG = np.array([[0.3, -1.2, 0.8], [1.1, 0.5, -0.7]])


def _square(last_factor: float) -> dg.Primitive:
    """x^2 elementwise whose VJP is off by ``last_factor`` at the last element only."""
    w = np.ones(XG.shape)
    w[-1, -1] = last_factor
    return dg.Primitive("square_off_at_last", forward=lambda x: x * x,
                        vjp=(lambda g, out, x: g * 2 * x * w,))


def _mix(off_diagonal: float) -> dg.Primitive:
    """x -> A x for a (2,) input and a (2,) output, VJP g -> g B with B = A except
    B[0, 1] = ``off_diagonal``: wrong only in d out_0 / d x_1 when off_diagonal != 2."""
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = a.copy()
    b[0, 1] = off_diagonal
    return dg.Primitive("mix", forward=lambda x: a @ x,
                        vjp=(lambda g, out, x: g @ dg.tensor(b),))


def test_gradcheck_accepts_the_correct_rules():
    assert dg.gradcheck(_square(1.0), (dg.tensor(XG, requires_grad=True),))
    assert dg.gradcheck(_mix(2.0), (dg.tensor([0.4, -0.9], requires_grad=True),))


def test_gradcheck_catches_an_error_at_the_last_element():
    with pytest.raises(dg.GradcheckError) as info:
        dg.gradcheck(_square(1.01), (dg.tensor(XG, requires_grad=True),))
    msg = str(info.value)
    assert "(1, 2)" in msg, msg                    # the input element at fault
    assert "-1.4" in msg and "-1.414" in msg, msg  # numeric 2 * -0.7, analytic 1.01 times it


def test_gradcheck_catches_an_error_off_the_diagonal():
    with pytest.raises(dg.GradcheckError) as info:
        dg.gradcheck(_mix(2.5), (dg.tensor([0.4, -0.9], requires_grad=True),))
    msg = str(info.value)
    assert "(1,)" in msg, msg                      # input element 1 (of output element 0)
    assert "2.5" in msg, msg


def test_gradcheck_catches_an_error_in_the_second_input_only():
    """Only the second input's rule is wrong, at its last element."""
    w = np.array([1.0, 1.0, 0.98])
    op = dg.Primitive("mul_off", forward=np.multiply,
                      vjp=(lambda g, out, x, y: g * y, lambda g, out, x, y: g * x * w))
    x = dg.tensor([0.5, 1.5, -2.0], requires_grad=True)
    y = dg.tensor([1.0, -0.5, 3.0], requires_grad=True)
    with pytest.raises(dg.GradcheckError) as info:
        dg.gradcheck(op, (x, y))
    assert "input 1" in str(info.value), str(info.value)


def _cube(rel_error: float) -> dg.Primitive:
    return dg.Primitive("cube", forward=lambda x: x ** 3,
                        vjp=(lambda g, out, x: g * 3 * x ** 2 * (1 + rel_error),))


XC = np.array([0.9, -1.3, 2.1, 1.7])


@pytest.mark.parametrize("rel_error", [1e-2, -1e-2, 5e-3])
def test_gradcheck_rejects_a_relative_error_above_its_rtol(rel_error):
    with pytest.raises(dg.GradcheckError):
        dg.gradcheck(_cube(rel_error), (dg.tensor(XC, requires_grad=True),))


@pytest.mark.parametrize("rel_error", [0.0, 1e-9, -1e-9, 1e-5])
def test_gradcheck_accepts_an_error_within_its_tolerance(rel_error):
    assert dg.gradcheck(_cube(rel_error), (dg.tensor(XC, requires_grad=True),))


def test_gradcheck_honours_the_tolerances_it_is_given():
    x = (dg.tensor(XC, requires_grad=True),)
    assert dg.gradcheck(_cube(1e-2), x, rtol=2e-2)                 # looser: passes
    with pytest.raises(dg.GradcheckError):
        dg.gradcheck(_cube(1e-5), x, rtol=1e-7, atol=1e-9)         # tighter: fails
    # A pure absolute error at an entry that should be 0: atol decides.
    shifted = dg.Primitive("shifted", forward=lambda x: 2 * x,
                           vjp=(lambda g, out, x: g * 2 + 1e-4,))
    assert dg.gradcheck(shifted, x, atol=1e-3)
    with pytest.raises(dg.GradcheckError):
        dg.gradcheck(shifted, x, atol=1e-5, rtol=0.0)


def test_gradcheck_catches_a_nan_derivative():
    nan_rule = dg.Primitive("nan_rule", forward=lambda x: 2 * x,
                            vjp=(lambda g, out, x: g * (x * np.nan + 2),))
    with pytest.raises(dg.GradcheckError):
        dg.gradcheck(nan_rule, (dg.tensor(XC, requires_grad=True),))


# ---------------------------------------------------------------- second order through linear ops

RNG = np.random.default_rng(9)
XL = RNG.uniform(-1.0, 1.0, (3, 4))
VL = RNG.uniform(-1.0, 1.0, (3, 4))
C34 = RNG.uniform(-1.0, 1.0, (3, 4))
C43 = RNG.uniform(-1.0, 1.0, (4, 3))
C4 = RNG.uniform(-1.0, 1.0, 4)

# Each function puts a nonlinearity *after* a linear op, so the cotangent that reaches the
# linear op's rule depends on x: its second derivative flows only through that cotangent.
LINEAR_CASES = {
    "transpose": lambda x: (x.T * C43).tanh().sum(),
    "transpose_axes": lambda x: (x.transpose(1, 0) @ C34).tanh().sum(),
    "reshape": lambda x: (x.reshape(2, 6) * C34.reshape(2, 6)).tanh().sum(),
    "flatten": lambda x: (x.flatten() * C34.reshape(-1)).sin().sum(),
    "broadcast_to": lambda x: (x[0].broadcast_to((3, 4)) * C34).tanh().sum(),
    "sum_axis": lambda x: (x.sum(0) * C4).tanh().sum(),
    "sum_keepdims": lambda x: (x.sum(1, keepdims=True) * C34).tanh().sum(),
    "mean": lambda x: (x.mean(1) * 3).sin().sum(),
    "getitem_basic": lambda x: (x[1:, ::2] * 2).tanh().sum(),
    "getitem_array": lambda x: (x[[0, 2, 0]] * C34).tanh().sum(),
    "concatenate": lambda x: (dg.concatenate([x, x * 2], axis=1) * np.hstack([C34, C34])).tanh().sum(),
    "stack": lambda x: (dg.stack([x, x * 3], axis=0) * C34).tanh().sum(),
    "squeeze_unsqueeze": lambda x: (x.unsqueeze(0).squeeze(0) * C34).tanh().sum(),
    "neg_sub": lambda x: ((-x) - C34 * x).tanh().sum(),
    "add_broadcast": lambda x: (x + C4).tanh().sum(),
    "matmul": lambda x: (x @ C43).tanh().sum(),
    "matmul_right": lambda x: (C43 @ x).tanh().sum(),
    "astype": lambda x: (x.astype(np.float32).astype(np.float64) * C34).tanh().sum(),
    "issue_example": lambda w: (C34 @ w.T).tanh().sum(),   # X @ W.T, as in the issue
}


def _gradient(f, x: np.ndarray) -> np.ndarray:
    t = dg.tensor(x, requires_grad=True)
    f(t).backward()
    return t.grad.numpy()


@pytest.mark.parametrize("name", sorted(LINEAR_CASES))
def test_second_derivative_through_linear_op(name):
    """H v three ways: reverse over reverse, forward over reverse (func.hvp), and central
    differences of the first-order gradient (which a cotangent-detached rule gets right)."""
    f = LINEAR_CASES[name]
    x0, v = XL, VL
    # The float32 round trip is differentiated; its float64 twin gives the reference.
    ref = f if name != "astype" else (lambda x: (x * C34).tanh().sum())
    eps = 1e-5
    fd = (_gradient(ref, x0 + eps * v) - _gradient(ref, x0 - eps * v)) / (2 * eps)
    assert np.abs(fd).max() > 1e-3          # the case really has a second derivative

    x = dg.tensor(x0, requires_grad=True)
    (g,) = dg.grad(f(x), x, create_graph=True)
    (hv,) = dg.grad((g * dg.tensor(v)).sum(), x)
    tol = 1e-7 if name != "astype" else 1e-5
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-5, atol=tol)

    _, hv_fwd = hvp(f, dg.tensor(x0), dg.tensor(v))
    np.testing.assert_allclose(hv_fwd.numpy(), fd, rtol=1e-5, atol=tol)


def test_hessian_of_the_issue_example_against_central_differences():
    """func.hessian(lambda W: tanh(X @ W.T).sum()), summed, against finite differences."""
    f = LINEAR_CASES["issue_example"]
    h = dg.func.hessian(f)(dg.tensor(XL)).numpy().reshape(XL.size, XL.size)
    eps = 1e-5
    cols = []
    for k in range(XL.size):
        e = np.zeros(XL.size)
        e[k] = eps
        e = e.reshape(XL.shape)
        cols.append(((_gradient(f, XL + e) - _gradient(f, XL - e)) / (2 * eps)).reshape(-1))
    fd = np.stack(cols, axis=1)
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(h, h.T, atol=1e-12)
    assert abs(h.sum()) > 1e-3


# ---------------------------------------------------------------- maximum / minimum on a tie

A = np.array([1.0, 2.0, 3.0, -1.0])
B = np.array([1.0, 0.0, 3.0, 4.0])         # ties at 0 and 2
U = np.array([1.0, 2.0, 3.0, 5.0])


def test_maximum_tie_split_by_hand():
    a, b = dg.tensor(A, requires_grad=True), dg.tensor(B, requires_grad=True)
    dg.maximum(a, b).backward(U)
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 2.0, 1.5, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0, 1.5, 5.0])


def test_minimum_tie_split_by_hand():
    a, b = dg.tensor(A, requires_grad=True), dg.tensor(B, requires_grad=True)
    dg.minimum(a, b).backward(U)
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 0.0, 1.5, 5.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 2.0, 1.5, 0.0])


def test_tie_with_a_number_and_a_broadcast_operand():
    x = dg.tensor([2.0, 1.0, 3.0], requires_grad=True)
    dg.maximum(x, 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.0, 1.0])
    row = dg.tensor([1.0, 2.0], requires_grad=True)            # broadcast over 2 rows
    m = dg.tensor([[1.0, 5.0], [0.0, 2.0]], requires_grad=True)
    dg.minimum(m, row).sum().backward()
    np.testing.assert_array_equal(row.grad.numpy(), [0.5 + 0.0, 1.0 + 0.5])
    np.testing.assert_array_equal(m.grad.numpy(), [[0.5, 0.0], [1.0, 0.5]])


def test_tie_split_in_forward_mode():
    t_a, t_b = np.array([1.0, 1.0, 2.0, 1.0]), np.array([3.0, 1.0, 4.0, 1.0])
    _, tmax = jvp(dg.maximum, (dg.tensor(A), dg.tensor(B)), (dg.tensor(t_a), dg.tensor(t_b)))
    np.testing.assert_array_equal(tmax.numpy(), [2.0, 1.0, 3.0, 1.0])
    _, tmin = jvp(dg.minimum, (dg.tensor(A), dg.tensor(B)), (dg.tensor(t_a), dg.tensor(t_b)))
    np.testing.assert_array_equal(tmin.numpy(), [2.0, 1.0, 3.0, 1.0])


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_tie_split_matches_torch(torch, name):
    a, b = dg.tensor(A, requires_grad=True), dg.tensor(B, requires_grad=True)
    ta = torch.tensor(A, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(B, dtype=torch.float64, requires_grad=True)
    getattr(dg, name)(a, b).backward(U)
    getattr(torch, name)(ta, tb).backward(torch.tensor(U, dtype=torch.float64))
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())


# ---------------------------------------------------------------- scalar .grad accumulation

def test_scalar_second_backward_doubles_every_grad():
    x, y = Value(1.5), Value(-2.0)
    f = (x * y).tanh() + x
    f.backward()
    first = (x.grad, y.grad)
    sech2 = 1 - math.tanh(-3.0) ** 2
    assert first == pytest.approx((sech2 * -2.0 + 1.0, sech2 * 1.5), rel=1e-15)
    f.backward()
    assert (x.grad, y.grad) == (2 * first[0], 2 * first[1])


def test_scalar_node_used_twice_gets_the_sum():
    x = Value(3.0)
    (x * x).backward()
    assert x.grad == 6.0                         # 2x, not x
    z = Value(3.0)
    (z + z + z).backward()
    assert z.grad == 3.0


def test_scalar_diamond_sums_both_paths_at_every_node():
    x = Value(0.5)
    a = x * 2.0                                  # a = 1
    b = a.exp()
    c = a * a
    f = b + c                                    # df/da = e^a + 2a, df/dx = 2 (e + 2)
    f.backward()
    assert a.grad == pytest.approx(math.e + 2.0, rel=1e-15)
    assert x.grad == pytest.approx(2 * (math.e + 2.0), rel=1e-15)
    assert (b.grad, c.grad, f.grad) == (1.0, 1.0, 1.0)
    f.backward()
    assert x.grad == pytest.approx(4 * (math.e + 2.0), rel=1e-15)
    assert f.grad == 2.0


def test_scalar_backward_from_two_outputs_adds():
    x = Value(2.0)
    (x ** 3).backward()                          # 3 x^2 = 12
    x.sin().backward()                           # + cos 2
    assert x.grad == pytest.approx(12.0 + math.cos(2.0), rel=1e-15)


def test_higher_order_grad_sums_over_a_reused_node():
    x = Var(1.25)
    (d,) = var_grad(x * x * x + x, [x])          # 3 x^2 + 1
    assert d.data == pytest.approx(3 * 1.25 ** 2 + 1, rel=1e-15)
    (dd,) = var_grad(d, [x])                     # 6 x
    assert dd.data == pytest.approx(7.5, rel=1e-15)


# ---------------------------------------------------------------- softplus and cumsum by hand

def test_softplus_derivatives_by_hand():
    """softplus' = sigmoid, softplus'' = sigmoid (1 - sigmoid): 1/2 and 1/4 at 0."""
    xs = np.array([-2.0, 0.0, 3.0])
    x = dg.tensor(xs, requires_grad=True)
    (g,) = dg.grad(x.softplus().sum(), x, create_graph=True)
    s = 1 / (1 + np.exp(-xs))
    np.testing.assert_allclose(g.detach().numpy(), s, rtol=1e-15)
    assert g.detach().numpy()[1] == 0.5
    (gg,) = dg.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), s * (1 - s), rtol=1e-14)
    assert gg.numpy()[1] == 0.25


@pytest.mark.parametrize("axis, want", [
    (1, [[6.0, 5.0, 3.0], [15.0, 11.0, 6.0]]),    # each u summed from its position to the end
    (0, [[5.0, 7.0, 9.0], [4.0, 5.0, 6.0]]),
    (-1, [[6.0, 5.0, 3.0], [15.0, 11.0, 6.0]]),
])
def test_cumsum_gradient_by_hand(axis, want):
    x = dg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x.cumsum(axis).backward(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    np.testing.assert_array_equal(x.grad.numpy(), want)


# ---------------------------------------------------------------- forward mode: shapes, dtypes, values

def test_tangent_entering_through_a_broadcast_operand_has_the_output_shape():
    X = np.arange(12.0).reshape(3, 4)
    tb = np.array([1.0, -2.0, 0.5, 3.0])
    out, t = jvp(lambda b: dg.tensor(X) + b, (dg.tensor(np.zeros(4)),), (dg.tensor(tb),))
    assert t.shape == out.shape == (3, 4)
    np.testing.assert_array_equal(t.numpy(), np.broadcast_to(tb, (3, 4)))
    _, t0 = jvp(lambda s: s * 2.0 - dg.tensor(X), (dg.tensor(1.5),), (dg.tensor(1.0),))
    assert t0.shape == (3, 4)
    np.testing.assert_array_equal(t0.numpy(), np.full((3, 4), 2.0))


def test_jvp_tangent_takes_the_primal_dtype():
    x32 = dg.tensor(X32)
    t64 = dg.tensor(np.array([1.0, 0.1, -3.0]))
    _, t = jvp(lambda x: x, (x32,), (t64,))
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), np.array([1.0, 0.1, -3.0], dtype=np.float32))
    _, (ta, tb) = jvp(lambda x: (x, x * 2.0), (x32,), (t64,))
    assert ta.dtype == tb.dtype == np.float32


def test_value_and_grad_inside_jvp_carries_both_tangents():
    """d/de f(x + e v) = <grad f, v> for the value, and H v for the gradient."""
    f = lambda x: (x ** 3).sum()                       # grad 3x^2, Hessian diag(6x)
    xs, vs = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    (val, g), (tval, tg) = jvp(dg.func.value_and_grad(f), (dg.tensor(xs),), (dg.tensor(vs),))
    assert float(val) == pytest.approx(np.sum(xs ** 3), rel=1e-15)
    np.testing.assert_allclose(g.numpy(), 3 * xs ** 2, rtol=1e-15)
    assert float(tval) == pytest.approx(np.sum(3 * xs ** 2 * vs), rel=1e-15)
    np.testing.assert_allclose(tg.numpy(), 6 * xs * vs, rtol=1e-15)


# ---------------------------------------------------------------- creation copies

def test_tensor_copies_its_data_and_from_numpy_shares_it():
    a = np.array([1.0, 2.0])
    t, u, s = dg.tensor(a), dg.Tensor(a, requires_grad=True), dg.from_numpy(a)
    a[0] = 99.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(u.detach().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(s.numpy(), [99.0, 2.0])
