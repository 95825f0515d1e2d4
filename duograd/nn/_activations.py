"""Activation functions, as in ``torch.nn.functional`` (which ``duograd.nn.functional``
re-exports); their modules are in ``activation.py``. The functions live apart from the
modules so that ``functional`` can import them without importing ``Module`` (a cycle).

Most are compositions of rows of the op table; ``gelu`` (the exact one) and ``hardtanh`` are
rows of their own, ``gelu`` for a derivative that is cheaper than the chain rule through
``erf``, ``hardtanh`` because its gradient mask excludes the bounds (torch's), where
``clip``'s includes them. Where a function has a kink, the subgradient is torch's and the
line says so with a ``# NOTE:``.

>>> import duograd as dg
>>> from duograd.nn import functional as F
>>> F.leaky_relu(dg.tensor([-1.0, 2.0]), 0.1).numpy()
array([-0.1,  2. ])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import ELEMENTWISE, Primitive, zeros_like_p
from ..elementwise import expm1_p
from ..ops import (_selector, detach_p, exp_p, greater_p, relu_p, sigmoid_p, softmax,
                   softplus_p, tanh_p, where_p)
from .._tensor import Tensor, _lift_all
from ..shapes import dim_index

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _t(x: Any, op: str) -> Tensor:
    return _lift_all(op, (x,))[0]


def _no_inplace(inplace: bool, op: str) -> None:
    if inplace:
        raise NotImplementedError(f"{op}: inplace=True is not supported; the result is a new tensor")


# ====================================================================== rows


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

# ====================================================================== functions


def gelu(x: Any, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (``approximate="none"``) or its tanh approximation (``"tanh"``).

    >>> import duograd as dg
    >>> round(float(gelu(dg.tensor(1.0))), 6)
    0.841345
    """
    x = _t(x, "gelu")
    if approximate == "none":
        return gelu_p(x)
    if approximate == "tanh":
        return gelu_tanh_p(x)
    raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(x: Any, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``.

    >>> import duograd as dg
    >>> float(silu(dg.tensor(0.0)))
    0.0
    """
    _no_inplace(inplace, "silu")
    x = _t(x, "silu")
    return x * sigmoid_p(x)


def mish(x: Any, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``.

    >>> import duograd as dg
    >>> float(mish(dg.tensor(0.0)))
    0.0
    """
    _no_inplace(inplace, "mish")
    x = _t(x, "mish")
    return x * tanh_p(softplus_p(x))


def _elu(x: Tensor, alpha: float, input_scale: float) -> Tensor:
    # NOTE: at x = 0 the gradient is alpha * input_scale (the negative branch's), as torch.
    # The negative branch sees min(x, 0) only, so exp never overflows for large x.
    pos = greater_p(x, 0.0)
    neg = expm1_p(where_p(pos, 0.0, x) * input_scale) * alpha
    return where_p(pos, x, neg)


def elu(x: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise.

    >>> import duograd as dg
    >>> elu(dg.tensor([-1.0, 2.0])).numpy().round(4)
    array([-0.6321,  2.    ])
    """
    _no_inplace(inplace, "elu")
    return _elu(_t(x, "elu"), float(alpha), 1.0)


def selu(x: Any, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> import duograd as dg
    >>> round(float(selu(dg.tensor(1.0))), 6)
    1.050701
    """
    _no_inplace(inplace, "selu")
    return _elu(_t(x, "selu"), _SELU_ALPHA, 1.0) * _SELU_SCALE


def celu(x: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import duograd as dg
    >>> celu(dg.tensor([-1.0, 2.0]), alpha=2.0).numpy().round(4)
    array([-0.7869,  2.    ])
    """
    _no_inplace(inplace, "celu")
    if alpha == 0:
        raise RuntimeError("celu: alpha must not be 0")
    return _elu(_t(x, "celu"), float(alpha), 1.0 / alpha)


def leaky_relu(x: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for x > 0, ``negative_slope * x`` otherwise.

    >>> import duograd as dg
    >>> leaky_relu(dg.tensor([-2.0, 3.0])).numpy()
    array([-0.02,  3.  ])
    """
    _no_inplace(inplace, "leaky_relu")
    x = _t(x, "leaky_relu")
    # NOTE: at x = 0 the gradient is negative_slope, as torch.
    return where_p(greater_p(x, 0.0), x, x * negative_slope)


def hardtanh(x: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` limited to [min_val, max_val]; gradient 0 at and beyond the bounds.

    >>> import duograd as dg
    >>> hardtanh(dg.tensor([-2.0, 0.5, 3.0])).numpy()
    array([-1. ,  0.5,  1. ])
    """
    _no_inplace(inplace, "hardtanh")
    if max_val < min_val:
        raise ValueError(f"hardtanh: max_val ({max_val}) must be >= min_val ({min_val})")
    return hardtanh_p(_t(x, "hardtanh"), lo=float(min_val), hi=float(max_val))


def relu6(x: Any, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``; gradient 0 at 0 and 6 (torch's).

    >>> import duograd as dg
    >>> relu6(dg.tensor([-1.0, 7.0])).numpy()
    array([0., 6.])
    """
    return hardtanh(x, 0.0, 6.0, inplace)


def hardsigmoid(x: Any, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; gradient 1/6 strictly inside (-3, 3).

    >>> import duograd as dg
    >>> hardsigmoid(dg.tensor([-4.0, 0.0, 4.0])).numpy()
    array([0. , 0.5, 1. ])
    """
    _no_inplace(inplace, "hardsigmoid")
    return hardtanh_p(_t(x, "hardsigmoid") + 3.0, lo=0.0, hi=6.0) / 6.0


def hardswish(x: Any, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``.

    >>> import duograd as dg
    >>> hardswish(dg.tensor([-4.0, 1.0, 4.0])).numpy().round(4)
    array([-0.    ,  0.6667,  4.    ])
    """
    _no_inplace(inplace, "hardswish")
    x = _t(x, "hardswish")
    # NOTE: torch's gradient is 0 for x <= -3, x/3 + 1/2 for -3 < x < 3 and 1 for x >= 3:
    # the product rule with relu6's open-interval mask gives exactly that.
    return x * hardtanh_p(x + 3.0, lo=0.0, hi=6.0) / 6.0


def softsign(x: Any) -> Tensor:
    """``x / (1 + |x|)``.

    >>> import duograd as dg
    >>> softsign(dg.tensor([-1.0, 3.0])).numpy()
    array([-0.5 ,  0.75])
    """
    x = _t(x, "softsign")
    return x / (x.abs() + 1)


def logsigmoid(x: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large |x|.

    >>> import duograd as dg
    >>> float(logsigmoid(dg.tensor(-1000.0)))
    -1000.0
    """
    return -softplus_p(-_t(x, "logsigmoid"))


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> import duograd as dg
    >>> round(float(softplus(dg.tensor(0.0), beta=2.0)), 6)
    0.346574
    """
    x = _t(x, "softplus")
    bx = x * beta if beta != 1 else x
    return where_p(greater_p(bx, float(threshold)), x, softplus_p(bx) / beta if beta != 1 else softplus_p(bx))


def softmin(x: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``dim``.

    >>> import duograd as dg
    >>> softmin(dg.tensor([0.0, 0.0]), dim=0).numpy()
    array([0.5, 0.5])
    """
    x = _t(x, "softmin")
    if dtype is not None:
        x = x.astype(dtype)
    return softmax(-x, dim=_implicit_dim(x) if dim is None else dim)


def _implicit_dim(x: Tensor) -> int:
    # torch's _get_softmax_dim: dim 0 for 0-, 1- and 3-dimensional inputs, else 1.
    return 0 if x.ndim in (0, 1, 3) else 1


def glu(x: Any, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``x`` along ``dim``.

    >>> import duograd as dg
    >>> glu(dg.tensor([2.0, 0.0])).numpy()
    array([1.])
    """
    x = _t(x, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu: does not support scalars (0-dimensional tensors)")
    dim = dim_index(dim, x.ndim, "glu", x.shape)
    n = x.shape[dim]
    if n % 2:
        raise RuntimeError(f"glu: halving dimension {dim} of a tensor of shape {x.shape} needs "
                           f"an even size, got {n}")
    head = (slice(None),) * dim
    return x[head + (slice(0, n // 2),)] * sigmoid_p(x[head + (slice(n // 2, n),)])


def prelu(x: Any, weight: Any) -> Tensor:
    """``x`` for x > 0, ``weight * x`` otherwise; ``weight`` has 1 element or one per
    channel (dimension 1 of ``x``).

    >>> import duograd as dg
    >>> prelu(dg.tensor([[-1.0, 2.0]]), dg.tensor([0.25, 0.5])).numpy()
    array([[-0.25,  2.  ]])
    """
    x, weight = _lift_all("prelu", (x, weight))
    n = int(np.prod(weight.shape))
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: weight must be 0- or 1-dimensional, got shape {weight.shape}")
    channels = x.shape[1] if x.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"prelu: weight has {n} elements but the input of shape {x.shape} "
                           f"has {channels} channels")
    if n != 1 and x.ndim >= 2:
        weight = weight.reshape((n,) + (1,) * (x.ndim - 2))
    elif n == 1:
        weight = weight.reshape(())
    # NOTE: at x = 0 the gradient is weight (the negative branch's), as torch.
    return where_p(greater_p(x, 0.0), x, weight * x)


def relu(x: Any, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` (gradient 0 at 0).

    >>> import duograd as dg
    >>> relu(dg.tensor([-1.0, 2.0])).numpy()
    array([0., 2.])
    """
    _no_inplace(inplace, "relu")
    return relu_p(_t(x, "relu"))


FUNCTIONS = ["gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "relu6", "hardtanh",
             "hardsigmoid", "hardswish", "softsign", "logsigmoid", "softmin", "softplus", "glu",
             "prelu", "relu"]
__all__ = FUNCTIONS + ["gelu_p", "gelu_tanh_p", "hardtanh_p"]
