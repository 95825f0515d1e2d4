"""Rows for the core elementwise operations and reductions that predate the table."""

from __future__ import annotations

import numpy as np

import duograd as dg
from opinfo import CLIP, DISTINCT, NONZERO, POSITIVE, REAL, B, F, I, S, condition, row, spec_row as _row

UNARY = [F(3, 4), F(), F(0, 3), F(2, 1, 3)]
# NumPy references; each entry's last float sample with a ``spec`` name is its gradient-check
# variant in OP_SPECS (gradcheck, gradgradcheck, jvp, replay, vmap; tests/specs.py), drawn as it
# always was (the spec's name seeds it). Then integer (and for some bool) inputs, which torch
# takes: the result's dtype is torch's (a float for exp, the input's for abs).
_REFS = {"exp": np.exp, "tanh": np.tanh, "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "sin": np.sin,
         "cos": np.cos, "abs": np.abs, "log": np.log, "sqrt": np.sqrt}

for _name in ("exp", "tanh", "sigmoid", "sin", "cos", "abs"):
    row(f"Tensor.{_name}", lambda m, x, n=_name: getattr(x, n)(),
        UNARY + [S(F(3, 4, domain=NONZERO if _name == "abs" else REAL), spec=_name), I(3, 4, low=-3),
                 I(), I(0, 2)], ref=_REFS[_name])
    row(f"dg.{_name}", lambda m, x, n=_name: getattr(m, n)(x), UNARY[:2] + [F(0, 3), F(2, 1, 3), I(2, 3)])
for _name in ("log", "sqrt"):
    row(f"Tensor.{_name}", lambda m, x, n=_name: getattr(x, n)(),
        [F(3, 4, domain="positive"), F(domain="positive"), F(0, domain="positive"),
         S(F(3, 4, domain=POSITIVE), spec=_name), I(3, 4, low=1), I(low=1), F(2, 1, 3, domain=POSITIVE)],
        ref=_REFS[_name])
    row(f"dg.{_name}", lambda m, x, n=_name: getattr(m, n)(x),
        [F(5, domain="positive"), F(domain=POSITIVE), F(0, 2, domain=POSITIVE), I(2, 3, low=1)])
row("Tensor.relu", lambda m, x: x.relu(),
    [F(3, 4, domain="distinct"), F(domain="distinct"), S(F(3, 4, domain=NONZERO), spec="relu"), F(0, 3),
     I(3, 4, low=-3)], ref=lambda x: np.where(x > 0, x, np.zeros_like(x)))  # (an int stays an int)
row("dg.relu", lambda m, x: m.relu(x), [F(3, 4, domain="distinct"), F(domain=DISTINCT), F(0, 2), I(3, low=-3)])

row("Tensor.__add__", lambda m, x, y: x + y, [S(F(3, 4), F(4)), S(F(3, 1), F(4)), S(F(), F(2)),
                                              S(F(3), 2.5), S(F(0, 3), F(3))],
    errors=[S(F(3), "a")])
row("Tensor.__mul__", lambda m, x, y: x * y, [S(F(3, 4), F(4)), S(F(2), 3.0), S(F(0, 3), F(3)),
                                              S(F(), F(2, 3)), S(I(3, 4), I(4)), S(B(3), B(3)),
                                              S(I(3), 0.5), S(F(3, 1), B(4))],
    errors=[S(F(3), F(2))])
# (torch refuses -bool with a RuntimeError: so does duograd)
row("Tensor.__neg__", lambda m, x: -x, UNARY + [S(F(3, 4), spec="neg"), I(3, 4, low=-3), I()],
    ref=np.negative, errors=[S(B(3)), S(B())])
