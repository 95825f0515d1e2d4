"""The LSTM layer's first-order backward (one NumPy primitive) against its Tensor-algebra
rule (the one a ``create_graph`` backward runs, checked to second order elsewhere): the
same arithmetic in the same order, so the gradients agree to the last bits; and a
``dg.compile`` replay of an LSTM step, whose slots are let go after their last reader,
equals the eager step bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg


def _grads(lstm, x, create_graph):
    lstm.zero_grad()
    x.grad = None
    out, (h, c) = lstm(x)
    loss = (out * out).sum() + (h * c).sum()
    gs = dg.autograd.grad(loss, [x] + list(lstm.parameters()), create_graph=create_graph)
    return [g.detach().numpy() for g in gs]


@pytest.mark.parametrize("layers,batch_first", [(1, False), (2, True)])
def test_first_order_backward_equals_the_tensor_rule(layers, batch_first):
    lstm = dg.nn.LSTM(3, 4, layers, batch_first=batch_first, rng=0)
    x = dg.tensor(np.random.default_rng(1).standard_normal((2, 5, 3)), requires_grad=True)
    fused = _grads(lstm, x, create_graph=False)
    algebra = _grads(lstm, x, create_graph=True)
    for a, b in zip(fused, algebra):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_compiled_lstm_step_equals_eager_and_stays_short():
    lstm = dg.nn.LSTM(3, 4, 2, rng=0)
    x = dg.tensor(np.random.default_rng(2).standard_normal((6, 2, 3)), requires_grad=True)

    def step():
        lstm.zero_grad()
        x.grad = None
        out, _ = lstm(x)
        (out * out).sum().backward()
        return out

    step()
    eager = [p.grad.numpy().copy() for p in lstm.parameters()] + [x.grad.numpy().copy()]
    fast = dg.compile(step)
    for _ in range(3):
        fast()
        got = [p.grad.numpy() for p in lstm.parameters()] + [x.grad.numpy()]
        for a, b in zip(got, eager):
            np.testing.assert_array_equal(a, b)
    program = next(iter(fast.programs.values()))
    # a handful of kernels per layer, not a couple of dozen per time step
    assert program.kernels < 60, program.kernels
