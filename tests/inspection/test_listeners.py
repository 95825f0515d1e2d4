"""The listener stack of ``duograd._context``: every tool that watches the engine at once.

Capture (``dg.compile``), anomaly mode, hooks, ``record_locations`` and ``explain`` are
each a listener; nested, each must see exactly what it sees alone. The truth for the
compiled results is the eager step with no listener at all, bit for bit; for the other
listeners, the same listener alone in the same compiled step.
"""

from __future__ import annotations

import contextlib
import gc
import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import _context, anomaly

ALL = frozenset({"capture", "anomaly", "hooks", "locations", "explain"})


def _params():
    rng = np.random.default_rng(0)
    return (dg.tensor(rng.standard_normal((3, 4)), requires_grad=True),
            dg.tensor(rng.standard_normal((4, 2)), requires_grad=True))


def _run(on: frozenset, calls: int = 3, bad: bool = False):
    """Three calls of one training step with the listeners ``on`` (capture: through
    dg.compile) and what each listener saw."""
    W1, W2 = _params()
    seen: dict = {"hooks": [], "locations": [], "explain": [], "results": []}

    def step(x):
        W1.grad = W2.grad = None
        with contextlib.ExitStack() as stack:
            if "anomaly" in on:
                stack.enter_context(dg.detect_anomaly())
            if "locations" in on:
                stack.enter_context(anomaly.record_locations())
            h = x @ W1
            if "hooks" in on:
                h.register_hook(lambda g: seen["hooks"].append(g._data.copy()))
            h2 = dg.checkpoint(lambda t: t.tanh() @ W2, h)   # a checkpointed block
            loss = (h2 * h2).sum()
            if bad:
                loss = loss + (h2 * 0.0).sum().sqrt()       # sqrt'(0): inf in the backward
            if "explain" in on:
                seen["explain"].append([(r["op"], r["shape"], r["grad_norm"], r["summed_axes"])
                                        for r in dg.explain(loss).rows])
            loss.backward()
            if "locations" in on:
                seen["locations"].append([anomaly.where_of(t) for t in (h, h2, loss)])
        return loss

    run = dg.compile(step) if "capture" in on else step
    xs = np.random.default_rng(1).standard_normal((calls, 5, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the hook reads a value while recording
        for x in xs:
            loss = run(x)
            seen["results"].append([loss.detach().numpy().copy(), W1.grad.numpy().copy(),
                                    W2.grad.numpy().copy()])
    if "capture" in on:
        program = next(iter(run.programs.values()))
        seen["capture"] = (run.traces, [ins.label for ins in program.instructions]
                           if program.code else None)
    del loss, run, step
    gc.collect()  # (the hooked tensors die with their graph: the hooks' listener goes too)
    assert not _context.stack(), "every listener is off the stack afterwards"
    return seen


def test_every_listener_nested_in_one_compiled_step_sees_what_it_sees_alone():
    everything = _run(ALL)
    eager = _run(frozenset())
    for got, want in zip(everything["results"], eager["results"]):  # capture: bit for bit
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    alone = {name: _run(frozenset({name} | {"capture"})) for name in ALL - {"capture"}}
    alone["capture"] = _run(frozenset({"capture"}))
    assert everything["capture"] == alone["capture"]["capture"]   # the same program
    assert everything["capture"][0] == 1
    for name in ("hooks", "locations", "explain"):
        assert len(everything[name]) == 1 == len(alone[name][name])  # the recording call only
    for a, b in zip(everything["hooks"], alone["hooks"]["hooks"]):
        np.testing.assert_array_equal(a, b)
    assert everything["locations"] == alone["locations"]["locations"]
    h_at, _, loss_at = everything["locations"][0]  # (a checkpoint's node is made by no call)
    assert "test_listeners.py:" in h_at and "test_listeners.py:" in loss_at
    assert everything["explain"] == alone["explain"]["explain"]
    assert "checkpoint" in [op for op, *_ in everything["explain"][0]]
    for name in ("hooks", "locations", "explain"):  # alone (eagerly) too
        assert len(_run(frozenset({name}), calls=1)[name]) == 1


def test_anomaly_nested_with_every_listener_finds_the_same_nan_as_alone():
    errors = []
    for on in (frozenset({"capture", "anomaly"}), ALL):
        with np.errstate(all="ignore"), pytest.raises(dg.AnomalyError) as info:
            _run(on, calls=1, bad=True)
        errors.append((info.value.op, info.value.pass_, info.value.input, info.value.where))
        del info
        gc.collect()
        assert not _context.stack()
    assert errors[0] == errors[1] and errors[0][:2] == ("sqrt", "backward")


def test_explain_grad_norm_of_a_node_used_several_times_is_the_norm_of_the_summed_cotangent():
    """x is used three times; its cotangent is the sum over the uses (a bug that kept only
    the last use's cotangent gives 3 or 1 instead of 6)."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0                               # one node, used three times below
    loss = (y + y * 3.0 + y.exp()).sum()
    rows = {r["op"]: r for r in dg.explain(loss).rows}
    summed = 1.0 + 3.0 + np.exp([2.0, 4.0])   # d loss / d y, over all three uses
    np.testing.assert_allclose(rows["mul"]["grad_norm"], float(np.linalg.norm(summed)), rtol=1e-15)
    leaf = [r for r in dg.explain(loss).rows if r["op"] == "leaf"][0]
    np.testing.assert_allclose(leaf["grad_norm"], float(np.linalg.norm(2 * summed)), rtol=1e-15)
    assert x.grad is None


def test_explain_fires_no_hook_and_writes_no_grad_while_hooks_and_anomaly_are_on():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    fired = []
    y.register_hook(lambda g: fired.append(1))
    y.retain_grad()
    with dg.detect_anomaly():
        dg.explain((y * y).sum())
    assert fired == [] and y.grad is None and x.grad is None


def test_listeners_are_called_bottom_first_and_come_off_wherever_they_are():
    order = []

    class L:
        def __init__(self, name):
            self.name = name

        def on_call(self, call):
            order.append(self.name)

    gc.collect()
    a, b = L("a"), L("b")
    with _context.listening(a), _context.listening(b):
        dg.tensor([1.0]) * 2
        _context.remove(a)
        dg.tensor([1.0]) * 2
    assert order == ["a", "b", "b"] and not _context.stack() and not _context.watching


def test_anomaly_checks_what_a_hook_returned_even_when_the_hook_came_later():
    """Hooks sit at the bottom of the stack: a hook registered inside detect_anomaly() still
    runs before anomaly mode's check of the arriving gradient."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.detect_anomaly():
        y = x * 3.0
        y.register_hook(lambda g: g * np.nan)
        with pytest.raises(dg.AnomalyError) as info:
            (y * y).sum().backward()
    e = info.value
    assert (e.op, e.pass_, e.input) == ("mul", "backward", None), str(e)
    assert "before any rule ran on it" in str(e)


def test_a_recording_started_inside_a_host_step_sees_its_calls_while_the_outer_one_does_not():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    inner = []

    @dg.autograd.host
    def host_step():
        with dg.autograd.trace() as calls:
            (x * 2).sum()
        inner.append([op.name for op, *_ in calls])

    def step(a):
        y = (x * a).sum()
        host_step()
        return y

    fast = dg.compile(step)
    fast(np.ones(2))
    assert inner == [["mul", "sum"]]
    program = next(iter(fast.programs.values()))
    program.code  # (finished)
    assert [ins.op.name for ins in program.instructions if ins.op is not None] == ["mul", "sum"]
