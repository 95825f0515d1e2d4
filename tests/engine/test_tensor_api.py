"""The names a PyTorch user reaches for: creation without aliasing, module-level functions,
NumPy's own functions on Tensors, comparisons, PyTorch's argument names and the casts.

Every check compares against NumPy or PyTorch (marked ``oracle``), never against duograd.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg

oracle = pytest.mark.oracle  # these take the torch fixture (conftest.py): a clean skip without it


# ---------------------------------------------------------------- data integrity

@pytest.mark.parametrize("make", [dg.tensor, dg.Tensor], ids=["tensor", "Tensor"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_tensor_always_copies(make, dtype):
    x = np.array([1, 2, 3], dtype=dtype)
    t = make(x)
    x[0] = 99
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
    assert not np.shares_memory(t.numpy(), x)


def test_from_numpy_shares_memory_both_ways():
    x = np.array([1.0, 2.0, 3.0])
    t = dg.from_numpy(x)
    x[0] = 99.0
    assert t.numpy()[0] == 99.0
    t.numpy()[1] = -1.0
    assert x[1] == -1.0
    assert dg.from_numpy(np.ones(2, dtype=np.float32)).dtype == np.float32


def test_an_optimizer_step_on_a_from_numpy_parameter_is_visible_in_the_array():
    x = np.array([1.0, -2.0])
    w = dg.from_numpy(x, requires_grad=True)
    (w * w).sum().backward()
    dg.optim.SGD([w], lr=0.25).step()
    np.testing.assert_array_equal(x, [0.5, -1.0])  # w - 0.25 * 2w


@pytest.mark.parametrize("bad", [np.array(["a"]), [1.0, 2.0], 3.0])
def test_from_numpy_rejects_what_it_cannot_share(bad):
    with pytest.raises(TypeError, match="from_numpy"):
        dg.from_numpy(bad)


# ---------------------------------------------------------------- creation

@oracle
def test_creation_functions_match_torch(torch):
    # arange of ints is int64, as torch's (tests/conformance/rows_dtypes.py checks that)
    cases = [
        (dg.arange(5.0), torch.arange(5.0, dtype=torch.float64)),
        (dg.arange(1, 4, dtype=dg.float64), torch.arange(1, 4, dtype=torch.float64)),
        (dg.arange(0.0, 1.0, 0.25), torch.arange(0.0, 1.0, 0.25, dtype=torch.float64)),
        (dg.linspace(-1, 1, 5), torch.linspace(-1, 1, 5, dtype=torch.float64)),
        (dg.zeros_like(dg.ones((2, 3))), torch.zeros_like(torch.ones(2, 3, dtype=torch.float64))),
        (dg.ones_like(dg.zeros(4)), torch.ones_like(torch.zeros(4, dtype=torch.float64))),
    ]
    for ours, theirs in cases:
        assert ours.dtype == np.float64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert dg.zeros_like(dg.ones(2, dtype=np.float32)).dtype == np.float32
    assert dg.ones_like(dg.zeros(2), requires_grad=True).requires_grad


# ---------------------------------------------------------------- module-level functions

UNARY = ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "softplus", "sin", "cos", "abs"]


@pytest.mark.parametrize("name", UNARY)
def test_module_function_equals_the_method(name):
    a = np.array([0.3, 1.7, 0.9])
    x, y = dg.tensor(a, requires_grad=True), dg.tensor(a, requires_grad=True)
    f = getattr(dg, name)(x)
    m = getattr(y, name)()
    np.testing.assert_array_equal(f.detach().numpy(), m.detach().numpy())
    f.sum().backward()
    m.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())


@oracle
@pytest.mark.parametrize("name", UNARY)
def test_module_function_matches_torch(torch, name):
    a = np.array([0.3, 1.7, 0.9])
    x, xt = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    getattr(dg, name)(x).sum().backward()
    tf = {"softplus": torch.nn.functional.softplus, "relu": torch.relu}.get(name, getattr(torch, name, None))
    tf(xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)


@oracle
def test_module_reductions_take_torch_names(torch):
    a = np.random.default_rng(0).standard_normal((3, 4))
    t, tt = dg.tensor(a), torch.tensor(a)
    for ours, theirs in [
        (dg.sum(t, dim=1, keepdim=True), tt.sum(dim=1, keepdim=True)),
        (t.mean(dim=0), tt.mean(dim=0)),
        (t.amax(dim=1, keepdim=True), tt.amax(dim=1, keepdim=True)),
        (dg.amin(t, dim=-1), tt.amin(dim=-1)),
        (t.max(dim=1, keepdim=True).values, tt.max(dim=1, keepdim=True).values),
        (t.var(dim=1), tt.var(dim=1)),
        (t.std(dim=1, correction=0), tt.std(dim=1, correction=0)),
        (t.logsumexp(dim=1), tt.logsumexp(dim=1)),
        (t.softmax(dim=0), tt.softmax(dim=0)),
        (dg.log_softmax(t, dim=1), tt.log_softmax(dim=1)),
        (t.cumsum(dim=1), tt.cumsum(dim=1)),
    ]:
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13, atol=1e-15)
    with pytest.raises(TypeError, match=r"sum\(\): give dim or its alias axis"):
        t.sum(axis=0, dim=0)


# ---------------------------------------------------------------- NumPy's functions

def _grads(fn, *arrays):
    ts = [dg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    assert isinstance(out, dg.Tensor)
    out.sum().backward()
    return out.detach().numpy(), [t.grad.detach().numpy() for t in ts]


A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
B = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.1]])


@pytest.mark.parametrize("np_form, method_form, arrays", [
    (np.exp, lambda t: t.exp(), (A,)),
    (lambda t: np.sum(t, axis=0), lambda t: t.sum(axis=0), (A,)),
    (np.matmul, lambda a, b: a @ b, (A, B)),
    (lambda t: np.ones(3) + t, lambda t: t + 1.0, (A,)),
    (lambda t: np.maximum(t, 0.5), lambda t: dg.maximum(t, 0.5), (A,)),
    (lambda t: np.mean(t, axis=1, keepdims=True), lambda t: t.mean(axis=1, keepdims=True), (A,)),
    (lambda t: np.transpose(t) * np.array([1.0, 2.0]), lambda t: t.T * dg.tensor([1.0, 2.0]), (A,)),
    (lambda t: np.clip(t, -0.5, 1.0), lambda t: t.clip(-0.5, 1.0), (A,)),
])
def test_numpy_functions_on_tensors_are_differentiable(np_form, method_form, arrays):
    v1, g1 = _grads(np_form, *arrays)
    v2, g2 = _grads(method_form, *arrays)
    np.testing.assert_array_equal(v1, v2)
    for a, b in zip(g1, g2):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call, name", [
    (lambda t: np.linalg.inv(t), "numpy.linalg.inv"),
    (lambda t: np.cbrt(t), "numpy.cbrt"),
    (lambda t: np.add.reduce(t), "numpy.add.reduce"),
    (lambda t: np.exp(t, out=np.empty((2, 2))), "numpy.exp with out"),
    (lambda t: np.sort(t), "numpy.sort"),
])
def test_numpy_functions_without_a_counterpart_name_themselves(call, name):
    with pytest.raises(TypeError, match=name.replace(".", r"\.")):
        call(dg.ones((2, 2)))


# ---------------------------------------------------------------- comparisons

OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("other", ["tensor", "array", "number"])
def test_comparisons_are_elementwise_bool_tensors_without_history(op, other):
    a = np.array([[0.5, 1.0, 2.0], [1.0, -1.0, 3.0]])
    b = np.array([1.0, 1.0, 2.5])
    rhs = {"tensor": dg.tensor(b), "array": b, "number": 1.0}[other]
    ref = OPS[op](a, {"tensor": b, "array": b, "number": 1.0}[other])
    x = dg.tensor(a, requires_grad=True)
    out = OPS[op](x, rhs)
    assert isinstance(out, dg.Tensor) and out.dtype == np.bool_
    assert not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), ref)
    reflected = OPS[op](rhs, x) if other != "tensor" else OPS[op](dg.tensor(b), x)
    np.testing.assert_array_equal(reflected.numpy(), OPS[op](b if other != "number" else 1.0, a))


@oracle
@pytest.mark.parametrize("op", OPS)
def test_comparisons_match_torch(torch, op):
    a = np.array([0.5, 1.0, 2.0, np.nan])
    b = np.array([1.0, 1.0, 1.5, np.nan])
    ours = OPS[op](dg.tensor(a), dg.tensor(b)).numpy()
    theirs = OPS[op](torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_tensors_still_hash_by_identity_and_compare_with_none():
    a, b = dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.0])
    assert len({a, b}) == 2 and {a: 1}[a] == 1
    assert (a == None) is False and (a != None) is True  # noqa: E711
    assert (a == "x") is False


@oracle
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin_match_torch(torch, axis):
    a = np.random.default_rng(1).standard_normal((4, 5))
    t, tt = dg.tensor(a, requires_grad=True), torch.tensor(a)
    for ours, theirs in [(t.argmax(axis), tt.argmax(dim=axis)), (t.argmin(axis), tt.argmin(dim=axis)),
                         (dg.argmax(t, dim=axis), tt.argmax(dim=axis))]:
        assert ours.dtype == np.int64 and not ours.requires_grad
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---------------------------------------------------------------- casts and conversions

@oracle
@pytest.mark.parametrize("cast", ["float", "double", "astype"])
def test_casts_are_differentiable_like_torch_to(torch, cast):
    a = np.array([0.5, -1.25, 2.0])
    x = dg.tensor(a.astype(np.float64 if cast == "float" else np.float32), requires_grad=True)
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    if cast == "float":
        y, yt = x.float(), xt.float()
    elif cast == "double":
        y, yt = x.double(), xt.double()
    else:
        y, yt = x.astype(np.float64), xt.to(torch.float64)
    assert y.dtype == np.dtype(str(yt.dtype).replace("torch.", ""))
    (y * y).sum().backward()
    (yt * yt).sum().backward()
    assert x.grad.dtype == x.dtype
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_tolist_and_requires_grad_():
    t = dg.tensor([[1.0, 2.0]])
    assert t.tolist() == [[1.0, 2.0]] and dg.tensor(3.0).tolist() == 3.0
    assert t.requires_grad_() is t and t.requires_grad
    assert not t.requires_grad_(False).requires_grad


# ---------------------------------------------------------------- node creation

def _fields(t: dg.Tensor) -> dict:
    return {name: getattr(t, name) for name in dg.Tensor.__slots__ if name != "__weakref__"}


@pytest.mark.parametrize("recorded", [False, True])
def test_primitive_call_sets_the_same_fields_as_wrap(recorded):
    """Primitive.__call__ inlines tensor._wrap's body: every slot is set, to what _wrap sets
    (the recorded node's fields are the ones autograd.make_node sets)."""
    from duograd._tensor import _wrap
    from duograd.autograd import make_node
    from duograd.ops import exp_p  # the row itself (dg.exp is it behind torch's keyword names)
    x = dg.tensor([1.0, -2.0], requires_grad=recorded)
    y = exp_p(x)
    fields = _fields(y)  # an unset slot would raise AttributeError here
    node = make_node(y._node.op, (x,), {}) if recorded else None
    expected = _fields(_wrap(y.detach().numpy(), node=node))
    assert fields.keys() == expected.keys()
    for name in fields:
        if name == "_data":
            assert fields[name] is y.detach().numpy()
        elif name == "_node" and recorded:
            got, want = fields[name], expected[name]
            # (a slot the engine leaves empty until needed, ``_x``/``_out``, is empty in both)
            assert {f: getattr(got, f) for f in got.__slots__ if hasattr(got, f)} == \
                {f: getattr(want, f) for f in want.__slots__ if hasattr(want, f)}
            assert not hasattr(got, "_x") and not hasattr(got, "_out")
        else:
            assert fields[name] == expected[name], name
