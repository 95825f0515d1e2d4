"""Forward-mode automatic differentiation on scalars: dual numbers.

A ``Dual`` carries two floats through a computation: ``value``, the number itself, and
``tangent``, how fast that number changes as one chosen input changes. Every operation
updates both at once, the tangent by the chain rule, so the derivative arrives together
with the result and no graph is kept. Seed one input's tangent with 1 (the others with
0) and the output's tangent is d(output)/d(that input).

One sweep gives the derivative along one input. A function of n inputs needs n sweeps
for its whole gradient, where reverse mode (``duograd.scalar.engine.Value``) needs one
backward pass: the trade the tutorial measures.

Operators, methods, accepted numbers and errors are those of ``Value``: ``+ - * /``,
unary ``-``, ``**`` with a number exponent, the reflected forms, ``exp log tanh relu
sigmoid sin cos``; bool and non-numbers raise ``TypeError``, domain errors follow ``math``.

>>> x, y = Dual(3.0, 1.0), Dual(4.0)   # differentiate along x
>>> f = x * y + x
>>> f.value, f.tangent
(15.0, 5.0)
"""

from __future__ import annotations

import math

from duograd.scalar.engine import ACCEPTED, Number, _as_float, _is_number, _log, _power, _power_slope, _sigmoid


def _as_dual(x: object, op: str) -> Dual:
    if isinstance(x, Dual):
        return x
    if _is_number(x):
        return Dual(x)  # a constant: its tangent is 0
    raise TypeError(f"unsupported operand for Dual {op}: expected a Dual or {ACCEPTED}, got {type(x).__name__}")


class Dual:
    """A value and its tangent (its derivative along one direction), updated together.

    >>> x = Dual(0.5, 1.0)
    >>> y = (2 * x).exp()
    >>> round(y.tangent / y.value, 12)   # d exp(2x)/dx = 2 exp(2x)
    2.0
    """

    __array_ufunc__ = None  # let NumPy scalars on the left hand the operation to Dual

    def __init__(self, value: Number, tangent: Number = 0.0) -> None:
        self.value = _as_float(value, "Dual(value)")
        self.tangent = _as_float(tangent, "Dual(tangent)")

    def __repr__(self) -> str:
        return f"Dual(value={self.value!r}, tangent={self.tangent!r})"

    # Each rule is the product or chain rule, applied to the tangents as the values go by.

    def __add__(self, other: Dual | Number) -> Dual:
        other = _as_dual(other, "+")
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __sub__(self, other: Dual | Number) -> Dual:
        other = _as_dual(other, "-")
        return Dual(self.value - other.value, self.tangent - other.tangent)

    def __mul__(self, other: Dual | Number) -> Dual:
        other = _as_dual(other, "*")
        # (x y)' = x' y + x y'
        return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

    def __truediv__(self, other: Dual | Number) -> Dual:
        other = _as_dual(other, "/")
        q = self.value / other.value
        # (x / y)' = x'/y - (x/y) y'/y
        return Dual(q, (self.tangent - q * other.tangent) / other.value)

    def __neg__(self) -> Dual:
        return Dual(-self.value, -self.tangent)

    def __pow__(self, n: Number) -> Dual:
        if isinstance(n, Dual):
            raise TypeError(f"Dual ** Dual is not supported: the exponent must be {ACCEPTED}; "
                            "for a variable exponent of a positive base write (y * x.log()).exp()")
        x, n = self.value, _as_float(n, "Dual ** n: the exponent n")
        return Dual(_power(x, n), _power_slope(x, n) * self.tangent)

    def __radd__(self, other: Number) -> Dual:
        return _as_dual(other, "+") + self

    def __rsub__(self, other: Number) -> Dual:
        return _as_dual(other, "-") - self

    def __rmul__(self, other: Number) -> Dual:
        return _as_dual(other, "*") * self

    def __rtruediv__(self, other: Number) -> Dual:
        return _as_dual(other, "/") / self

    def __rpow__(self, base: object) -> Dual:
        raise TypeError(f"{type(base).__name__} ** Dual is not supported: the exponent must be {ACCEPTED}, "
                        "as in x ** 2; for b ** y with b > 0 write (y * math.log(b)).exp()")

    # Functions: f(x)' = f'(x) x'.

    def exp(self) -> Dual:
        e = math.exp(self.value)
        return Dual(e, e * self.tangent)

    def log(self) -> Dual:
        return Dual(_log(self.value), self.tangent / self.value)

    def tanh(self) -> Dual:
        t = math.tanh(self.value)
        return Dual(t, (1.0 - t * t) * self.tangent)

    def relu(self) -> Dual:
        # NOTE: slope 0 at exactly 0, as in Value.relu.
        return Dual(self.value, self.tangent) if self.value > 0 else Dual(0.0, 0.0)

    def sigmoid(self) -> Dual:
        s = _sigmoid(self.value)
        return Dual(s, s * (1.0 - s) * self.tangent)

    def sin(self) -> Dual:
        return Dual(math.sin(self.value), math.cos(self.value) * self.tangent)

    def cos(self) -> Dual:
        return Dual(math.cos(self.value), -math.sin(self.value) * self.tangent)
