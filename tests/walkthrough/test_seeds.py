"""Running experiments over seeds: the process-pool helper, the statistics, and the
optimizer comparison's bracketing rule.

References: plain Python loops (the same function called in this process), the
``statistics`` module for standard deviations and quantiles, and hand-made sweeps.
"""

from __future__ import annotations

import functools
import statistics

import numpy as np
import pytest

import experiments
from experiments import mean_sd, optimizers, over_seeds, parallel_map, quartiles, spiral


def _without_seconds(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "train_seconds"}


def test_over_seeds_gives_the_same_bits_with_one_or_two_workers():
    fn = functools.partial(spiral._task, epochs=4)
    jobs = [(s, noise, True, False) for s in (0, 1, 2) for noise in (0.5, 1.2)]
    one = over_seeds(fn, jobs, workers=1)
    two = over_seeds(fn, jobs, workers=2)
    with experiments._one_blas_thread():   # as the helper runs every task (BLAS threads
        loop = [spiral.train_one(s, n, epochs=4) for s, n, _, _ in jobs]  # change the bits)
    assert [_without_seconds(r) for r in one] == [_without_seconds(r) for r in two]
    assert [_without_seconds(r) for r in one] == [_without_seconds(r) for r in loop]
    # Different seeds really are different runs.
    assert one[0]["curves"]["train_loss"] != one[2]["curves"]["train_loss"]


def test_parallel_map_keeps_order_and_raises_task_errors():
    items = [5, -3, 8, -1, 0, 2, -7]
    assert parallel_map(abs, items, workers=2) == [abs(v) for v in items]
    with pytest.raises(ValueError, match="math domain error"):
        parallel_map(_sqrt, [4.0, -1.0, 9.0], workers=2)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        parallel_map(abs, items, workers=0)
    assert parallel_map(abs, [], workers=2) == []


def _sqrt(x: float) -> float:
    import math
    return math.sqrt(x)


def test_default_workers_reads_the_environment(monkeypatch):
    monkeypatch.setenv("DUOGRAD_WORKERS", "1")
    assert experiments.default_workers() == 1
    monkeypatch.setenv("DUOGRAD_WORKERS", "0")
    with pytest.raises(ValueError, match="DUOGRAD_WORKERS"):
        experiments.default_workers()
    monkeypatch.delenv("DUOGRAD_WORKERS")
    assert 1 <= experiments.default_workers() <= 2


def test_mean_sd_is_the_sample_standard_deviation():
    values = [0.91, 0.95, 0.88, 0.97, 0.93]
    mean, sd = mean_sd(values)
    assert mean == pytest.approx(statistics.fmean(values), abs=1e-15)
    assert sd == pytest.approx(statistics.stdev(values), abs=1e-15)
    assert mean_sd([0.5]) == (0.5, 0.0)
    rows = np.array([[1.0, 2.0], [3.0, 6.0]])
    m, s = mean_sd(rows)
    np.testing.assert_allclose(m, [2.0, 4.0])
    np.testing.assert_allclose(s, [statistics.stdev([1, 3]), statistics.stdev([2, 6])])


def test_quartiles_match_the_statistics_module():
    samples = [3.1, 0.2, 5.5, 2.2, 9.0, 4.4, 1.7, 6.3]
    q = quartiles(samples)
    p25, med, p75 = statistics.quantiles(samples, n=4, method="inclusive")
    assert (q["p25"], q["median"], q["p75"]) == pytest.approx((p25, med, p75), abs=1e-12)


@pytest.mark.parametrize("finals, best, bracketed", [
    ([0.5, 0.2, 0.3], 1, True),
    ([0.1, 0.2, 0.3], 0, False),           # best at the lower edge
    ([0.5, 0.4, 0.3], 2, False),           # best at the upper edge
    ([0.5, 0.2, float("inf")], 1, True),   # a diverged neighbour is worse
    ([0.2, 0.2, 0.3], 0, False),           # a tie with the neighbour does not bracket
])
def test_best_learning_rate_is_bracketed_only_by_worse_neighbours(finals, best, bracketed):
    grid = [0.01, 0.1, 1.0]
    r = optimizers.best_of_sweep(grid, finals)
    assert r["index"] == best and r["best_lr"] == grid[best]
    assert r["bracketed"] is bracketed


def test_optimizer_runs_from_one_seed_start_from_the_same_weights():
    """Every learning rate of one seed starts at the same loss; another seed does not."""
    a = optimizers.train_run((1, "SGD", 0.1), epochs=1)[0][0]
    b = optimizers.train_run((1, "Adam", 0.003), epochs=1)[0][0]
    c = optimizers.train_run((2, "SGD", 0.1), epochs=1)[0][0]
    assert a == b and a != c
