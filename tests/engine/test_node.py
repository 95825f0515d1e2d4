"""The graph node apart from the Tensor (issue 27), against torch 2.13 row by row.

``.data`` is a Tensor without history sharing the memory, ``grad_fn`` is the node with
torch's names and ``next_functions``, saved values carry their version, saved-tensor hooks
see every saved value, and one rule decides every result dtype. Each test builds the same
thing in duograd and in torch and compares what a PyTorch program would observe.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn

pytestmark = pytest.mark.oracle


def _pair(torch, values, requires_grad=True):
    a = np.asarray(values, dtype=np.float64)
    return (dg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad))


# ---------------------------------------------------------------- .data

def test_data_add_in_place_is_an_update_with_no_history_and_no_version_bump(torch):
    """pytorch/examples' regression: ``param.data.add_(-lr * param.grad)``."""
    outs = []
    for lib in (dg, torch):
        w = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = (w * w).sum()          # mul saved w
        y.backward(retain_graph=True)
        d = w.data
        d.add_(-0.1 * w.grad)
        outs.append((w.detach().numpy().copy(), w._version, d.requires_grad, d.grad_fn,
                     w.is_leaf, w.requires_grad))
        w.grad = None
        y.backward()               # the graph saved w: .data's write bumped no version it checks
        outs[-1] += (w.grad.numpy().copy(),)
    (a, va, ra, fa, la, qa, ga), (b, vb, rb, fb, lb, qb, gb) = outs
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ga, gb)
    assert (va, ra, fa, la, qa) == (vb, rb, fb, lb, qb) == (0, False, None, True, True)


def test_data_is_a_tensor_sharing_memory(torch):
    for lib in (dg, torch):
        p = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        q = lib.tensor([[5.0, 6.0], [7.0, 8.0]], dtype=lib.float64)
        assert isinstance(p.data, lib.Tensor)
        p.data.copy_(q)
        np.testing.assert_array_equal(p.detach().numpy(), q.numpy())
        assert tuple(p.data.size()) == (2, 2)
        assert float(p.data.norm()) == pytest.approx(float(np.linalg.norm(q.numpy())), rel=1e-15)
        np.testing.assert_array_equal(p.data.cpu().numpy(), q.numpy())
        p.data.normal_(0, 0.02)
        assert p._version == 0 and p.is_leaf and p.requires_grad
        assert np.abs(p.detach().numpy()).max() < 0.2


def test_data_assignment_takes_a_tensor_or_an_array():
    p = dg.tensor([1.0, 2.0], requires_grad=True)
    p.data = dg.tensor([3.0, 4.0])
    np.testing.assert_array_equal(p.detach().numpy(), [3.0, 4.0])
    p.data = np.array([5.0, 6.0])            # the documented extension
    np.testing.assert_array_equal(p.detach().numpy(), [5.0, 6.0])
    assert p.is_leaf and p.requires_grad


def test_data_write_inside_a_training_step_does_not_raise(torch):
    """``x.data.mul_(2)`` between the forward and the backward: torch neither raises nor
    bumps; the gradient uses the values as they are at backward (mul saved the memory)."""
    res = []
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = (x * x).sum()
        x.data.mul_(2)
        y.backward()
        res.append((x.grad.numpy().copy(), x._version))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    assert res[0][1] == res[1][1] == 0


# ---------------------------------------------------------------- grad_fn

def test_grad_fn_name_and_is_leaf_as_torch(torch):
    x, tx = _pair(torch, [1.0, 2.0, 3.0])
    for y, ty in [(x * 2, tx * 2), (x + x, tx + tx), (x.exp(), tx.exp()), (x.sum(), tx.sum()),
                  (x.tanh(), tx.tanh()), (x.relu(), tx.relu()), (x - 1.0, tx - torch.tensor(1.0)),
                  (x.clamp(min=0), tx.clamp(min=0)), (x.sigmoid(), tx.sigmoid())]:
        assert y.grad_fn.name() == ty.grad_fn.name()
        assert y.is_leaf is ty.is_leaf is False
    assert x.is_leaf and x.grad_fn is None and tx.grad_fn is None
    acc = (x * 2).grad_fn.next_functions[0][0]
    tacc = (tx * 2).grad_fn.next_functions[0][0]
    assert acc.name() == tacc.name() and acc.variable is x and tacc.variable is tx
    assert "grad_fn=<MulBackward0>" in repr(x * 2) and "grad_fn=<MulBackward0>" in repr(tx * 2)


