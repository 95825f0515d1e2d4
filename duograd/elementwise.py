"""Elementwise operations beyond the core table, with torch's signatures: trigonometric and
hyperbolic functions, exponentials and logarithms, special functions, rounding and
remainders, tests, two-input functions and logic, each a row of the op table (``name_p``,
defined in ``duograd/rows/elementwise.py`` and re-exported here) or a composition of rows.
Integer and bool inputs of a floating-point function give a float result, as in PyTorch.

>>> import duograd as dg
>>> x = dg.tensor([0.5, 2.0], requires_grad=True)
>>> dg.log1p(x).sum().backward()
>>> x.grad.numpy()
array([0.66666667, 0.33333333])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .autograd import Primitive
from ._tensor import Tensor, _lift_all
# The rows, every one re-exported (rows/elementwise.py).
from .rows.elementwise import (  # noqa: F401
    tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, atan2_p, exp2_p,
    expm1_p, log2_p, log10_p, log1p_p, rsqrt_p, erf_p, erfc_p, erfinv_p, sign_p, copysign_ratio_p,
    copysign_p, floor_p, ceil_p, trunc_p, round_p, fmod_p, remainder_p, floor_divide_p, isnan_p,
    isinf_p, isfinite_p, isclose_p, logaddexp_p, hypot_p, logical_not_p, logical_and_p,
    logical_or_p, logical_xor_p, bitwise_not_p, bitwise_and_p, bitwise_or_p, bitwise_xor_p,
    _float, _FLOAT, _unary, _special, _zero)

# ====================================================================== the public functions

tan, asin, acos, atan, atan2 = tan_p, asin_p, acos_p, atan_p, atan2_p
sinh, cosh, asinh, acosh, atanh = sinh_p, cosh_p, asinh_p, acosh_p, atanh_p
exp2, expm1, log2, log10, log1p, rsqrt = exp2_p, expm1_p, log2_p, log10_p, log1p_p, rsqrt_p
erf, erfc, erfinv, sign, copysign = erf_p, erfc_p, erfinv_p, sign_p, copysign_p
floor, ceil, trunc, fmod, remainder = floor_p, ceil_p, trunc_p, fmod_p, remainder_p
isnan, isinf, isfinite, logaddexp, hypot = isnan_p, isinf_p, isfinite_p, logaddexp_p, hypot_p
logical_not, logical_and, logical_or, logical_xor = logical_not_p, logical_and_p, logical_or_p, logical_xor_p
arctan2 = atan2


def round(x: Any, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round to ``decimals`` places, halves to even (torch.round); zero gradient.

    >>> import duograd as dg
    >>> dg.round(dg.tensor([0.5, 1.5, 2.25]), decimals=0).numpy()
    array([0., 2., 2.])
    """
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    return round_p(x, decimals=int(decimals))


def frac(x: Any) -> Tensor:
    """The fractional part ``x - trunc(x)`` (sign of ``x``); gradient 1, as torch.frac.

    >>> import duograd as dg
    >>> dg.frac(dg.tensor([1.25, -1.25])).numpy()
    array([ 0.25, -0.25])
    """
    x = _lift_all("frac", (x,))[0]
    if x.dtype.kind != "f":
        raise NotImplementedError(f"frac: needs a floating-point tensor, got {x.dtype} of shape {x.shape}")
    return x - trunc_p(x)


def floor_divide(x: Any, y: Any) -> Tensor:
    """``floor(x / y)`` (Python's and torch's ``//``); no gradient (torch has none).

    >>> import duograd as dg
    >>> dg.floor_divide(dg.tensor([5.0, -3.0]), 2.0).numpy()
    array([ 2., -2.])
    """
    return floor_divide_p(x, y)


def isclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """``|x - y| <= atol + rtol * |y|`` elementwise, a bool Tensor (torch.isclose).

    >>> import duograd as dg
    >>> dg.isclose(dg.tensor([1.0, 2.0]), dg.tensor([1.0 + 1e-9, 2.1])).numpy()
    array([ True, False])
    """
    return isclose_p(x, y, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


def lerp(start: Any, end: Any, weight: Any) -> Tensor:
    """``start + weight * (end - start)``; ``weight`` a number or a Tensor.

    >>> import duograd as dg
    >>> dg.lerp(dg.tensor([0.0, 1.0]), dg.tensor([10.0, 3.0]), 0.5).numpy()
    array([5., 2.])
    """
    start, end = _lift_all("lerp", (start, end))
    return start + weight * (end - start)


def _bits(op: str, logical: Primitive, bitwise: Primitive, *xs: Any) -> Tensor:
    xs = _lift_all(op, xs)
    kinds = {x.dtype.kind for x in xs}
    if kinds <= {"b"}:
        return logical(*xs)
    if kinds <= {"b", "i", "u"}:
        return bitwise(*xs)
    shapes = ", ".join(str(x.shape) for x in xs)
    raise NotImplementedError(f"{op}: defined for bool and integer tensors, not "
                              f"{', '.join(str(x.dtype) for x in xs)} (shapes {shapes})")


def bitwise_not(x: Any) -> Tensor:
    """``~x``: logical not of a bool tensor, bitwise not of an integer one.

    >>> import duograd as dg
    >>> (~(dg.tensor([1.0, 2.0]) > 1.5)).numpy()
    array([ True, False])
    """
    return _bits("bitwise_not", logical_not_p, bitwise_not_p, x)


def bitwise_and(x: Any, y: Any) -> Tensor:
    """``x & y`` on bool (logical) or integer (bitwise) tensors."""
    return _bits("bitwise_and", logical_and_p, bitwise_and_p, x, y)


def bitwise_or(x: Any, y: Any) -> Tensor:
    """``x | y`` on bool (logical) or integer (bitwise) tensors."""
    return _bits("bitwise_or", logical_or_p, bitwise_or_p, x, y)


def bitwise_xor(x: Any, y: Any) -> Tensor:
    """``x ^ y`` on bool (logical) or integer (bitwise) tensors."""
    return _bits("bitwise_xor", logical_xor_p, bitwise_xor_p, x, y)


__all__ = ["tan", "asin", "acos", "atan", "atan2", "arctan2", "sinh", "cosh", "asinh", "acosh",
           "atanh", "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "erf", "erfc", "erfinv",
           "sign", "copysign", "floor", "ceil", "round", "trunc", "frac", "fmod", "remainder",
           "floor_divide", "isnan", "isinf", "isfinite", "isclose", "logaddexp", "lerp", "hypot",
           "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_not", "bitwise_and",
           "bitwise_or", "bitwise_xor"]
