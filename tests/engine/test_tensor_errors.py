"""docs/api.md, "Errors": bad input gets a clear exception, never a silently wrong number.

Each test asserts the exception's type, that its message names the operation and the
shapes involved, and that the failed call left every tensor as it was: data arrays
equal to copies taken before, ``.grad`` unchanged (including a backward that fails
part-way through the graph).

The binary elementwise ops and the ops with an axis come from specs.BINARY_OPS and
specs.AXIS_OPS, so a new op there gets its shape, operand-type and axis errors here.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import numpy as np
import pytest

import duograd as dg
from specs import AXIS_OPS, BINARY_OPS


def leaf(shape, seed=0, grad=True):
    """A leaf that requires grad and already holds a gradient (so 'unchanged' means something)."""
    rng = np.random.default_rng(seed)
    t = dg.tensor(rng.standard_normal(shape), requires_grad=True)
    if grad:
        t.grad = dg.tensor(rng.standard_normal(shape))
    return t


@contextmanager
def unchanged(*tensors):
    """Assert that the block leaves every tensor's data and gradient exactly as it was."""
    data = [t._data.copy() for t in tensors]
    grads = [t.grad for t in tensors]
    grad_values = [None if g is None else g._data.copy() for g in grads]
    yield
    for t, d, g, gv in zip(tensors, data, grads, grad_values):
        assert t._data.shape == d.shape
        np.testing.assert_array_equal(t._data, d)
        assert t.grad is g, "a failed call replaced .grad"
        if g is not None:
            np.testing.assert_array_equal(g._data, gv)


def shape_text(shape) -> str:
    """A pattern matching a shape as Python or NumPy print it: (2, 3) or (2,3)."""
    return r"\(" + r",\s*".join(str(n) for n in shape) + (r",\)" if len(shape) == 1 else r"\)")


def assert_names(message: str, op: str, *shapes):
    assert op in message, f"{op!r} not named in: {message}"
    for s in shapes:
        assert re.search(shape_text(s), message), f"shape {s} not named in: {message}"


# ---------------------------------------------------------------- shapes that do not broadcast

@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_shapes_that_do_not_broadcast(op):
    x, y = leaf((2, 3), 0), leaf((4,), 1)
    error = RuntimeError if op == "where" else ValueError  # torch.where's class
    with unchanged(x, y), pytest.raises(error) as info:
        BINARY_OPS[op].fn(x, y, np.ones((2, 3), bool))
    assert_names(str(info.value), op, (2, 3), (4,))


@pytest.mark.parametrize("op", ["add", "mul"])
def test_numpy_operand_that_does_not_broadcast(op):
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        BINARY_OPS[op].fn(np.ones((3, 2)), x, None)
    assert_names(str(info.value), op, (3, 2), (2, 3))


def test_broadcast_to_an_incompatible_shape():
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        x.broadcast_to((3, 3))
    assert_names(str(info.value), "broadcast_to", (2, 3), (3, 3))


# ---------------------------------------------------------------- matmul

@pytest.mark.parametrize("sx, sy", [((2, 3), (4, 2)), ((2, 3), (4,)), ((4,), (2, 3)), ((3,), (4,)),
                                    ((2, 2, 3), (2, 4, 5))])
def test_matmul_inner_dimensions_differ(sx, sy):
    x, y = leaf(sx, 0), leaf(sy, 1)
    with unchanged(x, y), pytest.raises(ValueError) as info:
        x @ y
    assert_names(str(info.value), "matmul", sx, sy)


def test_matmul_batch_dimensions_do_not_broadcast():
    x, y = leaf((2, 2, 3), 0), leaf((3, 3, 2), 1)
    with unchanged(x, y), pytest.raises(ValueError) as info:
        dg.matmul(x, y)
    assert_names(str(info.value), "matmul", (2, 2, 3), (3, 3, 2))


def test_matmul_of_a_0d_tensor():
    x, y = leaf((), 0), leaf((2, 3), 1)
    with unchanged(x, y), pytest.raises(ValueError) as info:
        x @ y
    assert_names(str(info.value), "matmul", (), (2, 3))


