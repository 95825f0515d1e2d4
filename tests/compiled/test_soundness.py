"""Issue 21's "Where we stand": each way a replay used to give a different answer from
eager, silently. A call of a compiled function equals eager bit for bit, raises, or
records again. The truth is the same function run eagerly, on copies of the same state."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from duograd.nn import functional as F
from bitwise import as_numpy as _np, same as _same, same_snapshot as _same_snap, snapshot as _snap


# ---------------------------------------------------------------- arguments


def test_numpy_arithmetic_on_a_numpy_argument_is_recorded_not_frozen():
    m = nn.Linear(3, 2)
    fast = dg.compile(lambda X: m(X * 2).sum())
    for X in (np.ones((4, 3)), np.zeros((4, 3)), np.arange(12.0).reshape(4, 3)):
        _same(_np(fast(X)), _np(m(dg.tensor(X) * 2).sum()))
    assert fast.traces == 1


def test_numpy_functions_on_a_numpy_argument_are_recorded():
    fast = dg.compile(lambda X: np.exp(X).sum() + np.tanh(X * 3).mean())
    for X in (np.ones(5), np.linspace(-1, 1, 5)):
        t = dg.tensor(X)
        _same(_np(fast(X)), _np(t.exp().sum() + (t * 3).tanh().mean()))


def test_a_numpy_only_method_on_an_argument_raises_naming_it():
    fast = dg.compile(lambda X: dg.tensor(X.ptp()))
    with pytest.raises(AttributeError, match="ptp"):
        fast(np.ones(3))


def test_the_same_tensor_as_two_arguments_then_two_tensors():
    fast = dg.compile(lambda a, b: a * 1 + b * 10)
    t = dg.tensor(1.0)
    assert float(fast(t, t)) == 11.0
    assert float(fast(dg.tensor(2.0), dg.tensor(3.0))) == 32.0
    x = np.ones(2)
    assert fast(x, x).numpy().tolist() == [11.0, 11.0]
    assert fast(np.full(2, 2.0), np.full(2, 3.0)).numpy().tolist() == [32.0, 32.0]


def test_the_same_labels_as_two_arguments_of_cross_entropy():
    logits = dg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    fast = dg.compile(lambda y1, y2: F.cross_entropy(logits, y1) + F.cross_entropy(logits, y2) * 3)
    y = np.array([0, 1, 2, 0])
    fast(y, y)
    y1, y2 = np.array([2, 2, 1, 0]), np.array([1, 0, 0, 2])
    _same(_np(fast(y1, y2)), _np(F.cross_entropy(logits, dg.tensor(y1)) +
                                 F.cross_entropy(logits, dg.tensor(y2)) * 3))


def test_an_argument_in_fortran_order_is_another_program():
    fast = dg.compile(lambda X: (X * 1.5).sum(0))
    X = np.random.default_rng(1).standard_normal((7, 130))
    for A in (X, np.asfortranarray(X), X.T.copy().T):
        _same(_np(fast(A)), _np((dg.tensor(A) * 1.5).sum(0)))


# ---------------------------------------------------------------- guards


def test_a_predict_recorded_in_train_mode_then_eval_does_not_drop():
    net = nn.Sequential(nn.Linear(3, 50), nn.Dropout(0.5))
    fast = dg.compile(lambda X: net(X))
    X = np.ones((2, 3))
    fast(X)
    net.eval()
    _same(_np(fast(X)), _np(net(dg.tensor(X))))
    assert fast.traces == 2
    net.train()
    assert (_np(fast(X)) == 0).any()   # dropping again


def test_a_dropout_whose_p_changes_records_again():
    drop = nn.Dropout(0.0)
    fast = dg.compile(lambda X: drop(X))
    X = np.ones((20, 20))
    _same(_np(fast(X)), X)
    drop.p = 1.0
    _same(_np(fast(X)), np.zeros_like(X))


def test_a_module_setting_changed_between_calls_records_again():
    act = nn.LeakyReLU(0.1) if hasattr(nn, "LeakyReLU") else None
    if act is None:
        pytest.skip("no LeakyReLU")
    fast = dg.compile(lambda X: act(X))
    X = -np.ones(3)
    fast(X)
    act.negative_slope = 0.5
    _same(_np(fast(X)), _np(act(dg.tensor(X))))


# ---------------------------------------------------------------- writes in place


def _linear_state():
    m = nn.Linear(3, 2)
    return m, [p._data.copy() for p in m.parameters()]


def test_p_data_assigned_from_tensor_operations_trains_as_eagerly():
    losses, weights = [], []
    for compiled in (False, True):
        m = nn.Linear(3, 2)
        m.weight.data = np.linspace(-1, 1, 6).reshape(m.weight.shape)
        m.bias.data = np.zeros(m.bias.shape)

        def step(X):
            m.zero_grad()
            loss = (m(X) ** 2).sum()
            loss.backward()
            for p in m.parameters():
                p.data = (p - 0.01 * p.grad).detach()
            return loss
        run = dg.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        losses.append([_np(run(rng.standard_normal((4, 3)))) for _ in range(5)])
        weights.append([p._data.copy() for p in m.parameters()])
    for a, b in zip(losses[0], losses[1]):
        _same(a, b)
    for a, b in zip(weights[0], weights[1]):
        _same(a, b)


def test_a_numpy_write_into_a_parameter_raises_at_the_recording():
    m = nn.Linear(3, 2)

    def step(X):
        m.zero_grad()
        m(X).sum().backward()
        m.weight.data -= 0.1 * m.weight.grad._data   # NumPy, in place: no replay could redo it
        return m.weight
    with pytest.raises(RuntimeError, match="in place"):
        dg.compile(step)(np.ones((2, 3)))
    assert m.weight._data.flags.writeable   # left writable after the failed recording


def test_a_numpy_write_into_an_argument_raises_at_the_recording():
    def f(x):
        y = x * 2
        x.numpy()[0] = 5.0
        return y
    with pytest.raises(RuntimeError, match="in place"):
        dg.compile(f)(dg.tensor([1.0, 2.0]))


def test_p_data_assigned_a_value_computed_in_numpy_raises():
    m = nn.Linear(3, 2)

    def step(X):
        m.zero_grad()
        m(X).sum().backward()
        m.weight.data = m.weight._data - 0.1 * m.weight.grad._data
        return m.weight
    with pytest.raises(RuntimeError, match="outside duograd's operations"):
        dg.compile(step)(np.ones((2, 3)))


# ---------------------------------------------------------------- recheck_every


def _rng_state(g):
    return copy.deepcopy(g.bit_generator.state)


def test_a_failed_recheck_changes_nothing_and_names_the_line():
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.3, rng=np.random.default_rng(5)))
    opt = optim.Adam(model.parameters(), lr=0.01)
    flip = [False]  # a list entry: no guard sees it (a dict's constant key would be guarded)

    def step(X):
        opt.zero_grad()
        h = model(X)
        if flip[0]:
            h = h * 2        # the branch that changes
        loss = h.sum()
        loss.backward()
        opt.step()
        return loss
    fast = dg.compile(step, recheck_every=2)
    X = np.ones((2, 3))
    fast(X)
    fast(X)    # recheck: the same
    fast(X)
    flip[0] = True
    before = [(p._data.copy(), None if p.grad is None else p.grad._data.copy()) for p in model.parameters()]
    state = copy.deepcopy(opt.state_dict())
    rng = model[1]._rng if hasattr(model[1], "_rng") else None
    rng_before = _rng_state(rng) if isinstance(rng, np.random.Generator) else None
    with pytest.raises(RuntimeError, match=r"operation \d+: recorded .* at .*test_soundness.py:\d+"):
        fast(X)
    for (d, g), p in zip(before, model.parameters()):
        _same(d, p._data)
        _same(g, p.grad._data)
    after = opt.state_dict()
    for k, v in state["state"].items():
        for name, value in v.items():
            _same(_np(value), _np(after["state"][k][name]))
    if rng_before is not None:
        assert _rng_state(rng) == rng_before


def test_recheck_does_not_alarm_when_only_the_labels_change():
    model = nn.Linear(3, 4)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(X, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return loss
    fast = dg.compile(step, recheck_every=1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        fast(rng.standard_normal((6, 3)), rng.integers(0, 4, 6))
    assert fast.traces == 1


def test_recheck_compares_whole_recordings_not_a_prefix():
    extra = [False]  # a list entry: no guard sees it

    def f(x):
        y = x * 2
        if extra[0]:
            y.sum()   # one more operation at the end, unused
        return y
    fast = dg.compile(f, recheck_every=1)
    fast(np.ones(2))
    extra[0] = True
    with pytest.raises(RuntimeError, match="differs"):
        fast(np.ones(2))


# ---------------------------------------------------------------- bit for bit


def test_a_plain_mlp_step_is_bit_for_bit_over_many_steps():
    results = []
    for compiled in (False, True):
        model = nn.MLP(13, [31, 17, 3], rng=0)
        opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

        def step(X, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss
        run = dg.compile(step) if compiled else step
        rng = np.random.default_rng(3)
        out = []
        for _ in range(30):
            X, y = rng.standard_normal((37, 13)), rng.integers(0, 3, 37)
            out.append(_np(run(X, y) if compiled else run(dg.tensor(X), dg.tensor(y))))
        results.append(out + [p._data.copy() for p in model.parameters()])
    for a, b in zip(*results):
        _same(a, b)


@pytest.mark.parametrize("reuse", [True, False])
def test_a_transposed_ufunc_result_then_a_reduction_is_bit_for_bit(reuse):
    W = dg.tensor(np.random.default_rng(0).standard_normal((67, 5)), requires_grad=True)

    def f(X):
        h = (X.T * 1.7).tanh()      # Fortran order eagerly: a ufunc keeps its input's layout
        return (h * 0.3).sum(1) + (h @ W).sum(1)[:1]
    fast = dg.compile(f, reuse_buffers=reuse)  # (a reused buffer must keep that layout)
    rng = np.random.default_rng(1)
    for _ in range(3):
        X = rng.standard_normal((67, 129))
        _same(_np(fast(X)), _np(f(dg.tensor(X))))


# ---------------------------------------------------------------- the guards and effects
# (each test below kills one of the planted capture bugs of tests/mutants.py)


def test_an_argument_that_starts_requiring_grad_records_again():
    w = dg.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss
    fast = dg.compile(step)
    fast(dg.tensor([3.0, 4.0]))
    x = dg.tensor([3.0, 4.0], requires_grad=True)
    fast(x)
    assert x.grad is not None and x.grad.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("as_array", [False, True])
def test_an_argument_of_another_dtype_records_again(as_array):
    fast = dg.compile(lambda x: x * 2 + 1)
    for dt in (np.float64, np.float32, np.float64):
        a = np.array([1.5, 2.25], dtype=dt)
        out = fast(a if as_array else dg.tensor(a))
        want = dg.tensor(a) * 2 + 1
        _same(out.numpy(), want.numpy())


def test_a_closed_over_tensor_that_stops_requiring_grad_records_again():
    w1 = dg.tensor([1.0, 2.0], requires_grad=True)
    w2 = dg.tensor([3.0, 4.0], requires_grad=True)

    def step(x):
        loss = (x * w1 * w2).sum()
        loss.backward()
        return loss
    fast = dg.compile(step)
    fast(dg.tensor([1.0, 1.0]))
    w2.requires_grad_(False)
    w1.grad = w2.grad = None
    fast(dg.tensor([1.0, 1.0]))
    assert w2.grad is None
    assert w1.grad.numpy().tolist() == [3.0, 4.0]


def test_a_closed_over_tensor_of_another_dtype_records_again():
    w = dg.tensor([1.0, 2.0])
    fast = dg.compile(lambda x: x * w)
    x = np.array([0.1, 0.2], dtype=np.float32)
    fast(x)
    w.data = w._data.astype(np.float32)
    _same(fast(x).numpy(), (dg.tensor(x) * w).numpy())


def test_a_closed_over_tensor_without_grad_is_read_every_call():
    c = dg.tensor([1.0, 2.0])
    fast = dg.compile(lambda x: x * c)
    fast(np.ones(2))
    c.data = np.array([5.0, 7.0])
    assert fast(np.ones(2)).numpy().tolist() == [5.0, 7.0]


def test_a_hit_refreshes_the_programs_place_in_the_cache():
    from duograd.capture import CACHE_SIZE
    fast = dg.compile(lambda x: x + 1)
    A = np.ones(1)
    fast(A)
    for k in range(CACHE_SIZE):
        fast(np.ones(k + 2))
        fast(A)
    assert fast.traces == 1 + CACHE_SIZE


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),  # in the program
                                  lambda ps: optim.Adagrad(ps, lr=0.1)])  # a host step
def test_a_replay_failing_after_the_optimizer_step_changes_nothing(make):
    model = nn.Linear(3, 4)
    opt = make(model.parameters())

    def step(X, y, y_after):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return F.cross_entropy(model(X), y_after)   # checks y_after after the step
    fast = dg.compile(step)
    rng = np.random.default_rng(0)
    y = np.array([0, 1, 2, 3])
    for _ in range(2):
        fast(rng.standard_normal((4, 3)), y, y.copy())
    assert fast.traces == 1
    before = _snap(model, opt)
    with pytest.raises((IndexError, ValueError)):
        fast(rng.standard_normal((4, 3)), y, np.array([0, 1, 2, 9]))
    assert fast.traces == 1   # the replay failed, not a new recording
    _same_snap(before, _snap(model, opt))


def test_two_backward_passes_in_one_step_accumulate_as_eagerly():
    results = []
    for compiled in (False, True):
        model = nn.Linear(3, 2)
        model.weight.data = np.linspace(-1, 1, 6).reshape(model.weight.shape)
        model.bias.data = np.array([0.5, -0.25])

        def step(X):
            model.zero_grad()
            (model(X) ** 2).sum().backward()
            model(X).sum().backward()
            return [p.grad for p in model.parameters()]
        run = dg.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        results.append([_np(g) for _ in range(3) for g in run(rng.standard_normal((4, 3)))]
                       + [_np(p.grad) for p in model.parameters()])
    for a, b in zip(*results):
        _same(a, b)


# ---------------------------------------------------------------- what the recording reads


SCALE = 2.0


def test_a_global_number_read_by_fn_is_guarded():
    global SCALE
    fast = dg.compile(lambda x: x * SCALE)
    assert fast(np.ones(2)).numpy().tolist() == [2.0, 2.0]
    SCALE = 3.0
    try:
        assert fast(np.ones(2)).numpy().tolist() == [3.0, 3.0]
    finally:
        SCALE = 2.0


def test_a_closed_over_number_is_guarded():
    lr = 0.5

    def step(x):
        return x * lr
    fast = dg.compile(step)
    fast(np.ones(2))
    lr = 0.25
    assert fast(np.ones(2)).numpy().tolist() == [0.25, 0.25]


def test_a_numpy_global_random_draw_raises_at_the_recording():
    fast = dg.compile(lambda x: x * np.random.rand())
    with pytest.raises(RuntimeError, match="global generator"):
        fast(np.ones(2))



_W_IN, _W_OUT = (dg.tensor(np.random.default_rng(5).standard_normal(s)) for s in ((12, 4), (4, 4)))


@pytest.mark.parametrize("op", [
    lambda x: F.fractional_max_pool2d(x.reshape(2, 2, 9, 7), 2, output_size=3, return_indices=True),
    lambda x: F.fractional_max_pool3d(x.reshape(1, 1, 7, 6, 6), 2, output_size=3),
    lambda x: F.multi_head_attention_forward(x.reshape(21, 3, 4), x.reshape(21, 3, 4), x.reshape(21, 3, 4),
                                             4, 2, _W_IN, None, None, None, False, 0.5, _W_OUT, None),
    lambda x: F.scaled_dot_product_attention(x.reshape(21, 12), x.reshape(21, 12), x.reshape(21, 12),
                                             dropout_p=0.5),
], ids=["fractional_max_pool2d", "fractional_max_pool3d", "multi_head_attention_forward dropout",
        "scaled_dot_product_attention dropout"])
def test_an_op_drawing_from_the_default_generator_draws_again_on_a_replay(op):
    # the samples of fractional pooling and the dropout of attention, drawn by the op itself:
    # with the generator seeded alike, a replay on new values is the eager call
    fast = dg.compile(op)
    fast(dg.tensor(np.random.default_rng(0).standard_normal(252)))
    for seed in (1, 2):
        x = dg.tensor(np.random.default_rng(seed).standard_normal(252))
        dg.manual_seed(seed)
        want = op(x)
        dg.manual_seed(seed)
        got = fast(x)
        for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
            _same(_np(g), _np(w))
    dg.manual_seed(1)
    a = _np(op(x)[0])
    dg.manual_seed(2)
    assert not np.array_equal(a, _np(op(x)[0])), "the draws do not depend on the seed"

# ---------------------------------------------------------------- in-place operations


def _twins(make, calls, compiled_args=None):
    """Run ``make()``'s step eagerly and compiled over ``calls`` (a list of argument
    makers); returns both runs' outputs as arrays, for bit comparison."""
    runs = []
    for compiled in (False, True):
        step, state = make()
        run = dg.compile(step) if compiled else step
        outs = []
        for mk in calls:
            r = run(*mk())
            outs += [_np(x) for x in (r if isinstance(r, (tuple, list)) else [r])]
        outs += [_np(x) for x in state()]
        runs.append(outs)
    assert len(runs[0]) == len(runs[1])
    for a, b in zip(*runs):
        _same(a, b)


