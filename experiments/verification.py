"""Stage 9: the verification headline numbers, from ``benchmarks/pins.py``.

Each is an engine result measured against something the engine never computed:

- ``ce_identity``: the gradient of the composed cross-entropy against the closed form
  ``(softmax - onehot) / N`` in NumPy, over many random cases;
- ``least_squares``: gradient descent through the engine against the normal-equation
  solution from ``numpy.linalg.solve``;
- ``adam_stall``: Adam at a fixed learning rate on that same problem, which does not
  settle at the optimum, against the annealed run, which does.

The test suite asserts thresholds on these same functions, so a number quoted from
here is one the suite checks.

Two programs that optimise *through* a derivative (``examples/``) are measured here too:

- ``pinn``: the physics-informed network for u'' = -pi^2 sin(pi x), trained on a
  residual that differentiates the network twice, against the exact sin(pi x);
- ``gradient_penalty``: the WGAN-GP penalty's gradient with respect to the critic's
  parameters (a derivative of a derivative) against central differences of the penalty.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import check_size, parallel_map

SEED = 0
# Keyword arguments per size; full and quick use pins.py's own defaults.
SMOKE = {"ce_identity_error": {"n_cases": 10},
         "least_squares_pins": {"steps": 300},
         "adam_stall": {"steps": 300, "anneal_steps": 300}}
N_CASES = 200


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Run the three pins and return their dicts (no figure).

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> sorted(m)
    ['adam_stall', 'ce_identity', 'gradient_penalty', 'least_squares', 'pinn', 'seed']
    """
    check_size(size)
    small = size == "smoke"
    # Independent parts, on the pool's two processes; the longest ones first.
    jobs = [(key, small) for key in ("adam_stall", "pinn", "least_squares", "ce_identity",
                                     "gradient_penalty")]
    parts = parallel_map(_part, jobs, desc="verification pins", progress=progress)
    result: dict[str, Any] = {"seed": SEED}
    result.update((key, value) for (key, _), value in zip(jobs, parts))
    return dict(sorted(result.items()))


def _part(job: tuple[str, bool]) -> dict[str, Any]:
    """One independent part of the stage: ``(name, smoke)`` -> its dict."""
    from benchmarks import pins

    key, small = job
    if key == "ce_identity":
        return pins.ce_identity_error(seed=SEED, **(SMOKE["ce_identity_error"] if small
                                                    else {"n_cases": N_CASES}))
    if key == "least_squares":
        return pins.least_squares_pins(seed=SEED, **(SMOKE["least_squares_pins"] if small else {}))
    if key == "adam_stall":
        return pins.adam_stall(seed=SEED, **(SMOKE["adam_stall"] if small else {}))
    if key == "pinn":
        return pinn(epochs=PINN_EPOCHS["smoke" if small else "full"])
    if key == "gradient_penalty":
        return gradient_penalty_check(SEED)
    raise ValueError(f"verification: unknown part {key!r}")


PINN_EPOCHS = {"full": 1500, "smoke": 20}


def pinn(epochs: int, seed: int = SEED) -> dict[str, Any]:
    """Train ``examples/pinn_poisson.py`` and measure it against the exact solution.

    >>> r = pinn(epochs=2)
    >>> sorted(r)
    ['epochs', 'grid_points', 'max_error', 'residual_loss', 'seconds']
    """
    from examples import pinn_poisson

    r = pinn_poisson.train(epochs=epochs, seed=seed)
    return {"epochs": r["epochs"], "max_error": r["max_error"], "residual_loss": r["loss"],
            "seconds": round(r["seconds"], 2), "grid_points": 1001}


def gradient_penalty_check(seed: int = SEED, eps: float = 1e-6) -> dict[str, Any]:
    """The penalty's parameter gradient from ``examples/gradient_penalty.py`` against
    central differences of the penalty itself, over every weight of a small critic.

    >>> r = gradient_penalty_check()
    >>> r["max_abs_error"] < 1e-6
    True
    """
    from examples import gradient_penalty as gp

    rng = np.random.default_rng(seed)
    weights = [0.5 * rng.standard_normal(s) for s in [(2, 8), (8,), (8, 1), (1,)]]
    real, fake = gp.sample_real(16, rng), gp.sample_fake(16, rng)
    alpha = rng.uniform(size=16)
    value, grads = gp.penalty_and_grads(weights, real, fake, alpha)
    worst = 0.0
    for k, w in enumerate(weights):
        for e in range(w.size):
            moved = [v.copy() for v in weights]
            moved[k].reshape(-1)[e] += eps
            up = gp.penalty_and_grads(moved, real, fake, alpha)[0]
            moved[k].reshape(-1)[e] -= 2 * eps
            down = gp.penalty_and_grads(moved, real, fake, alpha)[0]
            worst = max(worst, abs((up - down) / (2 * eps) - grads[k].reshape(-1)[e]))
    return {"penalty": value, "n_params": int(sum(int(np.prod(w.shape)) for w in weights)),
            "max_abs_error": float(worst), "max_abs_grad": float(max(np.abs(g).max() for g in grads))}
