"""The rest of ``torch.nn.functional`` that needs no new machinery (issue 28): each
function composed from the engine's differentiable operations, so its gradient is the
chain rule through them (no hand-written backward). Re-exported by ``nn.functional``.

>>> import duograd as dg
>>> from duograd.nn import functional as F
>>> F.softshrink(dg.tensor([-2.0, 0.1, 3.0]), 0.5).numpy()
array([-1.5,  0. ,  2.5])
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .. import conv as _conv
from .._tensor import Tensor, _as_tensor, _derive, _draw, _wrap, tensor
from ..autograd import no_grad as _no_grad
from ..ops import getitem_p, minimum, where
from ..rows.core import argmax_p
from ..rows.indexing import gather_p

__all__ = [
    "linear", "bilinear", "sigmoid", "tanh", "threshold", "threshold_", "hardshrink",
    "softshrink", "tanhshrink", "rrelu", "rrelu_", "relu_", "elu_", "selu_", "celu_",
    "leaky_relu_", "hardtanh_", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "pairwise_distance", "pdist",
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss", "instance_norm", "rms_norm",
    "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d", "avg_pool3d", "max_pool3d",
    "max_unpool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "embedding_bag",
    "upsample", "upsample_nearest", "upsample_bilinear", "conv_tbc", "affine_grid", "grid_sample",
    "linear_cross_entropy", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
]

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(size_average: Any, reduce: Any, reduction: str, fn: str) -> str:
    """torch's legacy ``size_average``/``reduce`` read as a ``reduction``, which is checked."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: {reduction} is not a valid value for reduction")
    return reduction


def _reduce(x: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    return x


def _floats(fn: str, *xs: Any) -> list[Tensor]:
    out = [_as_tensor(x) for x in xs]
    return out


def _same_shape(fn: str, a: Tensor, b: Tensor) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{fn}: the input of shape {a.shape} and the target of shape {b.shape} "
                         "must have the same shape")


def _cat(ts: list) -> Tensor:
    import duograd
    return duograd.cat(ts)


def _stack(ts: list) -> Tensor:
    import duograd
    return duograd.stack(ts)


def _inplace(x: Any, result: Tensor) -> Tensor:
    """``x`` overwritten with ``result`` (the in-place forms ``relu_`` ...), as torch;
    ``result`` must have been computed from ``x.clone()`` (so that the operation's saved
    input is not the tensor written)."""
    x = _as_tensor(x)
    x.copy_(result)
    return x


# ====================================================================== linear maps

def linear(input: Any, weight: Any, bias: Any = None) -> Tensor:
    """``input @ weight.T + bias``, as ``torch.nn.functional.linear``: ``weight`` is
    (out_features, in_features) (or 1-D), ``bias`` (out_features,).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.linear(dg.tensor([[1.0, 2.0]]), dg.tensor([[1.0, 1.0], [0.0, 1.0]]), dg.tensor([0.5, 0.0])).numpy()
    array([[3.5, 2. ]])
    """
    input, weight = _as_tensor(input), _as_tensor(weight)
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear: weight must be 1-D or 2-D, got shape {weight.shape}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear: input of shape {input.shape} and weight of shape "
                           f"{weight.shape} cannot be multiplied")
    out = input @ (weight.T if weight.ndim == 2 else weight)
    return out if bias is None else out + _as_tensor(bias)


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Tensor:
    """``y[..., k] = x1 @ weight[k] @ x2 + bias[k]``, as ``torch.nn.functional.bilinear``:
    ``weight`` (out, in1, in2).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.bilinear(dg.tensor([[1.0, 2.0]]), dg.tensor([[3.0]]), dg.ones((1, 2, 1))).numpy()
    array([[9.]])
    """
    x1, x2, w = _as_tensor(input1), _as_tensor(input2), _as_tensor(weight)
    if w.ndim != 3 or x1.ndim == 0 or x2.ndim == 0 or x1.shape[-1] != w.shape[1] \
            or x2.shape[-1] != w.shape[2] or x1.shape[:-1] != x2.shape[:-1]:
        raise RuntimeError(f"bilinear: input1 {x1.shape}, input2 {x2.shape} and weight "
                           f"{w.shape} (out, in1, in2) do not fit")
    out_f, in1, in2 = w.shape
    lead = x1.shape[:-1]
    a = x1.reshape(-1, in1) @ w.permute(1, 0, 2).reshape(in1, out_f * in2)
    y = (a.reshape(-1, out_f, in2) * x2.reshape(-1, 1, in2)).sum(dim=-1).reshape(lead + (out_f,))
    return y if bias is None else y + _as_tensor(bias)


# ====================================================================== activations

def sigmoid(input: Any) -> Tensor:
    """``1 / (1 + exp(-x))`` elementwise, as ``torch.nn.functional.sigmoid``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.sigmoid(dg.tensor([0.0])).numpy()
    array([0.5])
    """
    return _as_tensor(input).sigmoid()


def tanh(input: Any) -> Tensor:
    """``tanh(x)`` elementwise, as ``torch.nn.functional.tanh``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.tanh(dg.tensor([0.0])).numpy()
    array([0.])
    """
    return _as_tensor(input).tanh()


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``, as ``torch.nn.functional.threshold``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.threshold(dg.tensor([-1.0, 0.5, 2.0]), 1.0, 9.0).numpy()
    array([9., 9., 2.])
    """
    x = _as_tensor(input)
    y = x.clone() if inplace else x
    out = where(y > threshold, y, float(value))
    return _inplace(x, out) if inplace else out


def threshold_(input: Any, threshold: float, value: float) -> Tensor:  # noqa: F811
    """``threshold`` in place.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> x = dg.tensor([-1.0, 2.0]); _ = F.threshold_(x, 0.0, 0.0); x.numpy()
    array([0., 2.])
    """
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold


def hardshrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0, as ``torch.nn.functional.hardshrink``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.hardshrink(dg.tensor([-1.0, 0.2, 0.7])).numpy()
    array([-1. ,  0. ,  0.7])
    """
    x = _as_tensor(input)
    return where((x > lambd) | (x < -lambd), x, 0.0)


def softshrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0, as
    ``torch.nn.functional.softshrink`` (``lambd`` must be >= 0).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.softshrink(dg.tensor([-1.0, 0.2, 0.7])).numpy().round(6)
    array([-0.5,  0. ,  0.2])
    """
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}.")
    x = _as_tensor(input)
    return where(x > lambd, x - lambd, where(x < -lambd, x + lambd, 0.0))


def tanhshrink(input: Any) -> Tensor:
    """``x - tanh(x)``, as ``torch.nn.functional.tanhshrink``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.tanhshrink(dg.tensor([0.0])).numpy()
    array([0.])
    """
    x = _as_tensor(input)
    return x - x.tanh()


def _rrelu_slopes(rng: np.random.Generator, lower: float, upper: float, shape: tuple,
                  dtype: Any) -> np.ndarray:
    return rng.uniform(lower, upper, shape).astype(dtype)


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU, as ``torch.nn.functional.rrelu``: negative inputs times a
    slope drawn uniformly from [lower, upper] per element when ``training`` (from the
    default generator), else times ``(lower + upper) / 2``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.rrelu(dg.tensor([-3.0, 2.0]), 0.25, 0.75).numpy()
    array([-1.5,  2. ])
    """
    from ..random import as_rng
    x = _as_tensor(input)
    if training:
        slope = _draw(_rrelu_slopes, as_rng(None), float(lower), float(upper), x.shape, x.dtype)
    else:
        slope = (lower + upper) / 2
    y = x.clone() if inplace else x
    out = where(y >= 0, y, y * slope)
    return _inplace(x, out) if inplace else out


