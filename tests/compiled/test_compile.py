"""``dg.compile``: a replay has the eager call's effects, bit for bit.

Every comparison here is against the eager engine run on the same new inputs (itself
checked against finite differences and PyTorch elsewhere), with ``np.array_equal``: a
maximum absolute difference of 0.0. The recording is always made on other inputs (A)
than the ones compared (B), so a value frozen into the recording shows up.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import capture, func, nn, optim
from duograd.nn import functional as F
from specs import OP_SPECS, make_inputs


def _same(a, b) -> None:
    a = a.detach().numpy() if isinstance(a, dg.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, dg.Tensor) else np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    diff = np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)
    assert np.array_equal(a, b, equal_nan=True), f"max abs diff {diff}"


# ---------------------------------------------------------------- every op

def _op_step(spec):
    def step(*xs):
        out = spec.fn(*xs)
        v = np.random.default_rng(7).standard_normal(out.shape)
        (out * v).sum().backward()
        return out
    return step


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
def test_every_op_forward_and_backward_replays_bit_for_bit(spec):
    step = _op_step(spec)
    fast = dg.compile(step)
    leaves_a = [dg.tensor(a, requires_grad=True) for a in make_inputs(spec, seed=0)]
    fast(*leaves_a)  # records
    arrays_b = make_inputs(spec, seed=1)
    replay_leaves = [dg.tensor(b, requires_grad=True) for b in arrays_b]
    eager_leaves = [dg.tensor(b, requires_grad=True) for b in arrays_b]
    got, want = fast(*replay_leaves), step(*eager_leaves)
    assert fast.traces == 1 and not got.requires_grad
    _same(got, want)
    for r, e in zip(replay_leaves, eager_leaves):
        assert (r.grad is None) == (e.grad is None)
        if e.grad is not None:
            _same(r.grad, e.grad)


# ---------------------------------------------------------------- training

def _adam_like_step(model, opt):
    """A whole training step as a user writes one: zero_grad, forward, backward, opt.step."""
    def step(X, y):
        model.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _train(compiled: bool, nin: int, sizes: list[int], batches, lr: float = 0.01,
           reuse_buffers: bool = True):
    model = nn.MLP(nin, sizes, rng=0)
    opt = optim.Adam(model.parameters(), lr=lr)
    step = _adam_like_step(model, opt)
    run = dg.compile(step, reuse_buffers=reuse_buffers) if compiled else step
    losses = [run(X, y).detach().numpy().copy() for X, y in batches]
    return losses, model, getattr(run, "traces", None)


@pytest.mark.parametrize("kind", ["spiral", "digits"])
def test_fifty_adam_steps_match_eager_bit_for_bit(kind):
    nin, sizes, batch = (2, [64, 64, 2], 100) if kind == "spiral" else (64, [64, 32, 10], 64)
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal((batch, nin)), rng.integers(0, sizes[-1], batch)) for _ in range(50)]
    eager_losses, eager_model, _ = _train(False, nin, sizes, batches)
    fast_losses, fast_model, traces = _train(True, nin, sizes, batches)
    assert traces == 1
    for a, b in zip(fast_losses, eager_losses):
        _same(a, b)
    for p, q in zip(fast_model.parameters(), eager_model.parameters()):
        _same(p, q)
        _same(p.grad, q.grad)
    assert not np.array_equal(next(fast_model.parameters()).detach().numpy(), next(nn.MLP(nin, sizes, rng=0).parameters()).detach().numpy())


def test_step_outside_and_gradients_accumulated_over_calls():
    """The API.md pattern: zero_grad and opt.step outside, backward inside; two calls
    without zero_grad accumulate into .grad as eagerly."""
    X = np.random.default_rng(2).standard_normal((16, 2))
    y = np.arange(16) % 2
    results = []
    for compiled in (False, True):
        model = nn.MLP(2, [8, 2], rng=3)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(X, y):
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            return loss
        run = dg.compile(step) if compiled else step
        for i in range(6):
            if i % 2 == 0:
                model.zero_grad()
            run(X, y)
            if i % 2 == 1:
                opt.step()
        results.append([p.detach().numpy().copy() for p in model.parameters()] + [p.grad.detach().numpy() for p in model.parameters()])
    for a, b in zip(*results):
        _same(a, b)


def test_float32_training_step():
    rng = np.random.default_rng(4)
    batches = [(rng.standard_normal((32, 2)).astype(np.float32), rng.integers(0, 2, 32)) for _ in range(5)]
    out = []
    for compiled in (False, True):
        model = nn.MLP(2, [16, 2], rng=0)
        for p in model.parameters():
            p.data = p._data.astype(np.float32)
        opt = optim.Adam(model.parameters(), lr=0.01)
        step = _adam_like_step(model, opt)
        run = dg.compile(step) if compiled else step
        out.append(([run(X, y).detach().numpy() for X, y in batches], [p.detach().numpy().copy() for p in model.parameters()]))
    assert out[1][0][0].dtype == np.float32 and out[1][1][0].dtype == np.float32
    for a, b in zip(out[0][0] + out[0][1], out[1][0] + out[1][1]):
        _same(a, b)


# ---------------------------------------------------------------- higher order and transforms

def _mlp_loss(X, y, *params):
    h = X
    for k in range(0, len(params), 2):
        h = h @ params[k].mT + params[k + 1]  # Linear weights are (out, in)
        if k + 2 < len(params):
            h = h.tanh()
    return F.cross_entropy(h, y)


def _params(seed):
    return [dg.tensor(p.detach().numpy()) for p in nn.MLP(2, [16, 16, 2], rng=seed).parameters()]


def test_hvp_replays_bit_for_bit():
    y = np.arange(40) % 2

    def hvp(X, params, vs):
        return func.hvp(lambda *ps: _mlp_loss(X, y, *ps), tuple(params), tuple(vs))[1]

    fast = dg.compile(hvp)
    rng = np.random.default_rng(5)
    fast(rng.standard_normal((40, 2)), _params(0), [dg.tensor(rng.standard_normal(p.shape)) for p in _params(0)])
    X = rng.standard_normal((40, 2))
    params, vs = _params(1), [dg.tensor(rng.standard_normal(p.shape)) for p in _params(1)]
    got, want = fast(X, params, vs), hvp(X, params, vs)
    assert fast.traces == 1 and len(got) == 6
    for a, b in zip(got, want):
        _same(a, b)


def test_gradient_penalty_with_create_graph_and_dg_grad():
    y = np.arange(20) % 2

    def step(X, *params):
        loss = _mlp_loss(X, y, *params)
        gs = dg.grad(loss, params, create_graph=True)
        penalty = sum((g * g).sum() for g in gs)
        (loss + 0.1 * penalty).backward()
        return loss, penalty, gs

    fast = dg.compile(step)
    rng = np.random.default_rng(6)
    fast(rng.standard_normal((20, 2)), *[dg.tensor(p.numpy(), requires_grad=True) for p in _params(0)])
    X = rng.standard_normal((20, 2))
    pa = [dg.tensor(p.numpy(), requires_grad=True) for p in _params(1)]
    pb = [dg.tensor(p.numpy(), requires_grad=True) for p in _params(1)]
    (la, qa, ga), (lb, qb, gb) = fast(X, *pa), step(X, *pb)
    _same(la, lb)
    _same(qa, qb)
    for a, b in zip(list(ga) + [p.grad for p in pa], list(gb) + [p.grad for p in pb]):
        _same(a, b)


def test_jvp_and_func_grad_replay_bit_for_bit():
    y = np.arange(12) % 2

    def both(X, params, ts):
        _, tangent = func.jvp(lambda *ps: _mlp_loss(X, y, *ps), tuple(params), tuple(ts))
        grads = func.grad(lambda *ps: _mlp_loss(X, y, *ps), argnums=(0, 1))(*params)
        return tangent, grads

    fast = dg.compile(both)
    rng = np.random.default_rng(7)
    fast(rng.standard_normal((12, 2)), _params(0), [dg.tensor(rng.standard_normal(p.shape)) for p in _params(0)])
    X = rng.standard_normal((12, 2))
    params, ts = _params(2), [dg.tensor(rng.standard_normal(p.shape)) for p in _params(2)]
    (ta, ga), (tb, gb) = fast(X, params, ts), both(X, params, ts)
    _same(ta, tb)
    for a, b in zip(ga, gb):
        _same(a, b)


def test_no_grad_region_inside_fn():
    w = dg.tensor([0.5, -1.0], requires_grad=True)

    def step(x):
        with dg.no_grad():
            scale = (x * x).sum().sqrt()  # a value, no graph
        loss = (w * x / scale).sum()
        loss.backward()
        return loss, scale

    fast = dg.compile(step)
    w.grad = None
    fast(dg.tensor([1.0, 2.0]))
    w.grad = None
    got = fast(dg.tensor([3.0, -4.0]))
    g_replay = w.grad
    w.grad = None
    want = step(dg.tensor([3.0, -4.0]))
    for a, b in zip(got + (g_replay,), want + (w.grad,)):
        _same(a, b)


def test_scheduler_and_zero_grad_inside_are_replayed():
    X, y = np.random.default_rng(8).standard_normal((10, 2)), np.arange(10) % 2
    finals = []
    for compiled in (False, True):
        model = nn.MLP(2, [4, 2], rng=1)
        opt = optim.SGD(model.parameters(), lr=0.5)
        sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(X, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            sched.step()
            return loss
        run = dg.compile(step) if compiled else step
        losses = [run(X, y).detach().numpy() for _ in range(6)]
        finals.append((losses, opt.lr, [p.detach().numpy().copy() for p in model.parameters()]))
    assert finals[0][1] == finals[1][1] == 0.5 * 0.5 ** 3
    for a, b in zip(finals[0][0] + finals[0][2], finals[1][0] + finals[1][2]):
        _same(a, b)


# ---------------------------------------------------------------- guards

def test_a_signature_change_records_again():
    w = dg.tensor(np.ones((3, 2)), requires_grad=True)

    def f(x, scale=1.0):
        return (x @ w * scale).sum()

    fast = dg.compile(f)
    fast(np.ones((4, 3)))
    fast(np.zeros((4, 3)))
    assert fast.traces == 1
    fast(np.ones((5, 3)))                       # a new shape
    fast(np.ones((5, 3), dtype=np.float32))     # a new dtype
    fast(np.ones((5, 3)), scale=2.0)            # a keyword given: another signature
    assert fast.traces == 4
    _same(fast(np.full((5, 3), 2.0), scale=2.0), f(np.full((5, 3), 2.0), scale=2.0))
    _same(fast(np.full((5, 3), 2.0), scale=3.0), f(np.full((5, 3), 2.0), scale=3.0))
    assert fast.traces == 5                     # a number's second value: an input from now on
    _same(fast(np.full((5, 3), 2.0), scale=0.5), f(np.full((5, 3), 2.0), scale=0.5))
    assert fast.traces == 5                     # a third value replays
    w.data = np.ones((3, 2)) * 3                # same shape: seen by the replay, no recording
    _same(fast(np.ones((4, 3))), f(np.ones((4, 3))))
    assert fast.traces == 5
    w._data = np.ones((3, 5))                   # a parameter changed shape: recorded again
    _same(fast(np.ones((4, 3))), f(np.ones((4, 3))))
    assert fast.traces == 6


def test_the_cache_is_bounded_least_recently_used_first():
    fast = dg.compile(lambda x: dg.tensor(x) * 2)
    for n in range(1, capture.CACHE_SIZE + 3):
        fast(np.ones(n))
    assert len(fast.programs) == capture.CACHE_SIZE
    traces = fast.traces
    fast(np.ones(capture.CACHE_SIZE + 2))       # the newest is kept
    fast(np.ones(1))                            # the oldest was evicted: recorded again
    assert fast.traces == traces + 1


def test_recheck_every_catches_a_value_dependent_branch():
    w = dg.tensor([1.0, 2.0], requires_grad=True)

    def f(x):
        y = (w * x).sum()
        if y.item() > 0:   # frozen at the recorded branch
            y = y * 2
        else:
            y = y.exp()
        return y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = dg.compile(f, recheck_every=2)
        fast(dg.tensor([1.0, 1.0]))                       # records the "> 0" branch
        with pytest.raises(RuntimeError, match=r"operation 2: recorded 'mul'.*now 'exp'"):
            fast(dg.tensor([-1.0, -1.0]))                 # the 2nd call re-runs eagerly
        quiet = dg.compile(f, recheck_every=2)
        quiet(dg.tensor([1.0, 1.0]))
        quiet(dg.tensor([2.0, 1.0]))                      # same branch: no error
        _same(quiet(dg.tensor([3.0, 1.0])), f(dg.tensor([3.0, 1.0])))


def test_reading_a_value_while_recording_warns_and_names_the_line():
    def f(x):
        y = (x * 2).sum()
        return y if float(y) > 0 else -y

    fast = dg.compile(f)
    with pytest.warns(RuntimeWarning, match=r"float\(\) at .*test_compile.py:\d+ reads a tensor's value"):
        fast(dg.tensor([1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast(dg.tensor([3.0]))  # a replay does not run the line again


def test_a_random_draw_inside_fn_is_frozen_and_recheck_finds_it():
    rng = np.random.default_rng(0)

    def f(x):
        return x * dg.tensor(rng.random(3))   # NumPy randomness outside any primitive

    fast = dg.compile(f, recheck_every=2)
    a = fast(np.ones(3)).numpy().copy()
    with pytest.raises(RuntimeError, match="differs from a fresh eager run at operation 0"):
        fast(np.ones(3))
    assert a.shape == (3,)


# ---------------------------------------------------------------- bad input

def test_arguments_that_cannot_be_a_signature_raise_type_error():
    fast = dg.compile(lambda x: dg.tensor(x) * 2)
    with pytest.raises(TypeError, match=r"argument 0 is an array of dtype object"):
        fast(np.array([1.0, "a"], dtype=object))
    with pytest.raises(TypeError, match=r"argument 'opts' of type dict|argument 'opts'\[.*cannot"):
        fast(np.ones(2), opts={"a": [np.array([object()], dtype=object)]})
    with pytest.raises(TypeError, match="argument 1 of type set cannot be part of a signature"):
        dg.compile(lambda x, s: x)(np.ones(2), {1, 2})
    with pytest.raises(TypeError, match="expected a callable"):
        dg.compile(3)
    assert fast.traces == 0


def test_a_failed_recording_leaves_no_program():
    calls = []

    def f(x):
        calls.append(1)
        y = dg.tensor(x) * 2
        if len(calls) == 1:
            raise ValueError("boom")
        return y

    fast = dg.compile(f)
    with pytest.raises(ValueError, match="boom"):
        fast(np.ones(2))
    assert fast.traces == 0 and not fast.programs
    _same(fast(np.ones(2)), np.full(2, 2.0))
    assert fast.traces == 1


@pytest.mark.parametrize("order", ["step_last", "step_first"])
def test_a_failed_replay_leaves_grads_and_parameters_as_they_were(order):
    model = nn.MLP(2, [4, 3], rng=0)
    opt = optim.Adam(model.parameters(), lr=0.1)

    def step(X, y):
        if order == "step_first":
            opt.step()               # kernels follow a host step: it is undone on failure
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        if order == "step_last":
            opt.step()
        return loss

    fast = dg.compile(step)
    X = np.random.default_rng(0).standard_normal((5, 2))
    model.zero_grad()
    F.cross_entropy(model(X), np.zeros(5, dtype=int)).backward()  # so step_first has grads
    fast(X, np.array([0, 1, 2, 0, 1]))
    fast(X, np.array([0, 1, 2, 0, 1]))
    before = [(p.detach().numpy().copy(), p.grad, p.grad.detach().numpy().copy()) for p in model.parameters()]
    state = [opt.state[p]["exp_avg"].copy() for p in model.parameters()]  # Adam's first moments
    with pytest.raises(ValueError, match="cross_entropy: target 7 is out of range"):
        fast(X, np.array([0, 1, 7, 0, 1]))   # a label out of range: found during the replay
    assert fast.traces == 1
    for p, (data, g, gdata) in zip(model.parameters(), before):
        _same(p, data)
        assert p.grad is g
        _same(p.grad, gdata)
    for p, b in zip(model.parameters(), state):
        _same(opt.state[p]["exp_avg"], b)


def test_a_compiled_call_inside_a_recording_runs_eagerly():
    inner = dg.compile(lambda x: dg.exp(x))
    outer = dg.compile(lambda x: inner(x) * 2)
    outer(np.zeros(2))
    _same(outer(np.ones(2)), np.exp(np.ones(2)) * 2)
    assert inner.traces == 0 and outer.traces == 1


def test_a_host_step_that_replaces_data_is_seen_by_the_kernels_after_it():
    @dg.autograd.host
    def replace_step(params, lr):
        for p in params:
            p.data = p._data - lr * p.grad._data   # a new array, not written in place

    results = []
    for compiled in (False, True):
        w = dg.tensor([1.0, -2.0, 0.5], requires_grad=True)

        def step(x):
            w.grad = None
            ((w * x).tanh().sum()).backward()
            replace_step([w], 0.1)
            return (w * x).sum()       # reads w after the step
        run = dg.compile(step) if compiled else step
        results.append([run(dg.tensor([0.3, 0.2, -0.1])).detach().numpy() for _ in range(4)] + [w.detach().numpy()])
    for a, b in zip(*results):
        _same(a, b)


def test_a_numpy_result_computed_outside_duograd_warns_that_it_is_frozen():
    table = np.arange(3.0)
    fast = dg.compile(lambda x: table * 2)   # NumPy arithmetic on a global array
    with pytest.warns(RuntimeWarning, match="returned a NumPy value computed outside duograd"):
        fast(np.ones(2))


def test_numpy_arithmetic_on_an_array_argument_is_recorded():
    fast = dg.compile(lambda x: x * 2)   # the argument enters fn as a Tensor
    assert fast(np.ones(2)).numpy().tolist() == [2.0, 2.0]
    assert fast(np.full(2, 3.0)).numpy().tolist() == [6.0, 6.0]


def test_a_checkpointed_block_inside_a_compiled_step():
    results = []
    for compiled in (False, True):
        model = nn.MLP(3, [8, 8, 2], rng=0)

        def step(X, y):
            model.zero_grad()
            h = dg.checkpoint(lambda x: model.layers[0](x).tanh(), X)  # its backward recomputes
            loss = F.cross_entropy(model.layers[2](model.layers[1](h).tanh()), y)
            loss.backward()
            return loss
        run = dg.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        out = [run(rng.standard_normal((6, 3)), rng.integers(0, 2, 6)).detach().numpy() for _ in range(3)]
        results.append(out + [p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*results):
        _same(a, b)


@pytest.mark.parametrize("reuse", [True, False])
def test_buffer_reuse_replays_bit_for_bit(reuse):
    """Reusing arrays for results that stay inside a replay (or not) changes nothing."""
    rng = np.random.default_rng(9)
    batches = [(rng.standard_normal((32, 64)), rng.integers(0, 10, 32)) for _ in range(10)]
    eager_losses, eager_model, _ = _train(False, 64, [64, 32, 10], batches)
    fast_losses, fast_model, _ = _train(True, 64, [64, 32, 10], batches, reuse_buffers=reuse)
    for a, b in zip(fast_losses, eager_losses):
        _same(a, b)
    for p, q in zip(fast_model.parameters(), eager_model.parameters()):
        _same(p, q)


def test_buffer_reuse_keeps_results_that_leave_the_replay_apart(monkeypatch):
    """Returned values (and views of them) are new arrays every call, never a buffer."""
    monkeypatch.setattr(capture.fusion, "ENABLED", False)  # (the reuse pass's own kinds)
    fast = dg.compile(lambda x: ((dg.tensor(x) * 2).exp(), (dg.tensor(x) + 1).T),
                      reuse_buffers=True)
    fast(np.ones((2, 3)))
    a1, b1 = fast(np.ones((2, 3)))
    a2, b2 = fast(np.zeros((2, 3)))   # a1 and b1 must be untouched by this call
    _same(a1, np.full((2, 3), np.exp(2.0)))
    _same(b1, np.full((3, 2), 2.0))
    _same(a2, np.ones((2, 3)))
    kinds = [ins[0] for ins in next(iter(fast.programs.values())).code]
    assert capture.BUF2 in kinds  # x * 2 stays inside: it has a buffer; the results do not


def test_dropout_draws_a_new_mask_on_every_replay():
    """nn.Dropout's mask comes from its generator on every call, replayed or not."""
    X, y = np.random.default_rng(3).standard_normal((8, 6)), np.arange(8) % 3
    runs = []
    for compiled in (False, True):
        model = nn.Sequential(nn.Linear(6, 16, rng=0), nn.ReLU(), nn.Dropout(0.5, rng=1), nn.Linear(16, 3, rng=2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        step = _adam_like_step(model, opt)
        run = dg.compile(step) if compiled else step
        runs.append([run(X, y).detach().numpy() for _ in range(5)] + [p.detach().numpy().copy() for p in model.parameters()])
    for a, b in zip(*runs):
        _same(a, b)
    assert len({float(v) for v in runs[1][:5]}) == 5  # a different mask (and loss) each step
