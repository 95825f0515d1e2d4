"""In-place operations, version counters and ``dg.autograd.Function``, against torch 2.13.

What torch does is the truth here: each case runs the same program in both libraries (the
array arguments made from the same NumPy values) and compares values, gradients, identity,
versions and the class of error. Where duograd raises and torch gives an answer (a write
through a view followed by a backward through its base), the test says so: it is a
documented difference (docs/api.md, "In-place operations and versions").
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import duograd as dg
from duograd import optim

RNG = np.random.default_rng(18)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal((3, 4))
C = RNG.standard_normal((3, 4))


@pytest.fixture(autouse=True)
def _torch64():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def both(fn, *arrays, grads=True):
    """Run ``fn(lib, *leaves)`` with duograd and torch; return (dg result, torch result)."""
    out = []
    for lib in (dg, torch):
        leaves = [lib.tensor(a.copy(), requires_grad=grads) for a in arrays]
        out.append((fn(lib, *leaves), leaves))
    return out


def close(d, t, tol=1e-12):
    np.testing.assert_allclose(np.asarray(d.detach().numpy() if isinstance(d, dg.Tensor) else d),
                               t.detach().numpy(), rtol=tol, atol=tol)


def grads_match(fn, *arrays):
    """Backward of fn's (scalar) result in both libraries; gradients of every leaf agree."""
    (dres, dleaves), (tres, tleaves) = both(fn, *arrays)
    close(dres, tres)
    dres.backward()
    tres.backward()
    for i, (d, t) in enumerate(zip(dleaves, tleaves)):
        if t.grad is None:
            assert d.grad is None or not np.any(d.grad.detach().numpy()), f"leaf {i}"
        else:
            close(d.grad, t.grad)


# ---------------------------------------------------------------- the version counter

def test_version_counter_starts_at_zero_and_counts_writes():
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0])
        assert x._version == 0
        x.add_(1.0)
        x.mul_(2.0)
        x += 1.0
        x[0] = 5.0
        assert x._version == 4, lib.__name__


def test_saved_input_modified_before_backward_raises_naming_op_and_versions():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    b = a * a          # mul saves a
    a.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*'mul'.*"
                                           r"at version 1; expected version 0"):
        b.sum().backward()
    xt = torch.tensor([1.0, 2.0], requires_grad=True)
    at = xt * 1.0
    bt = at * at
    at.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        bt.sum().backward()


def test_saved_output_modified_raises_and_version_names_both_numbers():
    x = dg.tensor([0.5, 1.5], requires_grad=True)
    y = x.exp()        # exp's rule reads its output
    y.mul_(2.0)
    y.add_(1.0)        # two writes: y's memory is at version 2
    with pytest.raises(RuntimeError, match=r"output of 'exp'.*at version 2; expected version 0"):
        (x * 1 + y).sum().backward()


def test_a_write_no_rule_reads_keeps_the_gradient_torchs():
    # add does not save its inputs: torch computes the gradient, so must duograd
    def f(m, x):
        a = x * 2
        b = a + 1
        a.mul_(3)
        return (b * b).sum() + (a * a).sum()
    grads_match(f, A)


def test_rebased_chain_gradients_match_torch():
    def f(m, x, y):
        t = x * 1
        t.add_(y)
        t.mul_(y)
        t.sub_(x, alpha=0.5)
        t.div_(y * y + 1)
        t.pow_(2)
        t.clamp_(min=-0.2, max=0.9)
        t.neg_()
        t.mul_(x)
        t.exp_()
        return (t * m.tensor(C)).sum()
    grads_match(f, A * 0.3, V * 0.3)


def test_augmented_assignment_records_like_torch():
    def f(m, x, y):
        t = x * 1
        t += y
        t -= 0.5 * x
        t *= y
        t /= 2.0
        return (t * m.tensor(C)).sum()
    grads_match(f, A, V)