def _names(fn, depth: int = 0, out=None) -> list:
    """The tree below ``fn`` as (depth, name) in order, None edges left out."""
    out = [] if out is None else out
    out.append((depth, fn.name()))
    for nxt, _ in fn.next_functions:
        if nxt is not None:
            _names(nxt, depth + 1, out)
    return out


def test_next_functions_of_an_mlp_loss_walk_to_the_leaves_as_torchs(torch):
    """The tutorial's two-layer net, written with tensor operations: the same tree of node
    names, level by level, down to the AccumulateGrad of every weight."""
    rng = np.random.default_rng(0)
    x_np, y_np = rng.standard_normal((8, 4)), rng.standard_normal((8, 2))
    w1_np, w2_np, b1_np = rng.standard_normal((4, 5)), rng.standard_normal((5, 2)), rng.standard_normal(5)
    trees = []
    for lib in (dg, torch):
        x, y = lib.tensor(x_np), lib.tensor(y_np)
        w1 = lib.tensor(w1_np, requires_grad=True)
        w2 = lib.tensor(w2_np, requires_grad=True)
        b1 = lib.tensor(b1_np, requires_grad=True)
        h = (x @ w1 + b1).clamp(min=0)
        pred = (h @ w2).tanh()
        loss = (pred - y).pow(2).sum()
        trees.append(_names(loss.grad_fn))
    assert trees[0] == trees[1]
    assert trees[0][-1][1] == "torch::autograd::AccumulateGrad"


# ---------------------------------------------------------------- in place and versions

def test_a_saved_input_written_afterwards_raises_as_torch(torch):
    for lib in (dg, torch):
        x = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
        a = x * 2
        b = a.sin()                # sin saved a
        a.mul_(3)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            b.sum().backward()


def test_a_write_no_saved_value_needs_keeps_torchs_gradient(torch):
    grads = []
    for lib in (dg, torch):
        x = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
        a = x * 2
        b = a + 1                  # add saves nothing
        a.mul_(3)                  # a's own gradient now goes through mul_
        (b.sum() + a.sum()).backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_in_place_on_a_view_of_a_base_with_history(torch):
    """Writing a view of a tensor with history: the view's own gradient is torch's; a
    backward through the base's graph after the write raises (torch rebases the base; that
    difference is documented), never a silent answer."""
    res = []
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = x * 2
        v = b[:2]
        v.mul_(3)
        v.sum().backward()
        res.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(res[0], res[1])
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 2
    b[:2].mul_(3)
    with pytest.raises(RuntimeError, match="through a view or through its base"):
        (b * 1).sum().backward()


def test_an_in_place_write_gives_a_new_node_and_earlier_consumers_keep_the_old(torch):
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        a = x * 2
        before = a.grad_fn
        c = a * 1                  # recorded before the write
        a.add_(1)
        assert a.grad_fn is not before and a.grad_fn.name() == "AddBackward0"
        assert c.grad_fn.next_functions[0][0] is before
        assert a._version == 1


def test_a_backward_through_an_earlier_consumer_follows_the_old_node(torch):
    """c was recorded before a's write: its gradient flows through a's old node (x * 2),
    not the in-place op's (which would scale it by 3), as torch's."""
    grads = []
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        a = x * 2
        c = a * 1
        a.mul_(3)
        c.sum().backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], [2.0, 2.0])


# ---------------------------------------------------------------- saved-tensor hooks

def _count_saved(lib, build):
    packed, unpacked = [], []

    def pack(t):
        packed.append((tuple(t.shape), t.detach().numpy().copy()))
        return t

    def unpack(t):
        unpacked.append(tuple(t.shape))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = build(lib)
    loss.backward()
    return packed, unpacked


