"""The scalar engine: reverse-mode automatic differentiation, one number at a time.

This is duograd's teaching model. It trades speed for a file that reads top to
bottom in one sitting: every operation computes its result, and right under it
says how a gradient flows back through it.

How it works
------------
Each arithmetic operation on a ``Value`` returns a new ``Value`` that remembers
its inputs, so evaluating an expression also records it as a graph. Each node also
keeps a small function, its vector-Jacobian product (``_vjp``): given ``g``, the
derivative of the final output with respect to this node, it returns the derivative
of the final output with respect to each input. That is the chain rule, one link at
a time. ``backward()`` orders the graph so every node comes after everything that
uses it, then walks that order once, calling each ``_vjp`` in turn.

Attributes of a Value (``duograd.viz`` reads ``_prev`` and ``_op``)
--------------------------------------------------------------------
``data``
    the number, a float.
``grad``
    d(root)/d(this node), summed over every ``root.backward()`` call so far; 0.0 before any.
``_prev``
    the Values this one was computed from (its children in the graph), as a tuple in
    argument order; ``()`` for a leaf. A Value can appear twice, as in ``x * x``.
``_op``
    a label for the operation that produced it: ``'+' '-' '*' '/' 'neg' '**2'`` (the
    exponent is part of the label), ``'exp' 'log' 'tanh' 'relu' 'sigmoid' 'sin' 'cos'``;
    ``''`` for a leaf.
``_vjp``
    ``g -> tuple`` of floats, one per entry of ``_prev``.

What counts as a number
-----------------------
Real numbers: ``int``, ``float`` and NumPy's real scalars, stored as a Python float.
``bool`` is refused (``Value(True)`` is almost always a bug), as is anything else
(strings, arrays, ``None``): a ``TypeError`` says what is accepted. Exponents follow
the same rule: ``**`` takes a number exponent only, never a ``Value``.

Errors follow the ``math`` module
---------------------------------
No operation returns ``nan`` or a complex number for an input outside its domain:

- ``log`` of a number <= 0 raises ``ValueError("log: math domain error for 0.0")``;
- a negative base to a non-integer power raises ``ValueError`` (``math.pow`` does the
  same; Python's ``**`` would return a complex number instead);
- dividing by zero, and ``0.0`` to a negative power, raise ``ZeroDivisionError``;
  so does the backward of ``x ** n`` at ``x = 0`` for ``0 < n < 1``, whose slope is infinite;
- ``exp`` (or ``**``) of a number too large for a float raises ``OverflowError``.

>>> x, y = Value(3.0), Value(4.0)
>>> f = x * y + x
>>> f.backward()
>>> f.data, x.grad, y.grad
(15.0, 5.0, 3.0)
"""

from __future__ import annotations

import math
import numbers
from typing import Callable, Union

Number = Union[int, float]

ACCEPTED = "a real number (int or float; bool is not accepted)"


def _is_number(x: object) -> bool:
    # bool is a subclass of int, but Value(True) or x ** True is almost surely a mistake.
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _as_float(x: object, where: str) -> float:
    """``x`` as a float, or a TypeError that names ``where`` and what is accepted."""
    if _is_number(x):
        return float(x)
    raise TypeError(f"{where}: expected {ACCEPTED}, got {type(x).__name__}")


def _as_value(x: object, op: str) -> Value:
    if isinstance(x, Value):
        return x
    if _is_number(x):
        return Value(x)  # a constant: a leaf whose gradient nobody will read
    raise TypeError(f"unsupported operand for Value {op}: expected a Value or {ACCEPTED}, got {type(x).__name__}")


def _log(x: float) -> float:
    # math.log's own message does not say which number was wrong, so we say it.
    if x <= 0:
        raise ValueError(f"log: math domain error for {x!r}")
    return math.log(x)


def _power(x: float, n: float) -> float:
    # Python's ** returns a complex number for (-8.0) ** 0.5; a real engine must refuse.
    if x < 0 and not n.is_integer():
        raise ValueError(f"**: math domain error for {x!r} ** {n!r} (a negative base needs an integer exponent)")
    return x**n  # 0.0 ** -1.0 raises ZeroDivisionError, and an overflow raises OverflowError