def test_optimizer_step_bumps_versions_and_old_graphs_raise():
    w = dg.tensor(A.copy(), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    loss = (w * w).sum()     # mul saved w
    loss.backward(retain_graph=True)
    before = w._version
    opt.step()
    assert w._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    wt = torch.tensor(A.copy(), requires_grad=True)
    lt = (wt * wt).sum()
    lt.backward(retain_graph=True)
    torch.optim.SGD([wt], lr=0.1).step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        lt.backward()


def test_data_writes_are_an_escape_hatch_without_a_version():
    x = dg.tensor([1.0, 2.0])
    x._data[0] = 7.0
    x.data = np.array([3.0, 4.0])
    assert x._version == 0 and x.tolist() == [3.0, 4.0]


# ---------------------------------------------------------------- leaves

def test_leaf_that_requires_grad_cannot_be_written_outside_no_grad():
    for lib in (dg, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        for write in (lambda: w.add_(1.0), lambda: w.zero_(), lambda: w.__setitem__(0, 3.0),
                      lambda: w.__imul__(2.0)):
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                                   "used in an in-place operation"):
                write()
        assert w.tolist() == [1.0, 2.0] and w._version == 0   # nothing changed


def test_no_grad_update_keeps_the_same_leaf():
    w = dg.tensor([1.0, -2.0], requires_grad=True)
    (w * w).sum().backward()
    g, same = w.grad, w
    with dg.no_grad():
        w -= 0.25 * w.grad
        w.mul_(2.0)
        w[1] = 0.5
    assert w is same and w.is_leaf and w.requires_grad and w.grad is g
    assert w.tolist() == [1.0, 0.5] and w._version == 3
    (w * w).sum().backward()      # the next backward reaches it
    np.testing.assert_allclose(w.grad.detach().numpy(), [2.0 + 2.0, -4.0 + 1.0])


# ---------------------------------------------------------------- __setitem__

SETITEM_CASES = [
    ("int", 1, (4,)),
    ("negative int", -1, (4,)),
    ("slice", slice(0, 2), (2, 4)),
    ("step slice", (slice(None), slice(None, None, 2)), (3, 2)),
    ("int and slice", (2, slice(1, 3)), (2,)),
    ("ellipsis", (Ellipsis, 0), (3,)),
    ("broadcast row", slice(1, 3), (4,)),
    ("scalar value", (0, 0), ()),
    ("integer list", [0, 2], (2, 4)),
    ("integer pairs", ([0, 2], [1, 3]), (2,)),
    ("bool mask", "mask", (4,)),
]


@pytest.mark.parametrize("label,index,vshape", SETITEM_CASES, ids=[c[0] for c in SETITEM_CASES])
def test_setitem_gradients_match_torch(label, index, vshape):
    mask = np.array([True, False, True])

    def f(m, x, v):
        idx = (mask if m is dg else torch.from_numpy(mask)) if index == "mask" else index
        t = x * 1
        t[idx] = v * 2
        return (t * m.tensor(C)).sum() + (t * t).sum()
    grads_match(f, A, np.random.default_rng(7).standard_normal(vshape))


def test_setitem_into_a_constant_tensor_gives_it_history():
    def f(m, y):
        t = m.zeros(3)
        t[1:] = y * y
        t[0] = y[0] * 5
        return (t * m.tensor([1.0, 2.0, 3.0])).sum()
    grads_match(f, np.array([1.0, 2.0]))


def test_setitem_is_differentiable_twice():
    def f(x, v):
        t = x * x
        t[0] = v ** 3
        return t
    x = dg.tensor(A[:2].copy(), requires_grad=True)
    v = dg.tensor(V[0].copy(), requires_grad=True)
    assert dg.gradcheck(f, (x, v)) and dg.gradgradcheck(f, (x, v))


# ---------------------------------------------------------------- identity and the methods

@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_augmented_assignment_keeps_identity(op):
    x = dg.tensor([1.0, 2.0])
    y = dg.tensor([4.0, 8.0])
    same = x
    x = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv}[op](x, y)
    assert x is same and x._version == 1
    expected = eval(f"np.array([1.0, 2.0]) {op[0]} np.array([4.0, 8.0])")
    np.testing.assert_allclose(x.detach().numpy(), expected)


