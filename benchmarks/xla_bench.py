"""``dg.compile(fn, backend="xla")`` against ``jax.jit`` of the same step written by hand.

    python benchmarks/xla_bench.py            # prints the rows as JSON
    python benchmarks/xla_bench.py --quick

``measure()`` times, in one run, each workload two ways, the two taking turns in every
repeat (``run._interleaved``; the median is reported):

- ``xla``: duograd's own step (the public API: model, ``F.cross_entropy``, ``backward()``,
  ``opt.step()``) through ``dg.compile(step, backend="xla")``: duograd records it and XLA
  runs the recorded forward, backward and update. Called with NumPy arrays; parameters,
  gradients and optimizer state are written back into the Tensors on every call.
- ``jax_jit``: the same arithmetic written by hand in ``jax.numpy`` (forward, the
  derivatives worked out by hand as in ``benchmarks/handwritten.py``, the update), under
  ``jax.jit``, as a JAX user writes it: parameters and state stay JAX arrays between
  calls, the batch is handed over as NumPy arrays.

The workloads are ``benchmarks/run.py``'s (``Sizes``, its data, ``nn.MLP(..., rng=0)``'s
weights, ``handwritten.CHAIN_OPS``): the spiral and digits training steps (Adam, lr 1e-3),
the per-op chain (100 small elementwise ops and their backward), a long chain (shorter
than run.py's 100,000 ops: XLA compiles a program of that length for minutes, by hand or
not), and the spiral MLP's Hessian-vector product (duograd's ``func.hvp``, forward over
reverse; by hand, Pearlmutter's R-operator as in ``handwritten.mlp_hvp``). Beside each:
the first call of a fresh compile (duograd: the recording call plus the call that compiles
with XLA and runs; JAX: tracing, compiling and running), and the largest relative
difference between the two engines' results, which must be rounding only.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import duograd as dg  # noqa: E402
from duograd import func, nn, optim  # noqa: E402
from duograd.nn import functional as F  # noqa: E402
from benchmarks import handwritten as hw  # noqa: E402
from benchmarks import run as bench  # noqa: E402

TARGET = 1.05  # xla <= 1.05x jax_jit (issue 32)
LR = 1e-3


def _rel(a: Any, b: Any) -> float:
    """Largest |a - b| over the largest |b|, across a list of arrays.

    >>> _rel([np.array([1.0, 2.0])], [np.array([1.0, 2.0 + 2e-16])])
    0.0
    """
    a = [np.asarray(x, dtype=np.float64) for x in (a if isinstance(a, (list, tuple)) else [a])]
    b = [np.asarray(x, dtype=np.float64) for x in (b if isinstance(b, (list, tuple)) else [b])]
    scale = max(float(np.max(np.abs(y))) for y in b) or 1.0
    return float(f"{max(float(np.max(np.abs(x - y))) for x, y in zip(a, b)) / scale:.3g}")


# ---------------------------------------------------------------- the steps by hand, in jax.numpy

def _jax_mlp(jnp: Any, n_layers: int) -> tuple[Callable, Callable]:
    """(loss and gradients, one Adam step) of the relu MLP, by hand (handwritten.py's
    ``mlp_loss_and_grads`` and ``Adam``), as pure functions of JAX arrays."""
    def loss_and_grads(params: list, x: Any, y: Any) -> tuple[Any, list]:
        acts, a = [x], x
        for i in range(n_layers):
            z = a @ params[2 * i].T + params[2 * i + 1]
            if i < n_layers - 1:
                a = jnp.maximum(z, 0.0)
                acts.append(a)
            else:
                a = z
        n = x.shape[0]
        shift = a - a.max(axis=1, keepdims=True)
        e = jnp.exp(shift)
        s = e.sum(axis=1, keepdims=True)
        rows = jnp.arange(n)
        loss = (jnp.log(s[:, 0]).sum() - shift[rows, y].sum()) / n
        g = (e / s).at[rows, y].add(-1.0) / n
        grads: list = [None] * len(params)
        for i in range(n_layers - 1, -1, -1):
            a_in = acts[i]
            grads[2 * i] = g.T @ a_in
            grads[2 * i + 1] = g.sum(axis=0)
            if i > 0:
                g = (g @ params[2 * i]) * (a_in > 0)
        return loss, grads

    def step(params: list, m: list, v: list, t: Any, x: Any, y: Any) -> tuple:
        loss, grads = loss_and_grads(params, x, y)
        b1, b2, eps = 0.9, 0.999, 1e-8
        t = t + 1
        step_size = LR / (1 - b1 ** t)
        root_bc2 = jnp.sqrt(1 - b2 ** t)
        new_p, new_m, new_v = [], [], []
        for p, g, mi, vi in zip(params, grads, m, v):
            mi = mi + (1 - b1) * (g - mi)
            vi = vi * b2 + (1 - b2) * (g * g)
            new_p.append(p - step_size * (mi / (jnp.sqrt(vi) / root_bc2 + eps)))
            new_m.append(mi)
            new_v.append(vi)
        return new_p, new_m, new_v, t, loss
    return loss_and_grads, step


def _jax_chain(jnp: Any, n: int) -> Callable:
    """``handwritten.chain_grad``'s gradient in jax.numpy."""
    def grad(x: Any) -> Any:
        saved = []
        for k in range(n):
            op, c = hw.CHAIN_OPS[k % len(hw.CHAIN_OPS)]
            if op == "mul":
                x = x * c
            elif op == "tanh":
                x = jnp.tanh(x)
                saved.append(x)
            elif op == "add":
                x = x + c
            else:
                x = jnp.exp(x)
                saved.append(x)
        g = jnp.ones_like(x)
        for k in range(n - 1, -1, -1):
            op, c = hw.CHAIN_OPS[k % len(hw.CHAIN_OPS)]
            if op == "mul":
                g = g * c
            elif op == "tanh":
                out = saved.pop()
                g = g * (1.0 - out * out)
            elif op == "exp":
                g = g * saved.pop()
        return g
    return grad