# ---------------------------------------------------------------- axes

# Every op of specs.AXIS_OPS, plus the shape ops that take an axis.
AXIS_FNS = {name: (lambda x, a, op=op: op.fn(x, a, False)) for name, op in AXIS_OPS.items()}
AXIS_FNS.update({
    "squeeze": lambda x, a: x.squeeze(a),
    "concatenate": lambda x, a: dg.concatenate([x, x], axis=a),
})
ONE_AXIS = {name for name, op in AXIS_OPS.items() if op.one_axis} | {"concatenate"}
MANY_AXES = [name for name in AXIS_OPS if name not in ONE_AXIS]

# An op that takes one axis gets no tuple (a tuple is a TypeError, tested below).
AXIS_CASES = [(op, axis) for op in AXIS_FNS for axis in (2, -3, (0, 2))
              if not (op in ONE_AXIS and isinstance(axis, tuple))]


@pytest.mark.parametrize("op, axis", AXIS_CASES, ids=[f"{op}-{axis}" for op, axis in AXIS_CASES])
def test_axis_out_of_range(op, axis):
    x = leaf((2, 3))
    error = IndexError if op == "concatenate" else ValueError  # torch.cat's class for a bad dim
    with unchanged(x), pytest.raises(error) as info:  # np.AxisError is a ValueError too
        AXIS_FNS[op](x, axis)
    assert_names(str(info.value), op, (2, 3))


@pytest.mark.parametrize("op", MANY_AXES)
def test_repeated_axis(op):
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        AXIS_FNS[op](x, (0, -2))
    assert_names(str(info.value), op, (2, 3))


@pytest.mark.parametrize("op", sorted(ONE_AXIS))
def test_one_axis_ops_refuse_a_tuple(op):
    """A tuple axis must not silently mean its first element."""
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(TypeError) as info:
        AXIS_FNS[op](x, (0, 1))
    assert op in str(info.value) and "axis" in str(info.value)


@pytest.mark.parametrize("axis", [3, -4])
def test_unsqueeze_axis_out_of_range(axis):
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        x.unsqueeze(axis)
    assert_names(str(info.value), "unsqueeze", (2, 3))


@pytest.mark.parametrize("axis", [3, -4])
def test_stack_axis_out_of_range(axis):
    x, y = leaf((2, 3), 0), leaf((2, 3), 1)
    with unchanged(x, y), pytest.raises(IndexError) as info:  # torch.stack's class
        dg.stack([x, y], axis=axis)
    assert_names(str(info.value), "stack", (2, 3))


def test_stack_of_different_shapes():
    x, y = leaf((2, 3), 0), leaf((2, 4), 1)
    with unchanged(x, y), pytest.raises(RuntimeError) as info:  # torch.stack's class
        dg.stack([x, y])
    assert_names(str(info.value), "stack", (2, 3), (2, 4))


def test_concatenate_of_mismatched_shapes():
    x, y = leaf((2, 3), 0), leaf((2, 4), 1)
    with unchanged(x, y), pytest.raises(RuntimeError) as info:  # torch.cat's class
        dg.concatenate([x, y], axis=0)
    assert_names(str(info.value), "concatenate", (2, 3), (2, 4))


# ---------------------------------------------------------------- shape ops

@pytest.mark.parametrize("shape", [(4, 2), (7,), (2, -1, 4)])
def test_reshape_to_a_wrong_size(shape):
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        x.reshape(*shape)
    assert_names(str(info.value), "reshape", (2, 3))


@pytest.mark.parametrize("axes", [(0, 0), (0, 1, 2), (1,), (3, 0), (0, -3)],
                         ids=["repeated", "too many", "too few", "out of range", "negative out of range"])
def test_permute_with_a_bad_permutation(axes):
    """(3, 0) on a matrix must not wrap round to (1, 0)."""
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        x.permute(*axes)
    assert_names(str(info.value), "permute", (2, 3))


