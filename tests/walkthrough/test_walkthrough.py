"""The walkthrough runs end to end, and what it publishes matches what it measured.

- A smoke-sized run of every stage into a temporary folder: every section and figure
  is produced, the stages' own independent checks hold, and neither results/ nor
  README.md is touched.
- README.md's results block equals the block regenerated from the committed
  results/measurements.json, and the HTML report renders from the measurements alone.
- ``--only`` replaces one section and keeps the others; fixed seeds give the same
  numbers twice; the README's code examples run.

Speed is never asserted: the smoke sizes are far too small for timings to mean anything.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import walkthrough  # noqa: E402
from experiments import STAGES, report  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
COMMITTED = ROOT / "results" / "measurements.json"
# torch.func emits a deprecation notice about torch.jit on first use; not ours.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def _fingerprint(paths: list[Path]) -> dict[str, str | None]:
    """A hash of every file under ``paths`` (None for a path that does not exist)."""
    out: dict[str, str | None] = {}
    for p in paths:
        files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
        for f in files:
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest() if f.exists() else None
    return out


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """One smoke run of every stage into a temporary folder."""
    out = tmp_path_factory.mktemp("walkthrough")
    guarded = [ROOT / "results", ROOT / "README.md"]
    before = _fingerprint(guarded)
    code = walkthrough.main(["--smoke", "--out", str(out), "--no-readme", "--no-progress"])
    after = _fingerprint(guarded)
    data = json.loads((out / "measurements.json").read_text(encoding="utf-8"))
    return {"code": code, "out": out, "data": data, "before": before, "after": after}


# ---------------------------------------------------------------- the smoke run

def test_smoke_run_succeeds_and_leaves_results_and_readme_alone(smoke):
    assert smoke["code"] == 0
    assert smoke["before"] == smoke["after"]


def test_smoke_run_writes_every_section(smoke):
    data = smoke["data"]
    assert set(STAGES) | {"meta"} <= set(data)
    meta = data["meta"]
    assert set(meta["stages"]) == set(STAGES)
    assert all(v["size"] == "smoke" for v in meta["stages"].values())
    for key in ("versions", "date", "command", "cpu_count"):
        assert key in meta


def test_smoke_run_writes_every_figure_and_dot_file(smoke):
    out, data = smoke["out"], smoke["data"]
    names = [f for key in STAGES for f in data[key].get("figures", [])]
    # Every stage but verification (numbers only) draws at least one figure.
    assert {k for k in STAGES if data[k].get("figures")} == set(STAGES) - {"verification"}
    for name in names:
        blob = (out / name).read_bytes()
        assert blob.startswith(PNG_MAGIC) and len(blob) > 1000, name
    for key in ("scalar", "tensor"):
        dot = (out / data["graphs"][key]["dot"]).read_text(encoding="utf-8")
        assert dot.startswith("digraph") and dot.count("->") == data["graphs"][key]["edges"]
    assert data["graphs"]["renderer"] in ("dot", "matplotlib")


def test_smoke_json_is_sorted_indented_and_finite(smoke):
    text = (smoke["out"] / "measurements.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"


def test_smoke_report_embeds_every_figure(smoke):
    out, data = smoke["out"], smoke["data"]
    page = (out / "report.html").read_text(encoding="utf-8")
    n_figures = sum(len(data[k].get("figures", [])) for k in STAGES)
    assert page.count("data:image/png;base64,") == n_figures
    assert 'src="http' not in page and "<link" not in page  # self-contained
    for title in report.TITLES.values():
        assert title in page


def test_smoke_stages_pass_their_own_independent_checks(smoke):
    """Even at smoke size, each engine result agrees with its independent reference."""
    data = smoke["data"]
    svt = data["scalar_vs_tensor"]
    assert svt["parameters"] == 337
    assert svt["loss_max_abs_diff"] <= 1e-10 and svt["grad_max_abs_diff"] <= 1e-10
    assert data["modes"]["max_abs_error"] < 1e-12              # closed-form Jacobian in NumPy
    assert data["finite_diff"]["autodiff_error"] < 1e-14        # closed form at 50 digits
    assert data["spiral"]["parameters"] == 4482
    assert data["digits"]["parameters"] == 6570
    # The confusion matrix counts every seed's test predictions: its diagonal over its
    # total is the mean test accuracy over seeds, which is the mean of the per-seed values.
    digits = data["digits"]
    cm, n_seeds = digits["confusion_matrix"], len(digits["seeds"])
    assert n_seeds >= 2 and digits["confusion_matrix_seeds"] == n_seeds
    assert sum(map(sum, cm)) == digits["n_test"] * n_seeds
    assert sum(cm[i][i] for i in range(10)) / (digits["n_test"] * n_seeds) == pytest.approx(
        digits["test_accuracy"], abs=1e-12)
    assert digits["test_accuracy"] == pytest.approx(
        sum(digits["per_seed"]["test_accuracy"]) / n_seeds, abs=1e-12)
    # Spiral: the headline is the mean over seeds; the ceilings are the exact ones.
    from experiments import bayes

    sp = data["spiral"]
    assert sp["test_accuracy"] == pytest.approx(
        sum(sp["per_seed"]["test_accuracy"]) / len(sp["seeds"]), abs=1e-12)
    assert sp["bayes_accuracy"] == pytest.approx(bayes.bayes_accuracy_closed_form(0.5), abs=1e-7)
    ov = sp["overlapping"]
    assert ov["angular_noise"] == round(bayes.noise_for_ceiling(0.9), 3)
    assert ov["bayes_accuracy"] == pytest.approx(0.9, abs=5e-4)
    assert len(sp["noise_sweep"]["noise"]) >= 7
    # Optimizers: one entry per seed everywhere, and the ratio is the per-seed ratios' mean.
    opt = data["optimizers"]
    for r in opt["optimizers"].values():
        assert len(r["best_lr"]) == len(r["epochs_to_threshold"]) == len(opt["seeds"])
    ratios = opt["per_seed"]["final_loss_ratio"]
    assert opt["final_loss_ratio"] == pytest.approx(sum(ratios) / len(ratios), abs=1e-12)


# ---------------------------------------------------------------- README and report

def test_readme_block_matches_committed_measurements():
    """README.md's results block is exactly what the renderer makes of measurements.json."""
    assert COMMITTED.is_file(), "results/measurements.json is missing: run python walkthrough.py"
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert report.extract_block(readme) == report.render_readme_block(data), (
        "README.md's results block is stale: run python walkthrough.py (or regenerate the block "
        "with experiments.report.update_readme) so that it matches results/measurements.json")