def _jax_hvp(jnp: Any, n_layers: int) -> Callable:
    """``handwritten.mlp_hvp`` (the R-operator by hand) in jax.numpy."""
    def hvp(params: list, x: Any, y: Any, vs: list) -> list:
        acts, racts, masks = [x], [jnp.zeros_like(x)], []
        a, ra = x, jnp.zeros_like(x)
        for i in range(n_layers):
            W, V = params[2 * i], vs[2 * i]
            z = a @ W.T + params[2 * i + 1]
            rz = ra @ W.T + a @ V.T + vs[2 * i + 1]
            if i < n_layers - 1:
                mask = z > 0
                masks.append(mask)
                a, ra = z * mask, rz * mask
                acts.append(a)
                racts.append(ra)
            else:
                a, ra = z, rz
        n = x.shape[0]
        shift = a - a.max(axis=1, keepdims=True)
        p = jnp.exp(shift)
        p = p / p.sum(axis=1, keepdims=True)
        g = p.at[jnp.arange(n), y].add(-1.0) / n
        rg = p * (ra - (p * ra).sum(axis=1, keepdims=True)) / n
        out: list = [None] * len(params)
        for i in range(n_layers - 1, -1, -1):
            a_in, ra_in = acts[i], racts[i]
            out[2 * i] = g.T @ ra_in + rg.T @ a_in
            out[2 * i + 1] = rg.sum(axis=0)
            if i > 0:
                W, V = params[2 * i], vs[2 * i]
                mask = masks[i - 1]
                g, rg = (g @ W) * mask, (rg @ W + g @ V) * mask
        return out
    return hvp


# ---------------------------------------------------------------- the workloads

def _first(make: Callable[[], Callable[[], Any]], calls: int) -> float:
    """Seconds of the first ``calls`` calls of a fresh engine (``make()`` builds it), JAX's
    caches of traced and compiled functions emptied first (so neither engine reuses an
    earlier compilation of the same computation)."""
    import jax
    jax.clear_caches()
    fn = make()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return time.perf_counter() - t0


