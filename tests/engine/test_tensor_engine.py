"""The tensor engine's machinery: deep graphs, memory, accumulation, recording,
dtypes, detach, user-defined primitives, numerical stability.
"""

from __future__ import annotations

import gc
import sys
import weakref
from operator import attrgetter

import numpy as np
import pytest

import duograd as dg
from duograd.func import jvp
from specs import OP_SPECS, make_inputs


# ---------------------------------------------------------------- deep graphs

def test_chain_of_100000_ops_backward():
    """A chain far deeper than the recursion limit: y = x * c * c * ... (100,000 times),
    so dy/dx = c**100000, known in closed form."""
    n, c = 100_000, 1.000001
    assert n > 10 * sys.getrecursionlimit()
    x = dg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * c
    y.backward()
    np.testing.assert_allclose(y.item(), 0.5 * c ** n, rtol=1e-9)
    np.testing.assert_allclose(x.grad.item(), c ** n, rtol=1e-9)


def test_deep_chain_with_create_graph():
    """A 10,000-op chain differentiated twice: y = x + 1e-4 x + ... (5,000 times) = 1.5 x, so
    d/dx sum(y^2) = 4.5 x and the derivative of its sum is 4.5."""
    xv = np.array([0.2, -0.4])
    x = dg.tensor(xv, requires_grad=True)
    y = x
    for _ in range(5_000):
        y = y + x * 1e-4
    (g,) = dg.grad((y * y).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * 1.5 ** 2 * xv, rtol=1e-10)
    (h,) = dg.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.full(2, 2 * 1.5 ** 2), rtol=1e-10)


# ---------------------------------------------------------------- memory: no reference cycles

