"""Rows for the in-place methods, augmented assignment and ``__setitem__`` (branch `inplace`).

The driver differentiates with respect to the leaves it makes, and an in-place write on a
leaf that requires grad raises (as torch), so each row writes into a copy of the leaf made
inside the row. NOTE: the copy is ``x * 1`` until ``clone`` arrives from the `signatures`
branch; at merge these can read ``x.clone()``.
"""

from __future__ import annotations

import numpy as np

from opinfo import F, S, row


def _c(x):
    return x * 1


def _iadd(x, y):
    x += y
    return x


def _isub(x, y):
    x -= y
    return x


def _imul(x, y):
    x *= y
    return x


def _itruediv(x, y):
    x /= y
    return x


def _setitem(m, x, v, index):
    if isinstance(index, np.ndarray):
        index = index if m.__name__ == "duograd" else m.from_numpy(index)
    x = _c(x)
    x[index] = v
    return x


BINARY = [S(F(3, 4), F(3, 4)), S(F(3, 4), F(4)), S(F(), F()), S(F(2, 3), 1.5), S(F(0, 3), F(3))]

row("Tensor.add_", lambda m, x, y, **kw: _c(x).add_(y, **kw),
    BINARY + [S(F(3, 4), F(4), alpha=-2.0)],
    errors=[S(F(3), F(2, 3))])
row("Tensor.sub_", lambda m, x, y, **kw: _c(x).sub_(y, **kw),
    BINARY + [S(F(3, 4), F(3, 4), alpha=0.5)], errors=[S(F(3), F(2, 3))])
row("Tensor.mul_", lambda m, x, y: _c(x).mul_(y), BINARY, errors=[S(F(3), F(2, 3))])
row("Tensor.div_", lambda m, x, y: _c(x).div_(y),
    [S(F(3, 4), F(3, 4, domain="positive")), S(F(3, 4), F(4, domain="positive")), S(F(), 4.0)])
row("Tensor.pow_", lambda m, x, y: _c(x).pow_(y),
    [S(F(3, 4, domain="positive"), 2.0), S(F(3, 4, domain="positive"), F(4)), S(F(), 3.0)])
# A leaf that requires grad written outside no_grad: RuntimeError in both.
row("Tensor.mul_", lambda m, x, y: x.mul_(y), [], errors=[S(F(3), F(3))])
row("Tensor.neg_", lambda m, x: _c(x).neg_(), [F(3, 4), F(), F(0, 2)])
row("Tensor.exp_", lambda m, x: _c(x).exp_(), [F(3, 4), F(), F(0, 2)])
row("Tensor.clamp_", lambda m, x, **kw: _c(x).clamp_(**kw),
    [S(F(3, 4, domain="distinct"), min=-0.5, max=0.5), S(F(3, 4, domain="distinct"), min=0.1),
     S(F(domain="distinct"), max=0.0)],
    errors=[S(F(3))])
row("Tensor.zero_", lambda m, x: _c(x).zero_(), [F(3, 4), F(), F(0, 2)])
row("Tensor.fill_", lambda m, x, v: _c(x).fill_(v), [S(F(3, 4), 2.5), S(F(3), F()), S(F(), -1.0)],
    errors=[S(F(3), F(2))])
row("Tensor.copy_", lambda m, x, y: _c(x).copy_(y),
    [S(F(3, 4), F(3, 4)), S(F(3, 4), F(4)), S(F(2, 3), F(1, 3)), S(F(), F())],
    errors=[S(F(3), F(2))])
row("Tensor.uniform_", lambda m, x, *a: _c(x).uniform_(*a), [S(F(3, 4), -1.0, 2.0), S(F())],
    compare="shape", grad=False)
row("Tensor.normal_", lambda m, x, *a: _c(x).normal_(*a), [S(F(3, 4), 1.0, 0.5), S(F())],
    compare="shape", grad=False)
row("Tensor.__iadd__", lambda m, x, y: _iadd(_c(x), y), BINARY, errors=[S(F(3), F(2, 3))])
row("Tensor.__isub__", lambda m, x, y: _isub(_c(x), y), BINARY)
row("Tensor.__imul__", lambda m, x, y: _imul(_c(x), y), BINARY)
row("Tensor.__itruediv__", lambda m, x, y: _itruediv(_c(x), y),
    [S(F(3, 4), F(3, 4, domain="positive")), S(F(2, 3), 2.0), S(F(), F(domain="positive"))])
row("Tensor.__setitem__", lambda m, x, v, index: _setitem(m, x, v, index),
    [S(F(3, 4), F(4), 1), S(F(3, 4), F(2, 4), slice(0, 2)), S(F(3, 4), 0.5, (-1, 2)),
     S(F(3, 4), F(3, 2), (Ellipsis, slice(None, None, 2))), S(F(3, 4), F(4), slice(1, 3)),
     S(F(3, 4), F(2, 4), np.array([0, 2])), S(F(3, 4), F(4), np.array([True, False, True])),
     S(F(3), F(), 0)],
    errors=[S(F(3, 4), F(5), 0)])
