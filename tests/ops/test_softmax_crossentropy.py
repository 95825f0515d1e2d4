"""Softmax cross-entropy: the (p - y) identity, stability, and the closed-form Hessian.

``cross_entropy`` is composed from primitives (shift, exp, sum, log, integer-index
pick, mean, negate) with no fused backward, so the engine has to *arrive at*
d loss / d logits = (softmax(logits) - onehot(targets)) / N through the chain rule.
Every reference below is computed in NumPy from an explicit max shift (or in
extended precision), independently of the engine.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import pins  # the functions whose numbers the report quotes
import duograd as dg
from duograd.nn import functional as F

F32_TOL = 3e-7     # about 2.5 float32 ulps of 1: gradients are at most 1 in size
F64_TOL = 1e-15


def np_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def onehot(t: np.ndarray, c: int) -> np.ndarray:
    y = np.zeros((len(t), c))
    y[np.arange(len(t)), t] = 1.0
    return y


def case(shape: tuple[int, int], scale: float, seed: int = 0):
    rng = np.random.default_rng(seed + 1000 * shape[0] + shape[1])
    z = rng.standard_normal(shape) * scale
    t = rng.integers(0, shape[1], size=shape[0])
    return z, t


def engine_grad(z: np.ndarray, t: np.ndarray, reduction: str) -> tuple[float, np.ndarray]:
    logits = dg.tensor(z, requires_grad=True)
    loss = F.cross_entropy(logits, t, reduction=reduction)
    loss.backward()
    return loss.item(), logits.grad.numpy()


SHAPES = [(1, 2), (3, 5), (16, 10), (64, 3), (5, 200)]
SCALES = [1e-3, 1.0, 30.0, 1000.0]


# ---------------------------------------------------------------- the identity


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scale", SCALES)
def test_gradient_is_softmax_minus_onehot_over_n(shape, scale):
    z, t = case(shape, scale)
    loss, g = engine_grad(z, t, "mean")
    ref = (np_softmax(z) - onehot(t, shape[1])) / shape[0]
    assert np.isfinite(loss) and np.all(np.isfinite(g))
    assert np.max(np.abs(g - ref)) <= F64_TOL


@pytest.mark.parametrize("shape", SHAPES[1:4])
@pytest.mark.parametrize("scale", [1.0, 1000.0])
def test_sum_reduction_gradient_is_p_minus_y(shape, scale):
    z, t = case(shape, scale, seed=1)
    _, g = engine_grad(z, t, "sum")
    assert np.max(np.abs(g - (np_softmax(z) - onehot(t, shape[1])))) <= F64_TOL


@pytest.mark.parametrize("shape", SHAPES[1:])
@pytest.mark.parametrize("scale", [1.0, 30.0, 1000.0])
def test_float32_identity(shape, scale):
    z, t = case(shape, scale, seed=2)
    z32 = z.astype(np.float32)
    logits = dg.tensor(z32, requires_grad=True)
    loss = F.cross_entropy(logits, t)
    loss.backward()
    g = logits.grad.numpy()
    assert loss.dtype == np.float32 and g.dtype == np.float32
    ref = (np_softmax(z32) - onehot(t, shape[1])) / shape[0]   # float64, from the float32 logits
    assert np.all(np.isfinite(g)) and np.max(np.abs(g - ref)) <= F32_TOL


def test_identity_pin_over_random_cases():
    """The numbers benchmarks/pins.py reports are the numbers asserted here."""
    r = pins.ce_identity_error(n_cases=200, seed=0)
    assert r["all_finite"]
    assert r["max_abs_error"] <= F64_TOL
    assert r["max_abs_error_float32"] <= F32_TOL


# ---------------------------------------------------------------- values and stability


@pytest.mark.parametrize("scale", [1.0, 1000.0])
def test_loss_value_against_extended_precision(scale):
    z, t = case((8, 6), scale, seed=3)
    zl = z.astype(np.longdouble)
    logp = zl - zl.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    ref = float(-logp[np.arange(8), t].mean())
    loss, _ = engine_grad(z, t, "mean")
    assert loss == pytest.approx(ref, rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("fn", [F.log_softmax, lambda x: x.log_softmax(axis=-1)],
                         ids=["functional", "tensor_method"])
def test_log_softmax_stable_at_plus_minus_1000(fn):
    rng = np.random.default_rng(4)
    z = rng.choice([-1000.0, 1000.0], size=(6, 5)) + rng.standard_normal((6, 5))
    z[0] = 1000.0                      # a row of ties at the top
    z[1] = -1000.0                     # and at the bottom
    out = fn(dg.tensor(z)).numpy()
    zl = z.astype(np.longdouble)
    m = zl.max(1, keepdims=True)
    ref = (zl - m - np.log(np.exp(zl - m).sum(1, keepdims=True))).astype(np.float64)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ref, rtol=1e-15, atol=1e-12)


@pytest.mark.parametrize("fn", [
    F.log_softmax,
    lambda x: x.log_softmax(axis=-1),
], ids=["functional", "tensor_method"])
@pytest.mark.parametrize("level", [1000.0, -1000.0])
def test_log_softmax_to_the_last_bit_at_plus_minus_1000(fn, level):
    """Subtracting the max *before* the log keeps full relative precision: a row of
    five equal logits gives -log(5) to one ulp whatever the level."""
    z = np.full((2, 5), level)
    z[1, 0] += 1.0
    out = fn(dg.tensor(z)).numpy()
    np.testing.assert_allclose(out[0], np.full(5, -np.log(5)), rtol=2.3e-16)
    ref1 = np.array([0.0, -1, -1, -1, -1]) - np.log1p(4 * np.exp(-1.0))
    np.testing.assert_allclose(out[1], ref1, rtol=4.5e-16)


@pytest.mark.parametrize("fn", [F.softmax, lambda x: x.softmax(axis=-1)],
                         ids=["functional", "tensor_method"])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1000.0])
def test_softmax_rows_sum_to_one(fn, scale):
    z, _ = case((7, 9), scale, seed=5)
    p = fn(dg.tensor(z)).numpy()
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=4e-16)
    np.testing.assert_allclose(p, np_softmax(z), rtol=0, atol=4e-16)


def test_softmax_along_another_axis():
    z, _ = case((4, 3), 5.0, seed=6)
    p = F.softmax(dg.tensor(z), axis=0).numpy()
    np.testing.assert_allclose(p, np_softmax(z.T).T, atol=4e-16)


def test_large_logits_give_exact_zero_loss_and_gradient():
    z = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 999.0]])
    loss, g = engine_grad(z, np.array([0, 1]), "mean")
    ref = (np_softmax(z) - onehot(np.array([0, 1]), 3)) / 2
    assert loss == pytest.approx(np.log1p(np.exp(-1.0)) / 2, rel=1e-15)
    assert np.max(np.abs(g - ref)) <= F64_TOL


# ---------------------------------------------------------------- derivatives of the derivative


def test_gradient_by_finite_differences():
    z, t = case((3, 4), 2.0, seed=7)
    assert dg.gradcheck(lambda x: F.cross_entropy(x, t), (dg.tensor(z, requires_grad=True),))


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_hessian_is_diag_p_minus_ppT(scale):
    """d^2 loss / dz^2 for one row is diag(p) - p p^T, again never told to the engine."""
    rng = np.random.default_rng(8)
    z = rng.standard_normal(5) * scale
    H = dg.func.hessian(lambda x: F.cross_entropy(x.reshape(1, 5), [3]))(dg.tensor(z)).numpy()
    p = np_softmax(z)
    np.testing.assert_allclose(H, np.diag(p) - np.outer(p, p), rtol=0, atol=1e-15)


def test_double_backward_matches_hessian_vector_product():
    z, t = case((4, 3), 1.0, seed=9)
    logits = dg.tensor(z, requires_grad=True)
    (g,) = dg.grad(F.cross_entropy(logits, t), logits, create_graph=True)
    v = np.random.default_rng(10).standard_normal(z.shape)
    (hv,) = dg.grad((g * v).sum(), logits)
    p = np_softmax(z)
    ref = (p * v - p * (p * v).sum(axis=1, keepdims=True)) / 4   # row-wise (diag(p) - pp^T) v / N
    np.testing.assert_allclose(hv.numpy(), ref, rtol=0, atol=1e-16)
