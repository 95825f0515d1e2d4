"""Activation functions, as in ``torch.nn.functional`` (which ``duograd.nn.functional``
re-exports); their modules are in ``activation.py``. The functions live apart from the
modules so that ``functional`` can import them without importing ``Module`` (a cycle).

Most are compositions of rows of the op table; ``gelu`` (both forms) and ``hardtanh`` call
rows of their own (in ``duograd/rows/activations.py``, re-exported here), ``gelu`` for a
derivative that is cheaper than the chain rule through ``erf``, ``hardtanh`` because its
gradient mask excludes the bounds (torch's), where ``clip``'s includes them. Where a
function has a kink, the subgradient is torch's and the line says so with a ``# NOTE:``.

>>> import duograd as dg
>>> from duograd.nn import functional as F
>>> F.leaky_relu(dg.tensor([-1.0, 2.0]), 0.1).numpy()
array([-0.1,  2. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..elementwise import expm1_p
from ..ops import greater_p, relu_p, sigmoid_p, softmax, softplus_p, tanh_p, where_p
# The rows, every one re-exported (rows/activations.py).
from ..rows.activations import (  # noqa: F401
    gelu_p, gelu_slope_p, gelu_tanh_p, gelu_tanh_slope_p, hardtanh_p, open_interval_p)
from .._tensor import Tensor, _lift_all
from ..shapes import dim_index

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _t(x: Any, op: str) -> Tensor:
    return _lift_all(op, (x,))[0]


def _no_inplace(inplace: bool, op: str) -> None:
    if inplace:
        raise NotImplementedError(f"{op}: inplace=True is not supported; the result is a new tensor")


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