def test_sgd_written_with_in_place_ops_under_no_grad_trains_as_eagerly():
    def make():
        m = nn.Linear(3, 2)
        m.weight.data = np.linspace(-1, 1, 6).reshape(m.weight.shape)
        m.bias.data = np.array([0.1, -0.2])

        def step(X):
            loss = (m(X) ** 2).sum()
            m.zero_grad()
            loss.backward()
            with dg.no_grad():
                for p in m.parameters():
                    p -= 0.01 * p.grad
            return loss
        return step, lambda: [p for p in m.parameters()]
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3)) for _ in range(5)]
    _twins(make, [lambda x=x: (dg.tensor(x),) for x in xs])


def test_setitem_into_a_tensor_made_in_the_step():
    w = dg.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def make():
        def step(x):
            h = dg.zeros(3, dtype=dg.float64)
            h[0] = x.sum()
            h[1:] = x[:2] * 2
            loss = (h * w).sum()
            w.grad = None
            loss.backward()
            return loss, h, w.grad
        return step, lambda: []
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(4) for _ in range(4)]
    _twins(make, [lambda x=x: (dg.tensor(x),) for x in xs])


def test_in_place_ops_on_an_intermediate_and_its_view():
    def make():
        def step(x):
            h = x * 2
            v = h[0:2]
            h += 1
            h.mul_(3)
            return v.sum() + h.sum(), v
        return step, lambda: []
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal(5) for _ in range(4)]
    _twins(make, [lambda x=x: (dg.tensor(x),) for x in xs])


