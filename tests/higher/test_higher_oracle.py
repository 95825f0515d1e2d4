"""Second and third derivatives against PyTorch (float64), the independent oracle.

The centre piece is the full Hessian of a small classifier's loss with respect to
all 59 of its parameters: a tanh MLP (W1 (2, 8), b1, W2 (8, 3), b2) on five points,
with the softmax cross-entropy composed from primitives. duograd computes it by
reverse-over-reverse (``dg.grad(create_graph=True)`` then one backward per row) and
by ``func.hessian`` (forward-over-reverse); PyTorch by ``torch.autograd.grad`` with
``create_graph=True`` row by row and by ``torch.func.hessian``.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import func

pytestmark = [
    pytest.mark.oracle,
    # torch.func's own internals still call torch.jit.script; not ours to fix
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
]

_rng = np.random.default_rng(2024)
SHAPES = [(2, 8), (8,), (8, 3), (3,)]
SIZES = [int(np.prod(s)) for s in SHAPES]
N_PARAMS = sum(SIZES)                       # 59
X = _rng.standard_normal((5, 2))
Y = np.array([0, 2, 1, 2, 0])
THETA = _rng.standard_normal(N_PARAMS) * 0.7
V = _rng.standard_normal(N_PARAMS)


def split(theta):
    """The flat parameter vector as (W1, b1, W2, b2): NumPy, duograd or torch alike."""
    out, start = [], 0
    for shape, size in zip(SHAPES, SIZES):
        out.append(theta[start:start + size].reshape(shape))
        start += size
    return out


def mlp_loss_dg(W1, b1, W2, b2):
    h = (dg.tensor(X) @ W1 + b1).tanh()
    z = h @ W2 + b2
    # cross-entropy from primitives: -(z_y - log sum exp z), averaged over the points
    logz = z.exp().sum(axis=1).log()
    return (logz - z[np.arange(5), Y]).mean()


def mlp_loss_torch(torch, W1, b1, W2, b2):
    h = torch.tanh(torch.as_tensor(X) @ W1 + b1)
    z = h @ W2 + b2
    logz = torch.log(torch.exp(z).sum(dim=1))
    return (logz - z[torch.arange(5), torch.as_tensor(Y)]).mean()


def flat_loss_dg(theta):
    return mlp_loss_dg(*split(theta))


def torch_hessian_rows(torch):
    params = [torch.tensor(p, requires_grad=True) for p in split(THETA)]
    loss = mlp_loss_torch(torch, *params)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    g = torch.cat([t.reshape(-1) for t in grads])
    rows = [torch.cat([t.reshape(-1) for t in torch.autograd.grad(g[i], params, retain_graph=True)])
            for i in range(N_PARAMS)]
    return torch.stack(rows).numpy(), float(loss.detach()), g.detach().numpy()


def test_mlp_hessian_reverse_over_reverse_matches_torch(torch):
    params = [dg.tensor(p, requires_grad=True) for p in split(THETA)]
    loss = mlp_loss_dg(*params)
    grads = dg.grad(loss, params, create_graph=True)
    g = dg.concatenate([t.reshape(-1) for t in grads])
    rows = []
    for i in range(N_PARAMS):
        e = np.zeros(N_PARAMS)
        e[i] = 1.0
        row = dg.grad(g, params, grad_outputs=e, retain_graph=True)
        rows.append(np.concatenate([r.numpy().reshape(-1) for r in row]))
    h = np.array(rows)
    h_t, loss_t, g_t = torch_hessian_rows(torch)
    assert float(loss) == pytest.approx(loss_t, rel=1e-14)
    np.testing.assert_allclose(g.detach().numpy(), g_t, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(h, h_t, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)   # a Hessian is symmetric


def test_mlp_hessian_func_matches_torch_func(torch):
    h = func.hessian(flat_loss_dg)(dg.tensor(THETA)).numpy()
    h_t = torch.func.hessian(lambda th: mlp_loss_torch(torch, *split(th)))(
        torch.tensor(THETA)).numpy()
    assert h.shape == (N_PARAMS, N_PARAMS)
    np.testing.assert_allclose(h, h_t, rtol=1e-10, atol=1e-12)


def test_mlp_hvp_matches_torch(torch):
    value, hv = func.hvp(flat_loss_dg, dg.tensor(THETA), dg.tensor(V))
    f_t = lambda th: mlp_loss_torch(torch, *split(th))
    th, v = torch.tensor(THETA), torch.tensor(V)
    # forward-over-reverse in torch.func, and torch.autograd.functional's reverse-over-reverse
    _, hv_fwd = torch.func.jvp(torch.func.grad(f_t), (th,), (v,))
    value_t, hv_rev = torch.autograd.functional.hvp(f_t, th, v)
    assert float(value) == pytest.approx(float(value_t), rel=1e-14)
    np.testing.assert_allclose(hv.numpy(), hv_fwd.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv.numpy(), hv_rev.numpy(), rtol=1e-10, atol=1e-12)


def test_mlp_hvp_per_parameter_tensor_matches_torch(torch):
    # H v over the four separate parameter tensors: grad of <grad, v> with create_graph
    ps = split(THETA)
    vs = split(V)
    params = [dg.tensor(p, requires_grad=True) for p in ps]
    grads = dg.grad(mlp_loss_dg(*params), params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vs))
    hv = dg.grad(dot, params)
    tp = [torch.tensor(p, requires_grad=True) for p in ps]
    tg = torch.autograd.grad(mlp_loss_torch(torch, *tp), tp, create_graph=True)
    thv = torch.autograd.grad(sum((g * torch.tensor(v)).sum() for g, v in zip(tg, vs)), tp)
    for a, b in zip(hv, thv):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_mlp_hessian_blocks_by_argnums_match_torch_func(torch):
    # the Hessian over the four parameter tensors as a nested tuple of 16 blocks
    ps = split(THETA)
    blocks = func.hessian(mlp_loss_dg, argnums=(0, 1, 2, 3))(*[dg.tensor(p) for p in ps])
    blocks_t = torch.func.hessian(lambda *a: mlp_loss_torch(torch, *a), argnums=(0, 1, 2, 3))(
        *[torch.tensor(p) for p in ps])
    for i in range(4):
        for j in range(4):
            assert blocks[i][j].shape == tuple(blocks_t[i][j].shape) == SHAPES[i] + SHAPES[j]
            np.testing.assert_allclose(blocks[i][j].numpy(), blocks_t[i][j].numpy(),
                                       rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ jvp against torch.func.jvp

_M = _rng.standard_normal((4, 3))
# name: (duograd f, torch f (given the torch module), primal)
JVP_CASES = {
    "tanh(Mx)": (lambda x: (_M @ x).tanh(), lambda t, x: t.tanh(t.as_tensor(_M) @ x),
                 np.array([0.3, -0.6, 1.2])),
    "softmax": (lambda x: x.softmax(), lambda t, x: t.softmax(x, dim=-1), np.array([0.3, -0.6, 1.2, 0.1])),
    "log_softmax rows": (lambda x: x.log_softmax(axis=1), lambda t, x: t.log_softmax(x, dim=1),
                         _rng.standard_normal((2, 3))),
    "x sigmoid(x) / (1 + x^2)": (lambda x: x * x.sigmoid() / (1 + x * x),
                                 lambda t, x: x * t.sigmoid(x) / (1 + x * x), np.array([0.5, -2.0, 1.5])),
    "outer product sin": (lambda x: (x.unsqueeze(1) * x.unsqueeze(0)).sin().sum(axis=0),
                          lambda t, x: t.sin(x.unsqueeze(1) * x.unsqueeze(0)).sum(dim=0),
                          np.array([0.5, -2.0, 1.5])),
    "var and max": (lambda x: x.var(axis=0, correction=0) + x.amax(axis=0) * x.sqrt().sum(axis=0),
                    lambda t, x: x.var(dim=0, unbiased=False) + x.amax(dim=0) * x.sqrt().sum(dim=0),
                    np.array([[0.5, 2.0], [1.5, 0.2], [0.9, 1.1]])),
}


@pytest.mark.parametrize("name", list(JVP_CASES))
def test_jvp_matches_torch_func_jvp(torch, name):
    f, f_t, x0 = JVP_CASES[name]
    v = np.linspace(-1.0, 0.8, x0.size).reshape(x0.shape)
    out, t = func.jvp(f, (dg.tensor(x0),), (dg.tensor(v),))
    out_t, t_t = torch.func.jvp(lambda x: f_t(torch, x), (torch.tensor(x0),), (torch.tensor(v),))
    np.testing.assert_allclose(out.numpy(), out_t.numpy(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(t.numpy(), t_t.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", list(JVP_CASES))
def test_jacfwd_matches_torch_jacfwd(torch, name):
    f, f_t, x0 = JVP_CASES[name]
    j = func.jacfwd(f)(dg.tensor(x0)).numpy()
    j_t = torch.func.jacfwd(lambda x: f_t(torch, x))(torch.tensor(x0)).numpy()
    np.testing.assert_allclose(j, j_t, rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------ third derivatives

def test_third_derivative_tensor_matches_torch(torch):
    # f: R^3 -> R with couplings, third-derivative tensor by jacrev three times in both libraries
    def f(x):
        return (x.sin() * (x @ _M.T).tanh().sum()).sum() + (x * x).sum().exp() / 3

    def f_t(x):
        m = torch.as_tensor(_M)
        return (torch.sin(x) * torch.tanh(x @ m.T).sum()).sum() + torch.exp((x * x).sum()) / 3

    x0 = np.array([0.3, -0.5, 0.4])
    t3 = func.jacrev(func.jacrev(func.jacrev(f)))(dg.tensor(x0)).numpy()
    t3_t = torch.func.jacrev(torch.func.jacrev(torch.func.jacrev(f_t)))(torch.tensor(x0)).numpy()
    assert t3.shape == (3, 3, 3)
    np.testing.assert_allclose(t3, t3_t, rtol=1e-10, atol=1e-12)
    mixed = func.jacfwd(func.hessian(f))(dg.tensor(x0)).numpy()
    np.testing.assert_allclose(mixed, t3_t, rtol=1e-10, atol=1e-12)


def test_third_derivative_by_nested_autograd_grad_matches_torch(torch):
    # d/dx of <d/dx <grad f, u>, v>: the contraction T[u, v, .], create_graph at every level
    x0 = np.array([0.7, -0.2, 1.1, 0.4])
    u, v = np.array([1.0, -0.5, 0.3, 2.0]), np.array([0.2, 0.1, -1.0, 0.5])

    x = dg.tensor(x0, requires_grad=True)
    (g,) = dg.grad((x.tanh() ** 3 * x.exp()).sum() * x.logsumexp(), x, create_graph=True)
    (gu,) = dg.grad((g * u).sum(), x, create_graph=True)
    (guv,) = dg.grad((gu * v).sum(), x)

    xt = torch.tensor(x0, requires_grad=True)
    (gt,) = torch.autograd.grad((torch.tanh(xt) ** 3 * torch.exp(xt)).sum() * torch.logsumexp(xt, 0),
                                xt, create_graph=True)
    (gut,) = torch.autograd.grad((gt * torch.tensor(u)).sum(), xt, create_graph=True)
    (guvt,) = torch.autograd.grad((gut * torch.tensor(v)).sum(), xt)
    np.testing.assert_allclose(guv.numpy(), guvt.numpy(), rtol=1e-10, atol=1e-12)


def test_mlp_third_order_directional_derivative_matches_torch(torch):
    # d^3 L [v, v, .] for the MLP loss: jvp of the hvp, against torch.func's
    f_t = lambda th: mlp_loss_torch(torch, *split(th))
    hvp_dg = lambda th: func.hvp(flat_loss_dg, th, dg.tensor(V))[1]
    _, t3 = func.jvp(hvp_dg, (dg.tensor(THETA),), (dg.tensor(V),))
    hvp_t = lambda th: torch.func.jvp(torch.func.grad(f_t), (th,), (torch.tensor(V),))[1]
    _, t3_t = torch.func.jvp(hvp_t, (torch.tensor(THETA),), (torch.tensor(V),))
    np.testing.assert_allclose(t3.numpy(), t3_t.numpy(), rtol=1e-10, atol=1e-12)
