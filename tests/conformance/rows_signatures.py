"""Rows for torch's signatures of the shape methods, reductions, ``pow`` and ``clamp``
(issue 18 part 5): 0-d, empty, broadcast, negative-dim and float32 samples, and the class of
error torch raises on misuse (a dim out of range is IndexError; shapes that do not fit are
RuntimeError, which duograd's ShapeError is too)."""

from __future__ import annotations

import numpy as np
from duograd import ops
from opinfo import B, F, I, S, row, spec_row as _row


def _f32(m):
    """float32 of ``m`` (duograd's equals NumPy's; until dg.float32 exists, NumPy's)."""
    return getattr(m, "float32", np.float32)

# ---------------------------------------------------------------- size, numel, dim

row("Tensor.size", lambda m, x, *d: x.size(*d),
    [S(F(3, 4)), S(F(3, 4), 1), S(F(3, 4), -2), S(F()), S(F(0, 3), 0)],
    errors=[S(F(3, 4), 2), S(F(3, 4), -3), S(F(), 0)])
row("Tensor.numel", lambda m, x: x.numel(), [F(3, 4), F(), F(0, 3)])
row("Tensor.dim", lambda m, x: x.dim(), [F(3, 4), F(), F(0, 3)])

# ---------------------------------------------------------------- reshape, view, permute

_VIEWS = [S(F(3, 4), 2, 6), S(F(3, 4), (4, 3)), S(F(3, 4), -1), S(F(3, 4), 2, -1, 3),
          S(F(), 1), S(F(0, 3), 3, 0), S(F(0, 3), -1, 3), S(I(3, 4), 6, -1), S(B(2, 3), -1)]
_BAD_VIEWS = [S(F(3, 4), 5, 2), S(F(3, 4), -1, -1), S(F(3, 4), (5, -1))]
row("Tensor.view", lambda m, x, *s: x.view(*s), _VIEWS, errors=_BAD_VIEWS)
row("Tensor.reshape", lambda m, x, *s: x.reshape(*s), _VIEWS, errors=_BAD_VIEWS)
row("dg.reshape", lambda m, x, s: m.reshape(x, s),
    [S(F(3, 4), (2, 6)), S(F(3, 4), (-1,)), S(F(), ()), S(F(0, 3), (3, 0)), S(I(2, 3), (3, -1)),
     S(F(2, 3, 4), (-1, 4))], errors=[S(F(3, 4), (5, 2)), S(F(3, 4), (-1, -1))])
row("Tensor.permute", lambda m, x, *d: x.permute(*d),
    [S(F(2, 3, 4), 2, 0, 1), S(F(2, 3, 4), (1, -1, 0)), S(F(3, 4), 1, 0), S(F(), ()), S(F(0, 3), 1, 0),
     S(I(2, 3), -1, 0), S(B(2, 3, 1), (2, -3, 1))],
    errors=[S(F(2, 3, 4), 0, 0, 1), S(F(2, 3, 4), 0, 1), S(F(2, 3, 4), 0, 1, 3)])

# ---------------------------------------------------------------- transpose, T, mT

_TRANSPOSES = [S(F(3, 4), 0, 1), S(F(2, 3, 4), -1, 0), S(F(2, 3, 4), 1, 1), S(F(), 0, -1),
               S(F(5), 0, 0), S(F(0, 3), 0, 1), S(I(2, 3), 0, -1), S(B(2, 3, 4), -3, 2)]
_BAD_TRANSPOSES = [S(F(3, 4), 0, 2), S(F(3, 4), -3, 0), S(F(), 0, 1)]
row("Tensor.transpose", lambda m, x, a, b: x.transpose(a, b), _TRANSPOSES, errors=_BAD_TRANSPOSES)
row("dg.transpose", lambda m, x, a, b: m.transpose(x, a, b), _TRANSPOSES, errors=_BAD_TRANSPOSES)
row("Tensor.T", lambda m, x: x.T, [F(3, 4), F(5), F(), F(0, 3)])
row("Tensor.mT", lambda m, x: x.mT, [F(3, 4), F(2, 3, 4), F(0, 3)], errors=[S(F(5))])

