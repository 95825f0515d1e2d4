"""Measure the headline verification numbers, each against an independent reference.

Every function returns a plain dict of floats, ints and bools. The tests assert
thresholds on these very dicts (tests/ops/test_softmax_crossentropy.py and
tests/nn_optim/test_training_pins.py), so a number quoted from here is a number the suite checks.

- ``ce_identity_error``: the engine's gradient of ``cross_entropy`` (composed from
  primitives, no fused backward) against ``(softmax - onehot) / N`` computed in NumPy.
- ``least_squares_pins``: full-batch gradient descent through the engine at lr = 1/L
  against ``numpy.linalg.solve``'s normal-equation solution.
- ``adam_stall``: Adam at a fixed lr does not settle on the same problem; an annealed
  lr does.

    python benchmarks/pins.py        # prints all three dicts as JSON
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

import duograd as dg
from duograd import optim
from duograd.nn import functional as F
from duograd.optim.lr_scheduler import CosineAnnealingLR

__all__ = ["ce_identity_error", "least_squares_problem", "least_squares_pins", "adam_stall"]

SCALES = (1e-3, 1.0, 10.0, 100.0, 1000.0)


def _softmax_minus_onehot(z: np.ndarray, t: np.ndarray, reduction: str) -> np.ndarray:
    """The closed-form gradient, in float64 NumPy, from an explicit max shift."""
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    p[np.arange(len(t)), t] -= 1.0
    return p / len(t) if reduction == "mean" else p


def ce_identity_error(n_cases: int = 200, seed: int = 0) -> dict[str, Any]:
    """Largest |engine gradient - (softmax - onehot)/N| over ``n_cases`` random cases.

    Cases draw N in [1, 64], C in [2, 20], a logit scale from 1e-3 to 1000 and a
    reduction ("mean": the reference is divided by N; "sum": it is not). Each case runs
    in float64 and again with the same logits rounded to float32 (the float32
    error is measured against the float64 reference of the float32 logits).

    >>> r = ce_identity_error(n_cases=10)
    >>> r["max_abs_error"] < 1e-15 and r["all_finite"]
    True
    """
    rng = np.random.default_rng(seed)
    worst64 = worst32 = 0.0
    worst_case: dict[str, Any] = {}
    finite = True
    for k in range(n_cases):
        n, c = int(rng.integers(1, 65)), int(rng.integers(2, 21))
        scale = SCALES[k % len(SCALES)]
        reduction = "mean" if k % 2 == 0 else "sum"
        z = rng.standard_normal((n, c)) * scale
        t = rng.integers(0, c, size=n)
        for dtype in (np.float64, np.float32):
            zd = z.astype(dtype)
            logits = dg.tensor(zd, requires_grad=True)
            loss = F.cross_entropy(logits, t, reduction=reduction)
            loss.backward()
            g = logits.grad.numpy()
            finite &= bool(np.isfinite(loss.item())) and bool(np.all(np.isfinite(g)))
            err = float(np.max(np.abs(g.astype(np.float64) - _softmax_minus_onehot(zd, t, reduction))))
            if dtype is np.float64 and err > worst64:
                worst64 = err
                worst_case = {"N": n, "C": c, "scale": scale, "reduction": reduction}
            elif dtype is np.float32:
                worst32 = max(worst32, err)
    return {"n_cases": n_cases, "max_abs_error": worst64, "max_abs_error_float32": worst32,
            "worst_case": worst_case, "all_finite": finite}


def least_squares_problem(seed: int = 0, n: int = 200, d: int = 5
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, beta_star)``: an intercept column plus d-1 Gaussian features of unequal
    scales (condition number of the Hessian about 38 at seed 0, so gradient descent
    needs on the order of a thousand steps), a noisy linear target, and the exact
    least-squares solution from ``numpy.linalg.solve`` on the normal equations."""
    rng = np.random.default_rng(seed)
    scales = np.array([1.0, 2.0, 0.5, 3.0, 1.5, 0.8])[: d - 1]
    X = np.column_stack([np.ones(n), rng.standard_normal((n, d - 1)) * scales])
    beta_true = rng.standard_normal(d)
    y = X @ beta_true + 0.1 * rng.standard_normal(n)
    beta_star = np.linalg.solve(X.T @ X, X.T @ y)
    return X, y, beta_star


