"""Tensor hooks and retain_grad against PyTorch, and dg.checkpoint against the plain call.

Hooks: the same program runs in duograd and in PyTorch (the oracle) and every hook call
(which tensor, in which order, with which gradient) and every resulting gradient must
agree. Checkpoint: gradients bit for bit equal to the same function without it,
first order and through a gradient penalty (create_graph).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import duograd as dg
from duograd import _context, hooks

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _program(lib, x0, w0, make, replace, create_graph):
    """y = tanh(x * w), used three times; hooks on x (leaf), y and z, retain_grad on y.
    Returns (hook calls, gradients, y.grad)."""
    x, w = make(x0), make(w0)
    calls = []
    y = (x * w).tanh()
    z = y * 3.0
    y.retain_grad()
    x.register_hook(lambda g: calls.append(("x", g.detach().numpy().copy())))
    y.register_hook(lambda g: calls.append(("y", g.detach().numpy().copy())))
    if replace:
        z.register_hook(lambda g: g * 2.0)
    loss = (y * y).sum() + (z * y).sum() + z.sum()
    if create_graph:
        gx, gw = (lib.autograd.grad if lib is not dg else dg.grad)(loss, (x, w), create_graph=True)
        ((gx * gx).sum() + (gw * gx).sum()).backward()
        grads = [x.grad.detach().numpy(), w.grad.detach().numpy()]
    else:
        loss.backward()
        grads = [x.grad.numpy(), w.grad.numpy()]
    return calls, grads, y.grad.detach().numpy()


@pytest.mark.parametrize("replace", [False, True], ids=["observe", "replace"])
@pytest.mark.parametrize("create_graph", [False, True], ids=["first-order", "create_graph"])
def test_hooks_match_pytorch(torch, rng, replace, create_graph):
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal(4)
    ours = _program(dg, x0, w0, lambda a: dg.tensor(a, requires_grad=True), replace, create_graph)
    theirs = _program(torch, x0, w0, lambda a: torch.tensor(a, requires_grad=True), replace,
                      create_graph)
    assert [n for n, _ in ours[0]] == [n for n, _ in theirs[0]]
    for (_, a), (_, b) in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-14)


def test_a_hook_fires_once_with_the_summed_gradient_and_remove_removes_it():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    seen = []
    h = y.register_hook(lambda g: seen.append(g.numpy().copy()))
    (y * 2 + y * 3 + y.exp()).sum().backward(retain_graph=True)
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], 5 + np.exp([1.0, 2.0]), rtol=1e-15)
    h.remove()
    h.remove()  # twice is fine
    x.grad = None
    (y * 2).sum().backward()
    assert len(seen) == 1 and not _context.stack()


def test_retain_grad_accumulates_like_pytorch(torch):
    for lib, make in ((dg, lambda a: dg.tensor(a, requires_grad=True)),
                      (torch, lambda a: torch.tensor(a, requires_grad=True))):
        x = make(np.array([1.0, 2.0]))
        y = x * 2
        y.retain_grad()
        z = (y * y).sum()
        z.backward(retain_graph=True)
        z.backward()
        if lib is dg:
            ours = y.grad.numpy().copy()
        else:
            np.testing.assert_array_equal(ours, y.grad.numpy())


def test_hook_state_dies_with_the_tensor_and_costs_nothing_after():
    x = dg.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: None)
    assert _context.stack() == (hooks._HOOKS,) and _context.backward_watched
    del y
    gc.collect()
    assert len(hooks._hooks) == 0 and not _context.stack() and not _context.backward_watched


def test_hook_errors_name_the_problem():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        dg.tensor([1.0]).register_hook(print)
    h = x.register_hook(lambda g: dg.ones(3))
    with pytest.raises(ValueError, match=r"register_hook.*\(2,\).*\(3,\)"):
        (x * x).sum().backward()
    assert x.grad is None
    h.remove()


# ---------------------------------------------------------------- checkpoint

def _mlp(rng, width=8, depth=6):
    return [(dg.tensor(rng.standard_normal((width, width)) / np.sqrt(width), requires_grad=True),
             dg.tensor(rng.standard_normal(width) * 0.1, requires_grad=True)) for _ in range(depth)]


def _segment(layers):
    def run(h):
        for W, b in layers:
            h = (h @ W + b).tanh()
        return h
    return run


def _forward(params, x, segment):
    h = x
    for k in range(0, len(params), segment):
        seg = _segment(params[k:k + segment])
        h = dg.checkpoint(seg, h) if segment < len(params) else seg(h)
    return h


def _grads(params, x, segment, penalty):
    for W, b in params:
        W.grad = b.grad = None
    x.grad = None
    out = _forward(params, x * 1.5, segment)
    loss = (out * out).sum()
    if penalty:
        (gx,) = dg.grad(loss, x, create_graph=True)
        loss = (gx * gx).sum() + (0.0 if penalty == "alone" else loss)
    loss.backward()
    return [x.grad.numpy().copy()] + [t.grad.numpy().copy() for p in params for t in p]


@pytest.mark.parametrize("penalty", [False, "alone", "plus loss"])
def test_checkpoint_equals_the_plain_call(rng, penalty):
    """Bit for bit at first order. Through a gradient penalty (create_graph) the values
    are the same terms summed in another order: plain, the second-order graph's
    cotangents meet the forward's at each intermediate; checkpointed, they meet in the
    recomputed graph or at the block's inputs. Equal to round-off (1e-13 relative)."""
    params = _mlp(rng)
    x = dg.tensor(rng.standard_normal((5, 8)), requires_grad=True)
    plain = _grads(params, x, len(params), penalty)
    for segment in (1, 2, 3):
        ck = _grads(params, x, segment, penalty)
        for a, b in zip(plain, ck):
            if penalty:
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
            else:
                np.testing.assert_array_equal(a, b)


def test_checkpoint_gradient_penalty_against_torch(torch, rng):
    """The penalty's gradient itself is right, not only equal to the plain call's."""
    W0, x0 = rng.standard_normal((4, 4)), rng.standard_normal((3, 4))
    W, x = dg.tensor(W0, requires_grad=True), dg.tensor(x0, requires_grad=True)
    out = dg.checkpoint(lambda h: (h @ W).tanh() @ W, x)
    (gx,) = dg.grad((out ** 2).sum(), x, create_graph=True)
    (gx * gx).sum().backward()
    tW, tx = torch.tensor(W0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    tout = torch.tanh(tx @ tW) @ tW
    (tgx,) = torch.autograd.grad((tout ** 2).sum(), tx, create_graph=True)
    (tgx * tgx).sum().backward()
    np.testing.assert_allclose(W.grad.numpy(), tW.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_checkpoint_keeps_no_intermediate():
    W = dg.tensor(np.eye(3), requires_grad=True)
    x = dg.tensor(np.ones((2, 3)), requires_grad=True)
    y = dg.checkpoint(lambda h: ((h @ W).tanh() @ W).exp(), x)
    assert y.grad_fn.op.name == "checkpoint"
    assert {id(t) for t in y.grad_fn.inputs} == {id(W), id(x)}  # found W although fn was not given it
    assert dg.viz.count_nodes(y) == 3


def test_checkpoint_rejects_bad_input():
    with pytest.raises(TypeError, match="checkpoint: expected a callable"):
        dg.checkpoint(3, dg.ones(2))
    with pytest.raises(TypeError, match="one Tensor"):
        dg.checkpoint(lambda t: (t, t), dg.ones(2, requires_grad=True))