def _power_slope(x: float, n: float) -> float:
    # d(x**n)/dx = n * x**(n-1).  NOTE: a constant (n = 0) has slope 0 even at x = 0, where
    # 0.0 ** -1 would raise; for 0 < n < 1 the slope at 0 is infinite and ** raises.
    return n * x ** (n - 1) if n != 0 else 0.0


def _sigmoid(x: float) -> float:
    # exp(-x) overflows for x below about -710, so only ever exponentiate a non-positive number.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _leaf(g: float) -> tuple[float, ...]:
    return ()  # a leaf has no inputs to pass its gradient on to


class Value:
    """A number that remembers how it was computed, so gradients can flow back through it.

    >>> x, y = Value(3.0), Value(4.0)
    >>> f = x * y + x
    >>> f.backward()
    >>> f.data, x.grad, y.grad
    (15.0, 5.0, 3.0)
    """

    # NumPy would otherwise treat `np.float64(2) * v` as an array loop; this hands it back to us.
    __array_ufunc__ = None

    def __init__(self, data: Number, _children: tuple[Value, ...] = (), _op: str = "") -> None:
        self.data = _as_float(data, "Value(data)")
        self.grad = 0.0
        self._prev = _children
        self._op = _op
        self._vjp: Callable[[float], tuple[float, ...]] = _leaf

    def __repr__(self) -> str:
        return f"Value(data={self.data!r}, grad={self.grad!r})"

    # --- arithmetic ---------------------------------------------------------------

    def __add__(self, other: Value | Number) -> Value:
        other = _as_value(other, "+")
        out = Value(self.data + other.data, (self, other), "+")
        # d(x + y)/dx = d(x + y)/dy = 1: a sum hands its gradient to both inputs unchanged.
        out._vjp = lambda g: (g, g)
        return out

    def __sub__(self, other: Value | Number) -> Value:
        other = _as_value(other, "-")
        out = Value(self.data - other.data, (self, other), "-")
        # d(x - y)/dx = 1 and d(x - y)/dy = -1.
        out._vjp = lambda g: (g, -g)
        return out

    def __mul__(self, other: Value | Number) -> Value:
        other = _as_value(other, "*")
        x, y = self.data, other.data
        out = Value(x * y, (self, other), "*")
        # d(x * y)/dx = y and d(x * y)/dy = x: each input is scaled by the *other* one.
        out._vjp = lambda g: (g * y, g * x)
        return out

    def __truediv__(self, other: Value | Number) -> Value:
        other = _as_value(other, "/")
        x, y = self.data, other.data
        q = x / y  # y == 0 raises ZeroDivisionError, as float division does
        out = Value(q, (self, other), "/")
        # d(x / y)/dx = 1/y and d(x / y)/dy = -x/y**2, written -(x/y)/y to reuse the quotient.
        out._vjp = lambda g: (g / y, -g * q / y)
        return out

    def __neg__(self) -> Value:
        out = Value(-self.data, (self,), "neg")
        out._vjp = lambda g: (-g,)
        return out

    def __pow__(self, n: Number) -> Value:
        if isinstance(n, Value):
            raise TypeError(f"Value ** Value is not supported: the exponent must be {ACCEPTED}; "
                            "for a variable exponent of a positive base write (y * x.log()).exp()")
        x, n = self.data, _as_float(n, "Value ** n: the exponent n")
        out = Value(_power(x, n), (self,), f"**{n:g}")
        # The power rule, with the exponent a fixed number: see _power_slope.
        out._vjp = lambda g: (g * _power_slope(x, n),)
        return out

    # The reflected forms let a plain number stand on the left: 2 + v, 2 / v, ...
    # Each builds the number into a Value first, so the graph keeps the written order.

    def __radd__(self, other: Number) -> Value:
        return _as_value(other, "+") + self

    def __rsub__(self, other: Number) -> Value:
        return _as_value(other, "-") - self

    def __rmul__(self, other: Number) -> Value:
        return _as_value(other, "*") * self

    def __rtruediv__(self, other: Number) -> Value:
        return _as_value(other, "/") / self

    def __rpow__(self, base: object) -> Value:
        raise TypeError(f"{type(base).__name__} ** Value is not supported: the exponent must be {ACCEPTED}, "
                        "as in x ** 2; for b ** y with b > 0 write (y * math.log(b)).exp()")

    # --- functions ----------------------------------------------------------------

    def exp(self) -> Value:
        e = math.exp(self.data)
        out = Value(e, (self,), "exp")
        # exp is its own derivative, so the slope is the result we already have.
        out._vjp = lambda g: (g * e,)
        return out

    def log(self) -> Value:
        x = self.data
        out = Value(_log(x), (self,), "log")
        out._vjp = lambda g: (g / x,)  # d log(x)/dx = 1/x
        return out

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")
        # d tanh(x)/dx = 1 - tanh(x)**2: again the slope comes from the result.
        out._vjp = lambda g: (g * (1.0 - t * t),)
        return out

    def relu(self) -> Value:
        positive = self.data > 0
        out = Value(self.data if positive else 0.0, (self,), "relu")
        # Slope 1 where the input is positive, else 0.  NOTE: relu has no derivative at 0;
        # we use 0 there, as PyTorch does.
        out._vjp = lambda g: (g if positive else 0.0,)
        return out

    def sigmoid(self) -> Value:
        s = _sigmoid(self.data)
        out = Value(s, (self,), "sigmoid")
        out._vjp = lambda g: (g * s * (1.0 - s),)  # d sigmoid(x)/dx = s (1 - s)
        return out

    def sin(self) -> Value:
        x = self.data
        out = Value(math.sin(x), (self,), "sin")
        out._vjp = lambda g: (g * math.cos(x),)
        return out

    def cos(self) -> Value:
        x = self.data
        out = Value(math.cos(x), (self,), "cos")
        out._vjp = lambda g: (-g * math.sin(x),)
        return out

    # --- the backward pass --------------------------------------------------------

    def backward(self) -> None:
        """Add d(self)/d(node) to ``node.grad`` for every node this Value was computed from.

        Gradients accumulate: a second call (or a call on another output sharing
        nodes) adds to ``.grad`` instead of replacing it; reset with ``v.grad = 0.0``.

        >>> x = Value(2.0)
        >>> y = x * x + x
        >>> y.backward()
        >>> x.grad
        5.0
        """
        # `grads` holds this call's derivatives only, and each is added to .grad once its
        # node is done. (Reading .grad back inside the sweep would re-send gradients left
        # over from an earlier call, so a second backward would count them twice.)
        grads = {self: 1.0}
        for node in reversed(topological_order(self)):
            g = grads.pop(node)  # every user of `node` has run by now, so g is complete
            node.grad += g
            for child, g_child in zip(node._prev, node._vjp(g)):
                grads[child] = grads.get(child, 0.0) + g_child


def topological_order(root: object) -> list:
    """Every node reachable from ``root`` through ``_prev``, each after all of its children.

    The root comes last, so walking the list backwards visits every node after all the
    nodes that use it: the order the chain rule needs. Works for any node type with a
    ``_prev`` tuple (``Value`` and ``duograd.scalar.higher.Var``).

    >>> a = Value(1.0)
    >>> b = a.exp()
    >>> [node._op for node in topological_order(b * a)]
    ['', 'exp', '*']
    """
    # Depth-first search with an explicit stack rather than recursion: Python stops
    # recursing at about 1,000 frames, and a long computation is a graph that deep.
    order: list = []
    seen: set = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)  # everything below it is already in `order`
        elif node not in seen:
            seen.add(node)
            stack.append((node, True))  # come back to it once its children are done
            stack.extend((child, False) for child in node._prev if child not in seen)
    return order