# ---------------------------------------------------------------- expand, repeat, broadcast_to

row("Tensor.expand", lambda m, x, *s: x.expand(*s),
    [S(F(3, 1), 3, 4), S(F(3, 1), -1, 4), S(F(3, 1), (2, 3, 4)), S(F(), 2, 3), S(F(1, 3), 0, 3),
     S(F(3), 2, -1)],
    errors=[S(F(3, 4), 2, 4), S(F(3, 4), 4), S(F(3, 1), -1, 3, 4)])
row("Tensor.repeat", lambda m, x, *s: x.repeat(*s),
    [S(F(3), 2), S(F(2, 3), 2, 1), S(F(2, 3), (1, 2, 2)), S(F(), 3), S(F(2, 3), 0, 1),
     S(F(0, 3), 2, 2)],
    errors=[S(F(2, 3), 2)])
row("Tensor.broadcast_to", lambda m, x, s: x.broadcast_to(s),
    [S(F(3, 1), (3, 4)), S(F(), (2, 3)), S(F(4), (0, 4)), S(B(3, 1), (2, 3, 4)), S(I(4), (2, 4))],
    errors=[S(F(3, 4), (2, 4)), S(F(3, 4), (4,))])
row("dg.broadcast_to", lambda m, x, s: m.broadcast_to(x, s),
    [S(F(3, 1), (2, 3, 4)), S(F(), (2, 3)), S(F(4), (0, 4)), S(I(3, 1), (3, 4))],
    errors=[S(F(3), (4,))])

# ---------------------------------------------------------------- clone, contiguous, flatten

row("Tensor.clone", lambda m, x: x.clone(), [F(3, 4), F(), F(0, 3)])
row("Tensor.contiguous", lambda m, x: x.contiguous(), [F(3, 4), F()])
_FLATTENS = [S(F(2, 3, 4)), S(F(2, 3, 4), 1), S(F(2, 3, 4), 0, 1), S(F(2, 3, 4), -2, -1),
             S(F(), 0), S(F()), S(F(0, 3)), S(F(2, 3, 4), 1, 1)]
_BAD_FLATTENS = [S(F(2, 3, 4), 2, 1), S(F(2, 3, 4), 3), S(F(), 1)]
row("Tensor.flatten", lambda m, x, *d: x.flatten(*d), _FLATTENS, errors=_BAD_FLATTENS)
row("dg.flatten", lambda m, x, *d: m.flatten(x, *d), _FLATTENS[:4] + _FLATTENS[4:] + [S(I(2, 3, 4), 1)],
    errors=_BAD_FLATTENS)

# ---------------------------------------------------------------- squeeze, unsqueeze

row("Tensor.squeeze", lambda m, x, *d: x.squeeze(*d),
    [S(F(1, 3, 1)), S(F(1, 3, 1), 0), S(F(1, 3, 1), 1), S(F(1, 3, 1), -1), S(F(1, 3, 1), (0, 1)),
     S(F()), S(F(), 0), S(F(), -1), S(F(0, 1), 1), S(I(1, 3), 0), S(B(2, 1), -1)],
    errors=[S(F(1, 3), 2), S(F(), 1)])
row("dg.squeeze", lambda m, x, *d: m.squeeze(x, *d),
    [S(F(1, 3, 1)), S(F(2, 3), 0), S(F(), 0), S(F(0, 1), -1), S(I(1, 3), 0), S(B(3, 1), (0, 1))],
    errors=[S(F(1, 3), -3)])
row("Tensor.unsqueeze", lambda m, x, d: x.unsqueeze(d),
    [S(F(3, 4), 0), S(F(3, 4), 2), S(F(3, 4), -1), S(F(), 0), S(F(), -1), S(F(0, 3), 1), S(I(3), -1),
     S(B(2, 3), 1)],
    errors=[S(F(3, 4), 3), S(F(), 2)])
row("dg.unsqueeze", lambda m, x, d: m.unsqueeze(x, d),
    [S(F(3), 0), S(F(3), -1), S(F(), 0), S(F(0, 3), -1), S(B(3), 1), S(I(2, 3), -3)],
    errors=[S(F(3), -3)])