def test_an_in_place_write_into_an_argument_is_replayed():
    def make():
        x = dg.tensor([1.0, 2.0, 3.0])

        def step(y):
            x.add_(y)
            return x * 2
        return step, lambda: [x]
    ys = [np.full(3, k * 0.5) for k in range(4)]
    _twins(make, [lambda y=y: (dg.tensor(y),) for y in ys])


def test_a_batch_norm_in_training_updates_its_running_statistics_every_call():
    def make():
        bn = nn.BatchNorm1d(3)

        def step(x):
            return bn(x).sum()
        return step, lambda: [bn.running_mean, bn.running_var, bn.num_batches_tracked]
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((5, 3)) for _ in range(4)]
    _twins(make, [lambda x=x: (dg.tensor(x),) for x in xs])


def test_a_batch_norm_with_a_cumulative_average_updates_every_call():
    def make():
        bn = nn.BatchNorm1d(3, momentum=None)

        def step(x):
            return bn(x).sum()
        return step, lambda: [bn.running_mean, bn.running_var, bn.num_batches_tracked]
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((5, 3)) for _ in range(4)]
    _twins(make, [lambda x=x: (dg.tensor(x),) for x in xs])


def test_a_broadcast_times_a_number_keeps_the_broadcast_shape():
    fast = dg.compile(lambda x: x.broadcast_to((2, 4, 3)) * 1.5)
    for k in range(3):
        a = np.random.default_rng(k).standard_normal((2, 1, 3))
        _same(_np(fast(a)), _np(dg.tensor(a).broadcast_to((2, 4, 3)) * 1.5))


