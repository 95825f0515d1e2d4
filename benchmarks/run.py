"""Benchmarks: duograd against PyTorch eager, HIPS autograd and hand-written NumPy.

    python benchmarks/run.py            # the full run (a few minutes)
    python benchmarks/run.py --quick    # fewer repeats, a shorter long chain (~30 s)

Everything is measured in one process, in one run, so the ratios compare like with
like. Within each workload the engines take turns (round-robin, and the turn order
rotates from repeat to repeat), so a machine that drifts slower during the run slows
every engine alike; each figure is the median over the repeats. BLAS is held to one
thread for every engine (the environment variables below, ``threadpoolctl`` when it
is installed, ``torch.set_num_threads(1)``), so no engine wins by using more cores.

The floor is hand-written NumPy (``benchmarks/handwritten.py``): the same arithmetic
with derivatives worked out by hand and no autodiff at all, which is as fast as a
NumPy engine can possibly be. Before timing anything the run checks that the hand-
written gradients equal duograd's for the same weights (max abs diff < 1e-10), so
the comparison is between two ways of computing the same numbers.

PyTorch and HIPS autograd are optional: when one is missing its column reads "n/a".
Results go to the ``benchmarks`` section of ``results/measurements.json``; the file's
other sections are kept. The targets printed beside the numbers come from the issue;
the workloads are fixed in advance and not tuned to meet them.
"""

from __future__ import annotations

import os
import sys

# Single-threaded BLAS must be requested before NumPy loads its BLAS. When this module
# is imported after NumPy (from the walkthrough, say), threadpoolctl does it at run time.
if "numpy" not in sys.modules:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"