def test_readme_time_estimate_comes_from_the_measurements():
    """The time estimate before `make demo` is generated from meta.stages, not typed in."""
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    i, j = readme.index(report.TIME_BEGIN), readme.index(report.TIME_END)
    assert readme.index("make demo   #") > j, "the estimate must come before `make demo`"
    assert readme[i:j + len(report.TIME_END)] == report.render_time_line(data), (
        "README.md's time estimate is stale: run python walkthrough.py --render-only")
    total = sum(v["seconds"] for k, v in data["meta"]["stages"].items() if k in report.TITLES)
    assert f"({total:.0f} s," in report.render_time_line(data)


def test_report_says_which_run_measured_each_section():
    """Mixed runs are named per section; one complete run is said to be one."""
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    mixed = copy.deepcopy(data)
    stages = mixed["meta"]["stages"]
    for k in stages:
        stages[k]["run"] = "r1"
    mixed["meta"]["runs"] = {"r1": {"command": "python walkthrough.py", "date": "d1"},
                             "r2": {"command": "python walkthrough.py --only modes", "date": "d2"}}
    one = report.render_readme_block(mixed)
    assert "one complete run" in one and "[run " not in one
    stages["modes"]["run"] = "r2"
    two = report.render_readme_block(mixed)
    assert "do NOT come from one complete run" in two
    assert "[run B]" in two and "--only modes" in two
    page = report.render_html(mixed)
    assert "Measured by run B" in page


def test_readme_images_have_distinct_alt_texts():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    alts = re.findall(r"!\[([^\]]*)\]", readme)
    assert alts and len(alts) == len(set(alts)), alts


