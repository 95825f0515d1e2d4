"""Every transform of ``duograd.func`` against finite differences and closed forms.

The numeric side never touches the engine's derivative code: ``fd_jacobian`` calls
the function on plain tensors under ``no_grad`` and takes central differences in
float64. ``jvp`` is checked a second way through the transpose identity: the VJP is
linear in its cotangent u, so differentiating <vjp_fn(u), v> with respect to u gives
J v without any forward mode at all.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import func

_rng = np.random.default_rng(77)
M = _rng.standard_normal((5, 3))
K = _rng.standard_normal((3, 2))


def fd_jacobian(f, *args: np.ndarray, argnum: int = 0, eps: float = 1e-6) -> np.ndarray:
    """d f(*args) / d args[argnum] by central differences, shape out.shape + arg.shape."""
    args = [np.asarray(a, dtype=np.float64) for a in args]
    base = args[argnum]

    def call(v):
        moved = list(args)
        moved[argnum] = v
        with dg.no_grad():
            return f(*[dg.tensor(a) for a in moved]).numpy().copy()

    out_shape = call(base).shape
    cols = []
    for k in range(base.size):
        step = np.zeros(base.size)
        step[k] = eps
        step = step.reshape(base.shape)
        cols.append(((call(base + step) - call(base - step)) / (2 * eps)).reshape(-1))
    return np.stack(cols, axis=-1).reshape(out_shape + base.shape)


def close(a, b, rtol=1e-7, atol=1e-8):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ------------------------------------------------------------------ functions used throughout

def scalar_f(x):
    """R^3 -> R: sum(sin(x) * exp(x / 2)) + (x . x)^2 / 4"""
    return (x.sin() * (x / 2).exp()).sum() + (x * x).sum() ** 2 / 4


def scalar_f_grad(x):
    return np.cos(x) * np.exp(x / 2) + 0.5 * np.sin(x) * np.exp(x / 2) + (x @ x) * x


def scalar_f_hess(x):
    e = np.exp(x / 2)
    diag = -np.sin(x) * e + np.cos(x) * e + 0.25 * np.sin(x) * e
    return np.diag(diag) + (x @ x) * np.eye(x.size) + 2 * np.outer(x, x)


def two_arg(x, w):
    """A scalar function of a vector (3,) and a matrix (3, 2)."""
    return ((x @ w).tanh() ** 2).sum() + (w * w).sum() * x.sum()


# non-square maps for the Jacobian checks: (name, f, input)
NONSQUARE = [
    ("R3->R5 matmul-tanh", lambda x: (M @ x).tanh(), np.array([0.2, -0.7, 1.1])),
    ("R3->R2 softmax-ish", lambda x: (x @ K).softmax(), np.array([0.5, 0.1, -0.3])),
    ("R(2,3)->R2 row norms", lambda x: (x * x).sum(axis=1).sqrt(), np.array([[0.3, -1.0, 0.5],
                                                                             [1.2, 0.4, -0.6]])),
    ("R2->R(3,2) outer-sin", lambda x: (x.unsqueeze(0) * np.array([[1.0], [2.0], [-0.5]])).sin(),
     np.array([0.4, -0.9])),
    ("R4->R1 prod-like", lambda x: (x[:2] * x[2:]).sum().reshape(1), np.array([0.3, 0.4, -1.0, 2.0])),
]
NS_IDS = [n for n, _, _ in NONSQUARE]


# ------------------------------------------------------------------ grad, value_and_grad

def test_grad_matches_closed_form_and_finite_differences():
    x0 = np.array([0.3, -1.1, 0.8])
    g = func.grad(scalar_f)(dg.tensor(x0))
    close(g.numpy(), scalar_f_grad(x0), rtol=1e-12, atol=1e-13)
    close(g.numpy(), fd_jacobian(scalar_f, x0))
    assert g.shape == (3,)


def test_value_and_grad_int_argnums():
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    value, gw = func.value_and_grad(two_arg, argnums=1)(dg.tensor(x0), dg.tensor(w0))
    with dg.no_grad():
        assert float(value) == pytest.approx(float(two_arg(dg.tensor(x0), dg.tensor(w0))), rel=1e-14)
    assert gw.shape == w0.shape
    close(gw.numpy(), fd_jacobian(two_arg, x0, w0, argnum=1))
    # closed form: d/dw sum tanh(xw)^2 = outer(x, 2 tanh(z)(1 - tanh(z)^2)), plus 2 w sum(x)
    t = np.tanh(x0 @ w0)
    close(gw.numpy(), np.outer(x0, 2 * t * (1 - t**2)) + 2 * w0 * x0.sum(), rtol=1e-12, atol=1e-13)


def test_value_and_grad_tuple_argnums():
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    value, grads = func.value_and_grad(two_arg, argnums=(0, 1))(dg.tensor(x0), dg.tensor(w0))
    assert isinstance(grads, tuple) and len(grads) == 2
    close(grads[0].numpy(), fd_jacobian(two_arg, x0, w0, argnum=0))
    close(grads[1].numpy(), fd_jacobian(two_arg, x0, w0, argnum=1))
    # a reversed tuple gives the gradients in the order asked for
    _, rev = func.value_and_grad(two_arg, argnums=(1, 0))(dg.tensor(x0), dg.tensor(w0))
    close(rev[0].numpy(), grads[1].numpy(), rtol=0, atol=0)
    close(rev[1].numpy(), grads[0].numpy(), rtol=0, atol=0)


def test_grad_with_negative_argnums():
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    g = func.grad(two_arg, argnums=-1)(dg.tensor(x0), dg.tensor(w0))
    close(g.numpy(), fd_jacobian(two_arg, x0, w0, argnum=1))


def test_grad_of_grad_composes():
    # d2/dx2 of x^3 sin(x) = 6x sin x + 6x^2 cos x - x^3 sin x
    f = lambda x: x**3 * x.sin()
    d2 = func.grad(func.grad(f))
    d3 = func.grad(d2)
    for v in (0.4, -1.3, 2.0):
        expected2 = 6 * v * np.sin(v) + 6 * v**2 * np.cos(v) - v**3 * np.sin(v)
        expected3 = (6 * np.sin(v) + 18 * v * np.cos(v) - 9 * v**2 * np.sin(v)
                     - v**3 * np.cos(v))
        assert float(d2(dg.tensor(v))) == pytest.approx(expected2, rel=1e-12)
        assert float(d3(dg.tensor(v))) == pytest.approx(expected3, rel=1e-12)


def test_grad_of_grad_norm_is_hessian_vector():
    # grad(x -> grad(f)(x) . v) is H v: reverse-over-reverse through the transforms
    x0, v = np.array([0.3, -1.1, 0.8]), np.array([1.0, -2.0, 0.5])
    hv = func.grad(lambda x: (func.grad(scalar_f)(x) * v).sum())(dg.tensor(x0))
    close(hv.numpy(), scalar_f_hess(x0) @ v, rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------ vjp

def test_vjp_is_transposed_jacobian():
    f, x0 = NONSQUARE[0][1], NONSQUARE[0][2]
    out, vjp_fn = func.vjp(f, dg.tensor(x0))
    u = np.array([0.5, -1.0, 2.0, 0.1, -0.3])
    (ct,) = vjp_fn(dg.tensor(u))
    assert isinstance(vjp_fn(dg.tensor(u)), tuple)
    close(ct.numpy(), u @ fd_jacobian(f, x0))
    close(out.numpy(), np.tanh(M @ x0), rtol=1e-15, atol=0)


def test_vjp_several_primals():
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    f = lambda x, w: (x @ w).sin() * w.sum(axis=0)
    out, vjp_fn = func.vjp(f, dg.tensor(x0), dg.tensor(w0))
    u = np.array([0.7, -1.4])
    cx, cw = vjp_fn(dg.tensor(u))
    close(cx.numpy(), u @ fd_jacobian(f, x0, w0, argnum=0))
    close(cw.numpy(), np.tensordot(u, fd_jacobian(f, x0, w0, argnum=1), axes=1))


def test_vjp_fn_can_be_called_many_times():
    f, x0 = NONSQUARE[1][1], NONSQUARE[1][2]
    _, vjp_fn = func.vjp(f, dg.tensor(x0))
    jac = fd_jacobian(f, x0)
    for u in (np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([2.0, -3.0])):
        close(vjp_fn(dg.tensor(u))[0].numpy(), u @ jac)


# ------------------------------------------------------------------ jvp, two ways here (torch: oracle file)

def jvp_via_vjp_transpose(f, x0: np.ndarray, v: np.ndarray) -> np.ndarray:
    """J v without forward mode: u -> vjp_fn(u) = J^T u is linear, so
    d/du <J^T u, v> = J v. The VJP is recorded with a cotangent that requires grad."""
    out, vjp_fn = func.vjp(f, dg.tensor(x0))
    u = dg.tensor(np.zeros(out.shape), requires_grad=True)
    (ct,) = vjp_fn(u)
    (jv,) = dg.grad((ct * v).sum(), u)
    return jv.numpy()


@pytest.mark.parametrize("name,f,x0", NONSQUARE, ids=NS_IDS)
def test_jvp_against_finite_differences(name, f, x0):
    v = np.linspace(-1.0, 1.5, x0.size).reshape(x0.shape)
    out, t = func.jvp(f, (dg.tensor(x0),), (dg.tensor(v),))
    with dg.no_grad():
        close(out.numpy(), f(dg.tensor(x0)).numpy(), rtol=0, atol=0)
    jac = fd_jacobian(f, x0)
    expected = np.tensordot(jac, v, axes=v.ndim)
    assert t.shape == out.shape
    close(t.numpy(), expected)


@pytest.mark.parametrize("name,f,x0", NONSQUARE, ids=NS_IDS)
def test_jvp_against_vjp_of_vjp(name, f, x0):
    v = np.linspace(-1.0, 1.5, x0.size).reshape(x0.shape)
    _, t = func.jvp(f, (dg.tensor(x0),), (dg.tensor(v),))
    close(t.numpy(), jvp_via_vjp_transpose(f, x0, v), rtol=1e-12, atol=1e-13)


def test_jvp_several_primals_sum_their_contributions():
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    f = lambda x, w: (x @ w).sin() * w.sum(axis=0)
    vx, vw = np.array([1.0, 0.5, -0.2]), _rng.standard_normal((3, 2))
    _, t = func.jvp(f, (dg.tensor(x0), dg.tensor(w0)), (dg.tensor(vx), dg.tensor(vw)))
    expected = (fd_jacobian(f, x0, w0, argnum=0) @ vx
                + np.tensordot(fd_jacobian(f, x0, w0, argnum=1), vw, axes=2))
    close(t.numpy(), expected)


def test_jvp_closed_form():
    # f(x) = exp(x) * x^2, tangent v: J v = (exp(x) x^2 + 2x exp(x)) v
    x0, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 3.0, -0.5])
    _, t = func.jvp(lambda x: x.exp() * x**2, (dg.tensor(x0),), (dg.tensor(v),))
    close(t.numpy(), (np.exp(x0) * x0**2 + 2 * x0 * np.exp(x0)) * v, rtol=1e-14, atol=0)


def test_nested_jvp_gives_second_directional_derivative():
    # jvp of (x -> jvp(f, x, v)) in direction w is w^T H v
    x0 = np.array([0.3, -1.1, 0.8])
    v, w = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.2, -1.0])
    inner = lambda x: func.jvp(scalar_f, (x,), (dg.tensor(v),))[1]
    _, second = func.jvp(inner, (dg.tensor(x0),), (dg.tensor(w),))
    assert float(second) == pytest.approx(w @ scalar_f_hess(x0) @ v, rel=1e-12)


def test_reverse_over_forward():
    # dg.grad of a jvp output: d/dx <grad f(x), v> = H v
    x0, v = np.array([0.3, -1.1, 0.8]), np.array([1.0, -2.0, 0.5])
    x = dg.tensor(x0, requires_grad=True)
    _, t = func.jvp(scalar_f, (x,), (dg.tensor(v),))
    assert t.requires_grad
    (hv,) = dg.grad(t, x)
    close(hv.numpy(), scalar_f_hess(x0) @ v, rtol=1e-12, atol=1e-13)
    # the same through the transforms
    hv2 = func.grad(lambda x: func.jvp(scalar_f, (x,), (dg.tensor(v),))[1])(dg.tensor(x0))
    close(hv2.numpy(), scalar_f_hess(x0) @ v, rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------ Jacobians

@pytest.mark.parametrize("name,f,x0", NONSQUARE, ids=NS_IDS)
def test_jacrev_and_jacfwd_agree_on_nonsquare_maps(name, f, x0):
    jr = func.jacrev(f)(dg.tensor(x0)).numpy()
    jf = func.jacfwd(f)(dg.tensor(x0)).numpy()
    jac = fd_jacobian(f, x0)
    assert jr.shape == jf.shape == jac.shape
    close(jr, jf, rtol=1e-12, atol=1e-13)
    close(jr, jac)


def test_jacobian_closed_form_of_affine_tanh():
    # d tanh(Mx)/dx = diag(1 - tanh^2) M
    x0 = np.array([0.2, -0.7, 1.1])
    t = np.tanh(M @ x0)
    expected = (1 - t**2)[:, None] * M
    close(func.jacrev(lambda x: (M @ x).tanh())(dg.tensor(x0)).numpy(), expected, rtol=1e-14, atol=1e-15)
    close(func.jacfwd(lambda x: (M @ x).tanh())(dg.tensor(x0)).numpy(), expected, rtol=1e-14, atol=1e-15)


def test_jacobians_with_tuple_argnums():
    f = lambda x, w: (x @ w).sin()
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    jr = func.jacrev(f, argnums=(0, 1))(dg.tensor(x0), dg.tensor(w0))
    jf = func.jacfwd(f, argnums=(0, 1))(dg.tensor(x0), dg.tensor(w0))
    for k in range(2):
        expected = fd_jacobian(f, x0, w0, argnum=k)
        assert jr[k].shape == jf[k].shape == expected.shape
        close(jr[k].numpy(), expected)
        close(jf[k].numpy(), expected)


# ------------------------------------------------------------------ Hessians and HVPs

def test_hessian_closed_form():
    x0 = np.array([0.3, -1.1, 0.8])
    h = func.hessian(scalar_f)(dg.tensor(x0)).numpy()
    close(h, scalar_f_hess(x0), rtol=1e-12, atol=1e-13)
    close(h, fd_jacobian(lambda x: func.grad(scalar_f)(x), x0), rtol=1e-6, atol=1e-7)


def test_jacfwd_of_jacfwd_equals_hessian():
    x0 = np.array([0.3, -1.1, 0.8])
    ff = func.jacfwd(func.jacfwd(scalar_f))(dg.tensor(x0)).numpy()
    close(ff, scalar_f_hess(x0), rtol=1e-12, atol=1e-13)
    rf = func.jacrev(func.jacfwd(scalar_f))(dg.tensor(x0)).numpy()
    close(rf, scalar_f_hess(x0), rtol=1e-12, atol=1e-13)


def test_hessian_of_matrix_argument_has_doubled_shape():
    # f(W) = sum((xW)^2) for fixed x: H[a,b,c,d] = 2 x_a x_c [b == d]
    x0 = np.array([0.3, -1.1, 0.8])
    h = func.hessian(lambda w: ((x0 @ w) ** 2).sum())(dg.tensor(K)).numpy()
    expected = 2 * np.einsum("a,c,bd->abcd", x0, x0, np.eye(2))
    assert h.shape == (3, 2, 3, 2)
    close(h, expected, rtol=1e-14, atol=1e-15)


def test_hessian_with_tuple_argnums_gives_every_block():
    # f(x, y) = (x.y)^2 + sum(x^3) sum(y), s = x.y:
    # Hxx = 2 y y^T + 6 diag(x) sum(y),  Hxy = 2 y x^T + 2 s I + 3 x^2 1^T,  Hyy = 2 x x^T
    f = lambda x, y: (x * y).sum() ** 2 + (x**3).sum() * y.sum()
    x0, y0 = np.array([0.3, -1.1, 0.8]), np.array([1.2, 0.5, -0.4])
    s = x0 @ y0
    hxx = 2 * np.outer(y0, y0) + 6 * np.diag(x0) * y0.sum()
    hxy = 2 * np.outer(y0, x0) + 2 * s * np.eye(3) + 3 * np.outer(x0**2, np.ones(3))
    hyy = 2 * np.outer(x0, x0)
    (h00, h01), (h10, h11) = func.hessian(f, argnums=(0, 1))(dg.tensor(x0), dg.tensor(y0))
    for got, want in [(h00, hxx), (h01, hxy), (h10, hxy.T), (h11, hyy)]:
        close(got.numpy(), want, rtol=1e-13, atol=1e-14)


def test_jacobians_of_tuple_outputs():
    # jac[i][j] = d out_i / d args[j], outputs outermost, as in torch.func
    f = lambda x, w: ((x @ w).sin(), (x * x).sum())
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    parts = [lambda x, w: f(x, w)[0], lambda x, w: f(x, w)[1]]
    for jac in (func.jacrev, func.jacfwd):
        j = jac(f, argnums=(0, 1))(dg.tensor(x0), dg.tensor(w0))
        for i in range(2):
            for k in range(2):
                close(j[i][k].numpy(), fd_jacobian(parts[i], x0, w0, argnum=k))
        single = jac(f)(dg.tensor(x0), dg.tensor(w0))    # int argnums: one block per output
        assert isinstance(single, tuple) and len(single) == 2
        close(single[1].numpy(), 2 * x0, rtol=1e-14, atol=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hvp_equals_hessian_times_vector(seed):
    r = np.random.default_rng(seed)
    x0, v = r.standard_normal(3), r.standard_normal(3)
    value, hv = func.hvp(scalar_f, dg.tensor(x0), dg.tensor(v))
    assert float(value) == pytest.approx(float(scalar_f(dg.tensor(x0))), rel=1e-15)
    h = func.hessian(scalar_f)(dg.tensor(x0)).numpy()
    close(hv.numpy(), h @ v, rtol=1e-12, atol=1e-13)
    close(hv.numpy(), scalar_f_hess(x0) @ v, rtol=1e-12, atol=1e-13)


def test_hvp_with_tuple_primals():
    # f(x, w) = two_arg; H v over both arguments, against finite differences of the gradients
    x0, w0 = np.array([0.3, -1.1, 0.8]), K.copy()
    vx, vw = np.array([0.2, -0.4, 1.0]), _rng.standard_normal((3, 2))
    _, (hx, hw) = func.hvp(two_arg, (dg.tensor(x0), dg.tensor(w0)), (dg.tensor(vx), dg.tensor(vw)))
    eps = 1e-6
    gp = func.grad(two_arg, argnums=(0, 1))(dg.tensor(x0 + eps * vx), dg.tensor(w0 + eps * vw))
    gm = func.grad(two_arg, argnums=(0, 1))(dg.tensor(x0 - eps * vx), dg.tensor(w0 - eps * vw))
    close(hx.numpy(), (gp[0].numpy() - gm[0].numpy()) / (2 * eps), rtol=1e-6, atol=1e-7)
    close(hw.numpy(), (gp[1].numpy() - gm[1].numpy()) / (2 * eps), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ bad input

def test_grad_of_nonscalar_output_needs_grad_outputs():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        dg.grad(x * 2, x)
    with pytest.raises(ValueError, match=r"\(3,\)"):
        func.grad(lambda x: x * 2)(dg.tensor([1.0, 2.0, 3.0]))
    # with grad_outputs it is a VJP
    (g,) = dg.grad(x * x, x, grad_outputs=np.array([1.0, 0.5, -1.0]))
    close(g.numpy(), [2.0, 2.0, -6.0], rtol=0, atol=0)


def test_grad_outputs_of_wrong_shape_is_refused():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        dg.grad(x * 2, x, grad_outputs=np.ones(2))


def test_input_not_in_graph():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([3.0], requires_grad=True)
    out = (x * x).sum()
    with pytest.raises(RuntimeError, match=r"input 1 \(shape \(1,\)\) is not in the graph"):
        dg.grad(out, (x, y), retain_graph=True)
    gx, gy = dg.grad(out, (x, y), allow_unused=True)
    close(gx.numpy(), [2.0, 4.0], rtol=0, atol=0)
    assert gy is None


def test_second_derivative_of_a_linear_function_has_no_graph():
    # The gradient of a linear function is a constant: as in PyTorch it carries no history,
    # so differentiating it again is refused with a clear error rather than a silent zero.
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (g,) = dg.grad((3 * x).sum(), x, create_graph=True)
    close(g.numpy(), [3.0, 3.0], rtol=0, atol=0)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match=r"does not require grad"):
        dg.grad(g.sum(), x)
    # the transforms fill the gap with zeros
    close(func.hessian(lambda x: (3 * x).sum())(dg.tensor([1.0, 2.0])).numpy(), np.zeros((2, 2)),
          rtol=0, atol=0)


def test_jvp_tangent_shape_must_match_primal():
    with pytest.raises(ValueError, match=r"tangent 0 has shape \(2,\).*primal has shape \(3,\)"):
        func.jvp(lambda x: x.sin(), (dg.tensor([1.0, 2.0, 3.0]),), (dg.tensor([1.0, 1.0]),))
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        func.jvp(lambda x, y: x * y, (dg.ones(2), dg.ones(2)), (dg.ones(2),))


def test_hvp_tangent_shape_must_match_primal():
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        func.hvp(scalar_f, dg.tensor([1.0, 2.0, 3.0]), dg.tensor([1.0, 1.0]))


def test_bad_argnums():
    with pytest.raises(ValueError, match="argnums"):
        func.grad(two_arg, argnums=2)(dg.ones(3), dg.ones((3, 2)))
    for transform in (func.grad, func.jacrev, func.jacfwd, func.hessian):
        with pytest.raises(ValueError, match="argnums is empty"):
            transform(two_arg, argnums=())(dg.ones(3), dg.ones((3, 2)))


# ------------------------------------------------------------------ backward(create_graph=True)

def test_backward_create_graph_gives_differentiable_grad():
    x0 = np.array([0.3, -1.1, 0.8])
    x = dg.tensor(x0, requires_grad=True)
    scalar_f(x).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    close(g.detach().numpy(), scalar_f_grad(x0), rtol=1e-12, atol=1e-13)
    v = np.array([1.0, -2.0, 0.5])
    (hv,) = dg.grad((g * v).sum(), x)
    close(hv.numpy(), scalar_f_hess(x0) @ v, rtol=1e-12, atol=1e-13)


def test_backward_create_graph_then_backward_accumulates_second_order():
    # after backward(create_graph) x.grad = f'(x); backward through f'(x) adds f''(x) to it
    x = dg.tensor(1.3, requires_grad=True)
    (x**4).backward(create_graph=True)
    first = x.grad
    assert float(first) == pytest.approx(4 * 1.3**3, rel=1e-14)
    x.grad = None
    first.backward()
    assert float(x.grad) == pytest.approx(12 * 1.3**2, rel=1e-14)


def test_value_from_transforms_has_no_graph_unless_an_input_requires_grad():
    """value_and_grad and hvp return the value detached when nothing outside can use its
    graph (as torch.autograd.functional.hvp does), and with history when something can."""
    f = lambda x: (x * x).sin().sum()
    x = dg.tensor([0.3, 1.1])
    value, _ = dg.func.value_and_grad(f)(x)
    assert not value.requires_grad
    value, hv = dg.func.hvp(f, x, dg.ones(2))
    assert not value.requires_grad and not hv.requires_grad
    np.testing.assert_allclose(value.numpy(), np.sin(x.numpy() ** 2).sum(), rtol=1e-15)
    xr = dg.tensor([0.3, 1.1], requires_grad=True)
    value, _ = dg.func.value_and_grad(f)(xr)
    assert value.requires_grad
