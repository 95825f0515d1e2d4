"""The benchmark harness runs end to end at tiny sizes, and its NumPy floor is right.

Speed is never asserted here: only that every workload is measured, every number is
a positive finite one, the results land in the file given (never in results/), and
the hand-written reference the ratios divide by computes the true gradients
(checked against finite differences and PyTorch, not against duograd alone).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from benchmarks import handwritten as hw
from benchmarks import run as bench

WORKLOADS = ("per_op", "train_spiral", "train_digits", "train_blas", "chain", "memory", "hvp",
             "profile", "machine", "config", "threads", "lstm", "encoder_layer", "surname_tf")
# torch.func / torch.optim emit a deprecation notice about torch.jit on first use; not ours.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

TIMED = ("per_op", "train_spiral", "train_digits", "train_blas", "chain")


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """One smoke run into a temporary file that already holds another section."""
    out = tmp_path_factory.mktemp("bench") / "measurements.json"
    out.write_text(json.dumps({"walkthrough": {"spiral_test_accuracy": 0.9}}))
    real = bench.DEFAULT_OUT
    before = real.stat().st_mtime_ns if real.exists() else None
    results = bench.run(quick=True, repeats=1, progress=False, out=out, smoke=True)
    after = real.stat().st_mtime_ns if real.exists() else None
    return results, out, (before, after)


def test_every_workload_present(smoke):
    results, _, _ = smoke
    for key in WORKLOADS:
        assert key in results, key


def test_times_positive_and_finite(smoke):
    results, _, _ = smoke
    for key in TIMED:
        r = results[key]
        assert _positive(r["duograd"]) and _positive(r["numpy"]), key
        for engine in ("torch", "autograd"):
            assert r[engine] is None or _positive(r[engine]), (key, engine)
    mem = results["memory"]
    assert _positive(mem["duograd"]) and _positive(mem["numpy"]) and _positive(mem["ratio"])
    hvp = results["hvp"]
    assert _positive(hvp["duograd_fwd_over_rev"]) and _positive(hvp["duograd_rev_over_rev"])
    for k in ("torch_func", "torch_functional"):
        assert hvp.get(k) is None or _positive(hvp[k])


def test_gradients_agree_with_handwritten(smoke):
    results, _, _ = smoke
    for key in TIMED:
        diffs = results[key]["grad_max_abs_diff"]
        assert diffs["duograd"] < 1e-10, key
        for engine, d in diffs.items():
            assert d < 1e-9, (key, engine)


def test_hvp_checked_independently(smoke):
    checks = smoke[0]["hvp"]["checks"]
    assert checks["fd_rel_err"] < 1e-5  # central differences of the hand-written gradient
    assert checks["duograd_rev_over_rev_max_abs_diff"] < 1e-10
    for k, v in checks.items():
        if k.startswith("torch"):
            assert v < 1e-10, k


def test_profile_rows(smoke):
    prof = smoke[0]["profile"]
    assert prof["top"]
    for fn, calls, ms in prof["top"]:
        assert isinstance(fn, str) and isinstance(calls, int) and calls >= 1 and ms >= 0


def test_machine_and_threads(smoke):
    results = smoke[0]
    m = results["machine"]
    assert m["python"] and m["numpy"] == np.__version__ and m["cpu_count"] >= 1
    assert results["threads"]["verified"] in (True, None)


def test_written_file_keeps_other_sections(smoke):
    results, out, (before, after) = smoke
    text = out.read_text()
    data = json.loads(text)
    assert data["walkthrough"] == {"spiral_test_accuracy": 0.9}
    assert data["benchmarks"] == results
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert before == after, "the smoke run touched results/measurements.json"


def test_table_printed(smoke, capsys):
    table = bench.format_table(smoke[0])
    for label in ("per-op", "spiral step", "digits step", "BLAS-bound", "chain of", "peak",
                  "Hessian-vector", "profile"):
        assert label in table


def test_runs_without_torch_and_autograd(tmp_path, monkeypatch, capsys):
    real = bench._optional
    monkeypatch.setattr(bench, "_optional",
                        lambda name: None if name in ("torch", "autograd") else real(name))
    results = bench.run(repeats=1, progress=False, out=tmp_path / "m.json", smoke=True)
    assert results["per_op"]["torch"] is None and results["per_op"]["autograd"] is None
    assert results["per_op"]["met"] is None and results["hvp"]["met"] is None
    assert _positive(results["train_spiral"]["duograd"])
    assert "n/a" in capsys.readouterr().out


def test_run_refuses_disagreeing_gradients(monkeypatch):
    ctx = bench.make_context(bench.SMOKE, repeats=1, torch=None, hips=None)
    real = hw.mlp_loss_and_grads

    def off_by_a_little(params, x, y):
        loss, grads = real(params, x, y)
        grads[1] = grads[1] + 1e-8
        return loss, grads

    monkeypatch.setattr(hw, "mlp_loss_and_grads", off_by_a_little)
    with pytest.raises(AssertionError, match="apples to apples"):
        bench.bench_train("spiral", ctx)


# ---------------------------------------------------------------- the NumPy floor itself

def _fd_grad(f, params, eps=1e-6):
    grads = []
    for p in params:
        g = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            old = p[i]
            p[i] = old + eps
            up = f()
            p[i] = old - eps
            down = f()
            p[i] = old
            g[i] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


def test_handwritten_mlp_grads_match_finite_differences():
    rng = np.random.default_rng(3)
    params = [rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=(4, 5)),  # (out, in)
              rng.normal(size=4), rng.normal(size=(3, 4)), rng.normal(size=3)]
    x, y = rng.normal(size=(6, 3)), np.array([0, 1, 2, 2, 1, 0])
    _, grads = hw.mlp_loss_and_grads(params, x, y)
    fd = _fd_grad(lambda: hw.mlp_loss_and_grads(params, x, y)[0], params)
    for g, f in zip(grads, fd):
        np.testing.assert_allclose(g, f, rtol=1e-5, atol=1e-8)


def test_handwritten_cross_entropy_closed_form():
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    loss, g = hw.softmax_cross_entropy(logits, np.array([2, 0]))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert loss == pytest.approx(-(np.log(p[0, 2]) + np.log(p[1, 0])) / 2, rel=1e-14)
    np.testing.assert_allclose(g, (p - np.eye(3)[[2, 0]]) / 2, rtol=1e-14, atol=1e-16)


def test_handwritten_chain_matches_finite_differences():
    x = np.array([0.3, -0.7])
    _, g = hw.chain_grad(x, 9)
    fd = _fd_grad(lambda: float(hw.chain_forward(x, 9).sum()), [x])[0]
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    assert hw.chain_grad(x, 9)[0] == pytest.approx(float(hw.chain_forward(x, 9).sum()), rel=1e-15)


@pytest.mark.oracle
def test_handwritten_adam_matches_torch(torch):
    rng = np.random.default_rng(4)
    p0 = [rng.normal(size=(3, 2)), rng.normal(size=2)]
    grads = [[rng.normal(size=p.shape) for p in p0] for _ in range(5)]
    mine = [p.copy() for p in p0]
    opt = hw.Adam(mine, lr=0.05)
    theirs = [torch.tensor(p, requires_grad=True) for p in p0]
    topt = torch.optim.Adam(theirs, lr=0.05)
    for gs in grads:
        opt.step(gs)
        for t, g in zip(theirs, gs):
            t.grad = torch.tensor(g)
        topt.step()
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_cli_quick_flag_parses(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(bench, "run", lambda **kw: seen.update(kw))
    assert bench.main(["--quick", "--out", os.fspath(tmp_path / "x.json")]) == 0
    assert seen["quick"] is True and seen["out"] == os.fspath(tmp_path / "x.json")


def test_convolution_rows(smoke):
    results = smoke[0]
    for key in ("conv_digits", "conv_mid", "train_cnn"):
        r = results[key]
        assert _positive(r["duograd"]) and (r["torch"] is None or _positive(r["torch"])), key
    for key in ("conv_digits", "conv_mid"):
        assert _positive(results[key]["numpy"])
        assert results[key]["grad_max_abs_diff"]["duograd"] < 1e-10
    assert results["conv_mid"]["target"] == ["duograd <= 1.1x torch", "duograd <= 1.1x numpy"]
    diff = results["train_cnn"]["grad_max_abs_diff_to_torch"]
    assert not diff or diff["duograd"] < 1e-10
    assert "conv layer, mid-size" in bench.format_table(results)


@pytest.mark.oracle
def test_handwritten_conv_layer_matches_torch(torch):
    """The NumPy floor of the convolution rows computes torch's values and gradients."""
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 3, 6, 5)), rng.normal(size=(4, 3, 3, 3)), rng.normal(size=4)
    g = rng.normal(size=(2, 4, 6, 5))
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = torch.nn.functional.conv2d(*ts, padding=1)
    out.backward(torch.from_numpy(g))
    ours = hw.conv2d_layer_grads(x, w, b, g, padding=1)
    for a, t in zip(ours, [out.detach()] + [t.grad for t in ts]):
        np.testing.assert_allclose(a, t.numpy(), rtol=1e-12, atol=1e-13)


