"""Instructions per step, counted by valgrind's callgrind, for two revisions of duograd.

Wall-clock ratios on a shared virtual machine swing by 5-30% from run to run, which hides
a change of a few percent in the eager path. An instruction count does not: it is the
same for the same program and inputs whatever else the machine is doing. Each workload
runs twice under callgrind (a few steps, then a hundred more), and the difference divided
by the extra steps is the cost of one step, with start-up (imports) cancelled out. Counts
repeat to about 0.2% with the garbage collector off during the steps, address-space
randomisation off and a fixed hash seed.

    python benchmarks/instructions.py --base 68560ff   # the working tree against a revision

The base revision is checked out with ``git worktree`` into a temporary folder and
imported from there; the working tree is imported from the repository root.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A training step of an MLP with Adam (zero_grad, forward, cross-entropy, backward, update).
MLP_STEP = """
X, y = dg.tensor(rng.standard_normal(({batch}, {nin}))), rng.integers(0, {sizes[2]}, {batch})
model = dg.nn.MLP({nin}, {sizes}, rng=0)
opt = dg.optim.Adam(model.parameters(), lr=1e-3)
def step():
    model.zero_grad()
    F.cross_entropy(model(X), y).backward()
    opt.step()
"""

# The same step through dg.compile (recorded by the RUNNER's first step() call, so the
# counted steps are replays); runs on any revision that has dg.compile.
COMPILED_MLP_STEP = """
X, y = dg.tensor(rng.standard_normal(({batch}, {nin}))), rng.integers(0, {sizes[2]}, {batch})
model = dg.nn.MLP({nin}, {sizes}, rng=0)
opt = dg.optim.Adam(model.parameters(), lr=1e-3)
def train(X, y):
    model.zero_grad()
    F.cross_entropy(model(X), y).backward()
    opt.step()
fast = dg.compile(train)
def step():
    fast(X, y)
"""

# A workload is a step() defined on `dg` and `F`; the ones the benchmark table times.
WORKLOADS = {
    "per-op (100 ops + backward, (4,4))": """
a = dg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
b = dg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
def step():
    x = a
    for _ in range(25):
        x = (x * b + a).tanh() * 0.5
    x.sum().backward()
""",
    "digits step (MLP(64,[64,32,10]) + Adam, batch 64)": MLP_STEP.format(nin=64, sizes=[64, 32, 10], batch=64),
    "spiral step (MLP(2,[64,64,2]) + Adam, batch 100)": MLP_STEP.format(nin=2, sizes=[64, 64, 2], batch=100),
    "compiled digits step (dg.compile of the above)":
        COMPILED_MLP_STEP.format(nin=64, sizes=[64, 32, 10], batch=64),
    "compiled spiral step (dg.compile of the above)":
        COMPILED_MLP_STEP.format(nin=2, sizes=[64, 64, 2], batch=100),
    "compiled per-op (dg.compile of the per-op step)": """
a = dg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
b = dg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
def ops():
    a.grad = b.grad = None
    x = a
    for _ in range(25):
        x = (x * b + a).tanh() * 0.5
    x.sum().backward()
fast = dg.compile(ops)
def step():
    fast()
""",
    "chain (500 muls + backward)": """
a = dg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
def step():
    x = a
    for _ in range(500):
        x = x * 1.0001
    x.sum().backward()
""",
    "compiled chain (dg.compile of the chain)": """
a = dg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
def chain():
    a.grad = None
    x = a
    for _ in range(500):
        x = x * 1.0001
    x.sum().backward()
fast = dg.compile(chain)
def step():
    fast()
""",
}

RUNNER = """
import gc
import sys
sys.path.insert(0, {root!r})
import numpy as np
import duograd as dg
from duograd.nn import functional as F
rng = np.random.default_rng(0)
{body}
step()
gc.disable()  # a collection's cost depends on what else is alive: keep it out of the count
for _ in range({n}):
    step()
"""


def instructions(root: Path, body: str, n: int) -> int:
    """Instructions callgrind counts for the program that runs ``n`` steps."""
    with tempfile.TemporaryDirectory() as tmp:
        prog = Path(tmp) / "run.py"
        prog.write_text(RUNNER.format(root=str(root), body=body, n=n))
        # Tensors hash by id, so address-space layout and hash seeds move dict probing
        # around: both are fixed (setarch -R, PYTHONHASHSEED) to make counts repeatable.
        out = subprocess.run(["setarch", os.uname().machine, "-R", "valgrind", "--tool=callgrind",
                              f"--callgrind-out-file={tmp}/cg.out", sys.executable, str(prog)],
                             capture_output=True, text=True, check=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                                  "PYTHONHASHSEED": "0"})
    return int(re.search(r"Collected\s*:\s*(\d+)", out.stderr).group(1))


def per_step(root: Path, body: str, few: int, more: int) -> float:
    return (instructions(root, body, few + more) - instructions(root, body, few)) / more


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="git revision to compare the working tree with")
    parser.add_argument("--steps", type=int, default=100, help="extra steps counted (default 100)")
    parser.add_argument("--only", default="", help="count only the workloads whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base],
                       check=True)
        try:
            print(f"{'workload':52} {'base':>14} {'working tree':>14} {'change':>8}")
            for name, body in WORKLOADS.items():
                if args.only not in name:
                    continue
                old = per_step(base, body, 2, args.steps)
                new = per_step(ROOT, body, 2, args.steps)
                print(f"{name:52} {old:14,.0f} {new:14,.0f} {new / old - 1:+8.2%}")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=True)


if __name__ == "__main__":
    main()