# ---------------------------------------------------------------- pow, clamp

_POWS = [S(F(3, 4, domain="positive"), F(4)), S(F(3, 4, domain="positive"), 2.5), S(F(3, 4), 2),
         S(F(domain="positive"), F(3)), S(F(0, 3, domain="positive"), F(3))]
row("Tensor.pow", lambda m, x, e: x.pow(e), _POWS, errors=[S(F(3), F(4))])
row("dg.pow", lambda m, x, e: m.pow(x, e), _POWS[:2], errors=[S(F(3), F(2))])
row("Tensor.__pow__", lambda m, x, e: x ** e, _POWS, errors=[S(F(3), F(4))])
row("Tensor.__rpow__", lambda m, x: 2.0 ** x, [F(3, 4), F(), F(0, 3)])


def _zero_base(m, y):
    """0 ** y for y of each sign: torch's gradients at the base 0 (-inf for y < 0)."""
    x = m.zeros(y.shape, dtype=y.dtype, requires_grad=True) if m.__name__ == "torch" else \
        m.tensor(m.zeros(y.shape).numpy().astype(y.dtype), requires_grad=True)
    out = x ** y
    return (out,) + tuple(m.autograd.grad(out.sum(), (x, y)) if m.__name__ == "torch"
                          else m.grad(out.sum(), (x, y)))


row("dg.pow[x=0]", _zero_base, [S(F(7, domain="ties")), S(F(6))], grad=False)

_CLAMPS = [S(F(3, 4), -0.5, 0.5), S(F(3, 4), min=-0.2), S(F(3, 4), max=0.3), S(F(), -0.1, 0.1),
           S(F(0, 3), -1.0, 1.0), S(F(3, 4), 0.5, -0.5),
           S(F(3, 4, domain="distinct"), F(4, domain="distinct", grad=False), None),
           S(F(3, 4, domain="distinct"), None, F(3, 1, domain="distinct", grad=False))]
row("Tensor.clamp", lambda m, x, *a, **k: x.clamp(*a, **k), _CLAMPS, errors=[S(F(3))])
row("Tensor.clip", lambda m, x, *a, **k: x.clip(*a, **k), _CLAMPS[:6], errors=[S(F(3))])
row("dg.clamp", lambda m, x, *a, **k: m.clamp(x, *a, **k), _CLAMPS[:3], errors=[S(F(3))])
row("dg.clip", lambda m, x, *a, **k: m.clip(x, *a, **k), _CLAMPS[:3] + _CLAMPS[3:6] + [S(I(3, 4), 1, 3)],
    errors=[S(F(3))])

# ---------------------------------------------------------------- reductions

_SUMS = [S(F(3, 4)), S(F(3, 4), 0), S(F(3, 4), -1, True), S(F(2, 3, 4), (0, 2)), S(F(0, 3), 0),
         S(F()), S(F(), 0), S(F(), -1, keepdim=True), S(F(3, 4), dim=1, keepdim=True)]
_BAD_DIMS = [S(F(3, 4), 2), S(F(3, 4), -3), S(F(), 1), S(F(3, 4), (0, 0))]
_INT_SUMS = [S(I(3, 4), 1), S(B(3, 4)), S(I(2, 3), -1, True), S(B(0, 3), 0)]
row("dg.sum", lambda m, x, *a, **k: m.sum(x, *a, **k), _SUMS + _INT_SUMS, errors=_BAD_DIMS)
row("Tensor.sum[dtype]", lambda m, x: x.sum(0, dtype=_f32(m)), [F(3, 4)])
# (torch refuses the mean, var and std of an integer or bool tensor with a RuntimeError, as
# duograd does; a non-float dtype= too)
_NOT_FLOAT = [S(I(3, 4)), S(B(3, 4), 0), S(I(), 0, keepdim=True), S(I(0, 3), 1)]
row("dg.mean", lambda m, x, *a, **k: m.mean(x, *a, **k), _SUMS[:5] + _SUMS[5:],
    errors=_BAD_DIMS + _NOT_FLOAT)