def test_interleaved_reports_quartiles_of_the_samples(monkeypatch):
    """Known sample times (a fake clock) give the median and p25/p75 of the statistics module."""
    import statistics

    durations = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]
    ticks = iter([t for i, d in enumerate(durations) for t in (10.0 * i, 10.0 * i + d)])
    monkeypatch.setattr(bench.time, "perf_counter", lambda: next(ticks))
    t = bench._interleaved({"only": lambda: None}, repeats=len(durations), inner=1)["only"]
    p25, med, p75 = statistics.quantiles(durations, n=4, method="inclusive")
    assert (t["p25"], t["median"], t["p75"]) == pytest.approx((p25, med, p75), abs=1e-12)
    rep = bench._report({"duograd": t}, 1e3, "ms")
    assert rep["quartiles"]["duograd"] == [pytest.approx(p25 * 1e3), pytest.approx(p75 * 1e3)]


def test_sequence_model_rows(smoke):
    """Issue 30's rows: eager and compiled timed beside torch float64, their gradients
    checked against torch's first, every target stated and judged."""
    results = smoke[0]
    for key in ("lstm", "encoder_layer", "surname_tf"):
        r = results[key]
        if r["torch"] is None:  # no torch: nothing to load the weights from
            assert r["met"] is None
            continue
        for engine in ("duograd", "duograd_compiled", "torch", "torch_f32"):
            assert _positive(r[engine]), (key, engine)
        diffs = r["grad_max_abs_diff_to_torch"]
        assert set(diffs) == {"duograd", "duograd_compiled"}
        assert all(d < 1e-9 for d in diffs.values()), (key, diffs)
        targets = r["target"] if isinstance(r["target"], list) else [r["target"]]
        assert r["met"] == all(bench._meets(r, t) for t in targets)
    assert results["lstm"]["target"] == ["duograd <= 1.0x torch", "duograd_compiled <= 0.7x torch"]
    table = bench.format_table(results)
    for label in ("LSTM fwd+bwd", "encoder layer fwd+bwd", "surname transformer step"):
        assert label in table