row("Tensor.sum", lambda m, x, **kw: x.sum(**kw),
    [S(F(3, 4)), S(F(3, 4), dim=0), S(F(3, 4), dim=-1, keepdim=True), S(F(2, 3, 4), dim=(0, 2)),
     S(F(0, 3), dim=0), S(F()), S(I(3, 4), dim=-1), S(B(2, 3)), S(I(2, 3), dim=0, keepdim=True),
     S(F(2, 3, 4), dim=-2)],
    errors=[S(F(3, 4), dim=2), S(F(), dim=1)])
# (torch refuses the mean, var and std of an integer or bool tensor with a RuntimeError, and so
# does duograd; a float dtype= makes an integer mean fine)
row("Tensor.mean", lambda m, x, **kw: x.mean(**kw),
    [S(F(3, 4)), S(F(3, 4), dim=1), S(F(2, 3, 4), dim=(0, 2), keepdim=True), S(F()), S(F(0, 3), dim=1),
     S(F(2, 3), dim=-1), S(F(), dim=0)],
    errors=[S(F(3, 4), dim=-3), S(I(3, 4)), S(B(3, 4), dim=0), S(I()), S(I(3, 4), dim=1, keepdim=True)])
row("Tensor.mean[int, dtype]", lambda m, x, **kw: x.mean(dtype=m.float64, **kw),
    [S(I(3, 4)), S(I(3, 4), dim=1), S(B(2, 3), dim=0)])
row("Tensor.__matmul__", lambda m, x, y: x @ y,
    [S(F(3, 4), F(4, 2)), S(F(4), F(4, 2)), S(F(3, 4), F(4)), S(F(2, 3, 4), F(4, 5)), S(F(4), F(4)),
     S(F(0, 4), F(4, 2)), S(F(3, 0), F(0, 2)), S(I(3, 4), I(4, 2)), S(F(2, 1, 3, 4), F(3, 4, 2))],
    errors=[S(F(), F(3)), S(F(3, 4), F(3, 2)), S(F(3, 4), I(4, 2))])


# ---------------------------------------------------------------- the rest of the core surface

row("F.softmax", lambda m, x, d: m.nn.functional.softmax(x, dim=d),
    [S(F(3, 4), 1), S(F(3, 4), 0), S(F(2, 3, 4), -1), S(F(), 0), S(F(0, 3), 1)],
    errors=[S(F(3, 4), 2)])
row("F.log_softmax", lambda m, x, d: m.nn.functional.log_softmax(x, dim=d),
    [S(F(3, 4), 1), S(F(3, 4), 0), S(F(2, 3, 4), -1), S(F(), 0), S(F(0, 3), 1), S(F(), -1)],
    errors=[S(F(3, 4), -3)])
row("Tensor.__abs__", lambda m, x: abs(x), [F(3, 4, domain="distinct"), F(domain="distinct")])
row("Tensor.__rmatmul__", lambda m, x, y: y.__rmatmul__(x),
    [S(F(3, 4), F(4, 2)), S(F(4), F(4, 2)), S(F(2, 3, 4), F(4))],
    errors=[S(F(3, 4), F(3, 2))])
row("dg.matmul", lambda m, x, y: m.matmul(x, y),
    [S(F(3, 4), F(4, 2)), S(F(4), F(4)), S(F(2, 3, 4), F(4, 5)), S(F(5, 1, 3, 4), F(2, 4, 2))],
    errors=[S(F(3, 4), F(3, 2)), S(F(), F(3))])
row("dg.maximum", lambda m, x, y: m.maximum(x, y),
    [S(F(3, 4, domain="distinct"), F(4, domain="distinct")), S(F(domain="distinct"), F(3, domain="distinct")),
     S(F(0, 3), F(3)), S(I(3, 4), I(4)), S(B(3), B(3))],
    errors=[S(F(3), F(4))])
row("dg.minimum", lambda m, x, y: m.minimum(x, y),
    [S(F(3, 4, domain="distinct"), F(4, domain="distinct")), S(F(domain="distinct"), F(3, domain="distinct")),
     S(F(0, 3), F(3)), S(I(3, 4), I(4)), S(B(3), B(3))],
    errors=[S(F(3), F(4))])
