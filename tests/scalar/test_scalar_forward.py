"""Forward mode (duograd.scalar.forward.Dual) against reverse mode and finite differences.

One Dual sweep per input, each seeded with tangent 1 on that input, must give the same
gradient as one backward pass through Value (to 1e-12), and both must agree with
central finite differences of the plain function.
"""

from __future__ import annotations

import math

import pytest

from duograd.scalar import Value
from duograd.scalar.forward import Dual

from scalar_fd import central_difference


def forward_gradient(fn, xs):
    """One forward sweep per input: seed its tangent with 1, read the output's tangent."""
    grads = []
    for i in range(len(xs)):
        out = fn(*[Dual(x, 1.0 if j == i else 0.0) for j, x in enumerate(xs)])
        grads.append(out.tangent)
    return out.value, grads


def reverse_gradient(fn, xs):
    leaves = [Value(x) for x in xs]
    out = fn(*leaves)
    out.backward()
    return out.data, [leaf.grad for leaf in leaves]


# Written once, run on Values and on Duals alike.
FUNCTIONS = {
    "seed x*y + x": (lambda x, y: x * y + x, [(3.0, 4.0), (-1.5, 0.25)]),
    "tanh of products": (lambda x, y: (x * y).tanh() * (x - y).tanh(), [(0.7, 1.3), (-0.4, 0.9)]),
    "divisions": (lambda x, y: x / y / (x + 2.0) / (y * y + 1.0), [(0.7, 1.3), (1.9, -0.4)]),
    "powers": (lambda x, y: x**-1.5 * y**0.5 + (x * y) ** 3 - 2 / x, [(0.7, 1.3), (1.9, 0.4)]),
    "log, exp, sin, cos": (lambda x, y: (x.sin() ** 2 + y.exp()).log() * x.cos(), [(0.7, 1.3), (-2.0, 0.1)]),
    "sigmoid and relu": (lambda x, y: (x * 2.0 - y).sigmoid() * (x + y).relu() - (-x).relu(), [(0.7, 1.3), (-0.6, 2.1)]),
    "three inputs": (lambda x, y, z: (x * y + y * z + z * x).tanh() / (1 + z * z) - x ** 2 * z, [(0.3, -0.8, 1.1)]),
    "reflected": (lambda x, y: 2.0 / x + 3.0 - y - 1.5 * y + (1 - x) * (4 / (y + 1)), [(0.7, 1.3)]),
}
CASES = [(name, p) for name, (_, points) in FUNCTIONS.items() for p in points]
IDS = [f"{name}@{p}" for name, p in CASES]


@pytest.mark.parametrize("name, point", CASES, ids=IDS)
def test_dual_equals_value(name, point):
    fn = FUNCTIONS[name][0]
    fwd_value, fwd = forward_gradient(fn, point)
    rev_value, rev = reverse_gradient(fn, point)
    assert fwd_value == rev_value
    for a, b in zip(fwd, rev):
        assert abs(a - b) <= 1e-12 * max(1.0, abs(b)), (fwd, rev)


@pytest.mark.parametrize("name, point", CASES, ids=IDS)
def test_dual_matches_finite_differences(name, point):
    fn = FUNCTIONS[name][0]
    plain = lambda *xs: fn(*map(Dual, xs)).value
    _, fwd = forward_gradient(fn, point)
    for i, g in enumerate(fwd):
        fd = central_difference(plain, point, i)
        assert math.isclose(g, fd, rel_tol=1e-6, abs_tol=1e-8), (i, g, fd)


UNARY = {
    "neg": (lambda d: -d, lambda x: -x, 0.4),
    "exp": (lambda d: d.exp(), math.exp, 0.4),
    "log": (lambda d: d.log(), math.log, 0.4),
    "tanh": (lambda d: d.tanh(), math.tanh, -0.8),
    "relu+": (lambda d: d.relu(), lambda x: max(x, 0.0), 0.4),
    "relu-": (lambda d: d.relu(), lambda x: max(x, 0.0), -0.4),
    "sigmoid": (lambda d: d.sigmoid(), lambda x: 1 / (1 + math.exp(-x)), -0.8),
    "sin": (lambda d: d.sin(), math.sin, 2.1),
    "cos": (lambda d: d.cos(), math.cos, 2.1),
    "pow3": (lambda d: d**3, lambda x: math.pow(x, 3), -0.8),
    "pow-1": (lambda d: d**-1, lambda x: 1 / x, -0.8),
    "pow0.5": (lambda d: d**0.5, math.sqrt, 0.4),
    "pow0": (lambda d: d**0, lambda x: 1.0, 0.4),
}


@pytest.mark.parametrize("name", UNARY)
def test_each_op_against_math(name):
    on_dual, on_float, x = UNARY[name]
    out = on_dual(Dual(x, 1.0))
    assert out.value == pytest.approx(on_float(x), rel=1e-15)
    assert math.isclose(out.tangent, central_difference(on_float, [x], 0), rel_tol=1e-6, abs_tol=1e-8)


def test_tangent_defaults_to_zero_and_scales_linearly():
    x = Dual(2.0)
    assert (x.value, x.tangent) == (2.0, 0.0)
    assert (x * x).tangent == 0.0  # a constant stays constant
    out = Dual(2.0, 3.0) ** 2  # tangent 3 along x: 3 * 2x
    assert (out.value, out.tangent) == (4.0, 12.0)


@pytest.mark.parametrize("make, message", [
    (lambda: Dual("a"), r"Dual\(value\).*int or float"),
    (lambda: Dual(1.0, "b"), r"Dual\(tangent\).*int or float"),
    (lambda: Dual(True), r"bool is not accepted"),
    (lambda: Dual(2.0) ** Dual(1.0), r"Dual \*\* Dual is not supported.*int or float"),
    (lambda: 2 ** Dual(1.0), r"int \*\* Dual is not supported"),
    (lambda: Dual(1.0) + "a", r"Dual \+.*a Dual or a real number"),
    (lambda: Dual(1.0) * Value(1.0), r"Dual \*.*got Value"),
], ids=["Dual('a')", "tangent 'b'", "Dual(True)", "Dual ** Dual", "2 ** Dual", "Dual + 'a'", "Dual * Value"])
def test_bad_operands_raise_type_error(make, message):
    with pytest.raises(TypeError, match=message):
        make()


@pytest.mark.parametrize("make, error", [
    (lambda: Dual(0.0).log(), ValueError),
    (lambda: Dual(-8.0) ** 0.5, ValueError),
    (lambda: Dual(1.0) / 0, ZeroDivisionError),
    (lambda: Dual(0.0) ** -1, ZeroDivisionError),
], ids=["log(0)", "(-8)**0.5", "1/0", "0**-1"])
def test_domain_errors_follow_math(make, error):
    with pytest.raises(error):
        make()