def test_sequence_rows_reach_the_report(smoke):
    """The report states each sequence target (compiled ones too) with met or missed."""
    from experiments import report

    targets = {(t["key"], t["target"]): t for t in report.bench_targets(smoke[0])}
    for key, target in (("lstm", "duograd <= 1.0x torch"), ("lstm", "duograd_compiled <= 0.7x torch"),
                        ("encoder_layer", "duograd <= 1.0x torch"),
                        ("surname_tf", "duograd_compiled <= 1.0x torch")):
        t = targets[(key, target)]
        r = smoke[0][key]
        ours = target.split()[0]
        if r["torch"] is not None:
            assert t["measured"] == pytest.approx(r[ours] / r["torch"])
            assert t["met"] == (t["measured"] <= t["limit"])
    table = report._seq_table(smoke[0])
    assert table is not None and len(table.rows) == 3


def test_only_runs_the_named_workloads_and_keeps_the_rest(tmp_path, monkeypatch):
    out = tmp_path / "m.json"
    out.write_text(json.dumps({"benchmarks": {"per_op": {"kept": 1}, "lstm": {"old": 1}}}))
    calls = []
    monkeypatch.setattr(bench, "bench_lstm", lambda ctx: calls.append("lstm") or {"new": 1})
    monkeypatch.setattr(bench, "format_table", lambda results: "")
    bench.run(repeats=1, progress=False, out=out, smoke=True, only=["lstm"])
    data = json.loads(out.read_text())["benchmarks"]
    assert calls == ["lstm"] and data["lstm"] == {"new": 1} and data["per_op"] == {"kept": 1}
    with pytest.raises(ValueError, match="no workload named"):
        bench.run(repeats=1, progress=False, out=None, smoke=True, only=["nope"])