def _first(mask: np.ndarray) -> int | None:
    """The 1-based step at which ``mask`` first holds, or None."""
    return int(np.argmax(mask)) + 1 if np.any(mask) else None


def _mse(X: dg.Tensor, y: np.ndarray, beta: dg.Tensor) -> dg.Tensor:
    return F.mse_loss(X @ beta, y)


def least_squares_pins(seed: int = 0, steps: int = 3000) -> dict[str, Any]:
    """Gradient descent (``optim.SGD`` at lr = 1/L, L the largest eigenvalue of the
    loss Hessian 2X^T X/n from ``numpy.linalg.eigvalsh``) from beta = 0 through the engine.

    Returns the relative error against beta*, the final loss against the closed-form
    residual ||y - X beta*||^2 / n, the engine's gradient at beta* against
    2 X^T (X beta* - y) / n in NumPy (both are round-off: the normal equation restated),
    and whether the loss ever rose. At lr <= 1/L a theorem says it cannot rise in exact
    arithmetic. In floating point it never rises at all while it is still more than
    1e-12 (relative) above the closed form; once converged to the last bits it wiggles
    by a few ulps, which is the round-off of evaluating a mean of n squares. So
    ``loss_rose`` is True if the loss rose before converging, or ever rose by more than
    n * eps of itself (the textbook error bound for a sum of n terms).

    >>> r = least_squares_pins(steps=2000)
    >>> r["relative_error"] < 1e-12 and not r["loss_rose"]
    True
    """
    X, y, beta_star = least_squares_problem(seed)
    n = len(y)
    eig = np.linalg.eigvalsh(2 * X.T @ X / n)
    L = float(eig[-1])
    Xt = dg.tensor(X)
    beta = dg.tensor(np.zeros(X.shape[1]), requires_grad=True)
    opt = optim.SGD([beta], lr=1.0 / L)
    losses, rel_path = np.empty(steps), np.empty(steps)
    norm = np.linalg.norm(beta_star)
    for k in range(steps):
        opt.zero_grad()
        loss = _mse(Xt, y, beta)
        loss.backward()
        losses[k] = loss.item()
        opt.step()
        rel_path[k] = np.linalg.norm(beta.detach().numpy() - beta_star) / norm
    final_loss = _mse(Xt, y, beta).item()
    closed = float(np.sum((y - X @ beta_star) ** 2) / n)
    rel = float(np.linalg.norm(beta.detach().numpy() - beta_star) / np.linalg.norm(beta_star))

    rises = np.diff(losses)
    ulps = rises / np.spacing(losses[:-1])
    eps = np.finfo(np.float64).eps
    above = (losses[:-1] - closed) > 1e-12 * closed     # steps before the loss has converged
    at_star = dg.tensor(beta_star, requires_grad=True)
    (g_engine,) = dg.grad(_mse(Xt, y, at_star), at_star)
    r = X @ beta_star - y
    g_numpy = 2 * X.T @ r / n
    roundoff = n * np.finfo(np.float64).eps * (2 * np.abs(X).T @ np.abs(r) / n)  # |error| bound scale
    return {
        "n": n, "d": X.shape[1], "steps": steps, "lr": 1.0 / L, "L": L,
        "condition_number": float(eig[-1] / eig[0]),
        "relative_error": rel,
        "final_loss": final_loss, "closed_form_loss": closed,
        "loss_gap": abs(final_loss - closed), "loss_gap_relative": abs(final_loss - closed) / closed,
        "grad_at_star_max_abs": float(np.max(np.abs(g_engine.numpy()))),
        "grad_at_star_numpy_max_abs": float(np.max(np.abs(g_numpy))),
        "grad_at_star_vs_numpy": float(np.max(np.abs(g_engine.numpy() - g_numpy))),
        "grad_roundoff_bound": float(np.max(roundoff)),
        "steps_to_relative_error_1e-12": _first(rel_path < 1e-12),
        "rises_before_converged": int(np.sum((rises > 0) & above)),
        "rises_after_converged": int(np.sum((rises > 0) & ~above)),
        "max_rise_ulps": float(max(ulps.max(), 0.0)),
        "loss_rose": bool(np.any((rises > 0) & above) or np.any(rises > n * eps * losses[:-1])),
    }


