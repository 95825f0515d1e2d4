"""The recurrent layers' speed against PyTorch: an ``LSTM`` of 2 layers, hidden size 128
(input size 128), batch 32, sequence 50, one forward and backward pass (the loss is the
sum of the output), float64, one thread for both (torch.set_num_threads(1); NumPy's BLAS
limited with threadpoolctl when it is installed, else run this file with
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1). Each library's figure is
the median of ``repeats`` timed steps after one untimed step, the two libraries
taking turns; both start from the same
weights (duograd loads the torch model's ``state_dict()``).

Run ``python benchmarks/rnn_bench.py [repeats]`` from the repository root.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from typing import Any

import numpy as np

import duograd as dg

SIZES = {"input_size": 128, "hidden_size": 128, "num_layers": 2, "batch": 32, "seq_len": 50}


def _one_blas_thread() -> Any:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _median_times(steps: list, repeats: int, clock: Any = time.perf_counter) -> list[float]:
    """The median seconds of each step on ``clock``, the steps taken in turn in every round
    (so that a change of the machine's load during the run falls on all of them alike)."""
    for step in steps:
        step()  # warm up (allocations, first-call costs)
    times: list[list[float]] = [[] for _ in steps]
    for _ in range(repeats):
        for step, ts in zip(steps, times):
            t0 = clock()
            step()
            ts.append(clock() - t0)
    return [statistics.median(ts) for ts in times]


def make_steps(torch: Any, sizes: dict[str, int] | None = None) -> dict[str, Any]:
    """The workload, built once for any harness: one forward + backward step of the LSTM
    per engine, ``steps`` = {"duograd": eager, "duograd_compiled": ``dg.compile``'s replay
    of the same step, "torch": float64, "torch_f32": float32 (a reference only)}, every one
    from the same weights (duograd loads the torch model's ``state_dict()``), and
    ``grad_diff`` = {engine: max abs difference of its gradients (every parameter's and the
    input's) from torch float64's after one step}. ``benchmarks/run.py`` times it beside
    its other workloads; :func:`measure` times it alone.

    >>> sorted(make_steps.__annotations__)
    ['return', 'sizes', 'torch']
    """
    s = dict(SIZES, **(sizes or {}))
    torch.manual_seed(0)
    tl = torch.nn.LSTM(s["input_size"], s["hidden_size"], s["num_layers"]).double()
    tl32 = torch.nn.LSTM(s["input_size"], s["hidden_size"], s["num_layers"])
    tl32.load_state_dict(tl.state_dict())
    dl = dg.nn.LSTM(s["input_size"], s["hidden_size"], s["num_layers"])
    dl.load_state_dict(tl.state_dict())
    x = np.random.default_rng(0).standard_normal((s["seq_len"], s["batch"], s["input_size"]))
    tx, dx = torch.tensor(x, requires_grad=True), dg.tensor(x, requires_grad=True)
    tx32 = torch.tensor(x, dtype=torch.float32, requires_grad=True)

    def torch_step(model: Any = tl, inp: Any = tx) -> None:
        model.zero_grad()
        inp.grad = None
        out, _ = model(inp)
        out.sum().backward()

    def dg_step() -> None:
        dl.zero_grad()
        dx.grad = None
        out, _ = dl(dx)
        out.sum().backward()

    compiled = dg.compile(dg_step)

    def grads_dg() -> list[np.ndarray]:
        return [p.grad.detach().numpy() for p in dl.parameters()] + [dx.grad.detach().numpy()]

    torch_step()
    ref = [p.grad.numpy() for p in tl.parameters()] + [tx.grad.numpy()]
    diff = {}
    for name, step in (("duograd", dg_step), ("duograd_compiled", compiled)):
        step()
        step()  # the compiled step's second call is a replay
        diff[name] = max(float(np.abs(a - b).max()) for a, b in zip(grads_dg(), ref))
    return {"steps": {"duograd": dg_step, "duograd_compiled": compiled, "torch": torch_step,
                      "torch_f32": lambda: torch_step(tl32, tx32)},
            "grad_diff": diff, "sizes": s}


def measure(repeats: int = 5) -> dict:
    """Seconds per forward+backward step for duograd (eager, and ``dg.compile``'s replay of
    the same step) and torch, float64, one
    thread, and their ratio (duograd / torch): wall-clock (``*_s``) and CPU time of the
    process (``*_cpu_s``), each the median over ``repeats``.

    >>> sorted(measure.__annotations__)
    ['repeats', 'return']
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _one_blas_thread():
            w = make_steps(torch)["steps"]
            steps = [w["torch"], w["duograd"], w["duograd_compiled"]]
            t_torch, t_dg, t_comp = _median_times(steps, repeats)
            # CPU seconds of the process too: on a machine shared with other work they
            # count this step's work, not the time spent waiting for a core
            c_torch, c_dg, c_comp = _median_times(steps, repeats, time.process_time)
    finally:
        torch.set_num_threads(before)
    return {"config": dict(SIZES, dtype="float64", threads=1), "repeats": repeats,
            "torch_s": t_torch, "duograd_eager_s": t_dg, "ratio_eager_vs_torch": t_dg / t_torch,
            "duograd_compiled_s": t_comp, "ratio_compiled_vs_torch": t_comp / t_torch,
            "torch_cpu_s": c_torch, "duograd_eager_cpu_s": c_dg,
            "ratio_eager_vs_torch_cpu": c_dg / c_torch, "duograd_compiled_cpu_s": c_comp,
            "ratio_compiled_vs_torch_cpu": c_comp / c_torch}


if __name__ == "__main__":
    result = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    for k, v in result.items():
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")
