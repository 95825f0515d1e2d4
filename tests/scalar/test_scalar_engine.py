"""The scalar engine (duograd.scalar.engine and .nn) against independent answers.

Every gradient is compared with central finite differences or a closed form. The
per-op checks difference the ``math`` function itself, so they do not lean on the
engine at all; the composition checks difference the engine's forward pass, whose
every op is pinned to ``math`` by the per-op checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from duograd.scalar import Value
from duograd.scalar.engine import topological_order
from duograd.scalar.nn import MLP, Layer, Neuron

from scalar_fd import central_difference


def close(a, b, rel=1e-6, abs_=1e-8):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def engine_grads(fn, xs):
    """Evaluate fn on fresh leaves, run backward, return (value, [d/dx_i])."""
    leaves = [Value(x) for x in xs]
    out = fn(*leaves)
    out.backward()
    return out.data, [leaf.grad for leaf in leaves]


# --- every op against finite differences of the math function -------------------------

GENERAL = [-1.7, -0.3, 0.4, 2.2]
POSITIVE = [0.2, 0.9, 3.5]
NONZERO = [-1.7, -0.3, 0.4, 2.2]

# name: (on a Value, the same on a float written with math, points)
UNARY = {
    "neg": (lambda v: -v, lambda x: -x, GENERAL),
    "exp": (lambda v: v.exp(), math.exp, GENERAL),
    "log": (lambda v: v.log(), math.log, POSITIVE),
    "tanh": (lambda v: v.tanh(), math.tanh, GENERAL),
    "relu": (lambda v: v.relu(), lambda x: max(x, 0.0), GENERAL),  # no point near the kink
    "sigmoid": (lambda v: v.sigmoid(), lambda x: 1 / (1 + math.exp(-x)), GENERAL),
    "sin": (lambda v: v.sin(), math.sin, GENERAL),
    "cos": (lambda v: v.cos(), math.cos, GENERAL),
    "pow2": (lambda v: v**2, lambda x: math.pow(x, 2), GENERAL),
    "pow3": (lambda v: v**3, lambda x: math.pow(x, 3), GENERAL),
    "pow0": (lambda v: v**0, lambda x: 1.0, GENERAL),
    "pow-1": (lambda v: v**-1, lambda x: math.pow(x, -1), NONZERO),
    "pow-2": (lambda v: v**-2, lambda x: math.pow(x, -2), NONZERO),
    "pow0.5": (lambda v: v**0.5, math.sqrt, POSITIVE),
    "pow1.5": (lambda v: v**1.5, lambda x: math.pow(x, 1.5), POSITIVE),
    "pow-2.5": (lambda v: v**-2.5, lambda x: math.pow(x, -2.5), POSITIVE),
}
UNARY_CASES = [(name, x) for name, (_, _, points) in UNARY.items() for x in points]


@pytest.mark.parametrize("name, x", UNARY_CASES, ids=[f"{n}@{x}" for n, x in UNARY_CASES])
def test_unary_op_matches_math_and_finite_differences(name, x):
    on_value, on_float, _ = UNARY[name]
    value, (g,) = engine_grads(on_value, [x])
    assert value == pytest.approx(on_float(x), rel=1e-15, abs=1e-300)
    assert close(g, central_difference(on_float, [x], 0)), (g, central_difference(on_float, [x], 0))


BINARY = {
    "+": (lambda a, b: a + b, lambda a, b: a + b),
    "-": (lambda a, b: a - b, lambda a, b: a - b),
    "*": (lambda a, b: a * b, lambda a, b: a * b),
    "/": (lambda a, b: a / b, lambda a, b: a / b),
}
PAIRS = [(1.3, -0.7), (-2.1, 0.4), (0.5, 3.2)]
BINARY_CASES = [(op, a, b) for op in BINARY for a, b in PAIRS]


@pytest.mark.parametrize("op, a, b", BINARY_CASES, ids=[f"{op}@{a},{b}" for op, a, b in BINARY_CASES])
def test_binary_op_matches_finite_differences(op, a, b):
    on_value, on_float = BINARY[op]
    value, grads = engine_grads(on_value, [a, b])
    assert value == on_float(a, b)
    for i in range(2):
        assert close(grads[i], central_difference(on_float, [a, b], i))


# --- compositions ------------------------------------------------------------------------

COMPOSITIONS = {
    "tanh of products": lambda a, b: (a * b).tanh() * (a - b * 0.5).tanh(),
    "chain of divisions": lambda a, b: a / b / (a + 2.0) / (b * b + 1.0) / 0.3,
    "negative and fractional powers": lambda a, b: a**-1.5 * b**0.5 + (a * b) ** -0.3 - b**2.5,
    "log of sin and exp": lambda a, b: (a.sin() ** 2 + b.exp()).log() * a.cos(),
    "sigmoid and relu": lambda a, b: (a * 2.0 - b).sigmoid() * (a + b).relu(),
    "shared subexpression": lambda a, b: (lambda t: t * t + t.exp() / t)(a * b + 1.0),
    "same node twice": lambda a, b: a * a - b / b + a - a,
    "reflected numbers": lambda a, b: 2.0 / a + 3.0 - b - 1.5 * b + (1 - a) * (4 / (b + 1)),
}
POINTS = [(0.7, 1.3), (1.9, 0.4), (0.35, 2.6)]
COMPOSITION_CASES = [(name, p) for name in COMPOSITIONS for p in POINTS]


@pytest.mark.parametrize("name, point", COMPOSITION_CASES, ids=[f"{n}@{p}" for n, p in COMPOSITION_CASES])
def test_composition_matches_finite_differences(name, point):
    fn = COMPOSITIONS[name]
    _, grads = engine_grads(fn, point)
    forward = lambda *xs: fn(*map(Value, xs)).data
    for i in range(2):
        fd = central_difference(forward, point, i)
        assert close(grads[i], fd, rel=1e-6, abs_=1e-7), (i, grads[i], fd)


REFLECTED = {
    # expression in v: (value, d/dv) in closed form at v = 2.5
    "2 + v": (lambda v: 2 + v, 4.5, 1.0),
    "v + 2": (lambda v: v + 2, 4.5, 1.0),
    "2 - v": (lambda v: 2 - v, -0.5, -1.0),
    "v - 2": (lambda v: v - 2, 0.5, 1.0),
    "2 * v": (lambda v: 2 * v, 5.0, 2.0),
    "v * 2": (lambda v: v * 2, 5.0, 2.0),
    "2 / v": (lambda v: 2 / v, 0.8, -2 / 2.5**2),
    "v / 2": (lambda v: v / 2, 1.25, 0.5),
    "-v": (lambda v: -v, -2.5, -1.0),
    "1.5 - v * 2.0 / 5": (lambda v: 1.5 - v * 2.0 / 5, 0.5, -0.4),
    "np.float64(2) * v": (lambda v: np.float64(2.0) * v, 5.0, 2.0),
}


@pytest.mark.parametrize("expr", REFLECTED)
def test_reflected_forms(expr):
    fn, value, slope = REFLECTED[expr]
    v = Value(2.5)
    out = fn(v)
    assert isinstance(out, Value)
    out.backward()
    assert out.data == pytest.approx(value, rel=1e-15)
    assert v.grad == pytest.approx(slope, rel=1e-15)


# --- backward itself ------------------------------------------------------------------------


def test_seed_example_x_times_y_plus_x():
    x, y = Value(3.0), Value(4.0)
    f = x * y + x
    f.backward()
    assert (f.data, x.grad, y.grad) == (15.0, 5.0, 3.0)  # y + 1 and x, by hand


def test_chain_of_100000_operations_is_iterative():
    # y <- a*y + b, 50,000 times: 100,000 operations deep. dy/dx = a**50000 in closed form.
    a, b, n = 1.00001, 0.001, 50_000
    x = Value(0.5)
    y = x
    for _ in range(n):
        y = y * a + b
    assert len(topological_order(y)) == 1 + 4 * n  # x, then per step: a, a*y, b, sum
    y.backward()
    assert x.grad == pytest.approx(a**n, rel=1e-9)
    assert repr(y).startswith("Value(data=")  # repr does not walk the graph


def test_backward_accumulates_across_calls():
    x, y = Value(3.0), Value(4.0)
    f = x * y + x
    f.backward()
    f.backward()  # accumulate, never double-count what the first call left behind
    assert (x.grad, y.grad, f.grad) == (10.0, 6.0, 2.0)
    (x * x).backward()  # another output sharing x: adds 2x
    assert x.grad == 16.0


def test_graph_attributes_for_the_visualiser():
    x, y = Value(3.0), Value(4.0)
    xy = x * y
    f = xy + x
    assert f._op == "+" and f._prev == (xy, x)
    assert xy._op == "*" and xy._prev == (x, y)
    assert x._op == "" and x._prev == ()
    assert (x * x)._prev == (x, x)  # a tuple keeps both uses
    assert (x**2)._op == "**2" and (x**0.5)._op == "**0.5"
    assert [v._op for v in (x.exp(), x.log(), x.tanh(), x.relu(), x.sigmoid(), x.sin(), x.cos(), -x, x - y, x / y)] == [
        "exp", "log", "tanh", "relu", "sigmoid", "sin", "cos", "neg", "-", "/"]
    order = topological_order(f)
    assert order[-1] is f and set(order) == {f, xy, x, y}
    for node in order:
        assert all(order.index(child) < order.index(node) for child in node._prev)


def test_special_points():
    # closed forms at points the finite-difference grid avoids
    v = Value(0.0)
    v.relu().backward()
    assert v.grad == 0.0  # relu'(0) taken as 0, as PyTorch does
    v = Value(0.0)
    (v**0).backward()
    assert v.grad == 0.0  # a constant, even at 0
    v = Value(-2.0)
    out = v**3
    out.backward()
    assert (out.data, v.grad) == (-8.0, 12.0)  # negative base, integer exponent: fine
    v = Value(-1000.0)
    out = v.sigmoid()
    out.backward()
    assert (out.data, v.grad) == (0.0, 0.0)  # no overflow in exp(1000)
    v = Value(1000.0)
    out = v.sigmoid()
    out.backward()
    assert (out.data, v.grad) == (1.0, 0.0)


# --- bad input ------------------------------------------------------------------------------

TYPE_ERRORS = {
    "Value('a')": (lambda: Value("a"), r"Value\(data\).*int or float.*got str"),
    "Value(True)": (lambda: Value(True), r"bool is not accepted.*got bool"),
    "Value(None)": (lambda: Value(None), r"int or float.*got NoneType"),
    "Value([1.0])": (lambda: Value([1.0]), r"int or float.*got list"),
    "Value(Value(1))": (lambda: Value(Value(1.0)), r"int or float.*got Value"),
    "v ** Value": (lambda: Value(2.0) ** Value(3.0), r"Value \*\* Value is not supported.*exponent must be.*int or float"),
    "v ** '2'": (lambda: Value(2.0) ** "2", r"exponent.*int or float.*got str"),
    "v ** True": (lambda: Value(2.0) ** True, r"exponent.*bool is not accepted"),
    "2 ** v": (lambda: 2 ** Value(3.0), r"int \*\* Value is not supported.*exponent must be.*int or float"),
    "v + 'a'": (lambda: Value(1.0) + "a", r"Value \+.*a Value or a real number.*got str"),
    "'a' + v": (lambda: "a" + Value(1.0), r"Value \+.*got str"),
    "v * None": (lambda: Value(1.0) * None, r"Value \*.*got NoneType"),
    "v - True": (lambda: Value(1.0) - True, r"Value -.*bool is not accepted"),
    "v / [1]": (lambda: Value(1.0) / [1.0], r"Value /.*got list"),
    "array + v": (lambda: np.array([1.0, 2.0]) + Value(1.0), r"Value \+.*got ndarray"),
}


@pytest.mark.parametrize("case", TYPE_ERRORS)
def test_bad_operands_raise_type_error_saying_what_is_accepted(case):
    fn, message = TYPE_ERRORS[case]
    with pytest.raises(TypeError, match=message):
        fn()


DOMAIN_ERRORS = {
    "log(0)": (lambda: Value(0.0).log(), ValueError, r"^log: math domain error for 0\.0$"),
    "log(-2)": (lambda: Value(-2.0).log(), ValueError, r"^log: math domain error for -2\.0$"),
    "(-8) ** 0.5": (lambda: Value(-8.0) ** 0.5, ValueError, r"math domain error for -8\.0 \*\* 0\.5"),
    "v / 0": (lambda: Value(1.0) / 0, ZeroDivisionError, "division by zero"),
    "1 / Value(0)": (lambda: 1 / Value(0.0), ZeroDivisionError, "division by zero"),
    "v / Value(0)": (lambda: Value(1.0) / Value(0.0), ZeroDivisionError, "division by zero"),
    "0 ** -1": (lambda: Value(0.0) ** -1, ZeroDivisionError, "negative power"),
    "backward of sqrt at 0": (lambda: (Value(0.0) ** 0.5).backward(), ZeroDivisionError, "negative power"),
    "exp(1000)": (lambda: Value(1000.0).exp(), OverflowError, "range"),
}


@pytest.mark.parametrize("case", DOMAIN_ERRORS)
def test_domain_errors_follow_math(case):
    fn, error, message = DOMAIN_ERRORS[case]
    with pytest.raises(error, match=message):
        fn()


# --- scalar nn --------------------------------------------------------------------------------


def test_mlp_parameter_count():
    model = MLP(2, [16, 16, 1])
    assert len(model.parameters()) == 337
    assert [len(layer.parameters()) for layer in model.layers] == [2 * 16 + 16, 16 * 16 + 16, 16 + 1]


def test_parameter_order_layer_by_layer_weights_before_bias():
    model = MLP(3, [4, 2], rng=0)
    expected = []
    for layer in model.layers:
        for neuron in layer.neurons:
            expected += neuron.w + [neuron.b]
    params = model.parameters()
    assert len(params) == len(expected) == 4 * 4 + 2 * 5
    assert all(p is q for p, q in zip(params, expected))
    neuron = model.layers[0].neurons[0]
    assert neuron.parameters()[-1] is neuron.b and neuron.b.data == 0.0


def test_hidden_layers_relu_last_layer_linear():
    model = MLP(2, [3, 3, 1])
    assert [n.nonlin for layer in model.layers for n in layer.neurons] == [True] * 6 + [False]
    assert Neuron(2).nonlin and not Layer(2, 2, nonlin=False).neurons[0].nonlin


def test_single_output_is_a_value_several_are_a_list():
    assert isinstance(MLP(2, [4, 1])([1.0, 2.0]), Value)
    assert isinstance(Layer(2, 1)([1.0, 2.0]), Value)
    out = MLP(2, [4, 3])([1.0, 2.0])
    assert isinstance(out, list) and len(out) == 3 and all(isinstance(o, Value) for o in out)
    assert isinstance(MLP(1, [1, 1])(0.5), Value)  # a one-wide hidden layer still feeds the next
    with pytest.raises(ValueError, match="expected 2 inputs, got 3"):
        MLP(2, [4, 1])([1.0, 2.0, 3.0])


def test_zero_grad():
    model = MLP(2, [4, 1])
    model([0.3, -0.8]).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())


def test_initialisation_is_reproducible():
    data = lambda m: [p.data for p in m.parameters()]
    assert data(MLP(2, [4, 1], rng=3)) == data(MLP(2, [4, 1], rng=3))
    assert data(MLP(2, [4, 1])) == data(MLP(2, [4, 1], rng=0))  # None means seed 0
    assert data(MLP(2, [4, 1], rng=3)) == data(MLP(2, [4, 1], rng=np.random.default_rng(3)))
    assert data(MLP(2, [4, 1], rng=3)) != data(MLP(2, [4, 1], rng=4))
    layer = Layer(2, 2, rng=0)
    assert data(layer.neurons[0]) != data(layer.neurons[1])  # one generator, drawn in turn
    assert all(-1.0 <= w < 1.0 for w in data(MLP(2, [16, 16, 1])))
    with pytest.raises(TypeError, match="rng"):
        MLP(2, [1], rng="seed")


def test_mlp_gradient_matches_finite_differences():
    model = MLP(2, [6, 5, 1], rng=7)
    x = [0.3, -0.8]
    params = model.parameters()
    model(x).backward()

    def output_at(p, value):
        saved = p.data
        p.data = value
        try:
            return model(x).data
        finally:
            p.data = saved

    checked = 0
    for p in params[::3] + params[-6:]:
        fd = central_difference(lambda t, p=p: output_at(p, t), [p.data], 0)
        assert close(p.grad, fd, rel=1e-6, abs_=1e-8), (p, fd)
        checked += 1
    assert checked >= 15