@pytest.fixture
def no_gc():
    """Collector off: whatever is freed is freed by reference counting alone, which only
    happens when the graph holds no cycles."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was:
        gc.enable()


def test_intermediate_is_freed_when_its_output_goes(no_gc):
    x = dg.tensor(np.ones(3), requires_grad=True)
    h = x * 2
    y = h.exp()
    ref = weakref.ref(h)
    del h
    assert ref() is not None  # y still needs it for its backward
    del y
    assert ref() is None


def test_intermediate_is_freed_after_backward(no_gc):
    x = dg.tensor(np.ones(3), requires_grad=True)
    h = x * 2
    loss = h.tanh().sum()
    ref = weakref.ref(h)
    del h
    loss.backward()
    assert ref() is None  # backward released the graph, so nothing holds it any more
    del loss
    assert ref() is None


def test_graph_is_freed_after_retain_graph_and_create_graph(no_gc):
    x = dg.tensor(np.array([0.5, 1.5]), requires_grad=True)
    h = x.sin()
    loss = (h * h).sum()
    ref = weakref.ref(h)
    del h
    loss.backward(retain_graph=True)
    (g,) = dg.grad(loss, x, create_graph=True)
    assert ref() is not None
    del loss, g
    x.grad = None
    assert ref() is None


def test_output_of_no_grad_holds_no_inputs(no_gc):
    x = dg.tensor(np.ones(3), requires_grad=True)
    with dg.no_grad():
        h = x * 2
        y = h + 1
    ref = weakref.ref(h)
    del h
    assert ref() is None
    assert y._node is None


def test_jvp_leaves_no_tangents_or_cycles(no_gc):
    x = dg.tensor(np.array([0.3, 0.7]))
    out, t = jvp(lambda a: (a * a).sin(), (x,), (dg.ones(2),))
    ref = weakref.ref(out)
    assert x._tangent is None
    del out
    assert ref() is None
    np.testing.assert_allclose(t.numpy(), np.cos(np.array([0.09, 0.49])) * 2 * np.array([0.3, 0.7]))


# ---------------------------------------------------------------- accumulation and leaves

def test_gradients_accumulate_across_backward_calls():
    xv = np.array([0.5, -1.0, 2.0])
    x = dg.tensor(xv, requires_grad=True)
    (x ** 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * xv ** 2)
    (x.sin()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * xv ** 2 + np.cos(xv))
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_one_leaf_used_many_times_sums_its_paths():
    xv = np.array([0.3, 1.1])
    x = dg.tensor(xv, requires_grad=True)
    (x * x * x + x.exp() * x - x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * xv ** 2 + np.exp(xv) * (1 + xv) - 1, rtol=1e-14)


def test_only_leaves_get_grad():
    x = dg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    c = dg.tensor(np.array([3.0, 4.0]))  # a leaf that does not require grad
    h = x * c
    y = h.sum()
    y.backward()
    assert h.grad is None and y.grad is None
    assert c.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    assert x.is_leaf and not h.is_leaf


def test_requires_grad_propagates():
    a, b = dg.tensor([1.0]), dg.tensor([2.0], requires_grad=True)
    assert not (a * 2).requires_grad
    assert (a * b).requires_grad
    assert not (a * b.detach()).requires_grad


# ---------------------------------------------------------------- no_grad

def test_no_grad_context_records_nothing():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.no_grad():
        assert not dg.is_grad_enabled()
        y = (x * 3).exp().sum()
    assert dg.is_grad_enabled()
    assert not y.requires_grad and y._node is None
    np.testing.assert_allclose(y.item(), np.exp(3.0) + np.exp(6.0))


def test_no_grad_decorator_records_nothing():
    @dg.no_grad()
    def step(t):
        return t * t + 1

    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = step(x)
    assert not y.requires_grad and y._node is None
    assert dg.is_grad_enabled()
    assert step.__name__ == "step"


def test_no_grad_restores_the_mode_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with dg.no_grad():
            1 / 0
    assert dg.is_grad_enabled()


def test_no_grad_nests():
    x = dg.tensor([1.0], requires_grad=True)
    with dg.no_grad():
        with dg.no_grad():
            pass
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


# ---------------------------------------------------------------- dtypes

@pytest.mark.parametrize("spec", OP_SPECS, ids=attrgetter("name"))
def test_float32_through_forward_backward_second_order_and_jvp(spec):
    xs = [dg.tensor(a, requires_grad=True) for a in make_inputs(spec, dtype=np.float32)]
    out = spec.fn(*xs)
    assert out.dtype == np.float32
    u = dg.tensor(np.random.default_rng(0).standard_normal(out.shape).astype(np.float32))
    gs = dg.grad(out, xs, grad_outputs=u, create_graph=True)
    assert all(g.dtype == np.float32 and g.shape == x.shape for g, x in zip(gs, xs))
    live = [g for g in gs if g.requires_grad]
    if live:  # second derivatives keep the dtype too
        total = live[0].sum()
        for g in live[1:]:
            total = total + g.sum()
        for g2, x in zip(dg.grad(total, xs, allow_unused=True), xs):
            assert g2 is None or (g2.dtype == np.float32 and g2.shape == x.shape)
    tangents = tuple(dg.tensor(np.ones(x.shape, np.float32)) for x in xs)
    _, t = jvp(spec.fn, tuple(x.detach() for x in xs), tangents)
    assert t.dtype == np.float32 and t.shape == out.shape


def test_tensor_creation_dtypes():
    # torch's inference (API.md): ints give int64, bools bool, floats the default float64
    assert dg.tensor(1).dtype == np.int64
    assert dg.tensor(2.5).dtype == np.float64
    assert dg.tensor([1, 2, 3]).dtype == np.int64
    assert dg.tensor([[1.0, 2.0]]).dtype == np.float64
    assert dg.tensor(np.arange(3)).dtype == np.int64
    assert dg.tensor(np.arange(3, dtype=np.int32)).dtype == np.int32
    assert dg.tensor(np.array([True, False])).dtype == np.bool_
    assert dg.tensor(np.ones(2, np.float32)).dtype == np.float32
    assert dg.tensor(np.ones(2, np.float32), dtype=np.float64).dtype == np.float64
    assert dg.tensor([1, 2], dtype=np.float32).dtype == np.float32
    assert dg.zeros((2, 3)).dtype == np.float64 and dg.ones(2, 3).shape == (2, 3)
    np.testing.assert_array_equal(dg.tensor([1, 2, 3]).numpy(), [1, 2, 3])


def test_randn_is_seeded():
    a, b = dg.randn(2, 3, rng=5), dg.randn(2, 3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), np.random.default_rng(5).standard_normal((2, 3)))


def test_python_numbers_take_the_tensor_dtype():
    x = dg.tensor(np.ones(3, np.float32), requires_grad=True)
    for y in (x * 2, 2 * x, x + 1.5, 2.0 ** x, x / 3, x ** 2, dg.maximum(x, 0.5), dg.where([True] * 3, x, 0)):
        assert y.dtype == np.float32, y


def test_attributes():
    x = dg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.shape == (2, 3) and x.ndim == 2 and x.numel() == 6 and x.size() == (2, 3) and x.dtype == np.float64
    assert isinstance(x._data, np.ndarray) and x.detach().numpy() is x._data
    assert x.sum().item() == 15.0 and isinstance(x.sum().item(), float)
    assert x.requires_grad and x.grad is None


# ---------------------------------------------------------------- detach

def test_detach_shares_values_but_not_history():
    x = dg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * 3
    d = h.detach()
    assert not d.requires_grad and d._node is None and d.grad is None
    np.testing.assert_array_equal(d.detach().numpy(), h.detach().numpy())
    # Gradients do not flow through the detached branch.
    (h * d).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 3 * d.numpy())


# ---------------------------------------------------------------- a user-defined primitive

def make_cube():
    return dg.Primitive("cube", forward=lambda x: x ** 3,
                        vjp=(lambda g, out, x: g * 3 * x ** 2,),
                        jvp=(lambda t, out, x: t * 3 * x ** 2,))


XV = np.array([0.5, -1.5, 2.0])


def test_cube_backward():
    cube = make_cube()
    x = dg.tensor(XV, requires_grad=True)
    y = cube(x)
    assert isinstance(y, dg.Tensor)
    np.testing.assert_allclose(y.detach().numpy(), XV ** 3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * XV ** 2)


def test_cube_create_graph():
    cube = make_cube()
    x = dg.tensor(XV, requires_grad=True)
    (g,) = dg.grad(cube(x).sum(), x, create_graph=True)
    (h,) = dg.grad(g.sum(), x, create_graph=True)
    (k,) = dg.grad(h.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 3 * XV ** 2)
    np.testing.assert_allclose(h.detach().numpy(), 6 * XV)
    np.testing.assert_allclose(k.numpy(), np.full(3, 6.0))


def test_cube_jvp_and_nested_transforms():
    cube = make_cube()
    v = np.array([1.0, -2.0, 0.5])
    out, t = jvp(cube, (dg.tensor(XV),), (dg.tensor(v),))
    np.testing.assert_allclose(out.numpy(), XV ** 3)
    np.testing.assert_allclose(t.numpy(), 3 * XV ** 2 * v)
    H = dg.func.hessian(lambda x: cube(x).sum())(dg.tensor(XV))
    np.testing.assert_allclose(H.numpy(), np.diag(6 * XV))


def test_cube_gradcheck_and_gradgradcheck():
    cube = make_cube()
    x = dg.tensor(XV, requires_grad=True)
    assert dg.gradcheck(cube, (x,))
    assert dg.gradgradcheck(cube, (x,))


def test_cube_broadcasts_like_a_builtin():
    """A user primitive's rule never reduces a broadcast: the engine does it for it."""
    scaled = dg.Primitive("scaled", forward=lambda x, y: x * y,
                          vjp=(lambda g, out, x, y: g * y, lambda g, out, x, y: g * x))
    x = dg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = dg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    scaled(x, b).sum().backward()
    assert b.grad.shape == (3,)
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 5.0, 7.0])


