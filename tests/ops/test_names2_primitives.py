"""Finite-difference checks (``dg.gradcheck``/``gradgradcheck``) of the primitives branch
`names2` adds: the linear-algebra rows (det, log|det|, QR, eigh, SVD, matrix_exp) and the
special functions with hand-written VJPs, and the shape-changing in-place writes."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import linalg_more as lm, special as sp

RNG = np.random.default_rng(7)


def _t(*shape, shift=0.0):
    return dg.tensor(RNG.standard_normal(shape) + shift, requires_grad=True)


def _spd(x):
    return x @ x.mT + 3 * dg.eye(x.shape[-1])


@pytest.mark.parametrize("name,f,shape", [
    ("det", lambda a: lm.det(a), (3, 3)),
    ("det_batch", lambda a: lm.det(a), (2, 3, 3)),
    ("slogdet", lambda a: lm.slogdet(a).logabsdet, (3, 3)),
    ("inv", lambda a: lm.inv(a + 3 * dg.eye(3)), (3, 3)),
    ("solve", lambda a: lm.solve(a + 3 * dg.eye(3), a[:, :2]), (3, 3)),
    ("cholesky", lambda a: lm.cholesky(_spd(a)), (3, 3)),
    ("qr_q", lambda a: lm.qr(a).Q * lm.qr(a).Q, (4, 3)),
    ("qr_r", lambda a: lm.qr(a).R, (4, 3)),
    ("eigh_values", lambda a: lm.eigh(a + a.mT).eigenvalues, (3, 3)),
    ("eigh_vectors", lambda a: lm.eigh(a + a.mT).eigenvectors ** 2, (3, 3)),
    ("svdvals", lambda a: lm.svdvals(a), (4, 3)),
    ("svd_u", lambda a: lm.svd(a, full_matrices=False).U ** 2, (4, 3)),
    ("svd_vh", lambda a: lm.svd(a, full_matrices=False).Vh ** 2, (3, 4)),
    ("pinv", lambda a: lm.pinv(a), (4, 3)),
    ("matrix_exp", lambda a: lm.matrix_exp(a * 0.5), (3, 3)),
])
def test_linalg_gradcheck(name, f, shape):
    a = _t(*shape)
    assert dg.gradcheck(f, [a])
    assert dg.gradgradcheck(f, [a])


@pytest.mark.parametrize("name,f,shift", [
    ("i0", sp.i0, 0.0), ("i0e", sp.i0e, 0.0), ("i1", sp.i1, 0.0), ("i1e", sp.i1e, 0.0),
    ("erfcx", sp.erfcx, 0.0), ("log_ndtr", sp.log_ndtr, 0.0), ("ndtr", sp.ndtr, 0.0),
    ("entr", sp.entr, 3.0), ("gammaln", sp.gammaln, 3.0), ("digamma", sp.digamma, 3.0),
    ("sinc", sp.sinc, 0.0), ("multigammaln", lambda x: sp.multigammaln(x, 2), 3.0),
    ("xlog1py", lambda x: sp.xlog1py(x, x * x), 0.0),
])
def test_special_gradcheck(name, f, shift):
    x = _t(5, shift=shift)
    assert dg.gradcheck(f, [x])
    assert dg.gradgradcheck(f, [x])


def test_ndtri_gradcheck_inside_unit_interval():
    p = dg.tensor(RNG.uniform(0.1, 0.9, 5), requires_grad=True)
    assert dg.gradcheck(sp.ndtri, [p])
    assert dg.gradgradcheck(sp.ndtri, [p])


def test_zeta_and_gammaincc_gradcheck_in_their_differentiable_argument():
    q = dg.tensor(RNG.uniform(0.5, 2.0, 4), requires_grad=True)
    s = dg.tensor(RNG.uniform(2.0, 3.0, 4))
    assert dg.gradcheck(lambda v: sp.zeta(s, v), [q])
    assert dg.gradcheck(lambda v: sp.gammaincc(s, v), [q])


def test_i1_derivative_at_zero_is_one_half():
    x = dg.tensor([0.0], requires_grad=True)
    sp.i1(x).sum().backward()
    assert x.grad.tolist() == [0.5]


def test_shape_changing_inplace_keeps_memory_and_gradient():
    x = _t(2, 3)
    y = x * 2
    before = y._version
    assert y.t_() is y and tuple(y.shape) == (3, 2) and y._version > before
    y.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
    w = dg.tensor(RNG.standard_normal((2, 3)))
    (y * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * w.numpy())
    base = dg.zeros(2, 3)
    view = base.t_()
    view[0, 1] = 5.0   # the same memory: the write shows through the old array
    assert base.tolist()[0][1] == 5.0


def test_shape_changing_inplace_refuses_a_leaf_that_requires_grad():
    with pytest.raises(RuntimeError):
        _t(2, 3).t_()


def test_cond_and_while_loop_run_eagerly():
    x = dg.tensor([1.0, -3.0], requires_grad=True)
    y = dg.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 1, (x,))
    assert y.tolist() == [0.0, -4.0]  # the sum is negative: the false branch
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    i, a = dg.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (dg.tensor(0), dg.tensor([1.0])))
    assert i.item() == 3 and a.tolist() == [8.0]