import argparse
import contextlib
import cProfile
import datetime
import gc
import importlib
import json
import math
import platform
import pstats
import statistics
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` puts benchmarks/ first, not the root
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import duograd as dg  # noqa: E402
from duograd import nn, optim  # noqa: E402
from duograd.nn import functional as F  # noqa: E402
from benchmarks import handwritten as hw  # noqa: E402

DEFAULT_OUT = ROOT / "results" / "measurements.json"
GRAD_TOL = 1e-10  # hand-written vs duograd gradients, max abs diff
ENGINES = ("duograd", "duograd_compiled", "torch", "torch_f32", "autograd", "numpy")  # torch_f32: a reference only
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# ====================================================================== configuration

@dataclass(frozen=True)
class Sizes:
    """What one run measures and how often. ``repeats``: timing samples per engine
    (the median is reported); ``inner``: calls timed together in one sample."""

    per_op_ops: int = 100
    per_op_shape: tuple[int, int] = (4, 4)
    long_chain: int = 100_000
    spiral: tuple[int, tuple[int, ...], int] = (2, (64, 64, 2), 350)
    digits: tuple[int, tuple[int, ...], int] = (64, (64, 32, 10), 64)
    blas: tuple[int, tuple[int, ...], int] = (512, (1024, 1024, 10), 256)
    # Many short samples rather than a few long ones: on a shared machine a burst of
    # someone else's work then spoils a few samples of every engine, which the median
    # ignores, instead of most of one engine's.
    repeats: dict[str, int] = field(default_factory=lambda: {
        "per_op": 61, "spiral": 61, "digits": 81, "blas": 11, "chain": 5, "hvp": 41})
    inner: dict[str, int] = field(default_factory=lambda: {
        "per_op": 5, "spiral": 3, "digits": 5, "blas": 1, "chain": 1, "hvp": 1})
    profile_steps: int = 100
    use_sklearn: bool = True
    # convolution layers, forward + backward: (batch, in_channels, out_channels, H = W); k3, p1
    conv_digits: tuple[int, int, int, int] = (64, 1, 16, 8)
    conv_mid: tuple[int, int, int, int] = (32, 16, 32, 32)
    cnn_batch: int = 64
    conv_repeats: dict[str, int] = field(default_factory=lambda: {
        "conv_digits": 61, "conv_mid": 9, "cnn": 41})
    first_calls: int = 3  # fresh dg.compile recordings timed per workload (the median)
    # sequence models (issue 30), forward + backward against torch float64:
    # LSTM (input_size, hidden_size, num_layers, batch, seq_len)
    lstm: tuple[int, int, int, int, int] = (128, 128, 2, 32, 50)
    # TransformerEncoderLayer (d_model, nhead, dim_feedforward, batch, seq)
    encoder_layer: tuple[int, int, int, int, int] = (128, 4, 512, 32, 64)
    # the surname transformer's training step (batch, context); the model is the names stage's
    surname_tf: tuple[int, int] = (32, 16)
    seq_repeats: dict[str, int] = field(default_factory=lambda: {
        "lstm": 21, "encoder_layer": 21, "surname_tf": 41})


FULL = Sizes()
QUICK = Sizes(long_chain=20_000,
              repeats={"per_op": 11, "spiral": 9, "digits": 11, "blas": 3, "chain": 1, "hvp": 7},
              inner={"per_op": 5, "spiral": 2, "digits": 3, "blas": 1, "chain": 1, "hvp": 1},
              profile_steps=20, conv_repeats={"conv_digits": 15, "conv_mid": 3, "cnn": 11},
              first_calls=1, seq_repeats={"lstm": 7, "encoder_layer": 7, "surname_tf": 15})
# For the test suite: every code path, tiny arrays, nothing repeated.
SMOKE = Sizes(per_op_ops=20, long_chain=2_000, spiral=(2, (16, 16, 2), 64),
              digits=(64, (16, 8, 10), 16), blas=(32, (64, 64, 10), 16),
              repeats={k: 1 for k in FULL.repeats}, inner={k: 1 for k in FULL.inner},
              profile_steps=1, use_sklearn=False, conv_digits=(4, 1, 3, 8),
              conv_mid=(2, 3, 4, 6), cnn_batch=8,
              conv_repeats={"conv_digits": 1, "conv_mid": 1, "cnn": 1}, first_calls=1,
              lstm=(6, 5, 2, 3, 4), encoder_layer=(8, 2, 16, 3, 5), surname_tf=(4, 16),
              seq_repeats={"lstm": 1, "encoder_layer": 1, "surname_tf": 1})

TARGETS = {
    "per_op": "duograd <= torch",
    "spiral": "duograd <= 1.3x numpy",
    "digits": "duograd <= 1.5x numpy",
    "blas": "duograd <= 1.05x numpy",
    "chain": "duograd < torch",
    "memory": "duograd <= 1.5x numpy",
    "hvp": "duograd <= 2x torch",
    "conv_digits": "duograd <= torch",
    "conv_mid": ["duograd <= 1.1x torch", "duograd <= 1.1x numpy"],
    "cnn": "duograd <= torch",
    "lstm": ["duograd <= 1.0x torch", "duograd_compiled <= 0.7x torch"],
    "encoder_layer": "duograd <= 1.0x torch",
    "surname_tf": "duograd_compiled <= 1.0x torch",
}
# dg.compile (capture and replay), as ratios to the hand-written NumPy floor; the first
# call records, and its time is compared with one eager step.
COMPILED_TARGETS = {"per_op": 1.6, "train_spiral": 1.05, "train_digits": 1.05, "hvp": 1.3,
                    "chain": 2.0}
FIRST_CALL_TARGET = 3.0


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# ====================================================================== timing

def _interleaved(engines: dict[str, Callable[[], Any]], repeats: int, inner: int,
                 warmup: int = 1) -> dict[str, dict[str, float]]:
    """Median seconds per call of each engine, the engines taking turns in every repeat.

    Each repeat takes the engines in a new order (a seeded shuffle), so none is always
    timed first, right after the garbage collector ran, or right after a particular
    rival. (A fixed rotation keeps every engine behind the same rival: the one behind
    PyTorch, whose thread pool stays busy for a moment after its work, timed markedly
    slower than the same step behind another engine.)
    """
    for fn in engines.values():
        for _ in range(warmup):
            fn()
    names = list(engines)
    samples: dict[str, list[float]] = {k: [] for k in names}
    # Objects alive now (modules, data, models) are moved out of the collector's sight,
    # so the gc.collect() before each sample costs microseconds rather than a full sweep.
    gc.collect()
    gc.freeze()
    order = np.random.default_rng(0)
    for r in range(repeats):
        for name in [names[i] for i in order.permutation(len(names))]:
            fn = engines[name]
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - t0) / inner)
    gc.unfreeze()
    return {k: {"median": statistics.median(v), "min": min(v), "max": max(v),
                "p25": float(np.percentile(v, 25)), "p75": float(np.percentile(v, 75))}
            for k, v in samples.items()}


def _sig(x: float | None, digits: int = 4) -> float | None:
    """``x`` to a few significant digits (timings carry no more), None for n/a."""
    if x is None:
        return None
    if not math.isfinite(x):
        raise ValueError(f"benchmark produced a non-finite number: {x}")
    return float(f"{x:.{digits}g}")


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _report(times: dict[str, dict[str, float]], scale: float, unit: str) -> dict[str, Any]:
    """Per engine: median (scaled to ``unit``), the [min, max] spread and the [p25, p75]
    quartiles; None for absent ones."""
    out: dict[str, Any] = {"unit": unit}
    spread, quartiles = {}, {}
    for name in ENGINES:
        t = times.get(name)
        out[name] = _sig(t["median"] * scale) if t else None
        if t:
            spread[name] = [_sig(t["min"] * scale), _sig(t["max"] * scale)]
            quartiles[name] = [_sig(t["p25"] * scale), _sig(t["p75"] * scale)]
    out["spread"] = spread
    out["quartiles"] = quartiles
    return out


def _max_abs_diff(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(a, b))


def _check_grads(name: str, diff: float) -> None:
    if not diff < GRAD_TOL:
        raise AssertionError(f"{name}: hand-written and duograd gradients differ by {diff:.3e} "
                             f"(max abs), over the {GRAD_TOL:g} allowed: the comparison would "
                             "not be apples to apples")


# ====================================================================== the op chain

def _chain(x: Any, n: int, tanh: Callable, exp: Callable) -> Any:
    """The first ``n`` ops of ``hw.CHAIN_OPS`` applied with one engine's tanh and exp."""
    ops = hw.CHAIN_OPS
    for k in range(n):
        op, c = ops[k % len(ops)]
        if op == "mul":
            x = x * c
        elif op == "tanh":
            x = tanh(x)
        elif op == "add":
            x = x + c
        else:
            x = exp(x)
    return x


def _chain_engines(x0: np.ndarray, n: int, torch: ModuleType | None,
                   hips: ModuleType | None) -> dict[str, Callable[[], np.ndarray]]:
    """One forward + backward of the n-op chain per engine; each returns d sum / d x."""

    def duograd_fn() -> np.ndarray:
        x = dg.tensor(x0, requires_grad=True)
        _chain(x, n, dg.Tensor.tanh, dg.Tensor.exp).sum().backward()
        return x.grad.numpy()

    engines: dict[str, Callable[[], np.ndarray]] = {"duograd": duograd_fn}
    if torch is not None:
        def torch_fn() -> np.ndarray:
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            _chain(x, n, torch.tanh, torch.exp).sum().backward()
            return x.grad.numpy()
        engines["torch"] = torch_fn
    if hips is not None:
        anp = importlib.import_module("autograd.numpy")
        hips_grad = hips.grad(lambda x: anp.sum(_chain(x, n, anp.tanh, anp.exp)))
        engines["autograd"] = lambda: hips_grad(x0)
    engines["numpy"] = lambda: hw.chain_grad(x0, n)[1]
    engines["duograd_compiled"] = _compiled_chain(x0, n)()
    return engines


def _compiled_chain(x0: np.ndarray, n: int) -> Callable[[], Callable[[], np.ndarray]]:
    """A maker of the chain's step through ``dg.compile`` (a fresh one records on its first
    call): the same forward and backward, into the ``.grad`` of a leaf made once."""
    def step(x: dg.Tensor) -> dg.Tensor:
        x.grad = None
        _chain(x, n, dg.Tensor.tanh, dg.Tensor.exp).sum().backward()
        return x.grad

    def make() -> Callable[[], np.ndarray]:
        fast, x = dg.compile(step), dg.tensor(x0, requires_grad=True)
        return lambda: fast(x).numpy()
    return make


def _first_call(make: Callable[[], Callable[[], Any]], eager_seconds: float, repeats: int = 3) -> dict[str, Any]:
    """The recording call of a fresh ``dg.compile`` (median over ``repeats`` fresh ones),
    in ms and as a multiple of one eager step."""
    samples = []
    # As in _interleaved, which times the eager step: what is alive is frozen out of the
    # collector's sight first, so the collection before each sample is the same small
    # sweep (a full one walks every object of the process and leaves the caches cold,
    # which would charge the recording for the sweep).
    gc.collect()
    gc.freeze()
    try:
        for _ in range(repeats):
            fn = make()
            gc.collect()
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
    finally:
        gc.unfreeze()
    first = statistics.median(samples)
    ratio = first / eager_seconds
    return {"first_call_ms": _sig(first * 1e3), "first_call_ratio_to_eager": _sig(ratio),
            "first_call_target": f"<= {FIRST_CALL_TARGET:g}x one eager step",
            "first_call_met": ratio <= FIRST_CALL_TARGET}


def _compiled_summary(key: str, res: dict[str, Any], numpy_key: str = "numpy",
                      compiled_key: str = "duograd_compiled") -> dict[str, Any]:
    """The dg.compile row of a benchmark: its ratio to NumPy against its target."""
    ratio = _ratio(res.get(compiled_key), res.get(numpy_key))
    limit = COMPILED_TARGETS[key]
    return {"ratio_to_numpy": _sig(ratio), "target": f"duograd_compiled <= {limit:g}x numpy",
            "limit": limit, "met": None if ratio is None else ratio <= limit}


def _grad_diffs(engines: dict[str, Callable[[], Any]], reference: Any) -> dict[str, float]:
    """Max abs difference of each engine's gradient from the hand-written one."""
    ref = reference if isinstance(reference, list) else [reference]
    out = {}
    for name, fn in engines.items():
        if name == "numpy":
            continue
        g = fn()
        out[name] = _max_abs_diff(g if isinstance(g, list) else [g], ref)
    return out


def bench_per_op(ctx: SimpleNamespace) -> dict[str, Any]:
    s = ctx.sizes
    x0 = np.random.default_rng(0).uniform(-1, 1, size=s.per_op_shape)
    engines = _chain_engines(x0, s.per_op_ops, ctx.torch, ctx.hips)
    diffs = _grad_diffs(engines, hw.chain_grad(x0, s.per_op_ops)[1])
    _check_grads("per-op chain", diffs["duograd"])
    times = _interleaved(engines, ctx.repeats("per_op"), ctx.inner("per_op"))
    res = _report(times, 1e6 / s.per_op_ops, "us per op (forward + backward)")
    res.update(ops=s.per_op_ops, shape=list(s.per_op_shape), op_cycle=[o for o, _ in hw.CHAIN_OPS],
               grad_max_abs_diff=_sig_all(diffs), target=TARGETS["per_op"],
               ratio_to_torch=_sig(_ratio(res["duograd"], res["torch"])),
               ratio_to_numpy=_sig(_ratio(res["duograd"], res["numpy"])))
    res["met"] = None if res["torch"] is None else res["duograd"] <= res["torch"]
    res["compiled"] = _compiled_summary("per_op", res)
    res["compiled"].update(_first_call(_compiled_chain(x0, s.per_op_ops),
                                       times["duograd"]["median"], s.first_calls))
    return res


def bench_long_chain(ctx: SimpleNamespace) -> dict[str, Any]:
    n = ctx.sizes.long_chain
    x0 = np.array([0.3])
    engines = _chain_engines(x0, n, ctx.torch, None)  # the issue asks for torch and NumPy here
    diffs = _grad_diffs(engines, hw.chain_grad(x0, n)[1])
    _check_grads("long chain", diffs["duograd"])
    times = _interleaved(engines, ctx.repeats("chain"), ctx.inner("chain"), warmup=0)
    res = _report(times, 1.0, "s (forward + backward)")
    res.update(ops=n, shape=[1], grad_max_abs_diff=_sig_all(diffs), target=TARGETS["chain"],
               ratio_to_torch=_sig(_ratio(res["duograd"], res["torch"])),
               ratio_to_numpy=_sig(_ratio(res["duograd"], res["numpy"])))
    res["met"] = None if res["torch"] is None else res["duograd"] < res["torch"]
    res["compiled"] = _compiled_summary("chain", res)
    res["compiled"].update(_first_call(_compiled_chain(x0, n), times["duograd"]["median"], repeats=1))
    return res


def _sig_all(d: dict[str, float]) -> dict[str, float]:
    return {k: _sig(v, 3) for k, v in d.items()}


# ====================================================================== MLP training steps

def spiral_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of a noisy two-arm spiral, 2.5 turns, labels 0 and 1.

    >>> x, y = spiral_data(10)
    >>> x.shape, sorted(set(y.tolist()))
    ((10, 2), [0, 1])
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    t = np.sqrt(rng.uniform(0.02, 1.0, n))
    theta = t * 2.5 * 2 * np.pi + np.pi * y + rng.normal(0, 0.5, n) * t
    return np.stack([t * np.cos(theta), t * np.sin(theta)], axis=1), y


def _data(kind: str, ctx: SimpleNamespace) -> tuple[np.ndarray, np.ndarray]:
    nin, nouts, batch = getattr(ctx.sizes, kind)
    if kind == "spiral":
        return spiral_data(batch)
    if kind == "digits" and ctx.sizes.use_sklearn:
        datasets = _optional("sklearn.datasets")
        if datasets is not None:
            d = datasets.load_digits()
            return d.data[:batch] / 16.0, d.target[:batch].astype(np.intp)
    rng = np.random.default_rng(1)
    return rng.normal(size=(batch, nin)), rng.integers(0, nouts[-1], batch)


def _torch_logits(torch: ModuleType, params: Any, x: Any) -> Any:
    """The relu MLP in PyTorch, one ``addmm`` per layer against the transposed (out, in)
    weight (what ``nn.Linear`` runs)."""
    n = len(params) // 2
    for i in range(n):
        x = torch.addmm(params[2 * i + 1], x, params[2 * i].t())
        if i < n - 1:
            x = torch.relu(x)
    return x


def _dg_logits(params: Any, x: dg.Tensor) -> dg.Tensor:
    """The same MLP as a function of its parameters (for the Hessian-vector product)."""
    n = len(params) // 2
    for i in range(n):
        x = x @ params[2 * i].mT + params[2 * i + 1]
        if i < n - 1:
            x = x.relu()
    return x


def _hips_loss(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Any:
    anp = importlib.import_module("autograd.numpy")
    n = len(params) // 2
    h = x
    for i in range(n):
        h = anp.dot(h, params[2 * i].T) + params[2 * i + 1]
        if i < n - 1:
            h = anp.maximum(h, 0.0)
    shift = h - anp.max(h, axis=1, keepdims=True)
    logp = shift - anp.log(anp.sum(anp.exp(shift), axis=1, keepdims=True))
    return -anp.mean(logp[np.arange(len(y)), y])


def _torch_step(torch: ModuleType, tp: list, tx: Any, ty: Any, topt: Any) -> Callable[[], float]:
    """One torch training step on parameters ``tp`` (Adam when ``topt`` is given)."""
    def step() -> float:
        for p in tp:
            p.grad = None
        loss = torch.nn.functional.cross_entropy(_torch_logits(torch, tp, tx), ty)
        loss.backward()
        if topt is not None:
            topt.step()
        return loss.item()
    return step


def mlp_setup(kind: str, ctx: SimpleNamespace, adam: bool = True, lr: float = 1e-3) -> SimpleNamespace:
    """One training step per engine, every engine starting from the same weights.

    Returns ``engines`` (name -> step function), the data, the initial weights and each
    engine's gradient at them (``grads``), so the caller can check they agree.
    """
    nin, nouts, _ = getattr(ctx.sizes, kind)
    x, y = _data(kind, ctx)
    model = nn.MLP(nin, list(nouts), rng=0)
    params = list(model.parameters())
    w0 = [p.detach().numpy().copy() for p in params]
    engines: dict[str, Callable[[], Any]] = {}
    grads: dict[str, list[np.ndarray]] = {}

    # duograd: the public API, exactly as a user writes a training loop.
    xt = dg.tensor(x)
    opt = optim.Adam(params, lr=lr) if adam else None
    loss = F.cross_entropy(model(xt), y)
    loss.backward()
    grads["duograd"] = [p.grad.numpy().copy() for p in params]
    model.zero_grad()

    def duograd_step() -> float:
        if opt is not None:
            opt.zero_grad()
        else:
            model.zero_grad()
        loss = F.cross_entropy(model(xt), y)
        loss.backward()
        if opt is not None:
            opt.step()
        return loss.item()
    engines["duograd"] = duograd_step

    torch = ctx.torch
    if torch is not None:
        ty = torch.from_numpy(y.astype(np.int64))
        # float64 is the comparison; torch's float32 path is timed for reference only
        # (its gradients differ from the float64 ones by rounding, so they are not compared).
        for name, dtype, np_dtype in (("torch", torch.float64, np.float64),
                                      ("torch_f32", torch.float32, np.float32)):
            tp = [torch.tensor(w, dtype=dtype, requires_grad=True) for w in w0]
            tx = torch.from_numpy(np.ascontiguousarray(x, dtype=np_dtype))
            if name == "torch":
                torch.nn.functional.cross_entropy(_torch_logits(torch, tp, tx), ty).backward()
                grads["torch"] = [p.grad.numpy().copy() for p in tp]
            engines[name] = _torch_step(torch, tp, tx, ty, torch.optim.Adam(tp, lr=lr) if adam else None)

    if ctx.hips is not None and kind != "blas":
        hp = [w.copy() for w in w0]
        hips_grad = ctx.hips.grad(lambda ps: _hips_loss(ps, x, y))
        grads["autograd"] = [np.asarray(g) for g in hips_grad(hp)]
        hopt = hw.Adam(hp, lr=lr) if adam else None

        def hips_step() -> None:
            g = hips_grad(hp)
            if hopt is not None:
                hopt.step(g)
        engines["autograd"] = hips_step

    # duograd through dg.compile: the same step on a model of its own (same initial weights).
    # Its gradients are checked on a replay (the second call), against NumPy's at the
    # weights that call starts from.
    make_compiled = _compiled_mlp_step(nin, list(nouts), xt, y, adam, lr)
    engine, cmodel = make_compiled()
    engine()
    w1 = [p.detach().numpy().copy() for p in cmodel.parameters()]
    engine()
    grads["duograd_compiled"] = [p.grad.numpy().copy() for p in cmodel.parameters()]
    grads_compiled_ref = hw.mlp_loss_and_grads(w1, x, y)[1]
    engines["duograd_compiled"] = engine
    # The same with every buffer reused (reuse_buffers=True: kernel results that never
    # leave the replay written into arrays allocated once; the default reuses only small
    # ones), timed beside it: whether reuse helps is measured, not assumed.
    reuse_engine, _ = make_compiled(reuse_buffers=True)
    reuse_engine()
    engines["duograd_compiled_reuse"] = reuse_engine

    npp = [w.copy() for w in w0]
    grads["numpy"] = hw.mlp_loss_and_grads(npp, x, y)[1]
    nopt = hw.Adam(npp, lr=lr) if adam else None
    engines["numpy"] = lambda: hw.train_step(npp, nopt, x, y)
    return SimpleNamespace(engines=engines, grads=grads, x=x, y=y, w0=w0, model=model,
                           make_compiled=make_compiled, grads_compiled_ref=grads_compiled_ref)


def _compiled_mlp_step(nin: int, nouts: list[int], xt: dg.Tensor, y: np.ndarray, adam: bool,
                       lr: float) -> Callable[..., tuple[Callable[[], float], nn.Module]]:
    """A maker of (a fresh model's training step through ``dg.compile``, the model);
    ``make(reuse_buffers=True)`` compiles it with every buffer reused."""
    def make(reuse_buffers: bool | None = None) -> tuple[Callable[[], float], nn.Module]:
        model = nn.MLP(nin, nouts, rng=0)
        opt = optim.Adam(model.parameters(), lr=lr) if adam else None

        def step(x: dg.Tensor, y: np.ndarray) -> dg.Tensor:
            model.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if opt is not None:
                opt.step()
            return loss
        fast = dg.compile(step, reuse_buffers=reuse_buffers)
        return (lambda: fast(xt, y).item()), model
    return make


def bench_train(kind: str, ctx: SimpleNamespace) -> dict[str, Any]:
    nin, nouts, batch = getattr(ctx.sizes, kind)
    adam = kind != "blas"
    setup = mlp_setup(kind, ctx, adam=adam)
    diffs = {k: _max_abs_diff(g, setup.grads["numpy"]) for k, g in setup.grads.items()
             if k not in ("numpy", "duograd_compiled")}
    diffs["duograd_compiled"] = _max_abs_diff(setup.grads["duograd_compiled"], setup.grads_compiled_ref)
    _check_grads(f"{kind} step", diffs["duograd"])
    _check_grads(f"{kind} step, compiled", diffs["duograd_compiled"])
    times = _interleaved(setup.engines, ctx.repeats(kind), ctx.inner(kind))
    res = _report(times, 1e3, "ms per step")
    res.update(model=f"MLP({nin}, {list(nouts)})", batch=batch,
               n_params=int(sum(w.size for w in setup.w0)),
               step="forward, cross-entropy, backward" + (", Adam" if adam else " (no optimizer)"),
               grad_max_abs_diff=_sig_all(diffs), target=TARGETS[kind],
               ratio_to_numpy={k: _sig(_ratio(res[k], res["numpy"])) for k in ENGINES
                               if k != "numpy" and res[k] is not None})
    limit = {"spiral": 1.3, "digits": 1.5, "blas": 1.05}[kind]
    res["met"] = res["ratio_to_numpy"]["duograd"] <= limit
    if f"train_{kind}" in COMPILED_TARGETS:
        res["compiled"] = _compiled_summary(f"train_{kind}", res)
        reuse = times["duograd_compiled_reuse"]["median"] * 1e3
        res["compiled"]["buffer_reuse_ms"] = _sig(reuse)
        res["compiled"]["buffer_reuse_ratio_to_numpy"] = _sig(_ratio(reuse, res["numpy"]))
        res["compiled"].update(_first_call(lambda: setup.make_compiled()[0],
                                           times["duograd"]["median"], ctx.sizes.first_calls))
    return res


# ====================================================================== convolution

def bench_conv(kind: str, ctx: SimpleNamespace) -> dict[str, Any]:
    """One convolution layer (k3, stride 1, padding 1), forward and backward with respect to
    x, w and b, from leaves made once; the cotangent of the output is fixed."""
    n, c, o, side = getattr(ctx.sizes, kind)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((n, c, side, side)), rng.standard_normal((o, c, 3, 3)) / 3
    b, g = rng.standard_normal(o), rng.standard_normal((n, o, side, side))
    xt, wt, bt, gt = (dg.tensor(x, requires_grad=True), dg.tensor(w, requires_grad=True),
                      dg.tensor(b, requires_grad=True), dg.tensor(g))

    def duograd_fn() -> list[np.ndarray]:
        xt.grad = wt.grad = bt.grad = None
        out = dg.conv2d(xt, wt, bt, padding=1)
        out.backward(gt)
        return [out.detach().numpy(), xt.grad.detach().numpy(), wt.grad.detach().numpy(), bt.grad.detach().numpy()]

    engines: dict[str, Callable[[], Any]] = {"duograd": duograd_fn}
    torch = ctx.torch
    if torch is not None:
        for name, dtype in (("torch", torch.float64), ("torch_f32", torch.float32)):
            ts = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in (x, w, b)]
            tg = torch.tensor(g, dtype=dtype)

            def torch_fn(ts=ts, tg=tg) -> list[np.ndarray]:
                for t in ts:
                    t.grad = None
                out = torch.nn.functional.conv2d(*ts, padding=1)
                out.backward(tg)
                return [out.detach().numpy()] + [t.grad.numpy() for t in ts]
            engines[name] = torch_fn
    engines["numpy"] = lambda: hw.conv2d_layer_grads(x, w, b, g, padding=1)
    reference = list(hw.conv2d_layer_grads(x, w, b, g, padding=1))
    diffs = {k: _max_abs_diff(fn(), reference) for k, fn in engines.items() if k not in ("numpy", "torch_f32")}
    _check_grads(f"{kind} layer", diffs["duograd"])
    times = _interleaved(engines, ctx.sizes.conv_repeats[kind], 1)
    res = _report(times, 1e3, "ms per forward + backward")
    res.update(model=f"conv2d {c}->{o}, {side}x{side}, k3 p1, batch {n}", batch=n,
               step="forward and backward with respect to x, w and b",
               grad_max_abs_diff=_sig_all(diffs), target=TARGETS[kind],
               ratio_to_torch=_sig(_ratio(res["duograd"], res["torch"])),
               ratio_to_numpy=_sig(_ratio(res["duograd"], res["numpy"])))
    limits = [(1.0, "torch")] if kind == "conv_digits" else [(1.1, "torch"), (1.1, "numpy")]
    checks = [None if res[ref] is None else res["duograd"] <= lim * res[ref] for lim, ref in limits]
    res["met"] = None if None in checks else all(checks)
    return res


def bench_cnn(ctx: SimpleNamespace) -> dict[str, Any]:
    """The walkthrough's digits CNN (benchmarks/cnn.py): one training step, forward
    (dropout on), cross-entropy, backward and Adam, duograd's ``step(X, y)`` against the same
    network in PyTorch float64 (weights copied across; the gradients are checked to agree
    first, in eval mode)."""
    from benchmarks import cnn as digits_cnn

    n = ctx.sizes.cnn_batch
    x, y = _data("digits", ctx)  # the first images of the digits (random when smoke)
    rng = np.random.default_rng(1)
    if x.shape[0] < n or not ctx.sizes.use_sklearn:
        x, y = rng.random((n, 64)), rng.integers(0, 10, n)
    x, y = x[:n].reshape(n, 1, 8, 8), y[:n]
    net = digits_cnn.build_cnn(0)
    step = digits_cnn.make_step(net)
    xt = dg.tensor(x)
    net.eval()  # the gradient check without dropout (its masks differ between libraries)
    step(xt, y)
    grads = {"duograd": [p.grad.numpy().copy() for p in net.parameters()]}
    net.train()
    opt = optim.Adam(net.parameters(), lr=1e-3)

    def duograd_step() -> float:
        loss = step(xt, y)
        opt.step()
        return loss.item()
    engines: dict[str, Callable[[], Any]] = {"duograd": duograd_step}
    torch = ctx.torch
    diffs: dict[str, float] = {}
    if torch is not None:
        tn = torch.nn
        c1, c2 = digits_cnn.CHANNELS
        ty = torch.from_numpy(y.astype(np.int64))
        for name, dtype in (("torch", torch.float64), ("torch_f32", torch.float32)):
            tnet = tn.Sequential(tn.Conv2d(1, c1, 3, padding=1), tn.ReLU(), tn.MaxPool2d(2),
                                 tn.Conv2d(c1, c2, 3, padding=1), tn.ReLU(), tn.MaxPool2d(2),
                                 tn.Flatten(), tn.Dropout(digits_cnn.DROPOUT),
                                 tn.Linear(4 * c2, 10)).to(dtype)
            tnet.load_state_dict(nn.utils.torch_state_dict(digits_cnn.build_cnn(0)))
            tx = torch.from_numpy(x.astype(np.float64 if name == "torch" else np.float32))
            topt = torch.optim.Adam(tnet.parameters(), lr=1e-3)

            def torch_step(tnet=tnet, tx=tx, topt=topt) -> float:
                for p in tnet.parameters():
                    p.grad = None
                loss = torch.nn.functional.cross_entropy(tnet(tx), ty)
                loss.backward()
                topt.step()
                return loss.item()
            if name == "torch":
                tnet.eval()
                torch.nn.functional.cross_entropy(tnet(tx), ty).backward()
                tnet.train()
                tg = [p.grad.numpy() for p in tnet.parameters()]  # the same layouts
                diffs["duograd"] = _max_abs_diff(grads["duograd"], tg)
            engines[name] = torch_step
    times = _interleaved(engines, ctx.sizes.conv_repeats["cnn"], 1)
    res = _report(times, 1e3, "ms per step")
    res.update(model=f"digits CNN, {sum(p.numel() for p in net.parameters()):,} parameters",
               batch=n, step="forward, cross-entropy, backward, Adam (step(X, y) then opt.step())",
               grad_max_abs_diff_to_torch=_sig_all(diffs), target=TARGETS["cnn"],
               ratio_to_torch=_sig(_ratio(res["duograd"], res["torch"])))
    if diffs and not diffs["duograd"] < GRAD_TOL:
        raise AssertionError(f"CNN step: duograd and PyTorch gradients differ by {diffs['duograd']:.3e}")
    res["met"] = None if res["torch"] is None else res["duograd"] <= res["torch"]
    return res


# ====================================================================== sequence models

_SEQ_TOL = 1e-9  # duograd's gradients against torch float64's (a sequence of 50 steps adds rounding)
_TARGET_RE = None  # compiled lazily by _meets


def _meets(res: dict[str, Any], target: str) -> bool | None:
    """Whether ``res`` meets one target string ("duograd[_compiled] <= F x torch"), None
    when an engine in it was not measured.

    >>> _meets({"duograd": 2.0, "torch": 4.0}, "duograd <= 0.5x torch")
    True
    """
    global _TARGET_RE
    import re  # noqa: PLC0415
    if _TARGET_RE is None:
        _TARGET_RE = re.compile(r"(duograd(?:_compiled)?)\s*<=\s*([0-9.]+)x\s*(torch|numpy)")
    ours, factor, ref = _TARGET_RE.fullmatch(target).groups()
    ratio = _ratio(res.get(ours), res.get(ref))
    return None if ratio is None else ratio <= float(factor)


def _seq_row(key: str, ctx: SimpleNamespace, steps: dict[str, Callable[[], Any]],
             grad_diff: dict[str, float], model: str, step: str) -> dict[str, Any]:
    """Time ``steps`` (engines taking turns, the median), check the gradients agreed with
    torch float64's first, and lay the row out as the others: ms per step, ratios to torch
    float64 of eager and compiled, the target(s) and whether each was met."""
    for name, d in grad_diff.items():
        if not d < _SEQ_TOL:
            raise AssertionError(f"{key}: {name} and PyTorch float64 gradients differ by {d:.3e} "
                                 f"(max abs), over the {_SEQ_TOL:g} allowed")
    times = _interleaved(steps, ctx.sizes.seq_repeats[key], 1)
    res = _report(times, 1e3, "ms per step")
    res.update(model=model, step=step, grad_max_abs_diff_to_torch=_sig_all(grad_diff),
               target=TARGETS[key], ratio_to_torch=_sig(_ratio(res["duograd"], res["torch"])),
               compiled_ratio_to_torch=_sig(_ratio(res["duograd_compiled"], res["torch"])))
    targets = res["target"] if isinstance(res["target"], list) else [res["target"]]
    checks = [_meets(res, t) for t in targets]
    res["met"] = None if None in checks else all(checks)
    return res


def bench_lstm(ctx: SimpleNamespace) -> dict[str, Any]:
    """Issue 30's LSTM measure (benchmarks/rnn_bench.py builds the workload): ``nn.LSTM``,
    2 layers, hidden 128, batch 32, sequence 50, forward + backward of ``out.sum()``;
    duograd eager and through dg.compile against torch float64, one thread. Without
    torch there is nothing to load the weights from, and the row reads n/a."""
    inp, hidden, layers, batch, seq = ctx.sizes.lstm
    model = f"LSTM({inp}, {hidden}, num_layers={layers}), batch {batch}, sequence {seq}"
    if ctx.torch is None:
        return {"unit": "ms per step", "model": model, "target": TARGETS["lstm"], "met": None,
                **{k: None for k in ENGINES}}
    from benchmarks import rnn_bench

    w = rnn_bench.make_steps(ctx.torch, {"input_size": inp, "hidden_size": hidden,
                                         "num_layers": layers, "batch": batch, "seq_len": seq})
    return _seq_row("lstm", ctx, w["steps"], w["grad_diff"], model,
                    "forward and backward of out.sum() w.r.t. every parameter and the input")


def bench_encoder_layer(ctx: SimpleNamespace) -> dict[str, Any]:
    """Issue 30's transformer measure (benchmarks/transformer_bench.py builds it): one
    ``nn.TransformerEncoderLayer`` (d_model 128, 4 heads, dim_feedforward 512, batch_first,
    dropout 0), batch 32, sequence 64, forward + backward of ``sum(out * c)``, against
    torch float64 (dg.compile's replay timed beside it, no target)."""
    d, heads, ff, batch, seq = ctx.sizes.encoder_layer
    model = f"TransformerEncoderLayer({d}, {heads}, {ff}), batch {batch}, sequence {seq}"
    if ctx.torch is None:
        return {"unit": "ms per step", "model": model, "target": TARGETS["encoder_layer"],
                "met": None, **{k: None for k in ENGINES}}
    from benchmarks import transformer_bench

    w = transformer_bench.make_steps(ctx.torch, d, heads, ff, batch, seq)
    return _seq_row("encoder_layer", ctx, w["steps"], w["grad_diff"], model,
                    "forward and backward of sum(out * c) w.r.t. every parameter and the input")


def surname_steps(torch: ModuleType, batch: int, context: int = 16) -> dict[str, Any]:
    """The names stage's transformer training step (experiments/names.py: the same model,
    AdamW and step function, ``make_model``, ``make_optimizer``, ``train_step``), on a
    fixed batch of made-up surnames (the step's cost does not depend on which letters):
    ``steps`` per engine, each with its own model from seed 0 (torch's the twin of it),
    and ``grad_diff``, the max abs difference of duograd's gradients (eager and replayed)
    from torch float64's at the initial weights."""
    from experiments import names
    from experiments.names_models import torch_twin

    rng = np.random.default_rng(0)
    letters = names.ALPHABET[1:]
    words = ["".join(rng.choice(list(letters), size=int(rng.integers(3, context))))
             for _ in range(batch)]
    x, y = names.step_inputs("transformer", *names.sequences(words, context))
    engines: dict[str, Callable[[], Any]] = {}
    models = {}
    for mode in ("duograd", "duograd_compiled"):
        model = names.make_model("transformer", 0, context)
        opt, _ = names.make_optimizer("transformer", model, 1000)
        f = (lambda model=model, opt=opt: (lambda a, b: names.train_step("transformer", model, opt, a, b)))()
        f = dg.compile(f) if mode == "duograd_compiled" else f
        engines[mode] = (lambda f=f: f(x, y))
        models[mode] = model
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    twins = {}
    for name, dtype in (("torch", torch.float64), ("torch_f32", torch.float32)):
        twin = torch_twin(names.make_model("transformer", 0, context), dtype=dtype)
        topt, _ = names.make_optimizer("transformer", twin, 1000, lib="torch")

        def tstep(twin: Any = twin, topt: Any = topt) -> float:
            topt.zero_grad()
            loss = torch.nn.functional.cross_entropy(twin(tx).reshape(-1, names.VOCAB), ty,
                                                     ignore_index=names.IGNORE)
            loss.backward()
            topt.step()
            return loss.item()
        engines[name] = tstep
        twins[name] = twin
    # the gradients, on models of their own, at the initial weights and after one AdamW
    # step of each library (the compiled step's second call is a replay)
    grad_diff = {}
    check = {k: names.make_model("transformer", 0, context) for k in ("duograd", "duograd_compiled")}
    ref_twin = torch_twin(names.make_model("transformer", 0, context))
    ref_opt, _ = names.make_optimizer("transformer", ref_twin, 1000, lib="torch")
    opts = {k: names.make_optimizer("transformer", m, 1000)[0] for k, m in check.items()}
    fns = {"duograd": lambda a, b: names.train_step("transformer", check["duograd"], opts["duograd"], a, b)}
    fns["duograd_compiled"] = dg.compile(
        lambda a, b: names.train_step("transformer", check["duograd_compiled"], opts["duograd_compiled"], a, b))
    for _ in range(2):
        ref_opt.zero_grad()
        torch.nn.functional.cross_entropy(ref_twin(tx).reshape(-1, names.VOCAB), ty,
                                          ignore_index=names.IGNORE).backward()
        tg = {n: p.grad.numpy().copy() for n, p in ref_twin.named_parameters()}
        ref_opt.step()
        for k, fn in fns.items():
            fn(x, y)
            gp = dict(check[k].named_parameters())  # torch's names and layouts
            grad_diff[k] = max(float(np.abs(gp[n].grad.detach().numpy() - g).max())
                               for n, g in tg.items())
    return {"steps": engines, "grad_diff": grad_diff,
            "n_params": int(sum(p.numel() for p in models["duograd"].parameters()))}


def bench_surname_tf(ctx: SimpleNamespace) -> dict[str, Any]:
    """Issue 30's surname measure: the names stage's transformer (2 pre-LN blocks, width 64,
    4 heads, context 16, exact GELU) training step (forward, cross-entropy, backward,
    AdamW), duograd through dg.compile against torch float64 on batch 32."""
    batch, context = ctx.sizes.surname_tf
    model = f"surname transformer, batch {batch}, context {context}"
    if ctx.torch is None:
        return {"unit": "ms per step", "model": model, "target": TARGETS["surname_tf"],
                "met": None, **{k: None for k in ENGINES}}
    w = surname_steps(ctx.torch, batch, context)
    return _seq_row("surname_tf", ctx, w["steps"], w["grad_diff"],
                    model + f", {w['n_params']:,} parameters",
                    "forward, cross-entropy, backward, AdamW (experiments/names.py train_step)")


def _peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes traced by ``tracemalloc`` during one call of ``fn``, above what was
    allocated when it started (after a warm-up call, so caches are already built)."""
    fn()
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        if not was_tracing:
            tracemalloc.stop()


def bench_memory(ctx: SimpleNamespace) -> dict[str, Any]:
    setup = mlp_setup("spiral", ctx)
    dg_peak = _peak_bytes(setup.engines["duograd"])
    np_peak = _peak_bytes(setup.engines["numpy"])
    ratio = _sig(dg_peak / np_peak)
    return {"unit": "MiB peak above the step's start (tracemalloc)",
            "duograd": _sig(dg_peak / 2**20), "numpy": _sig(np_peak / 2**20),
            "ratio": ratio, "workload": "spiral training step", "target": TARGETS["memory"],
            "met": ratio <= 1.5}


def bench_hvp(ctx: SimpleNamespace) -> dict[str, Any]:
    """H·v of the spiral loss w.r.t. every parameter, four ways, checked against each
    other and against central differences of the hand-written gradient."""
    setup = mlp_setup("spiral", ctx)
    x, y, w0 = setup.x, setup.y, setup.w0
    rng = np.random.default_rng(2)
    v0 = [rng.normal(size=w.shape) for w in w0]
    xt = dg.tensor(x)
    # Plain tensors for the transform (as torch.func gets); leaves that require grad
    # for the explicit double backward.
    plain = tuple(dg.tensor(w) for w in w0)
    ps = tuple(dg.tensor(w, requires_grad=True) for w in w0)
    vs = tuple(dg.tensor(v) for v in v0)

    def loss(*p: dg.Tensor) -> dg.Tensor:
        return F.cross_entropy(_dg_logits(p, xt), y)

    def fwd_over_rev() -> list[np.ndarray]:
        return [h.numpy() for h in dg.func.hvp(loss, plain, vs)[1]]

    def rev_over_rev() -> list[np.ndarray]:
        gs = dg.grad(loss(*ps), ps, create_graph=True)
        dot = (gs[0] * vs[0]).sum()
        for g, v in zip(gs[1:], vs[1:]):
            dot = dot + (g * v).sum()
        return [h.numpy() for h in dg.grad(dot, ps)]

    def hvp_of(p: tuple, v: tuple) -> tuple:
        return dg.func.hvp(loss, p, v)[1]

    fast_hvp = dg.compile(hvp_of)
    engines: dict[str, Callable[[], list[np.ndarray]]] = {
        "duograd_fwd_over_rev": fwd_over_rev, "duograd_rev_over_rev": rev_over_rev,
        "duograd_compiled": lambda: [h.numpy() for h in fast_hvp(plain, vs)],
        "numpy": lambda: hw.mlp_hvp(w0, x, y, v0)}
    torch = ctx.torch
    if torch is not None:
        tps = tuple(torch.tensor(w, dtype=torch.float64) for w in w0)
        tvs = tuple(torch.tensor(v, dtype=torch.float64) for v in v0)
        tx, ty = torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y.astype(np.int64))

        def tloss(*p: Any) -> Any:
            return torch.nn.functional.cross_entropy(_torch_logits(torch, p, tx), ty)

        tgrad = torch.func.grad(tloss, argnums=tuple(range(len(tps))))
        engines["torch_func"] = lambda: [h.numpy() for h in torch.func.jvp(tgrad, tps, tvs)[1]]
        engines["torch_functional"] = lambda: [
            h.numpy() for h in torch.autograd.functional.hvp(tloss, tps, tvs)[1]]

    # Independent check: central differences of the hand-written gradient along v.
    eps = 1e-6
    gp = hw.mlp_loss_and_grads([w + eps * v for w, v in zip(w0, v0)], x, y)[1]
    gm = hw.mlp_loss_and_grads([w - eps * v for w, v in zip(w0, v0)], x, y)[1]
    fd = [(a - b) / (2 * eps) for a, b in zip(gp, gm)]
    ref = fwd_over_rev()
    norm = math.sqrt(sum(float(np.sum(h * h)) for h in ref))
    checks = {"fd_rel_err": math.sqrt(sum(float(np.sum((h - f) ** 2)) for h, f in zip(ref, fd))) / norm}
    for name, fn in engines.items():
        if name != "duograd_fwd_over_rev":
            checks[f"{name}_max_abs_diff"] = _max_abs_diff(fn(), ref)

    times = _interleaved(engines, ctx.repeats("hvp"), ctx.inner("hvp"))
    ms = {k: _sig(t["median"] * 1e3) for k, t in times.items()}
    torch_best = min((ms[k] for k in ("torch_func", "torch_functional") if k in ms), default=None)
    res: dict[str, Any] = {"unit": "ms per H.v", "n_params": int(sum(w.size for w in w0)), **ms,
                           "spread": {k: [_sig(t["min"] * 1e3), _sig(t["max"] * 1e3)]
                                      for k, t in times.items()},
                           "quartiles": {k: [_sig(t["p25"] * 1e3), _sig(t["p75"] * 1e3)]
                                         for k, t in times.items()},
                           "checks": _sig_all(checks), "target": TARGETS["hvp"]}
    res["ratio_to_torch"] = _sig(_ratio(ms["duograd_fwd_over_rev"], torch_best))
    res["ratio_rev_over_rev_to_torch"] = _sig(_ratio(ms["duograd_rev_over_rev"], torch_best))
    res["met"] = None if torch_best is None else res["ratio_to_torch"] <= 2.0
    res["ratio_to_numpy"] = {k: _sig(_ratio(ms[k], ms["numpy"])) for k in ms if k != "numpy"}
    res["compiled"] = _compiled_summary("hvp", ms)
    res["compiled"].update(_first_call(lambda: (lambda f: lambda: f(plain, vs))(dg.compile(hvp_of)),
                                       times["duograd_fwd_over_rev"]["median"], ctx.sizes.first_calls))
    return res


def bench_replay_overhead(ctx: SimpleNamespace) -> dict[str, Any]:
    """What dg.compile's replay loop adds per kernel: a program of ``n`` negations of a
    one-element array, replayed, against the same ``n`` ufunc calls made directly in a
    Python loop (and against the eager engine)."""
    n = ctx.sizes.per_op_ops * 10
    x0 = np.array([0.5])

    def chain(x: dg.Tensor) -> dg.Tensor:
        for _ in range(n):
            x = -x
        return x

    fast, xt = dg.compile(chain), dg.tensor(x0)
    fast(xt)
    neg = np.negative

    def direct() -> np.ndarray:
        a = x0
        for _ in range(n):
            a = neg(a)
        return a

    engines = {"replay": lambda: fast(xt), "eager": lambda: chain(xt), "numpy": direct}
    times = _interleaved(engines, ctx.repeats("per_op"), ctx.inner("per_op"))
    us = {k: t["median"] * 1e6 / n for k, t in times.items()}
    return {"unit": "us per kernel", "kernels": n, "replay": _sig(us["replay"]),
            "eager": _sig(us["eager"]), "numpy": _sig(us["numpy"]),
            "overhead_per_kernel_us": _sig(us["replay"] - us["numpy"]),
            "spread": {k: [_sig(t["min"] * 1e6 / n), _sig(t["max"] * 1e6 / n)] for k, t in times.items()}}


def _function_name(key: tuple[str, int, str]) -> str:
    filename, line, func = key
    if filename == "~":  # a built-in
        return func
    path = Path(filename)
    parts = path.parts
    if "site-packages" in parts:  # numpy/..., torch/...
        shown = "/".join(parts[len(parts) - parts[::-1].index("site-packages"):])
    else:
        try:
            shown = path.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            shown = path.name
    return f"{shown}:{line}({func})"


def profile_spiral(ctx: SimpleNamespace, top: int = 12) -> dict[str, Any]:
    """Where the time of duograd's spiral step goes: cProfile's top functions by their
    own time (``tottime``), per step."""
    step = mlp_setup("spiral", ctx).engines["duograd"]
    step()
    n = ctx.sizes.profile_steps
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        step()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    rows = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    total = sum(v[2] for v in stats.values())
    return {"workload": "duograd spiral training step", "steps": n,
            "columns": ["function", "calls per step", "tottime ms per step"],
            "total_ms_per_step": _sig(total * 1e3 / n),
            "top": [[_function_name(key), round(nc / n), _sig(tt * 1e3 / n, 3)]
                    for key, (cc, nc, tt, ct, callers) in rows]}


# ====================================================================== threads, machine, output

@contextlib.contextmanager
def single_threaded(torch: ModuleType | None) -> Iterator[dict[str, Any]]:
    """Hold BLAS/OpenMP (and PyTorch) to one thread; yield what was verified.

    >>> with single_threaded(None) as info:
    ...     info["env"]["OPENBLAS_NUM_THREADS"] is not None or info["verified"] is not None
    True
    """
    info: dict[str, Any] = {"env": {v: os.environ.get(v) for v in THREAD_VARS}}
    tpc = _optional("threadpoolctl")
    prev_torch = torch.get_num_threads() if torch is not None else None
    with contextlib.ExitStack() as stack:
        if tpc is not None:
            stack.enter_context(tpc.threadpool_limits(limits=1))
        if torch is not None:
            torch.set_num_threads(1)
            info["torch_threads"] = torch.get_num_threads()
        try:
            if tpc is not None:
                pools = tpc.threadpool_info()
                info["threadpools"] = [{k: p.get(k) for k in ("user_api", "internal_api", "num_threads",
                                                              "version")} for p in pools]
                info["verified"] = all(p["num_threads"] == 1 for p in pools) and (
                    torch is None or info["torch_threads"] == 1)
                if not info["verified"]:
                    raise RuntimeError(f"could not limit every thread pool to one thread: {pools}")
            else:
                info["verified"] = None  # threadpoolctl not installed: environment variables only
            yield info
        finally:
            if torch is not None:
                torch.set_num_threads(prev_torch)


def machine_info(torch: ModuleType | None, hips: ModuleType | None) -> dict[str, Any]:
    """Versions and the CPU: what a reader needs to put the numbers in context."""
    def version(mod: ModuleType | None) -> str | None:
        return None if mod is None else getattr(mod, "__version__", "unknown")
    if hips is not None and version(hips) == "unknown":
        try:
            from importlib.metadata import version as dist_version
            hips_version = dist_version("autograd")
        except Exception:  # pragma: no cover - metadata missing
            hips_version = "unknown"
    else:
        hips_version = version(hips)
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "numpy": np.__version__, "torch": version(torch),
            "autograd": hips_version, "duograd": dg.__version__,
            "date": datetime.datetime.now().isoformat(timespec="seconds")}


def write_section(path: str | os.PathLike, section: str, value: Any) -> None:
    """Replace one top-level ``section`` of the JSON file at ``path``, keeping the others
    (read, modify, write to a temporary file, rename over the original).

    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.json")
    >>> write_section(p, "a", 1); write_section(p, "b", {"y": 2, "x": 1})
    >>> json.load(open(p))
    {'a': 1, 'b': {'x': 1, 'y': 2}}
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {}
    if path.exists() and path.stat().st_size:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)  # a corrupt file raises rather than losing the other sections
    data[section] = value
    text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _cell(x: Any, fmt: str = "{:.3g}") -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    return fmt.format(x) if isinstance(x, (int, float)) else str(x)


def format_table(results: dict[str, Any]) -> str:
    """The results as plain-text tables: times per engine, ratios, targets.

    >>> print(format_table(run(smoke=True, progress=False, out=None)))  # doctest: +SKIP
    """
    lines = []
    head = (f"{'workload':<30}{'duograd':>10}{'compiled':>10}{'torch':>10}{'torch f32':>10}"
            f"{'autograd':>10}{'numpy':>10}"
            f"{'dg/numpy':>10}{'dg/torch':>10}   {'target':<26}{'met':>4}")
    lines += [head, "-" * len(head)]

    def row(label: str, r: dict[str, Any]) -> None:
        target = r["target"] if isinstance(r["target"], str) else " & ".join(r["target"])
        lines.append(f"{label:<30}" + "".join(f"{_cell(r.get(k)):>10}" for k in ENGINES)
                     + f"{_cell(_ratio(r['duograd'], r.get('numpy'))):>10}"
                     + f"{_cell(_ratio(r['duograd'], r.get('torch'))):>10}"
                     + f"   {target:<26}{_cell(r['met']):>4}")

    if "per_op" in results:
        row(f"per-op, {results['per_op']['ops']} ops (us/op)", results["per_op"])
    for kind, label in (("spiral", "spiral step (ms)"), ("digits", "digits step (ms)"),
                        ("blas", "BLAS-bound step (ms)")):
        if f"train_{kind}" in results:
            row(label, results[f"train_{kind}"])
    if "chain" in results:
        row(f"chain of {results['chain']['ops']:,} (s)", results["chain"])
    for key, label in (("conv_digits", "conv layer, digits size (ms)"),
                       ("conv_mid", "conv layer, mid-size (ms)"), ("train_cnn", "digits CNN step (ms)"),
                       ("lstm", "LSTM fwd+bwd (ms)"), ("encoder_layer", "encoder layer fwd+bwd (ms)"),
                       ("surname_tf", "surname transformer step (ms)")):
        if key in results:
            row(label, results[key])
    if "memory" not in results:  # a run of some workloads only (--only)
        return "\n".join(lines)
    m = results["memory"]
    row("spiral step peak (MiB)", {**m, "torch": None, "autograd": None})
    lines.append("")
    h = results["hvp"]
    lines.append(f"Hessian-vector product, spiral MLP ({h['n_params']:,} parameters), ms:")
    for k, label in (("duograd_fwd_over_rev", "duograd hvp (fwd-over-rev)"),
                     ("duograd_rev_over_rev", "duograd grad(grad) (rev-over-rev)"),
                     ("torch_func", "torch.func jvp(grad)"),
                     ("torch_functional", "torch.autograd.functional.hvp")):
        lines.append(f"  {label:<38}{_cell(h.get(k)):>10}")
    lines.append(f"  ratio to torch's best: {_cell(h['ratio_to_torch'])} (fwd-over-rev), "
                 f"{_cell(h['ratio_rev_over_rev_to_torch'])} (rev-over-rev); "
                 f"target {h['target']}: {_cell(h['met'])}")
    lines.append(f"  checks: {', '.join(f'{k} {v:.2e}' for k, v in h['checks'].items())}")
    lines.append("dg.compile, as multiples of hand-written NumPy (target, met; first call / eager step):")
    for key in ("per_op", "train_spiral", "train_digits", "hvp", "chain"):
        c = results[key].get("compiled", {})
        lines.append(f"  {key:<14}{_cell(c.get('ratio_to_numpy')):>8}  ({c.get('target')}, "
                     f"{_cell(c.get('met'))}; first call {_cell(c.get('first_call_ratio_to_eager'))}x)")
    ro = results.get("replay_overhead", {})
    lines.append(f"  replay loop: {_cell(ro.get('overhead_per_kernel_us'))} us per kernel over a direct "
                 f"NumPy call ({_cell(ro.get('replay'))} vs {_cell(ro.get('numpy'))} us)")
    lines.append("")
    g = {k: results[f"train_{k}"]["grad_max_abs_diff"]["duograd"] for k in ("spiral", "digits", "blas")}
    lines.append("hand-written vs duograd gradients, max abs diff: "
                 + ", ".join(f"{k} {v:.1e}" for k, v in g.items()) + f" (all < {GRAD_TOL:g})")
    p = results["profile"]
    lines.append("")
    lines.append(f"profile of the duograd spiral step ({p['total_ms_per_step']} ms/step under cProfile), "
                 "top functions by own time:")
    for fn, calls, ms in p["top"]:
        lines.append(f"  {ms:>8.3f} ms {calls:>7} calls  {fn}")
    mi = results["machine"]
    lines.append("")
    lines.append(f"python {mi['python']}, numpy {mi['numpy']}, torch {mi['torch'] or 'n/a'}, "
                 f"autograd {mi['autograd'] or 'n/a'}, {mi['cpu_count']} CPUs, one BLAS thread "
                 f"(verified: {results['threads']['verified']})")
    return "\n".join(lines)


# ====================================================================== the run

def make_context(sizes: Sizes, repeats: int | None = None, torch: ModuleType | None | str = "import",
                 hips: ModuleType | None | str = "import") -> SimpleNamespace:
    """What every ``bench_*`` function reads: the sizes, the repeat counts and the
    optional engines (imported when present unless passed in; None means absent).

    >>> ctx = make_context(SMOKE, repeats=1, torch=None, hips=None)
    >>> ctx.repeats("spiral"), ctx.torch is None
    (1, True)
    """
    return SimpleNamespace(
        sizes=sizes,
        torch=_optional("torch") if torch == "import" else torch,
        hips=_optional("autograd") if hips == "import" else hips,
        repeats=lambda k: repeats if repeats is not None else sizes.repeats[k],
        inner=lambda k: sizes.inner[k])


def run(quick: bool = False, repeats: int | None = None, progress: bool = True,
        out: str | os.PathLike | None = DEFAULT_OUT, smoke: bool = False,
        only: list[str] | None = None) -> dict[str, Any]:
    """Measure every workload, print the table, write the ``benchmarks`` section of
    ``out`` (None: write nothing) and return the results.

    ``quick``: fewer repeats and a 20,000-op long chain; ``repeats`` overrides every
    workload's repeat count; ``smoke``: tiny sizes that only exercise the code (tests);
    ``only``: the keys of the workloads to run (the others are not run), whose results
    then replace just those keys of the file's ``benchmarks`` section.

    >>> res = run(smoke=True, progress=False, out=None)  # doctest: +SKIP
    >>> res["train_spiral"]["ratio_to_numpy"]["duograd"]  # doctest: +SKIP
    1.2
    """
    sizes = SMOKE if smoke else QUICK if quick else FULL
    ctx = make_context(sizes, repeats)
    torch, hips = ctx.torch, ctx.hips
    workloads: list[tuple[str, Callable[[SimpleNamespace], dict[str, Any]]]] = [
        ("per_op", bench_per_op),
        ("train_spiral", lambda c: bench_train("spiral", c)),
        ("train_digits", lambda c: bench_train("digits", c)),
        ("train_blas", lambda c: bench_train("blas", c)),
        ("chain", bench_long_chain),
        ("memory", bench_memory),
        ("hvp", bench_hvp),
        ("replay_overhead", bench_replay_overhead),
        ("profile", profile_spiral),
        ("conv_digits", lambda c: bench_conv("conv_digits", c)),
        ("conv_mid", lambda c: bench_conv("conv_mid", c)),
        ("train_cnn", bench_cnn),
        ("lstm", bench_lstm),
        ("encoder_layer", bench_encoder_layer),
        ("surname_tf", bench_surname_tf),
    ]
    if only is not None:
        unknown = set(only) - {k for k, _ in workloads}
        if unknown:
            raise ValueError(f"run: no workload named {sorted(unknown)}; the workloads are "
                             f"{[k for k, _ in workloads]}")
        workloads = [(k, b) for k, b in workloads if k in only]
    tqdm = getattr(_optional("tqdm"), "tqdm", None)
    results: dict[str, Any] = {}
    t0 = time.perf_counter()
    with single_threaded(torch) as threads:
        bar = tqdm(workloads, desc="benchmarks", unit="workload", disable=not progress,
                   leave=False) if tqdm is not None else workloads
        for key, bench in bar:
            if tqdm is not None:
                bar.set_postfix_str(key)
            elif progress:
                print(f"benchmarks: {key} ...", file=sys.stderr, flush=True)
            results[key] = bench(ctx)
    results["threads"] = threads
    results["machine"] = machine_info(torch, hips)
    results["config"] = {"mode": "smoke" if smoke else "quick" if quick else "full",
                         "repeats": {**{k: ctx.repeats(k) for k in sizes.repeats},
                                     **sizes.conv_repeats, **sizes.seq_repeats},
                         "inner": dict(sizes.inner), "statistic": "median over repeats",
                         "range": "p25-p75 of the repeats (key 'quartiles')",
                         "interleaved": "round-robin across engines within each repeat",
                         "seconds": _sig(time.perf_counter() - t0, 3)}
    print(format_table(results))
    if out is not None:
        if only is not None:  # keep the other workloads' results of an earlier full run
            path = Path(out)
            old = json.loads(path.read_text(encoding="utf-8")).get("benchmarks", {}) \
                if path.exists() and path.stat().st_size else {}
            results = {**old, **{k: results[k] for k in only}}
        write_section(out, "benchmarks", results)
    return results


def main(argv: list[str] | None = None) -> int:
    """The command line: ``python benchmarks/run.py [--quick] [--out PATH]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter long chain (~30 s)")
    parser.add_argument("--repeats", type=int, default=None, help="timing samples per engine")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="JSON file whose 'benchmarks' section is written")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--only", default=None,
                        help="comma-separated workload keys to run (e.g. lstm,encoder_layer,surname_tf); "
                             "only those keys of the file's section are replaced")
    args = parser.parse_args(argv)
    only = [k.strip() for k in args.only.split(",") if k.strip()] if args.only else None
    run(quick=args.quick, repeats=args.repeats, progress=not args.no_progress, out=args.out,
        only=only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
