"""Eager wall clock against PyTorch for the working tree and a base revision, timed by
the same harness in alternating processes: whether a change moved duograd's speed
relative to torch, with the machine's state of the day cancelled out.

    python benchmarks/against_base.py --base 7cf6703        # 2 rounds (4 processes)

Each process times three workloads, duograd and torch float64 steps interleaved in a
seeded shuffled order (25 repeats of 3 steps, medians): per op (a 100-op chain on (4, 4)
arrays, forward and backward), a spiral step (MLP(2, [64, 64, 2]) + Adam, batch 350) and
a digits step (MLP(64, [64, 32, 10]) + Adam, batch 64). One BLAS thread, as
benchmarks/run.py. The base is checked out with ``git worktree``; only what both
revisions have is used (``dg.nn.MLP``, ``optim.Adam``, ``F.cross_entropy``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = r'''
import os
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import gc, statistics, sys, time
sys.path.insert(0, {root!r})
import numpy as np
import torch
torch.set_num_threads(1)
import duograd as dg
from duograd.nn import functional as F
rng = np.random.default_rng(0)

def dg_mlp(nin, sizes, batch):
    X, y = dg.tensor(rng.standard_normal((batch, nin))), rng.integers(0, sizes[-1], batch)
    model = dg.nn.MLP(nin, sizes, rng=0)
    opt = dg.optim.Adam(model.parameters(), lr=1e-3)
    def step():
        opt.zero_grad(); F.cross_entropy(model(X), y).backward(); opt.step()
    return step

def torch_mlp(nin, sizes, batch):
    X = torch.tensor(rng.standard_normal((batch, nin)))
    y = torch.tensor(rng.integers(0, sizes[-1], batch))
    layers, d = [], nin
    for i, s in enumerate(sizes):
        layers.append(torch.nn.Linear(d, s).double()); d = s
        if i < len(sizes) - 1:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    def step():
        opt.zero_grad(); torch.nn.functional.cross_entropy(model(X), y).backward(); opt.step()
    return step

def chain(tanh, exp, leaf):
    x0 = np.random.default_rng(0).uniform(-1, 1, (4, 4))
    def step():
        x = leaf(x0); h = x
        for _ in range(25):
            h = exp(tanh(h * 1.01) + 0.1) * 0.5
        h.sum().backward()
    return step

engines = {{
    "dg per op": chain(dg.Tensor.tanh, dg.Tensor.exp, lambda a: dg.tensor(a, requires_grad=True)),
    "torch per op": chain(torch.tanh, torch.exp, lambda a: torch.tensor(a, requires_grad=True)),
    "dg spiral": dg_mlp(2, [64, 64, 2], 350), "torch spiral": torch_mlp(2, [64, 64, 2], 350),
    "dg digits": dg_mlp(64, [64, 32, 10], 64), "torch digits": torch_mlp(64, [64, 32, 10], 64),
}}
for f in engines.values():
    f(); f()
names = list(engines)
samples = {{k: [] for k in names}}
order = np.random.default_rng(1)
gc.collect(); gc.freeze()
for _ in range(25):
    for i in order.permutation(len(names)):
        f = engines[names[i]]
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(3):
            f()
        samples[names[i]].append((time.perf_counter() - t0) / 3)
med = {{k: statistics.median(v) for k, v in samples.items()}}
print(" ".join(f"{{med['dg ' + w] / med['torch ' + w]:.4f}}" for w in ("per op", "spiral", "digits")))
'''


def ratios(root: Path) -> list[float]:
    """duograd / torch medians of the three workloads, timed in a fresh process."""
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(root=str(root))],
                         capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="git revision to compare the working tree with")
    parser.add_argument("--rounds", type=int, default=2, help="base/working-tree pairs (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base),
                        args.base], check=True)
        try:
            runs: dict[str, list[list[float]]] = {"base": [], "tree": []}
            for _ in range(args.rounds):  # alternating, so drift falls on both alike
                runs["base"].append(ratios(base))
                runs["tree"].append(ratios(ROOT))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                           check=True)
    print(f"duograd / torch (median per process; {args.rounds} processes each)")
    print(f"{'workload':12} {'base':>24} {'working tree':>24} {'change of the mean':>20}")
    for k, name in enumerate(("per op", "spiral", "digits")):
        b = [r[k] for r in runs["base"]]
        t = [r[k] for r in runs["tree"]]
        mb, mt = sum(b) / len(b), sum(t) / len(t)
        print(f"{name:12} {' '.join(f'{x:.3f}' for x in b):>24} {' '.join(f'{x:.3f}' for x in t):>24} "
              f"{mt / mb - 1:+20.1%}")


if __name__ == "__main__":
    main()
