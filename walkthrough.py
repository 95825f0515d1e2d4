#!/usr/bin/env python
"""The walkthrough: every experiment, figure and quoted number of duograd, regenerated.

    python walkthrough.py                  # everything (the last run's time: meta.last_run_seconds
                                           # in results/measurements.json, also in report.html)
    python walkthrough.py --quick          # skips the slow scalar-engine stage, quick benchmarks
    python walkthrough.py --only spiral    # one stage (repeatable, or a comma list)
    python walkthrough.py --smoke --out /tmp/w --no-readme   # tiny sizes: proves it runs
    python walkthrough.py --render-only    # rebuild report.html and README's block only
    python walkthrough.py --only digits_sweep  # the digits hyper-parameter sweep (a few
                                           # minutes; not part of the default run)

Figures go to ``--out`` (default ``results/``); every number goes to
``measurements.json`` there, one top-level key per stage plus ``meta``. The file is
read, updated and written back, so ``--only X`` replaces the ``X`` section and keeps
the others. Then ``report.html`` is rebuilt from the whole file, and so is the results
block of README.md (only for the default ``results/`` folder, never for ``--smoke``,
and not with ``--no-readme``).

Run it with the project's interpreter, ``.venv/bin/python walkthrough.py`` (``make demo``
and ``make quick`` create .venv and install every extra). Before the first stage it checks
that the stages' third-party packages import, and if one does not it names them and prints
the one command that installs them.

Progress bars are drawn only on a terminal; when the output goes to a file or a pipe, each
stage prints one line when it ends.

Seeds are fixed: the same command gives the same numbers, timings aside. BLAS runs on
one thread, which makes the timings fair and the arithmetic reproducible.
"""

from __future__ import annotations

import os
import sys

# One BLAS thread, requested before NumPy loads its BLAS (threadpoolctl enforces it
# again at run time, for when this module is imported after NumPy).
if "numpy" not in sys.modules:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import contextlib
import datetime
import importlib
import importlib.util
import io
import json
import math
import platform
import shlex
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from experiments import OPTIONAL_STAGES, STAGES, figure, save, track  # noqa: E402
from experiments import report  # noqa: E402

DEFAULT_OUT = ROOT / "results"
README = ROOT / "README.md"
MEASUREMENTS = "measurements.json"
QUICK_SKIPS = ("scalar_vs_tensor",)  # run under --quick only when named with --only
VERBOSE = False  # --verbose: the benchmarks stage prints its developer tables

# The third-party packages each stage imports (import name -> distribution name); all of
# them come with the "viz" and "data" extras. tqdm, PyTorch, HIPS autograd and Graphviz
# are optional: without them there are no progress bars, benchmark columns read n/a and
# graphs use the matplotlib layout.
PACKAGES = {"matplotlib": "matplotlib", "sklearn": "scikit-learn", "mpmath": "mpmath",
            "names": "names"}
STAGE_NEEDS = {
    "spiral": ("matplotlib", "sklearn"), "digits": ("matplotlib", "sklearn"),
    "digits_cnn": ("matplotlib", "sklearn"),
    "optimizers": ("matplotlib", "sklearn"), "scalar_vs_tensor": ("matplotlib",),
    "benchmarks": ("matplotlib",), "modes": ("matplotlib",),
    "finite_diff": ("matplotlib", "mpmath"), "graphs": ("matplotlib",), "verification": (),
    "inside_gradient": ("matplotlib",), "digits_sweep": ("sklearn",),
    "names": ("matplotlib", "names"),
}
ALL_STAGES = STAGES + OPTIONAL_STAGES


# ---------------------------------------------------------------- the benchmarks stage

