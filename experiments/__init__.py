"""The walkthrough's experiments, one module per stage, and what they share.

Every stage module exposes ``run(out, size="full", progress=True) -> dict``: it
writes its figures into the folder ``out`` and returns the numbers it measured, which
``walkthrough.py`` stores under the stage's key in ``measurements.json``. ``size`` is
``"full"`` (the real experiment), ``"quick"`` (the same experiment with fewer timing
repeats, for ``--quick``) or ``"smoke"`` (tiny epochs: proves the plumbing runs, the
numbers mean nothing).

Shared here: the two-arm spiral data set, the stratified split, timing (medians with
their quartiles), the progress bar and figure saving, and the seed runner: ``over_seeds``
(``parallel_map``) runs one independent task per seed on a small process pool, with the
same results whatever the number of workers, and ``mean_sd`` / ``band`` summarise them.

>>> import numpy as np
>>> X, y = make_spiral(10, rng=0)
>>> X.shape, sorted(set(y.tolist()))
((10, 2), [0, 1])
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

SIZES = ("full", "quick", "smoke")

def compiling() -> bool:
    """Whether the training stages run their steps through ``dg.compile`` (capture and
    replay): yes unless ``$DUOGRAD_COMPILE`` is "0", which ``walkthrough.py --no-compile``
    sets (an environment variable, so that worker processes see it too).

    >>> compiling() == (os.environ.get("DUOGRAD_COMPILE", "1") != "0")
    True
    """
    return os.environ.get("DUOGRAD_COMPILE", "1") != "0"


def compiled(step: Callable) -> Callable:
    """``step`` through ``dg.compile``, or ``step`` itself under ``--no-compile``.

    >>> import duograd as dg
    >>> f = compiled(lambda x: dg.tensor(x) * 2)
    >>> f(np.ones(2)).numpy()
    array([2., 2.])
    """
    import duograd as dg

    return dg.compile(step) if compiling() else step

# Run order of the stages, which is also the order of the report's sections.
STAGES = ("spiral", "digits", "digits_cnn", "optimizers", "scalar_vs_tensor", "benchmarks", "modes",
          "finite_diff", "graphs", "inside_gradient", "verification", "names")
# Stages that run only when named (``--only digits_sweep``): the digits hyper-parameter
# sweep on a validation split, whose choice the digits stages then train.
OPTIONAL_STAGES = ("digits_sweep",)


def check_size(size: str) -> str:
    """``size`` if it is one of SIZES, else a ValueError.

    >>> check_size("quick")
    'quick'
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    return size


# ---------------------------------------------------------------- data

