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
import time
from typing import Any

import numpy as np

import duograd as dg
from duograd import func

from . import check_size, figure, quartiles, save, track

SEED = 0
HIDDEN = 64
PRODUCT = 4096  # n * m, held fixed
# exponents k of the ratio n / m = 4**k, and timing repeats
# Each repeat times jacfwd and then jacrev back to back, and the ratio is taken per
# repeat (paired), so a burst of load on the shared machine slows both sides of one ratio
# rather than one side of the comparison.
CONFIG = {"full": (range(-3, 4), 15), "quick": (range(-3, 4), 3), "smoke": ((-1, 0, 1), 1)}
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
        J_fwd, J_rev = func.jacfwd(f)(x).detach().numpy(), func.jacrev(f)(x).detach().numpy()
        worst = max(worst, float(np.max(np.abs(J_fwd - exact))), float(np.max(np.abs(J_rev - exact))))
        func.jacfwd(f)(x), func.jacrev(f)(x)  # warm-up
        tf, tr = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            func.jacfwd(f)(x)
            t1 = time.perf_counter()
            func.jacrev(f)(x)
            tr.append(time.perf_counter() - t1)
            tf.append(t1 - t0)
        q_fwd, q_rev = quartiles(tf), quartiles(tr)
        q_ratio = quartiles(np.array(tf) / np.array(tr))
        points.append({"n": n, "m": m, "ratio": n / m, "jacfwd_seconds": q_fwd["median"],
                       "jacrev_seconds": q_rev["median"], "fwd_over_rev": q_ratio["median"],
                       "fwd_over_rev_quartiles": [q_ratio["p25"], q_ratio["p75"]],
                       "jacfwd_quartiles": [q_fwd["p25"], q_fwd["p75"]],
                       "jacrev_quartiles": [q_rev["p25"], q_rev["p75"]]})

    ratios = [p["ratio"] for p in points]
    crossover = _crossover(ratios, [p["fwd_over_rev"] for p in points])
    # The crossover read from the p25 and the p75 curves of the paired ratios: how far the
    # middle half of the repeats lets it move.
    ends = [_crossover(ratios, [p["fwd_over_rev_quartiles"][j] for p in points]) for j in (0, 1)]
    ends = [e for e in ends if e is not None]
    crossings = _crossings([p["fwd_over_rev"] for p in points])
    fig_name = _draw(out, points, crossover, product)
    return {
        "function": "f(x) = W2 @ tanh(W1 @ x), R^n -> R^m",
        "hidden": HIDDEN, "n_times_m": product, "repeats": repeats, "seed": SEED,
        "points": points,
        "crossover_ratio": crossover,
        "crossover_range": [min(ends), max(ends)] if len(ends) == 2 else None,
        "crossings": crossings,
        "statistic": "median of the per-repeat ratios jacfwd / jacrev (paired, interleaved)",
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


def _crossings(fwd_over_rev: list[float]) -> int:
    """How many times the cheaper mode changes along the sweep (1 for a clean crossover).

    >>> _crossings([0.1, 0.5, 2.0, 0.9, 3.0])
    3
    """
    sign = np.sign(np.log(fwd_over_rev))
    return int(np.sum(sign[1:] != sign[:-1]))


def _draw(out, points, crossover, product) -> str:
    fig, (ax, ax_r) = figure(ncols=2, size=(11.0, 4.4))
    r = [p["ratio"] for p in points]
    for key, marker, label in (("jacfwd", "o-", "jacfwd (one JVP per input)"),
                               ("jacrev", "s-", "jacrev (one VJP per output)")):
        mid = np.array([p[f"{key}_seconds"] for p in points]) * 1e3
        q = np.array([p[f"{key}_quartiles"] for p in points]) * 1e3
        # Error bars: the middle half (p25-p75) of the repeats.
        ax.errorbar(r, mid, yerr=[mid - q[:, 0], q[:, 1] - mid], fmt=marker, capsize=3,
                    label=label)
    ax.set_yscale("log")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"inputs / outputs  n / m   (n * m = {product})")
    ax.set_ylabel("time for the full Jacobian (ms, log scale)")
    ax.set_title("Time per Jacobian (median, bars p25-p75)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    mid = np.array([p["fwd_over_rev"] for p in points])
    q = np.array([p["fwd_over_rev_quartiles"] for p in points])
    ax_r.errorbar(r, mid, yerr=[mid - q[:, 0], q[:, 1] - mid], fmt="o-", capsize=3, color="C2",
                  label="jacfwd / jacrev, per repeat")
    ax_r.axhline(1.0, color="black", lw=1)
    if crossover is not None:
        ax_r.axvline(crossover, color="grey", ls="--", lw=1, label=f"crossover n/m = {crossover:.2g}")
    ax_r.set_xscale("log", base=2)
    ax_r.set_yscale("log")
    ax_r.set_xlabel("inputs / outputs  n / m")
    ax_r.set_ylabel("jacfwd time / jacrev time (log scale)")
    ax_r.set_title("Paired ratio (median of repeats, bars p25-p75);\nbelow 1: forward mode is cheaper",
                   fontsize=10)
    ax_r.grid(True, which="both", alpha=0.3)
    ax_r.legend(fontsize=8)
    return save(fig, out, "modes.png")
