"""The replay as generated straight-line Python (``capture.program._generate``).

A program replays through the instruction loop (``Program._loop``) for its first
``GENERATE_AFTER`` replays and through generated code after that. The two must make the
same calls: every value, gradient, parameter and optimizer state equal to the bit, and a
failure must name the same instruction and leave everything as it was. The reference is
the eager step (a twin model), never the other replay path.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
import duograd.nn.functional as F
from duograd import nn, optim
from duograd.capture import program as capture_program


def _twins():
    """Two identical models with their Adam optimizers and a training step for each."""
    out = []
    for _ in range(2):
        model = nn.MLP(3, [8, 8, 4], rng=0)
        opt = optim.Adam(model.parameters(), lr=0.05)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(x).relu() * 1.5 + 0.25, y)
            loss.backward()
            opt.step()
            return loss
        out.append((model, opt, step))
    return out


def _state(model, opt):
    arrays = []
    for p in model.parameters():
        arrays += [p.detach().numpy(), p.grad.numpy(), opt.state[p]["exp_avg"],
                   opt.state[p]["exp_avg_sq"]]
    return arrays


@pytest.mark.parametrize("after", [0, 3])
def test_the_generated_replay_is_the_eager_step_bit_for_bit(monkeypatch, after):
    monkeypatch.setattr(capture_program, "GENERATE_AFTER", after)
    (me, oe, eager), (mc, oc, step) = _twins()
    fast = dg.compile(step)
    rng = np.random.default_rng(1)
    generated_from = None
    for call in range(8):
        x, y = rng.standard_normal((6, 3)), rng.integers(0, 4, 6)
        want, got = eager(dg.tensor(x), y), fast(dg.tensor(x), y)
        assert got.detach().numpy().tobytes() == want.detach().numpy().tobytes()
        for a, b in zip(_state(mc, oc), _state(me, oe)):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
        program = next(iter(fast.programs.values()))
        if generated_from is None and program._generated is not None:
            generated_from = call
    assert fast.traces == 1
    # call 0 records; replays 1..after run the loop; the next one generates the code
    assert generated_from == after + 1


@pytest.mark.parametrize("after", [0, 100])
def test_a_failing_replay_names_the_op_and_changes_nothing_in_both_paths(monkeypatch, after):
    monkeypatch.setattr(capture_program, "GENERATE_AFTER", after)
    model, opt, step = _twins()[0]
    fast = dg.compile(step)
    x = np.random.default_rng(0).standard_normal((5, 3))
    fast(x, np.array([0, 1, 2, 3, 0]))
    fast(x, np.array([0, 1, 2, 3, 0]))
    program = next(iter(fast.programs.values()))
    assert (program._generated is not None) == (after == 0)
    before = [np.array(a, copy=True) for a in _state(model, opt)]
    grads = [p.grad for p in model.parameters()]
    with pytest.raises(ValueError, match="cross_entropy: target 9 is out of range"):
        fast(x, np.array([0, 1, 9, 3, 0]))   # found by a kernel in the middle of the replay
    assert fast.traces == 1
    assert [p.grad for p in model.parameters()] == grads
    for a, b in zip(_state(model, opt), before):
        assert np.asarray(a).tobytes() == b.tobytes()


@pytest.mark.parametrize("after", [0, 100])
def test_a_numpy_error_in_a_replay_is_labelled_with_its_instruction(monkeypatch, after):
    """The label comes from the failing instruction: the loop knows its index, the
    generated code finds it from the traceback's line number."""
    monkeypatch.setattr(capture_program, "GENERATE_AFTER", after)
    w = dg.tensor(np.eye(3))
    fast = dg.compile(lambda x: (dg.tensor(x) @ w + 1.0).sqrt().log().sum())
    fast(np.ones((2, 3)))
    fast(np.ones((2, 3)))
    # its neighbours are the matmul and the sum: a label off by one names one of them
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match=r"^add\+sqrt\+log: .*\(in a dg.compile replay\)$"):
            fast(np.full((2, 3), -4.0))
