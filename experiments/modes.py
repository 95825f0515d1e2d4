"""Stage 6: forward mode against reverse mode, the cost of a whole Jacobian.

``f(x) = W2 @ tanh(W1 @ x)`` maps R^n to R^m through a hidden layer of fixed width.
``jacfwd`` builds the m x n Jacobian from n forward sweeps (one JVP per input),
``jacrev`` from m reverse sweeps (one VJP per output). Holding n * m fixed and moving
the ratio n / m from 1/64 to 64 shows the crossover the tutorial explains: forward
mode wins when inputs are few, reverse mode when outputs are few (a loss has one).

Both Jacobians are checked against the closed form ``W2 diag(1 - tanh^2) W1``,
computed with NumPy alone.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import duograd as dg
from duograd import func

from . import check_size, figure, save, time_quartiles, track

SEED = 0
HIDDEN = 64
PRODUCT = 4096  # n * m, held fixed
# exponents k of the ratio n / m = 4**k, and timing repeats
CONFIG = {"full": (range(-3, 4), 5), "quick": (range(-3, 4), 3), "smoke": ((-1, 0, 1), 1)}
SMOKE_PRODUCT = 64


def _problem(n: int, m: int, rng: np.random.Generator):
    W1 = rng.standard_normal((HIDDEN, n)) / np.sqrt(n)
    W2 = rng.standard_normal((m, HIDDEN)) / np.sqrt(HIDDEN)
    x = rng.standard_normal(n)
    w1, w2 = dg.tensor(W1), dg.tensor(W2)

    def f(v: dg.Tensor) -> dg.Tensor:
        return w2 @ (w1 @ v).tanh()

    exact = W2 @ ((1 - np.tanh(W1 @ x) ** 2)[:, None] * W1)
    return f, dg.tensor(x), exact


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Time jacfwd and jacrev across input/output ratios; draw the crossover.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["max_abs_error"] < 1e-12
    True
    """
    check_size(size)
    exponents, repeats = CONFIG[size]
    product = SMOKE_PRODUCT if size == "smoke" else PRODUCT
    side = int(round(np.sqrt(product)))
    rng = np.random.default_rng(SEED)
    points = []
    worst = 0.0
    for k in track(list(exponents), "forward vs reverse", progress):
        # n / m = 4**k with n * m = product, so n = side * 2**k and m = side / 2**k.
        n, m = int(side * 2.0 ** k), int(side / 2.0 ** k)
        f, x, exact = _problem(n, m, rng)
        J_fwd, J_rev = func.jacfwd(f)(x).data, func.jacrev(f)(x).data
        worst = max(worst, float(np.max(np.abs(J_fwd - exact))), float(np.max(np.abs(J_rev - exact))))
        q_fwd = time_quartiles(lambda: func.jacfwd(f)(x), repeats)
        q_rev = time_quartiles(lambda: func.jacrev(f)(x), repeats)
        t_fwd, t_rev = q_fwd["median"], q_rev["median"]
        points.append({"n": n, "m": m, "ratio": n / m, "jacfwd_seconds": t_fwd,
                       "jacrev_seconds": t_rev, "fwd_over_rev": t_fwd / t_rev,
                       "jacfwd_quartiles": [q_fwd["p25"], q_fwd["p75"]],
                       "jacrev_quartiles": [q_rev["p25"], q_rev["p75"]]})

    crossover = _crossover([p["ratio"] for p in points], [p["fwd_over_rev"] for p in points])
    fig_name = _draw(out, points, crossover, product)
    return {
        "function": "f(x) = W2 @ tanh(W1 @ x), R^n -> R^m",
        "hidden": HIDDEN, "n_times_m": product, "repeats": repeats, "seed": SEED,
        "points": points,
        "crossover_ratio": crossover,
        "fwd_over_rev_at_min_ratio": points[0]["fwd_over_rev"],
        "fwd_over_rev_at_max_ratio": points[-1]["fwd_over_rev"],
        "max_abs_error": worst,
        "figures": [fig_name],
    }


def _crossover(ratios: list[float], fwd_over_rev: list[float]) -> float | None:
    """The n / m at which the two modes cost the same, interpolated on log scales
    between the first pair of neighbouring points where the cheaper mode changes."""
    lr, lq = np.log(ratios), np.log(fwd_over_rev)
    for i in range(len(lr) - 1):
        if lq[i] <= 0 < lq[i + 1] or lq[i] >= 0 > lq[i + 1]:
            w = lq[i] / (lq[i] - lq[i + 1])
            return float(np.exp(lr[i] + w * (lr[i + 1] - lr[i])))
    return None


def _draw(out, points, crossover, product) -> str:
    fig, ax = figure(size=(7.0, 4.6))
    r = [p["ratio"] for p in points]
    for key, marker, label in (("jacfwd", "o-", "jacfwd (one JVP per input)"),
                               ("jacrev", "s-", "jacrev (one VJP per output)")):
        mid = np.array([p[f"{key}_seconds"] for p in points]) * 1e3
        q = np.array([p[f"{key}_quartiles"] for p in points]) * 1e3
        # Error bars: the middle half (p25-p75) of the repeats.
        ax.errorbar(r, mid, yerr=[mid - q[:, 0], q[:, 1] - mid], fmt=marker, capsize=3,
                    label=label)
    ax.set_yscale("log")
    if crossover is not None:
        ax.axvline(crossover, color="grey", ls="--", lw=1, label=f"crossover n/m = {crossover:.2g}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"inputs / outputs  n / m   (n * m = {product})")
    ax.set_ylabel("time for the full Jacobian (ms, log scale; bars p25-p75)")
    ax.set_title("Forward vs reverse mode: who pays per input, who per output")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return save(fig, out, "modes.png")
