"""Rows for the elementwise family, the activations (functions and modules) and linear
algebra (issue 19 parts 1, 2 and 5).

Integer and bool samples are added only once duograd keeps integer and bool tensors as such
(``INTS``/``BOOLS``, the dtypes branch): before that ``dg.tensor`` of an int64 array is
float64, and an op that keeps torch's int64 (``floor``, ``remainder``, ``&``) cannot match.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

import duograd as dg
from duograd.nn import functional as nnF
from opinfo import (CLIP, DISTINCT, INTEGER, NONZERO, POSITIVE, REAL, B, F, I, S, row,
                    selector_row as _selector, spec_row as _row)

INTS = dg.tensor(np.array([1])).dtype == np.int64
BOOLS = dg.tensor(np.array([True])).dtype == np.bool_


def _ints(*samples: S) -> list:
    return list(samples) if INTS else []


def _bools(*samples: S) -> list:
    return list(samples) if BOOLS else []


def _both(name: str, samples: list, dg_samples: list | None = None, **kw) -> None:
    """A row for ``Tensor.name`` and one for ``dg.name`` (torch.name)."""
    row(f"Tensor.{name}", lambda m, x, *a, n=name, **k: getattr(x, n)(*a, **k), samples, **kw)
    row(f"dg.{name}", lambda m, x, *a, n=name, **k: getattr(m, n)(x, *a, **k),
        dg_samples if dg_samples is not None else samples[:2], **kw)


def _edges(domain: str = "real") -> list:
    return [S(F(3, 4, domain=domain)), S(F(domain=domain)), S(F(0, 3, domain=domain)),
            S(F(2, 1, 3, domain=domain))]


# ====================================================================== unary, float results
# Integer inputs give the default float dtype, as torch.sin of an int tensor does.
for _name in ("tan", "atan", "sinh", "cosh", "asinh", "exp2", "expm1", "erf", "erfc"):
    _both(_name, _edges() + [S(I(3, 2, low=-1, high=2))])
for _name in ("asin", "acos", "atanh", "erfinv"):
    _both(_name, _edges("unit") + [S(I(4, low=0, high=1))])
for _name in ("log2", "log10", "log1p", "rsqrt"):
    _both(_name, _edges("positive") + [S(I(4, low=1, high=9))])
row("Tensor.acosh", lambda m, x: (x + 1).acosh(), _edges("positive") + [S(I(4, low=1, high=9))])
row("dg.acosh", lambda m, x: m.acosh(x + 1), _edges("positive")[:2])

# ====================================================================== sign, rounding (zero gradient)
# "ties" puts zeros and whole numbers in: the jumps, where the gradient is still torch's 0.
_both("sign", _edges("ties") + _edges()[:1] + _ints(S(I(5, low=-2, high=3))))
for _name in ("floor", "ceil", "trunc"):
    _both(_name, _edges() + [S(F(3, 4, domain="ties"))] + _ints(S(I(5, low=-2, high=3))))
_both("round", _edges() + [S(F(3, 4, domain="ties")), S(F(6), decimals=1), S(F(6), decimals=-1)]
      + _ints(S(I(5, low=-2, high=3))))
_both("frac", _edges() + [S(F(3, 4, domain="ties"))], errors=[] if not INTS else [S(I(3))])

# ====================================================================== two inputs
_PAIRS = [S(F(3, 4), F(4, domain="positive")), S(F(3, 1), F(1, 4, domain="positive")),
          S(F(), F(domain="positive")), S(F(0, 2), F(2, domain="positive"))]
for _name in ("fmod", "remainder"):
    _both(_name, _PAIRS + [S(F(3), 0.7), S(F(3), -0.7)] + _ints(S(I(4, low=-5, high=5), I(4, low=1, high=3))))
_both("atan2", [S(F(3, 4), F(4)), S(F(2, 1), F(3)), S(F(), F()), S(F(0), F(0))])
row("Tensor.arctan2", lambda m, x, y: x.arctan2(y), [S(F(3, 4), F(4))])
_both("copysign", [S(F(3, 4, domain="ties"), F(4)), S(F(3), -2.0), S(F(2, 1), F(1, 3)), S(F(), F())])
_both("logaddexp", [S(F(3, 4), F(4)), S(F(), F(2)), S(F(0, 3), F(3))])
_both("hypot", [S(F(3, 4), F(4)), S(F(), F(2)), S(F(0, 3), F(3))])
_both("lerp", [S(F(3, 4), F(4), 0.3), S(F(3, 4), F(3, 4), F(4)), S(F(), F(), 0.75), S(F(3), F(3), F())])
row("Tensor.__mod__", lambda m, x, y: x % y,
    [S(F(3, 4), 0.7), S(F(3, 4), F(4, domain="positive")), S(F(3), -1.5)] + _ints(S(I(4, low=-5, high=5), 3)))
# NOTE: torch has no derivative for a number % tensor (nor for //): forward only.
row("Tensor.__rmod__", lambda m, x: 1.3 % x, [S(F(3, 4, domain="positive"))], grad=False)
row("Tensor.__floordiv__", lambda m, x, y: x // y,
    [S(F(3, 4), 0.7), S(F(3, 4), F(4, domain="positive")), S(F(3), -1.5)] + _ints(S(I(4, low=-5, high=5), 3)),
    grad=False)
row("Tensor.__floordiv__.int_by_zero", lambda m, x, y: x // y, [], grad=False,
    errors=_ints(S(I(3, low=1, high=4), I(3, low=0, high=1))))
row("Tensor.__rfloordiv__", lambda m, x: 1.3 // x, [S(F(3, 4, domain="positive"))], grad=False)
_both("floor_divide", [S(F(3, 4), F(4, domain="positive")), S(F(3), 0.7)], grad=False)

# ====================================================================== tests: bool results, no gradient
_NANS = [S(F(3, 4, domain="ties")), S(F(domain="ties")), S(F(0, domain="ties"))]
row("Tensor.isnan", lambda m, x: (x / x).isnan(), _NANS, grad=False)
row("dg.isnan", lambda m, x: m.isnan(x / x), _NANS[:1], grad=False)
row("Tensor.isinf", lambda m, x: (1 / x).isinf(), _NANS, grad=False)
row("dg.isinf", lambda m, x: m.isinf(1 / x), _NANS[:1], grad=False)
row("Tensor.isfinite", lambda m, x: (1 / x).isfinite(), _NANS, grad=False)
row("dg.isfinite", lambda m, x: m.isfinite(1 / x), _NANS[:1], grad=False)
row("Tensor.isclose", lambda m, x, y, **k: x.isclose(x + y * 1e-6, **k),
    [S(F(3, 4), F(4)), S(F(3, 4), F(4), rtol=0.0, atol=1e-9), S(F(), F())], grad=False)
row("dg.isclose", lambda m, x, y, **k: m.isclose(x, x + y * 1e-3, **k),
    [S(F(3, 4), F(3, 4), rtol=1e-3, atol=1e-4)], grad=False)

# ====================================================================== logic
_LOGIC1 = [S(F(3, 4, domain="ties")), S(F(domain="ties")), S(F(0))] + _bools(S(B(3, 4))) + _ints(S(I(5)))
_LOGIC2 = ([S(F(3, 4, domain="ties"), F(4, domain="ties")), S(F(domain="ties"), F(2, domain="ties"))]
           + _bools(S(B(3, 4), B(4))))
row("Tensor.logical_not", lambda m, x: x.logical_not(), _LOGIC1, grad=False)
row("dg.logical_not", lambda m, x: m.logical_not(x), _LOGIC1[:1], grad=False)
for _name in ("logical_and", "logical_or", "logical_xor"):
    _both(_name, _LOGIC2, grad=False)
# ~ & | ^ on bool (from comparisons: bool on both sides today) and as bitwise ops on ints.
row("Tensor.__invert__", lambda m, x: ~(x > 0), [S(F(3, 4)), S(F())] + _ints(S(I(5, low=-3, high=3))),
    grad=False)
for _dunder, _op in (("__and__", lambda a, b: a & b), ("__or__", lambda a, b: a | b),
                     ("__xor__", lambda a, b: a ^ b)):
    row(f"Tensor.{_dunder}", lambda m, x, y, o=_op: o(x > 0, y > 0),
        [S(F(3, 4), F(4)), S(F(), F(2))], grad=False)
row("Tensor.__and__.bitwise", lambda m, x, y: x & y, _ints(S(I(5, low=0, high=8), I(5, low=0, high=8))),
    grad=False, errors=[S(F(3), F(3))])
row("Tensor.__or__.bitwise", lambda m, x, y: x | y, _ints(S(I(5, low=0, high=8), I(5, low=0, high=8))),
    grad=False, errors=[S(F(3), F(3))])
row("Tensor.__xor__.bitwise", lambda m, x, y: x ^ y, _ints(S(I(5, low=0, high=8), I(5, low=0, high=8))),
    grad=False, errors=[S(F(3), F(3))])

# ====================================================================== activations
_ACT = [S(F(3, 4)), S(F()), S(F(0, 3)), S(F(2, 3, 4)), S(F(3, 4, domain="ties"))]
for _name, _kw in (("gelu", {}), ("silu", {}), ("mish", {}), ("elu", {"alpha": 0.7}), ("selu", {}),
                   ("celu", {"alpha": 1.5}), ("leaky_relu", {"negative_slope": 0.2}), ("softsign", {}),
                   ("logsigmoid", {}), ("relu", {})):
    row(f"F.{_name}", lambda m, x, n=_name, **k: getattr(m.nn.functional, n)(x, **k),
        _ACT + [S(F(3, 4), **_kw)] if _kw else _ACT)
row("F.gelu.tanh", lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), _ACT,
    errors=[S(F(3), approximate="cubic")])
row("F.relu6", lambda m, x: m.nn.functional.relu6(x * 6), _ACT)  # ties: 0 and 6 exactly, the kinks
row("F.hardtanh", lambda m, x, *a: m.nn.functional.hardtanh(x, *a), _ACT + [S(F(3, 4, domain="ties"), -0.5, 1.0)])
# NOTE: torch's hardsigmoid kernel multiplies by float32's 1/6 even in float64 (a relative
# error of 3e-8); duograd uses 1/6 in the input's dtype.
row("F.hardsigmoid", lambda m, x: m.nn.functional.hardsigmoid(x * 3), _ACT, rtol=1e-7,
    note="torch's float64 gradient uses float32's 1/6")
row("F.hardswish", lambda m, x: m.nn.functional.hardswish(x * 3), _ACT)
row("F.softplus", lambda m, x, **k: m.nn.functional.softplus(x, **k),
    _ACT + [S(F(3, 4), beta=2.0, threshold=1.0), S(F(3, 4, domain="ties"), beta=0.5, threshold=0.5)])
row("F.softmin", lambda m, x, **k: m.nn.functional.softmin(x, **k),
    [S(F(3, 4), dim=1), S(F(3, 4), dim=0), S(F(2, 3, 4), dim=-1), S(F(0, 3), dim=1)])
row("F.glu", lambda m, x, **k: m.nn.functional.glu(x, **k),
    [S(F(3, 4)), S(F(4, 3), dim=0), S(F(2, 6, 3), dim=1), S(F(0, 4))],
    errors=[S(F(3, 5)), S(F()), S(F(3, 4), dim=2)])
row("F.prelu", lambda m, x, w: m.nn.functional.prelu(x, w),
    [S(F(2, 3, 4, domain="ties"), F(3, domain="positive")), S(F(2, 3), F(1, domain="positive")),
     S(F(5), F(1)), S(F(2, 3, 4, 5), F(3))],
    errors=[S(F(2, 3, 4), F(4))])
_both("prelu", [S(F(2, 3, 4, domain="ties"), F(3, domain="positive"))])
row("dg.selu", lambda m, x: m.selu(x), _ACT[:2])
row("dg.celu", lambda m, x: m.celu(x, 0.5), _ACT[:2])

# modules: torch's constructor arguments, one sample each plus the edges
_MODULES = [("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Mish", (), {}),
            ("ELU", (0.5,), {}), ("SELU", (), {}), ("CELU", (), {"alpha": 2.0}),
            ("LeakyReLU", (0.1,), {}), ("ReLU6", (), {}), ("Hardtanh", (-0.5, 0.5), {}),
            ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Softsign", (), {}), ("LogSigmoid", (), {}),
            ("Softplus", (), {"beta": 2.0, "threshold": 1.0}), ("Softmin", (), {"dim": 1}),
            ("GLU", (), {}), ("PReLU", (), {}), ("Softmax", (), {"dim": -1}), ("LogSoftmax", (), {"dim": 1})]
_seen: set[str] = set()
for _cls, _args, _kw in _MODULES:
    _label = f"nn.{_cls}" if _cls not in _seen else f"nn.{_cls}.{'_'.join(_kw)}"
    _seen.add(_cls)
    row(_label, lambda m, x, c=_cls, a=_args, k=_kw: getattr(m.nn, c)(*a, **k)(x),
        [S(F(3, 4)), S(F(2, 4, 6)), S(F(3, 4, domain="ties"))],
        rtol=1e-7 if _cls == "Hardsigmoid" else 1e-10,
        float32=_cls != "PReLU")  # torch's PReLU weight is float64 here (the default dtype)
row("nn.PReLU.channels", lambda m, x: m.nn.PReLU(3, 0.1)(x), [S(F(2, 3, 4)), S(F(2, 3))], float32=False)
row("nn.Softmax.implicit_dim", lambda m, x: m.nn.Softmax()(x), [S(F(3, 4)), S(F(4)), S(F(2, 3, 4))])

# ====================================================================== linear algebra
_EINSUM = [
    S("ij,jk->ik", F(2, 3), F(3, 4)), S("ij,jk", F(2, 3), F(3, 4)), S("bij,bjk->bik", F(2, 3, 4), F(2, 4, 5)),
    S("ii->i", F(3, 3)), S("ii", F(3, 3)), S("iij->ji", F(3, 3, 2)), S("ij->", F(3, 4)), S("ijk->kj", F(2, 3, 4)),
    S("i,j", F(3), F(4)), S("...ij,...jk", F(2, 3, 4), F(4, 5)), S("...i,...i->...", F(1, 3), F(4, 3)),
    S("ij,jk,kl->il", F(2, 3), F(3, 4), F(4, 2)), S("i,i,i->", F(4), F(4), F(4)), S("ij->ji", F(0, 3)),
    S("i->", F(0)), S("", F()), S("Ab,bc->Ac", F(2, 3), F(3, 4)), S("ba", F(2, 3)), S("b...a->a...b", F(2, 3, 4, 5)),
    S("ij,ij->ij", F(2, 1), F(1, 3)),
]
row("dg.einsum", lambda m, eq, *xs: m.einsum(eq, *xs), _EINSUM,
    errors=[S("ij,jk", F(2, 3), F(4, 2)), S("ij,jk", F(2, 3)), S("ij", F(2, 3, 4)), S("ii", F(2, 3)),
            S("ij->kk", F(2, 3)), S("i?", F(2, 3))])
row("dg.einsum.list", lambda m, eq, x, y: m.einsum(eq, [x, y]), [S("ij,jk->ik", F(2, 3), F(3, 4))])

_MM_ERR = [S(F(2, 3), F(4, 2)), S(F(3), F(3, 2)), S(F(2, 2, 2), F(2, 2))]
_both("mm", [S(F(2, 3), F(3, 4)), S(F(0, 3), F(3, 2)), S(F(2, 0), F(0, 3))], errors=_MM_ERR)
_both("bmm", [S(F(2, 3, 4), F(2, 4, 5)), S(F(0, 3, 4), F(0, 4, 5))],
      errors=[S(F(2, 3, 4), F(3, 4, 5)), S(F(3, 4), F(4, 5)), S(F(1, 3, 4), F(2, 4, 5))])
_both("mv", [S(F(2, 3), F(3)), S(F(0, 3), F(3))], errors=[S(F(2, 3), F(4)), S(F(3), F(3))])
_both("dot", [S(F(4), F(4)), S(F(0), F(0))], errors=[S(F(3), F(4)), S(F(2, 2), F(2, 2))])
_both("outer", [S(F(3), F(4)), S(F(0), F(2))], errors=[S(F(2, 2), F(2))])
_both("addmm", [S(F(4), F(2, 3), F(3, 4)), S(F(2, 4), F(2, 3), F(3, 4), beta=0.5, alpha=2.0),
                S(F(), F(2, 3), F(3, 4), beta=0.0), S(F(2, 1), F(2, 3), F(3, 1))],
      errors=[S(F(3, 4), F(2, 3), F(3, 4)), S(F(4), F(2, 3), F(4, 4))])
_both("baddbmm", [S(F(2, 3, 5), F(2, 3, 4), F(2, 4, 5)), S(F(5), F(2, 3, 4), F(2, 4, 5), alpha=0.5, beta=2.0)],
      errors=[S(F(2, 3, 5), F(2, 3, 4), F(3, 4, 5))])

_NORM_SAMPLES = [S(F(3, 4)), S(F(3, 4), p=1), S(F(2, 3, 4), p=3, dim=1), S(F(2, 3, 4), p=2, dim=(0, 2), keepdim=True),
                 S(F(2, 3, 4), p=math.inf, dim=-1), S(F(2, 3, 4), p=-math.inf), S(F(3, 4), p=0.5, dim=0),
                 S(F(3, 4), p="fro", dim=(0, 1)), S(F()), S(F(0, 3)), S(F(3, 4, domain="ties"), p=0)]
row("Tensor.norm", lambda m, x, **k: x.norm(**k), _NORM_SAMPLES)
row("dg.norm", lambda m, x, **k: m.norm(x, **k), _NORM_SAMPLES[:4])
# NOTE: at 0 the 2-norm's gradient is 0 (torch's choice, not 0/0): x - x.detach() is 0
# with an identity gradient.
row("Tensor.norm.at_zero", lambda m, x, **k: (x - x.detach()).norm(**k),
    [S(F(3, 4)), S(F(3, 4), p=3), S(F(2, 3), p=2, dim=1)])
row("linalg.vector_norm", lambda m, x, *a, **k: m.linalg.vector_norm(x, *a, **k),
    [S(F(2, 3, 4)), S(F(2, 3, 4), 1, dim=(0, 2)), S(F(2, 3, 4), 3, dim=1, keepdim=True),
     S(F(2, 3, 4), math.inf), S(F(2, 3, 4, domain="ties"), math.inf, dim=1), S(F(2, 3, 4), -math.inf, dim=0),
     S(F(3, 4, domain="ties"), 0), S(F(3, 4), 0.5), S(F(3, 4), -1.5, dim=1), S(F()), S(F(0, 3), dim=1),
     S(F(0, 3))],
    errors=[S(F(0, 3), math.inf), S(F(3), "fro")] + _ints(S(I(3))))
row("linalg.vector_norm.at_zero", lambda m, x, *a: m.linalg.vector_norm(x - x.detach(), *a),
    [S(F(3, 4)), S(F(3, 4), 4)])
row("linalg.norm", lambda m, x, *a, **k: m.linalg.norm(x, *a, **k),
    [S(F(3, 4)), S(F(2, 3, 4)), S(F(4), 3), S(F(3, 4), 1), S(F(3, 4), -1), S(F(3, 4), math.inf),
     S(F(3, 4), -math.inf), S(F(3, 4), "fro"), S(F(2, 3, 4), 1, dim=(1, 2), keepdim=True),
     S(F(2, 3, 4), math.inf, dim=(2, 0)), S(F(2, 3, 4), 2, dim=1), S(F(2, 3, 4), dim=(0, 1))],
    errors=[S(F(2, 3, 4), 1), S(F(4), "fro")])
row("linalg.matrix_norm", lambda m, x, *a, **k: m.linalg.matrix_norm(x, *a, **k),
    [S(F(3, 4)), S(F(2, 3, 4), 1), S(F(2, 3, 4), -math.inf, dim=(0, 2), keepdim=True)],
    errors=[S(F(4))])


# ====================================================================== gradient-check variants (OP_SPECS)
# OP_SPECS rows of the elementwise family, the activations and linear algebra (issue 19
# parts 1, 2 and 5), and SELECTOR_SPECS rows of the tests and logic that give bool results.
#
# Inputs that must stay inside a function's domain are mapped there inside the row, the
# same way in all three forms (``asin`` sees ``0.4 * x``, ``acosh`` sees ``1 + x`` on
# POSITIVE), so the finite differences stay honest.
# (spec_row / selector_row: each joins the entry of its public name, opinfo.spec_entry_name)

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
    ("gelu", lambda x: nnF.gelu(x), lambda x: x * _phi(x), lambda torch, x: torch.nn.functional.gelu(x), REAL),
    ("gelu.tanh", lambda x: nnF.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
     lambda torch, x: torch.nn.functional.gelu(x, approximate="tanh"), REAL),
    ("silu", lambda x: nnF.silu(x), lambda x: x * _sig(x), lambda torch, x: torch.nn.functional.silu(x), REAL),
    ("mish", lambda x: nnF.mish(x), lambda x: x * np.tanh(np.log1p(np.exp(x))),
     lambda torch, x: torch.nn.functional.mish(x), REAL),
    ("elu", lambda x: nnF.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)),
     lambda torch, x: torch.nn.functional.elu(x, 0.7), NONZERO),
    ("selu", lambda x: dg.selu(x), lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(x)),
     lambda torch, x: torch.selu(x), NONZERO),
    ("celu", lambda x: nnF.celu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5)),
     lambda torch, x: torch.nn.functional.celu(x, 1.5), NONZERO),
    ("leaky_relu", lambda x: nnF.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
     lambda torch, x: torch.nn.functional.leaky_relu(x, 0.2), NONZERO),
    ("relu6", lambda x: nnF.relu6(x * 4), lambda x: np.clip(x * 4, 0, 6),
     lambda torch, x: torch.nn.functional.relu6(x * 4), NONZERO),
    ("hardtanh", lambda x: nnF.hardtanh(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
     lambda torch, x: torch.nn.functional.hardtanh(x, -0.5, 0.5), CLIP),
    # torch's own hardsigmoid kernel differentiates with float32's 1/6 even in float64 and has
    # no second derivative: the oracle is its definition, relu6(x + 3) / 6, in torch.
    ("hardsigmoid", lambda x: nnF.hardsigmoid(x * 2), lambda x: np.clip(x * 2 + 3, 0, 6) / 6,
     lambda torch, x: torch.nn.functional.relu6(x * 2 + 3) / 6, REAL),
    ("hardswish", lambda x: nnF.hardswish(x * 2), lambda x: x * 2 * np.clip(x * 2 + 3, 0, 6) / 6,
     lambda torch, x: torch.nn.functional.hardswish(x * 2), REAL),
    ("softsign", lambda x: nnF.softsign(x), lambda x: x / (1 + np.abs(x)),
     lambda torch, x: torch.nn.functional.softsign(x), REAL),
    ("logsigmoid", lambda x: nnF.logsigmoid(x), lambda x: -np.logaddexp(0, -x),
     lambda torch, x: torch.nn.functional.logsigmoid(x), REAL),
    ("softplus.beta_threshold", lambda x: nnF.softplus(x, beta=2.0, threshold=1.5),
     lambda x: np.where(2 * x > 1.5, x, np.logaddexp(0, 2 * x) / 2),
     lambda torch, x: torch.nn.functional.softplus(x, beta=2.0, threshold=1.5), NONZERO),
    ("softmin", lambda x: nnF.softmin(x, dim=1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True),
     lambda torch, x: torch.nn.functional.softmin(x, dim=1), REAL),
    ("glu", lambda x: nnF.glu(x, dim=1), lambda x: x[:, :2] * _sig(x[:, 2:]),
     lambda torch, x: torch.nn.functional.glu(x, dim=1), REAL),
]
for _name, _fn, _ref, _tfn, _dom in ACTIVATIONS:
    _row(_name, _fn, _ref, _tfn, S34, (_dom,))
_row("prelu", lambda x, w: nnF.prelu(x, w), lambda x, w: np.where(x > 0, x, w[:, None] * x),
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
