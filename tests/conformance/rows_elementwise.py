"""Rows for the elementwise family, the activations (functions and modules) and linear
algebra (issue 19 parts 1, 2 and 5).

Integer and bool samples are added only once duograd keeps integer and bool tensors as such
(``INTS``/``BOOLS``, the dtypes branch): before that ``dg.tensor`` of an int64 array is
float64, and an op that keeps torch's int64 (``floor``, ``remainder``, ``&``) cannot match.
"""

from __future__ import annotations

import math

import numpy as np

import duograd as dg
from opinfo import B, F, I, S, row

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