row("dg.mean[dtype]", lambda m, x, *a, d="float64", **k: m.mean(x, *a, dtype=getattr(m, d), **k),
    [S(I(3, 4)), S(I(3, 4), 1), S(B(2, 3)), S(F(3, 4), d="float32")],
    errors=[S(I(3, 4), d="int64"), S(F(3, 4), d="int64"), S(B(3), d="int32")])
row("Tensor.mean[dtype]", lambda m, x: x.mean(dtype=_f32(m)), [F(3, 4)])
row("Tensor.sum[0-d, empty]", lambda m, x, *a, **k: x.sum(*a, **k), _SUMS[4:], errors=_BAD_DIMS)

_VARS = [S(F(3, 4)), S(F(3, 4), 0), S(F(3, 4), 1, keepdim=True), S(F(3, 4), (0, 1)),
         S(F(3, 4), 0, correction=0), S(F(3, 4), 1, correction=2), S(F(3, 4), 0, False),
         S(F(3, 4), unbiased=False), S(F(3, 4), True), S(F(2, 3, 4), -1, True, True),
         S(F(1, 3), 0), S(F(), 0, correction=0), S(F(0, 3), 1), S(F(2, 3), -1, correction=0)]
for _n in ("var", "std"):
    row(f"Tensor.{_n}", lambda m, x, *a, n=_n, **k: getattr(x, n)(*a, **k), _VARS,
        errors=_BAD_DIMS[:3] + _NOT_FLOAT + [S(I(3, 4), 0, correction=0)])
    row(f"dg.{_n}", lambda m, x, *a, n=_n, **k: getattr(m, n)(x, *a, **k), _VARS[:6] + _VARS[6:],
        errors=_BAD_DIMS[:1] + _BAD_DIMS[1:3] + _NOT_FLOAT)

_EXTREMES = [S(F(3, 4, domain="distinct")), S(F(3, 4, domain="distinct"), 1),
             S(F(3, 4, domain="distinct"), -2, True), S(F(3, 4, domain="distinct"), dim=0),
             S(F(domain="distinct"), 0), S(F(domain="distinct")), S(F(0, 3), 1),
             S(F(3, 4, domain="ties"), 1)]
_BAD_EXTREMES = [S(F(3, 4), 2), S(F(0, 3), 0), S(F(0, 3))]
for _n in ("max", "min"):
    row(f"Tensor.{_n}", lambda m, x, *a, n=_n, **k: getattr(x, n)(*a, **k), _EXTREMES,
        errors=_BAD_EXTREMES)
    row(f"dg.{_n}", lambda m, x, *a, n=_n, **k: getattr(m, n)(x, *a, **k), _EXTREMES[:4],
        errors=_BAD_EXTREMES[:1])
    row(f"dg.{_n}[other]", lambda m, x, y, n=_n: getattr(m, n)(x, y),
        [S(F(3, 4, domain="distinct"), F(4, domain="distinct")), S(F(domain="distinct"), F(2, domain="distinct"))],
        errors=[S(F(3), F(4))])

_AMAXES = [S(F(3, 4, domain="distinct")), S(F(3, 4, domain="distinct"), 1),
           S(F(2, 3, 4, domain="distinct"), (0, 2)), S(F(3, 4, domain="distinct"), -1, True),
           S(F(domain="distinct"), 0), S(F(0, 3), 1), S(F(3, 4, domain="ties"), 0)]
_BAD_AMAXES = [S(F(3, 4), 2), S(F(0, 3), 0), S(F(3, 4), (1, 1))]
for _n in ("amax", "amin"):
    row(f"Tensor.{_n}", lambda m, x, *a, n=_n, **k: getattr(x, n)(*a, **k), _AMAXES,
        errors=_BAD_AMAXES)
    row(f"dg.{_n}", lambda m, x, *a, n=_n, **k: getattr(m, n)(x, *a, **k),
        _AMAXES[:4] + _AMAXES[4:] + [S(I(3, 4), 1), S(I(2, 3, 4), (0, -1), True)],
        errors=_BAD_AMAXES)

_ARGS = [S(F(3, 4, domain="distinct")), S(F(3, 4, domain="distinct"), 1),
         S(F(3, 4, domain="distinct"), -2, True), S(F(3, 4, domain="distinct"), keepdim=True),
         S(F(domain="distinct")), S(F(domain="distinct"), 0), S(F(0, 3), 1)]