def test_saved_tensor_hooks_see_the_values_torch_saves(torch):
    """Per operation, the values torch saves (mul saves both factors, exp and tanh their
    result, relu its result, matmul both operands when both require grad)."""
    rng = np.random.default_rng(1)
    x_np, w_np = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))

    def build(lib):
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        h = (x @ w).relu()
        return (h.tanh() * h.exp()).sum()

    (p1, u1), (p2, u2) = _count_saved(dg, build), _count_saved(torch, build)
    assert len(p1) == len(p2) and len(u1) == len(u2) and len(p1) > 0
    assert sorted(s for s, _ in p1) == sorted(s for s, _ in p2)
    for (_, a), (_, b) in zip(sorted(p1, key=lambda e: (e[0], e[1].sum())),
                              sorted(p2, key=lambda e: (e[0], e[1].sum()))):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_saved_tensor_hooks_unpack_gives_the_values_the_rules_use():
    """Unpacking to a scaled copy changes the gradient exactly as the formula says."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t * 10):
        y = (x * x).sum()            # the rule g * x reads the saved x: ten times x
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [20.0, 40.0])   # g * 10x for each factor


def test_save_on_cpu_is_accepted(torch):
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])),
                                   rtol=1e-15)


def test_saved_tensor_hooks_on_a_conv_layer(torch):
    """torch's conv saves its input and weight, tanh its result: duograd saves the same values
    (the weight as the matrix its product uses) and one more, the unfolded input columns its
    im2col product reads (a documented difference in what is kept, not in the gradient)."""
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((2, 3, 6, 6))
    conv = nn.Conv2d(3, 4, 3, rng=0)
    tconv = torch.nn.Conv2d(3, 4, 3).double()
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(conv.weight.detach().numpy()))
        tconv.bias.copy_(torch.from_numpy(conv.bias.detach().numpy()))

    def run(lib, layer):
        saved = []

        def pack(t):
            saved.append(t.detach().numpy().copy())
            return t
        x = lib.tensor(x_np, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = layer(x).tanh().sum()
        loss.backward()
        return saved, x.grad.numpy(), layer.weight.grad.numpy()

    (s1, g1, w1), (s2, g2, w2) = run(dg, conv), run(torch, tconv)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-12, atol=1e-12)
    assert len(s1) == len(s2) + 1
    flat = [a.ravel() for a in s1]
    for want in s2:     # each value torch saved is one duograd saved
        assert any(f.shape == want.ravel().shape and np.allclose(f, want.ravel(), rtol=1e-12, atol=1e-12)
                   for f in flat)


# ---------------------------------------------------------------- one promotion rule

def test_where_of_two_numbers_takes_the_default_dtype(torch):
    dg.set_default_dtype(dg.float32)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        assert dg.where(dg.tensor([True, False]), 1.0, 0.0).dtype == np.float32
        assert torch.where(torch.tensor([True, False]), 1.0, 0.0).dtype == torch.float32
        assert dg.where(dg.tensor([True, False]), 1, 0).dtype == np.int64
    finally:
        dg.set_default_dtype(dg.float64)
        torch.set_default_dtype(before)


@pytest.mark.parametrize("a,b", [("int64", "float32"), ("float32", "int64"), ("int32", "float64")])
def test_an_integer_times_a_float_matmul_raises_as_torch(torch, a, b):
    x = np.arange(4).reshape(2, 2)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.from_numpy(x.astype(a)) @ torch.from_numpy(x.astype(b))
    with pytest.raises(RuntimeError, match="same dtype"):
        dg.from_numpy(x.astype(a)) @ dg.from_numpy(x.astype(b))
    with pytest.raises(RuntimeError, match="same dtype"):
        dg.mm(dg.from_numpy(x.astype(a)), dg.from_numpy(x.astype(b)))


def test_cat_takes_torchs_result_dtype(torch):
    for parts in ([np.array([1]), np.array([1.5], np.float32)], [np.array([1]), np.array([True])],
                  [np.array([1.0], np.float32), np.array([2.0])]):
        got = dg.cat([dg.from_numpy(p) for p in parts]).dtype
        want = torch.cat([torch.from_numpy(p) for p in parts]).dtype
        assert str(got) == str(want).replace("torch.", "")


# ---------------------------------------------------------------- small ones

def test_format_of_a_zero_d_tensor(torch):
    for lib in (dg, torch):
        loss = lib.tensor(0.123456, dtype=lib.float64)
        assert f"{loss:.4f}" == "0.1235" and f"{loss:>8.2f}" == "    0.12"
        with pytest.raises(TypeError):
            f"{lib.tensor([1.0, 2.0]):.2f}"
        assert f"{lib.tensor([1.0, 2.0])}" == str(lib.tensor([1.0, 2.0]))


def test_cat_and_stack_shape_errors_are_shape_errors(torch):
    for fn in ("cat", "stack"):
        with pytest.raises(RuntimeError):
            getattr(torch, fn)([torch.ones(2, 3), torch.ones(3, 2)])
        with pytest.raises(dg.ShapeError) as e:
            getattr(dg, fn)([dg.ones(2, 3), dg.ones(3, 2)])
        assert isinstance(e.value, RuntimeError) and isinstance(e.value, ValueError)
        assert "(2, 3)" in str(e.value) and "(3, 2)" in str(e.value)


def test_the_node_keeps_no_reference_to_its_output():
    """No cycle Tensor -> node -> Tensor: a dropped intermediate is freed by reference counts."""
    import gc
    import weakref
    gc.disable()
    try:
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        ref = weakref.ref(y)
        node = y.grad_fn
        del y
        assert ref() is None and node.op.name == "mul"
    finally:
        gc.enable()


def _edges(fn, leaves) -> list:
    """``fn.next_functions`` as the names a program sees: None, a leaf's position in
    ``leaves`` (its AccumulateGrad's ``variable``), or the node's name."""
    out = []
    for nxt, _ in fn.next_functions:
        if nxt is None or not hasattr(nxt, "variable"):
            out.append(None if nxt is None else nxt.name())
        else:
            out.append([i for i, t in enumerate(leaves) if t is nxt.variable])
    return out


def test_nodes_of_one_two_and_three_inputs_as_torchs(torch):
    """The node keeps one or two inputs in slots of its own and a tuple of any other number
    (``Node.inputs``): the edges torch shows, the inputs as given, both let go by a backward."""
    seen = []
    for lib in (dg, torch):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        c = lib.tensor([4.0, 5.0], dtype=lib.float64)
        h = x * y
        outs = [x.exp(), h, x * c, h.exp(), lib.cat([x, c, h])]
        seen.append([_edges(o.grad_fn, [x, y]) for o in outs])
        if lib is dg:
            inputs = [o.grad_fn.inputs for o in outs]
            assert [len(i) for i in inputs] == [1, 2, 2, 1, 3]
            assert inputs[1][0] is x and inputs[1][1] is y and inputs[2][1] is not None
            assert inputs[0][0] is x and inputs[3][0] is h and inputs[4][0] is x and inputs[4][2] is h
        outs[-1].sum().backward()
        with pytest.raises(RuntimeError):  # the graph through cat was released
            outs[-1].sum().backward()
        seen.append((x.grad.tolist(), y.grad.tolist()))
        if lib is dg:
            assert outs[-1].grad_fn.inputs is None and outs[-1].grad_fn.next is None
    assert seen[0] == seen[2] and seen[1] == seen[3]
    assert seen[0][0] == [[0]] and seen[0][2] == [[0], None] and seen[0][4] == [[0], None, "MulBackward0"]


def test_an_op_leaves_three_objects_for_the_garbage_collector():
    """Its Tensor, its node and the node's tuple of edges, and nothing more (the inputs sit
    in the node's slots): fewer objects alive means fewer collections, and no full one
    inside one backward of a long eager chain (``benchmarks/gc_chain.py``)."""
    import gc
    x = dg.tensor([0.3, 0.1], requires_grad=True)
    w = dg.tensor([0.9, 1.1], requires_grad=True)
    y = (x * w).tanh()  # every path taken once
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(500):
            y = (y * w).tanh()
        after = len(gc.get_objects())
    finally:
        gc.enable()
    assert (after - before) / 1000 <= 3.01
    y.sum().backward()  # and the chain still differentiates: d/dx of tanh(...tanh(x w)...)
    xa, wa = np.array([0.3, 0.1]), np.array([0.9, 1.1])
    v = np.tanh(xa * wa)
    d = (1 - v ** 2) * wa  # d v / d x, one op at a time (elementwise)
    for _ in range(500):
        v = np.tanh(v * wa)
        d = d * (1 - v ** 2) * wa
    np.testing.assert_allclose(x.grad.numpy(), d, rtol=1e-12, atol=1e-300)


def test_linear_layer_loss_still_matches_torch_after_in_place_clamp(torch):
    """A Linear, then a ReLU in place on its output (a common idiom), then backward."""
    lin = nn.Linear(3, 2, rng=0)
    tlin = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        tlin.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    x = np.random.default_rng(3).standard_normal((4, 3))
    h = lin(dg.tensor(x))
    h.clamp_(min=0)
    (h * h).sum().backward()
    th = tlin(torch.tensor(x))
    th.clamp_(min=0)
    (th * th).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), tlin.weight.grad.numpy(), rtol=1e-14)