def test_imatmul_in_place_where_the_shape_allows_else_rebinds():
    x = dg.tensor(A[:, :3].copy())
    m = dg.tensor(V[:, :3].copy())
    same = x
    x @= m
    assert x is same
    np.testing.assert_allclose(x.detach().numpy(), A[:, :3] @ V[:, :3])
    y = dg.tensor(A.copy())
    y @= dg.tensor(V.T.copy())     # (3, 4) @ (4, 3): a new shape, so a new tensor (as torch)
    assert y.shape == (3, 3)


METHODS = [
    ("add_", lambda t, y: t.add_(y)), ("add_ alpha", lambda t, y: t.add_(y, alpha=-2.0)),
    ("sub_", lambda t, y: t.sub_(y)), ("mul_", lambda t, y: t.mul_(y)),
    ("div_", lambda t, y: t.div_(y * y + 1.0)), ("pow_", lambda t, y: t.pow_(2.0)),
    ("neg_", lambda t, y: t.neg_()), ("exp_", lambda t, y: t.exp_()),
    ("clamp_", lambda t, y: t.clamp_(-0.5, 0.5)), ("clamp_ min", lambda t, y: t.clamp_(min=0.0)),
    ("zero_", lambda t, y: t.zero_()), ("fill_", lambda t, y: t.fill_(1.5)),
    ("copy_", lambda t, y: t.copy_(y)),
]


@pytest.mark.parametrize("name,fn", METHODS, ids=[m[0] for m in METHODS])
def test_each_in_place_method_returns_self_with_torchs_values(name, fn):
    for lib in (dg, torch):
        t = lib.tensor(A.copy())
        y = lib.tensor(V.copy())
        assert fn(t, y) is t and t._version == 1
        if lib is dg:
            got = t.detach().numpy().copy()
        else:
            close(got, t)


def test_random_fills_write_in_place_with_their_distribution():
    t = dg.zeros(20000)
    assert t.uniform_(-1.0, 3.0, generator=np.random.default_rng(0)) is t
    assert -1.0 <= t.detach().numpy().min() and t.detach().numpy().max() < 3.0 and abs(t.detach().numpy().mean() - 1.0) < 0.05
    assert t.normal_(2.0, 0.5) is t and t._version == 2
    assert abs(t.detach().numpy().mean() - 2.0) < 0.02 and abs(t.detach().numpy().std() - 0.5) < 0.02


def test_float32_stays_float32_and_bad_writes_change_nothing():
    x = dg.tensor(np.ones(3, np.float32))
    x += dg.tensor(np.ones(3))
    assert x.dtype == np.float32 and x.tolist() == [2.0, 2.0, 2.0]
    for lib in (dg, torch):
        x = lib.tensor([1.0, 2.0, 3.0])
        with pytest.raises(RuntimeError):
            x.add_(lib.ones(2, 3))                     # the result would not fit x
        with pytest.raises(RuntimeError):
            x.copy_(lib.ones(2))
        with pytest.raises(RuntimeError):
            x.fill_(lib.ones(2))
        with pytest.raises(RuntimeError):
            x.clamp_()
        assert x.tolist() == [1.0, 2.0, 3.0] and x._version == 0
    with pytest.raises(RuntimeError, match="read-only"):
        dg.tensor([1.0, 2.0]).broadcast_to((3, 2)).add_(1.0)


# ---------------------------------------------------------------- views

VIEWS = [
    ("int index", lambda x: x[0]), ("slice", lambda x: x[1:, ::2]), ("T", lambda x: x.T),
    ("reshape", lambda x: x.reshape(12)), ("detach", lambda x: x.detach()),
]