def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """``rrelu`` in place.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> x = dg.tensor([-4.0]); _ = F.rrelu_(x, 0.25, 0.25); x.numpy()
    array([-1.])
    """
    return rrelu(input, lower, upper, training, inplace=True)


def _inplace_of(name: str) -> Callable[..., Tensor]:
    def fn(input: Any, *args: Any, **kw: Any) -> Tensor:
        from . import functional as F
        kw.pop("inplace", None)
        return _inplace(input, getattr(F, name)(_as_tensor(input).clone(), *args, **kw))
    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = (f"``{name}`` in place, as ``torch.nn.functional.{name}_``.\n\n"
                  "    >>> import duograd as dg\n"
                  "    >>> from duograd.nn import functional as F\n"
                  f"    >>> x = dg.tensor([2.0]); _ = F.{name}_(x); bool(x.numpy()[0] > 0)\n"
                  "    True\n")
    return fn


relu_ = _inplace_of("relu")
elu_ = _inplace_of("elu")
selu_ = _inplace_of("selu")
celu_ = _inplace_of("celu")
leaky_relu_ = _inplace_of("leaky_relu")
hardtanh_ = _inplace_of("hardtanh")


# ====================================================================== dropout

def _check_p(p: float, fn: str) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def _keep(rng: np.random.Generator, p: float, shape: tuple) -> np.ndarray:
    return rng.random(shape) >= p


def _mask(x: Tensor, p: float, shape: tuple) -> np.ndarray:
    from ..random import as_rng
    return _draw(_keep, as_rng(None), p, shape)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    ``training``, as ``torch.nn.functional.dropout`` (masks from the default generator:
    ``dg.manual_seed``).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.dropout(dg.ones(3), 0.5, training=False).numpy()
    array([1., 1., 1.])
    """
    p = _check_p(p, "dropout")
    x = _as_tensor(input)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        out = x * np.zeros(x.shape, x.dtype)
    else:
        y = x.clone() if inplace else x
        out = y * (_mask(x, p, x.shape).astype(x.dtype) * x.dtype.type(1.0 / (1.0 - p)))
    return _inplace(x, out) if inplace else out


def _feature_dropout(x: Tensor, p: float, training: bool, inplace: bool, d: int, fn: str) -> Tensor:
    p = _check_p(p, fn)
    if x.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{fn}: expected {d + 1}-D or {d + 2}-D input, but received a "
                           f"{x.ndim}-D input of shape {x.shape}")
    if not training or p == 0.0:
        return x
    shape = x.shape[:x.ndim - d] + (1,) * d
    if d == 2 and x.ndim == 3:  # torch reads a 3-D input of dropout2d as (N, C, L), with a warning
        import warnings
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. Use dropout1d for that.", UserWarning,
                      stacklevel=3)
        shape = x.shape[:2] + (1,)
    keep = np.zeros(shape, bool) if p == 1.0 else _mask(x, p, shape)
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    out = (x.clone() if inplace else x) * (keep.astype(x.dtype) * x.dtype.type(scale))
    return _inplace(x, out) if inplace else out


def dropout1d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, L) or (C, L) input, as
    ``torch.nn.functional.dropout1d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.dropout1d(dg.ones((2, 3)), training=False).shape
    (2, 3)
    """
    return _feature_dropout(_as_tensor(input), p, training, inplace, 1, "dropout1d")


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, H, W) or (C, H, W) input, as
    ``torch.nn.functional.dropout2d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> y = F.dropout2d(dg.ones((4, 8, 2, 2)), 0.5)
    >>> bool(((y.numpy() == 0).all(axis=(2, 3)) | (y.numpy() == 2).all(axis=(2, 3))).all())
    True
    """
    return _feature_dropout(_as_tensor(input), p, training, inplace, 2, "dropout2d")


def dropout3d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input, as
    ``torch.nn.functional.dropout3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.dropout3d(dg.ones((1, 2, 1, 1, 1)), 0.0).numpy().ravel()
    array([1., 1.])
    """
    return _feature_dropout(_as_tensor(input), p, training, inplace, 3, "dropout3d")


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _alpha_dropout(x: Tensor, p: float, training: bool, inplace: bool, feature: bool, fn: str) -> Tensor:
    p = _check_p(p, fn)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        out = x * np.zeros(x.shape, x.dtype)
        return _inplace(x, out) if inplace else out
    alpha_p = -_SELU_ALPHA * _SELU_SCALE
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    shape = x.shape[:2] + (1,) * (x.ndim - 2) if feature else x.shape
    keep = _mask(x, p, shape).astype(x.dtype)
    out = (x.clone() if inplace else x) * (keep * a) + ((1 - keep) * (alpha_p * a) + b).astype(x.dtype)
    return _inplace(x, out) if inplace else out