def make_spiral(n: int, revolutions: float = 2.5, noise: float = 0.5,
                rng: np.random.Generator | int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points on two interleaved spiral arms (classes 0 and 1, half each).

    A point's position along its arm is ``t`` in [0, 1]; its radius is ``t`` and its
    angle ``2 pi revolutions t`` plus half a turn for class 1, plus Gaussian angular
    noise of standard deviation ``noise`` radians, which blurs each arm along its length.

    >>> X, y = make_spiral(6, rng=1)
    >>> X.shape, int(y.sum())
    ((6, 2), 3)
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    y = np.repeat([0, 1], [n - n // 2, n // 2])
    t = gen.uniform(0.0, 1.0, n)
    angle = 2 * np.pi * revolutions * t + np.pi * y + noise * gen.standard_normal(n)
    X = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1)
    return X, y


def stratified_split(X: np.ndarray, y: np.ndarray, test_size: int, seed: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, X_test, y_train, y_test)`` with the class proportions kept in both
    parts. scikit-learn supplies the shuffle and nothing else.

    >>> X, y = make_spiral(20, rng=0)
    >>> Xtr, Xte, ytr, yte = stratified_split(X, y, test_size=6, seed=0)
    >>> len(ytr), len(yte), int(yte.sum())
    (14, 6, 3)
    """
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=test_size, stratify=y, random_state=seed)


def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    """The fraction of rows whose largest logit is at the true class.

    >>> accuracy(np.array([[2.0, 1.0], [0.0, 3.0]]), np.array([0, 0]))
    0.5
    """
    return float(np.mean(np.argmax(logits, axis=1) == y))


# ---------------------------------------------------------------- timing

def median_time(fn: Callable[[], Any], repeats: int, warmup: int = 1) -> float:
    """The median wall time of ``fn()`` in seconds, over ``repeats`` calls after
    ``warmup`` untimed ones.

    >>> median_time(lambda: sum(range(10)), repeats=3) >= 0
    True
    """
    return time_quartiles(fn, repeats, warmup)["median"]


# ---------------------------------------------------------------- progress and figures

def track(iterable: Iterable, desc: str, enabled: bool = True, total: int | None = None
          ) -> Iterable:
    """``iterable`` wrapped in a tqdm bar (which disappears when done) when ``enabled``
    and tqdm is installed; otherwise ``iterable`` itself.

    >>> list(track(range(3), "demo", enabled=False))
    [0, 1, 2]
    """
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=desc, total=total, leave=False, dynamic_ncols=True)


def figure(ncols: int = 1, nrows: int = 1, size: tuple[float, float] = (6.0, 4.5)):
    """A matplotlib Figure and its axes, drawn off screen (no pyplot, no display).

    >>> fig, ax = figure()
    >>> type(ax).__name__
    'Axes'
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=True)
    return fig, axes


def plot_loss_curves(ax: Any, curve: dict[str, list[float]], title: str) -> None:
    """Train and test cross-entropy per epoch on a log scale (spiral and digits)."""
    epochs = np.arange(1, len(curve["train_loss"]) + 1)
    ax.semilogy(epochs, curve["train_loss"], label="train loss")
    ax.semilogy(epochs, curve["test_loss"], label="test loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy (log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()


def save(fig: Any, out: str | os.PathLike, name: str, dpi: int = 110) -> str:
    """Write ``fig`` as ``out/name`` (a PNG) and return ``name``, the file name the
    measurements record.

    >>> import tempfile
    >>> fig, ax = figure()
    >>> save(fig, tempfile.mkdtemp(), "empty.png")
    'empty.png'
    """
    path = Path(out) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, facecolor="white")
    return name


def to_list(a: Sequence[float] | np.ndarray, digits: int = 12) -> list[float]:
    """Floats rounded to ``digits`` significant digits, for a readable JSON file.

    >>> to_list(np.array([1 / 3, 2.0]), digits=4)
    [0.3333, 2.0]
    """
    return [float(f"{float(v):.{digits}g}") for v in np.asarray(a, dtype=float).ravel()]


# ---------------------------------------------------------------- seeds, in parallel

def default_workers() -> int:
    """How many processes :func:`over_seeds` uses when not told: ``$DUOGRAD_WORKERS``
    when set (``walkthrough.py --workers N`` sets it), else 2 (or 1 on a single core).

    >>> default_workers() >= 1
    True
    """
    env = os.environ.get("DUOGRAD_WORKERS", "").strip()
    if env:
        n = int(env)
        if n < 1:
            raise ValueError(f"DUOGRAD_WORKERS must be a positive integer, got {env!r}")
        return n
    return max(1, min(2, os.cpu_count() or 1))


def _one_blas_thread() -> Any:
    """A context holding BLAS to one thread (threadpoolctl when installed), so a task
    computes the same bits in a worker process as in this one."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _worker_init() -> None:
    # A worker lives for one pool; the limit holds for its whole life.
    global _WORKER_LIMIT
    _WORKER_LIMIT = _one_blas_thread()
    _WORKER_LIMIT.__enter__()


_WORKER_LIMIT: Any = None
_BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _pool_context() -> Any:
    """Process start method: a fork server where the platform has one (workers fork from a
    clean process that has imported NumPy, duograd and this package once, instead of from
    a parent that may hold threads: tqdm's monitor, PyTorch's pool), else spawn."""
    import multiprocessing as mp

    methods = mp.get_all_start_methods()
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["numpy", "duograd", "duograd.nn", "duograd.optim",
                                    "experiments", "sklearn.model_selection"])
        return ctx
    return mp.get_context("spawn")


def parallel_map(fn: Callable[[Any], Any], items: Sequence[Any], workers: int | None = None,
                 desc: str = "", progress: bool = False) -> list[Any]:
    """``[fn(item) for item in items]``, computed by ``workers`` processes.

    The results come back in the order of ``items`` and each depends only on its own
    item (``fn`` must draw its randomness from the item, e.g. a seed), so any number of
    workers gives the same list, bit for bit: BLAS runs on one thread in every worker
    and, around the loop, in this process too. ``workers=1`` runs in this process, with
    no pool. ``fn`` must be picklable (a module-level function, or ``functools.partial``
    of one); an exception in a task is raised here.

    >>> parallel_map(abs, [-2, 3, -1], workers=1)
    [2, 3, 1]
    """
    items = list(items)
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"parallel_map: workers must be >= 1, got {workers}")
    workers = min(workers, len(items))
    if workers <= 1:
        with _one_blas_thread():
            return [fn(item) for item in track(items, desc, progress)]
    from concurrent.futures import ProcessPoolExecutor

    for var in _BLAS_VARS:  # read by the fork server when it starts, before NumPy loads
        os.environ.setdefault(var, "1")
    with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(),
                             initializer=_worker_init) as pool:
        # chunksize 1: tasks differ in length, and the pool hands the next one to
        # whichever worker is free; map still yields in submission order.
        return list(track(pool.map(fn, items, chunksize=1), desc, progress, total=len(items)))


def over_seeds(fn: Callable[[int], Any], seeds: Sequence[int], workers: int | None = None,
               desc: str = "", progress: bool = False) -> list[Any]:
    """``[fn(seed) for seed in seeds]`` on ``workers`` processes (see :func:`parallel_map`):
    one independent run per seed, the same results whatever the number of workers.

    >>> over_seeds(lambda s: np.random.default_rng(s).integers(10), [0, 1], workers=1)
    [8, 5]
    """
    return parallel_map(fn, seeds, workers=workers, desc=desc, progress=progress)


def mean_sd(values: Sequence[float] | np.ndarray, axis: int = 0) -> tuple[Any, Any]:
    """The mean and the sample standard deviation (ddof=1; 0 for a single value) along
    ``axis``: what "mean +- sd over seeds" means everywhere in the report.

    >>> mean_sd([0.9, 0.92, 0.94])
    (0.92, 0.02)
    """
    a = np.asarray(values, dtype=float)
    mean = a.mean(axis=axis)
    sd = a.std(axis=axis, ddof=1) if a.shape[axis] > 1 else np.zeros_like(mean)
    if np.ndim(mean) == 0:
        return round(float(mean), 15), round(float(sd), 15)
    return mean, sd


def band(ax: Any, x: Sequence[float], runs: Sequence[Sequence[float]] | np.ndarray, label: str,
         color: str | None = None, log: bool = False, scale: float = 1.0, **kw: Any) -> Any:
    """Draw the mean over runs (rows) as a line and mean +- sd as a shaded band. With
    ``log`` the statistics are taken on log10 of the values (a geometric mean, and a band
    of x/ its geometric sd), which is what a log-scale axis shows truthfully.

    >>> fig, ax = figure()
    >>> line = band(ax, [1, 2, 3], [[1, 2, 3], [2, 3, 4]], "demo")
    >>> [round(v, 1) for v in line.get_ydata()]
    [1.5, 2.5, 3.5]
    """
    a = scale * np.asarray(runs, dtype=float)
    if log:
        m, s = mean_sd(np.log10(a))
        mid, lo, hi = 10 ** m, 10 ** (m - s), 10 ** (m + s)
    else:
        mid, s = mean_sd(a)
        lo, hi = mid - s, mid + s
    line, = ax.plot(x, mid, label=label, color=color, **kw)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.22, lw=0)
    return line


def time_quartiles(fn: Callable[[], Any], repeats: int, warmup: int = 1) -> dict[str, float]:
    """``{"median", "p25", "p75"}`` wall seconds of ``fn()`` over ``repeats`` calls after
    ``warmup`` untimed ones: a median with the range its middle half spans.

    >>> q = time_quartiles(lambda: sum(range(10)), repeats=5)
    >>> q["p25"] <= q["median"] <= q["p75"]
    True
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return quartiles(times)


def quartiles(samples: Sequence[float]) -> dict[str, float]:
    """The median and the 25th / 75th percentiles of ``samples`` (NumPy's linear rule).

    >>> quartiles([1.0, 2.0, 3.0, 4.0, 5.0])
    {'median': 3.0, 'p25': 2.0, 'p75': 4.0}
    """
    p25, med, p75 = np.percentile(np.asarray(samples, dtype=float), [25, 50, 75])
    return {"median": float(med), "p25": float(p25), "p75": float(p75)}