row("nn.Flatten", lambda m, x, *d: m.nn.Flatten(*d)(x),
    [S(F(2, 3, 4)), S(F(2, 3, 4), 0, 1), S(F(2, 3, 4, 5), 1, 2), S(F(2, 3), 0, -1)],
    errors=[S(F(3))])

# Python numbers and containers out of a tensor (the structure check compares type and value).
row("Tensor.item", lambda m, x: x.detach().item(), [F(), F(1, 1), I(1)], grad=False,
    errors=[S(F(2))])
row("Tensor.__float__", lambda m, x: float(x.detach()), [F(), F(1)], grad=False,
    errors=[S(F(3))])
row("Tensor.__bool__", lambda m, x: bool(x), [B(), B(1), I()], grad=False, errors=[S(B(2))])
row("Tensor.__len__", lambda m, x: len(x), [F(3, 4), F(0, 2)], grad=False, errors=[S(F())])
row("Tensor.__iter__", lambda m, x: list(x), [F(3, 4), F(0, 2), F(2), I(2, 3)], errors=[S(F())])
row("Tensor.tolist", lambda m, x: x.detach().tolist(), [I(2, 3), B(3), I()], grad=False)

# Attributes: shape (a tuple subclass called Size in both), ndim, requires_grad, is_leaf.
def _same_tuple(d, t):
    """``.shape`` is a plain tuple in duograd (``size()`` gives the ``dg.Size``), a
    ``torch.Size`` in torch: equal as tuples (a documented difference)."""
    assert type(d) is tuple and d == tuple(t), (d, t)


row("Tensor.shape", lambda m, x: x.shape, [F(2, 3), F(), F(0, 4)], grad=False, compare=_same_tuple,
    note="a plain tuple; size() is the Size (Differences from PyTorch)")
row("Tensor.ndim", lambda m, x: x.ndim, [F(2, 3), F(), F(0, 4)], grad=False)
row("Tensor.requires_grad", lambda m, x: (x.requires_grad, (x * 2).requires_grad, x.detach().requires_grad),
    [F(3), F(3, grad=False)], grad=False)
row("Tensor.grad_fn", lambda m, x: (x.grad_fn is None, (x * 2).grad_fn.name(), (x * 2).sum().grad_fn.name(),
                                     x.exp().grad_fn.next_functions[0][0].name(), x.detach().grad_fn is None),
    [F(3, 4), F()], grad=False)
row("Tensor.is_leaf", lambda m, x: (x.is_leaf, (x * 2).is_leaf, x.detach().is_leaf),
    [F(3), F(3, grad=False)], grad=False)
row("Tensor.detach", lambda m, x: x.detach(), [F(3, 4), F()])


row("Tensor.data", lambda m, x: x.data, [F(3, 4), I(2), F()], grad=False)

# The graph: backward, grad, hooks, retain_grad, grad mode.


def _backward_grad(m, x, w):
    (x * x * w).sum().backward()
    return x.grad


def _hooked(m, x):
    x.register_hook(lambda g: g * 3)
    (x * x).sum().backward()
    return x.grad


def _retained(m, x):
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad


def _grad_mode(m, x):
    with m.set_grad_enabled(False):
        off = ((x * 2).requires_grad, m.is_grad_enabled())
    m.set_grad_enabled(False)
    off_call = m.is_grad_enabled()
    m.set_grad_enabled(True)
    return off + (off_call, m.is_grad_enabled(), (x * 2).requires_grad)


row("Tensor.backward", _backward_grad, [S(F(3), F(3, grad=False)), S(F(2, 2), F(2, grad=False))],
    grad=False, errors=[S(F(3, grad=False), F(3, grad=False))])
