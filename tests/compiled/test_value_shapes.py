"""``dg.compile`` where a result's shape depends on the values, and where a step changes a
tensor's shape or returns a tensor made from an argument: every compiled call equals the
eager call on the same inputs (the eager engine is the truth, checked against torch and
finite differences elsewhere).

A bool mask in a subscript, ``masked_select``, ``nonzero``, ``unique`` and ``bincount``
select as many elements as the values say. A replay computes the selection again and
checks its size; when the size differs from the recording's, it is abandoned (nothing
written, the generators put back) and the call is recorded again.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import nn


def _same(a, b) -> None:
    a, b = np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy())
    assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b), (a, b)


VALUES = [[1.0, -2.0, 3.0], [-1.0, 2.0, 3.0], [-1.0, 2.0, 4.0], [1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]]


@pytest.mark.parametrize("select", ["mask argument", "mask computed", "masked_select", "nonzero"])
def test_a_selection_follows_the_values_and_its_gradient_too(select):
    def step(x, m):
        if select == "mask argument":
            y = x[m]
        elif select == "mask computed":
            y = x[x > 0]
        elif select == "masked_select":
            y = dg.masked_select(x, x > 0)
        else:
            y = x[dg.nonzero(x > 0, as_tuple=True)]
        loss = (y * y * y).sum()
        loss.backward()
        return loss, x.grad
    fast = dg.compile(step)
    for v in VALUES + VALUES[::-1]:
        m = dg.tensor(np.asarray(v) > 0)
        xs = [dg.tensor(v, requires_grad=True) for _ in range(2)]
        got, want = fast(xs[0], m), step(xs[1], m)
        for g, w in zip(got, want):
            _same(g, w)
    # the same count replays (calls 2 and 3 select two elements each); a new count records
    assert fast.traces < 2 * len(VALUES)


def test_an_abandoned_replay_puts_the_generator_back():
    def world():
        drop = nn.Dropout(0.5, rng=np.random.default_rng(3))

        def step(x):
            h = drop(x)
            return (h[h > 0] * 2.0).sum()
        return step, drop
    eager, _ = world()
    fast_step, _ = world()
    fast = dg.compile(fast_step)
    rng = np.random.default_rng(0)
    for _ in range(8):  # the count of kept positive elements changes between calls
        x = dg.tensor(rng.standard_normal(10))
        _same(fast(x), eager(x))


def test_a_returned_tensor_made_from_the_argument_is_made_again():
    fast = dg.compile(lambda y: dg.tensor(y))
    fast(dg.tensor([1.0, 2.0]))
    b = dg.tensor([3.0, 4.0])
    r = fast(b)
    assert r.tolist() == [3.0, 4.0] and r is not b
    r.add_(1.0)
    assert b.tolist() == [3.0, 4.0]  # a copy, as dg.tensor makes


@pytest.mark.parametrize("op", ["t_", "unsqueeze_", "squeeze_", "resize_"])
def test_an_in_place_shape_change_of_an_argument_is_replayed(op):
    def step(x):
        if op == "t_":
            y = x.t_()
        elif op == "unsqueeze_":
            y = x.unsqueeze_(0)
        elif op == "squeeze_":
            y = x.squeeze_()
        else:
            y = x.resize_(3, 3)
        return y * 2.0
    fast = dg.compile(step)
    rng = np.random.default_rng(1)
    shape = (1, 6) if op == "squeeze_" else (2, 3)
    for _ in range(3):
        a = rng.standard_normal(shape)
        x1, x2 = dg.tensor(a), dg.tensor(a)
        got, want = fast(x1), step(x2)
        _same(got, want)
        _same(x1, x2)  # the argument has its new shape (and values) after the call too
    assert fast.traces == 1


def test_the_xla_backend_leaves_a_value_dependent_shape_to_numpy():
    pytest.importorskip("jax")
    fast = dg.compile(lambda x: x[x > 0].sum(), backend="xla")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = fast(dg.tensor([1.0, -1.0, 2.0]))
    assert any("nonzero_along" in str(w.message) for w in caught)
    assert first.item() == 3.0 and fast(dg.tensor([1.0, 1.0, 2.0])).item() == 4.0


def test_a_selection_whose_size_alone_is_used_is_still_checked():
    def step(m, x):
        k = dg.nonzero(m).shape[0]  # (only the count reaches the result, through Python)
        return x[:k] * 1.0
    fast = dg.compile(step)
    x = dg.arange(4.0)
    for m in ([True, False, False, False], [True, True, True, False], [False] * 4):
        _same(fast(dg.tensor(m), x), step(dg.tensor(m), x))
