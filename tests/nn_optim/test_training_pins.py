"""Training-loop pins: optimisation through the engine lands on closed-form answers.

The problem is least squares (n = 200, d = 5 with an intercept column, features of
unequal scales, fixed seed) from benchmarks/pins.py. Its exact solution beta* comes
from numpy.linalg.solve on the normal equations and its loss Hessian 2 X^T X / n from
NumPy, so every reference is independent of the engine. The headline numbers are
asserted on the very dicts that benchmarks/pins.py returns.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import pins  # the functions whose numbers the report quotes
import duograd as dg
from duograd import nn, optim
from duograd.nn import functional as F


@pytest.fixture(scope="module")
def problem():
    X, y, beta_star = pins.least_squares_problem(seed=0)
    H = 2 * X.T @ X / len(y)
    return X, y, beta_star, H


@pytest.fixture(scope="module")
def ls():
    return pins.least_squares_pins(seed=0)


@pytest.fixture(scope="module")
def adam():
    return pins.adam_stall(seed=0)


def mse(X, y, beta):
    return F.mse_loss(dg.tensor(X) @ beta, y)


# ---------------------------------------------------------------- gradient descent at lr = 1/L


def test_gd_reaches_normal_equation_solution(ls):
    assert ls["relative_error"] <= 1e-12


def test_problem_is_not_trivially_conditioned(ls):
    # GD needs hundreds of steps here, so the pin tests the loop, not a lucky first step
    assert ls["condition_number"] > 10 and ls["steps_to_relative_error_1e-12"] > 100


def test_final_loss_equals_closed_form_residual(ls):
    assert ls["loss_gap_relative"] <= 4 * np.finfo(np.float64).eps


def test_gradient_at_beta_star_is_zero_to_roundoff(ls):
    # the normal equation X^T (X beta* - y) = 0, restated through the engine
    assert ls["grad_at_star_max_abs"] <= ls["grad_roundoff_bound"]
    assert ls["grad_at_star_numpy_max_abs"] <= ls["grad_roundoff_bound"]


def test_gradient_at_beta_star_matches_numpy(ls):
    assert ls["grad_at_star_vs_numpy"] <= 1e-15


def test_loss_never_rises_at_lr_one_over_L(ls):
    assert ls["rises_before_converged"] == 0
    assert not ls["loss_rose"]


def test_engine_gradient_matches_closed_form(problem):
    X, y, _, _ = problem
    rng = np.random.default_rng(1)
    for _ in range(3):
        b = rng.standard_normal(X.shape[1])
        beta = dg.tensor(b, requires_grad=True)
        mse(X, y, beta).backward()
        ref = 2 * X.T @ (X @ b - y) / len(y)
        np.testing.assert_allclose(beta.grad.numpy(), ref, rtol=1e-13, atol=1e-14)


def test_engine_hessian_is_two_xtx_over_n(problem):
    X, y, beta_star, H = problem
    Hd = dg.func.hessian(lambda b: mse(X, y, b))(dg.tensor(beta_star)).numpy()
    np.testing.assert_allclose(Hd, H, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(np.linalg.eigvalsh(Hd)[-1], np.linalg.eigvalsh(H)[-1], rtol=1e-14)


def test_one_gd_step_is_the_closed_form_update(problem):
    X, y, _, H = problem
    lr = 1 / np.linalg.eigvalsh(H)[-1]
    b0 = np.random.default_rng(2).standard_normal(X.shape[1])
    beta = dg.tensor(b0, requires_grad=True)
    opt = optim.SGD([beta], lr=lr)
    mse(X, y, beta).backward()
    opt.step()
    np.testing.assert_allclose(beta._data, b0 - lr * 2 * X.T @ (X @ b0 - y) / len(y), rtol=1e-14)


@pytest.mark.parametrize("k", [1, 10, 60])
def test_gd_iterates_follow_the_linear_recurrence(problem, k):
    """On a quadratic, GD is linear: beta_k - beta* = (I - lr H)^k (beta_0 - beta*)."""
    X, y, beta_star, H = problem
    lr = 1 / np.linalg.eigvalsh(H)[-1]
    b0 = np.random.default_rng(3).standard_normal(X.shape[1])
    beta = dg.tensor(b0, requires_grad=True)
    opt = optim.SGD([beta], lr=lr)
    Xt = dg.tensor(X)
    for _ in range(k):
        opt.zero_grad()
        F.mse_loss(Xt @ beta, y).backward()
        opt.step()
    ref = beta_star + np.linalg.matrix_power(np.eye(len(b0)) - lr * H, k) @ (b0 - beta_star)
    np.testing.assert_allclose(beta._data, ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("seed", [1, 2])
def test_manual_update_gd_other_seeds(seed):
    """Plain ``beta.data = beta._data - lr * grad``: no optimizer object involved."""
    X, y, beta_star = pins.least_squares_problem(seed=seed)
    lr = 1 / np.linalg.eigvalsh(2 * X.T @ X / len(y))[-1]
    Xt = dg.tensor(X)
    beta = dg.tensor(np.zeros(X.shape[1]), requires_grad=True)
    for _ in range(2500):
        beta.grad = None
        F.mse_loss(Xt @ beta, y).backward()
        beta.data = beta._data - lr * beta.grad._data
    assert np.linalg.norm(beta._data - beta_star) / np.linalg.norm(beta_star) <= 1e-12


def test_linear_module_learns_intercept_as_bias(problem):
    """nn.Linear(4, 1) on the features without the ones column: its bias *is* the
    intercept, so weight and bias together must land on beta*. This pins the broadcast
    adjoint of the bias (summing the gradient over 200 rows) to a closed form."""
    X, y, beta_star, H = problem
    model = nn.Linear(4, 1, rng=0)
    opt = optim.SGD(model.parameters(), lr=1 / np.linalg.eigvalsh(H)[-1])
    x, target = dg.tensor(X[:, 1:]), y[:, None]
    for _ in range(2500):
        opt.zero_grad()
        F.mse_loss(model(x), target).backward()
        opt.step()
    got = np.concatenate([model.bias._data, model.weight._data[0]])  # weight (1, 4): (out, in)
    assert np.linalg.norm(got - beta_star) / np.linalg.norm(beta_star) <= 1e-12


def test_heavy_ball_with_optimal_parameters(problem):
    """SGD with momentum is Polyak's heavy ball; with lr = 4/(sqrt(L)+sqrt(mu))^2 and
    momentum ((sqrt(k)-1)/(sqrt(k)+1))^2 it converges at rate about (sqrt(k)-1)/(sqrt(k)+1)."""
    X, y, beta_star, H = problem
    mu, L = np.linalg.eigvalsh(H)[[0, -1]]
    k = L / mu
    lr = 4 / (np.sqrt(L) + np.sqrt(mu)) ** 2
    momentum = ((np.sqrt(k) - 1) / (np.sqrt(k) + 1)) ** 2
    beta = dg.tensor(np.zeros(X.shape[1]), requires_grad=True)
    opt = optim.SGD([beta], lr=lr, momentum=momentum)
    Xt = dg.tensor(X)
    steps = int(np.ceil(40 / -np.log((np.sqrt(k) - 1) / (np.sqrt(k) + 1))))   # e^-40 ~ 4e-18
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(Xt @ beta, y).backward()
        opt.step()
    assert steps < 400   # far fewer than the ~1,000 plain GD needs at this conditioning
    assert np.linalg.norm(beta._data - beta_star) / np.linalg.norm(beta_star) <= 1e-12


@pytest.mark.parametrize("factor, diverges", [(1.9, False), (2.1, True)])
def test_stability_threshold_two_over_L(problem, factor, diverges):
    """GD on a quadratic is stable exactly for lr < 2/L: 1.9/L converges, 2.1/L blows up."""
    X, y, beta_star, H = problem
    lr = factor / np.linalg.eigvalsh(H)[-1]
    beta = dg.tensor(np.zeros(X.shape[1]), requires_grad=True)
    opt = optim.SGD([beta], lr=lr)
    Xt = dg.tensor(X)
    for _ in range(300):
        opt.zero_grad()
        F.mse_loss(Xt @ beta, y).backward()
        opt.step()
    dist = np.linalg.norm(beta._data - beta_star)
    assert (dist > 1e3) if diverges else (dist < 1e-3)


def test_mse_at_zero_is_mean_square_of_y(problem):
    X, y, _, _ = problem
    assert mse(X, y, dg.tensor(np.zeros(X.shape[1]))).item() == pytest.approx(np.mean(y * y),
                                                                               rel=1e-15)


# ---------------------------------------------------------------- Adam: fixed lr vs annealed


def test_adam_fixed_lr_not_settled_after_6000_steps(adam):
    # the distance at one given step is chaotic (see pins.adam_stall), so the pin is
    # that within the 1,000 steps before step 6,000 the iterate is thrown >= 1e-6 away
    assert adam["max_distance_5001_to_6000"] >= 1e-6


def test_adam_fixed_lr_not_settled_after_20000_steps(adam):
    assert adam["max_distance_19001_to_20000"] >= 1e-6


def test_adam_fixed_lr_did_reach_roundoff_first(adam):
    # not slow convergence: it gets to 1e-12 early and is then thrown out again
    assert adam["first_step_below_1e-12"] is not None and adam["first_step_below_1e-12"] < 6000


def test_adam_annealed_lr_reaches_beta_star(adam):
    assert adam["annealed_distance"] <= 1e-12
