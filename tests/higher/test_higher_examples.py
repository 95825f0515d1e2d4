"""The two worked examples that optimise through a derivative: the WGAN-GP gradient
penalty (examples/gradient_penalty.py) and the Poisson PINN (examples/pinn_poisson.py).

Each is checked against something computed without the engine's derivative code:
closed forms, central finite differences, and PyTorch (marked ``oracle``).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import duograd as dg

# `examples` lives at the repository root, which is on sys.path under `python -m pytest`
# but not under `pytest` or `python tests/run_all.py`.
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from examples import gradient_penalty as gpx  # noqa: E402
from examples import pinn_poisson as pinn  # noqa: E402

# ------------------------------------------------------------------ gradient penalty

_rng = np.random.default_rng(11)
SHAPES = [(2, 5), (5,), (5, 5), (5,), (5, 1), (1,)]
WEIGHTS = [_rng.standard_normal(s) * 0.8 for s in SHAPES]
REAL = _rng.normal(2.0, 0.5, (6, 2))
FAKE = _rng.normal(0.0, 1.0, (6, 2))
ALPHA = _rng.uniform(size=6)
LAM = 10.0


def torch_penalty_and_grads(torch, weights):
    params = [torch.tensor(w, requires_grad=True) for w in weights]
    x_hat = torch.tensor(gpx.interpolate(REAL, FAKE, ALPHA), requires_grad=True)
    h = x_hat
    pairs = list(zip(params[0::2], params[1::2]))
    for k, (w, b) in enumerate(pairs):
        h = h @ w + b
        if k < len(pairs) - 1:
            h = torch.tanh(h)
    (g,) = torch.autograd.grad(h.sum(), x_hat, create_graph=True)
    gp = LAM * ((g.norm(2, dim=1) - 1) ** 2).mean()
    grads = torch.autograd.grad(gp, params, allow_unused=True)
    grads = [torch.zeros_like(p) if q is None else q for q, p in zip(grads, params)]
    return float(gp.detach()), [q.numpy() for q in grads]


@pytest.mark.oracle
def test_gradient_penalty_matches_torch(torch):
    value, grads = gpx.penalty_and_grads(WEIGHTS, REAL, FAKE, ALPHA, LAM)
    value_t, grads_t = torch_penalty_and_grads(torch, WEIGHTS)
    assert abs(value - value_t) <= 1e-10 * max(1.0, abs(value_t))
    for g, gt, shape in zip(grads, grads_t, SHAPES):
        assert g.shape == shape
        np.testing.assert_allclose(g, gt, rtol=1e-10, atol=1e-12)


def test_gradient_penalty_parameter_gradient_by_finite_differences():
    _, grads = gpx.penalty_and_grads(WEIGHTS, REAL, FAKE, ALPHA, LAM)
    eps = 1e-6
    for k, w in enumerate(WEIGHTS):
        numeric = np.zeros(w.size)
        for e in range(w.size):
            moved = [v.copy() for v in WEIGHTS]
            moved[k].reshape(-1)[e] += eps
            up = gpx.penalty_and_grads(moved, REAL, FAKE, ALPHA, LAM)[0]
            moved[k].reshape(-1)[e] -= 2 * eps
            down = gpx.penalty_and_grads(moved, REAL, FAKE, ALPHA, LAM)[0]
            numeric[e] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grads[k].reshape(-1), numeric, rtol=1e-6, atol=1e-7,
                                   err_msg=f"weight {k} of shape {w.shape}")


def test_gradient_penalty_value_closed_form_one_hidden_layer():
    # D(x) = tanh(x W1 + b1) W2 + b2 has input gradient W1 ((1 - h^2) * W2[:, 0]) per row
    w1, b1, w2, b2 = (_rng.standard_normal(s) for s in [(2, 4), (4,), (4, 1), (1,)])
    x_hat = gpx.interpolate(REAL, FAKE, ALPHA)
    h = np.tanh(x_hat @ w1 + b1)
    g = ((1 - h**2) * w2[:, 0]) @ w1.T
    expected = LAM * np.mean((np.linalg.norm(g, axis=1) - 1) ** 2)
    value, _ = gpx.penalty_and_grads([w1, b1, w2, b2], REAL, FAKE, ALPHA, LAM)
    assert value == pytest.approx(expected, rel=1e-13)


def test_gradient_penalty_closed_form_linear_critic():
    # D(x) = x w + b: the input gradient is w everywhere, so the penalty is lam (|w| - 1)^2,
    # its gradient 2 lam (|w| - 1) w / |w|, and the bias never enters it
    w, b = np.array([[0.6], [-1.7]]), np.array([0.3])
    value, (gw, gb) = gpx.penalty_and_grads([w, b], REAL, FAKE, ALPHA, LAM)
    r = np.linalg.norm(w)
    assert value == pytest.approx(LAM * (r - 1) ** 2, rel=1e-14)
    np.testing.assert_allclose(gw, 2 * LAM * (r - 1) * w / r, rtol=1e-14)
    np.testing.assert_array_equal(gb, np.zeros(1))


def test_gradient_penalty_main_runs_a_few_critic_steps():
    stats = gpx.main(steps=3, batch=16, log_every=0)
    assert set(stats) == {"wasserstein", "penalty", "grad_norm"}
    assert all(math.isfinite(v) for v in stats.values())


# ------------------------------------------------------------------ PINN

def test_pinn_second_derivative_of_a_known_function():
    # plug N(x) = sin(3x) into u = x(1 - x) N(x):
    # u'' = -2 sin 3x + 6 (1 - 2x) cos 3x - 9 x (1 - x) sin 3x
    x = np.linspace(0.05, 0.95, 7).reshape(-1, 1)
    u, d2u = pinn.second_derivative(pinn.trial_solution(lambda t: (3 * t).sin()), x)
    s, c = np.sin(3 * x), np.cos(3 * x)
    np.testing.assert_allclose(u.detach().numpy(), x * (1 - x) * s, rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(d2u.detach().numpy(), -2 * s + 6 * (1 - 2 * x) * c - 9 * x * (1 - x) * s,
                               rtol=1e-12, atol=1e-13)


def test_pinn_residual_vanishes_at_the_exact_solution():
    # sign convention check: u = sin(pi x) solves u'' + pi^2 sin(pi x) = 0
    x = pinn.collocation(16)
    loss = pinn.residual_loss(lambda t: (math.pi * t).sin(), x)
    assert float(loss) < 1e-24


def test_pinn_second_derivative_of_the_network_by_finite_differences():
    from duograd import nn

    net = nn.MLP(1, [8, 8, 1], activation="tanh", rng=3)
    u = pinn.trial_solution(net)
    x = np.linspace(0.1, 0.9, 5).reshape(-1, 1)
    _, d2u = pinn.second_derivative(u, x)
    h = 1e-4

    def u_np(v):
        with dg.no_grad():
            return u(dg.tensor(v)).numpy()

    fd = (u_np(x + h) - 2 * u_np(x) + u_np(x - h)) / h**2
    np.testing.assert_allclose(d2u.detach().numpy(), fd, rtol=1e-5, atol=1e-6)
    assert d2u.requires_grad   # the weights require grad: the loss can reach them


def test_pinn_loss_gradient_by_finite_differences():
    # the weights' gradient of the residual loss (a third-order computation) vs central
    # differences, on one weight matrix of a small network
    from duograd import nn

    net = nn.MLP(1, [4, 4, 1], activation="tanh", rng=5)
    u = pinn.trial_solution(net)
    x = pinn.collocation(8)
    w = net.layers[1].weight
    (g,) = dg.grad(pinn.residual_loss(u, x), w)
    base = w._data.copy()
    eps = 1e-6
    numeric = np.zeros(base.size)
    for e in range(base.size):
        vals = []
        for step in (eps, -eps):
            moved = base.copy().reshape(-1)
            moved[e] += step
            w.data = moved.reshape(base.shape)
            vals.append(float(pinn.residual_loss(u, x)))
        numeric[e] = (vals[0] - vals[1]) / (2 * eps)
    w.data = base
    np.testing.assert_allclose(g.numpy().reshape(-1), numeric, rtol=1e-6, atol=1e-7)


def test_pinn_trains_below_one_percent():
    result = pinn.train(epochs=400, seed=0)
    assert result["max_error"] < 1e-2, result["max_error"]
    # the boundary conditions hold exactly by construction
    with dg.no_grad():
        ends = pinn.trial_solution(result["model"])(dg.tensor([[0.0], [1.0]])).numpy()
    np.testing.assert_array_equal(ends, np.zeros((2, 1)))
    assert result["epochs"] == 400 and result["loss"] >= 0


def test_pinn_smoke_setting():
    result = pinn.train(epochs=3, seed=1, width=8, points=16)
    assert set(result) == {"max_error", "loss", "model", "epochs", "seconds"}
    assert math.isfinite(result["max_error"]) and math.isfinite(result["loss"])


@pytest.mark.parametrize("module", [gpx, pinn], ids=["gradient_penalty", "pinn_poisson"])
def test_docstring_examples_run(module):
    import doctest

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