@pytest.mark.parametrize("axis", [0, -1, (1, 2)])
def test_numpy_squeeze_of_an_axis_that_is_not_size_1(axis):
    """NumPy's meaning through the dispatch (torch's squeeze leaves such a dim alone)."""
    x = leaf((2, 1, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        np.squeeze(x, axis)
    assert_names(str(info.value), "squeeze", (2, 1, 3))


def test_data_assignment_of_a_wrong_shape():
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(ValueError) as info:
        x.data = np.ones((3, 2))
    assert_names(str(info.value), "data", (3, 2), (2, 3))


def test_data_assignment_of_the_right_shape_is_allowed():
    x = leaf((2, 3))
    x.data = np.full((2, 3), 7.0)
    np.testing.assert_array_equal(x.detach().numpy(), np.full((2, 3), 7.0))


# ---------------------------------------------------------------- operand types

BAD_OPERANDS = {"str": "abc", "dict": {"a": 1}, "None": None, "list of str": ["a", "b", "c"]}
TYPED_OPS = {"matmul": lambda x, o: x @ o, "rmatmul": lambda x, o: o @ x,
             "concatenate": lambda x, o: dg.concatenate([x, o])}
for _name, _op in BINARY_OPS.items():  # every binary op, the bad operand on either side
    TYPED_OPS[_name] = lambda x, o, op=_op: op.fn(x, o, np.ones(3, bool))
    TYPED_OPS["r" + _name] = lambda x, o, op=_op: op.fn(o, x, np.ones(3, bool))


@pytest.mark.parametrize("kind", list(BAD_OPERANDS))
@pytest.mark.parametrize("op", list(TYPED_OPS))
def test_unsupported_operand_type(op, kind):
    x = leaf((3,))
    with unchanged(x), pytest.raises(TypeError) as info:
        TYPED_OPS[op](x, BAD_OPERANDS[kind])
    name = op[1:] if op.startswith("r") and op[1:] in TYPED_OPS else op  # radd names add
    message = str(info.value)
    assert name in message, message
    # and it says what was wrong with the operand: its type, or its dtype for a list of strings
    assert type(BAD_OPERANDS[kind]).__name__ in message or "dtype" in message, message


# torch 2.13 refuses these with a RuntimeError (tests/conformance samples the class against
# torch); the message names the operation and the dtype it refused.
NOT_FLOAT_OPS = {
    "mean": lambda x: x.mean(), "dg.mean": lambda x: dg.mean(x, 0), "var": lambda x: x.var(),
    "std": lambda x: dg.std(x, 0, keepdim=True), "var_mean": lambda x: dg.var_mean(x),
    "std_mean": lambda x: dg.std_mean(x, correction=0), "nanmean": lambda x: x.nanmean(),
    "nanmean(dtype=float64)": lambda x: dg.nanmean(x, dtype=dg.float64),
}


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("op", list(NOT_FLOAT_OPS))
def test_float_only_reductions_refuse_an_integer_or_bool_tensor(op, dtype):
    x = dg.tensor(np.array([[1, 0, 1], [0, 1, 1]]).astype(dtype))
    with pytest.raises(RuntimeError) as info:
        NOT_FLOAT_OPS[op](x)
    message = str(info.value)
    assert op.split("(")[0].removeprefix("dg.") in message and dtype in message, message


def test_mean_with_a_float_dtype_takes_an_integer_tensor_and_refuses_an_integer_dtype():
    x = dg.tensor([[1, 2], [3, 5]])
    np.testing.assert_array_equal(x.mean(1, dtype=dg.float64).numpy(), [1.5, 4.0])
    assert dg.mean(x, dtype=dg.float32).dtype == np.float32
    with pytest.raises(RuntimeError, match="mean.*int32"):
        dg.mean(dg.ones(3), dtype=dg.int32)


@pytest.mark.parametrize("neg", [lambda x: -x, lambda x: x.neg(), lambda x: dg.negative(x),
                                 lambda x: np.negative(x), lambda x: x.clone().neg_()],
                         ids=["-x", "neg", "negative", "np.negative", "neg_"])
def test_negation_of_a_bool_tensor(neg):
    with pytest.raises(RuntimeError, match="neg.*bool tensor"):
        neg(dg.tensor([True, False]))
    np.testing.assert_array_equal(neg(dg.tensor([1, -2])).numpy(), [-1, 2])  # an int stays an int


@pytest.mark.parametrize("data", ["abc", {"a": 1}, [1.0, "x"], object()], ids=["str", "dict", "mixed list", "object"])
def test_tensor_of_unsupported_data(data):
    with pytest.raises(TypeError) as info:
        dg.tensor(data)
    assert "tensor" in str(info.value)


# ---------------------------------------------------------------- misuse of the graph

def test_non_scalar_backward_without_gradient():
    x = leaf((2, 3))
    y = x * 2
    with unchanged(x), pytest.raises(RuntimeError) as info:
        y.backward()
    assert_names(str(info.value), "backward", (2, 3))
    y.backward(np.ones((2, 3)))  # the graph is still there: nothing ran
    np.testing.assert_allclose(x.grad.numpy(), leaf((2, 3)).grad.numpy() + 2)


def test_backward_with_a_gradient_of_the_wrong_shape():
    x = leaf((2, 3))
    y = x * 2
    with unchanged(x), pytest.raises(ValueError) as info:
        y.backward(np.ones((3, 2)))
    assert_names(str(info.value), "backward", (3, 2), (2, 3))


def test_second_backward_through_a_freed_graph():
    x = leaf((3,), grad=False)
    y = (x.exp() * x).sum()
    y.backward()
    first = x.grad.numpy().copy()
    with unchanged(x), pytest.raises(RuntimeError) as info:
        y.backward()
    assert "retain_graph" in str(info.value)
    np.testing.assert_array_equal(x.grad.numpy(), first)


def test_intermediate_of_a_freed_graph_cannot_be_reused():
    x = leaf((3,), grad=False)
    h = x.exp()
    h.sum().backward()
    with pytest.raises(RuntimeError) as info:
        (h * 2).sum().backward()
    assert "exp" in str(info.value) and "retain_graph" in str(info.value)


def test_retain_graph_allows_a_second_backward():
    xv = np.array([0.3, -1.2, 2.0])
    x = dg.tensor(xv, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp(xv) * (1 + xv)), rtol=1e-14)


def test_grad_of_an_input_not_in_the_graph():
    x, z = leaf((3,), 0), leaf((2,), 1)
    y = (x * x).sum()
    with unchanged(x, z), pytest.raises(RuntimeError) as info:
        dg.grad(y, [x, z])
    assert_names(str(info.value), "grad", (2,))
    assert "allow_unused" in str(info.value)


def test_grad_allow_unused_gives_none():
    xv = np.array([1.0, -2.0, 0.5])
    x, z = dg.tensor(xv, requires_grad=True), leaf((2,), 1)
    y = (x * x).sum()
    gx, gz = dg.grad(y, [x, z], allow_unused=True)
    assert gz is None
    np.testing.assert_allclose(gx.numpy(), 2 * xv)


def test_grad_of_an_input_that_does_not_require_grad():
    x, c = leaf((3,)), dg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError) as info:
        dg.grad((x * c).sum(), [x, c])
    assert_names(str(info.value), "grad", (3,))