def test_a_replay_failing_after_an_in_place_write_into_a_parameter_undoes_it():
    w = dg.tensor([1.0, 2.0, 3.0])

    def step(x, y):
        with dg.no_grad():
            w.add_(x)
        return F.cross_entropy(w.reshape(1, 3), y)   # checks the label after the write
    fast = dg.compile(step)
    fast(dg.tensor([0.5, 0.5, 0.5]), np.array([1]))
    fast(dg.tensor([0.5, 0.5, 0.5]), np.array([2]))
    before = w.numpy().copy()
    with pytest.raises((IndexError, ValueError)):
        fast(dg.tensor([0.5, 0.5, 0.5]), np.array([7]))
    assert fast.traces == 1
    _same(w.numpy(), before)


def test_a_conv_whose_padding_changes_records_again():
    conv = nn.Conv2d(1, 2, 3, padding=1)
    fast = dg.compile(lambda x: conv(x))
    x = np.random.default_rng(0).standard_normal((1, 1, 5, 5))
    fast(x)
    conv.padding = (0, 0)
    _same(_np(fast(x)), _np(conv(dg.tensor(x))))


# ---------------------------------------------------------------- attributes read by fn (issue 32)
# A module's `.training` read anywhere while recording, and the plain attributes fn's code
# reads on objects from its globals, closure or `self`, are guarded: each call below equals
# the same function run eagerly after the change.


