"""dg.explain and dg.detect_anomaly, each against something computed without them.

- summed_axes: for every broadcast pattern of test_tensor_broadcast.py, the axes that
  the real backward's broadcasting adjoint summed (its ``sum`` calls, recorded with
  ``autograd.trace``) and NumPy's own broadcasting arithmetic.
- check=True: ten wrong VJP rules, each a user-defined Primitive planted in an MLP loss;
  each is the one and only row flagged (and a correct loss flags nothing).
- total_saved_bytes: tracemalloc's count of what the forward pass left allocated.
- anomaly mode: ten planted NaN/inf sources, each located at the right op, pass and line.
"""

from __future__ import annotations

import inspect
import tracemalloc

import numpy as np
import pytest
from test_tensor_broadcast import PATTERNS

import duograd as dg
from duograd import _context, autograd, nn
from duograd.nn import functional as F
from experiments.planted import NAN_SOURCES, PLANTED, line_of, nan_source

# ---------------------------------------------------------------- summed_axes


def _numpy_summed_axes(x_shape, out_shape):
    """Axes of ``out_shape`` along which broadcasting ``x_shape`` replicated: NumPy only."""
    lead = len(out_shape) - len(x_shape)
    padded = (1,) * lead + tuple(x_shape)
    return tuple(a for a, (n, m) in enumerate(zip(padded, out_shape)) if n == 1 and m != 1)


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_summed_axes_are_what_the_adjoint_did(pattern):
    sx, sy = PATTERNS[pattern]
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.standard_normal(sx), requires_grad=True)
    y = dg.tensor(rng.standard_normal(sy), requires_grad=True)
    out = (x * y).sum()
    ex = dg.explain(out)
    row = next(r for r in ex.rows if r["op"] == "mul")
    # What the real backward's adjoint did: the sum calls made after the rules ran.
    with autograd.trace() as calls:
        out.backward(retain_graph=True)
    sums = [kw["axis"] for op, xs, kw, o in calls if op.name == "sum" and xs[0].shape != ()]
    did = [s for s in sums if s]  # the row sum of (x*y).sum() is the forward's, not the adjoint's
    out_shape = np.broadcast_shapes(sx, sy)
    for i, shape in enumerate((sx, sy)):
        want = _numpy_summed_axes(shape, out_shape)
        assert row["summed_axes"][i] == want, (pattern, i)
        if want:
            assert want in did
    assert len(did) == sum(bool(_numpy_summed_axes(s, out_shape)) for s in (sx, sy))
    assert x.grad is not None  # the backward above, not explain, wrote it


def test_explain_touches_no_grad_and_keeps_the_graph():
    x = dg.tensor(np.ones((4, 3)))
    W = dg.tensor(np.ones((3, 2)), requires_grad=True)
    b = dg.tensor(np.zeros(2), requires_grad=True)
    calls = []
    b.register_hook(lambda g: calls.append(g))
    loss = (x @ W + b).relu().sum()
    ex = dg.explain(loss)
    assert W.grad is None and b.grad is None and not calls
    loss.backward()  # the graph is intact
    np.testing.assert_array_equal(b.grad.numpy(), [4.0, 4.0])
    add = next(r for r in ex.rows if r["op"] == "add")
    assert add["summed_axes"] == ((), (0,))
    leaf_b = [r for r in ex.rows if r["op"] == "leaf" and r["shape"] == (2,)][0]
    assert leaf_b["grad_norm"] == pytest.approx(np.linalg.norm(b.grad.numpy()))
    assert "(4,2) → (2,): sum over axis 0" in ex.to_dot()
    assert all(len(line) <= 100 for line in str(ex).splitlines())


def test_explain_inputs_prunes_and_errors():
    x = dg.tensor([1.0], requires_grad=True)
    y = dg.tensor([2.0], requires_grad=True)
    ex = dg.explain((x * 2 + y.exp()).sum(), inputs=[x])
    assert "exp" not in [r["op"] for r in ex.rows]
    with pytest.raises(ValueError, match=r"explain: .*single element.*\(2,\)"):
        dg.explain(x * dg.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="not in the graph"):
        dg.explain((x * 2).sum(), inputs=[y])


def test_explain_draws(tmp_path):
    x = dg.tensor(np.ones((5, 3)), requires_grad=True)
    b = dg.tensor(np.ones(3), requires_grad=True)
    png = dg.explain((x + b).sum()).draw(tmp_path / "e.png")
    assert (tmp_path / "e.png").stat().st_size > 0 and (tmp_path / "e.dot").exists()
    assert png.endswith("e.png")


