"""Issue 30's transformer measure: one ``nn.TransformerEncoderLayer`` (d_model 128, 4 heads,
dim_feedforward 512, batch 32, sequence 64, batch_first, dropout 0, float64), forward and
backward through ``sum(out * c)``, duograd eager against torch float64, one thread for both
(``torch.set_num_threads(1)``; NumPy's BLAS limited to one thread through threadpoolctl
when it is installed). Both run the same weights (torch's state dict loaded into duograd)
and the same input; the figures are medians over ``repeats`` timed runs after a warm-up,
the two libraries' runs interleaved.
Also ``F.gelu`` forward + backward at the layer's feed-forward size (32 * 64 * 512), exact
and ``approximate="tanh"``.

Run: ``python -m benchmarks.transformer_bench`` (prints the figures).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any, Callable

import numpy as np

import duograd as dg
from duograd import nn
from duograd.nn import functional as F

D_MODEL, HEADS, FF, BATCH, SEQ = 128, 4, 512, 32, 64


def _one_thread() -> Any:
    try:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _median_times(fns: tuple[Callable[[], Any], ...], repeats: int) -> list[float]:
    """The median time of each function, run in turn within every repeat (interleaved,
    so that a change in the machine's load affects both sides alike)."""
    for fn in fns:
        fn()  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def measure(repeats: int = 5) -> dict:
    """The medians (seconds) and their ratios: ``layer_duograd_s``, ``layer_torch_s``,
    ``layer_ratio`` (duograd / torch), and for GELU ``gelu_exact_*``, ``gelu_tanh_*``."""
    import torch  # noqa: PLC0415

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _one_thread():
            return _measure(torch, repeats)
    finally:
        torch.set_num_threads(threads)


def make_steps(torch: Any, d_model: int = D_MODEL, heads: int = HEADS, ff: int = FF,
               batch: int = BATCH, seq: int = SEQ) -> dict[str, Any]:
    """The layer's workload, built once for any harness: one forward + backward step per
    engine, ``steps`` = {"duograd": eager, "duograd_compiled": ``dg.compile``'s replay,
    "torch": float64, "torch_f32": float32 (a reference only)}, every one from the same
    weights (torch's state dict loaded into duograd), and ``grad_diff`` = {engine: max abs
    difference of its gradients (every parameter's and the input's) from torch float64's
    after one step}. ``benchmarks/run.py`` times it beside its other workloads.

    >>> sorted(make_steps.__annotations__)
    ['batch', 'd_model', 'ff', 'heads', 'return', 'seq', 'torch']
    """
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True,
                                              dtype=torch.float64)
    theirs32 = torch.nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
    theirs32.load_state_dict(theirs.state_dict())
    ours = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
    ours.load_state_dict(theirs.state_dict())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, seq, d_model))
    c = rng.standard_normal((batch, seq, d_model))
    tx, tc = torch.tensor(x, requires_grad=True), torch.tensor(c)
    tx32, tc32 = (torch.tensor(a, dtype=torch.float32, requires_grad=r) for a, r in ((x, True), (c, False)))
    dx, dc = dg.tensor(x, requires_grad=True), dg.tensor(c)

    def torch_step(layer: Any = theirs, inp: Any = tx, cot: Any = tc) -> None:
        layer.zero_grad()
        inp.grad = None
        (layer(inp) * cot).sum().backward()

    def duograd_step() -> None:
        ours.zero_grad()
        dx.grad = None
        (ours(dx) * dc).sum().backward()

    compiled = dg.compile(duograd_step)
    torch_step()
    ref = [p.grad.numpy() for p in theirs.parameters()] + [tx.grad.numpy()]
    diff = {}
    for name, step in (("duograd", duograd_step), ("duograd_compiled", compiled)):
        step()
        step()  # the compiled step's second call is a replay
        got = [p.grad.detach().numpy() for p in ours.parameters()] + [dx.grad.detach().numpy()]
        diff[name] = max(float(np.abs(a - b).max()) for a, b in zip(got, ref))
    return {"steps": {"duograd": duograd_step, "duograd_compiled": compiled, "torch": torch_step,
                      "torch_f32": lambda: torch_step(theirs32, tx32, tc32)},
            "grad_diff": diff, "layer": ours, "torch_layer": theirs, "x": (dx, tx)}


def _measure(torch: Any, repeats: int) -> dict:
    w = make_steps(torch)
    t_torch, t_ours = _median_times((w["steps"]["torch"], w["steps"]["duograd"]), repeats)
    out = {"layer_torch_s": t_torch, "layer_duograd_s": t_ours}
    out["layer_ratio"] = out["layer_duograd_s"] / out["layer_torch_s"]
    # the two agree (a benchmark of a wrong result measures nothing)
    (dx, tx), ours, theirs = w["x"], w["layer"], w["torch_layer"]
    out["layer_max_abs_diff"] = float(np.abs(ours(dx).detach().numpy()
                                             - theirs(tx).detach().numpy()).max())
    rng = np.random.default_rng(1)

    h = rng.standard_normal((BATCH, SEQ, FF))
    g = rng.standard_normal((BATCH, SEQ, FF))
    th, tg = torch.tensor(h, requires_grad=True), torch.tensor(g)
    dh, dgt = dg.tensor(h, requires_grad=True), dg.tensor(g)
    for approx in ("none", "tanh"):
        def t_gelu() -> None:
            th.grad = None
            torch.nn.functional.gelu(th, approximate=approx).backward(tg)

        def d_gelu() -> None:
            dh.grad = None
            F.gelu(dh, approximate=approx).backward(dgt)

        key = "gelu_exact" if approx == "none" else "gelu_tanh"
        out[f"{key}_torch_s"], out[f"{key}_duograd_s"] = _median_times((t_gelu, d_gelu), repeats)
        out[f"{key}_ratio"] = out[f"{key}_duograd_s"] / out[f"{key}_torch_s"]
    return out


if __name__ == "__main__":
    for name, value in measure(repeats=7).items():
        print(f"{name:26s} {value:.4g}")