def _check(fn, x, flips):
    """Call ``dg.compile(fn)`` and ``fn`` alike before and after each of ``flips`` (a
    function changing what fn reads) and compare bit for bit: each flip records again
    (once), and the second call after it replays."""
    fast = dg.compile(fn)
    for flip in (None, *flips):
        if flip is not None:
            flip()
        for _ in range(2):
            _same(_np(fast(x)), _np(fn(x)))
    assert fast.traces == 1 + len(flips)
    return fast


X3 = dg.tensor([1.0, 2.0, 3.0])


def test_a_module_flag_read_by_fn_itself_is_guarded():
    drop = nn.Dropout(0.5)
    fast = _check(lambda x: x.sum() * (3.0 if drop.training else 1.0), X3,
                  [drop.eval, drop.train])
    assert fast(X3).item() == 18.0


def test_the_issue_snippets_give_the_eager_answer():
    x = dg.tensor(np.ones(3))
    drop = nn.Dropout(0.5)
    h = dg.compile(lambda x: x.sum() * (3.0 if drop.training else 1.0))
    assert h(x).item() == 9.0
    drop.eval()
    assert h(x).item() == 3.0

    class Cfg:
        scale = 2.0
    cfg = Cfg()
    g = dg.compile(lambda x: (x * cfg.scale).sum())
    assert g(x).item() == 6.0
    cfg.scale = 5.0
    assert g(x).item() == 15.0


