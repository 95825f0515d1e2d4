"""The walkthrough's experiments, one module per stage, and what they share.

Every stage module exposes ``run(out, size="full", progress=True) -> dict``: it
writes its figures into the folder ``out`` and returns the numbers it measured, which
``walkthrough.py`` stores under the stage's key in ``measurements.json``. ``size`` is
``"full"`` (the real experiment), ``"quick"`` (the same experiment with fewer timing
repeats, for ``--quick``) or ``"smoke"`` (tiny epochs: proves the plumbing runs, the
numbers mean nothing).

Shared here: the two-arm spiral data set, the stratified split, timing, the progress
bar and figure saving.

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

# Whether the training stages run their steps through dg.compile (capture and replay);
# ``walkthrough.py --no-compile`` sets it to False to time the eager engine instead.
COMPILE = True


def compiled(step: Callable) -> Callable:
    """``step`` through ``dg.compile``, or ``step`` itself under ``--no-compile``.

    >>> import duograd as dg
    >>> f = compiled(lambda x: dg.tensor(x) * 2)
    >>> f(np.ones(2)).numpy()
    array([2., 2.])
    """
    import duograd as dg  # noqa: PLC0415  (the stages import duograd anyway)

    return dg.compile(step) if COMPILE else step

# Run order of the stages, which is also the order of the report's sections.
STAGES = ("spiral", "digits", "digits_cnn", "optimizers", "scalar_vs_tensor", "benchmarks", "modes",
          "finite_diff", "graphs", "inside_gradient", "verification")


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
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


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
