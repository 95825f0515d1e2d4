"""The elementwise rows beyond the core table: trigonometric and hyperbolic functions,
exponentials and logarithms, special functions, rounding and remainders, tests, two-input
functions and logic. Their public functions (torch's signatures) are in
``duograd/elementwise.py``, the layer above (those of ``isposinf_p``, ``isneginf_p``,
``nextafter_p``, ``gcd_p``, ``lcm_p`` and the shifts in ``duograd/more_ops.py``).

Every row follows docs/adding-an-op.md: a NumPy forward, one VJP rule per input written in
Tensor algebra (so second order comes free), ``jvp=ELEMENTWISE`` (the Jacobian is
diagonal, so the VJP rule handed the tangent is the JVP rule). Integer and bool inputs of a
floating-point function give a float result, as in PyTorch (``torch.sin`` of an int
tensor is float). Rounding ops and ``sign`` are differentiable with torch's zero gradient;
tests (``isnan``, ``isclose``, ...) and logic give bool Tensors without history.

The error function and its inverse come from ``scipy.special`` (NumPy has no erf; scipy is
a core dependency), imported on first use so ``import duograd`` stays fast.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import ELEMENTWISE, Primitive, zeros_like_p
from .._tensor import Tensor
from .core import _selector, exp_p, sqrt_p

_FLOAT = np.float64  # the float type integer and bool inputs are promoted to (duograd's default)


def _float(x: np.ndarray) -> np.ndarray:
    """``x`` itself if it is floating point, else as the default float type (torch's
    promotion of integer and bool inputs of a floating-point function)."""
    return x if x.dtype.kind == "f" else x.astype(_FLOAT)


def _unary(name: str, fn: Any, rule: Any) -> Primitive:
    """An elementwise row whose forward is a NumPy (or scipy) function of a float array."""
    return Primitive(name, lambda x: fn(_float(x)), vjp=(rule,), jvp=ELEMENTWISE)


def _special(name: str) -> Any:
    def fn(x: np.ndarray) -> np.ndarray:
        import scipy.special  # noqa: PLC0415  (first use only: scipy is slow to import)
        return getattr(scipy.special, name)(x).astype(x.dtype, copy=False)
    return fn


def _zero(g: Tensor, out: Tensor, *xs: Any, **kw: Any) -> Tensor:
    return zeros_like_p(g)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# ====================================================================== trigonometric, hyperbolic

tan_p = _unary("tan", np.tan, lambda g, out, x: g * (1 + out * out))
asin_p = _unary("asin", np.arcsin, lambda g, out, x: g / sqrt_p(1 - x * x))
acos_p = _unary("acos", np.arccos, lambda g, out, x: -g / sqrt_p(1 - x * x))
atan_p = _unary("atan", np.arctan, lambda g, out, x: g / (1 + x * x))
sinh_p = _unary("sinh", np.sinh, lambda g, out, x: g * cosh_p(x))
cosh_p = _unary("cosh", np.cosh, lambda g, out, x: g * sinh_p(x))
asinh_p = _unary("asinh", np.arcsinh, lambda g, out, x: g / sqrt_p(x * x + 1))
acosh_p = _unary("acosh", np.arccosh, lambda g, out, x: g / sqrt_p(x * x - 1))
atanh_p = _unary("atanh", np.arctanh, lambda g, out, x: g / (1 - x * x))
atan2_p = Primitive("atan2", lambda y, x: np.arctan2(_float(y), _float(x)),
                    vjp=(lambda g, out, y, x: g * x / (x * x + y * y),
                         lambda g, out, y, x: -g * y / (x * x + y * y)), jvp=ELEMENTWISE)

# ====================================================================== exponential, logarithmic, special

exp2_p = _unary("exp2", np.exp2, lambda g, out, x: g * out * _LN2)
expm1_p = _unary("expm1", np.expm1, lambda g, out, x: g * (out + 1))
log2_p = _unary("log2", np.log2, lambda g, out, x: g / (x * _LN2))
log10_p = _unary("log10", np.log10, lambda g, out, x: g / (x * _LN10))
log1p_p = _unary("log1p", np.log1p, lambda g, out, x: g / (x + 1))
rsqrt_p = _unary("rsqrt", lambda x: 1 / np.sqrt(x), lambda g, out, x: g * out * out * out * -0.5)
erf_p = _unary("erf", _special("erf"), lambda g, out, x: g * exp_p(-(x * x)) * _TWO_OVER_SQRT_PI)
erfc_p = _unary("erfc", _special("erfc"), lambda g, out, x: g * exp_p(-(x * x)) * -_TWO_OVER_SQRT_PI)
erfinv_p = _unary("erfinv", _special("erfinv"),
                  lambda g, out, x: g * exp_p(out * out) * (math.sqrt(math.pi) / 2))
# NOTE: sign is locally constant: its gradient is zero everywhere, 0 included, as torch's.
# (ops.sign_p is the selector rules use; this row is the public, differentiable sign.)
sign_p = Primitive("sign", np.sign, vjp=(_zero,), jvp=ELEMENTWISE)


def _copysign_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = np.copysign(1.0, x) * np.copysign(1.0, y)
    return np.where(x == 0, 0.0, r).astype(np.result_type(_float(x), _float(y)), copy=False)


# d copysign(x, y)/dx = out / x, +-1; 0 where x == 0 (torch's choice). It is locally constant.
copysign_ratio_p = _selector("copysign_ratio", _copysign_ratio)
# NOTE: at x = 0 the gradient for x is 0, and y's gradient is always 0 (only y's sign bit is
# read), as torch.copysign.
copysign_p = Primitive("copysign", lambda x, y: np.copysign(_float(x), _float(y)),
                       vjp=(lambda g, out, x, y: g * copysign_ratio_p(x, y), _zero), jvp=ELEMENTWISE)

# ====================================================================== rounding and remainders
# NOTE: floor, ceil, round and trunc are piecewise constant: zero gradient everywhere (also at
# the jumps), as torch. Integer inputs stay integer (torch keeps the dtype).

floor_p = Primitive("floor", lambda x: x if x.dtype.kind in "iub" else np.floor(x), vjp=(_zero,), jvp=ELEMENTWISE)
ceil_p = Primitive("ceil", lambda x: x if x.dtype.kind in "iub" else np.ceil(x), vjp=(_zero,), jvp=ELEMENTWISE)
trunc_p = Primitive("trunc", lambda x: x if x.dtype.kind in "iub" else np.trunc(x), vjp=(_zero,), jvp=ELEMENTWISE)
# Halves round to even, as torch.round and numpy.round.
round_p = Primitive("round", lambda x, decimals: x if x.dtype.kind in "iub" else np.round(x, decimals),
                    vjp=(_zero,), jvp=ELEMENTWISE)


def _int_division(op: str, fn: Any) -> Any:
    """``fn``, raising torch's RuntimeError for an integer division by zero (NumPy gives 0)."""
    def forward(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if x.dtype.kind in "iub" and y.dtype.kind in "iub" and np.any(y == 0):
            raise RuntimeError(f"{op}: ZeroDivisionError (integer division by zero; shapes "
                               f"{x.shape} and {y.shape})")
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(x, y)
    return forward


_floor_divide = _int_division("floor_divide", np.floor_divide)


# fmod takes the dividend's sign (C's fmod), remainder the divisor's (Python's %).
# d/dx = 1; d/dy = -trunc(x / y) for fmod, -floor(x / y) for remainder, as torch.
fmod_p = Primitive("fmod", _int_division("fmod", np.fmod),
                   vjp=(lambda g, out, x, y: g, lambda g, out, x, y: -g * trunc_p(x / y)),
                   jvp=ELEMENTWISE)
remainder_p = Primitive("remainder", _int_division("remainder", np.remainder),
                        vjp=(lambda g, out, x, y: g, lambda g, out, x, y: -g * floor_p(x / y)),
                        jvp=ELEMENTWISE)
# NOTE: torch has no derivative for floor_divide (backward raises); here the result has no
# history at all (a selector), so backward through it finds no graph.
floor_divide_p = _selector("floor_divide", _floor_divide)

# ====================================================================== tests (bool, no history)

isnan_p = _selector("isnan", np.isnan)
isinf_p = _selector("isinf", np.isinf)
isfinite_p = _selector("isfinite", np.isfinite)
isclose_p = _selector("isclose", lambda x, y, rtol, atol, equal_nan:
                      np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))