def test_a_module_flag_read_by_a_custom_call_is_guarded():
    class Gate:                       # a plain object with its own __call__
        def __init__(self):
            self.inner = nn.Dropout(0.2)
            self.on = True

        def __call__(self, x):
            return x * (2.0 if self.on else 1.0) * (5.0 if self.inner.training else 1.0)
    gate = Gate()

    def off():
        gate.on = False

    def swap():
        gate.inner = nn.Dropout(0.3)   # another module, in training mode
    _check(lambda x: gate(x).sum(), X3, [gate.inner.eval, off, swap])


def test_a_module_with_a_call_of_its_own_is_guarded():
    class Scaled(nn.Module):          # bypasses Module.__call__
        def __init__(self):
            self.alpha = 2.0
            self.lin = nn.Linear(3, 2, rng=0)

        def __call__(self, x):
            y = self.lin.forward(x)
            return y * (self.alpha if self.training else 1.0)
    m = Scaled()

    def alpha():
        m.alpha = 4.0
    _check(lambda x: m(x).sum(), X3, [m.eval, m.train, alpha])


def test_a_flag_of_a_module_in_a_container_read_in_a_helper_is_guarded():
    net = nn.Sequential(nn.Linear(3, 3, rng=0), nn.Dropout(0.5), nn.Linear(3, 1, rng=1))

    def mode_factor():
        return 3.0 if net[1].training else 1.0

    def step(x):
        return net[0](x).sum() * mode_factor()
    _check(step, X3, [net.eval, net.train, lambda: net[1].eval()])


