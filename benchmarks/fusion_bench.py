"""The compiled training step with and without fusion, against hand-written NumPy, in
thread CPU time (``time.thread_time``), the three taking turns in a shuffled order.

    python benchmarks/fusion_bench.py spiral digits [--repeats 40]

CPU time rather than wall time: on a machine shared with other work, wall time counts the
moments the process waits for a core, and the ratios would measure the neighbours. Each
figure is the median over the repeats of ``inner`` steps. ``fused`` is ``dg.compile``'s
default; ``unfused`` the same step compiled with ``capture.fusion.ENABLED = False`` (no
fusion, no derived-array memo: the replay before issue 32's fusion). ``benchmarks/run.py``
stays the reference run (wall time, every engine).
"""

from __future__ import annotations

import os
import sys

if "numpy" not in sys.modules:  # single-threaded BLAS, as benchmarks/run.py
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import duograd as dg  # noqa: E402
from duograd import capture  # noqa: E402
from benchmarks import handwritten as hw  # noqa: E402
from benchmarks import run as R  # noqa: E402


def measure(kind: str, repeats: int = 40, inner: int = 10, sizes: object = R.FULL) -> dict:
    """Median microseconds per step of ``fused``, ``unfused`` and ``numpy`` for the MLP
    workload ``kind`` of ``benchmarks/run.py`` (``"spiral"`` or ``"digits"``), and the
    compiled ones' ratios to NumPy.

    >>> r = measure("spiral", repeats=1, inner=1, sizes=R.SMOKE)
    >>> sorted(r["us"]), r["ratio"]["fused"] > 0
    (['fused', 'numpy', 'unfused'], True)
    """
    nin, nouts, _ = getattr(sizes, kind)
    x, y = R._data(kind, SimpleNamespace(sizes=sizes))
    xt = dg.tensor(x)
    make = R._compiled_mlp_step(nin, list(nouts), xt, y, True, 1e-3)
    engines = {}
    old = capture.fusion.ENABLED
    try:
        for name, on in (("fused", True), ("unfused", False)):
            capture.fusion.ENABLED = on  # (the passes run at the first replay: the 2nd call)
            step, _ = make()
            step()
            step()
            engines[name] = step
    finally:
        capture.fusion.ENABLED = old
    params = [p.detach().numpy().copy() for p in dg.nn.MLP(nin, list(nouts), rng=0).parameters()]
    opt = hw.Adam(params, lr=1e-3)
    engines["numpy"] = lambda: hw.train_step(params, opt, x, y)
    samples: dict = {k: [] for k in engines}
    names = list(engines)
    order = np.random.default_rng(0)
    gc.collect()
    gc.freeze()
    try:
        for _ in range(repeats):
            for k in [names[i] for i in order.permutation(len(names))]:
                f = engines[k]
                gc.collect()
                t0 = time.thread_time()
                for _ in range(inner):
                    f()
                samples[k].append((time.thread_time() - t0) / inner * 1e6)
    finally:
        gc.unfreeze()
    us = {k: statistics.median(v) for k, v in samples.items()}
    return {"us": us, "ratio": {k: us[k] / us["numpy"] for k in ("fused", "unfused")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", default=["spiral", "digits"])
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args(argv)
    for kind in args.kinds:
        r = measure(kind, args.repeats)
        print(f"{kind}: " + "  ".join(f"{k} {v:.1f} us" for k, v in r["us"].items())
              + f"  | compiled/numpy: fused {r['ratio']['fused']:.3f}, "
                f"unfused {r['ratio']['unfused']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