def test_grad_outputs_of_the_wrong_shape():
    x = leaf((3,))
    y = x * 2
    with unchanged(x), pytest.raises(ValueError) as info:
        dg.grad(y, x, grad_outputs=dg.ones(2))
    assert_names(str(info.value), "grad", (2,), (3,))
    (g,) = dg.grad(y, x, grad_outputs=dg.ones(3))  # and the graph survived the failure
    np.testing.assert_array_equal(g.numpy(), np.full(3, 2.0))


def test_grad_outputs_count_mismatch():
    x = leaf((3,))
    with pytest.raises(ValueError) as info:
        dg.grad([x * 2, x * 3], x, grad_outputs=[dg.ones(3)])
    assert "grad" in str(info.value)


def test_backward_of_a_tensor_without_graph():
    x = dg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError) as info:
        x.sum().backward()
    assert "backward" in str(info.value)


# ---------------------------------------------------------------- a backward that fails part-way

def test_missing_vjp_rule_fails_midway_and_changes_nothing():
    """The failing rule runs after other leaves' gradients were already computed: none of
    them may reach .grad, and the graph stays usable."""
    no_rule = dg.Primitive("no_rule", forward=lambda x: 2 * x)  # no VJP rule at all
    w1, w2, w3 = leaf((3,), 1), leaf((3,), 2), leaf((3,), 3)
    before = [w.grad.numpy().copy() for w in (w1, w2, w3)]
    # Reverse order visits (w2 * w3) first, then reaches no_rule(w1) and fails.
    y = (no_rule(w1) + w2 * w3).sum()
    with unchanged(w1, w2, w3), pytest.raises(NotImplementedError) as info:
        y.backward()
    assert "no_rule" in str(info.value)
    for w, b in zip((w1, w2, w3), before):
        np.testing.assert_array_equal(w.grad.numpy(), b)