def _row(engines: dict, makers: dict, repeats: int, inner: int, scale: float, unit: str,
         check: float, firsts: int) -> dict[str, Any]:
    times = bench._interleaved(engines, repeats, inner)
    xla_t, jax_t = times["xla"]["median"], times["jax_jit"]["median"]
    first = {"xla": statistics.median(_first(makers["xla"], 2) for _ in range(firsts)),
             "jax_jit": statistics.median(_first(makers["jax_jit"], 1) for _ in range(firsts))}
    ratio = xla_t / jax_t
    return {"unit": unit, "xla": bench._sig(xla_t * scale), "jax_jit": bench._sig(jax_t * scale),
            "spread": {k: [bench._sig(t["min"] * scale), bench._sig(t["max"] * scale)]
                       for k, t in times.items()},
            "ratio_to_jax_jit": bench._sig(ratio), "target": f"xla <= {TARGET:g}x jax_jit",
            "met": ratio <= TARGET, "max_rel_diff": check,
            "first_call_ms": {"xla_record_and_compile": bench._sig(first["xla"] * 1e3),
                              "jax_jit": bench._sig(first["jax_jit"] * 1e3)}}


def _mlp(kind: str, sizes: Any, repeats: int, inner: int, firsts: int) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    nin, nouts, batch = getattr(sizes, kind)
    ctx = bench.make_context(sizes, torch=None)
    x, y = bench._data(kind, ctx)
    w0 = [p.detach().numpy().copy() for p in nn.MLP(nin, list(nouts), rng=0).parameters()]

    def make_xla() -> Callable[[], float]:
        model = nn.MLP(nin, list(nouts), rng=0)
        opt = optim.Adam(model.parameters(), lr=LR)

        def step(X: Any, Y: Any) -> dg.Tensor:
            opt.zero_grad()
            loss = F.cross_entropy(model(X), Y)
            loss.backward()
            opt.step()
            return loss
        fast = dg.compile(step, backend="xla")
        run = lambda: fast(x, y).item()  # noqa: E731
        run.model = model
        return run

    def make_jax() -> Callable[[], float]:
        f = jax.jit(_jax_mlp(jnp, len(nouts))[1])
        st = [[jnp.asarray(w) for w in w0], [jnp.zeros(w.shape) for w in w0],
              [jnp.zeros(w.shape) for w in w0], jnp.asarray(0.0)]

        def run() -> float:
            *st[:], loss = f(*st, x, y)
            return float(loss)
        run.state = st
        return run
    engines = {"xla": make_xla(), "jax_jit": make_jax()}
    for _ in range(3):  # the same three Adam steps from the same weights: the same weights after
        for fn in engines.values():
            fn()
    check = _rel([p.detach().numpy() for p in engines["xla"].model.parameters()],
                 [np.asarray(w) for w in engines["jax_jit"].state[0]])
    row = _row(engines, {"xla": make_xla, "jax_jit": make_jax}, repeats, inner, 1e3, "ms per step",
               check, firsts)
    row.update(model=f"MLP({nin}, {list(nouts)})", batch=batch, step="forward, cross-entropy, backward, Adam")
    return row


def _chain(n: int, shape: tuple, repeats: int, inner: int, firsts: int, per_op: bool) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    x0 = np.random.default_rng(0).uniform(-1, 1, size=shape) if per_op else np.full(shape, 0.3)

    def make_xla() -> Callable[[], np.ndarray]:
        def step(x: dg.Tensor) -> dg.Tensor:
            x.grad = None
            bench._chain(x, n, dg.Tensor.tanh, dg.Tensor.exp).sum().backward()
            return x.grad
        fast, x = dg.compile(step, backend="xla"), dg.tensor(x0, requires_grad=True)
        return lambda: fast(x).numpy()

    def make_jax() -> Callable[[], np.ndarray]:
        f = jax.jit(_jax_chain(jnp, n))
        return lambda: np.asarray(f(x0))
    engines = {"xla": make_xla(), "jax_jit": make_jax()}
    check = _rel(engines["xla"](), engines["jax_jit"]())
    scale, unit = (1e6 / n, "us per op (forward + backward)") if per_op else (1e3, "ms (forward + backward)")
    row = _row(engines, {"xla": make_xla, "jax_jit": make_jax}, repeats, inner, scale, unit, check, firsts)
    row.update(ops=n, shape=list(shape))
    return row


