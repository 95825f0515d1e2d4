"""The planted bugs of the inside-a-gradient tools, in one catalogue that the stage
(``experiments/inside_gradient.py``) and the tests (``tests/inspection/
test_explain_anomaly.py``) both use, so that the two cannot drift apart.

- ``PLANTED``: ten wrong VJP rules, each a user-defined Primitive and the place it goes
  in an MLP ("unary": after a layer, "square": as the hidden matmul, "pair": with a bias);
  ``explain(check=True)`` must flag exactly it.
- ``NAN_SOURCES``: ten NaN/inf sources (``nan_source(case)`` builds each, one per line
  marked ``@...``); ``detect_anomaly`` must name the op, the pass and the line
  (``line_of(marker)``).

>>> sorted(NAN_SOURCES)[0], len(PLANTED)
('0/0', 10)
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

import duograd as dg


# ---------------------------------------------------------------- wrong VJP rules

def _p(name: str, forward: Callable, *rules: Callable) -> dg.Primitive:
    return dg.Primitive(name, forward, vjp=rules)


PLANTED = {  # what is wrong -> (the primitive, where it goes)
    "wrong sign": (_p("bad_square", lambda x: x * x, lambda g, out, x: -2 * g * x), "unary"),
    "missing factor 2": (_p("bad_square", lambda x: x * x, lambda g, out, x: g * x), "unary"),
    "wrong axis": (_p("bad_center", lambda x: x - x.mean(axis=1, keepdims=True),
                      lambda g, out, x: g - g.mean(axis=0, keepdims=True)), "unary"),
    "detached rule (reads .data)": (_p("bad_tanh", np.tanh, lambda g, out, x:
                                       g * dg.tensor(1 - np.tanh(x.detach().numpy()) ** 2)), "unary"),
    "transposed matmul rule": (_p("bad_matmul", np.matmul, lambda g, out, x, y: g @ y,
                                  lambda g, out, x, y: x.T @ g), "square"),
    "ignores the cotangent": (_p("bad_sin", np.sin, lambda g, out, x: dg.cos(x)), "unary"),
    "input in place of output": (_p("bad_exp", np.exp, lambda g, out, x: g * x), "unary"),
    "mean for sum in a bias": (_p("bad_bias", np.add, lambda g, out, x, b: g,
                                  lambda g, out, x, b: g.mean(axis=0)), "pair"),
    "swapped rules": (_p("bad_mul", np.multiply, lambda g, out, x, y: g * x,
                         lambda g, out, x, y: g * y), "pair"),
    "wrong threshold": (_p("bad_relu", lambda x: np.maximum(x, 0),
                           lambda g, out, x: g * (x > 0.5)), "unary"),
}


# ---------------------------------------------------------------- NaN and infinity sources

def nan_source(case: str) -> dg.Tensor:
    z = dg.tensor([0.0, 1.0], requires_grad=True)
    if case == "log(0)":
        return z.log().sum()  # @log0
    if case == "sqrt'(0)":
        return (z * 1.0).sqrt().sum()  # @sqrt
    if case == "0/0":
        return (z / z).sum()  # @div
    if case == "exp overflow":
        return (z * 1000.0).exp().sum()  # @exp
    if case == "norm at the zero vector":
        v = dg.tensor([0.0, 0.0], requires_grad=True)
        return (v * v).sum().sqrt()  # @norm
    if case == "masked where(x > 0, log(x), 0)":
        return dg.where(z.detach().numpy() > 0, z.log(), 0.0).sum()  # @where
    if case == "softmax of infinite logits":
        logits = dg.tensor([[np.inf, 1.0]], requires_grad=True)
        return dg.softmax(logits).sum()  # @softmax
    if case == "negative base ** 0.5":
        return ((z - 2.0) ** 0.5).sum()  # @pow
    if case == "log of a negative":
        return (z - 2.0).log().sum()  # @neglog
    if case == "overflow in a product":
        return (z.exp() * 1e308 * 10).sum()  # @mulinf
    raise ValueError(case)


NAN_SOURCES = {  # case -> (the op, the pass, the marker on its line above)
    "log(0)": ("log", "forward", "@log0"), "sqrt'(0)": ("sqrt", "backward", "@sqrt"),
    "0/0": ("div", "forward", "@div"), "exp overflow": ("exp", "forward", "@exp"),
    "norm at the zero vector": ("sqrt", "backward", "@norm"),
    "masked where(x > 0, log(x), 0)": ("log", "forward", "@where"),
    "softmax of infinite logits": ("sub", "forward", "@softmax"),
    "negative base ** 0.5": ("pow", "forward", "@pow"),
    "log of a negative": ("log", "forward", "@neglog"),
    "overflow in a product": ("mul", "forward", "@mulinf"),
}


def line_of(marker: str) -> int:
    src, start = inspect.getsourcelines(nan_source)
    return start + next(i for i, line in enumerate(src) if marker in line)