def alpha_dropout(input: Any, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's mean and variance, as ``torch.nn.functional.alpha_dropout``:
    dropped elements become SELU's negative saturation, then an affine map restores the
    statistics.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.alpha_dropout(dg.ones(2), 0.3).numpy()      # (training=False by default)
    array([1., 1.])
    """
    return _alpha_dropout(_as_tensor(input), p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (N, C, ...), as
    ``torch.nn.functional.feature_alpha_dropout``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.feature_alpha_dropout(dg.ones((1, 2, 3)), 0.5).shape
    (1, 2, 3)
    """
    return _alpha_dropout(_as_tensor(input), p, training, inplace, True, "feature_alpha_dropout")


def _gumbel(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    return -np.log(rng.exponential(1.0, shape)).astype(dtype)


def gumbel_softmax(logits: Any, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample from the Gumbel-softmax distribution, as
    ``torch.nn.functional.gumbel_softmax``: ``softmax((logits + g) / tau)`` with Gumbel
    noise ``g``; with ``hard`` the one-hot of its argmax whose gradient is the soft
    sample's (straight-through).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> y = F.gumbel_softmax(dg.zeros((2, 3)), hard=True)
    >>> y.numpy().sum(axis=1)
    array([1., 1.])
    """
    from ..random import as_rng
    x = _as_tensor(logits)
    g = _draw(_gumbel, as_rng(None), x.shape, x.dtype)
    soft = ((x + g) / tau).softmax(dim)
    if not hard:
        return soft
    index = np.argmax(soft._data, axis=dim)
    one = np.zeros(x.shape, x.dtype)
    np.put_along_axis(one, np.expand_dims(index, dim), 1.0, axis=dim)
    return (soft * -1.0 + one).detach() + soft


# ====================================================================== shuffles

def pixel_shuffle(input: Any, upscale_factor: int) -> Tensor:
    """(*, C r², H, W) rearranged to (*, C, H r, W r), as ``torch.nn.functional.pixel_shuffle``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.pixel_shuffle(dg.arange(4.0).reshape(1, 4, 1, 1), 2).numpy()[0, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    x, r = _as_tensor(input), int(upscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {x.ndim} dimension(s)")
    if r <= 0 or x.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={x.shape[-3]} is "
                           f"not divisible by {r * r}")
    *lead, c, h, w = x.shape
    lead = tuple(lead)
    k = len(lead)
    y = x.reshape(lead + (c // (r * r), r, r, h, w))
    y = y.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return y.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Tensor:
    """The inverse of ``pixel_shuffle``: (*, C, H r, W r) to (*, C r², H, W).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.pixel_unshuffle(dg.arange(4.0).reshape(1, 1, 2, 2), 2).numpy().ravel()
    array([0., 1., 2., 3.])
    """
    x, r = _as_tensor(input), int(downscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if r <= 0 or x.shape[-2] % r or x.shape[-1] % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width {x.shape[-2:]} to be "
                           f"divisible by downscale_factor {r}")
    *lead, c, h, w = x.shape
    lead = tuple(lead)
    k = len(lead)
    y = x.reshape(lead + (c, h // r, r, w // r, r))
    y = y.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return y.reshape(lead + (c * r * r, h // r, w // r))


def channel_shuffle(input: Any, groups: int) -> Tensor:
    """(N, g·k, *) with the channels regrouped as (k, g), as
    ``torch.nn.functional.channel_shuffle``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.channel_shuffle(dg.arange(4.0).reshape(1, 4, 1), 2).numpy().ravel()
    array([0., 2., 1., 3.])
    """
    x, g = _as_tensor(input), int(groups)
    if x.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    n, c = x.shape[:2]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{g} groups.")
    rest = x.shape[2:]
    return x.reshape((n, g, c // g) + rest).transpose(1, 2).reshape(x.shape)


native_channel_shuffle = channel_shuffle


# ====================================================================== distances

def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dimension (broadcast), as
    ``torch.nn.functional.pairwise_distance``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.pairwise_distance(dg.tensor([[3.0, 0.0]]), dg.tensor([[0.0, 4.0]]), eps=0.0).numpy()
    array([5.])
    """
    a, b = _as_tensor(x1), _as_tensor(x2)
    d = a - b + eps
    if d.ndim == 0:
        d = d.reshape(1)
    return _norm(d, float(p), -1, keepdim)


def _norm(d: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    if p == 2.0:
        return (d * d).sum(dim=dim, keepdim=keepdim).sqrt()
    if p == 1.0:
        return d.abs().sum(dim=dim, keepdim=keepdim)
    if p == math.inf:
        return d.abs().amax(dim=dim, keepdim=keepdim)
    if p == 0.0:
        return (d != 0).astype(d.dtype).sum(dim=dim, keepdim=keepdim)
    return (d.abs() ** p).sum(dim=dim, keepdim=keepdim) ** (1.0 / p)


def pdist(input: Any, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows of an (N, M) input, the upper
    triangle row by row (N (N - 1) / 2 values), as ``torch.nn.functional.pdist``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.pdist(dg.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).numpy().round(4)
    array([5.    , 1.    , 4.2426])
    """
    x = _as_tensor(input)
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(x.shape[0], 1)
    return _norm(x[i] - x[j], float(p), -1, False)


# ====================================================================== losses

def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, as
    ``torch.nn.functional.margin_ranking_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.margin_ranking_loss(dg.tensor([1.0, 2.0]), dg.tensor([2.0, 1.0]), dg.tensor([1.0, 1.0])).item()
    0.5
    """
    reduction = _reduction(size_average, reduce, reduction, "margin_ranking_loss")
    a, b, y = _floats("margin_ranking_loss", input1, input2, target)
    if a.ndim != b.ndim or a.ndim != y.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {a.shape}, input2: {b.shape}, target: {y.shape}")
    return _reduce((-y * (a - b) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``x`` where the target is 1, ``max(0, margin - x)`` where it is -1, as
    ``torch.nn.functional.hinge_embedding_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.hinge_embedding_loss(dg.tensor([0.3, 0.2]), dg.tensor([1.0, -1.0]), reduction="sum").item()
    1.1
    """
    reduction = _reduction(size_average, reduce, reduction, "hinge_embedding_loss")
    x, y = _floats("hinge_embedding_loss", input, target)
    zeros = 0.0
    out = where(y != 1, (margin - x).clamp(min=0), zeros) + where(y != -1, x, zeros)
    return _reduce(out, reduction)


def soft_margin_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, as ``torch.nn.functional.soft_margin_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.soft_margin_loss(dg.tensor([0.0]), dg.tensor([1.0])).item(), 6)
    0.693147
    """
    reduction = _reduction(size_average, reduce, reduction, "soft_margin_loss")
    x, y = _floats("soft_margin_loss", input, target)
    _same_shape("soft_margin_loss", x, y)
    return _reduce((-y * x).exp().log1p(), reduction)


def _logsigmoid(x: Tensor) -> Tensor:
    from . import functional as F
    return F.logsigmoid(x)


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """The mean over classes of the binary cross-entropy of ``sigmoid(input)`` against a
    0/1 ``target``, as ``torch.nn.functional.multilabel_soft_margin_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.multilabel_soft_margin_loss(dg.tensor([[0.0, 0.0]]), dg.tensor([[1.0, 0.0]])).item(), 6)
    0.693147
    """
    reduction = _reduction(size_average, reduce, reduction, "multilabel_soft_margin_loss")
    x, y = _floats("multilabel_soft_margin_loss", input, target)
    loss = -(y * _logsigmoid(x) + (1 - y) * _logsigmoid(-x))
    if weight is not None:
        loss = loss * _as_tensor(weight)
    loss = loss.sum(dim=x.ndim - 1) / x.shape[-1]
    return _reduce(loss, reduction)


def _class_index(target: Any, fn: str) -> np.ndarray:
    arr = np.asarray(target._data if isinstance(target, Tensor) else target)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}: expected target of an integer dtype (int64), got {arr.dtype}")
    return arr.astype(np.int64)


def _margin_targets(target: np.ndarray, shape: tuple[int, int], name: str) -> np.ndarray:
    """The class of each of the ``shape[0]`` rows (int64), checked against ``shape[1]`` classes."""
    fn = name
    (n, c), y = shape, _class_index(target, fn).reshape(-1)
    if y.shape != (n,):
        raise RuntimeError(f"{fn}: inconsistent target size: {y.shape} for input of size {shape}")
    if y.size and (y.min() < 0 or y.max() >= c):
        raise RuntimeError(f"{fn}: target out of range: classes are [0, {c})")
    return y


def _margin_others(target: np.ndarray, shape: tuple[int, int], dtype: Any, name: str) -> np.ndarray:
    """1 for every class but each row's target, 0 at it, in ``dtype``."""
    y = _margin_targets(target, shape, name)
    return (np.arange(shape[1])[None, :] != y[:, None]).astype(dtype)


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,
                      size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss, as ``torch.nn.functional.multi_margin_loss``: per sample,
    ``sum_{j != y} max(0, margin - x[y] + x[j]) ** p / C`` (times ``weight[y]``).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.multi_margin_loss(dg.tensor([[0.1, 0.2, 0.4, 0.8]]), dg.tensor([3])).item(), 6)
    0.325
    """
    fn = "multi_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, fn)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = _as_tensor(input)
    _class_index(target, fn)  # (the dtype checked first, as before)
    squeeze = x.ndim <= 1
    if x.ndim == 0:
        x = x.reshape(1, 1)
    elif x.ndim == 1:
        x = x.reshape(1, -1)
    elif x.ndim != 2:
        raise RuntimeError(f"{fn}: expected a 1-D or 2-D input, got shape {x.shape}")
    n, c = x.shape
    # Arrays derived from the targets (a dg.compile replay derives them from each call's):
    # the class of each row, checked, and the mask of the other classes.
    y = _derive(_margin_targets, target, shape=x.shape, name=fn)
    xy = getitem_p(x, index=(np.arange(n), y), basic=False).reshape(n, 1)  # x[rows, y]
    terms = (margin - xy + x).clamp(min=0)
    if p == 2:
        terms = terms * terms
    terms = terms * _wrap(_derive(_margin_others, target, shape=x.shape, dtype=x.dtype, name=fn))
    if weight is not None:
        terms = terms * getitem_p(_as_tensor(weight), index=(y,), basic=False).reshape(n, 1)
    loss = terms.sum(dim=1) / c
    if squeeze and reduction == "none":
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                           reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss, as ``torch.nn.functional.multilabel_margin_loss``: the
    target lists class indices (ended by the first -1); per sample, ``sum over listed j and
    unlisted i of max(0, 1 - (x[j] - x[i])) / C``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.multilabel_margin_loss(dg.tensor([[0.1, 0.2, 0.4, 0.8]]), dg.tensor([[3, 0, -1, 1]])).item(), 6)
    0.85
    """
    fn = "multilabel_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, fn)
    x = _as_tensor(input)
    y = _class_index(target, fn)
    squeeze = x.ndim <= 1
    if x.ndim == 0:
        x, y = x.reshape(1, 1), y.reshape(1, 1)
    elif x.ndim == 1:
        x, y = x.reshape(1, -1), y.reshape(1, -1)
    if x.ndim != 2 or y.shape != x.shape:
        raise RuntimeError(f"{fn}: inconsistent target size: {y.shape} for input of size {x.shape}")
    n, c = x.shape
    if y.size and (y.min() < -1 or y.max() >= c):
        raise RuntimeError(f"{fn}: target out of range: classes are [0, {c}) or -1")
    counts = np.zeros((n, c), x.dtype)
    for i in range(n):
        for v in y[i]:
            if v < 0:
                break
            counts[i, v] += 1
    others = (counts == 0).astype(x.dtype)
    pair = counts[:, :, None] * others[:, None, :]
    terms = (1 - x.reshape(n, c, 1) + x.reshape(n, 1, c)).clamp(min=0) * pair
    loss = terms.sum(dim=(1, 2)) / c
    if squeeze and reduction == "none":
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where the target is 1, ``max(0, cos(x1, x2) - margin)`` where it
    is -1, as ``torch.nn.functional.cosine_embedding_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.cosine_embedding_loss(dg.tensor([[1.0, 0.0]]), dg.tensor([[1.0, 1.0]]), dg.tensor([1])).item(), 6)
    0.292893
    """
    fn = "cosine_embedding_loss"
    reduction = _reduction(size_average, reduce, reduction, fn)
    a, b, y = _floats(fn, input1, input2, target)
    if a.shape != b.shape or a.ndim not in (1, 2):
        raise RuntimeError(f"{fn}: expected two 1-D or 2-D inputs of the same shape, got "
                           f"{a.shape} and {b.shape}")
    dim = a.ndim - 1
    if y.ndim != a.ndim - 1:
        raise RuntimeError(f"{fn}: the target of shape {y.shape} must have one dimension less "
                           f"than the inputs {a.shape}")
    eps = 1e-12
    prod = (a * b).sum(dim=dim)
    m1, m2 = (a * a).sum(dim=dim) + eps, (b * b).sum(dim=dim) + eps
    cos = prod / (m1 * m2).sqrt()
    zeros = 0.0
    out = where(y == 1, 1 - cos, zeros) + where(y == -1, (cos - margin).clamp(min=0), zeros)
    return _reduce(out, reduction)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``pairwise_distance`` (with
    ``swap``, ``d(a, n)`` is ``min(d(a, n), d(p, n))``), as
    ``torch.nn.functional.triplet_margin_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> a, p, n = dg.tensor([[0.0, 0.0]]), dg.tensor([[0.0, 1.0]]), dg.tensor([[0.0, 3.0]])
    >>> round(F.triplet_margin_loss(a, p, n, margin=3.0, eps=0.0).item(), 6)
    1.0
    """
    fn = "triplet_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, fn)
    a, pos, neg = _floats(fn, anchor, positive, negative)
    if not (a.ndim == pos.ndim == neg.ndim) or a.ndim not in (1, 2):
        raise RuntimeError(f"{fn}: the anchor {a.shape}, positive {pos.shape} and negative "
                           f"{neg.shape} must all be 1-D or all 2-D")

    def dist(u: Tensor, v: Tensor) -> Tensor:
        return pairwise_distance(u, v, p, eps)
    return _triplet(a, pos, neg, dist, margin, swap, reduction)


def _triplet(a: Tensor, pos: Tensor, neg: Tensor, dist: Callable, margin: float, swap: bool,
             reduction: str) -> Tensor:
    d_ap, d_an = dist(a, pos), dist(a, neg)
    if swap:
        d_an = minimum(d_an, dist(pos, neg))
    return _reduce((margin + d_ap - d_an).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor: Any, positive: Any, negative: Any, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function`` (default:
    ``pairwise_distance``), as ``torch.nn.functional.triplet_margin_with_distance_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> a, p, n = dg.tensor([[0.0]]), dg.tensor([[1.0]]), dg.tensor([[3.0]])
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=3.0).item()
    1.0
    """
    reduction = _reduction(None, None, reduction, "triplet_margin_with_distance_loss")
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than "
                         f"0, got {margin} instead")
    a, pos, neg = _floats("triplet_margin_with_distance_loss", anchor, positive, negative)
    return _triplet(a, pos, neg, distance_function or pairwise_distance, margin, swap, reduction)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """The Poisson negative log-likelihood, as ``torch.nn.functional.poisson_nll_loss``:
    ``exp(x) - t x`` (``log_input``) or ``x - t log(x + eps)``, plus with ``full`` the
    Stirling term ``t log t - t + log(2 pi t) / 2`` where ``t > 1``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.poisson_nll_loss(dg.tensor([0.0]), dg.tensor([2.0])).item()
    1.0
    """
    reduction = _reduction(size_average, reduce, reduction, "poisson_nll_loss")
    x, t = _floats("poisson_nll_loss", input, target)
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:
        big = t > 1
        safe = where(big, t, 2.0)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """The Gaussian negative log-likelihood, as ``torch.nn.functional.gaussian_nll_loss``:
    ``(log(var) + (input - target)² / var) / 2`` (+ ``log(2 pi) / 2`` with ``full``), ``var``
    clamped below at ``eps`` (the clamp passes the gradient through, as torch's); ``var``
    may have one dimension less than the input, or a last dimension of 1, or be a number.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.gaussian_nll_loss(dg.tensor([1.0]), dg.tensor([3.0]), dg.tensor([2.0])).item() == 0.5 * (math.log(2.0) + 2.0)
    True
    """
    fn = "gaussian_nll_loss"
    x, t = _floats(fn, input, target)
    if not isinstance(var, Tensor):
        if float(var) < 0:
            raise ValueError("var has negative entry/entries")
        var = tensor(np.full((), float(var), x.dtype))
    if var.shape != x.shape:
        if x.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (x.shape[:-1] == var.shape[:-1] and var.shape[-1:] == (1,)) and var.ndim != 0:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: {reduction} is not a valid value for reduction")
    if bool(np.any(var._data < 0)):
        raise ValueError("var has negative entry/entries")
    lifted = (var.detach().clamp(min=eps) - var.detach()) + var  # (torch: clamped in no_grad)
    loss = 0.5 * (lifted.log() + (x - t) ** 2 / lifted)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss, as ``torch.nn.functional.ctc_loss``:
    ``log_probs`` (T, N, C) (or (T, C)), ``targets`` (N, S) padded or concatenated (1-D),
    the negative log-likelihood of each target summed over its alignments (the forward
    recursion in log space, differentiated by the engine); "mean" divides each loss by its
    target length, then averages.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> lp = dg.tensor(np.log(np.full((2, 1, 2), 0.5)))
    >>> round(F.ctc_loss(lp, dg.tensor([[1]]), [2], [1], reduction="sum").item(), 6)   # 3 paths of 1/4
    0.287682
    """
    fn = "ctc_loss"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: {reduction} is not a valid value for reduction")
    lp = _as_tensor(log_probs)
    unbatched = lp.ndim == 2
    if unbatched:
        lp = lp.unsqueeze(1)
    if lp.ndim != 3:
        raise RuntimeError(f"{fn}: log_probs must be (T, N, C) or (T, C), got {lp.shape}")
    T, N, C = lp.shape
    tg = np.asarray(targets._data if isinstance(targets, Tensor) else targets).astype(np.int64)
    il = np.asarray(input_lengths._data if isinstance(input_lengths, Tensor) else input_lengths).reshape(-1)
    tl = np.asarray(target_lengths._data if isinstance(target_lengths, Tensor) else target_lengths).reshape(-1)
    if unbatched and tg.ndim == 1 and tl.size == 1:
        tg = tg.reshape(1, -1)
    if il.shape != (N,) or tl.shape != (N,):
        raise RuntimeError(f"{fn}: expected input_lengths and target_lengths of size {N}, got "
                           f"{il.shape} and {tl.shape}")
    if np.any(il > T) or np.any(il < 0):
        raise RuntimeError(f"{fn}: input lengths must be in [0, {T}], got {il.tolist()}")
    offsets = np.concatenate([[0], np.cumsum(tl)[:-1]]) if tg.ndim == 1 else None
    losses = []
    neg_inf = -np.inf
    for b in range(N):
        L = int(tl[b])
        lab = tg[offsets[b]:offsets[b] + L] if offsets is not None else tg[b, :L]
        if lab.size != L or (tg.ndim == 2 and L > tg.shape[1]):
            raise RuntimeError(f"{fn}: target length {L} is longer than the targets")
        ext = np.full(2 * L + 1, blank, np.int64)
        ext[1::2] = lab
        S = ext.size
        skip = np.zeros(S, bool)   # may come from two positions back
        skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
        Tb = int(il[b])
        if Tb == 0:
            losses.append(tensor(np.array(0.0 if L == 0 else np.inf, lp.dtype)))
            continue
        init = np.full(S, neg_inf, lp.dtype)
        init[:2] = 0.0
        if S == 1:
            init = init[:1]
        alpha = lp[0, b][ext] + init
        pad = np.full(1, neg_inf, lp.dtype)
        for t in range(1, Tb):
            one = _cat([tensor(pad), alpha[:-1]])
            two = _cat([tensor(np.full(2, neg_inf, lp.dtype)), alpha[:-2]]) if S > 2 else None
            parts = [alpha, one] + ([where(skip, two, neg_inf)] if two is not None else [])
            alpha = _logsumexp_stack(parts) + lp[t, b][ext]
        last = alpha[-2:] if S > 1 else alpha[-1:]
        losses.append(-_logsumexp_stack([last[i] for i in range(last.shape[0])]))
    loss = _stack(losses)
    if zero_infinity:
        loss = where(np.isinf(loss._data), 0.0, loss)
    if reduction == "mean":
        return (loss / np.maximum(tl, 1).astype(lp.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss


def _logsumexp_stack(parts: list[Tensor]) -> Tensor:
    """``log(sum(exp(parts)))`` elementwise, -inf where every part is -inf (no NaN)."""
    s = _stack(parts)
    m = s.detach().amax(dim=0)
    finite = np.isfinite(m._data)
    shift = where(finite, m, 0.0).detach()
    total = where(finite, (s - shift).exp().sum(dim=0), 1.0)  # (no log(0): its gradient is NaN)
    return where(finite, total.log() + shift, -np.inf)


# ====================================================================== normalisation

def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None,
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial positions, as
    ``torch.nn.functional.instance_norm``; the running statistics, when given and
    ``use_input_stats``, move towards the batch's mean of the instance means and unbiased
    variances; without ``use_input_stats`` they normalise.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.instance_norm(dg.tensor([[[1.0, 3.0]]])).numpy().round(4)
    array([[[-1.,  1.]]])
    """
    x = _as_tensor(input)
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input (N, C, *spatial), got shape {x.shape}")
    n, c = x.shape[:2]
    dims = tuple(range(2, x.ndim))
    cshape = (1, c) + (1,) * (x.ndim - 2)
    if use_input_stats:
        spatial = math.prod(x.shape[2:])
        if spatial <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(x.shape)}")
        mean = x.mean(dim=dims, keepdim=True)
        d = x - mean
        var = (d * d).mean(dim=dims, keepdim=True)
        out = d / (var + eps).sqrt()
        if running_mean is not None and running_var is not None:
            with _no_grad():
                m = float(momentum)
                bm = mean.detach().reshape(n, c).mean(dim=0)
                bv = (var.detach().reshape(n, c) * (spatial / (spatial - 1))).mean(dim=0)
                for buf, new in ((running_mean, bm), (running_var, bv)):
                    buf.mul_(1 - m)
                    buf.add_(new.to(buf.dtype) * m)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
        rm = running_mean._data.astype(x.dtype).reshape(cshape)
        rv = running_var._data.astype(x.dtype).reshape(cshape)
        out = (x - rm) / np.sqrt(rv + x.dtype.type(eps))
    if weight is not None:
        out = out * _as_tensor(weight).reshape(cshape)
    if bias is not None:
        out = out + _as_tensor(bias).reshape(cshape)
    return out


def rms_norm(input: Any, normalized_shape: Sequence[int] | int, weight: Any = None,
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x²) + eps) * weight`` over the last ``len(normalized_shape)``
    dimensions, as ``torch.nn.functional.rms_norm`` (``eps`` None: the dtype's epsilon).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.rms_norm(dg.tensor([[3.0, 4.0]]), (2,), eps=0.0).numpy().round(4)
    array([[0.8485, 1.1314]])
    """
    x = _as_tensor(input)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(v) for v in normalized_shape)
    k = len(shape)
    if x.ndim < k or x.shape[x.ndim - k:] != shape:
        raise RuntimeError(f"rms_norm: normalized_shape {list(shape)} does not match the trailing "
                           f"dimensions of an input of shape {x.shape}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: weight of shape {tuple(weight.shape)} must have "
                           f"normalized_shape {shape}")
    e = float(np.finfo(x.dtype).eps) if eps is None else float(eps)
    dims = tuple(range(x.ndim - k, x.ndim))
    out = x * ((x * x).mean(dim=dims, keepdim=True) + e).rsqrt() if k else x * (x * x + e).rsqrt()
    return out if weight is None else out * _as_tensor(weight)


def local_response_norm(input: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Each element divided by ``(k + alpha * mean of x² over size neighbouring channels)
    ** beta``, as ``torch.nn.functional.local_response_norm`` (zero channels beyond the
    edges count in the mean).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.local_response_norm(dg.tensor([[[2.0], [0.0]]]), 2, alpha=1.0, beta=1.0, k=0.0).numpy().ravel()
    array([1., 0.])
    """
    x = _as_tensor(input)
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    if x.numel() == 0:
        return x
    c = x.shape[1]
    sq = x * x
    lo, hi = size // 2, (size - 1) // 2
    flat = [0, 0] * (x.ndim - 2) + [lo, hi]
    padded = _conv.pad(sq, tuple(flat))
    total = padded[:, 0:c]
    for i in range(1, size):
        total = total + padded[:, i:i + c]
    div = (total * (alpha / size) + k) ** beta
    return x / div


# ====================================================================== pooling

def _lp_pool(d: int, fn: str, x: Any, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:
    x = _as_tensor(x)
    kernel = _conv._ints(kernel_size, d, "kernel_size", fn, 1)
    p = float(norm_type)
    pooled = _conv._avg_pool(d, fn, x ** p, kernel, stride, 0, ceil_mode, True, None)
    return (pooled.sign() * pooled.abs().relu() * math.prod(kernel)) ** (1.0 / p)


def lp_pool1d(input: Any, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window, ``(sum x^p) ** (1/p)``, as
    ``torch.nn.functional.lp_pool1d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.lp_pool1d(dg.tensor([[[3.0, 4.0]]]), 2, 2).numpy()
    array([[[5.]]])
    """
    return _lp_pool(1, "lp_pool1d", input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over 2-D windows, as ``torch.nn.functional.lp_pool2d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.lp_pool2d(dg.ones((1, 1, 2, 2)), 1, 2).numpy().ravel()
    array([4.])
    """
    return _lp_pool(2, "lp_pool2d", input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over 3-D windows, as ``torch.nn.functional.lp_pool3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.lp_pool3d(dg.ones((1, 1, 2, 2, 2)), 1, 2).numpy().ravel()
    array([8.])
    """
    return _lp_pool(3, "lp_pool3d", input, norm_type, kernel_size, stride, ceil_mode)


def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Any = None) -> Tensor:
    """The mean of each window of an (N, C, D, H, W) or (C, D, H, W) input, as
    ``torch.nn.functional.avg_pool3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.avg_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).numpy().ravel()
    array([3.5])
    """
    return _conv._avg_pool(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override)


def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value of each window of an (N, C, D, H, W) or (C, D, H, W) input, as
    ``torch.nn.functional.max_pool3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.max_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).numpy().ravel()
    array([7.])
    """
    return _conv._max_pool(3, "max_pool3d", input, kernel_size, stride, padding, dilation,
                           ceil_mode, return_indices)


def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool3d(..., return_indices=True)``, as
    ``torch.nn.functional.max_unpool3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> y, i = F.max_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(y, i, 2).numpy().ravel()
    array([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _conv._max_unpool(3, "max_unpool3d", input, indices, kernel_size, stride, padding,
                             output_size)


def adaptive_avg_pool3d(input: Any, output_size: Any) -> Tensor:
    """Means over an ``output_size`` grid of windows tiling the last three axes, as
    ``torch.nn.functional.adaptive_avg_pool3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.adaptive_avg_pool3d(dg.ones((1, 2, 3, 4, 5)), 1).shape
    (1, 2, 1, 1, 1)
    """
    return _conv._adaptive_avg(3, "adaptive_avg_pool3d", input, output_size)


def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Maxima over an ``output_size`` grid of windows tiling the last three axes, as
    ``torch.nn.functional.adaptive_max_pool3d``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.adaptive_max_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 1).numpy().ravel()
    array([7.])
    """
    return _conv._adaptive_max(3, "adaptive_max_pool3d", input, output_size, return_indices)


def _with_indices(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kw: Any) -> Any:
        from . import functional as F
        kw["return_indices"] = True
        return getattr(F, name)(*args, **kw)
    fn.__name__ = fn.__qualname__ = name + "_with_indices"
    fn.__doc__ = (f"``{name}(..., return_indices=True)``: (values, indices), as "
                  f"``torch.nn.functional.{name}_with_indices``.\n\n"
                  "    >>> import duograd as dg\n"
                  "    >>> from duograd.nn import functional as F\n"
                  f"    >>> len(F.{name}_with_indices(dg.ones((1, 1, 2, 2, 2)[-{name[-2]} - 2:]), "
                  f"{'1' if name.startswith('adaptive') else '2'}))\n"
                  "    2\n")
    return fn


max_pool1d_with_indices = _with_indices("max_pool1d")
max_pool2d_with_indices = _with_indices("max_pool2d")
max_pool3d_with_indices = _with_indices("max_pool3d")
adaptive_max_pool1d_with_indices = _with_indices("adaptive_max_pool1d")
adaptive_max_pool2d_with_indices = _with_indices("adaptive_max_pool2d")
adaptive_max_pool3d_with_indices = _with_indices("adaptive_max_pool3d")


# ====================================================================== embedding bags

def embedding_bag(input: Any, weight: Any, offsets: Any = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Any = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of the embedding rows of each bag, as
    ``torch.nn.functional.embedding_bag``: a 2-D ``input`` is one bag per row; a 1-D one is
    cut into bags at ``offsets``; ``per_sample_weights`` scale the rows ("sum" only);
    ``padding_idx`` rows are left out of their bag. An empty bag gives zeros.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> w = dg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> F.embedding_bag(dg.tensor([0, 1, 2]), w, dg.tensor([0, 2])).numpy()
    array([[2., 3.],
           [5., 6.]])
    """
    fn = "embedding_bag"
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(f"{fn}: max_norm, scale_grad_by_freq and sparse are not supported")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{fn}: mode has to be one of sum, mean or max")
    w = _as_tensor(weight)
    idx = np.asarray(input._data if isinstance(input, Tensor) else input)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"{fn}: expected input of an integer dtype, got {idx.dtype}")
    idx = idx.astype(np.int64)
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{fn}: if input is 2D, then offsets has to be None, as input is "
                             "treated is a mini-batch of fixed length sequences.")
        n, length = idx.shape
        starts = np.arange(n) * length
        flat = idx.reshape(-1)
        psw = None if per_sample_weights is None else _as_tensor(per_sample_weights).reshape(-1)
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError(f"{fn}: offsets has to be a 1D Tensor but got None")
        starts = np.asarray(offsets._data if isinstance(offsets, Tensor) else offsets).astype(np.int64)
        if starts.ndim != 1:
            raise ValueError(f"{fn}: offsets has to be a 1D Tensor")
        flat = idx
        psw = None if per_sample_weights is None else _as_tensor(per_sample_weights)
        if include_last_offset:
            starts = starts[:-1]
    else:
        raise ValueError(f"{fn}: input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if psw is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got mode='{mode}')")
    if flat.size and (flat.min() < 0 or flat.max() >= w.shape[0]):
        raise IndexError(f"{fn}: index out of range for a weight of {w.shape[0]} rows")
    ends = np.append(starts[1:], flat.size) if not (idx.ndim == 1 and include_last_offset) \
        else np.asarray(offsets._data if isinstance(offsets, Tensor) else offsets).astype(np.int64)[1:]
    pad = None if padding_idx is None else padding_idx % w.shape[0]
    bags = []
    for s, e in zip(starts, ends):
        members = np.arange(s, e)
        if pad is not None:
            members = members[flat[members] != pad]
        if members.size == 0:
            bags.append(tensor(np.zeros(w.shape[1], w.dtype)))
            continue
        rows = w[flat[members]]
        if psw is not None:
            rows = rows * psw[members].reshape(-1, 1)
        bags.append(rows.sum(dim=0) if mode == "sum" else rows.mean(dim=0) if mode == "mean"
                    else rows.amax(dim=0))
    if not bags:
        return tensor(np.zeros((0, w.shape[1]), w.dtype))
    return _stack(bags)


# ====================================================================== resampling

def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: Any = None) -> Tensor:
    """``interpolate`` (torch's deprecated spelling), as ``torch.nn.functional.upsample``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.upsample(dg.tensor([[[1.0, 2.0]]]), scale_factor=2).numpy()
    array([[[1., 1., 2., 2.]]])
    """
    return _conv.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Tensor:
    """``interpolate(mode="nearest")``, as ``torch.nn.functional.upsample_nearest``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.upsample_nearest(dg.tensor([[[1.0, 2.0]]]), 4).numpy()
    array([[[1., 1., 2., 2.]]])
    """
    return _conv.interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Tensor:
    """``interpolate(mode="bilinear", align_corners=True)``, as
    ``torch.nn.functional.upsample_bilinear``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.upsample_bilinear(dg.tensor([[[[0.0, 2.0]]]]), (1, 3)).numpy().ravel()
    array([0., 1., 2.])
    """
    return _conv.interpolate(input, size, scale_factor, "bilinear", True)


def conv_tbc(input: Any, weight: Any, bias: Any, pad: int = 0) -> Tensor:
    """A 1-D convolution over a (time, batch, in_channels) input with a (kernel,
    in_channels, out_channels) weight, as ``torch.conv_tbc``: (time', batch, out_channels).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.conv_tbc(dg.ones((3, 1, 1)), dg.ones((2, 1, 1)), dg.zeros(1)).numpy().ravel()
    array([2., 2.])
    """
    x, w, b = _as_tensor(input), _as_tensor(weight), _as_tensor(bias)
    if x.ndim != 3 or w.ndim != 3 or b.ndim != 1 or x.shape[2] != w.shape[1] or b.shape[0] != w.shape[2]:
        raise RuntimeError(f"conv_tbc: input {x.shape} (T, B, C_in), weight {w.shape} (K, C_in, "
                           f"C_out) and bias {b.shape} (C_out,) do not fit")
    y = _conv.conv1d(x.permute(1, 2, 0), w.permute(2, 1, 0), b, padding=int(pad))
    return y.permute(2, 0, 1)


def affine_grid(theta: Any, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) for a 2-D ``size`` (N, C,
    H, W), or (N, 3, 4) for a 3-D one, as ``torch.nn.functional.affine_grid``: (N, H, W, 2)
    (or (N, D, H, W, 3)) coordinates in [-1, 1].

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> theta = dg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(theta, (1, 1, 1, 2), align_corners=False).numpy()
    array([[[[-0.5,  0. ],
             [ 0.5,  0. ]]]])
    """
    th = _as_tensor(theta)
    size = tuple(int(s) for s in size)
    ac = bool(align_corners)
    d = len(size) - 2
    if d not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if th.shape != (size[0], d, d + 1):
        raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for "
                         f"size {size}. Got {th.shape}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")

    def lin(n: int) -> np.ndarray:
        if n <= 1:
            return np.zeros(max(n, 1))
        v = np.linspace(-1.0, 1.0, n)
        return v if ac else v * (n - 1) / n
    spatial = size[2:]
    axes = [lin(n) for n in spatial]          # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")  # coordinates ordered x (W) first in the grid
    coords = [mesh[-1], mesh[-2]] + ([mesh[0]] if d == 3 else [])
    base = np.stack(coords + [np.ones_like(mesh[0])], axis=-1).astype(th.dtype)  # (*spatial, d+1)
    flat = tensor(base.reshape(-1, d + 1))
    out = flat @ th.transpose(1, 2)            # (N, P, d)
    return out.reshape((size[0],) + spatial + (d,))


def _unnormalize(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (n - 1)
    return ((coord + 1) * n - 1) / 2


def _reflect(coord: Tensor, lo: float, hi: float) -> Tensor:
    """Coordinates reflected into [lo, hi] (torch's reflection padding of grid_sample)."""
    span = hi - lo
    if span <= 0:
        return coord * 0.0
    c = (coord - lo).abs()
    flips = (c.detach() / span).floor()  # (no gradient through the count of flips)
    extra = c - flips * span
    even = flips % 2 == 0
    return where(even, extra + lo, span - extra + lo)


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Values of an (N, C, H, W) input at the (N, H', W', 2) ``grid`` of [-1, 1]
    coordinates (x first), as ``torch.nn.functional.grid_sample`` in 2-D: ``mode``
    "bilinear" or "nearest", ``padding_mode`` "zeros", "border" or "reflection";
    differentiable in both the input and the grid (bilinear).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> x = dg.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> F.grid_sample(x, dg.tensor([[[[0.0, 0.0]]]]), align_corners=False).numpy().ravel()
    array([1.5])
    """
    x, g = _as_tensor(input), _as_tensor(grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        if x.ndim == 5:
            raise NotImplementedError("grid_sample: 5-D (volumetric) inputs are not supported")
        raise RuntimeError(f"grid_sample: expected an input (N, C, H, W) and a grid (N, H', W', 2) "
                           f"with the same N, got {x.shape} and {g.shape}")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported")
    ac = bool(align_corners)
    n, c, h, w = x.shape
    ix, iy = _unnormalize(g[..., 0], w, ac), _unnormalize(g[..., 1], h, ac)
    if padding_mode == "border":
        ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    elif padding_mode == "reflection":
        if ac:
            ix, iy = _reflect(ix, 0, w - 1), _reflect(iy, 0, h - 1)
        else:
            ix, iy = _reflect(ix, -0.5, w - 0.5), _reflect(iy, -0.5, h - 0.5)
        ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    flat = x.reshape(n, c, h * w).permute(0, 2, 1)                        # (N, H*W, C)
    ho, wo = g.shape[1], g.shape[2]

    # The integer positions are int64 Tensors (of primitives, without a gradient), picked
    # by a gather that takes them as an operand, so that a dg.compile replay computes them
    # from each call's grid and func.vmap batches them.
    def at(yy: Tensor, xx: Tensor) -> Tensor:
        inside = (xx >= 0) & (xx < w) & (yy >= 0) & (yy < h)
        pos = yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1)               # (N, H', W')
        index = pos.reshape(n, ho * wo, 1).expand(n, ho * wo, c)
        vals = gather_p(flat, index, axis=1).reshape(n, ho, wo, c)       # (N, H', W', C)
        return vals * inside.unsqueeze(-1).to(x.dtype)

    if mode == "nearest":
        out = at(iy.detach().round().to(np.int64), ix.detach().round().to(np.int64))
    else:
        x0 = ix.detach().floor().to(np.int64)
        y0 = iy.detach().floor().to(np.int64)
        wx1 = ix - x0.to(x.dtype)
        wy1 = iy - y0.to(x.dtype)
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = (at(y0, x0) * (wx0 * wy0).unsqueeze(-1) + at(y0, x0 + 1) * (wx1 * wy0).unsqueeze(-1)
               + at(y0 + 1, x0) * (wx0 * wy1).unsqueeze(-1) + at(y0 + 1, x0 + 1) * (wx1 * wy1).unsqueeze(-1))
    return out.permute(0, 3, 1, 2)



# ====================================================================== linear + cross-entropy

def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *, linear_bias: Any = None,
                         weight: Any = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, as
    ``torch.nn.functional.linear_cross_entropy`` (``ignore_index`` None means -100).
    ``options`` (torch's chunked evaluation, a memory saving) is accepted; the logits are
    computed whole here.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.linear_cross_entropy(dg.ones((1, 2)), dg.zeros((3, 2)), dg.tensor([0])).item(), 6)
    1.098612
    """
    from . import functional as F
    w = _as_tensor(linear_weight)
    x = _as_tensor(input)
    if w.ndim > 2:  # (C, d1, ..., in): logits (N, C, d1, ...)
        logits = (x @ w.reshape(-1, w.shape[-1]).T).reshape((x.shape[0],) + w.shape[:-1])
    else:
        logits = linear(x, w)
    if linear_bias is not None:
        logits = logits + _as_tensor(linear_bias)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction,
                           ignore_index=-100 if ignore_index is None else int(ignore_index),
                           label_smoothing=label_smoothing)


# ====================================================================== fractional max pooling

def _fractional_starts(n: int, k: int, o: int, u: np.ndarray) -> np.ndarray:
    """torch's pseudo-random window starts: for each sample ``u`` in [0, 1), ``o`` starts
    in [0, n - k], the last one at ``n - k``."""
    if o == 1:
        return np.full(u.shape + (1,), n - k, np.int64)
    alpha = (n - k) / (o - 1)
    i = np.arange(o - 1)
    starts = (np.floor((i + u[..., None]) * alpha) - np.floor(u[..., None] * alpha)).astype(np.int64)
    last = np.full(u.shape + (1,), n - k, np.int64)
    return np.concatenate([starts, last], axis=-1)


def _fractional_samples(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """One sample in [0, 1) per plane and axis, drawn from ``rng`` (in float64, as torch's)."""
    return rng.random(shape).astype(dtype)


def _fractional_positions(u: np.ndarray, spatial: tuple[int, ...], kernel: tuple[int, ...],
                          outs: tuple[int, ...]) -> np.ndarray:
    """The flat input position of each window element, (N, C, *outs, *kernel) int64, for the
    samples ``u`` (N, C, d)."""
    n, c, d = u.shape
    # torch reads the samples (W, H) in 2-D and (T, H, W) in 3-D
    order = [1, 0] if d == 2 else [0, 1, 2]
    starts = [_fractional_starts(spatial[a], kernel[a], outs[a], u[..., order[a]]) for a in range(d)]
    pos = np.zeros((n, c) + outs + kernel, np.int64)
    for a in range(d):
        st = starts[a]                                 # (n, c, o_a)
        shape_o = [1] * d
        shape_o[a] = outs[a]
        shape_k = [1] * d
        shape_k[a] = kernel[a]
        idx = st.reshape((n, c) + tuple(shape_o) + (1,) * d) + np.arange(kernel[a]).reshape(
            (1, 1) + (1,) * d + tuple(shape_k))
        pos = pos * spatial[a] + idx
    return pos


def _fractional_max_pool(d: int, fn: str, input: Any, kernel_size: Any, output_size: Any,
                         output_ratio: Any, return_indices: bool, _random_samples: Any) -> Any:
    from ..random import as_rng
    x = _as_tensor(input)
    if x.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{fn}: expected a {d + 1}D or {d + 2}D input, got shape {x.shape}")
    unbatched = x.ndim == d + 1
    if unbatched:
        x = x.unsqueeze(0)
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    kernel = _conv._ints(kernel_size, d, "kernel_size", fn, 1)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * d
        outs = tuple(int(sz * r) for sz, r in zip(spatial, ratios))
    else:
        outs = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * d
        outs = tuple(int(o) for o in outs)
    for sz, k, o in zip(spatial, kernel, outs):
        if o + k - 1 > sz:
            raise RuntimeError(f"{fn}: output_size {outs} + kernel_size {kernel} - 1 is too large "
                               f"for the input size {tuple(spatial)}")
    if _random_samples is None:  # (drawn again, from the same generator, by a dg.compile replay)
        u = _draw(_fractional_samples, as_rng(None), (n, c, d), x.dtype)
    else:
        u = _random_samples if isinstance(_random_samples, Tensor) else np.asarray(_random_samples)
        if u.dtype != x.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        if tuple(u.shape) != (n, c, d):
            raise RuntimeError(f"{fn}: _random_samples must have shape {(n, c, d)}, got "
                               f"{tuple(u.shape)}")
    # Each window element's flat input position, derived from the samples (a replay
    # derives it from each call's samples).
    pos = _derive(_fractional_positions, u, spatial=tuple(spatial), kernel=tuple(kernel),
                  outs=outs)
    flat = x.reshape(n, c, -1)
    nn_ = np.arange(n).reshape((n,) + (1,) * (1 + 2 * d))
    cc = np.arange(c).reshape((1, c) + (1,) * (2 * d))
    windows = getitem_p(flat, index=(nn_, cc, pos), basic=False).reshape((n, c) + outs + (-1,))
    out = windows.amax(dim=-1)
    if unbatched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    arg = argmax_p(windows, axis=-1).unsqueeze(-1)  # the first maximum of each window
    index = gather_p(_wrap(pos).reshape((n, c) + outs + (-1,)), arg, axis=-1).squeeze(-1)
    return out, index.squeeze(0) if unbatched else index


def fractional_max_pool2d(input: Any, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Fractional max pooling over (N, C, H, W) or (C, H, W), as
    ``torch.nn.functional.fractional_max_pool2d``: windows of ``kernel_size`` at torch's
    pseudo-random starts, one sample in [0, 1) per plane and axis (``_random_samples``
    (N, C, 2), else drawn from the default generator).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.fractional_max_pool2d(dg.arange(16.0).reshape(1, 1, 4, 4), 2, output_size=2,
    ...                         _random_samples=dg.zeros((1, 1, 2))).numpy()
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    return _fractional_max_pool(2, "fractional_max_pool2d", input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input: Any, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Fractional max pooling over (N, C, D, H, W) or (C, D, H, W), as
    ``torch.nn.functional.fractional_max_pool3d`` (``_random_samples`` (N, C, 3)).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.fractional_max_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 2, output_size=1).numpy().ravel()
    array([7.])
    """
    return _fractional_max_pool(3, "fractional_max_pool3d", input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input: Any, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool2d(..., return_indices=True)``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> len(F.fractional_max_pool2d_with_indices(dg.ones((1, 1, 4, 4)), 2, output_size=2))
    2
    """
    return _fractional_max_pool(2, "fractional_max_pool2d", input, kernel_size, output_size,
                                output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Any, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool3d(..., return_indices=True)``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> len(F.fractional_max_pool3d_with_indices(dg.ones((1, 1, 2, 2, 2)), 1, output_size=2))
    2
    """
    return _fractional_max_pool(3, "fractional_max_pool3d", input, kernel_size, output_size,
                                output_ratio, True, _random_samples)


# ====================================================================== attention

