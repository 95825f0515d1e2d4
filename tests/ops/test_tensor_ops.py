"""Every op in OP_SPECS, five ways: forward against NumPy, VJP against finite
differences (dg.gradcheck), gradient shape and dtype, forward mode (JVP) against
both reverse mode and a finite-difference directional derivative, and float32.

One test per spec per check, so the counts pytest reports are honest.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
import pytest

import duograd as dg
from duograd.func import jvp
from specs import OP_SPECS, make_inputs, make_tensors

each_spec = pytest.mark.parametrize("spec", OP_SPECS, ids=attrgetter("name"))


def cotangent(shape, seed=1, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@each_spec
def test_forward_matches_numpy(spec):
    xs = make_inputs(spec)
    out = spec.fn(*[dg.tensor(a) for a in xs])
    want = np.asarray(spec.ref(*xs))
    assert isinstance(out, dg.Tensor)
    assert out.shape == want.shape
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)


@each_spec
def test_gradcheck(spec):
    assert dg.gradcheck(spec.fn, make_tensors(spec))


@each_spec
def test_grad_has_input_shape_and_dtype(spec):
    xs = make_tensors(spec)
    out = spec.fn(*xs)
    out.backward(cotangent(out.shape))
    for x in xs:
        assert isinstance(x.grad, dg.Tensor)
        assert x.grad.shape == x.shape
        assert x.grad.dtype == x.dtype
        assert type(x.grad.numpy()) is np.ndarray


@each_spec
def test_jvp_is_the_transpose_of_vjp(spec):
    """<u, J v> == <J^T u, v> for random u, v: forward and reverse mode agree."""
    xs = make_tensors(spec)
    vs = [dg.tensor(cotangent(x.shape, seed=10 + i)) for i, x in enumerate(xs)]
    out, jv = jvp(spec.fn, tuple(xs), tuple(vs))
    assert jv.shape == out.shape and jv.dtype == out.dtype
    u = cotangent(out.shape, seed=2)
    jtu = dg.grad(spec.fn(*xs), xs, grad_outputs=dg.tensor(u))
    lhs = float(np.sum(u * jv.detach().numpy()))
    rhs = float(sum(np.sum(g.numpy() * v.numpy()) for g, v in zip(jtu, vs)))
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-12)


@each_spec
def test_jvp_matches_directional_finite_difference(spec):
    """J v against (f(x + h v) - f(x - h v)) / 2h, computed on the NumPy reference."""
    arrays = make_inputs(spec)
    vs = [cotangent(a.shape, seed=20 + i) for i, a in enumerate(arrays)]
    _, jv = jvp(spec.fn, tuple(dg.tensor(a) for a in arrays), tuple(dg.tensor(v) for v in vs))
    h = 1e-6
    plus = np.asarray(spec.ref(*[a + h * v for a, v in zip(arrays, vs)]))
    minus = np.asarray(spec.ref(*[a - h * v for a, v in zip(arrays, vs)]))
    np.testing.assert_allclose(jv.numpy(), (plus - minus) / (2 * h), rtol=1e-5, atol=1e-7)


@each_spec
def test_float32_in_float32_out(spec):
    arrays = make_inputs(spec, dtype=np.float32)
    xs = [dg.tensor(a, requires_grad=True) for a in arrays]
    assert all(x.dtype == np.float32 for x in xs)
    out = spec.fn(*xs)
    assert out.dtype == np.float32
    u = cotangent(out.shape, dtype=np.float32)
    out.backward(u)
    for x in xs:
        assert x.grad.dtype == np.float32 and x.grad.shape == x.shape
    # The values are the float64 ones to float32 accuracy.
    want = np.asarray(spec.ref(*[a.astype(np.float64) for a in arrays]))
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=2e-5, atol=2e-6)
    ref64 = make_tensors(spec)
    for r, a in zip(ref64, arrays):
        r.data = a.astype(np.float64)
    spec.fn(*ref64).backward(u.astype(np.float64))
    for x, r in zip(xs, ref64):
        np.testing.assert_allclose(x.grad.numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-5)