row("Tensor.grad", _backward_grad, [S(F(), F(grad=False))], grad=False)
row("Tensor.register_hook", _hooked, [F(3), F(2, 2)], grad=False, errors=[S(F(3, grad=False))])
row("Tensor.retain_grad", _retained, [F(3), F(2, 2)], grad=False)
row("dg.set_grad_enabled", _grad_mode, [F(3)], grad=False)
row("dg.is_grad_enabled", lambda m, x: m.is_grad_enabled(), [F(1)], grad=False)


# ====================================================================== gradient-check variants (OP_SPECS)
# (spec_row: each joins the entry of its public name, opinfo.spec_entry_name)
# ---------------------------------------------------------------- arithmetic: the other forms
_row("add.scalar_tensor", lambda x, y: x + y, np.add, lambda torch, x, y: x + y, ((), (2, 3)))
_row("mul.outer_broadcast", lambda x, y: x * y, np.multiply, lambda torch, x, y: x * y,
     ((3, 1), (1, 4)))
_row("rsub.number", lambda x: 2.0 - x, lambda x: 2.0 - x, lambda torch, x: 2.0 - x, ((3, 4),))
_row("rdiv.number", lambda x: 2.0 / x, lambda x: 2.0 / x, lambda torch, x: 2.0 / x,
     ((3, 4),), (NONZERO,))
_row("pow.tensor_number", lambda x: x ** 2.5, lambda x: x ** 2.5, lambda torch, x: x ** 2.5,
     ((3, 4),), (POSITIVE,))
_row("pow.tensor_negative_number", lambda x: x ** -1.5, lambda x: x ** -1.5,
     lambda torch, x: x ** -1.5, ((3, 4),), (POSITIVE,))
_row("pow.tensor_int_negative_base", lambda x: x ** 3, lambda x: x ** 3,
     lambda torch, x: x ** 3, ((3, 4),))
_row("pow.number_tensor", lambda x: 2.0 ** x, lambda x: 2.0 ** x, lambda torch, x: 2.0 ** x,
     ((3, 4),))
_row("abs.builtin", lambda x: abs(x), np.abs, lambda torch, x: abs(x), ((2, 3),), (NONZERO,))
_row("where.cond_broadcasts", lambda x, y, c=condition((2, 3, 4), 8): dg.where(c, x, y),
     lambda x, y, c=condition((2, 3, 4), 8): np.where(c, x, y),
     lambda torch, x, y, c=condition((2, 3, 4), 8): torch.where(torch.from_numpy(np.asarray(c)), x, y),
     ((3, 4), (3, 4)))
_row("where.tensor_cond_number", lambda x, c=condition((3, 4)): dg.where(dg.tensor(c.astype(float)), x, 0.5),
     lambda x, c=condition((3, 4)): np.where(c, x, 0.5),
     lambda torch, x, c=condition((3, 4)): torch.where(torch.from_numpy(np.asarray(c)), x, 0.5), ((3, 4),))

# ---------------------------------------------------------------- elementwise functions
# (neg, abs, exp, log, sqrt, tanh, sigmoid, relu, sin and cos: their spec samples are in
# their entries in tests/conformance/rows_core.py)
_row("softplus", lambda x: x.softplus(), lambda x: np.logaddexp(0, x),
     lambda torch, x: torch.nn.functional.softplus(x), ((3, 4),))
_row("clip", lambda x: x.clip(-0.5, 0.5), lambda x: np.minimum(np.maximum(x, -0.5), 0.5),
     lambda torch, x: x.clamp(-0.5, 0.5), ((3, 4),), (CLIP,))
_row("clip.lo_only", lambda x: x.clip(min=-0.5), lambda x: np.maximum(x, -0.5),
     lambda torch, x: x.clamp(min=-0.5), ((3, 4),), (CLIP,))
_row("clip.hi_only", lambda x: x.clip(max=0.5), lambda x: np.minimum(x, 0.5),
     lambda torch, x: x.clamp(max=0.5), ((3, 4),), (CLIP,))