def test_missing_rule_for_one_input_only():
    half = dg.Primitive("half_rule", forward=np.multiply,
                        vjp=(lambda g, out, x, y: g * y, None))
    x, y = leaf((3,), 1), leaf((3,), 2)
    gx_before = x.grad.numpy().copy()
    out = half(x, y).sum()
    with unchanged(x, y), pytest.raises(NotImplementedError) as info:
        out.backward()
    assert "half_rule" in str(info.value)
    np.testing.assert_array_equal(x.grad.numpy(), gx_before)
    # Without y needing a gradient, the rule that exists is enough.
    y2 = dg.tensor(y.detach().numpy())
    (gx,) = dg.grad(half(x, y2).sum(), x)
    np.testing.assert_array_equal(gx.detach().numpy(), y.detach().numpy())


def test_missing_jvp_rule_names_the_operation():
    from duograd.func import jvp

    no_jvp = dg.Primitive("no_jvp", forward=np.sin, vjp=(lambda g, out, x: g * x.cos(),))
    x = leaf((3,))
    with unchanged(x), pytest.raises(NotImplementedError) as info:
        jvp(no_jvp, (x,), (dg.ones(3),))
    assert "no_jvp" in str(info.value)


def test_failing_forward_inside_a_larger_expression_changes_nothing():
    W, b = leaf((3, 4), 1), leaf((4,), 2)
    x = dg.tensor(np.ones((2, 5)))
    with unchanged(W, b), pytest.raises(ValueError) as info:
        (x @ W + b).relu().sum().backward()
    assert_names(str(info.value), "matmul", (2, 5), (3, 4))


@pytest.mark.parametrize("axis", [1.0, True, "0", (0, 0.5)], ids=["float", "bool", "str", "tuple with float"])
@pytest.mark.parametrize("op", list(AXIS_OPS))
def test_axis_of_the_wrong_type(op, axis):
    x = leaf((2, 3))
    with unchanged(x), pytest.raises(TypeError) as info:
        AXIS_FNS[op](x, axis)
    assert op in str(info.value) and "axis" in str(info.value)


def test_grad_of_an_unused_input_raises_before_releasing_the_graph():
    """The check runs before the sweep, so the graph survives the failed call."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    z = dg.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match=r"grad: input 1 \(shape \(1,\)\) is not in the graph"):
        dg.grad(y, [x, z])
    y.backward()  # still possible: nothing was released
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_truth_value_of_a_multi_element_tensor_is_ambiguous():
    with pytest.raises(ValueError, match=r"bool: .*shape \(2,\) is ambiguous"):
        bool(dg.tensor([0.0, 0.0]))
    assert bool(dg.tensor([2.0])) is True and bool(dg.tensor(0.0)) is False
