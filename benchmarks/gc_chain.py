"""What the garbage collector costs the eager long chain (``run.py``'s "long chain" row).

Every op of an eager chain leaves objects that CPython's cyclic collector tracks (the
output Tensor, its graph node, the tuples the node keeps); enough of them in one step
set off a full (generation-2) collection, which walks every object alive. This prints,
for the chain of ``run.py`` (``handwritten.CHAIN_OPS``, shape (1,)):

- the GC-tracked objects each op leaves alive (``gc.get_objects()`` before and after
  a forward of ``n`` ops, the collector off);
- the collections of each generation during one forward + backward with the collector
  on (``gc.callbacks``), and the time the generation-2 ones took;
- the median time of one forward + backward over ``--repeats`` runs.

    python benchmarks/gc_chain.py              # 20,000 ops, torch imported as run.py does
    python benchmarks/gc_chain.py --no-torch   # without importing torch

The collector runs before each step, so a step starts from the same counts every time.
Both are measured twice: as a program runs (a full collection walks every object alive,
torch's and NumPy's included), then with the objects alive before the first step frozen
(``gc.freeze()``), as ``run.py``'s timing loop does, so that a full collection walks only
what the steps made.
"""

from __future__ import annotations

import os
import sys

if "numpy" not in sys.modules:  # one BLAS thread, as run.py
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"

import argparse
import gc
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import duograd as dg  # noqa: E402
from benchmarks.handwritten import CHAIN_OPS, chain_grad  # noqa: E402


def chain(x: dg.Tensor, n: int) -> dg.Tensor:
    """The first ``n`` ops of ``CHAIN_OPS`` on ``x`` (as ``run.py``'s ``_chain``)."""
    for k in range(n):
        op, c = CHAIN_OPS[k % len(CHAIN_OPS)]
        x = x * c if op == "mul" else x + c if op == "add" else x.tanh() if op == "tanh" else x.exp()
    return x


def tracked_per_op(n: int) -> float:
    """GC-tracked objects left alive per op by a forward of ``n`` ops."""
    x = dg.tensor(np.array([0.3]), requires_grad=True)
    chain(x, 8)  # warm every path once
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        y = chain(x, n)
        after = len(gc.get_objects())
    finally:
        gc.enable()
    del y
    return (after - before) / n


def step(x0: np.ndarray, n: int) -> np.ndarray:
    x = dg.tensor(x0, requires_grad=True)
    chain(x, n).sum().backward()
    return x.grad.numpy()


def collections(x0: np.ndarray, n: int) -> tuple[list[int], float]:
    """Collections per generation during one forward + backward, and the seconds the
    generation-2 ones took."""
    counts, spent, started = [0, 0, 0], [0.0], [0.0]

    def watch(phase: str, info: dict) -> None:
        g = info["generation"]
        if phase == "start":
            counts[g] += 1
            started[0] = time.perf_counter()
        elif g == 2:
            spent[0] += time.perf_counter() - started[0]

    gc.collect()
    gc.callbacks.append(watch)
    try:
        step(x0, n)
    finally:
        gc.callbacks.remove(watch)
    return counts, spent[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-torch", action="store_true", help="do not import torch first")
    args = parser.parse_args()
    if not args.no_torch:
        try:
            import torch  # noqa: F401  (run.py has it loaded: its objects count for the GC)
        except ImportError:
            print("(torch is not installed: measuring without it)")
    x0, n = np.array([0.3]), args.ops
    assert np.allclose(step(x0, n), chain_grad(x0, n)[1], rtol=0, atol=1e-10)
    print(f"ops: {n}, GC-tracked objects alive at start: {len(gc.get_objects())}")
    print(f"GC-tracked objects left per op: {tracked_per_op(n):.2f}")
    for frozen in (False, True):
        if frozen:
            gc.collect()
            gc.freeze()  # as run.py's _interleaved
        print("frozen (as run.py):" if frozen else "not frozen (as a program):")
        for counts, spent in [collections(x0, n) for _ in range(3)]:
            print(f"  collections in one forward + backward: gen0 {counts[0]}, gen1 {counts[1]}, "
                  f"gen2 {counts[2]} ({spent * 1e3:.1f} ms in gen2)")
        times = []
        for _ in range(args.repeats):
            gc.collect()
            t = time.perf_counter()
            step(x0, n)
            times.append(time.perf_counter() - t)
        print(f"  forward + backward: median {statistics.median(times) * 1e3:.1f} ms "
              f"(min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}) over {args.repeats}")
    gc.unfreeze()

if __name__ == "__main__":
    main()
