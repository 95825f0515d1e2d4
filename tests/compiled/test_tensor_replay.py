"""The engine's invariant: every array computation of a step is a primitive call.

Each test records the primitive calls a step makes on inputs A (``autograd.trace``),
replays that recording with the small replayer below on new inputs B of the same
shapes, and compares the replay with the eager step run on B, bit for bit. A rule that
computes anything outside a primitive (a mask from ``.data``, a NumPy result wrapped
as a constant, a Python branch on values) shows up as a value baked in from A, and
the replay on B then differs. This is also the seed of capture and replay
(``dg.compile``): the replayer sees nothing but ``(op.forward, inputs, kw, out)``.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import autograd, func
from duograd.nn import functional as F
from specs import OP_SPECS, make_inputs


def replay(calls: list, inputs: list[dg.Tensor], arrays: list[np.ndarray]) -> dict[int, np.ndarray]:
    """Run a recording on new input arrays: the value of every recorded Tensor, by id.

    A Tensor that no recorded call produced and that is not an input is a constant of
    the recording, and keeps the value it had (numbers, index arrays, seeds given by
    the caller)."""
    env = {id(t): a for t, a in zip(inputs, arrays)}
    for op, xs, kw, out in calls:
        env[id(out)] = np.asarray(op.forward(*[env.get(id(x), x._data) for x in xs], **kw))
    return env


def assert_replays(step, arrays_a: list[np.ndarray], arrays_b: list[np.ndarray]) -> int:
    """Record ``step`` on A, replay on B, compare with eager on B; returns the call count.

    ``step(*leaves)`` takes leaf Tensors (requiring grad) and returns the Tensors to
    compare (values, gradients, tangents)."""
    leaves_a = [dg.tensor(a, requires_grad=True) for a in arrays_a]
    with autograd.trace() as calls:
        results_a = step(*leaves_a)
    leaves_b = [dg.tensor(b, requires_grad=True) for b in arrays_b]
    results_b = step(*leaves_b)
    env = replay(calls, leaves_a, arrays_b)
    assert len(results_a) == len(results_b) > 0
    for k, (ra, rb) in enumerate(zip(results_a, results_b)):
        assert (ra is None) == (rb is None), k
        if ra is None:
            continue
        got = env[id(ra)]
        assert got.dtype == rb.dtype and got.shape == rb.shape, (k, got.dtype, rb.dtype)
        diff = np.max(np.abs(got.astype(np.float64) - rb.detach().numpy().astype(np.float64)), initial=0.0)
        assert np.array_equal(got, rb.detach().numpy(), equal_nan=True), \
            f"result {k}: replay differs from eager on new inputs (max abs diff {diff})"
    # Replaying on A itself gives A's results: the recording is complete.
    env_a = replay(calls, leaves_a, arrays_a)
    for ra in results_a:
        if ra is not None:
            assert np.array_equal(env_a[id(ra)], ra.detach().numpy(), equal_nan=True)
    return len(calls)


def _cotangent(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(99).standard_normal(shape)


def spec_step(spec):
    """Forward, backward, create_graph second order and a jvp of one op spec."""
    def step(*leaves):
        n = spec.arity
        xs, ts = leaves[:n], leaves[n:]
        out = spec.fn(*xs)
        v = _cotangent(out.shape)
        first = dg.grad((out * v).sum(), xs, create_graph=True, allow_unused=True)
        used = [(g, x) for g, x in zip(first, xs) if g is not None]
        penalty = sum(((g * g).sum() for g, _ in used), dg.tensor(0.0))
        second = dg.grad(penalty, [x for _, x in used], allow_unused=True) if penalty.requires_grad else ()
        _, tangent = func.jvp(spec.fn, xs, ts)
        return [out, *first, *second, tangent]
    return step


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
def test_every_op_replays_bit_for_bit(spec):
    a = make_inputs(spec, seed=0)
    b = make_inputs(spec, seed=1)
    ta = [np.random.default_rng(3).standard_normal(x.shape) for x in a]
    tb = [np.random.default_rng(4).standard_normal(x.shape) for x in a]
    assert assert_replays(spec_step(spec), a + ta, b + tb) > 0


def _mlp_loss(X, params, y):
    h = X
    for k in range(0, len(params), 2):
        h = h @ params[k].mT + params[k + 1]  # Linear weights are (out, in)
        if k + 2 < len(params):
            h = h.relu()
    return F.cross_entropy(h, y)


def _spiral_arrays(seed: int):
    rng = np.random.default_rng(seed)
    model = dg.nn.MLP(2, [64, 64, 2], rng=seed)
    X = rng.standard_normal((100, 2))
    return [X] + [p.detach().numpy().copy() for p in model.parameters()]


Y = np.random.default_rng(5).integers(0, 2, 100)


def test_spiral_training_step_replays_bit_for_bit():
    """nn.MLP forward, cross-entropy, backward into .grad, on the spiral model."""
    def step(X, *params):
        model = dg.nn.MLP(2, [64, 64, 2], rng=0)
        for p, q in zip(model.parameters(), params):  # the model runs on the step's leaves
            p.data = q._data
        loss = _mlp_loss(X, params, Y)
        loss.backward()
        return [loss, *[p.grad for p in params]]
    assert assert_replays(step, _spiral_arrays(0), _spiral_arrays(1)) > 40


def test_spiral_gradient_penalty_replays_bit_for_bit():
    """create_graph: the gradient norm as a loss, differentiated again, accumulated twice."""
    def step(X, *params):
        loss = _mlp_loss(X, params, Y)
        gs = dg.grad(loss, params, create_graph=True)
        penalty = sum((g * g).sum() for g in gs)
        (loss + penalty).backward(retain_graph=True)
        (loss * 0.5).backward()  # a second backward accumulates into .grad
        return [loss, penalty, *gs, *[p.grad for p in params]]
    assert assert_replays(step, _spiral_arrays(0), _spiral_arrays(1)) > 100


def test_spiral_jvp_and_hvp_replay_bit_for_bit():
    def step(X, *rest):
        params, tangents = rest[:6], rest[6:]
        _, t = func.jvp(lambda *ps: _mlp_loss(X, ps, Y), params, tangents)
        _, hv = func.hvp(lambda *ps: _mlp_loss(X, ps, Y), params, tangents)
        return [t, *hv]
    a, b = _spiral_arrays(0), _spiral_arrays(1)
    ta = [np.random.default_rng(6).standard_normal(x.shape) for x in a[1:]]
    tb = [np.random.default_rng(7).standard_normal(x.shape) for x in a[1:]]
    assert assert_replays(step, a + ta, b + tb) > 50


@pytest.mark.parametrize("case", ["mixed", "astype", "create_graph"])
def test_dtype_casts_replay_bit_for_bit(case):
    """Edges that change dtype: the engine's cast back to the input's dtype is recorded too."""
    rng = np.random.default_rng(8)
    a = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4)]
    b = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4)]

    def step(x32, y64):
        if case == "mixed":
            out = (x32 * y64).tanh().sum()
        elif case == "astype":
            out = (x32.astype(np.float64) * y64).sin().sum()
        else:
            (gx,) = dg.grad((x32 * y64).exp().sum(), [x32], create_graph=True)
            out = (gx * gx).sum()
        out.backward()
        return [out, x32.grad, y64.grad]
    assert_replays(step, a, b)


def test_a_rule_that_reads_data_fails_the_replay():
    """The check can fail: a relu whose rule builds its mask from .data outside a primitive."""
    leaky = dg.Primitive("relu_from_data", lambda x: np.maximum(x, 0),
                         vjp=(lambda g, out, x: g * dg.tensor(x.detach().numpy() > 0),))

    def step(x):
        y = leaky(x).sum()
        y.backward()
        return [y, x.grad]
    rng = np.random.default_rng(9)
    with pytest.raises(AssertionError, match="replay differs"):
        assert_replays(step, [rng.standard_normal(20)], [rng.standard_normal(20)])
