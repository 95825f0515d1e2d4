"""The optimizer inside the program (issue 21, part 2): in a compiled step, ``opt.step()``
of SGD, Adam, AdamW and RMSprop is one instruction of the program (``optim.foreach``),
not a host step, and every call equals the same step run eagerly, bit for bit: losses,
parameters, gradients and optimizer state. The truth is an eager twin (the same model,
optimizer and data); ``tests/nn_optim`` holds the eager optimizers to ``torch.optim``."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from duograd.nn import functional as F
from duograd.optim import foreach, lr_scheduler
from bitwise import as_numpy as _np, same as _same, same_snapshot as _same_snap, snapshot as _snap


def _twins(make_opt, dtype=np.float64, sched=None):
    """Two identical (model, optimizer, schedule, step function) setups."""
    out = []
    for _ in range(2):
        model = nn.MLP(3, [5, 4], rng=0)
        if dtype != np.float64:
            for p in model.parameters():
                p.data = p._data.astype(dtype)
        opt = make_opt(model)
        s = sched(opt) if sched is not None else None

        def step(X, y, model=model, opt=opt, s=s):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            if s is not None and getattr(s, "inside", False):
                s.step()
            return loss
        out.append((model, opt, s, step))
    return out


def _data(n, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((6, 3)).astype(dtype), rng.integers(0, 4, 6)) for _ in range(n)]


def _roles(fast):
    (program,) = fast.programs.values()
    return [(ins.role, ins.label) for ins in program.instructions if ins.role in ("host", "update")]


def _run_twins(make_opt, steps=50, dtype=np.float64, sched=None, between=None):
    (m1, o1, s1, eager), (m2, o2, s2, step) = _twins(make_opt, dtype, sched)
    fast = dg.compile(step)
    for i, (X, y) in enumerate(_data(steps, dtype)):
        _same(_np(eager(dg.tensor(X), y)), _np(fast(X, y)))
        _same_snap(_snap(m1, o1), _snap(m2, o2))
        if between is not None:
            between(i, o1, s1)
            between(i, o2, s2)
    return fast, o2


CASES = {
    "Adam": lambda m: optim.Adam(m.parameters(), lr=0.01),
    "Adam weight_decay": lambda m: optim.Adam(m.parameters(), lr=0.01, weight_decay=0.1),
    "Adam maximize": lambda m: optim.Adam(m.parameters(), lr=0.01, maximize=True),
    "AdamW": lambda m: optim.AdamW(m.parameters(), lr=0.01, weight_decay=0.1),
    "SGD": lambda m: optim.SGD(m.parameters(), lr=0.1, weight_decay=0.01),
    "SGD momentum": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
    "SGD momentum dampening": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9,
                                                  dampening=0.2, weight_decay=0.01),
    "SGD nesterov": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True),
    "RMSprop": lambda m: optim.RMSprop(m.parameters(), lr=0.01),
    "RMSprop centered momentum": lambda m: optim.RMSprop(m.parameters(), lr=0.01, centered=True,
                                                         momentum=0.9, weight_decay=0.01),
    "RMSprop maximize": lambda m: optim.RMSprop(m.parameters(), lr=0.01, momentum=0.5, maximize=True),
    "two groups": lambda m: optim.Adam([{"params": list(m.parameters())[:2], "lr": 0.02},
                                        {"params": list(m.parameters())[2:], "weight_decay": 0.1}], lr=0.01),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fifty_compiled_steps_equal_eager_bit_for_bit_with_no_host_step(name, monkeypatch):
    runs = []
    run = foreach.FlatUpdate.run
    monkeypatch.setattr(foreach.FlatUpdate, "run", lambda self: runs.append(1) or run(self))
    fast, opt = _run_twins(CASES[name])
    assert fast.traces == 1
    label = "Adam.step" if isinstance(opt, optim.Adam) else f"{type(opt).__name__}.step"
    assert _roles(fast) == [("update", label)]
    assert len(runs) == 49  # every replay ran the update as program kernels


def test_float32_parameters_step_bit_for_bit():
    fast, _ = _run_twins(CASES["Adam"], steps=20, dtype=np.float32)
    assert fast.traces == 1


def test_a_scheduler_stepped_between_calls_is_seen_without_a_new_recording():
    def between(i, opt, s):
        s.step()
    fast, opt = _run_twins(lambda m: optim.SGD(m.parameters(), lr=0.5, momentum=0.9),
                           sched=lambda o: lr_scheduler.StepLR(o, step_size=5, gamma=0.5),
                           between=between)
    assert fast.traces == 1
    assert opt.lr == 0.5 * 0.5 ** 10


def test_a_scheduler_stepped_inside_the_compiled_step():
    def sched(o):
        s = lr_scheduler.LambdaLR(o, lambda epoch: 1.0 / (1 + epoch))
        s.inside = True
        return s
    fast, opt = _run_twins(lambda m: optim.Adam(m.parameters(), lr=0.05), sched=sched)
    assert fast.traces == 1
    assert [r for r, _ in _roles(fast)] == ["update", "host"]  # the schedule: a host step
    assert opt.lr == 0.05 / 51


def test_an_lr_changed_by_hand_between_calls_is_seen_without_a_new_recording():
    def between(i, opt, s):
        opt.lr = 0.01 * (1 + i % 3)
        opt.param_groups[0]["betas"] = (0.9 - 0.01 * (i % 2), 0.999)
    fast, _ = _run_twins(CASES["Adam"], steps=12, between=between)
    assert fast.traces == 1


@pytest.mark.parametrize("change", ["momentum", "nesterov", "weight_decay", "maximize"])
def test_a_structural_change_records_again_and_stays_bit_for_bit(change):
    def between(i, opt, s):
        if i == 4:
            g = opt.param_groups[0]
            if change == "nesterov":
                g["momentum"], g["nesterov"] = 0.9, True
            elif change == "momentum":
                g["momentum"] = 0.9
            elif change == "weight_decay":
                g["weight_decay"] = 0.1
            else:
                g["maximize"] = True
    fast, _ = _run_twins(lambda m: optim.SGD(m.parameters(), lr=0.1), steps=10, between=between)
    assert fast.traces == 2


def test_an_lr_set_inside_the_step_from_a_number_argument_is_set_again_by_each_replay():
    twins = []
    for _ in range(2):
        model = nn.MLP(3, [5, 4], rng=0)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(X, y, lr, model=model, opt=opt):
            opt.lr = lr
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss
        twins.append((model, opt, step))
    (m1, o1, eager), (m2, o2, step) = twins
    fast = dg.compile(step)
    for i, (X, y) in enumerate(_data(10)):
        lr = [0.1, 0.05, 0.1, 0.02][i % 4]
        _same(_np(eager(dg.tensor(X), y, lr)), _np(fast(X, y, lr)))
        _same_snap(_snap(m1, o1), _snap(m2, o2))


def test_a_parameter_added_to_the_optimizer_records_again():
    extra = []

    def between(i, opt, s):
        if i == 3:
            t = dg.zeros(2, requires_grad=True)
            extra.append(t)
            opt.add_param_group({"params": [t]})
    fast, _ = _run_twins(CASES["Adam"], steps=6, between=between)
    assert fast.traces == 2


def _planted_failure(make_opt):
    """A compiled step whose replay fails after the optimizer's update (labels out of
    range read after it), and its eager twin."""
    twins = []
    for _ in range(2):
        model = nn.MLP(3, [5, 4], rng=0)
        opt = make_opt(model)

        def step(X, y, y_after, model=model, opt=opt):
            opt.zero_grad()
            F.cross_entropy(model(X), y).backward()
            opt.step()
            return F.cross_entropy(model(X), y_after)
        twins.append((model, opt, step))
    return twins


@pytest.mark.parametrize("name", ["Adam", "SGD momentum", "RMSprop centered momentum"])
def test_a_replay_failing_after_the_update_rolls_everything_back(name):
    (m1, o1, eager), (m2, o2, step) = _planted_failure(CASES[name])
    fast = dg.compile(step)
    data = _data(8)
    for X, y in data[:3]:
        _same(_np(eager(dg.tensor(X), y, y)), _np(fast(X, y, y.copy())))
    assert [r for r, _ in _roles(fast)] == ["update"]
    before = _snap(m2, o2)
    with pytest.raises((IndexError, ValueError)):
        fast(data[3][0], data[3][1], np.array([0, 1, 2, 3, 9, 0]))
    assert fast.traces == 1  # a failed replay, not a new recording
    _same_snap(before, _snap(m2, o2))
    for X, y in data[4:]:  # and the next calls continue as the twin that never failed
        _same(_np(eager(dg.tensor(X), y, y)), _np(fast(X, y, y.copy())))
        _same_snap(_snap(m1, o1), _snap(m2, o2))
    assert fast.traces == 1


def test_a_failure_after_the_update_and_a_schedule_inside_the_step_rolls_back_both():
    twins = []
    for _ in range(2):
        model = nn.MLP(3, [5, 4], rng=0)
        opt = optim.Adam(model.parameters(), lr=0.05)
        sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(X, y, y_after, model=model, opt=opt, sched=sched):
            opt.zero_grad()
            F.cross_entropy(model(X), y).backward()
            opt.step()
            sched.step()
            return F.cross_entropy(model(X), y_after)
        twins.append((model, opt, step))
    (m1, o1, eager), (m2, o2, step) = twins
    fast = dg.compile(step)
    data = _data(7)
    for X, y in data[:3]:
        _same(_np(eager(dg.tensor(X), y, y)), _np(fast(X, y, y.copy())))
    before = _snap(m2, o2)
    with pytest.raises((IndexError, ValueError)):
        fast(data[3][0], data[3][1], np.array([0, 1, 2, 3, 9, 0]))
    _same_snap(before, _snap(m2, o2))
    for X, y in data[4:]:
        _same(_np(eager(dg.tensor(X), y, y)), _np(fast(X, y, y.copy())))
        _same_snap(_snap(m1, o1), _snap(m2, o2))
    assert fast.traces == 1


def test_two_steps_of_one_optimizer_in_one_compiled_step():
    twins = []
    for _ in range(2):
        model = nn.MLP(3, [5, 4], rng=0)
        opt = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)

        def step(X, y, model=model, opt=opt):
            for _ in range(2):
                opt.zero_grad()
                F.cross_entropy(model(X), y).backward()
                opt.step()
        twins.append((model, opt, step))
    (m1, o1, eager), (m2, o2, step) = twins
    fast = dg.compile(step)
    for X, y in _data(6):
        eager(dg.tensor(X), y)
        fast(X, y)
        _same_snap(_snap(m1, o1), _snap(m2, o2))
    assert [r for r, _ in _roles(fast)] == ["update", "update"]


def test_state_loaded_between_calls_is_taken_over():
    saved = {}

    def between(i, opt, s):
        if i == 5:
            saved[id(opt)] = opt.state_dict()
        if i == 9:
            opt.load_state_dict(saved[id(opt)])   # back to step 6's state
    fast, _ = _run_twins(CASES["Adam"], steps=14, between=between)
    assert fast.traces == 1


def test_eager_steps_between_compiled_calls_share_the_state():
    (m1, o1, _, eager1), (m2, o2, _, step) = _twins(CASES["SGD momentum"])
    fast = dg.compile(step)
    for i, (X, y) in enumerate(_data(12)):
        eager1(dg.tensor(X), y)
        if i % 3 == 2:
            step(dg.tensor(X), y)       # eagerly, on the compiled function's state
        else:
            fast(X, y)
        _same_snap(_snap(m1, o1), _snap(m2, o2))


def test_gradients_set_outside_the_step_and_a_missing_one():
    """The step reads .grad it did not write: a missing gradient skips that parameter,
    and one that the recording did not see is used, as eagerly (such a call runs the
    eager step)."""
    twins = []
    for _ in range(2):
        model = nn.Linear(3, 2, rng=0)
        opt = optim.Adam(model.parameters(), lr=0.1)
        twins.append((model, opt, lambda opt=opt: opt.step()))
    (m1, o1, eager), (m2, o2, step) = twins
    fast = dg.compile(step)
    rng = np.random.default_rng(1)
    for i in range(8):
        gw, gb = rng.standard_normal((2, 3)), rng.standard_normal(2)
        for m in (m1, m2):
            m.weight.grad = dg.tensor(gw)
            m.bias.grad = None if i in (0, 4) else dg.tensor(gb)  # none when recorded, too
        eager()
        fast()
        _same_snap(_snap(m1, o1), _snap(m2, o2))
    assert fast.traces == 1


def test_an_optimizer_of_an_argument_tensor_stays_a_host_step():
    twins = []
    for _ in range(2):
        w = dg.tensor([1.0, -2.0], requires_grad=True)
        opt = optim.SGD([w], lr=0.1, momentum=0.9)

        def step(w, opt=opt):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        twins.append((w, opt, step))
    (w1, _, eager), (w2, _, step) = twins
    fast = dg.compile(step)
    for _ in range(4):
        eager(w1)
        fast(w2)
        _same(w1._data, w2._data)
    assert [r for r, _ in _roles(fast)] == ["host"]


def test_a_parameter_shared_with_numpy_keeps_sharing_its_array():
    arr = np.array([[1.0, -2.0], [0.5, 3.0]])
    w = dg.from_numpy(arr)
    w.requires_grad = True
    opt = optim.Adam([w], lr=0.1)

    def step(X):
        opt.zero_grad()
        (dg.tensor(X) @ w).pow(2).sum().backward()
        opt.step()
    fast = dg.compile(step)
    twin = np.array(arr)
    tw = dg.tensor(twin, requires_grad=True)
    topt = optim.Adam([tw], lr=0.1)
    for _ in range(5):
        X = np.ones((3, 2))
        fast(X)
        topt.zero_grad()
        (dg.tensor(X) @ tw).pow(2).sum().backward()
        topt.step()
        assert w._data is arr
        _same(arr, tw._data)


def test_the_version_of_a_parameter_goes_up_at_each_compiled_step():
    model = nn.Linear(2, 1, rng=0)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(X):
        opt.zero_grad()
        model(X).sum().backward()
        opt.step()
    fast = dg.compile(step)
    versions = []
    for _ in range(4):
        fast(np.ones((3, 2)))
        versions.append(model.weight._version)
    assert versions == sorted(set(versions))


def test_recheck_every_with_the_optimizer_in_the_program():
    (m1, o1, _, eager), (m2, o2, _, step) = _twins(CASES["AdamW"])
    fast = dg.compile(step, recheck_every=3)
    for X, y in _data(12):
        _same(_np(eager(dg.tensor(X), y)), _np(fast(X, y)))
        _same_snap(_snap(m1, o1), _snap(m2, o2))
    assert fast.traces == 1


@pytest.mark.parametrize("make", [lambda m: optim.Adagrad(m.parameters(), lr=0.1),
                                  lambda m: optim.Adamax(m.parameters(), lr=0.01),
                                  lambda m: optim.NAdam(m.parameters(), lr=0.01)])
def test_the_other_optimizers_stay_host_steps(make):
    fast, _ = _run_twins(make, steps=6)
    assert [r for r, _ in _roles(fast)] == ["host"]