def test_a_config_objects_attributes_are_guarded():
    class Opts:
        power = 2.0

    class Cfg:
        pass
    cfg = Cfg()
    cfg.scale = 2.0
    cfg.opts = Opts()
    cfg.name = "a"

    def step(x):
        y = x * cfg.scale + x ** cfg.opts.power
        return y.sum() if cfg.name == "a" else y.mean()

    def scale():
        cfg.scale = -1.5

    def power():
        cfg.opts.power = 3.0

    def replace():
        cfg.opts = Opts()             # power 2.0 again: the object on the way is guarded

    def cls():
        Opts.power = 1.0              # a class attribute, read through the new instance

    def name():
        cfg.name = "b"
    _check(step, X3, [scale, power, replace, cls, name])


def test_a_class_used_as_a_config_and_a_dict_entry_are_guarded():
    class Cfg:
        scale = 2.0
    table = {"shift": 1.0}

    def step(x):
        return (x * Cfg.scale + table["shift"]).sum()

    def scale():
        Cfg.scale = 3.0

    def shift():
        table["shift"] = -4.0
    _check(step, X3, [scale, shift])


CONFIG = type("Config", (), {"lr": 0.5})()


def _global_step(x):
    return (x * CONFIG.lr).sum()


def test_a_global_objects_attribute_and_the_global_itself_are_guarded():
    global CONFIG
    keep = CONFIG

    def lr():
        CONFIG.lr = 0.25

    def rebind():
        global CONFIG
        CONFIG = type("Config", (), {"lr": 8.0})()
    try:
        _check(_global_step, X3, [lr, rebind])
    finally:
        CONFIG = keep


def test_a_compiled_bound_method_guards_its_own_attributes():
    class Trainer:
        def __init__(self):
            self.scale = 2.0
            self.model = nn.Dropout(0.5, rng=np.random.default_rng(0))

        def step(self, x):
            return (x * self.scale).sum() * (2.0 if self.model.training else 1.0)
    t = Trainer()

    def scale():
        t.scale = 7.0
    _check(t.step, X3, [scale, t.model.eval])


def test_unchanged_attributes_replay_without_recording_again():
    class Cfg:
        scale = 2.0
    cfg = Cfg()
    drop = nn.Dropout(0.5)
    fast = dg.compile(lambda x: (x * cfg.scale).sum() * (2.0 if drop.training else 1.0))
    for _ in range(5):
        assert fast(X3).item() == 24.0
    assert fast.traces == 1
    program = next(iter(fast.programs.values()))
    assert any(name == "scale" for _, name, _ in program.values_read)
    assert any(name == "training" for _, name, _ in program.attrs)


def test_a_config_reached_through_a_local_variable_is_guarded():
    class Opts:
        def __init__(self, k):
            self.k = k
    holder = type("Holder", (), {})()
    holder.opts = Opts(2.0)

    def step(x):
        opts = holder.opts              # the chain goes on through the local name
        return (x * opts.k).sum()

    def k():
        holder.opts.k = -3.0

    def replace():
        holder.opts = Opts(5.0)
    _check(step, X3, [k, replace])


def test_a_function_in_a_dict_entry_is_scanned():
    holder = type("Holder", (), {"shift": 1.0})()
    table = {"fn": lambda y: y + holder.shift}

    def step(x):
        return table["fn"](x).sum()

    def shift():
        holder.shift = -2.5

    def swap():
        table["fn"] = lambda y: y * 4.0
    _check(step, X3, [shift, swap])


def test_kl_div_where_the_zeros_of_the_target_move_is_the_eager_call():
    # the target's zeros (a term of 0 there) are a comparison primitive, not a recorded mask
    fast = dg.compile(lambda x, t: F.kl_div(x, t, reduction="none"))
    x = dg.tensor([-1.0, -2.0, -0.5])
    fast(x, dg.tensor([0.5, 0.0, 0.5]))
    t = dg.tensor([0.0, 0.5, 0.5])
    _same(_np(fast(x, t)), _np(F.kl_div(x, t, reduction="none")))
    assert _np(fast(x, t))[0] == 0.0


def test_a_bool_attention_mask_given_as_an_argument_is_read_every_call():
    fast = dg.compile(lambda q, m: F.scaled_dot_product_attention(q, q, q, attn_mask=m))
    q = dg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    fast(q, dg.tensor(np.tril(np.ones((4, 4), bool))))
    m = dg.tensor(np.eye(4, dtype=bool))
    _same(_np(fast(q, m)), _np(F.scaled_dot_product_attention(q, q, q, attn_mask=m)))
    _same(_np(fast(q, m)), _np(q))  # each query attends to itself alone
