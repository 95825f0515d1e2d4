"""benchmarks/func_bench.py (issue 31's measures) runs and its values agree with torch.func,
every row at tiny sizes (the real ones take minutes: the walkthrough runs them)."""

from __future__ import annotations

import warnings

import pytest

from benchmarks import func_bench as fb

pytestmark = pytest.mark.oracle


def test_per_sample_and_jacrev_rows_agree_with_torch(torch, monkeypatch):
    import numpy as np
    monkeypatch.setattr(fb, "DIGITS", (8, (6, 4, 3), 5))
    monkeypatch.setattr(fb, "_digits_data", lambda n: (np.random.default_rng(0).normal(size=(n, 8)),
                                                        np.array([0, 2, 1, 1, 0])[:n]))
    monkeypatch.setattr(fb, "JAC_WIDTH", 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = fb.per_sample(torch, 1)
        b = fb.jacrev(torch, 1)
    assert a["max_abs_diff_vs_torch"] < 1e-12 and a["max_abs_diff_vs_one_example"] < 1e-12
    assert b["max_abs_diff_vs_torch"] < 1e-12 and b["max_abs_diff_vs_row_loop"] < 1e-12
    for key in ("vmap_grad_s", "batched_backward_s", "torch_func_s", "met"):
        assert key in a
    for key in ("jacrev_s", "row_loop_s", "torch_func_s", "speedup_vs_row_loop", "met"):
        assert key in b


def test_hessian_row_on_a_tiny_spiral_mlp(torch, monkeypatch):
    monkeypatch.setattr(fb, "SPIRAL", (2, (4, 3, 2), 12))
    monkeypatch.setattr(fb, "HESSIAN_CHUNK", 7)
    monkeypatch.setattr(fb, "HESSIAN_SMALL_BATCH", 5)
    res = fb.hessian(torch, 1)
    n = 2 * 4 + 4 + 4 * 3 + 3 + 3 * 2 + 2
    assert res["hessian_shape"] == [n, n]
    assert res["max_abs_diff_vs_torch"] < 1e-12 and res["small_max_abs_diff_vs_torch"] < 1e-12
    assert res["symmetry_max_abs"] < 1e-12