def test_committed_measurements_have_every_stage():
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    missing = [k for k in (*STAGES, "meta") if k not in data]
    assert not missing, f"results/measurements.json lacks {missing}: run python walkthrough.py"


def test_report_renders_from_measurements_alone():
    """No figures, no files: the committed measurements alone make a complete page."""
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    page = report.render_html(data, figure_dir=None)
    for title in report.TITLES.values():
        assert title in page
    assert "not measured yet" not in page.lower() and "could not be rendered" not in page
    assert report.pct(data["spiral"]["test_accuracy"]) in page
    assert report.times(data["scalar_vs_tensor"]["speedup"]) in page


def test_report_handles_missing_stages_and_missing_torch(smoke):
    assert "not measured yet" in report.render_html({}).lower()
    data = copy.deepcopy(smoke["data"])
    bench = data["benchmarks"]
    bench["machine"]["torch"] = None
    for value in bench.values():
        if isinstance(value, dict) and "torch" in value:
            value["torch"] = None
    page = report.render_html(data)
    assert "PyTorch was not installed" in page
    block = report.render_readme_block(data)
    assert block.startswith(report.BEGIN) and block.endswith(report.END)


def test_readme_numbers_come_from_the_block():
    """Outside the generated block, README prose quotes no measured number."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = report.extract_block(readme)
    prose = readme.replace(block, "")
    i, j = prose.index(report.TIME_BEGIN), prose.index(report.TIME_END)
    prose = prose[:i] + prose[j:]                                 # generated, too
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)          # code is code, not claims
    prose = prose.replace("MLP(2, [16, 16, 1])", "").replace("337 parameters", "")  # API fact
    prose = prose.replace("MLP(2, [16, 16, 2])", "").replace("354 parameters", "")
    assert not re.findall(r"\d+(?:\.\d+)?\s*(?:%|x\b|ms\b|s\b|×)", prose)


def test_readme_code_examples_run():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(blocks) >= 5
    for i, source in enumerate(blocks):
        exec(compile(source, f"README.md python block {i}", "exec"), {"__name__": f"readme_{i}"})


# ---------------------------------------------------------------- the command line

def test_only_replaces_one_section_and_keeps_the_others(tmp_path):
    (tmp_path / "measurements.json").write_text(json.dumps({"spiral": {"sentinel": 1}}))
    code = walkthrough.main(["--smoke", "--only", "finite_diff", "--out", str(tmp_path),
                             "--no-readme", "--no-progress"])
    assert code == 0
    data = json.loads((tmp_path / "measurements.json").read_text())
    assert data["spiral"] == {"sentinel": 1}
    assert "finite_diff" in data and list(data["meta"]["stages"]) == ["finite_diff"]
    assert (tmp_path / "finite_diff.png").is_file()


def test_stage_selection():
    assert walkthrough.parse_stages(["modes,spiral", "graphs"], quick=False) == [
        "spiral", "modes", "graphs"]
    assert walkthrough.parse_stages(None, quick=False) == list(STAGES)
    quick = walkthrough.parse_stages(None, quick=True)
    assert "scalar_vs_tensor" not in quick and "benchmarks" in quick
    assert walkthrough.parse_stages(["scalar_vs_tensor"], quick=True) == ["scalar_vs_tensor"]
    with pytest.raises(SystemExit):
        walkthrough.parse_stages(["no_such_stage"], quick=False)


TIMING_KEYS = {"train_seconds", "seconds", "figures"}


def _without_timings(d):
    if isinstance(d, dict):
        return {k: _without_timings(v) for k, v in d.items() if k not in TIMING_KEYS}
    return d


@pytest.mark.parametrize("stage", ["spiral", "optimizers", "digits"])
def test_same_command_same_numbers(stage, tmp_path, monkeypatch):
    """Twice the same numbers, the first time in this process (one worker), the second on
    a pool of two: the seeds' runs do not depend on where they ran."""
    run = walkthrough.stage_runner(stage)
    monkeypatch.setenv("DUOGRAD_WORKERS", "1")
    first = run(tmp_path / "a", size="smoke", progress=False)
    monkeypatch.setenv("DUOGRAD_WORKERS", "2")
    second = run(tmp_path / "b", size="smoke", progress=False)
    assert _without_timings(first) == _without_timings(second)