def _hvp(sizes: Any, repeats: int, inner: int, firsts: int) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    nin, nouts, _ = sizes.spiral
    ctx = bench.make_context(sizes, torch=None)
    x, y = bench._data("spiral", ctx)
    w0 = [p.detach().numpy().copy() for p in nn.MLP(nin, list(nouts), rng=0).parameters()]
    rng = np.random.default_rng(2)
    v0 = [rng.normal(size=w.shape) for w in w0]
    plain, vs = tuple(dg.tensor(w) for w in w0), tuple(dg.tensor(v) for v in v0)

    def make_xla() -> Callable[[], list]:
        def hvp_of(X: Any, p: tuple, v: tuple) -> tuple:
            return func.hvp(lambda *ps: F.cross_entropy(bench._dg_logits(ps, X), y), p, v)[1]
        fast = dg.compile(hvp_of, backend="xla")
        return lambda: [h.numpy() for h in fast(x, plain, vs)]

    def make_jax() -> Callable[[], list]:
        f = jax.jit(_jax_hvp(jnp, len(nouts)))
        jw, jv = [jnp.asarray(w) for w in w0], [jnp.asarray(v) for v in v0]
        return lambda: [np.asarray(h) for h in f(jw, x, y, jv)]
    engines = {"xla": make_xla(), "jax_jit": make_jax()}
    check = _rel(engines["xla"](), engines["jax_jit"]())
    row = _row(engines, {"xla": make_xla, "jax_jit": make_jax}, repeats, inner, 1e3, "ms per H.v",
               check, firsts)
    row.update(model=f"MLP({nin}, {list(nouts)})", n_params=int(sum(w.size for w in w0)))
    return row


def measure(repeats: int | None = None, quick: bool = False, long_chain: int = 1000,
            progress: bool = True, smoke: bool = False) -> dict[str, Any]:
    """Every row (see the module docstring): spiral, digits, per_op, chain, hvp, each with
    ``xla`` and ``jax_jit`` medians, their ratio against the 1.05x target, the first
    calls and the check that both computed the same. ``repeats`` overrides the samples
    per row; ``quick`` uses ``run.QUICK``'s sizes, ``smoke`` ``run.SMOKE``'s (tiny, one
    repeat: numbers meaningless); ``long_chain`` is the chain's length.

    >>> callable(measure)
    True
    """
    from duograd.capture.xla import require_jax
    jax = require_jax()  # (x64: float64 on both sides)
    sizes = bench.SMOKE if smoke else bench.QUICK if quick else bench.FULL
    if smoke:
        repeats, long_chain = 1, min(long_chain, 20)
    reps = (lambda k: repeats) if repeats is not None else (lambda k: sizes.repeats[k])
    firsts = 1 if quick or smoke else sizes.first_calls
    rows = {}
    plan = [("spiral", lambda: _mlp("spiral", sizes, reps("spiral"), sizes.inner["spiral"], firsts)),
            ("digits", lambda: _mlp("digits", sizes, reps("digits"), sizes.inner["digits"], firsts)),
            ("per_op", lambda: _chain(sizes.per_op_ops, sizes.per_op_shape, reps("per_op"),
                                      sizes.inner["per_op"], firsts, True)),
            ("chain", lambda: _chain(long_chain, (1,), max(3, reps("chain")), 1, 1, False)),
            ("hvp", lambda: _hvp(sizes, reps("hvp"), sizes.inner["hvp"], firsts))]
    for name, fn in plan:
        if progress:
            print(f"xla_bench: {name} ...", file=sys.stderr, flush=True)
        rows[name] = fn()
    rows["machine"] = {"jax": jax.__version__, "devices": [str(d) for d in jax.devices()],
                       "long_chain_ops": long_chain}
    return rows


if __name__ == "__main__":
    import json
    print(json.dumps(measure(quick="--quick" in sys.argv), indent=1))
