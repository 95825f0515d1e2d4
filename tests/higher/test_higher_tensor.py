"""Derivatives of derivatives on tensors, against closed forms evaluated in NumPy.

Each Hessian below was derived by hand and is evaluated with NumPy alone. The
engine's Hessian is obtained three ways that share as little machinery as the
engine allows:

- ``func.hessian`` (forward-over-reverse: a JVP through every VJP rule),
- reverse-over-reverse: ``dg.grad(..., create_graph=True)``, then one backward
  pass per row of the Hessian through the recorded backward graph,
- ``func.jacrev(func.jacrev(f))`` (reverse-over-reverse through the transforms),

and a finite-difference check of the gradient (``dg.gradgradcheck``) backs each
closed form up. Then: third and fourth derivatives by nesting ``grad``, and mixed
partials of functions of two tensors taken in both orders.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import duograd as dg
from duograd import func

_rng = np.random.default_rng(1234)
N = 4
A = _rng.standard_normal((N, N))          # deliberately not symmetric
a_vec = _rng.standard_normal(N)
b_vec = _rng.standard_normal(N)
X_BATCH = _rng.standard_normal((5, 3))    # five rows of three features
C_BATCH = _rng.standard_normal((5, 2))
B_BIAS = _rng.standard_normal(2)
W_FIXED = _rng.standard_normal((3, 2))
LOGIT_X = _rng.standard_normal((6, N))
LOGIT_Y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])


def sigmoid_np(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def softmax_np(z: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@dataclass
class Case:
    """A scalar function of one tensor, a point, and its Hessian in closed form."""

    name: str
    f: Callable[[dg.Tensor], dg.Tensor]
    x: np.ndarray
    hessian: Callable[[np.ndarray], np.ndarray]   # shape x.shape + x.shape


# ------------------------------------------------------------------ closed forms

def h_poly(x):
    # f = sum x^4 + 3 (sum x)^2
    return np.diag(12 * x**2) + 6 * np.ones((x.size, x.size))


def h_exp_sin(x):
    # f = sum exp(sin x): each term's second derivative is exp(sin x)(cos^2 x - sin x)
    return np.diag(np.exp(np.sin(x)) * (np.cos(x) ** 2 - np.sin(x)))


def h_sin_norm2(x):
    # f = sin(s), s = x.x:  grad = 2 cos(s) x,  H = 2 cos(s) I - 4 sin(s) x x^T
    s = x @ x
    return 2 * np.cos(s) * np.eye(x.size) - 4 * np.sin(s) * np.outer(x, x)


def h_log1p_norm2(x):
    # f = log(1 + x.x):  H = 2 I / v - 4 x x^T / v^2, v = 1 + x.x
    v = 1 + x @ x
    return 2 * np.eye(x.size) / v - 4 * np.outer(x, x) / v**2


def h_exp_cos(x):
    # f = exp(a.x) cos(b.x)
    u, v = a_vec @ x, b_vec @ x
    e = np.exp(u)
    return e * (np.cos(v) * (np.outer(a_vec, a_vec) - np.outer(b_vec, b_vec))
                - np.sin(v) * (np.outer(a_vec, b_vec) + np.outer(b_vec, a_vec)))


def h_quadratic(x):
    return A + A.T


def h_quadratic_squared(x):
    # f = q^2 with q = x^T A x:  H = 2 g g^T + 2 q (A + A^T),  g = (A + A^T) x
    q, g = x @ A @ x, (A + A.T) @ x
    return 2 * np.outer(g, g) + 2 * q * (A + A.T)


def h_logsumexp(x):
    p = softmax_np(x)
    return np.diag(p) - np.outer(p, p)


def h_logsumexp_rows(z):
    # f = sum over rows of logsumexp(row): block diagonal, one diag(p) - p p^T per row
    m, n = z.shape
    h = np.zeros((m, n, m, n))
    for i in range(m):
        p = softmax_np(z[i])
        h[i, :, i, :] = np.diag(p) - np.outer(p, p)
    return h


def h_rational(x):
    # f = u / v with u = a.x, v = 1 + x.x; grad = a / v - 2 u x / v^2, differentiated once more
    u, v = a_vec @ x, 1 + x @ x
    return (-2 * (np.outer(a_vec, x) + np.outer(x, a_vec)) / v**2
            - 2 * u * np.eye(x.size) / v**2 + 8 * u * np.outer(x, x) / v**3)


def h_norm(x):
    r = np.sqrt(x @ x)
    return np.eye(x.size) / r - np.outer(x, x) / r**3


def h_x_tanh(x):
    # f = sum x tanh x:  f'' = 2 sech^2(x) (1 - x tanh x)
    t = np.tanh(x)
    return np.diag(2 * (1 - t**2) * (1 - x * t))


def h_product(x):
    # f = prod x:  d2f/dxi dxj = product of every coordinate except i and j (i != j), 0 on the diagonal
    n = x.size
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                h[i, j] = np.prod(np.delete(x, [i, j]))
    return h


def h_sigmoid_linear(x):
    # f = sigmoid(a.x):  H = s(1 - s)(1 - 2s) a a^T
    s = sigmoid_np(a_vec @ x)
    return s * (1 - s) * (1 - 2 * s) * np.outer(a_vec, a_vec)


def h_logistic_loss(w):
    # f = -sum log sigmoid(y_k x_k.w):  H = sum_k s_k (1 - s_k) x_k x_k^T, s_k = sigmoid(m_k)
    s = sigmoid_np(LOGIT_Y * (LOGIT_X @ w))
    return (LOGIT_X * (s * (1 - s))[:, None]).T @ LOGIT_X


def h_tanh_layer_weights(w):
    # f(W) = sum C * tanh(X W + b), W of shape (3, 2), b broadcast over the rows:
    # d2f/dW_ab dW_cd = [b == d] sum_i C_ib (-2 h_ib (1 - h_ib^2)) X_ia X_ic
    h = np.tanh(X_BATCH @ w + B_BIAS)
    k = C_BATCH * (-2 * h * (1 - h**2))                      # (5, 2)
    core = np.einsum("ib,ia,ic->abc", k, X_BATCH, X_BATCH)   # (a, b, c)
    out = np.zeros(w.shape + w.shape)
    for b in range(w.shape[1]):
        out[:, b, :, b] = core[:, b, :]
    return out


def h_tanh_layer_bias(b):
    # the same function of the broadcast bias: diagonal, sum over the rows the bias was copied to
    h = np.tanh(X_BATCH @ W_FIXED + b)
    return np.diag((C_BATCH * (-2 * h * (1 - h**2))).sum(axis=0))


def h_softmax_ce_row(z):
    # f = -log softmax(z)[y] for one row of logits: H = diag(p) - p p^T, whatever y is
    p = softmax_np(z)
    return np.diag(p) - np.outer(p, p)


CE_TARGETS = np.array([2, 0, 3])


def h_softmax_ce_batch(z):
    # mean over rows of the cross-entropy: block diagonal, (diag(p_i) - p_i p_i^T) / m
    return h_logsumexp_rows(z) / z.shape[0]


def h_variance(x):
    n = x.size
    return 2 / n * (np.eye(n) - np.ones((n, n)) / n)


def h_exp_broadcast(x):
    # f = sum exp(M + x) with M (5, 4) and x (4,) broadcast over the rows: diagonal
    return np.diag(np.exp(LOGIT_X[:5] + x).sum(axis=0))


# ------------------------------------------------------------------ the functions, in Tensor algebra

def f_product(x):
    p = x[0]
    for i in range(1, x.shape[0]):
        p = p * x[i]
    return p


def f_softmax_ce_row(z):
    # composed from primitives on purpose: exp, sum, log, getitem, sub
    return -(z[1] - z.exp().sum().log())


def f_softmax_ce_batch(z):
    logp = z.log_softmax(axis=-1)
    return -logp[np.arange(z.shape[0]), CE_TARGETS].mean()


x4 = np.array([0.4, -0.9, 1.3, 0.2])
CASES = [
    Case("polynomial", lambda x: (x**4).sum() + 3 * x.sum() ** 2, x4, h_poly),
    Case("exp(sin x)", lambda x: x.sin().exp().sum(), x4, h_exp_sin),
    Case("sin(|x|^2)", lambda x: (x * x).sum().sin(), x4 * 0.8, h_sin_norm2),
    Case("log(1+|x|^2)", lambda x: (1 + (x * x).sum()).log(), x4, h_log1p_norm2),
    Case("exp(a.x)cos(b.x)", lambda x: (x @ a_vec).exp() * (x @ b_vec).cos(), x4 * 0.5, h_exp_cos),
    Case("x^T A x", lambda x: x @ (dg.tensor(A) @ x), x4, h_quadratic),
    Case("(x^T A x)^2", lambda x: (x @ A @ x) ** 2, x4, h_quadratic_squared),
    Case("logsumexp", lambda x: x.logsumexp(), x4, h_logsumexp),
    Case("logsumexp rows", lambda z: z.logsumexp(axis=1).sum(), LOGIT_X[:2, :3].copy(), h_logsumexp_rows),
    Case("softmax CE row", f_softmax_ce_row, x4, h_softmax_ce_row),
    Case("softmax CE batch", f_softmax_ce_batch, LOGIT_X[:3].copy(), h_softmax_ce_batch),
    Case("rational a.x/(1+|x|^2)", lambda x: (x @ a_vec) / (1 + (x * x).sum()), x4, h_rational),
    Case("|x|", lambda x: (x * x).sum().sqrt(), x4, h_norm),
    Case("x tanh x", lambda x: (x * x.tanh()).sum(), x4, h_x_tanh),
    Case("prod x", f_product, np.array([0.7, -1.2, 1.5, 0.9]), h_product),
    Case("sigmoid(a.x)", lambda x: (x @ a_vec).sigmoid(), x4, h_sigmoid_linear),
    Case("logistic loss", lambda w: -(LOGIT_Y * (LOGIT_X @ w)).sigmoid().log().sum(), x4 * 0.3,
         h_logistic_loss),
    Case("tanh(XW+b) wrt W", lambda w: (C_BATCH * (X_BATCH @ w + B_BIAS).tanh()).sum(),
         W_FIXED, h_tanh_layer_weights),
    Case("tanh(XW+b) wrt b", lambda b: (C_BATCH * (X_BATCH @ W_FIXED + b).tanh()).sum(),
         B_BIAS, h_tanh_layer_bias),
    Case("var", lambda x: x.var(correction=0), x4, h_variance),
    Case("exp(M + x) broadcast", lambda x: (LOGIT_X[:5] + x).exp().sum(), x4 * 0.5, h_exp_broadcast),
]
IDS = [c.name for c in CASES]


def hessian_reverse_over_reverse(f, x0: np.ndarray) -> np.ndarray:
    """Record the backward pass once, then one backward through it per Hessian row."""
    x = dg.tensor(x0, requires_grad=True)
    (g,) = dg.grad(f(x), x, create_graph=True)
    assert g.requires_grad, "the gradient should carry history under create_graph=True"
    rows = []
    for k in range(x0.size):
        e = np.zeros(x0.size)
        e[k] = 1.0
        (row,) = dg.grad(g, x, grad_outputs=e.reshape(x0.shape), retain_graph=True)
        rows.append(row.numpy().reshape(-1))
    return np.array(rows).reshape(x0.shape + x0.shape)


METHODS = {
    "func.hessian": lambda f, x0: func.hessian(f)(dg.tensor(x0)).numpy(),
    "grad(create_graph) rows": hessian_reverse_over_reverse,
    "jacrev(jacrev)": lambda f, x0: func.jacrev(func.jacrev(f))(dg.tensor(x0)).numpy(),
}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hessian_matches_closed_form(case: Case, method: str):
    h = METHODS[method](case.f, case.x)
    expected = case.hessian(case.x)
    assert h.shape == case.x.shape + case.x.shape
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_of_gradient_against_finite_differences(case: Case):
    # Independent of the closed forms: the recorded gradient's Jacobian vs central differences.
    assert dg.gradgradcheck(case.f, (dg.tensor(case.x, requires_grad=True),), atol=1e-6, rtol=1e-5)


def test_hessian_closed_forms_are_right():
    # Guard the hand derivations themselves with NumPy finite differences of NumPy gradients
    # for a few cases whose gradient is easy to write, so a wrong formula cannot pass by luck.
    def fd_jacobian(grad_np, x, eps=1e-6):
        cols = [(grad_np(x + eps * e) - grad_np(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
        return np.array(cols).T

    def grad_rational(x):
        u, v = a_vec @ x, 1 + x @ x
        return a_vec / v - 2 * u * x / v**2

    def grad_exp_cos(x):
        u, v = a_vec @ x, b_vec @ x
        return np.exp(u) * (np.cos(v) * a_vec - np.sin(v) * b_vec)

    def grad_product(x):
        return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])

    for g, h, x in [(grad_rational, h_rational, x4), (grad_exp_cos, h_exp_cos, x4 * 0.5),
                    (grad_product, h_product, np.array([0.7, -1.2, 1.5, 0.9]))]:
        np.testing.assert_allclose(fd_jacobian(g, x), h(x), rtol=1e-6, atol=1e-8)


def test_hessian_of_piecewise_linear_is_zero():
    # relu's rule multiplies by a constant 0/1 mask, so its second derivative is exactly 0.
    x = dg.tensor([0.5, -1.0, 2.0])
    h = func.hessian(lambda x: (x.relu() * 3.0).sum() + x.abs().sum())(x).numpy()
    np.testing.assert_array_equal(h, np.zeros((3, 3)))


def test_float32_hessian_stays_float32():
    x = x4.astype(np.float32)
    h = func.hessian(lambda x: x.sin().exp().sum())(dg.tensor(x))
    assert h.dtype == np.float32
    np.testing.assert_allclose(h.numpy(), h_exp_sin(x4), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ third and fourth derivatives

def _tanh_derivs(x):
    t = np.tanh(x)
    s = 1 - t * t
    return [s, -2 * t * s, -2 * s * (1 - 3 * t * t), 8 * t * s * (2 - 3 * t * t)]


def _sigmoid_derivs(x):
    s = sigmoid_np(x)
    d1 = s * (1 - s)
    return [d1, d1 * (1 - 2 * s), d1 * (1 - 6 * s + 6 * s * s),
            d1 * (1 - 2 * s) * (1 - 12 * s + 12 * s * s)]


def _power_derivs(p):
    def derivs(x):
        return [math.prod(p - i for i in range(k)) * x ** (p - k) for k in range(1, 5)]
    return derivs


# name: (elementwise function, [f', f'', f''', f''''] in closed form, points)
ELEMENTWISE = {
    "sin": (lambda x: x.sin(), lambda x: [np.cos(x), -np.sin(x), -np.cos(x), np.sin(x)],
            np.array([0.3, -2.0, 1.1])),
    "cos": (lambda x: x.cos(), lambda x: [-np.sin(x), -np.cos(x), np.sin(x), np.cos(x)],
            np.array([0.3, -2.0, 1.1])),
    "exp": (lambda x: x.exp(), lambda x: [np.exp(x)] * 4, np.array([0.3, -2.0, 1.1])),
    "x**5": (lambda x: x**5, _power_derivs(5), np.array([1.3, -0.7, 0.4])),
    "x**3.5": (lambda x: x**3.5, _power_derivs(3.5), np.array([1.3, 0.7, 2.2])),
    "log": (lambda x: x.log(), lambda x: [1 / x, -1 / x**2, 2 / x**3, -6 / x**4],
            np.array([0.8, 2.5, 0.3])),
    "1/x": (lambda x: 1 / x, lambda x: [-(x**-2.0), 2 * x**-3.0, -6 * x**-4.0, 24 * x**-5.0],
            np.array([0.8, -1.6, 2.5])),
    "sqrt": (lambda x: x.sqrt(), _power_derivs(0.5), np.array([0.8, 1.6, 2.5])),
    "tanh": (lambda x: x.tanh(), _tanh_derivs, np.array([0.3, -1.1, 0.8])),
    "sigmoid": (lambda x: x.sigmoid(), _sigmoid_derivs, np.array([0.3, -1.1, 2.0])),
}


def test_elementwise_closed_forms_are_right():
    # The tanh and sigmoid formulas are the error-prone ones: check each order against
    # a central difference of the order below, in NumPy.
    eps = 1e-5
    for name in ("tanh", "sigmoid", "x**3.5"):
        _, derivs, x = ELEMENTWISE[name]
        for k in range(1, 4):
            fd = (derivs(x + eps)[k - 1] - derivs(x - eps)[k - 1]) / (2 * eps)
            np.testing.assert_allclose(fd, derivs(x)[k], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("order", [2, 3, 4])
@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_nth_derivative_by_nesting_grad(name: str, order: int):
    f, derivs, x0 = ELEMENTWISE[name]
    x = dg.tensor(x0, requires_grad=True)
    d = f(x)
    for _ in range(order):
        # f acts elementwise, so the gradient of the sum is the derivative at each point
        (d,) = dg.grad(d.sum(), x, create_graph=True)
    np.testing.assert_allclose(d.detach().numpy(), derivs(x0)[order - 1], rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", ["sin", "exp", "x**5", "log"])
def test_fourth_derivative_by_composing_func_grad(name: str):
    f, derivs, x0 = ELEMENTWISE[name]
    d4 = func.grad(func.grad(func.grad(func.grad(f))))
    for v in x0:
        assert float(d4(dg.tensor(v))) == pytest.approx(derivs(np.array(v))[3], rel=1e-11, abs=1e-12)


def test_sin_derivatives_cycle_to_order_eight():
    x0 = np.array([0.3, -2.0])
    x = dg.tensor(x0, requires_grad=True)
    d = x.sin()
    expected = [np.cos(x0), -np.sin(x0), -np.cos(x0), np.sin(x0)]
    for k in range(8):
        (d,) = dg.grad(d.sum(), x, create_graph=True)
        np.testing.assert_allclose(d.detach().numpy(), expected[k % 4], rtol=1e-12, atol=1e-13)


def test_third_derivative_tensor_of_logsumexp():
    # Differentiating H_ij = [i=j] p_i - p_i p_j once more, with dp_i/dx_k = p_i([i=k] - p_k):
    # T_ijk = [i=j][i=k] p_i - [i=j] p_i p_k - [i=k] p_i p_j - [j=k] p_i p_j + 2 p_i p_j p_k
    x0 = np.array([0.2, -0.5, 1.0])
    p = softmax_np(x0)
    n = p.size
    eye = np.eye(n)
    t = (np.einsum("i,ij,ik->ijk", p, eye, eye)
         - np.einsum("i,ij,k->ijk", p, eye, p)
         - np.einsum("i,ik,j->ijk", p, eye, p)
         - np.einsum("j,jk,i->ijk", p, eye, p)
         + 2 * np.einsum("i,j,k->ijk", p, p, p))
    third = func.jacrev(func.jacrev(func.jacrev(lambda x: x.logsumexp())))(dg.tensor(x0)).numpy()
    np.testing.assert_allclose(third, t, rtol=1e-10, atol=1e-12)
    fwd = func.jacfwd(func.hessian(lambda x: x.logsumexp()))(dg.tensor(x0)).numpy()
    np.testing.assert_allclose(fwd, t, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ mixed partials

_B = _rng.standard_normal((3, 2))
_W = _rng.standard_normal((3, 2))
_a3, _b2 = _rng.standard_normal(3), _rng.standard_normal(2)


def mixed_lse(x, y):
    p = softmax_np(x @ _W + y)
    return _W @ (np.diag(p) - np.outer(p, p))


# name: (f(x, y), d2f/dx dy in closed form, shape (x.size, y.size))
MIXED = {
    "sin(x_i y_j)": (lambda x, y: (x.unsqueeze(1) * y.unsqueeze(0)).sin().sum(),
                     lambda x, y: np.cos(np.outer(x, y)) - np.outer(x, y) * np.sin(np.outer(x, y))),
    "x^T B y + |x|^2 |y|^2": (lambda x, y: x @ (_B @ y) + (x * x).sum() * (y * y).sum(),
                              lambda x, y: _B + 4 * np.outer(x, y)),
    "logsumexp(xW + y)": (lambda x, y: (x @ _W + y).logsumexp(), mixed_lse),
    "exp(a.x) tanh(b.y)": (lambda x, y: (x @ _a3).exp() * (y @ _b2).tanh(),
                           lambda x, y: np.exp(_a3 @ x) * (1 - np.tanh(_b2 @ y) ** 2) * np.outer(_a3, _b2)),
}
X3 = np.array([0.3, -0.8, 0.5])
Y2 = np.array([1.1, -0.4])


def _cross_rows(f, first, second):
    """d/d(second) of d f/d(first), one backward per element of the first gradient."""
    x = dg.tensor(X3, requires_grad=True)
    y = dg.tensor(Y2, requires_grad=True)
    args = {"x": x, "y": y}
    (g,) = dg.grad(f(x, y), args[first], create_graph=True)
    rows = []
    for k in range(g.numel()):
        e = np.zeros(g.numel())
        e[k] = 1.0
        (row,) = dg.grad(g, args[second], grad_outputs=e, retain_graph=True)
        rows.append(row.numpy())
    return np.array(rows)


@pytest.mark.parametrize("name", list(MIXED))
def test_mixed_partials_agree_in_both_orders(name: str):
    f, closed = MIXED[name]
    expected = closed(X3, Y2)
    xy = _cross_rows(f, "x", "y")          # rows: d/dy of df/dx_i
    yx = _cross_rows(f, "y", "x").T        # rows: d/dx of df/dy_j, transposed
    np.testing.assert_allclose(xy, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(yx, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xy, yx, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", list(MIXED))
def test_mixed_partials_through_transforms(name: str):
    f, closed = MIXED[name]
    expected = closed(X3, Y2)
    x, y = dg.tensor(X3), dg.tensor(Y2)
    rev = func.jacrev(func.grad(f, argnums=0), argnums=1)(x, y).detach().numpy()          # (3, 2)
    fwd = func.jacfwd(func.grad(f, argnums=1), argnums=0)(x, y).numpy().T        # (2, 3) -> (3, 2)
    np.testing.assert_allclose(rev, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fwd, expected, rtol=1e-10, atol=1e-12)


def test_mixed_third_partials_in_every_order():
    # f = sin(xy) + x^3 y^2:  f_xxy = -2y sin(xy) - x y^2 cos(xy) + 12 x y, whichever order
    x0, y0 = 0.7, -1.3
    expected = -2 * y0 * math.sin(x0 * y0) - x0 * y0**2 * math.cos(x0 * y0) + 12 * x0 * y0
    for order in (("x", "x", "y"), ("x", "y", "x"), ("y", "x", "x")):
        x = dg.tensor(x0, requires_grad=True)
        y = dg.tensor(y0, requires_grad=True)
        args = {"x": x, "y": y}
        d = (x * y).sin() + x**3 * y**2
        for v in order:
            (d,) = dg.grad(d, args[v], create_graph=True)
        assert float(d) == pytest.approx(expected, rel=1e-12)