isposinf_p = _selector("isposinf", np.isposinf)
isneginf_p = _selector("isneginf", np.isneginf)

# ====================================================================== two inputs

# d/dx log(e^x + e^y) = e^(x - out) <= 1: never overflows.
logaddexp_p = Primitive("logaddexp", lambda x, y: np.logaddexp(_float(x), _float(y)),
                        vjp=(lambda g, out, x, y: g * exp_p(x - out),
                             lambda g, out, x, y: g * exp_p(y - out)), jvp=ELEMENTWISE)
# NOTE: at x = y = 0 both gradients are 0/0 = nan, as torch.hypot's.
hypot_p = Primitive("hypot", lambda x, y: np.hypot(_float(x), _float(y)),
                    vjp=(lambda g, out, x, y: g * x / out, lambda g, out, x, y: g * y / out),
                    jvp=ELEMENTWISE)
# The next float after x towards y: piecewise constant in both, no history (as torch).
nextafter_p = _selector("nextafter", np.nextafter)

# ====================================================================== logic (bool, no history)

logical_not_p = _selector("logical_not", np.logical_not)
logical_and_p = _selector("logical_and", np.logical_and)
logical_or_p = _selector("logical_or", np.logical_or)
logical_xor_p = _selector("logical_xor", np.logical_xor)
bitwise_not_p = _selector("bitwise_not", np.invert)
bitwise_and_p = _selector("bitwise_and", np.bitwise_and)
bitwise_or_p = _selector("bitwise_or", np.bitwise_or)
bitwise_xor_p = _selector("bitwise_xor", np.bitwise_xor)
# integer-valued functions of two integer tensors (``more_ops`` checks the dtypes)
gcd_p = _selector("gcd", np.gcd)
lcm_p = _selector("lcm", np.lcm)
bitwise_left_shift_p = _selector("bitwise_left_shift", np.left_shift)
bitwise_right_shift_p = _selector("bitwise_right_shift", np.right_shift)
