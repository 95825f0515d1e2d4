"""Second derivatives of the tensor engine.

``dg.gradgradcheck`` on every op in OP_SPECS (ops whose second derivative is zero
must pass too: their gradient is constant and finite differences say so), then a few
Hessians and Hessian-vector products against closed forms written in NumPy.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
import pytest

import duograd as dg
from duograd import func
from specs import OP_SPECS, make_tensors


@pytest.mark.parametrize("spec", OP_SPECS, ids=attrgetter("name"))
def test_gradgradcheck(spec):
    assert dg.gradgradcheck(spec.fn, make_tensors(spec))


X = np.array([0.7, -1.2, 0.4])
A = np.array([[2.0, -1.0, 0.5], [0.3, 1.5, -0.7], [1.1, 0.2, 0.9]])


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


# name: (scalar function of a 1-D Tensor, its Hessian at X in closed form)
HESSIANS = {
    "sum x^3": (lambda x: (x ** 3).sum(), np.diag(6 * X)),
    "x^T A x": (lambda x: x @ dg.tensor(A) @ x, A + A.T),
    "logsumexp": (lambda x: x.logsumexp(),
                  np.diag(_softmax(X)) - np.outer(_softmax(X), _softmax(X))),
    "sum tanh": (lambda x: x.tanh().sum(), np.diag(-2 * np.tanh(X) * (1 - np.tanh(X) ** 2))),
    "sum sigmoid": (lambda x: x.sigmoid().sum(),
                    np.diag((lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + np.exp(-X))))),
    "(sum x)^2": (lambda x: x.sum() ** 2, np.full((3, 3), 2.0)),
    "sum exp(x) * sin(x)": (lambda x: (x.exp() * x.sin()).sum(), np.diag(2 * np.exp(X) * np.cos(X))),
    "squared norm of A x": (lambda x: ((dg.tensor(A) @ x) ** 2).sum(), 2 * A.T @ A),
    "mean of x^2 (var-like)": (lambda x: x.var(correction=0), (np.eye(3) - np.full((3, 3), 1 / 3)) * 2 / 3),
    "relu(x) * x summed": (lambda x: (x.relu() * x).sum(), np.diag(2.0 * (X > 0))),
}


@pytest.mark.parametrize("name", list(HESSIANS))
def test_hessian_by_double_backward(name):
    f, want = HESSIANS[name]
    x = dg.tensor(X, requires_grad=True)
    (g,) = dg.grad(f(x), x, create_graph=True)
    assert g.requires_grad  # a gradient with history
    rows = [dg.grad(g[i], x, retain_graph=True)[0].numpy() for i in range(X.size)]
    np.testing.assert_allclose(np.stack(rows), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(HESSIANS))
def test_hessian_transform(name):
    f, want = HESSIANS[name]
    np.testing.assert_allclose(func.hessian(f)(dg.tensor(X)).numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(HESSIANS))
def test_hvp(name):
    f, want = HESSIANS[name]
    v = np.array([0.3, -0.8, 1.7])
    value, hv = func.hvp(f, dg.tensor(X), dg.tensor(v))
    np.testing.assert_allclose(hv.numpy(), want @ v, rtol=1e-10, atol=1e-12)
    assert float(value) == pytest.approx(float(f(dg.tensor(X))), rel=1e-14)


def test_third_derivative_of_a_tensor_function():
    """d^3/dx^3 sum(sin(x) * x^2), elementwise, by three nested dg.grad calls."""
    x = dg.tensor(X, requires_grad=True)
    y = (x.sin() * x ** 2).sum()
    (g1,) = dg.grad(y, x, create_graph=True)
    (g2,) = dg.grad(g1.sum(), x, create_graph=True)  # diagonal Hessian: row sums are the diagonal
    (g3,) = dg.grad(g2.sum(), x)
    want = -np.cos(X) * X ** 2 - 6 * X * np.sin(X) + 6 * np.cos(X)
    np.testing.assert_allclose(g3.numpy(), want, rtol=1e-10, atol=1e-12)


def test_grad_of_grad_transform_with_broadcasting():
    """func.grad(func.grad(.)) through a broadcast: f(b) = sum((W + b)^3) with b of shape (4,)."""
    W = np.random.default_rng(0).standard_normal((5, 4))
    b0 = np.array([0.1, -0.4, 0.8, 0.3])

    def f(b):
        return ((dg.tensor(W) + b) ** 3).sum()

    g = func.grad(f)(dg.tensor(b0))
    np.testing.assert_allclose(g.numpy(), (3 * (W + b0) ** 2).sum(0), rtol=1e-12)
    second = func.grad(lambda b: func.grad(f)(b).sum())(dg.tensor(b0))
    np.testing.assert_allclose(second.numpy(), (6 * (W + b0)).sum(0), rtol=1e-12)
    assert second.shape == (4,)


# A transpose whose VJP rule builds its result from the cotangent's raw values: right at
# first order, but detached from g, so nothing that flows through g is differentiated.
_detached_T = dg.Primitive("detached_transpose", lambda x: x.T,
                           vjp=(lambda g, out, x: dg.tensor(g.detach().numpy().T),), jvp="linear")
_W = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]])
_XW = np.array([[0.5, -1.0, 0.2], [1.5, 0.3, -0.4], [-0.7, 0.8, 1.1], [0.2, 0.1, 0.9]])


def test_gradgradcheck_catches_a_rule_detached_from_its_cotangent():
    """With a constant cotangent, the op alone is linear and the detached rule passes;
    gradgradcheck checks the cotangent as an input, so it must raise."""
    x = dg.tensor(_W, requires_grad=True)
    assert dg.gradcheck(_detached_T, (x,))  # first order is right
    with pytest.raises(dg.GradcheckError, match="cotangent v"):
        dg.gradgradcheck(_detached_T, (x,))
    assert dg.gradgradcheck(lambda w: w.T, (x,))  # the engine's own transpose passes


def test_the_detached_rule_really_breaks_a_hessian():
    """Why it matters: the Hessian of tanh(X W^T) through the planted rule loses every
    term that flows through g; the engine's transpose matches finite differences."""
    X = dg.tensor(_XW)
    right = func.hessian(lambda w: (X @ w.T).tanh().sum())(dg.tensor(_W)).numpy()
    wrong = func.hessian(lambda w: (X @ _detached_T(w)).tanh().sum())(dg.tensor(_W)).numpy()
    f = lambda w: np.tanh(_XW @ w.T).sum()
    eps, n = 1e-4, _W.size
    fd = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i].reshape(_W.shape) * eps, np.eye(n)[j].reshape(_W.shape) * eps
            fd[i, j] = (f(_W + ei + ej) - f(_W + ei - ej) - f(_W - ei + ej) + f(_W - ei - ej)) / (4 * eps ** 2)
    np.testing.assert_allclose(right.reshape(n, n), fd, atol=1e-6)
    assert np.max(np.abs(wrong.reshape(n, n) - fd)) > 0.1
