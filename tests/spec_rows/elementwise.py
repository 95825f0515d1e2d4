"""OP_SPECS rows of the elementwise family, the activations and linear algebra (issue 19
parts 1, 2 and 5), and SELECTOR_SPECS rows of the tests and logic that give bool results.

Inputs that must stay inside a function's domain are mapped there inside the row, the
same way in all three forms (``asin`` sees ``0.4 * x``, ``acosh`` sees ``1 + x`` on
POSITIVE), so the finite differences stay honest.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

import duograd as dg
from duograd.nn import functional as F
from specs import CLIP, DISTINCT, INTEGER, NONZERO, POSITIVE, REAL, _row, _selector

S34 = ((3, 4),)
R3 = (2, 3, 4)

# ---------------------------------------------------------------- unary elementwise
# name: (duograd method on x, NumPy on x, torch method on x, domain)
UNARY = {
    "tan": (lambda x: (x * 0.6).tan(), lambda x: np.tan(x * 0.6), lambda x: (x * 0.6).tan(), REAL),
    "asin": (lambda x: (x * 0.4).asin(), lambda x: np.arcsin(x * 0.4), lambda x: (x * 0.4).asin(), REAL),
    "acos": (lambda x: (x * 0.4).acos(), lambda x: np.arccos(x * 0.4), lambda x: (x * 0.4).acos(), REAL),
    "atan": (lambda x: x.atan(), np.arctan, lambda x: x.atan(), REAL),
    "sinh": (lambda x: x.sinh(), np.sinh, lambda x: x.sinh(), REAL),
    "cosh": (lambda x: x.cosh(), np.cosh, lambda x: x.cosh(), REAL),
    "asinh": (lambda x: x.asinh(), np.arcsinh, lambda x: x.asinh(), REAL),
    "acosh": (lambda x: (x + 1).acosh(), lambda x: np.arccosh(x + 1), lambda x: (x + 1).acosh(), POSITIVE),
    "atanh": (lambda x: (x * 0.4).atanh(), lambda x: np.arctanh(x * 0.4), lambda x: (x * 0.4).atanh(), REAL),
    "exp2": (lambda x: x.exp2(), np.exp2, lambda x: x.exp2(), REAL),
    "expm1": (lambda x: x.expm1(), np.expm1, lambda x: x.expm1(), REAL),
    "log2": (lambda x: x.log2(), np.log2, lambda x: x.log2(), POSITIVE),
    "log10": (lambda x: x.log10(), np.log10, lambda x: x.log10(), POSITIVE),
    "log1p": (lambda x: x.log1p(), np.log1p, lambda x: x.log1p(), POSITIVE),
    "rsqrt": (lambda x: x.rsqrt(), lambda x: 1 / np.sqrt(x), lambda x: x.rsqrt(), POSITIVE),
    "erf": (lambda x: x.erf(), scipy.special.erf, lambda x: x.erf(), REAL),
    "erfc": (lambda x: x.erfc(), scipy.special.erfc, lambda x: x.erfc(), REAL),
    "erfinv": (lambda x: (x * 0.4).erfinv(), lambda x: scipy.special.erfinv(x * 0.4),
               lambda x: (x * 0.4).erfinv(), REAL),
    "sign": (lambda x: x.sign(), np.sign, lambda x: x.sign(), NONZERO),
}
# Rounding ops jump at whole numbers (and round at halves), where REAL's clipped ends +-2 sit:
# 0.9 x + 0.05 keeps every input off them, so finite differences see the zero gradient.
for _name, _np in (("floor", np.floor), ("ceil", np.ceil), ("round", np.round), ("trunc", np.trunc),
                   ("frac", lambda x: x - np.trunc(x))):
    UNARY[_name] = (lambda x, n=_name: getattr(x * 0.9 + 0.05, n)(), lambda x, f=_np: f(x * 0.9 + 0.05),
                    lambda x, n=_name: getattr(x * 0.9 + 0.05, n)(), REAL)
for _name, (_fn, _ref, _tfn, _dom) in UNARY.items():
    _row(_name, _fn, _ref, lambda torch, x, f=_tfn: f(x), S34, (_dom,))
_row("round.decimals", lambda x: dg.round(x * 7, decimals=1), lambda x: np.round(x * 7, 1),
     lambda torch, x: torch.round(x * 7, decimals=1), S34)
_row("erf.function_0d", lambda x: dg.erf(x), scipy.special.erf, lambda torch, x: torch.erf(x), ((),))

# ---------------------------------------------------------------- two inputs
_sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
BINARY = {
    # name: (duograd, NumPy, torch, domains)
    "atan2": (lambda y, x: y.atan2(x), np.arctan2, lambda torch, y, x: torch.atan2(y, x), (REAL, NONZERO)),
    "copysign": (lambda x, y: x.copysign(y), np.copysign, lambda torch, x, y: torch.copysign(x, y),
                 (NONZERO, NONZERO)),
    "fmod": (lambda x, y: x.fmod(y), np.fmod, lambda torch, x, y: torch.fmod(x, y), (REAL, NONZERO)),
    "remainder": (lambda x, y: x.remainder(y), np.remainder, lambda torch, x, y: torch.remainder(x, y),
                  (REAL, NONZERO)),
    "mod": (lambda x, y: x % y, np.remainder, lambda torch, x, y: x % y, (REAL, NONZERO)),
    "logaddexp": (lambda x, y: dg.logaddexp(x, y), np.logaddexp, lambda torch, x, y: torch.logaddexp(x, y),
                  (REAL, REAL)),
    "hypot": (lambda x, y: x.hypot(y), np.hypot, lambda torch, x, y: torch.hypot(x, y), (NONZERO, NONZERO)),
    "lerp.number_weight": (lambda x, y: x.lerp(y, 0.3), lambda x, y: x + 0.3 * (y - x),
                           lambda torch, x, y: torch.lerp(x, y, 0.3), (REAL, REAL)),
}
for _name, (_fn, _ref, _tfn, _doms) in BINARY.items():
    for _suffix, _shapes in (("", ((3, 4), (3, 4))), (".broadcast", ((3, 4), (4,)))):
        _row(_name + _suffix, _fn, _ref, _tfn, _shapes, _doms)
_row("mod.number", lambda x: x % 0.7, lambda x: np.remainder(x, 0.7), lambda torch, x: x % 0.7, S34)
_row("lerp.tensor_weight", lambda x, y, w: dg.lerp(x, y, w), lambda x, y, w: x + w * (y - x),
     lambda torch, x, y, w: torch.lerp(x, y, w), ((3, 4), (3, 4), (4,)))

# ---------------------------------------------------------------- activations
_phi = lambda x: 0.5 * (1 + scipy.special.erf(x / math.sqrt(2)))  # noqa: E731
_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
ACTIVATIONS = [
    # name, duograd, NumPy, torch, domain
    ("gelu", lambda x: F.gelu(x), lambda x: x * _phi(x), lambda torch, x: torch.nn.functional.gelu(x), REAL),
    ("gelu.tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
     lambda torch, x: torch.nn.functional.gelu(x, approximate="tanh"), REAL),
    ("silu", lambda x: F.silu(x), lambda x: x * _sig(x), lambda torch, x: torch.nn.functional.silu(x), REAL),
    ("mish", lambda x: F.mish(x), lambda x: x * np.tanh(np.log1p(np.exp(x))),
     lambda torch, x: torch.nn.functional.mish(x), REAL),
    ("elu", lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)),
     lambda torch, x: torch.nn.functional.elu(x, 0.7), NONZERO),
    ("selu", lambda x: dg.selu(x), lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(x)),
     lambda torch, x: torch.selu(x), NONZERO),
    ("celu", lambda x: F.celu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5)),
     lambda torch, x: torch.nn.functional.celu(x, 1.5), NONZERO),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
     lambda torch, x: torch.nn.functional.leaky_relu(x, 0.2), NONZERO),
    ("relu6", lambda x: F.relu6(x * 4), lambda x: np.clip(x * 4, 0, 6),
     lambda torch, x: torch.nn.functional.relu6(x * 4), NONZERO),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
     lambda torch, x: torch.nn.functional.hardtanh(x, -0.5, 0.5), CLIP),
    # torch's own hardsigmoid kernel differentiates with float32's 1/6 even in float64 and has
    # no second derivative: the oracle is its definition, relu6(x + 3) / 6, in torch.
    ("hardsigmoid", lambda x: F.hardsigmoid(x * 2), lambda x: np.clip(x * 2 + 3, 0, 6) / 6,
     lambda torch, x: torch.nn.functional.relu6(x * 2 + 3) / 6, REAL),
    ("hardswish", lambda x: F.hardswish(x * 2), lambda x: x * 2 * np.clip(x * 2 + 3, 0, 6) / 6,
     lambda torch, x: torch.nn.functional.hardswish(x * 2), REAL),
    ("softsign", lambda x: F.softsign(x), lambda x: x / (1 + np.abs(x)),
     lambda torch, x: torch.nn.functional.softsign(x), REAL),
    ("logsigmoid", lambda x: F.logsigmoid(x), lambda x: -np.logaddexp(0, -x),
     lambda torch, x: torch.nn.functional.logsigmoid(x), REAL),
    ("softplus.beta_threshold", lambda x: F.softplus(x, beta=2.0, threshold=1.5),
     lambda x: np.where(2 * x > 1.5, x, np.logaddexp(0, 2 * x) / 2),
     lambda torch, x: torch.nn.functional.softplus(x, beta=2.0, threshold=1.5), NONZERO),
    ("softmin", lambda x: F.softmin(x, dim=1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True),
     lambda torch, x: torch.nn.functional.softmin(x, dim=1), REAL),
    ("glu", lambda x: F.glu(x, dim=1), lambda x: x[:, :2] * _sig(x[:, 2:]),
     lambda torch, x: torch.nn.functional.glu(x, dim=1), REAL),
]
for _name, _fn, _ref, _tfn, _dom in ACTIVATIONS:
    _row(_name, _fn, _ref, _tfn, S34, (_dom,))
_row("prelu", lambda x, w: F.prelu(x, w), lambda x, w: np.where(x > 0, x, w[:, None] * x),
     lambda torch, x, w: torch.nn.functional.prelu(x, w), ((2, 3, 4), (3,)), (NONZERO, POSITIVE))

# ---------------------------------------------------------------- linear algebra
EINSUMS = [
    # equation, shapes (np.einsum is the reference; it reads the same equations)
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij,jk", ((2, 3), (3, 4))),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
    ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)),
    ("iij->ji", ((3, 3, 2),)),
    ("ij->", ((3, 4),)),
    ("ijk->kj", (R3,)),
    ("i,j", ((3,), (4,))),
    ("...ij,...jk", ((2, 3, 4), (4, 5))),
    ("...i,...i->...", ((1, 3), (4, 3))),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
    ("i,i,i->", ((4,), (4,), (4,))),
]
for _eq, _shapes in EINSUMS:
    _row(f"einsum[{_eq}]", lambda *xs, e=_eq: dg.einsum(e, *xs), lambda *xs, e=_eq: np.einsum(e, *xs),
         lambda torch, *xs, e=_eq: torch.einsum(e, *xs), _shapes)
_row("mm", lambda x, y: x.mm(y), np.matmul, lambda torch, x, y: x.mm(y), ((2, 3), (3, 4)))
_row("bmm", lambda x, y: dg.bmm(x, y), np.matmul, lambda torch, x, y: torch.bmm(x, y), ((2, 3, 4), (2, 4, 5)))
_row("mv", lambda x, y: x.mv(y), np.matmul, lambda torch, x, y: x.mv(y), ((2, 3), (3,)))
_row("dot", lambda x, y: dg.dot(x, y), np.dot, lambda torch, x, y: torch.dot(x, y), ((4,), (4,)))
_row("outer", lambda x, y: x.outer(y), np.outer, lambda torch, x, y: torch.outer(x, y), ((3,), (4,)))
_row("addmm", lambda i, x, y: dg.addmm(i, x, y, beta=0.5, alpha=2.0), lambda i, x, y: 0.5 * i + 2 * x @ y,
     lambda torch, i, x, y: torch.addmm(i, x, y, beta=0.5, alpha=2.0), ((4,), (2, 3), (3, 4)))
_row("baddbmm", lambda i, x, y: dg.baddbmm(i, x, y, alpha=0.5), lambda i, x, y: i + 0.5 * x @ y,
     lambda torch, i, x, y: torch.baddbmm(i, x, y, alpha=0.5), ((2, 3, 5), (2, 3, 4), (2, 4, 5)))
NORMS = [
    # label, duograd, NumPy, torch, shape, domain
    ("vector_norm", lambda x: dg.linalg.vector_norm(x), lambda x: np.sqrt((x * x).sum()),
     lambda torch, x: torch.linalg.vector_norm(x), R3, REAL),
    ("vector_norm.ord3_dim", lambda x: dg.linalg.vector_norm(x, 3, dim=1, keepdim=True),
     lambda x: (np.abs(x) ** 3).sum(1, keepdims=True) ** (1 / 3),
     lambda torch, x: torch.linalg.vector_norm(x, 3, dim=1, keepdim=True), R3, NONZERO),
    ("vector_norm.ord1", lambda x: dg.linalg.vector_norm(x, 1, dim=(0, 2)), lambda x: np.abs(x).sum((0, 2)),
     lambda torch, x: torch.linalg.vector_norm(x, 1, dim=(0, 2)), R3, NONZERO),
    ("vector_norm.ord_half", lambda x: dg.linalg.vector_norm(x, 0.5, dim=-1),
     lambda x: (np.abs(x) ** 0.5).sum(-1) ** 2, lambda torch, x: torch.linalg.vector_norm(x, 0.5, dim=-1),
     R3, NONZERO),
    # DISTINCT's pool is symmetric about 0: + 0.05 keeps |x| free of ties too.
    ("vector_norm.inf", lambda x: dg.linalg.vector_norm(x + 0.05, math.inf, dim=1),
     lambda x: np.abs(x + 0.05).max(1),
     lambda torch, x: torch.linalg.vector_norm(x + 0.05, math.inf, dim=1), R3, DISTINCT),
    ("vector_norm.minus_inf", lambda x: dg.linalg.vector_norm(x + 0.05, -math.inf),
     lambda x: np.abs(x + 0.05).min(), lambda torch, x: torch.linalg.vector_norm(x + 0.05, -math.inf),
     R3, DISTINCT),
    ("linalg.norm.fro", lambda x: dg.linalg.norm(x), lambda x: np.sqrt((x * x).sum()),
     lambda torch, x: torch.linalg.norm(x), (3, 4), REAL),
    ("linalg.norm.matrix_ord1", lambda x: dg.linalg.norm(x, 1), lambda x: np.abs(x).sum(0).max(),
     lambda torch, x: torch.linalg.norm(x, 1), (3, 4), DISTINCT),
    ("linalg.norm.matrix_inf_keepdim", lambda x: dg.linalg.norm(x, math.inf, dim=(1, 2), keepdim=True),
     lambda x: np.abs(x).sum(2, keepdims=True).max(1, keepdims=True),
     lambda torch, x: torch.linalg.norm(x, math.inf, dim=(1, 2), keepdim=True), R3, DISTINCT),
    ("linalg.norm.matrix_minus1", lambda x: dg.linalg.matrix_norm(x, -1), lambda x: np.abs(x).sum(-2).min(-1),
     lambda torch, x: torch.linalg.matrix_norm(x, -1), R3, DISTINCT),
    ("norm.method_fro", lambda x: x.norm(), lambda x: np.sqrt((x * x).sum()), lambda torch, x: x.norm(), R3, REAL),
    ("norm.method_p1_dim", lambda x: x.norm(p=1, dim=2), lambda x: np.abs(x).sum(2),
     lambda torch, x: x.norm(p=1, dim=2), R3, NONZERO),
    ("norm.function_p4", lambda x: dg.norm(x, 4, dim=(0, 1)), lambda x: (x ** 4).sum((0, 1)) ** 0.25,
     lambda torch, x: torch.norm(x, 4, dim=(0, 1)), R3, REAL),
]
for _label, _fn, _ref, _tfn, _shape, _dom in NORMS:
    _row(_label, _fn, _ref, _tfn, (_shape,), (_dom,))

# ---------------------------------------------------------------- never differentiated (bool)
TESTS = {
    "isnan": (lambda x: (x / x).isnan(), lambda x: np.isnan(x / x)),
    "isinf": (lambda x: (1 / x).isinf(), lambda x: np.isinf(1 / x)),
    "isfinite": (lambda x: (1 / x).isfinite(), lambda x: np.isfinite(1 / x)),
    "logical_not": (lambda x: x.logical_not(), np.logical_not),
    "invert.bool": (lambda x: ~(x > 0), lambda x: ~(x > 0)),
}


def _quiet(fn, *xs):
    with np.errstate(divide="ignore", invalid="ignore"):
        return fn(*xs)


for _name, (_fn, _ref) in TESTS.items():
    _selector(_name, _fn, lambda x, r=_ref: _quiet(r, x), lambda torch, x, f=_fn: f(x), S34, (INTEGER,))


TWO = {
    "isclose": (lambda x, y: x.isclose(y + 1e-9), lambda x, y: np.isclose(x, y + 1e-9)),
    "isclose.options": (lambda x, y: x.isclose(y * 1.01, rtol=0.02, atol=0.0),
                        lambda x, y: np.isclose(x, y * 1.01, rtol=0.02, atol=0.0)),
    "logical_and": (lambda x, y: x.logical_and(y), np.logical_and),
    "logical_or": (lambda x, y: x.logical_or(y), np.logical_or),
    "logical_xor": (lambda x, y: x.logical_xor(y), np.logical_xor),
    "and.bool": (lambda x, y: (x > 0) & (y > 0), lambda x, y: (x > 0) & (y > 0)),
    "or.bool": (lambda x, y: (x > 0) | (y > 0), lambda x, y: (x > 0) | (y > 0)),
    "xor.bool": (lambda x, y: (x > 0) ^ (y > 0), lambda x, y: (x > 0) ^ (y > 0)),
}
for _name, (_fn, _ref) in TWO.items():
    for _suffix, _shapes in (("", ((3, 4), (3, 4))), (".broadcast", ((3, 4), (4,)))):
        _selector(_name + _suffix, _fn, _ref, lambda torch, x, y, f=_fn: f(x, y), _shapes,
                  (INTEGER, INTEGER))