def run_benchmarks(out: Path, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Stage 5: ``benchmarks/run.py``'s measurements (quick mode unless full), plus a figure.

    benchmarks/run.py skips what is not installed (PyTorch, HIPS autograd): their
    columns come back as None and the report says so. It writes no file here
    (``out=None``); the walkthrough stores the dict under the ``benchmarks`` key.

    >>> import tempfile
    >>> b = run_benchmarks(Path(tempfile.mkdtemp()), size="smoke", progress=False)  # doctest: +SKIP
    >>> b["figures"]  # doctest: +SKIP
    ['benchmarks.png']
    """
    from benchmarks import run as bench

    # benchmarks/run.py prints its developer tables (the per-engine table, the HVP block,
    # a cProfile listing); the walkthrough keeps them in out/benchmarks.log, one line per
    # stage on the terminal (``--verbose`` shows them).
    log = io.StringIO()
    with contextlib.redirect_stdout(log if not VERBOSE else sys.stdout):
        result = bench.run(quick=size != "full", repeats=1 if size == "smoke" else None,
                           progress=progress, out=None, smoke=size == "smoke")
        # issue 31's function transforms (vmap, jacrev, hessian) against torch.func
        result = dict(result)
        if importlib.util.find_spec("torch") is not None:
            from benchmarks import func_bench
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # vmap's loop-fallback notes
                result["transforms"] = func_bench.measure(3 if size == "quick" else 9,
                                                          smoke=size == "smoke")
        # issue 32's dg.compile(backend="xla") against jax.jit of the same step by hand
        if importlib.util.find_spec("jax") is not None:
            from benchmarks import xla_bench
            result["xla"] = xla_bench.measure(quick=size == "quick", smoke=size == "smoke",
                                              progress=False)
        else:
            result["xla"] = {"skipped": "jax is not installed (pip install -e '.[xla]')"}
    if not VERBOSE:
        (Path(out) / "benchmarks.log").write_text(log.getvalue(), encoding="utf-8")
    result = dict(result)
    result["figures"] = [_draw_benchmarks(out, result)]
    return result


def _draw_benchmarks(out: Path, b: dict[str, Any]) -> str:
    rows = [(k, label) for k, label in (("per_op", "per op\n(tiny arrays)"),
                                        ("train_spiral", "spiral step"),
                                        ("train_digits", "digits step"),
                                        ("train_blas", "BLAS-bound step"),
                                        ("chain", "long chain"))
            if isinstance(b.get(k), dict)]
    engines = [("duograd", "duograd"), ("duograd_compiled", "duograd, dg.compile"),
               ("torch", "PyTorch (float64)"), ("autograd", "HIPS autograd")]
    fig, ax = figure(size=(9.0, 4.8))
    width = 0.8 / len(engines)
    missing = []  # (x, engine) of each bar with no measurement, marked "n/a" below
    below_floor = []  # duograd bars under the NumPy floor
    for i, (key, label) in enumerate(engines):
        xs, ys, lo, hi = [], [], [], []
        for j, (k, _) in enumerate(rows):
            r = b[k]
            x = j + (i - (len(engines) - 1) / 2) * width
            if r.get(key) is not None and r.get("numpy"):
                xs.append(x)
                ys.append(r[key] / r["numpy"])
                # Error bar: this engine's p25-p75 over the repeats, relative to NumPy's median.
                q = (r.get("quartiles") or {}).get(key) or [r[key], r[key]]
                lo.append(ys[-1] - q[0] / r["numpy"])
                hi.append(q[1] / r["numpy"] - ys[-1])
                if key == "duograd" and k == "train_blas" and ys[-1] < 1.0:
                    below_floor.append((x, ys[-1]))
            else:
                missing.append((x, label))
        ax.bar(xs, ys, width=width, label=label, color=f"C{i}", yerr=[lo, hi], capsize=2.5,
               error_kw={"elinewidth": 1, "ecolor": "0.15"})
    ax.axhline(1.0, color="black", lw=1, ls="--", label="hand-written NumPy (= 1x, the floor)")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    lo, hi = ax.get_ylim()
    lo = min(lo, 0.5)
    ax.set_ylim(lo, hi * 2.5)  # headroom for the legend
    for x, _ in missing:  # a missing bar is marked, not silently absent
        ax.text(x, lo * 1.15, "n/a", ha="center", va="bottom", fontsize=7, color="0.35",
                rotation=90)
    for x, y in below_floor:
        ax.annotate(f"{y:.2f}x", (x, y), xytext=(0, -2), textcoords="offset points",
                    ha="center", va="top", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([label for _, label in rows])
    ax.set_ylabel("time relative to hand-written NumPy (log scale)")
    ax.set_title("Time per step or op, relative to the NumPy floor (lower is faster);\n"
                 "bars: median, whiskers: p25-p75 of the repeats", fontsize=10)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="upper right")
    notes = []
    if missing:
        notes.append("n/a: not measured (the engine is not installed, or the workload does "
                     "not apply to it).")
    if below_floor:
        notes.append("duograd below the NumPy floor on the BLAS-bound step: both spend the step "
                     "in the same BLAS calls, so the gap is run-to-run timing noise, not a faster "
                     "engine.")
    if notes:
        fig.text(0.01, 0.005, "\n".join(notes), fontsize=7.5, ha="left", va="bottom", color="0.25")
        fig.get_layout_engine().set(rect=(0, 0.05 * len(notes), 1, 1 - 0.05 * len(notes)))
    return save(fig, out, "benchmarks.png")


def stage_runner(name: str) -> Callable[[Path, str, bool], dict[str, Any]]:
    """The function that runs stage ``name``: ``fn(out, size, progress) -> dict``.

    >>> stage_runner("spiral").__module__
    'experiments.spiral'
    """
    if name == "benchmarks":
        return run_benchmarks
    if name not in ALL_STAGES:
        raise ValueError(f"unknown stage {name!r}; the stages are {', '.join(ALL_STAGES)}")
    return importlib.import_module(f"experiments.{name}").run


# ---------------------------------------------------------------- measurements file

def plain(x: Any) -> Any:
    """``x`` with NumPy scalars and arrays turned into Python ones and tuples into lists,
    ready for ``json.dumps(allow_nan=False)``; a non-finite float becomes None.

    >>> plain({"a": np.float64(0.5), "b": (1, np.int64(2)), "c": float("inf")})
    {'a': 0.5, 'b': [1, 2], 'c': None}
    """
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def load_measurements(path: Path) -> dict[str, Any]:
    """The measurements at ``path``, or an empty dict when there are none yet.

    >>> load_measurements(Path(tempfile.mkdtemp()) / "measurements.json")
    {}
    """
    if path.is_file() and path.stat().st_size:
        with open(path, encoding="utf-8") as f:
            return json.load(f)  # a corrupt file raises rather than losing other sections
    return {}


def write_measurements(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as sorted, indented JSON, atomically (temporary file, then rename).

    >>> path = Path(tempfile.mkdtemp()) / "m.json"
    >>> write_measurements(path, {"b": np.float64(2.0), "a": 1})
    >>> load_measurements(path)
    {'a': 1, 'b': 2.0}
    """
    text = json.dumps(plain(data), indent=2, sort_keys=True, allow_nan=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _version(module: str) -> str | None:
    try:
        return getattr(importlib.import_module(module), "__version__", "unknown")
    except ImportError:
        return None


def meta(previous: dict[str, Any], argv: Sequence[str], stage_info: dict[str, dict]) -> dict:
    """The ``meta`` section: versions, date, command, machine; per-stage times are
    merged into the previous ones so that ``--only`` keeps the others'.

    >>> m = meta({"stages": {"spiral": {"seconds": 2.0}}}, ["--only", "modes"],
    ...          {"modes": {"seconds": 1.0, "size": "full"}})
    >>> m["command"], list(m["stages"])
    ('python walkthrough.py --only modes', ['spiral', 'modes'])
    >>> m = meta({}, [], {"modes": {"seconds": 1.0, "size": "full", "run": "r1"}})
    >>> m["runs"]["r1"]["command"], m["stages"]["modes"]["run"]
    ('python walkthrough.py', 'r1')
    """
    import duograd

    stages = dict(previous.get("stages", {}))
    stages.update(stage_info)
    command = "python walkthrough.py" + "".join(" " + shlex.quote(a) for a in argv)
    date = datetime.datetime.now().isoformat(timespec="seconds")
    # Every invocation is one run, named by its id; each stage records the run that
    # measured it, so the report can say which numbers come from which run.
    runs = dict(previous.get("runs", {}))
    for info in stage_info.values():
        if "run" in info:
            runs.setdefault(info["run"], {"command": command, "date": date,
                                          "size": info.get("size")})
    used = {v.get("run") for v in stages.values()}
    return {
        "command": command,
        "date": date,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "blas_threads": 1,
        "versions": {"python": platform.python_version(), "duograd": duograd.__version__,
                     "numpy": np.__version__, "torch": _version("torch"),
                     "sklearn": _version("sklearn"), "matplotlib": _version("matplotlib"),
                     "autograd": _autograd_version()},
        "stages": {k: stages[k] for k in ALL_STAGES if k in stages},
        "runs": {k: v for k, v in runs.items() if k in used},
        "last_run_seconds": round(sum(v["seconds"] for v in stage_info.values()), 2),
        "last_run_stages": list(stage_info),
    }


def _autograd_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("autograd")
    except (ImportError, PackageNotFoundError):
        return None


# ---------------------------------------------------------------- command line

def missing_packages(stages: Sequence[str]) -> list[str]:
    """The distribution names of the packages ``stages`` need that do not import here.

    >>> missing_packages(["verification"])
    []
    """
    needed = {mod for s in stages for mod in STAGE_NEEDS.get(s, ())}
    missing = []
    for mod in sorted(needed):
        try:
            importlib.import_module(mod)
        except ImportError:
            missing.append(PACKAGES[mod])
    return missing


def install_hint(missing: Sequence[str]) -> str:
    """The message for missing packages: what is missing, and the one command that
    installs every extra into the interpreter that is running.

    >>> print(install_hint(["matplotlib"]).splitlines()[-1].split(" -m ")[1])
    pip install -e '.[all]'
    """
    return (f"walkthrough: {', '.join(missing)} not installed for {sys.executable}; "
            "nothing was run. Use the project's environment (`make quick` creates .venv and "
            "runs this with .venv/bin/python), or install everything into this interpreter with\n"
            f"    {shlex.quote(sys.executable)} -m pip install -e '.[all]'")


def use_progress_bars(disabled: bool) -> bool:
    """Progress bars only on a terminal: redrawn bars fill a log file with carriage
    returns, so with output to a file or a pipe each stage prints one line instead.

    >>> use_progress_bars(disabled=True)
    False
    """
    if disabled:
        return False
    return all(getattr(f, "isatty", lambda: False)() for f in (sys.stdout, sys.stderr))


def parse_stages(only: list[str] | None, quick: bool) -> list[str]:
    """The stages to run, in walkthrough order.

    >>> parse_stages(["modes,spiral"], quick=False)
    ['spiral', 'modes']
    >>> "scalar_vs_tensor" in parse_stages(None, quick=True)
    False
    >>> "digits_sweep" in parse_stages(None, quick=False)    # only when named
    False
    """
    if only is None:
        return [s for s in STAGES if not (quick and s in QUICK_SKIPS)]
    names = {n.strip() for item in only for n in item.split(",") if n.strip()}
    if not names:
        raise SystemExit(f"walkthrough: --only needs a stage name (got {only!r}); choose from "
                         f"{', '.join(ALL_STAGES)}")
    unknown = names - set(ALL_STAGES)
    if unknown:
        raise SystemExit(f"walkthrough: unknown stage(s) {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(ALL_STAGES)}")
    # The optional stages (the digits sweep) run first: the digits stages read their choice.
    return [s for s in OPTIONAL_STAGES + STAGES if s in names]


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser.

    >>> args = build_parser().parse_args(["--quick", "--only", "spiral,modes"])
    >>> args.quick, args.only, args.out.endswith("results")
    (True, ['spiral,modes'], True)
    """
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="stages: " + ", ".join(STAGES)
                                + "; run only when named: " + ", ".join(OPTIONAL_STAGES))
    p.add_argument("--quick", action="store_true",
                   help="skip the slow scalar-engine stage; quick benchmarks and fewer timing repeats")
    p.add_argument("--only", action="append", metavar="STAGE",
                   help="run only this stage (repeatable, or a comma-separated list)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="folder for figures, "
                   "measurements.json and report.html (default: results)")
    p.add_argument("--smoke", action="store_true",
                   help="tiny sizes that only prove every stage runs (numbers meaningless)")
    p.add_argument("--no-readme", action="store_true", help="leave README.md alone")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--verbose", action="store_true",
                   help="the benchmarks stage prints its developer tables (otherwise kept in "
                        "benchmarks.log in the output folder)")
    p.add_argument("--no-compile", action="store_true",
                   help="train eagerly instead of through dg.compile (to compare the two)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes for the stages that train from several seeds (default: "
                        "$DUOGRAD_WORKERS, else 2); the numbers do not depend on it")
    p.add_argument("--render-only", action="store_true",
                   help="run nothing: rebuild report.html (and README's block) from measurements.json")
    return p


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Hold every loaded BLAS/OpenMP pool to one thread (threadpoolctl, when installed).

    >>> with one_blas_thread():
    ...     float(np.ones((2, 2)) @ np.ones(2) @ np.ones(2))
    4.0
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    # Load the libraries whose pools matter before limiting them.
    with contextlib.suppress(ImportError):
        importlib.import_module("sklearn.model_selection")
    with threadpool_limits(limits=1):
        yield


def _say(message: str, progress: bool) -> None:
    """A line on stderr that does not tear an active progress bar."""
    if progress:
        with contextlib.suppress(ImportError):
            from tqdm.auto import tqdm
            tqdm.write(message, file=sys.stderr)
            return
    print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen stages and rebuild measurements.json, report.html and README's block.

    >>> out = tempfile.mkdtemp()
    >>> main(["--smoke", "--only", "finite_diff", "--out", out, "--no-readme", "--no-progress"])
    0
    >>> sorted(load_measurements(Path(out) / "measurements.json"))
    ['finite_diff', 'meta']
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    stages = [] if args.render_only else parse_stages(args.only, args.quick)
    missing = missing_packages(stages)
    if missing:  # before the first stage, not halfway through the run
        print(install_hint(missing), file=sys.stderr)
        return 2
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    if args.workers is not None:
        if args.workers < 1:
            raise SystemExit(f"walkthrough: --workers must be >= 1, got {args.workers}")
        os.environ["DUOGRAD_WORKERS"] = str(args.workers)  # read by experiments.over_seeds
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = out / MEASUREMENTS
    progress = use_progress_bars(args.no_progress)
    skipped = [s for s in QUICK_SKIPS if args.quick and not args.only and not args.render_only]
    if skipped:
        print(f"walkthrough: --quick skips {', '.join(skipped)} (its previous numbers, if any, "
              f"are kept); run it with --only {skipped[0]}", file=sys.stderr)

    if args.no_compile:
        os.environ["DUOGRAD_COMPILE"] = "0"  # read by experiments.compiling(), workers too
    info: dict[str, dict] = {}
    global VERBOSE
    VERBOSE = args.verbose
    # The run's id: when it started, to the second, plus the process id (two runs started
    # in the same second into one folder still differ).
    run_id = f"{datetime.datetime.now().isoformat(timespec='seconds')}/{os.getpid()}"
    with one_blas_thread():
        bar = track(stages, "walkthrough", progress)
        for name in bar:
            if hasattr(bar, "set_postfix_str"):
                bar.set_postfix_str(name)
            t0 = time.perf_counter()
            result = stage_runner(name)(out, size=size, progress=progress)
            seconds = time.perf_counter() - t0
            # Read-modify-write after every stage: a later failure keeps what was measured.
            data = load_measurements(path)
            data[name] = result
            info[name] = {"seconds": round(seconds, 2), "size": size, "compiled": not args.no_compile,
                          "run": run_id,
                          "date": datetime.datetime.now().isoformat(timespec="seconds")}
            data["meta"] = meta(data.get("meta", {}), argv, info)
            write_measurements(path, data)
            _say(f"walkthrough: {name:<17} {seconds:7.1f} s", progress)

    data = load_measurements(path)
    (out / "report.html").write_text(report.render_html(data, out), encoding="utf-8")
    total = sum(v["seconds"] for v in info.values())
    wrote = f"wrote {path} and " if info else f"read {path}; wrote "
    print(f"walkthrough: {len(info)} stage(s) in {total:.1f} s; {wrote}{out / 'report.html'}",
          file=sys.stderr)
    if args.no_readme or args.smoke:
        return 0
    if out != DEFAULT_OUT.resolve():
        print(f"walkthrough: README.md describes {DEFAULT_OUT}, not {out}; left unchanged",
              file=sys.stderr)
        return 0
    changed = report.update_readme(README, data)
    print(f"walkthrough: README.md results block {'updated' if changed else 'already current'}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
