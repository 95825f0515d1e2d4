"""Every op in OP_SPECS against PyTorch in float64: values, gradients, and the
gradient of the gradient.

Every spec carries ``torch_fn``, the same function written for torch (torch module
first); specs.py refuses a row without one. Every test is marked ``oracle`` and takes the ``torch`` fixture from
conftest.py, so the file skips cleanly, with the install hint, when torch is absent.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
import pytest

import duograd as dg
from specs import OP_SPECS, make_inputs

each_spec = pytest.mark.parametrize("spec", OP_SPECS, ids=attrgetter("name"))


def torch_inputs(torch, arrays):
    return [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]


@pytest.mark.oracle
@each_spec
def test_value_and_gradient_match_torch(torch, spec):
    arrays = make_inputs(spec)
    xs = [dg.tensor(a, requires_grad=True) for a in arrays]
    ts = torch_inputs(torch, arrays)
    out, t_out = spec.fn(*xs), spec.torch_fn(torch, *ts)
    assert out.shape == tuple(t_out.shape)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-13, atol=1e-14)

    u = np.random.default_rng(3).standard_normal(out.shape)
    out.backward(u)
    t_out.backward(torch.from_numpy(u))
    for x, t in zip(xs, ts):
        assert x.grad.shape == tuple(t.grad.shape)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.oracle
@each_spec
def test_second_derivative_matches_torch(torch, spec):
    """d/dx <J(x)^T u, w>: the derivative of a gradient, both engines with create_graph."""
    arrays = make_inputs(spec)
    rng = np.random.default_rng(4)
    xs = [dg.tensor(a, requires_grad=True) for a in arrays]
    ts = torch_inputs(torch, arrays)
    out, t_out = spec.fn(*xs), spec.torch_fn(torch, *ts)
    u = rng.standard_normal(out.shape)
    ws = [rng.standard_normal(a.shape) for a in arrays]

    gs = dg.grad(out, xs, grad_outputs=dg.tensor(u), create_graph=True)
    t_gs = torch.autograd.grad(t_out, ts, grad_outputs=torch.from_numpy(u), create_graph=True)
    for g, tg in zip(gs, t_gs):
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12, atol=1e-13)

    live = [(g, w) for g, w in zip(gs, ws) if g.requires_grad]
    t_live = [(tg, w) for tg, w in zip(t_gs, ws) if tg.requires_grad]
    if not live:  # a gradient that does not depend on the inputs: torch agrees it is constant
        second = [None] * len(ts)
    else:
        total = sum(((g * w).sum() for g, w in live[1:]), (live[0][0] * live[0][1]).sum())
        second = dg.grad(total, xs, allow_unused=True)
    t_second = [None] * len(ts)
    if t_live:
        t_total = sum((tg * torch.from_numpy(w)).sum() for tg, w in t_live)
        t_second = torch.autograd.grad(t_total, ts, allow_unused=True)
    for s, ts_ in zip(second, t_second):
        a = np.zeros(()) if s is None else s.numpy()
        b = np.zeros(()) if ts_ is None else ts_.numpy(force=True)  # torch may answer a ZeroTensor
        np.testing.assert_allclose(np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)),
                                   np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)),
                                   rtol=1e-11, atol=1e-12)


@pytest.mark.oracle
@each_spec
def test_jvp_matches_torch(torch, spec):
    arrays = make_inputs(spec)
    rng = np.random.default_rng(5)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    _, t = dg.func.jvp(spec.fn, tuple(dg.tensor(a) for a in arrays), tuple(dg.tensor(v) for v in vs))
    _, t_t = torch.autograd.functional.jvp(lambda *ts: spec.torch_fn(torch, *ts),
                                           tuple(torch.from_numpy(a) for a in arrays),
                                           tuple(torch.from_numpy(v) for v in vs))
    np.testing.assert_allclose(t.numpy(), t_t.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.oracle
def test_pow_at_a_zero_base_matches_torch(torch):
    """The corner where the textbook derivative formulas give nan: torch's conventions."""
    base, expo = np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 1.0, 2.5, 3.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        b, e = dg.tensor(base, requires_grad=True), dg.tensor(expo, requires_grad=True)
        (b ** e).sum().backward()
        x = dg.tensor(base, requires_grad=True)
        (x ** 0).sum().backward()
    tb, te = (torch.tensor(a, requires_grad=True) for a in (base, expo))
    (tb ** te).sum().backward()
    tx = torch.tensor(base, requires_grad=True)
    (tx ** torch.zeros(4, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-15)
    np.testing.assert_allclose(e.grad.numpy(), te.grad.numpy(), rtol=1e-15)
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