def _adam_run(X: np.ndarray, y: np.ndarray, beta_star: np.ndarray, steps: int, lr: float,
              anneal: bool) -> np.ndarray:
    """Distances ||beta_k - beta*|| after each of ``steps`` Adam steps from beta = 0."""
    Xt = dg.tensor(X)
    beta = dg.tensor(np.zeros(X.shape[1]), requires_grad=True)
    opt = optim.Adam([beta], lr=lr)
    sched = CosineAnnealingLR(opt, T_max=steps) if anneal else None
    dist = np.empty(steps)
    for k in range(steps):
        opt.zero_grad()
        _mse(Xt, y, beta).backward()
        opt.step()
        if sched is not None:
            sched.step()
        dist[k] = np.linalg.norm(beta.detach().numpy() - beta_star)
    return dist


def adam_stall(seed: int = 0, lr: float = 0.05, steps: int = 20000,
               anneal_steps: int = 6000) -> dict[str, Any]:
    """Adam on the least-squares problem: at a fixed lr it does not settle; annealed it does.

    What happens at a fixed lr: Adam first reaches beta* to round-off (within a
    thousand steps or so), but as the gradient vanishes the second-moment average v
    decays too, the denominator sqrt(v) + eps shrinks, and the effective step
    lr / (sqrt(v) + eps) grows until the optimum is unstable and the iterate is thrown
    out; from then on it wanders at up to ~1e-2 from beta*. The distance at one
    given step is therefore chaotic (any round-off change moves it by orders of
    magnitude), so besides the distances at steps 6,000 and 20,000 this reports the
    largest and smallest distance over the 1,000 steps before each: the largest shows
    that the iterate has not settled.

    The annealed run is the same Adam with ``CosineAnnealingLR(T_max=anneal_steps)``,
    the lr falling from ``lr`` to 0 along half a cosine over ``anneal_steps`` steps.

    >>> r = adam_stall(steps=2000, anneal_steps=2000)
    >>> r["annealed_distance"] < 1e-12
    True
    """
    X, y, beta_star = least_squares_problem(seed)
    t0 = time.perf_counter()
    dist = _adam_run(X, y, beta_star, steps, lr, anneal=False)
    seconds = time.perf_counter() - t0
    annealed = _adam_run(X, y, beta_star, anneal_steps, lr, anneal=True)
    out: dict[str, Any] = {"lr": lr, "steps": steps, "seconds_fixed_lr_run": seconds}
    for mark in (6000, 20000):
        if mark <= steps:
            window = dist[max(mark - 1000, 0):mark]
            out[f"distance_at_{mark}"] = float(dist[mark - 1])
            out[f"max_distance_{mark - 999}_to_{mark}"] = float(window.max())
            out[f"min_distance_{mark - 999}_to_{mark}"] = float(window.min())
    out["first_step_below_1e-12"] = _first(dist < 1e-12)
    out["annealed_schedule"] = f"CosineAnnealingLR(T_max={anneal_steps}), lr {lr} -> 0"
    out["annealed_steps"] = anneal_steps
    out["annealed_distance"] = float(annealed[-1])
    return out


if __name__ == "__main__":
    print(json.dumps({"ce_identity_error": ce_identity_error(),
                      "least_squares_pins": least_squares_pins(),
                      "adam_stall": adam_stall()}, indent=2))
