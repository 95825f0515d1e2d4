"""The activation rows: ``gelu_p`` (exact, ``x Phi(x)``) and ``gelu_tanh_p`` (the tanh
approximation), each with its derivative as a row of its own (``gelu_slope_p``,
``gelu_tanh_slope_p``: one NumPy pass instead of the chain rule through ``erf`` or
``tanh``), and ``hardtanh_p``, whose gradient mask ``open_interval_p`` excludes the bounds
(torch's), where ``clip``'s includes them. Their public functions (``gelu``,
``hardtanh``, ``relu6``, ``hardsigmoid``, ``hardswish``, torch's signatures) are in
``duograd/nn/_activations.py``, the layer above.

>>> import duograd as dg
>>> from duograd.rows.activations import gelu_p
>>> round(float(gelu_p(dg.tensor(1.0))), 6)
0.841345
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import ELEMENTWISE, Primitive, zeros_like_p
from .._tensor import Tensor
from .core import _selector, detach_p, exp_p, tanh_p

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)



_SQRT_HALF_TAIL = -4.833646656726457e-17  # sqrt(1/2) - _SQRT_HALF
_SPLIT = 134217729.0  # 2^27 + 1: Dekker's split of a double into two 26-bit halves
_FAR = -2.0  # below it the rounding of x / sqrt 2 (or x^2) shows in Phi (or phi): corrected


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = a * _SPLIT
    hi = t - (t - a)
    return hi, a - hi


def _product_error(a: np.ndarray, b: Any, p: np.ndarray) -> np.ndarray:
    """``a * b - p`` for ``p = fl(a * b)``, exactly (Dekker's two-product without an FMA)."""
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(np.asarray(b, dtype=a.dtype))
    return ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _far(x: np.ndarray) -> np.ndarray:
    """The float64 elements where the rounding corrections matter (finite, not underflowed)."""
    if x.dtype != np.float64:
        return np.zeros(0, dtype=np.intp)  # float32's own rounding is far coarser
    return np.flatnonzero((x < _FAR) & (x > -40.0))  # flat indices: of x.reshape(-1)


def _buffer(x: np.ndarray) -> np.ndarray:
    """A C-ordered float array of x's shape (so ``reshape(-1)`` is a view, 0-d included)."""
    return np.empty(x.shape, dtype=x.dtype if x.dtype.kind == "f" else np.float64)


def _gelu_fwd(x: np.ndarray) -> np.ndarray:
    # x Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2: erfc keeps every bit of Phi for x << 0,
    # where 1 + erf(x / sqrt 2) would cancel. One scipy call; the rest in place.
    import scipy.special  # noqa: PLC0415
    out = np.multiply(x, -_SQRT_HALF, out=_buffer(x))
    scipy.special.erfc(out, out=out)
    out *= 0.5
    far = _far(x)
    if far.size:
        # For x << 0, erfc(w), w = -x / sqrt 2, has the condition number 2 w^2: the rounding
        # of w, and of w^2 inside erfc, would cost 2e-13 at x = -37. So there
        # erfc(w) = erfcx(w) exp(-w^2), with w^2 carried to twice the precision.
        xf = x.reshape(-1)[far]
        w = xf * -_SQRT_HALF
        w_err = -(_product_error(xf, _SQRT_HALF, -w) + xf * _SQRT_HALF_TAIL)
        w2 = w * w
        w2_err = _product_error(w, w, w2) + 2.0 * w * w_err
        out.reshape(-1)[far] = 0.5 * scipy.special.erfcx(w) * np.exp(-w2) * (1.0 - w2_err)
    with np.errstate(invalid="ignore"):  # -inf * 0: nan, as torch's
        out *= x
    return out.astype(x.dtype, copy=False)


def _gelu_slope_fwd(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    # Phi(x) + x phi(x), with Phi(x) = out / x read back from the forward's result (no
    # second erf: out = x Phi(x) rounded once, so the quotient is Phi to an ulp or two);
    # Phi = 1/2 where |x| is too small for the quotient (0, and subnormal products).
    with np.errstate(invalid="ignore"):  # +-inf: nan, as torch's
        small = 4 * np.finfo(x.dtype).tiny if x.dtype.kind == "f" else 0.5  # (0 too)
        cdf = np.divide(out, x, out=np.full_like(x, 0.5), where=np.abs(x) >= small)
        slope = np.multiply(x, x, out=_buffer(x))
        far = _far(x)
        if far.size:  # exp(-x^2 / 2) for x << 0 from x^2 with its rounding error e
            xf = x.reshape(-1)[far]
            e = _product_error(xf, xf, slope.reshape(-1)[far])
        slope *= -0.5
        np.exp(slope, out=slope)
        if far.size:
            slope.reshape(-1)[far] *= 1.0 - 0.5 * e
        slope *= x
        slope *= _INV_SQRT_2PI
        slope += cdf
    return slope


def _gelu_slope_vjp(g: Tensor, slope: Tensor, x: Tensor, out: Tensor) -> Tensor:
    # d/dx (Phi(x) + x phi(x)) = phi(x) (2 - x^2): the whole derivative in x, since the
    # slope's value depends on x alone (out only carries Phi, which x determines).
    return g * (exp_p(x * x * -0.5) * _INV_SQRT_2PI) * (2 - x * x)


def _zero_rule(g: Tensor, slope: Tensor, x: Tensor, out: Tensor) -> Tensor:
    return zeros_like_p(g)


# gelu's derivative as one row: one pass of NumPy instead of erf again and nine nodes.
# NOTE: its second input is gelu's own output (detached), a carrier of Phi(x), not an
# independent variable: its rule is 0 and the x rule is the total derivative, so a
# finite-difference check in `out` alone would disagree (checkable=False).
gelu_slope_p = Primitive("gelu_slope", _gelu_slope_fwd, vjp=(_gelu_slope_vjp, _zero_rule),
                         jvp=ELEMENTWISE, checkable=False)


def _gelu_grad(g: Tensor, out: Tensor, x: Tensor) -> Tensor:
    # d/dx x Phi(x) = Phi(x) + x phi(x), Phi the normal CDF, phi its density.
    return g * gelu_slope_p(x, detach_p(out))


gelu_p = Primitive("gelu", _gelu_fwd, vjp=(_gelu_grad,), jvp=ELEMENTWISE)

# The tanh form: f = x (1 + tanh k) / 2, k = b (x + a x^3), as two rows like the exact one.
_KAPPA, _BETA = 0.044715, math.sqrt(2.0 / math.pi)


def _tanh_inner(x: np.ndarray) -> np.ndarray:
    """tanh(b (x + a x^3)), in place in one buffer (torch's order of the operations)."""
    t = np.multiply(x, x, out=_buffer(x))
    t *= x
    t *= _KAPPA
    t += x
    t *= _BETA
    return np.tanh(t, out=t)


def _gelu_tanh_fwd(x: np.ndarray) -> np.ndarray:
    out = _tanh_inner(x)
    out += 1.0
    with np.errstate(invalid="ignore"):  # -inf * 0: nan, as torch's
        out *= x
    out *= 0.5
    return out


def _gelu_tanh_slope_fwd(x: np.ndarray) -> np.ndarray:
    # f' = (1 + t) / 2 + (x / 2) (1 - t^2) k', k' = b (1 + 3 a x^2)
    t = _tanh_inner(x)
    inner = np.multiply(x, x, out=_buffer(x))
    inner *= 3.0 * _KAPPA
    inner += 1.0
    inner *= _BETA
    slope = np.multiply(t, t, out=_buffer(x))
    np.subtract(1.0, slope, out=slope)
    with np.errstate(invalid="ignore"):  # +-inf: nan, as torch's
        slope *= x
        slope *= 0.5
        slope *= inner
    t += 1.0
    t *= 0.5
    slope += t
    return slope


def _gelu_tanh_slope_vjp(g: Tensor, slope: Tensor, x: Tensor) -> Tensor:
    # f'' = (1 - t^2) (k' + x (k'' - 2 t k'^2) / 2), k'' = 6 a b x
    t = tanh_p((x + x * x * x * _KAPPA) * _BETA)
    k1 = (x * x * (3.0 * _KAPPA) + 1.0) * _BETA
    return g * ((1 - t * t) * (k1 + x * (x * (6.0 * _KAPPA * _BETA) - t * k1 * k1 * 2) * 0.5))


gelu_tanh_slope_p = Primitive("gelu_tanh_slope", _gelu_tanh_slope_fwd,
                              vjp=(_gelu_tanh_slope_vjp,), jvp=ELEMENTWISE)
gelu_tanh_p = Primitive("gelu_tanh", _gelu_tanh_fwd,
                        vjp=(lambda g, out, x: g * gelu_tanh_slope_p(x),), jvp=ELEMENTWISE)

# NOTE: hardtanh passes the gradient strictly inside (lo, hi): 0 at both bounds, as torch's
# hardtanh, relu6 and hardsigmoid (torch.clamp, and so clip, pass it at the bounds).
open_interval_p = _selector("open_interval", lambda x, lo, hi: (x > lo) & (x < hi))
hardtanh_p = Primitive("hardtanh", lambda x, lo, hi: np.clip(x, x.dtype.type(lo), x.dtype.type(hi)),
                       vjp=(lambda g, out, x, lo, hi: g * open_interval_p(x, lo=lo, hi=hi),),
                       jvp=ELEMENTWISE)