def test_wrong_gradcheck_is_caught():
    """gradcheck is not a rubber stamp: a primitive with a wrong rule fails it."""
    wrong = dg.Primitive("wrong_cube", forward=lambda x: x ** 3, vjp=(lambda g, out, x: g * 2 * x ** 2,))
    with pytest.raises(dg.GradcheckError) as info:
        dg.gradcheck(wrong, (dg.tensor(XV, requires_grad=True),))
    assert "input 0" in str(info.value)
    wrong2 = dg.Primitive("wrong_second", forward=np.sin, vjp=(lambda g, out, x: g * x.detach().cos(),))
    assert dg.gradcheck(wrong2, (dg.tensor(XV, requires_grad=True),))
    with pytest.raises(dg.GradcheckError):  # the detached rule has no second derivative
        dg.gradgradcheck(wrong2, (dg.tensor(XV, requires_grad=True),))


# ---------------------------------------------------------------- indexing

def test_repeated_index_accumulates():
    x = dg.tensor(np.array([1.0, 2.0, 3.0, 4.0]), requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0, 0.0])


def test_repeated_index_pairs_accumulate_with_weights():
    x = dg.tensor(np.zeros((2, 3)), requires_grad=True)
    rows, cols = np.array([1, 1, 0, 1]), np.array([2, 2, 0, 2])
    x[rows, cols].backward(np.array([1.0, 10.0, 100.0, 1000.0]))
    want = np.zeros((2, 3))
    want[0, 0], want[1, 2] = 100.0, 1011.0
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_tensor_used_as_index():
    x = dg.tensor(np.array([5.0, 6.0, 7.0]), requires_grad=True)
    idx = dg.tensor([2, 2, 0])  # becomes float64; whole numbers are accepted as indices
    y = x[idx]
    np.testing.assert_array_equal(y.detach().numpy(), [7.0, 7.0, 5.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 2.0])


# ---------------------------------------------------------------- numerical stability

