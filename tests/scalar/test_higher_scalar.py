"""Derivatives of any order from duograd.scalar.higher (Var, grad) against closed forms."""

from __future__ import annotations

import math

import pytest

from duograd.scalar import Value
from duograd.scalar.higher import Var, grad


def nth_derivatives(fn, x0, order):
    """[f'(x0), f''(x0), ...] by applying grad to its own result, `order` times."""
    x = Var(x0)
    d = fn(x)
    out = []
    for _ in range(order):
        (d,) = grad(d, [x])
        out.append(d.data)
    return out


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(b))


def test_seed_example_first_and_second_order():
    x, y = Var(0.7), Var(-1.3)
    f = x**2 * y + x.sin() * y**3
    (fx,) = grad(f, [x])
    (fxx,) = grad(fx, [x])
    X, Y = 0.7, -1.3
    assert abs(fx.data - (2 * X * Y + math.cos(X) * Y**3)) <= 1e-15
    assert abs(fxx.data - (2 * Y - math.sin(X) * Y**3)) <= 1e-15
    assert isinstance(fx, Var) and fx._prev  # a Var with history, not a bare float


# name: (function of a Var, [f', f'', f''', f''''] as closed forms of x, points)
CLOSED_FORMS = {
    "sin": (lambda x: x.sin(),
            lambda x: [math.cos(x), -math.sin(x), -math.cos(x), math.sin(x)], [0.3, -2.0]),
    "cos": (lambda x: x.cos(),
            lambda x: [-math.sin(x), -math.cos(x), math.sin(x), math.cos(x)], [0.3, -2.0]),
    "exp": (lambda x: x.exp(), lambda x: [math.exp(x)] * 4, [0.3, -2.0]),
    "x**5": (lambda x: x**5, lambda x: [5 * x**4, 20 * x**3, 60 * x**2, 120 * x], [1.3, -0.7]),
    "x**2.5": (lambda x: x**2.5,
               lambda x: [2.5 * x**1.5, 3.75 * x**0.5, 1.875 * x**-0.5, -0.9375 * x**-1.5], [1.7, 0.4]),
    "x**-1": (lambda x: x**-1, lambda x: [-(x**-2), 2 * x**-3, -6 * x**-4, 24 * x**-5], [0.8, -1.6]),
    "2/x": (lambda x: 2 / x, lambda x: [-2 * x**-2, 4 * x**-3, -12 * x**-4, 48 * x**-5], [0.8, -1.6]),
    "log": (lambda x: x.log(), lambda x: [1 / x, -1 / x**2, 2 / x**3, -6 / x**4], [0.8, 2.5]),
    "tanh": (lambda x: x.tanh(),
             lambda x: (lambda t: [1 - t * t, -2 * t * (1 - t * t), -2 * (1 - t * t) * (1 - 3 * t * t),
                                   8 * t * (1 - t * t) * (2 - 3 * t * t)])(math.tanh(x)), [0.3, -1.1]),
    "sigmoid": (lambda x: x.sigmoid(),
                lambda x: (lambda s: [s * (1 - s), s * (1 - s) * (1 - 2 * s), s * (1 - s) * (1 - 6 * s + 6 * s * s),
                                      s * (1 - s) * (1 - 2 * s) * (1 - 12 * s + 12 * s * s)])(1 / (1 + math.exp(-x))),
                [0.3, -1.1]),
    "relu": (lambda x: x.relu(), lambda x: [1.0 if x > 0 else 0.0, 0.0, 0.0, 0.0], [0.8, -0.5]),
    "x*x*x - 4x": (lambda x: x * x * x - 4 * x, lambda x: [3 * x * x - 4, 6 * x, 6.0, 0.0], [1.3, -0.7]),
}
CASES = [(name, x) for name, (_, _, points) in CLOSED_FORMS.items() for x in points]


@pytest.mark.parametrize("name, x", CASES, ids=[f"{n}@{x}" for n, x in CASES])
def test_first_to_fourth_derivative_against_closed_form(name, x):
    fn, derivatives, _ = CLOSED_FORMS[name]
    got = nth_derivatives(fn, x, 4)
    want = derivatives(x)
    assert all(close(a, b) for a, b in zip(got, want)), (got, want)


