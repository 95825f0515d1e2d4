"""The function transforms of issue 31 against their baselines and torch.func (float64,
one thread for both: ``torch.set_num_threads(1)``, NumPy's BLAS limited through
threadpoolctl when it is installed).

- ``per_sample``: per-sample gradients of the digits MLP (64 -> 64 -> 32 -> 10, relu, the
  walkthrough's sizes; batch 64, cross-entropy per example) by ``vmap(grad(loss),
  in_dims=(None, 0, 0))``, against one batched backward of the same batch (the mean loss)
  and ``torch.func.vmap(torch.func.grad(...))``. Targets: <= 3x the batched backward,
  <= torch.func.
- ``jacrev``: the Jacobian of a 64 -> 64 tanh MLP with respect to its input by
  ``func.jacrev`` (one batched backward sweep through vmap), against the row loop it
  replaced (one ``vjp`` per output row, the baseline written here) and
  ``torch.func.jacrev``. Targets: <= 1.0x torch.func, >= 5x faster than the loop.
- ``hessian``: the Hessian of the walkthrough's spiral loss (2 -> 64 -> 64 -> 2, relu,
  350 points) over its 4,482 parameters by vectorised forward-over-reverse: ``vmap`` of
  the JVP of the gradient over the unit tangents (``jacfwd(jacrev)``, in chunks of
  ``HESSIAN_CHUNK`` tangents so that the batched intermediates fit in memory: 4,482 x 350 x
  64 doubles at once would be 800 MB each), the same on torch.func; and the literal
  ``func.hessian`` against ``torch.func.hessian`` on the first ``HESSIAN_SMALL_BATCH``
  points (unchunked).

Each row has its value agreement with torch (max abs difference). ``measure()`` runs
everything once and returns the medians over ``repeats``::

    python benchmarks/func_bench.py [repeats]
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

import duograd as dg
from duograd import func
from duograd.nn import functional as F

DIGITS = (64, (64, 32, 10), 64)   # nin, layer sizes, batch (benchmarks/run.py's Sizes.digits)
SPIRAL = (2, (64, 64, 2), 350)    # benchmarks/run.py's Sizes.spiral: 4,482 parameters
JAC_WIDTH = 64
HESSIAN_CHUNK = 128
HESSIAN_SMALL_BATCH = 16
# the walkthrough's smoke run (``measure(smoke=True)``): every row at tiny sizes, numbers meaningless
SMOKE = {"DIGITS": (64, (8, 10), 8), "SPIRAL": (2, (4, 3, 2), 12), "JAC_WIDTH": 8,
         "HESSIAN_CHUNK": 7, "HESSIAN_SMALL_BATCH": 5}
TARGETS = {"per_sample": "vmap(grad) <= 3x batched backward and <= torch.func",
           "jacrev": "<= 1.0x torch.func.jacrev and >= 5x faster than the row loop",
           "hessian": "forward-over-reverse, against torch.func (no ratio target)"}


def _one_blas_thread() -> Any:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _medians(fns: dict[str, Callable[[], Any]], repeats: int,
             first: dict[str, Any] | None = None) -> dict[str, float]:
    """Median seconds of each function, taken in turn in every round (a change of the
    machine's load falls on all of them alike), after one warm-up call each (whose results
    go to ``first``)."""
    for k, f in fns.items():
        out = f()
        if first is not None:
            first[k] = out
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _diff(a: Any, b: Any) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def _mlp_params(nin: int, sizes: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """Weights (out, in) and biases, as nn.Linear's default init draws them."""
    rng = np.random.default_rng(seed)
    ps, fan = [], nin
    for n in sizes:
        bound = 1 / np.sqrt(fan)
        ps += [rng.uniform(-bound, bound, (n, fan)), rng.uniform(-bound, bound, n)]
        fan = n
    return ps


def _logits(lib: Any, ps: Any, x: Any) -> Any:
    n = len(ps) // 2
    for i in range(n):
        x = x @ ps[2 * i].T + ps[2 * i + 1]
        if i < n - 1:
            x = lib.relu(x)
    return x