BIG = np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -1000.0]])


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_of_large_inputs(axis):
    x = dg.tensor(BIG, requires_grad=True)
    p = x.softmax(axis)
    assert np.all(np.isfinite(p.detach().numpy()))
    np.testing.assert_allclose(p.detach().numpy(), np_softmax(BIG, axis), rtol=1e-12, atol=1e-300)
    # Closed form for a row: softmax([1000, 999, -1000]) = [1, e^-1, 0] / (1 + e^-1).
    if axis == -1:
        np.testing.assert_allclose(p.detach().numpy()[0], np.array([1.0, np.exp(-1.0), 0.0]) / (1 + np.exp(-1.0)))
    G = np.arange(6.0).reshape(2, 3)
    p.backward(G)
    P = np_softmax(BIG, axis)
    want = P * (G - (G * P).sum(axis=axis, keepdims=True))
    assert np.all(np.isfinite(x.grad.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_of_large_inputs(axis):
    x = dg.tensor(BIG, requires_grad=True)
    lp = x.log_softmax(axis)
    m = BIG.max(axis=axis, keepdims=True)
    want = BIG - m - np.log(np.exp(BIG - m).sum(axis=axis, keepdims=True))
    assert np.all(np.isfinite(lp.detach().numpy()))
    np.testing.assert_allclose(lp.detach().numpy(), want, rtol=1e-12)
    lp.sum().backward()
    n = BIG.shape[axis]
    np.testing.assert_allclose(x.grad.numpy(), 1 - n * np_softmax(BIG, axis), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (-1, False), (0, True)])
def test_logsumexp_of_large_inputs(axis, keepdims):
    x = dg.tensor(BIG, requires_grad=True)
    out = x.logsumexp(axis, keepdims)
    m = BIG.max(axis=axis, keepdims=True)
    want = np.log(np.exp(BIG - m).sum(axis=axis, keepdims=True)) + m
    want = want if keepdims else np.squeeze(want, axis=axis)
    assert np.all(np.isfinite(out.detach().numpy()))
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-14)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np_softmax(BIG, axis if axis is not None else (0, 1)),
                               rtol=1e-10, atol=1e-300)


def test_sigmoid_of_large_inputs():
    x = dg.tensor(np.array([-1000.0, 0.0, 1000.0]), requires_grad=True)
    y = x.sigmoid()
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, 0.5, 1.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.25, 0.0])


def test_subgradient_conventions():
    """relu'(0) = 0, abs'(0) = 0; ties in maximum and max share the gradient evenly (as torch)."""
    z = dg.tensor(np.array([0.0, 1.0, -1.0]), requires_grad=True)
    (z.relu() + z.abs()).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [0.0, 2.0, -1.0])
    a, b = dg.tensor([1.0, 2.0], requires_grad=True), dg.tensor([1.0, 3.0], requires_grad=True)
    dg.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 1.0])
    m = dg.tensor(np.array([3.0, 1.0, 3.0, 3.0]), requires_grad=True)
    m.max().backward()
    np.testing.assert_allclose(m.grad.numpy(), [1 / 3, 0.0, 1 / 3, 1 / 3])


def test_pow_derivatives_at_a_zero_base():
    """x**0 is constant (derivative 0, even at x = 0), and 0**y = 0 for y > 0 (derivative in
    y is 0): not the 0 * inf and 0 * log 0 = nan the textbook formulas give there."""
    with np.errstate(divide="ignore", invalid="ignore"):
        x = dg.tensor(np.array([0.0, 2.0]), requires_grad=True)
        (x ** 0).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])

        b = dg.tensor(np.array([0.0, 0.0, 2.0]), requires_grad=True)
        e = dg.tensor(np.array([0.0, 2.5, 3.0]), requires_grad=True)
        (b ** e).sum().backward()
        np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0, 12.0])
        np.testing.assert_allclose(e.grad.numpy(), [0.0, 0.0, 8.0 * np.log(2.0)], rtol=1e-15)

        _, t = jvp(lambda u, v: u ** v, (dg.tensor([0.0, 0.0]), dg.tensor([0.0, 2.0])),
                   (dg.ones(2), dg.ones(2)))
        np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])


def test_numpy_integer_axis():
    x = dg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    axis = np.argmax([0, 5])  # an np.int64
    np.testing.assert_array_equal(x.sum(axis).detach().numpy(), [3.0, 12.0])
    np.testing.assert_allclose(x.softmax(axis).detach().numpy(), np.exp(x.detach().numpy()) / np.exp(x.detach().numpy()).sum(1, keepdims=True))
    x.amax(axis=(np.int32(0), 1)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0], [0, 0, 1.0]])


def test_grad_walks_only_the_paths_to_its_inputs():
    """dg.grad(y, x) runs no rule off the paths from y to x (torch's autograd.grad prunes
    them too): a branch whose rule would raise (a primitive without VJP rules) is not
    walked, and x's gradient is the closed form d sum(2 x w) / dx = 2 w."""
    no_rule = dg.Primitive("no_rule", lambda a: a * 1.0)
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    w = dg.tensor([3.0, 4.0], requires_grad=True)
    y = (x * 2 * no_rule(w)).sum()
    (gx,) = dg.grad(y, x, retain_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), [6.0, 8.0])
    with pytest.raises(NotImplementedError, match="no_rule"):  # the branch, when it is walked
        dg.grad(y, w)