# ---------------------------------------------------------------- a first run without surprises


def test_only_with_an_empty_name_is_an_error(capsys):
    for only in ([""], [" , "], ["", ""]):
        with pytest.raises(SystemExit) as e:
            walkthrough.parse_stages(only, quick=False)
        assert "--only needs a stage name" in str(e.value) and "spiral" in str(e.value)
    with pytest.raises(SystemExit):
        walkthrough.main(["--only", "", "--no-readme", "--no-progress"])


def test_missing_packages_stop_the_run_before_the_first_stage(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(walkthrough.PACKAGES, "no_such_module_for_this_test", "no-such-dist")
    monkeypatch.setitem(walkthrough.STAGE_NEEDS, "finite_diff",
                        ("matplotlib", "no_such_module_for_this_test"))
    code = walkthrough.main(["--smoke", "--only", "finite_diff", "--out", str(tmp_path),
                             "--no-readme", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no-such-dist" in err and "matplotlib" not in err.split("not installed")[0]
    assert f"{sys.executable} -m pip install -e '.[all]'" in err and "make quick" in err
    assert not any(tmp_path.iterdir())  # nothing was run or written


def test_every_stage_declares_its_packages_and_they_are_installed_here():
    assert set(walkthrough.STAGE_NEEDS) == set(STAGES) | set(walkthrough.OPTIONAL_STAGES)
    assert walkthrough.missing_packages(walkthrough.ALL_STAGES) == []


def test_no_progress_bars_when_output_is_not_a_terminal(tmp_path, capfd):
    # under pytest's capture neither stdout nor stderr is a terminal
    assert walkthrough.use_progress_bars(disabled=False) is False
    code = walkthrough.main(["--smoke", "--only", "finite_diff,graphs", "--out", str(tmp_path),
                             "--no-readme"])
    out, err = capfd.readouterr()
    assert code == 0 and "\r" not in out + err
    assert len([line for line in err.splitlines() if line.startswith("walkthrough: finite_diff")
                or line.startswith("walkthrough: graphs")]) == 2


def test_walkthrough_docstring_quotes_no_hand_typed_duration():
    doc = walkthrough.__doc__
    assert "a few minutes" not in doc and "measurements.json" in doc
    assert not re.search(r"\d+\s*(?:min|minutes|s\b|seconds)", doc)


def test_scalar_graph_names_its_leaves(tmp_path):
    from experiments import graphs

    m = graphs.run(tmp_path, size="smoke", progress=False)
    dot = (tmp_path / m["scalar"]["dot"]).read_text(encoding="utf-8")
    for name, value in graphs.LEAVES.items():
        assert f'label="{name} (leaf)\\ndata {value:.4g}\\n' in dot
    assert "leaf\\ndata" not in dot.replace(" (leaf)\\ndata", "")
    assert m["scalar"]["leaf_names_drawn"] == (m["renderer"] == "dot")


@pytest.mark.parametrize("diverged", [False, True])
def test_optimizer_figure_explains_x_only_when_a_run_diverged(monkeypatch, tmp_path, diverged):
    from experiments import optimizers

    figures = []
    monkeypatch.setattr(optimizers, "save", lambda fig, out, name: figures.append(fig) or name)
    finals = [[0.5, 0.2, None if diverged else 0.9], [0.6, 0.25, 0.8]]   # two seeds
    results = {"SGD": {"final_losses": finals, "grid": [0.01, 0.1, 1.0],
                       "best_lr": [0.1, 0.1], "final_loss": [0.2, 0.25]}}
    curves = {"SGD": [[1.0, 0.5, 0.2], [1.1, 0.6, 0.25]]}
    optimizers._draw(tmp_path, results, curves, epochs=3)
    labels = [t.get_text() for ax in figures[0].axes if ax.get_legend()
              for t in ax.get_legend().get_texts()]
    assert "best learning rate (one star per seed)" in labels
    assert any(label.startswith("diverged") for label in labels) == diverged
    assert not any("diverged" in ax.get_title() for ax in figures[0].axes)
