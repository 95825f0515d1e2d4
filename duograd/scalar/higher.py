"""Derivatives of any order on scalars: ``Var`` and ``grad``.

``Value`` (in ``engine.py``) writes its backward rules on plain floats (``g * y``
for a product), and a float does not remember how it was made, so a gradient from the
scalar engine cannot be differentiated again. ``Var`` has the same
operations, but each rule below is written with ``Var`` arithmetic instead: the
backward pass builds new ``Var`` nodes as it goes. ``grad(output, inputs)`` therefore
returns Vars that carry their own history, and ``grad`` can be applied to them again,
to any order, with no code specific to second or third derivatives.

A ``Var`` has ``data`` (a float), ``_prev`` (the Vars it was computed from, a tuple in
argument order) and ``_op`` (the operation's label: ``'+' '*' 'sin' '**2'`` ..., ``''``
for a leaf), with the meanings they have on ``Value``; ``duograd.viz`` reads the last
two. ``_vjp`` maps ``g`` (a Var) to a tuple of Vars, one per entry of ``_prev``.
Accepted numbers and domain errors are those of ``Value`` (see ``engine.py``).

>>> x, y = Var(0.7), Var(-1.3)
>>> f = x**2 * y + x.sin() * y**3
>>> (fx,) = grad(f, [x])       # 2xy + cos(x) y^3, itself a Var with history
>>> (fxx,) = grad(fx, [x])     # 2y - sin(x) y^3
>>> abs(fxx.data - (2 * -1.3 - math.sin(0.7) * (-1.3) ** 3)) <= 1e-15
True
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from duograd.scalar.engine import ACCEPTED, Number, _as_float, _is_number, _log, _power, _sigmoid, topological_order


def _leaf(g: Var) -> tuple[Var, ...]:
    return ()


def _as_var(x: object, op: str) -> Var:
    if isinstance(x, Var):
        return x
    if _is_number(x):
        return Var(x)
    raise TypeError(f"unsupported operand for Var {op}: expected a Var or {ACCEPTED}, got {type(x).__name__}")


class Var:
    """A scalar whose gradients are themselves differentiable (see ``grad``).

    >>> x = Var(2.0)
    >>> (d,) = grad(x**3, [x])   # 3x^2
    >>> (dd,) = grad(d, [x])     # 6x
    >>> d.data, dd.data
    (12.0, 12.0)
    """

    __array_ufunc__ = None  # let NumPy scalars on the left hand the operation to Var

    def __init__(self, data: Number, _children: tuple[Var, ...] = (), _op: str = "") -> None:
        self.data = _as_float(data, "Var(data)")
        self._prev = _children
        self._op = _op
        self._vjp: Callable[[Var], tuple[Var, ...]] = _leaf

    def __repr__(self) -> str:
        return f"Var(data={self.data!r})"

    # Every rule mirrors its twin in engine.py, with `x`, `y` and `out` the Vars themselves
    # rather than their floats: that is the whole difference.

    def __add__(self, other: Var | Number) -> Var:
        other = _as_var(other, "+")
        out = Var(self.data + other.data, (self, other), "+")
        out._vjp = lambda g: (g, g)
        return out

    def __sub__(self, other: Var | Number) -> Var:
        other = _as_var(other, "-")
        out = Var(self.data - other.data, (self, other), "-")
        out._vjp = lambda g: (g, -g)
        return out

    def __mul__(self, other: Var | Number) -> Var:
        x, y = self, _as_var(other, "*")
        out = Var(x.data * y.data, (x, y), "*")
        out._vjp = lambda g: (g * y, g * x)
        return out

    def __truediv__(self, other: Var | Number) -> Var:
        x, y = self, _as_var(other, "/")
        out = Var(x.data / y.data, (x, y), "/")
        out._vjp = lambda g: (g / y, -g * out / y)  # d(x/y)/dy = -(x/y)/y
        return out

    def __neg__(self) -> Var:
        out = Var(-self.data, (self,), "neg")
        out._vjp = lambda g: (-g,)
        return out

    def __pow__(self, n: Number) -> Var:
        if isinstance(n, Var):
            raise TypeError(f"Var ** Var is not supported: the exponent must be {ACCEPTED}; "
                            "for a variable exponent of a positive base write (y * x.log()).exp()")
        x, n = self, _as_float(n, "Var ** n: the exponent n")
        out = Var(_power(x.data, n), (x,), f"**{n:g}")
        # n x**(n-1), built from Vars so the power rule can be applied again next order.
        # NOTE: n = 0 is a constant (slope 0); x**(n-1) at x = 0 with n < 1 raises, as in Value.
        out._vjp = lambda g: (g * n * x ** (n - 1) if n != 0 else g * 0.0,)
        return out

    def __radd__(self, other: Number) -> Var:
        return _as_var(other, "+") + self

    def __rsub__(self, other: Number) -> Var:
        return _as_var(other, "-") - self

    def __rmul__(self, other: Number) -> Var:
        return _as_var(other, "*") * self

    def __rtruediv__(self, other: Number) -> Var:
        return _as_var(other, "/") / self

    def __rpow__(self, base: object) -> Var:
        raise TypeError(f"{type(base).__name__} ** Var is not supported: the exponent must be {ACCEPTED}, "
                        "as in x ** 2; for b ** y with b > 0 write (y * math.log(b)).exp()")

    def exp(self) -> Var:
        out = Var(math.exp(self.data), (self,), "exp")
        out._vjp = lambda g: (g * out,)
        return out

    def log(self) -> Var:
        x = self
        out = Var(_log(x.data), (x,), "log")
        out._vjp = lambda g: (g / x,)
        return out

    def tanh(self) -> Var:
        out = Var(math.tanh(self.data), (self,), "tanh")
        out._vjp = lambda g: (g * (1.0 - out * out),)
        return out

    def relu(self) -> Var:
        # The slope is a step: a constant 1 or 0 (NOTE: 0 at exactly 0), so every
        # higher derivative of relu is 0.
        slope = 1.0 if self.data > 0 else 0.0
        out = Var(self.data if slope else 0.0, (self,), "relu")
        out._vjp = lambda g: (g * slope,)
        return out

    def sigmoid(self) -> Var:
        out = Var(_sigmoid(self.data), (self,), "sigmoid")
        out._vjp = lambda g: (g * out * (1.0 - out),)
        return out

    def sin(self) -> Var:
        x = self
        out = Var(math.sin(x.data), (x,), "sin")
        out._vjp = lambda g: (g * x.cos(),)
        return out

    def cos(self) -> Var:
        x = self
        out = Var(math.cos(x.data), (x,), "cos")
        out._vjp = lambda g: (-g * x.sin(),)
        return out


def grad(output: Var, inputs: Sequence[Var]) -> list[Var]:
    """d(output)/d(input) for each input, as Vars that can be differentiated again.

    An input that ``output`` does not depend on gets ``Var(0.0)``.

    >>> x, y = Var(3.0), Var(4.0)
    >>> [d.data for d in grad(x * y + x, [x, y])]
    [5.0, 3.0]
    """
    if not isinstance(output, Var):
        raise TypeError(f"grad: output must be a Var, got {type(output).__name__}")
    for i, x in enumerate(inputs):
        if not isinstance(x, Var):
            raise TypeError(f"grad: inputs[{i}] must be a Var, got {type(x).__name__}")

    order = topological_order(output)
    wanted = set(inputs)
    # Only nodes with a path down to some input need a gradient; skipping the others keeps
    # the returned Vars free of work that cannot affect them.
    leads_to_input = set()
    for node in order:  # children come first, so their answer is known
        if node in wanted or any(child in leads_to_input for child in node._prev):
            leads_to_input.add(node)

    grads = {output: Var(1.0)}
    found: dict[Var, Var] = {}
    for node in reversed(order):
        if node not in leads_to_input:
            continue
        g = grads.pop(node)  # every user of `node` has run, so g is complete
        if node in wanted:
            found[node] = g
        for child, g_child in zip(node._prev, node._vjp(g)):
            if child in leads_to_input:
                grads[child] = grads[child] + g_child if child in grads else g_child
    return [found.get(x, Var(0.0)) for x in inputs]