@pytest.mark.parametrize("name,view", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_memory_and_version_with_their_base(name, view):
    for lib in (dg, torch):
        x = lib.tensor(A.copy())
        v = view(x)
        v.add_(1.0)
        assert x._version == v._version == 1
        x.mul_(2.0)
        assert v._version == 2
        if lib is dg:
            dx, dv = x.detach().numpy().copy(), v.detach().numpy().copy()
        else:
            close(dx, x)
            close(dv, v)


def test_write_through_a_view_then_backward_through_the_view_matches_torch():
    def f(m, w):
        x = w * 2
        v = x[0]
        v.mul_(3)
        return (v * v).sum()
    grads_match(f, A)


def test_write_into_the_base_of_a_view_with_history():
    def f(m, w):
        h = (w * 2).reshape(12)   # a view of mul's output
        h += 1.0                  # written through the view: its own node is rebased
        return (h * h).sum()
    grads_match(f, A)


def test_backward_through_a_base_written_through_its_view_raises():
    # torch rebases the base onto the view's write and gives the gradient; duograd raises
    # (documented): never a silent answer
    w = dg.tensor(A.copy(), requires_grad=True)
    x = w * 2
    x[0].mul_(3)
    with pytest.raises(RuntimeError, match="modified in place through a view"):
        x.sum().backward()
    w = dg.tensor(A.copy(), requires_grad=True)
    x = w * 2
    v = x[0]
    x.mul_(3)
    with pytest.raises(RuntimeError, match="modified in place through a view"):
        v.sum().backward()


# ---------------------------------------------------------------- dg.autograd.Function

class Cube(dg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


def test_function_first_and_second_derivatives_are_the_analytic_ones():
    x = dg.tensor([0.5, -1.5, 2.0], requires_grad=True)
    y = Cube.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() ** 3)
    (gx,) = dg.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), 3 * x.detach().numpy() ** 2)
    (gxx,) = dg.grad(gx.sum(), x)
    np.testing.assert_allclose(gxx.detach().numpy(), 6 * x.detach().numpy())
    assert dg.gradcheck(Cube.apply, (x,)) and dg.gradgradcheck(Cube.apply, (x,))


def _legendre3(lib):
    class P3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            ctx.flags = ctx.needs_input_grad
            return scale * 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.scale * 1.5 * (5 * x ** 2 - 1), None
    return P3


def test_function_matches_torch_with_a_non_tensor_argument():
    def f(m, x, y):
        P3 = _legendre3(m)
        out = P3.apply(x * y, 2.0)
        return (out * m.tensor(C)).sum()
    grads_match(f, A * 0.5, V * 0.5)


def test_function_ctx_fields_and_several_outputs():
    seen = {}

    class Split(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen["needs"] = ctx.needs_input_grad
            e = x.exp()
            idx = (x > 0).astype(np.float64)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(e, y)
            return e * y, x + k, idx

        @staticmethod
        def backward(ctx, ga, gb, gi):
            e, y = ctx.saved_tensors
            return ga * e * y + gb, ga * e, None

    x = dg.tensor([0.3, -0.7], requires_grad=True)
    y = dg.tensor([2.0, 3.0])
    a, b, i = Split.apply(x, y, 1.0)
    assert seen["needs"] == (True, False, False)
    assert a.requires_grad and b.requires_grad and not i.requires_grad
    (a.sum() + 2 * b.sum()).backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), np.exp([0.3, -0.7]) * [2.0, 3.0] + 2.0)


def test_function_saved_tensor_modified_raises_and_bad_backward_is_named():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = Cube.apply(a)
    with dg.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*Cube"):
        y.sum().backward()

    class Bad(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"Bad.backward returned an incorrect number of "
                                           r"gradients \(expected 2, got 1\)"):
        Bad.apply(dg.tensor([1.0], requires_grad=True), dg.tensor([2.0])).sum().backward()