_BAD_ARGS = [S(F(3, 4), 2), S(F(0, 3), 0), S(F(0, 3))]
for _n in ("argmax", "argmin"):
    row(f"Tensor.{_n}", lambda m, x, *a, n=_n, **k: getattr(x, n)(*a, **k), _ARGS, errors=_BAD_ARGS)
    row(f"dg.{_n}", lambda m, x, *a, n=_n, **k: getattr(m, n)(x, *a, **k), _ARGS[:3],
        errors=_BAD_ARGS[:1])

_LSE = [S(F(3, 4), 1), S(F(3, 4), -1, True), S(F(2, 3, 4), (0, 2)), S(F(), 0), S(F(0, 3), 1)]
row("Tensor.logsumexp", lambda m, x, *a, **k: x.logsumexp(*a, **k), _LSE, errors=_BAD_DIMS[:3])
row("dg.logsumexp", lambda m, x, *a, **k: m.logsumexp(x, *a, **k), _LSE[:3] + _LSE[3:],
    errors=_BAD_DIMS[:1] + _BAD_DIMS[1:3])

_SOFT = [S(F(3, 4), 1), S(F(3, 4), 0), S(F(2, 3, 4), -2), S(F(), 0), S(F(0, 3), 1)]
for _n in ("softmax", "log_softmax"):
    row(f"Tensor.{_n}", lambda m, x, d, n=_n: getattr(x, n)(d), _SOFT, errors=_BAD_DIMS[:3])
    row(f"dg.{_n}", lambda m, x, d, n=_n: getattr(m, n)(x, d), _SOFT[:3] + _SOFT[3:],
        errors=_BAD_DIMS[:1] + _BAD_DIMS[1:3])

_CUMS = [S(F(3, 4), 1), S(F(3, 4), -2), S(F(), 0), S(F(), -1), S(F(0, 3), 0)]
_INT_CUMS = [S(I(3, 4), 1), S(B(3, 4), 0), S(I(), 0)]
row("Tensor.cumsum", lambda m, x, d: x.cumsum(d), _CUMS + _INT_CUMS, errors=_BAD_DIMS[:3])
row("dg.cumsum", lambda m, x, d: m.cumsum(x, d), _CUMS[:3] + _CUMS[3:] + _INT_CUMS,
    errors=_BAD_DIMS[:1] + _BAD_DIMS[1:3])

# ---------------------------------------------------------------- nn.Linear in torch's layout


def _linear(m, x, w, b):
    """duograd's Linear with the sample's (out, in) weight and bias as its parameters."""
    layer = m.nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
    layer.weight, layer.bias = w, b
    return layer(x)


row("nn.Linear", _linear,
    [S(F(5, 3), F(2, 3), F(2)), S(F(3), F(4, 3), F(4)), S(F(2, 5, 3), F(4, 3), None),
     S(F(0, 3), F(2, 3), F(2)), S(F(4, 4), F(4, 4), F(4))],
    torch_fn=lambda m, x, w, b: m.nn.functional.linear(x, w, b),
    errors=[S(F(5, 4), F(2, 3), F(2))])
row("nn.Linear[layout]", lambda m: tuple(m.nn.Linear(in_features=3, out_features=2).weight.shape),
    [S()], grad=False, float32=False)


# ====================================================================== gradient-check variants (OP_SPECS)
# OP_SPECS rows of the signatures family: ``nn.Linear``'s product in torch's layout
# (``x @ weight.T`` with weight (out, in), the ``linear`` primitive), for every input rank.
# (spec_row / selector_row: each joins the entry of its public name, opinfo.spec_entry_name)

for _label, _sx, _sw in (("batch", (5, 3), (4, 3)), ("vector", (3,), (4, 3)),
                         ("batched_3d", (2, 5, 3), (4, 3)), ("square", (4, 4), (4, 4))):
    _row(f"linear.{_label}", lambda x, w: ops.linear_p(x, w), lambda x, w: x @ w.T,
         lambda torch, x, w: torch.nn.functional.linear(x, w), (_sx, _sw))