def _digits_data(batch: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn import datasets
        d = datasets.load_digits()
        return d.data[:batch] / 16.0, d.target[:batch].astype(np.int64)
    except ImportError:
        rng = np.random.default_rng(1)
        return rng.normal(size=(batch, 64)), rng.integers(0, 10, batch)


def _spiral_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    from benchmarks.run import spiral_data
    return spiral_data(n)


# ---------------------------------------------------------------- (a) per-sample gradients

def per_sample(torch: Any, repeats: int) -> dict[str, Any]:
    nin, sizes, batch = DIGITS
    p0 = _mlp_params(nin, sizes, 0)
    x, y = _digits_data(batch)
    ps, X, Y = tuple(dg.tensor(p) for p in p0), dg.tensor(x), dg.tensor(y)

    def loss_one(ps, xi, yi):
        return F.cross_entropy(_logits(dg, ps, xi[None]), yi[None])
    per_sample_fn = func.vmap(func.grad(loss_one), in_dims=(None, 0, 0))
    leaves = [dg.tensor(p, requires_grad=True) for p in p0]

    def batched_backward():
        loss = F.cross_entropy(_logits(dg, leaves, X), Y)
        return dg.autograd.grad(loss, leaves)

    tps, tX, tY = tuple(torch.tensor(p) for p in p0), torch.tensor(x), torch.tensor(y)

    def tloss_one(ps, xi, yi):
        return torch.nn.functional.cross_entropy(_logits(torch, ps, xi[None]), yi[None])
    t_per_sample = torch.func.vmap(torch.func.grad(tloss_one), in_dims=(None, 0, 0))
    ours, theirs = per_sample_fn(ps, X, Y), t_per_sample(tps, tX, tY)
    diff = max(_diff(a.numpy(), b.numpy()) for a, b in zip(ours, theirs))
    # the loop of single-example backwards, as the truth of the batched one
    i = min(5, batch - 1)
    one = func.grad(loss_one)(ps, X[i], Y[i])
    loop_diff = max(_diff(a.numpy()[i], b.numpy()) for a, b in zip(ours, one))
    t = _medians({"vmap_grad": lambda: per_sample_fn(ps, X, Y), "batched_backward": batched_backward,
                  "torch_func": lambda: t_per_sample(tps, tX, tY)}, repeats)
    return {"model": f"digits MLP {nin} -> {' -> '.join(map(str, sizes))}, batch {batch}",
            "vmap_grad_s": t["vmap_grad"], "batched_backward_s": t["batched_backward"],
            "torch_func_s": t["torch_func"],
            "ratio_vs_batched_backward": t["vmap_grad"] / t["batched_backward"],
            "ratio_vs_torch_func": t["vmap_grad"] / t["torch_func"],
            "max_abs_diff_vs_torch": diff, "max_abs_diff_vs_one_example": loop_diff,
            "target": TARGETS["per_sample"],
            "met": t["vmap_grad"] <= 3 * t["batched_backward"] and t["vmap_grad"] <= t["torch_func"]}


# ---------------------------------------------------------------- (b) jacrev

def jacrev(torch: Any, repeats: int) -> dict[str, Any]:
    n = JAC_WIDTH
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((n, n)) / 8, rng.standard_normal((n, n)) / 8
    b1, b2, x0 = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    W1, W2, B1, B2, X = (dg.tensor(a) for a in (w1, w2, b1, b2, x0))

    def mlp(x):
        return (W2 @ (W1 @ x + B1).tanh() + B2).tanh()

    def row_loop():  # the baseline: what jacrev did before vmap, one vjp per output row
        out, vjp_fn = func.vjp(mlp, X)
        eye = np.eye(out.numel())
        return dg.stack([vjp_fn(dg.tensor(eye[i]))[0] for i in range(out.numel())])

    jac = func.jacrev(mlp)
    tW1, tW2, tB1, tB2, tX = (torch.tensor(a) for a in (w1, w2, b1, b2, x0))

    def tmlp(x):
        return torch.tanh(tW2 @ torch.tanh(tW1 @ x + tB1) + tB2)
    tjac = torch.func.jacrev(tmlp)
    ours, theirs = jac(X).numpy(), tjac(tX).numpy()
    t = _medians({"jacrev": lambda: jac(X), "row_loop": row_loop, "torch_func": lambda: tjac(tX)},
                 repeats)
    return {"model": f"tanh MLP R^{n} -> R^{n} (two {n}x{n} layers)",
            "jacrev_s": t["jacrev"], "row_loop_s": t["row_loop"], "torch_func_s": t["torch_func"],
            "ratio_vs_torch_func": t["jacrev"] / t["torch_func"],
            "speedup_vs_row_loop": t["row_loop"] / t["jacrev"],
            "max_abs_diff_vs_torch": _diff(ours, theirs),
            "max_abs_diff_vs_row_loop": _diff(ours, row_loop().numpy()),
            "target": TARGETS["jacrev"],
            "met": t["jacrev"] <= t["torch_func"] and t["row_loop"] >= 5 * t["jacrev"]}


# ---------------------------------------------------------------- (c) hessian

def _unpack(lib: Any, flat: Any, shapes: list[tuple[int, ...]]) -> list:
    out, at = [], 0
    for s in shapes:
        k = int(np.prod(s))
        out.append(flat[at:at + k].reshape(s))
        at += k
    return out


def hessian(torch: Any, repeats: int) -> dict[str, Any]:
    nin, sizes, batch = SPIRAL
    p0 = _mlp_params(nin, sizes, 0)
    shapes = [p.shape for p in p0]
    flat0 = np.concatenate([p.ravel() for p in p0])
    m = flat0.size
    x, y = _spiral_data(batch)
    X, Y, P = dg.tensor(x), dg.tensor(y.astype(np.int64)), dg.tensor(flat0)
    tX, tY, tP = torch.tensor(x), torch.tensor(y.astype(np.int64)), torch.tensor(flat0)

    def loss(flat, xs=X, ys=Y):
        return F.cross_entropy(_logits(dg, _unpack(dg, flat, shapes), xs), ys)

    def tloss(flat, xs=tX, ys=tY):
        return torch.nn.functional.cross_entropy(_logits(torch, _unpack(torch, flat, shapes), xs), ys)
    eye, teye = dg.eye(m), torch.eye(m, dtype=torch.float64)

    def ours_full():  # jacfwd(jacrev(loss)) with the tangents in chunks
        g = func.grad(loss)
        return func.vmap(lambda t: func.jvp(g, (P,), (t,))[1], chunk_size=HESSIAN_CHUNK)(eye)

    def theirs_full():
        g = torch.func.grad(tloss)
        return torch.func.vmap(lambda t: torch.func.jvp(g, (tP,), (t,))[1],
                               chunk_size=HESSIAN_CHUNK)(teye)
    k = HESSIAN_SMALL_BATCH
    xs, ys, txs, tys = X[:k], Y[:k], tX[:k], tY[:k]
    ours_small = lambda: func.hessian(lambda f: loss(f, xs, ys))(P)  # noqa: E731
    theirs_small = lambda: torch.func.hessian(lambda f: tloss(f, txs, tys))(tP)  # noqa: E731
    reps = max(1, min(repeats, 2))  # seconds per call: fewer rounds
    got: dict[str, Any] = {}
    t = _medians({"ours_full": ours_full, "torch_full": theirs_full, "ours_small": ours_small,
                  "torch_small": theirs_small}, reps, got)
    h, th = got["ours_full"].numpy(), got["torch_full"].numpy()
    hs, ths = got["ours_small"].numpy(), got["torch_small"].numpy()
    return {"model": f"spiral MLP {nin} -> {' -> '.join(map(str, sizes))}, {m:,} parameters",
            "hessian_shape": list(h.shape), "points": batch, "chunk": HESSIAN_CHUNK,
            "repeats": reps,
            "forward_over_reverse_s": t["ours_full"], "torch_func_s": t["torch_full"],
            "ratio_vs_torch_func": t["ours_full"] / t["torch_full"],
            "max_abs_diff_vs_torch": _diff(h, th),
            "symmetry_max_abs": _diff(h, h.T),
            "small_batch_points": k, "func_hessian_s": t["ours_small"],
            "torch_func_hessian_s": t["torch_small"],
            "small_ratio_vs_torch_func": t["ours_small"] / t["torch_small"],
            "small_max_abs_diff_vs_torch": _diff(hs, ths),
            "target": TARGETS["hessian"]}


def measure(repeats: int = 9, smoke: bool = False) -> dict[str, Any]:
    """The three measures (see the module docstring), each with its medians over
    ``repeats`` (the Hessian's over at most 2: about two minutes in all), value agreement with torch.func and whether
    its target is met. Needs torch.

    >>> sorted(measure.__annotations__)
    ['repeats', 'return', 'smoke']
    """
    import torch

    if smoke:
        saved = {k: globals()[k] for k in SMOKE}
        globals().update(SMOKE)
        try:
            return measure(1)
        finally:
            globals().update(saved)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _one_blas_thread():
            return {"config": {"dtype": "float64", "threads": 1, "repeats": repeats},
                    "per_sample": per_sample(torch, repeats), "jacrev": jacrev(torch, repeats),
                    "hessian": hessian(torch, repeats)}
    finally:
        torch.set_num_threads(before)


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    res = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
    for key, val in res.items():
        print(key)
        for k, v in val.items():
            print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