# ---------------------------------------------------------------- ten planted wrong rules

def _loss(where, bad):
    """An MLP loss (16 wide, square hidden layer) with the planted op in one place."""
    rng = np.random.default_rng(1)
    X = dg.tensor(rng.standard_normal((40, 3)))
    y = rng.integers(0, 3, 40)
    W1 = dg.tensor(rng.standard_normal((3, 16)) * 0.5, requires_grad=True)
    b1 = dg.tensor(rng.standard_normal(16) * 0.1, requires_grad=True)
    W2 = dg.tensor(rng.standard_normal((16, 16)) * 0.3, requires_grad=True)
    W3 = dg.tensor(rng.standard_normal((16, 3)) * 0.3, requires_grad=True)
    h = (X @ W1 + b1).relu()
    if where is None:
        h = (h @ W2).tanh()
    elif where == "square":
        h = bad(h, W2).tanh()
    elif where == "pair":
        h = bad(h @ W2, b1 * 0.5 + 1.0).tanh()
    else:
        h = bad(h @ W2)
    return F.cross_entropy(h @ W3, y)


def test_a_correct_mlp_loss_flags_nothing():
    ex = dg.explain(_loss(None, None), check=True)
    assert ex.flagged == [] and all(r["fd_error"] < 1e-4 for r in ex.rows if r["fd_error"] is not None)


@pytest.mark.parametrize("kind", list(PLANTED))
def test_check_flags_exactly_the_planted_rule(kind):
    bad, where = PLANTED[kind]
    ex = dg.explain(_loss(where, bad), check=True)
    assert [r["op"] for r in ex.flagged] == [bad.name], str(ex)


# ---------------------------------------------------------------- saved bytes vs tracemalloc

def test_total_saved_bytes_matches_tracemalloc():
    rng = np.random.default_rng(0)
    model = nn.MLP(64, [128, 128, 10], rng=0)
    X = dg.tensor(rng.standard_normal((256, 64)))
    y = rng.integers(0, 10, 256)
    F.cross_entropy(model(X), y).backward()  # warm caches
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = F.cross_entropy(model(X), y)
        graph = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    total = dg.explain(loss).total_saved_bytes
    assert abs(total - graph) <= 0.1 * graph, (total, graph)


# ---------------------------------------------------------------- anomaly mode

# The planted sources are experiments/planted.py's, shared with the walkthrough's stage.
@pytest.mark.parametrize("case", list(NAN_SOURCES))
def test_anomaly_is_located(case):
    op, pass_, marker = NAN_SOURCES[case]
    with np.errstate(all="ignore"), dg.detect_anomaly():
        with pytest.raises(dg.AnomalyError) as info:
            out = nan_source(case)
            out.backward()
    e = info.value
    assert isinstance(e, RuntimeError)
    assert (e.op, e.pass_) == (op, pass_), str(e)
    assert e.where.endswith(f"planted.py:{line_of(marker)}"), str(e)
    msg = str(e)
    assert msg.startswith(f"{op} ({pass_} pass)") and f":{line_of(marker)}" in msg
    assert "shape" in msg and ("input" in msg)


def test_masked_where_is_silent_without_anomaly_mode():
    """The trap itself: the result looks fine, the gradient comes back NaN."""
    z = dg.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(all="ignore"):
        out = dg.where(z.detach().numpy() > 0, z.log(), 0.0).sum()
        assert np.isfinite(out.item())
        out.backward()
    assert np.isnan(z.grad.numpy()[0])


def test_anomaly_mode_is_off_outside_and_switches_everything_off():
    assert not _context.stack() and not _context.watching and not _context.backward_watched
    with dg.detect_anomaly():
        assert _context.watching and _context.backward_watched and len(_context.stack()) == 1
    assert not _context.stack() and not _context.watching and not _context.backward_watched
    with np.errstate(all="ignore"):
        assert np.isinf(dg.tensor([0.0]).log().numpy()[0])  # no error outside


def test_explain_shows_recorded_locations():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.anomaly.record_locations():
        y = (x * 3).sum()
    line = inspect.currentframe().f_lineno - 1
    rows = dg.explain(y).rows
    assert rows[0]["where"].endswith(f"test_explain_anomaly.py:{line}")
    assert dg.explain((x * 3).sum()).rows[0]["where"] is None