def test_mixed_partials_are_equal_and_match_closed_form():
    # f = x^3 sin(y) + e^{xy}/y: f_xy = f_yx = 3x^2 cos(y) + x e^{xy}
    x, y = Var(0.6), Var(1.4)
    f = x**3 * y.sin() + (x * y).exp() / y
    fx, fy = grad(f, [x, y])
    (fxy,) = grad(fx, [y])
    (fyx,) = grad(fy, [x])
    X, Y = 0.6, 1.4
    want = 3 * X**2 * math.cos(Y) + X * math.exp(X * Y)
    assert close(fxy.data, want) and close(fyx.data, want)
    assert close(fx.data, 3 * X**2 * math.sin(Y) + math.exp(X * Y))


def test_unused_input_gets_var_zero():
    x, y = Var(2.0), Var(5.0)
    dx, dy = grad(x * 3.0, [x, y])
    assert isinstance(dy, Var) and dy.data == 0.0
    assert dx.data == 3.0
    (ddx,) = grad(dx, [x])  # the slope 3 does not depend on x
    assert isinstance(ddx, Var) and ddx.data == 0.0
    assert grad(x, [x])[0].data == 1.0  # d(x)/dx


def test_grad_of_a_10000_op_chain_is_iterative():
    # z <- sin(a z), 5,000 times (10,000 operations), against the chain rule run by hand on floats:
    # z' <- a cos(a z) z'  and  z'' <- a cos(a z) z'' - a^2 sin(a z) z'^2
    a, n, x0 = 1.0001, 5000, 0.3
    x = Var(x0)
    z = x
    for _ in range(n):
        z = (z * a).sin()
    (d1,) = grad(z, [x])
    (d2,) = grad(d1, [x])

    zf, d1f, d2f = x0, 1.0, 0.0
    for _ in range(n):
        c, s = math.cos(a * zf), math.sin(a * zf)
        zf, d1f, d2f = s, a * c * d1f, a * c * d2f - a * a * s * d1f * d1f
    assert close(z.data, zf) and close(d1.data, d1f, 1e-9) and close(d2.data, d2f, 1e-9)


VAR_VS_VALUE = {
    "seed": lambda x, y: x**2 * y + x.sin() * y**3,
    "tanh of products": lambda x, y: (x * y).tanh() * (x - y * 0.5).tanh(),
    "divisions": lambda x, y: x / y / (x + 2.0) / (y * y + 1.0),
    "powers": lambda x, y: x**-1.5 * y**0.5 + (x * y) ** -0.3,
    "log, exp, cos": lambda x, y: (x.sin() ** 2 + y.exp()).log() * x.cos(),
    "sigmoid, relu, reflected": lambda x, y: (2.0 - x / y).sigmoid() * (x + y).relu() + 3 / (1 - x),
}


@pytest.mark.parametrize("name", VAR_VS_VALUE)
def test_var_first_derivatives_equal_value(name):
    fn, point = VAR_VS_VALUE[name], (0.7, 1.3)
    values = [Value(p) for p in point]
    out = fn(*values)
    out.backward()
    vars_ = [Var(p) for p in point]
    result = fn(*vars_)
    assert result.data == out.data
    for v, d in zip(values, grad(result, vars_)):
        assert close(d.data, v.grad, 1e-14), (d.data, v.grad)


def test_graph_attributes_for_the_visualiser():
    x, y = Var(1.0), Var(2.0)
    f = x * y + x.sin()
    assert f._op == "+" and f._prev[0]._op == "*" and f._prev[0]._prev == (x, y)
    assert f._prev[1]._op == "sin" and x._op == "" and x._prev == ()
    assert (x**3)._op == "**3"


@pytest.mark.parametrize("make, error, message", [
    (lambda: Var("a"), TypeError, r"Var\(data\).*int or float"),
    (lambda: Var(2.0) ** Var(1.0), TypeError, r"Var \*\* Var is not supported"),
    (lambda: 2 ** Var(1.0), TypeError, r"int \*\* Var is not supported"),
    (lambda: Var(1.0) + "a", TypeError, r"Var \+.*a Var or a real number"),
    (lambda: grad(2.0, [Var(1.0)]), TypeError, r"grad: output must be a Var"),
    (lambda: grad(Var(1.0), [Value(1.0)]), TypeError, r"grad: inputs\[0\] must be a Var, got Value"),
    (lambda: Var(0.0).log(), ValueError, r"log: math domain error for 0\.0"),
    (lambda: Var(-8.0) ** 0.5, ValueError, "math domain error"),
    (lambda: Var(1.0) / 0.0, ZeroDivisionError, "division by zero"),
], ids=["Var('a')", "Var ** Var", "2 ** Var", "Var + 'a'", "grad(float)", "grad wrt Value", "log(0)", "(-8)**0.5", "1/0"])
def test_bad_input(make, error, message):
    with pytest.raises(error, match=message):
        make()
