"""The ``torch.nn`` module classes added for issue 28, each the function of
``nn.functional`` it is named after with torch's constructor arguments, parameters,
initialisation and state-dict keys: paddings, pixel and channel shuffles, upsampling,
``Unflatten``, ``Bilinear``, distances, the margin/triplet/Poisson/Gaussian/CTC losses,
instance/RMS/local-response normalisation, ``BatchNorm3d`` and ``SyncBatchNorm`` (one
process), the 3-D and Lp pools, shrinks and thresholds, the dropouts, ``EmbeddingBag``,
``ParameterList``/``ParameterDict`` and the lazy modules (``in_features`` /
``in_channels`` / ``num_features`` inferred at the first call).

>>> import duograd as dg
>>> from duograd import nn
>>> nn.ReflectionPad1d(2)(dg.tensor([[[1.0, 2.0, 3.0]]])).numpy()
array([[[3., 2., 1., 2., 3., 2., 1.]]])
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .. import conv as C
from .._tensor import Tensor, _as_tensor, tensor
from ..random import as_rng
from . import _functional_more as M
from .containers import Parameter, _Entries
from .modules import Linear, Module
from .normalization import _BatchNorm

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "Unflatten", "Bilinear", "PairwiseDistance", "Threshold",
    "Softmax2d", "Hardshrink", "Softshrink", "Tanhshrink", "RReLU", "AlphaDropout",
    "FeatureAlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "MarginRankingLoss",
    "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "MultiLabelMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm",
    "BatchNorm3d", "SyncBatchNorm", "LPPool1d", "LPPool2d", "LPPool3d", "AvgPool3d",
    "MaxPool3d", "MaxUnpool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "EmbeddingBag",
    "ParameterList", "ParameterDict", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "UninitializedParameter", "UninitializedBuffer", "ConvTranspose3d", "LazyConvTranspose3d",
    "NLLLoss2d", "CrossMapLRN2d", "Container", "FractionalMaxPool2d",
    "FractionalMaxPool3d", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions",
    "AdaptiveLogSoftmaxWithLoss",
]


def _repr_args(**kw: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in kw.items())


# ====================================================================== paddings

class _Pad(Module):
    _d = 1
    _mode = "constant"

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        n = 2 * self._d
        if isinstance(padding, (int, np.integer)):
            pads = (int(padding),) * n
        else:
            pads = tuple(int(p) for p in padding)
            if len(pads) != n:
                raise ValueError(f"{type(self).__name__}: padding must be an int or a {n}-tuple, "
                                 f"got {padding!r}")
        self.padding, self.value = pads, float(value)

    def forward(self, input: Any) -> Tensor:
        if self._mode == "constant":
            return C.pad(input, self.padding, "constant", self.value)
        return C.pad(input, self.padding, self._mode)

    def _extra_repr(self) -> str:
        if self._mode == "constant" and not type(self).__name__.startswith("Zero"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad_class(name: str, d: int, mode: str, zero: bool = False) -> type:
    def __init__(self: _Pad, padding: Any, *args: Any) -> None:
        _Pad.__init__(self, padding, *(() if zero else args))

    doc = (f"``F.pad(x, padding, mode={mode!r})`` over the last {d} axes, as ``torch.nn.{name}``"
           f" (``padding``: an int or a {2 * d}-tuple, left/right first).\n\n"
           "    >>> import duograd as dg\n    >>> from duograd import nn\n"
           f"    >>> nn.{name}(1{', 0.5' if mode == 'constant' and not zero else ''})"
           f"(dg.ones((1, 2) + (2,) * {d})).shape\n"
           f"    {(1, 2) + (4,) * d}\n")
    cls = type(name, (_Pad,), {"_d": d, "_mode": mode, "__doc__": doc, "__init__": __init__,
                               "__module__": __name__})
    return cls


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", True)
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", True)
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant", True)
ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant")
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate")
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate")
CircularPad1d = _pad_class("CircularPad1d", 1, "circular")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular")
CircularPad3d = _pad_class("CircularPad3d", 3, "circular")


# ====================================================================== function modules

def _fn_module(name: str, fn: Callable, params: Sequence[tuple[str, Any]], doc: str,
               inputs: int = 1) -> type:
    """A module whose constructor takes ``params`` (name, default; positional or keyword)
    and whose forward is ``fn(*inputs, **params)``."""
    keys = tuple(k for k, _ in params)
    defaults = dict(params)

    def __init__(self: Module, *args: Any, **kw: Any) -> None:
        if len(args) > len(keys):
            raise TypeError(f"{name}.__init__() takes at most {len(keys)} positional arguments")
        values = dict(defaults)
        values.update(zip(keys, args))
        for k, v in kw.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k in keys:
            if values[k] is _REQUIRED:
                raise TypeError(f"{name}.__init__() missing required argument: '{k}'")
        for k, v in values.items():
            setattr(self, k, v)

    def forward(self: Module, *xs: Any) -> Any:
        return fn(*xs, **{k: getattr(self, k) for k in keys if k not in _NOT_PASSED})

    def _extra_repr(self: Module) -> str:
        return ", ".join(f"{k}={getattr(self, k)!r}" for k in keys if k not in _NOT_PASSED)

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__doc__": doc,
                                  "_extra_repr": _extra_repr, "__module__": __name__})


_REQUIRED = object()
_NOT_PASSED = frozenset({"size_average", "reduce"})


def _doc(name: str, fn: str, example: str, result: str) -> str:
    return (f"``F.{fn}`` as a module, as ``torch.nn.{name}``.\n\n"
            "    >>> import duograd as dg\n    >>> from duograd import nn\n"
            f"    >>> {example}\n    {result}\n")


PixelShuffle = _fn_module("PixelShuffle", M.pixel_shuffle, [("upscale_factor", _REQUIRED)],
                          _doc("PixelShuffle", "pixel_shuffle",
                               "nn.PixelShuffle(2)(dg.ones((1, 8, 3, 3))).shape", "(1, 2, 6, 6)"))
PixelUnshuffle = _fn_module("PixelUnshuffle", M.pixel_unshuffle, [("downscale_factor", _REQUIRED)],
                            _doc("PixelUnshuffle", "pixel_unshuffle",
                                 "nn.PixelUnshuffle(2)(dg.ones((1, 2, 6, 6))).shape", "(1, 8, 3, 3)"))
ChannelShuffle = _fn_module("ChannelShuffle", M.channel_shuffle, [("groups", _REQUIRED)],
                            _doc("ChannelShuffle", "channel_shuffle",
                                 "nn.ChannelShuffle(2)(dg.arange(4.0).reshape(1, 4, 1)).numpy().ravel()",
                                 "array([0., 2., 1., 3.])"))
PairwiseDistance = _fn_module("PairwiseDistance", M.pairwise_distance,
                              [("p", 2.0), ("eps", 1e-6), ("keepdim", False)],
                              _doc("PairwiseDistance", "pairwise_distance",
                                   "nn.PairwiseDistance(eps=0)(dg.tensor([[3.0, 0]]), dg.tensor([[0.0, 4]])).numpy()",
                                   "array([5.])"), inputs=2)
Hardshrink = _fn_module("Hardshrink", M.hardshrink, [("lambd", 0.5)],
                        _doc("Hardshrink", "hardshrink", "nn.Hardshrink()(dg.tensor([0.2, 1.0])).numpy()",
                             "array([0., 1.])"))
Softshrink = _fn_module("Softshrink", M.softshrink, [("lambd", 0.5)],
                        _doc("Softshrink", "softshrink", "nn.Softshrink()(dg.tensor([0.2, 1.0])).numpy()",
                             "array([0. , 0.5])"))
Tanhshrink = _fn_module("Tanhshrink", M.tanhshrink, [],
                        _doc("Tanhshrink", "tanhshrink", "nn.Tanhshrink()(dg.tensor([0.0])).numpy()",
                             "array([0.])"))
LocalResponseNorm = _fn_module("LocalResponseNorm", M.local_response_norm,
                               [("size", _REQUIRED), ("alpha", 1e-4), ("beta", 0.75), ("k", 1.0)],
                               _doc("LocalResponseNorm", "local_response_norm",
                                    "nn.LocalResponseNorm(2)(dg.ones((1, 3, 2))).shape", "(1, 3, 2)"))


class Threshold(Module):
    """``F.threshold(x, threshold, value)`` as a module, as ``torch.nn.Threshold``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Threshold(0.5, -1.0)(dg.tensor([0.2, 1.0])).numpy()
    array([-1.,  1.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        self.threshold, self.value, self.inplace = threshold, value, bool(inplace)

    def forward(self, input: Any) -> Tensor:
        return M.threshold(input, self.threshold, self.value, self.inplace)

    def _extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """``F.rrelu(x, lower, upper, training=self.training)``, as ``torch.nn.RReLU``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.RReLU(0.25, 0.75).eval()(dg.tensor([-2.0])).numpy()
    array([-1.])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        self.lower, self.upper, self.inplace = lower, upper, bool(inplace)

    def forward(self, input: Any) -> Tensor:
        return M.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def _extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"


class Softmax2d(Module):
    """Softmax over the channels of a (N, C, H, W) or (C, H, W) input, as
    ``torch.nn.Softmax2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Softmax2d()(dg.zeros((1, 2, 1, 1))).numpy().ravel()
    array([0.5, 0.5])
    """

    def forward(self, input: Any) -> Tensor:
        x = _as_tensor(input)
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input with 3 or 4 dimensions, got {x.ndim}")
        return x.softmax(-3)


class _DropoutNd(Module):
    _fn: Any = None

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), bool(inplace)

    def forward(self, input: Any) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def _extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


def _dropout_class(name: str, fn: Callable, shape: tuple) -> type:
    doc = (f"``F.{fn.__name__}(x, p, training=self.training)`` as a module, as "
           f"``torch.nn.{name}`` (masks from the default generator).\n\n"
           "    >>> import duograd as dg\n    >>> from duograd import nn\n"
           f"    >>> nn.{name}(0.5).eval()(dg.ones({shape})).shape\n    {shape}\n")
    return type(name, (_DropoutNd,), {"_fn": staticmethod(fn), "__doc__": doc, "__module__": __name__})


Dropout1d = _dropout_class("Dropout1d", M.dropout1d, (2, 3, 4))
Dropout2d = _dropout_class("Dropout2d", M.dropout2d, (2, 3, 4, 4))
Dropout3d = _dropout_class("Dropout3d", M.dropout3d, (2, 3, 2, 2, 2))
AlphaDropout = _dropout_class("AlphaDropout", M.alpha_dropout, (2, 3))
FeatureAlphaDropout = _dropout_class("FeatureAlphaDropout", M.feature_alpha_dropout, (2, 3, 4))


class UpsamplingNearest2d(Module):
    """``F.interpolate(x, size, scale_factor, mode="nearest")`` of a 4-D input, as
    ``torch.nn.UpsamplingNearest2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.UpsamplingNearest2d(scale_factor=2)(dg.ones((1, 1, 2, 3))).shape
    (1, 1, 4, 6)
    """

    _mode, _align = "nearest", None

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        self.size, self.scale_factor = size, scale_factor

    def forward(self, input: Any) -> Tensor:
        return C.interpolate(input, self.size, self.scale_factor, self._mode, self._align)

    def _extra_repr(self) -> str:
        return (f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}") \
            + f", mode='{self._mode}'"


class UpsamplingBilinear2d(UpsamplingNearest2d):
    """``F.interpolate(x, size, scale_factor, mode="bilinear", align_corners=True)``, as
    ``torch.nn.UpsamplingBilinear2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.UpsamplingBilinear2d((1, 3))(dg.tensor([[[[0.0, 2.0]]]])).numpy().ravel()
    array([0., 1., 2.])
    """

    _mode, _align = "bilinear", True


class Unflatten(Module):
    """Dimension ``dim`` unflattened into ``unflattened_size``, as ``torch.nn.Unflatten``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Unflatten(1, (2, 5))(dg.ones((3, 10))).shape
    (3, 2, 5)
    """

    def __init__(self, dim: int | str, unflattened_size: Sequence[int]) -> None:
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten: named dimensions are not supported")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = int(dim), tuple(unflattened_size)

    def forward(self, input: Any) -> Tensor:
        return _as_tensor(input).unflatten(self.dim, self.unflattened_size)

    def _extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Bilinear(Module):
    """``F.bilinear(x1, x2, weight, bias)``, as ``torch.nn.Bilinear``: ``weight``
    (out_features, in1_features, in2_features) and ``bias`` (out_features,) drawn from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)), torch's initialisation.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> m = nn.Bilinear(3, 2, 4, rng=0)
    >>> m.weight.shape, m(dg.ones((5, 3)), dg.ones((5, 2))).shape
    ((4, 3, 2), (5, 4))
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None, rng: Any = None) -> None:
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        gen = as_rng(rng)
        bound = 1.0 / math.sqrt(self.in1_features) if self.in1_features else 0.0
        dt = np.float64 if dtype is None else np.dtype(str(dtype).rsplit(".", 1)[-1])
        self.weight = Parameter(gen.uniform(-bound, bound, (self.out_features, self.in1_features,
                                                            self.in2_features)).astype(dt))
        self.bias = Parameter(gen.uniform(-bound, bound, self.out_features).astype(dt)) if bias else None

    def forward(self, input1: Any, input2: Any) -> Tensor:
        return M.bilinear(input1, input2, self.weight, self.bias)

    def _extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# ====================================================================== losses

def _loss(name: str, fn: Callable, params: Sequence[tuple[str, Any]], example: str, result: str) -> type:
    return _fn_module(name, fn, params, _doc(name, fn.__name__, example, result))


_LEGACY = [("size_average", None), ("reduce", None), ("reduction", "mean")]


def _legacy_loss(name: str, fn: Callable, before: Sequence[tuple[str, Any]], example: str,
                 result: str, after: Sequence[tuple[str, Any]] = ()) -> type:
    """A loss module whose ``size_average``/``reduce`` are read into ``reduction``."""
    cls = _loss(name, fn, list(before) + _LEGACY + list(after), example, result)
    init = cls.__init__

    def __init__(self: Module, *args: Any, **kw: Any) -> None:
        init(self, *args, **kw)
        self.reduction = M._reduction(self.size_average, self.reduce, self.reduction, name)
        self.size_average = self.reduce = None
    cls.__init__ = __init__
    return cls


MarginRankingLoss = _legacy_loss("MarginRankingLoss", M.margin_ranking_loss, [("margin", 0.0)],
                                 "nn.MarginRankingLoss()(dg.tensor([1.0]), dg.tensor([2.0]), dg.tensor([1.0])).item()",
                                 "1.0")
HingeEmbeddingLoss = _legacy_loss("HingeEmbeddingLoss", M.hinge_embedding_loss, [("margin", 1.0)],
                                  "nn.HingeEmbeddingLoss()(dg.tensor([0.3]), dg.tensor([-1.0])).item()",
                                  "0.7")
SoftMarginLoss = _legacy_loss("SoftMarginLoss", M.soft_margin_loss, [],
                              "round(nn.SoftMarginLoss()(dg.tensor([0.0]), dg.tensor([1.0])).item(), 4)",
                              "0.6931")
MultiLabelSoftMarginLoss = _legacy_loss(
    "MultiLabelSoftMarginLoss", M.multilabel_soft_margin_loss, [("weight", None)],
    "round(nn.MultiLabelSoftMarginLoss()(dg.zeros((1, 2)), dg.tensor([[1.0, 0.0]])).item(), 4)", "0.6931")
MultiMarginLoss = _legacy_loss("MultiMarginLoss", M.multi_margin_loss,
                               [("p", 1), ("margin", 1.0), ("weight", None)],
                               "round(nn.MultiMarginLoss()(dg.tensor([[0.1, 0.2, 0.4, 0.8]]), dg.tensor([3])).item(), 4)",
                               "0.325")
MultiLabelMarginLoss = _legacy_loss(
    "MultiLabelMarginLoss", M.multilabel_margin_loss, [],
    "round(nn.MultiLabelMarginLoss()(dg.tensor([[0.1, 0.2, 0.4, 0.8]]), dg.tensor([[3, 0, -1, 1]])).item(), 4)",
    "0.85")
CosineEmbeddingLoss = _legacy_loss(
    "CosineEmbeddingLoss", M.cosine_embedding_loss, [("margin", 0.0)],
    "round(nn.CosineEmbeddingLoss()(dg.tensor([[1.0, 0.0]]), dg.tensor([[1.0, 1.0]]), dg.tensor([1])).item(), 4)",
    "0.2929")
TripletMarginLoss = _legacy_loss(
    "TripletMarginLoss", M.triplet_margin_loss, [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False)],
    "round(nn.TripletMarginLoss(margin=3.0, eps=0)(dg.zeros((1, 2)), dg.tensor([[0.0, 1]]), dg.tensor([[0.0, 3]])).item(), 4)",
    "1.0")
PoissonNLLLoss = _fn_module(
    "PoissonNLLLoss", M.poisson_nll_loss,
    [("log_input", True), ("full", False), ("size_average", None), ("eps", 1e-8), ("reduce", None),
     ("reduction", "mean")],
    _doc("PoissonNLLLoss", "poisson_nll_loss",
         "nn.PoissonNLLLoss()(dg.tensor([0.0]), dg.tensor([2.0])).item()", "1.0"))
_poisson_init = PoissonNLLLoss.__init__


def _poisson_init_legacy(self: Module, *args: Any, **kw: Any) -> None:
    _poisson_init(self, *args, **kw)
    self.reduction = M._reduction(self.size_average, self.reduce, self.reduction, "PoissonNLLLoss")
    self.size_average = self.reduce = None


PoissonNLLLoss.__init__ = _poisson_init_legacy


class TripletMarginWithDistanceLoss(Module):
    """``F.triplet_margin_with_distance_loss`` as a module, as
    ``torch.nn.TripletMarginWithDistanceLoss``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.TripletMarginWithDistanceLoss(margin=3.0)(dg.zeros((1, 1)), dg.ones((1, 1)), 3 * dg.ones((1, 1))).item() < 1.01
    True
    """

    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        self.distance_function, self.margin, self.swap = distance_function, margin, swap
        self.reduction = reduction

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Tensor:
        return M.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap,
                                                   reduction=self.reduction)


class GaussianNLLLoss(Module):
    """``F.gaussian_nll_loss(input, target, var, full, eps, reduction)`` as a module, as
    ``torch.nn.GaussianNLLLoss``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> round(nn.GaussianNLLLoss()(dg.tensor([1.0]), dg.tensor([1.0]), dg.tensor([1.0])).item(), 6)
    0.0
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        self.full, self.eps, self.reduction = bool(full), float(eps), reduction

    def forward(self, input: Any, target: Any, var: Any) -> Tensor:
        return M.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class CTCLoss(Module):
    """``F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
    zero_infinity)`` as a module, as ``torch.nn.CTCLoss``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> lp = dg.tensor(np.log(np.full((2, 1, 2), 0.5)))
    >>> round(nn.CTCLoss(reduction="sum")(lp, dg.tensor([[1]]), [2], [1]).item(), 6)
    0.287682
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        self.blank, self.reduction, self.zero_infinity = int(blank), reduction, bool(zero_infinity)

    def forward(self, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any) -> Tensor:
        return M.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


# ====================================================================== normalisation

def _affine_params(n: int, affine: bool, dtype: Any = None) -> tuple[Any, Any]:
    if not affine:
        return None, None
    return Parameter(np.ones(n)), Parameter(np.zeros(n))


class _InstanceNorm(Module):
    _d = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        self.weight, self.bias = _affine_params(self.num_features, self.affine)
        if self.track_running_stats:
            self.register_buffer("running_mean", tensor(np.zeros(self.num_features)))
            self.register_buffer("running_var", tensor(np.ones(self.num_features)))
            self.register_buffer("num_batches_tracked", tensor(np.array(0, dtype=np.int64)))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, input: Any) -> Tensor:
        x = _as_tensor(input)
        d = self._d
        if x.ndim not in (d + 1, d + 2):
            raise ValueError(f"{type(self).__name__}: expected {d + 1}D or {d + 2}D input (got "
                             f"{x.ndim}D input)")
        unbatched = x.ndim == d + 1
        if unbatched:
            x = x.unsqueeze(0)
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"{type(self).__name__}: expected input's size at dim=1 to match "
                             f"num_features ({self.num_features}), but got: {x.shape[1]}.")
        use_stats = self.training or not self.track_running_stats
        out = M.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              use_stats, 0.1 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def _extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """``F.instance_norm`` of (N, C, L) or (C, L), as ``torch.nn.InstanceNorm1d``
    (``affine=False`` and ``track_running_stats=False`` by default, as torch).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.InstanceNorm1d(1)(dg.tensor([[[1.0, 3.0]]])).numpy().round(4)
    array([[[-1.,  1.]]])
    """

    _d = 1


class InstanceNorm2d(_InstanceNorm):
    """``F.instance_norm`` of (N, C, H, W) or (C, H, W), as ``torch.nn.InstanceNorm2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.InstanceNorm2d(3, affine=True)(dg.randn(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    """

    _d = 2


class InstanceNorm3d(_InstanceNorm):
    """``F.instance_norm`` of (N, C, D, H, W) or (C, D, H, W), as ``torch.nn.InstanceNorm3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.InstanceNorm3d(2)(dg.randn(1, 2, 2, 2, 2)).shape
    (1, 2, 2, 2, 2)
    """

    _d = 3


class RMSNorm(Module):
    """``F.rms_norm`` with ``weight`` (ones) of ``normalized_shape``, as ``torch.nn.RMSNorm``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.RMSNorm(2, eps=0.0)(dg.tensor([[3.0, 4.0]])).detach().numpy().round(4)
    array([[0.8485, 1.1314]])
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) \
            else tuple(int(v) for v in normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = Parameter(np.ones(shape)) if self.elementwise_affine else None

    def forward(self, input: Any) -> Tensor:
        return M.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def _extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W), as ``torch.nn.BatchNorm3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.BatchNorm3d(2)(dg.randn(3, 2, 2, 2, 2)).shape
    (3, 2, 2, 2, 2)
    """

    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """``torch.nn.SyncBatchNorm`` in one process: batch normalisation of (N, C, ...) (the
    statistics are the whole batch's, as with one process); ``process_group`` is accepted.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.SyncBatchNorm(2)(dg.randn(3, 2, 4)).shape
    (3, 2, 4)
    """

    _dims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self.process_group = process_group

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm holding its state."""
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            out.__dict__.update({k: v for k, v in module.__dict__.items() if k != "process_group"})
            return out
        for name, child in list(module.named_children()):
            if "." not in name:
                setattr(module, name, cls.convert_sync_batchnorm(child, process_group))
        return module


# ====================================================================== pooling

class _LPPool(Module):
    _fn: Any = None

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = bool(ceil_mode)

    def forward(self, input: Any) -> Tensor:
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def _extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """``F.lp_pool1d`` as a module, as ``torch.nn.LPPool1d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.LPPool1d(2, 2)(dg.tensor([[[3.0, 4.0]]])).numpy()
    array([[[5.]]])
    """

    _fn = staticmethod(M.lp_pool1d)


class LPPool2d(_LPPool):
    """``F.lp_pool2d`` as a module, as ``torch.nn.LPPool2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.LPPool2d(1, 2)(dg.ones((1, 1, 2, 2))).numpy().ravel()
    array([4.])
    """

    _fn = staticmethod(M.lp_pool2d)


class LPPool3d(_LPPool):
    """``F.lp_pool3d`` as a module, as ``torch.nn.LPPool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.LPPool3d(1, 2)(dg.ones((1, 1, 2, 2, 2))).numpy().ravel()
    array([8.])
    """

    _fn = staticmethod(M.lp_pool3d)


class AvgPool3d(Module):
    """``F.avg_pool3d`` as a module, as ``torch.nn.AvgPool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AvgPool3d(2)(dg.ones((1, 1, 4, 4, 4))).shape
    (1, 1, 2, 2, 2)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Any = None) -> None:
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input: Any) -> Tensor:
        return M.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def _extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool3d(Module):
    """``F.max_pool3d`` as a module, as ``torch.nn.MaxPool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.MaxPool3d(2)(dg.ones((1, 1, 4, 4, 4))).shape
    (1, 1, 2, 2, 2)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, bool(return_indices), bool(ceil_mode)

    def forward(self, input: Any) -> Any:
        return M.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def _extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxUnpool3d(Module):
    """``F.max_unpool3d`` as a module, as ``torch.nn.MaxUnpool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> y, i = nn.MaxPool3d(2, return_indices=True)(dg.ones((1, 1, 2, 2, 2)))
    >>> nn.MaxUnpool3d(2)(y, i).shape
    (1, 1, 2, 2, 2)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Tensor:
        return M.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class AdaptiveAvgPool3d(Module):
    """``F.adaptive_avg_pool3d`` as a module, as ``torch.nn.AdaptiveAvgPool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AdaptiveAvgPool3d(1)(dg.ones((2, 3, 4, 4, 4))).shape
    (2, 3, 1, 1, 1)
    """

    def __init__(self, output_size: Any) -> None:
        self.output_size = output_size

    def forward(self, input: Any) -> Tensor:
        return M.adaptive_avg_pool3d(input, self.output_size)

    def _extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    """``F.adaptive_max_pool3d`` as a module, as ``torch.nn.AdaptiveMaxPool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AdaptiveMaxPool3d(1)(dg.ones((2, 3, 4, 4, 4))).shape
    (2, 3, 1, 1, 1)
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        self.output_size, self.return_indices = output_size, bool(return_indices)

    def forward(self, input: Any) -> Any:
        return M.adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def _extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _FractionalMaxPool(Module):
    _fn: Any = None

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,)
            if not all(0 < r < 1 for r in ratios):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices, self._random_samples = bool(return_indices), _random_samples

    def forward(self, input: Any) -> Any:
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """``F.fractional_max_pool2d`` as a module, as ``torch.nn.FractionalMaxPool2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.FractionalMaxPool2d(2, output_size=3)(dg.ones((1, 2, 5, 5))).shape
    (1, 2, 3, 3)
    """

    _fn = staticmethod(M.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPool):
    """``F.fractional_max_pool3d`` as a module, as ``torch.nn.FractionalMaxPool3d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.FractionalMaxPool3d(2, output_ratio=0.5)(dg.ones((1, 2, 4, 4, 4))).shape
    (1, 2, 2, 2, 2)
    """

    _fn = staticmethod(M.fractional_max_pool3d)


class LinearCrossEntropyOptions:
    """torch's options for a chunked ``linear_cross_entropy`` (a memory saving): accepted
    and kept; duograd computes the logits whole, with the same result.

    >>> from duograd import nn
    >>> nn.LinearCrossEntropyOptions(batch_chunk_size=8).batch_chunk_size
    8
    """

    def __init__(self, allow_retain_graph: bool = False, batch_chunk_size: int | None = None,
                 chunking_method: str | None = "auto", acc_policy: str = "auto",
                 acc_dtype: Any = None) -> None:
        self.allow_retain_graph, self.batch_chunk_size = allow_retain_graph, batch_chunk_size
        self.chunking_method, self.acc_policy, self.acc_dtype = chunking_method, acc_policy, acc_dtype


class LinearCrossEntropyLoss(Module):
    """A ``Linear(in_features, num_classes, bias)`` (as ``self.linear``) followed by the
    cross-entropy, as ``torch.nn.LinearCrossEntropyLoss`` (``out_features`` () only).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> m = nn.LinearCrossEntropyLoss(4, 3)
    >>> list(m.state_dict()), m(dg.ones((2, 4)), dg.tensor([0, 2])).shape
    (['linear.weight'], ())
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device: Any = None, dtype: Any = None, reduction: str = "mean",
                 weight: Any = None, ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: Any = None, rng: Any = None) -> None:
        if tuple(out_features):
            raise NotImplementedError("LinearCrossEntropyLoss: out_features other than () is not supported")
        self.in_features, self.num_classes, self.out_features = int(in_features), int(num_classes), ()
        self.reduction, self.ignore_index, self.label_smoothing = reduction, ignore_index, label_smoothing
        self.options = options
        if weight is not None:
            self.register_buffer("weight", _as_tensor(weight))
        else:
            self.weight = None
        self.linear = Linear(self.in_features, self.num_classes, bias, rng=rng)

    def forward(self, input: Any, target: Any) -> Tensor:
        return M.linear_cross_entropy(input, self.linear.weight, target, linear_bias=self.linear.bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)


# ====================================================================== embedding bags

class EmbeddingBag(Module):
    """``F.embedding_bag`` with a ``weight`` (num_embeddings, embedding_dim) drawn from
    N(0, 1) (its ``padding_idx`` row zeroed), as ``torch.nn.EmbeddingBag``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> bag = nn.EmbeddingBag(10, 3, mode="sum", rng=0)
    >>> bag(dg.tensor([1, 2, 4, 5]), dg.tensor([0, 2])).shape
    (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Any = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None,
                 rng: Any = None) -> None:
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("EmbeddingBag: max_norm, scale_grad_by_freq and sparse are "
                                      "not supported")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.mode, self.include_last_offset = mode, bool(include_last_offset)
        if padding_idx is not None:
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= self.num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            w = as_rng(rng).standard_normal((self.num_embeddings, self.embedding_dim))
            if padding_idx is not None:
                w[padding_idx] = 0.0
        else:
            w = np.array(_as_tensor(_weight)._data)
        self.weight = Parameter(w)

    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Any = None) -> Tensor:
        return M.embedding_bag(input, self.weight, offsets, mode=self.mode,
                               per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset,
                               padding_idx=self.padding_idx)

    def _extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"


class CrossMapLRN2d(Module):
    """Local response normalisation across the channels of a 4-D input, as
    ``torch.nn.CrossMapLRN2d``: ``x / (k + alpha / size * s) ** beta`` with ``s`` the sum of
    squares over torch's running window of channels (its legacy recurrence, whose window
    keeps channel 0 once it has passed it: reproduced as it is).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.CrossMapLRN2d(3)(dg.ones((1, 4, 2, 2))).shape
    (1, 4, 2, 2)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        self.size, self.alpha, self.beta, self.k = int(size), alpha, beta, k

    def _window(self, c: int) -> np.ndarray:
        """(C, C) membership: row c lists the channels torch's recurrence sums for c."""
        pre = int((self.size - 1) / 2 + 1)
        w = np.zeros((c, c))
        w[0, :min(pre, c)] = 1
        for ch in range(1, c):
            w[ch] = w[ch - 1]
            if ch < c - pre + 1:
                w[ch, ch + pre - 1] += 1
            if ch > pre:
                w[ch, ch - pre] -= 1
        return w

    def forward(self, input: Any) -> Tensor:
        x = _as_tensor(input)
        if x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {x.ndim}D instead.")
        return _cross_map_lrn(self)(x)

    def _extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _mix(t: Tensor, w: np.ndarray) -> Tensor:
    """Channel c of the result is the sum of ``t``'s channels j with ``w[c, j]``."""
    m = tensor(w.astype(t.dtype))
    return (t.permute(0, 2, 3, 1) @ m.T).permute(0, 3, 1, 2)


def _cross_map_lrn(layer: "CrossMapLRN2d") -> Callable[[Tensor], Tensor]:
    """torch's CrossMapLRN2d as an autograd Function: its forward, and its own backward
    (whose channel window differs from the forward's, as torch's does)."""
    from ..autograd import Function

    size, alpha, beta, k = layer.size, layer.alpha, layer.beta, layer.k

    class _Fn(Function):
        @staticmethod
        def forward(ctx: Any, x: Tensor) -> Tensor:
            c = x.shape[1]
            scale = _mix(x * x, layer._window(c)) * (alpha / size) + k
            out = x * scale ** (-beta)
            ctx.save_for_backward(x, out, scale)
            return out

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            x, out, scale = ctx.saved_tensors
            c = x.shape[1]
            ipp = int(size - (size - 1) / 2)
            j = np.arange(c)
            w = ((j[None, :] >= j[:, None] - ipp) & (j[None, :] <= j[:, None] + size - 1 - ipp))
            ratio = _mix(g * out / scale, w.astype(np.float64))
            return scale ** (-beta) * g - (2 * alpha * beta / size) * x * ratio

    return _Fn.apply


def _nll2d() -> type:
    from .modules import NLLLoss

    class NLLLoss2d(NLLLoss):
        """``NLLLoss`` (torch's deprecated name for its (N, C, H, W) use), as
        ``torch.nn.NLLLoss2d``.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> nn.NLLLoss2d()(dg.zeros((1, 2, 1, 1)), dg.tensor([[[1]]])).item()
        0.0
        """
    NLLLoss2d.__module__ = __name__
    return NLLLoss2d


NLLLoss2d = _nll2d()


class Container(Module):
    """torch's deprecated ``nn.Container``: a module holding the modules given as keyword
    arguments.

    >>> from duograd import nn
    >>> [n for n, _ in nn.Container(a=nn.ReLU(), b=nn.Tanh()).named_children()]
    ['a', 'b']
    """

    def __init__(self, **kwargs: Module) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)


class ParameterList(Module):
    """A list of parameters, named ``0``, ``1``, ... as torch names them (a Tensor added is
    made a ``Parameter``).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> ps = nn.ParameterList([nn.Parameter(dg.zeros(2)), dg.ones(3)])
    >>> list(ps.state_dict()), len(ps), ps[1].requires_grad
    (['0', '1'], 2, True)
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        self._list: list[Any] = []
        if values is not None:
            self.extend(values)

    def _members(self) -> Iterator[tuple[str, Any]]:
        return ((str(i), v) for i, v in enumerate(list(self._list)))

    @staticmethod
    def _param(v: Any) -> Any:
        return v if isinstance(v, Parameter) or not isinstance(v, Tensor) else Parameter(v._data)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return ParameterList(self._list[i])
        return self._list[i]

    def __setitem__(self, i: int, value: Any) -> None:
        self._list[i] = self._param(value)

    def __len__(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._list)

    def append(self, value: Any) -> "ParameterList":
        self._list.append(self._param(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def __repr__(self) -> str:
        lines = [f"  ({i}): Parameter containing: [{type(p).__name__} of size {'x'.join(map(str, p.shape))}]"
                 for i, p in enumerate(self._list)]
        return "ParameterList(\n" + "\n".join(lines) + "\n)" if lines else "ParameterList()"


class ParameterDict(_Entries):
    """An ordered dict of parameters, named by their keys (a Tensor added is made a
    ``Parameter``), as ``torch.nn.ParameterDict``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> pd = nn.ParameterDict({"scale": dg.ones(2)})
    >>> pd["shift"] = dg.zeros(2)
    >>> list(pd.state_dict()), pd.scale.shape
    (['scale', 'shift'], (2,))
    """
    def __init__(self, parameters: Any = None) -> None:
        super().__init__(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        self._dict[key] = ParameterList._param(value)

    def get(self, key: str, default: Any = None) -> Any:
        return self._dict.get(key, default)


# ====================================================================== lazy modules

class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (a lazy module's, before its first call):
    it holds no values; the first call gives it its shape and initial values in place, so
    an optimizer built before holds the initialised parameter.

    >>> from duograd import nn
    >>> nn.LazyLinear(3).weight.shape
    (0,)
    """

    __slots__ = ()


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (a lazy norm's running statistics).

    >>> from duograd import nn
    >>> isinstance(nn.UninitializedBuffer(), nn.UninitializedBuffer)
    True
    """

    __slots__ = ()

    def __new__(cls, requires_grad: bool = False) -> "UninitializedBuffer":
        t = Tensor.__new__(Tensor, np.zeros(0))
        t.__class__ = cls
        return t


def _materialize(placeholder: Any, value: Tensor | None) -> Any:
    """The placeholder now holds ``value``'s array (same object: optimizers keep it)."""
    if value is None:
        return None
    if placeholder is None:
        return value
    placeholder._data = value._data
    placeholder.__class__ = Parameter if isinstance(placeholder, Parameter) else Tensor
    return placeholder


class _Lazy(Module):
    """A lazy module: ``_build(input)`` returns the real module, whose state this one takes
    (its class too: after the first call it *is* that module, as torch's ``cls_to_become``)."""

    def _build(self, x: Tensor) -> Module:  # pragma: no cover - abstract
        raise NotImplementedError

    def has_uninitialized_params(self) -> bool:
        """True until the first call."""
        return True

    def forward(self, input: Any, *args: Any, **kw: Any) -> Any:
        x = _as_tensor(input)
        real = self._build(x)
        placeholders = {k: v for k, v in vars(self).items() if isinstance(v, (UninitializedParameter,
                                                                              UninitializedBuffer))}
        training = self.training
        buffer_names = dict(real.__dict__.get("_buffer_names", {}))
        self.__dict__.clear()
        for k, v in vars(real).items():
            self.__dict__[k] = _materialize(placeholders.get(k), v) if isinstance(v, Tensor) else v
        self.__dict__["_buffer_names"] = buffer_names
        self.training = training
        self.__class__ = type(real)
        return self.forward(x, *args, **kw)


class LazyLinear(_Lazy):
    """``Linear`` whose ``in_features`` is the last dimension of the first input, as
    ``torch.nn.LazyLinear``; it becomes a ``Linear`` at that call.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> m = nn.LazyLinear(2, rng=0)
    >>> m(dg.ones((4, 5))).shape, type(m).__name__, m.weight.shape
    ((4, 2), 'Linear', (2, 5))
    """

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 rng: Any = None) -> None:
        self.out_features, self._bias, self._rng = int(out_features), bool(bias), rng
        self.weight = UninitializedParameter()
        self.bias = UninitializedParameter() if bias else None

    def _build(self, x: Tensor) -> Module:
        return Linear(x.shape[-1], self.out_features, self._bias, rng=self._rng)


def _lazy_conv(name: str, real: str, d: int, transposed: bool) -> type:
    def __init__(self: _Lazy, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 *args: Any, **kw: Any) -> None:
        self._args = (out_channels, kernel_size, stride, padding) + args
        self._kw = kw
        self.weight = UninitializedParameter()
        self.bias = UninitializedParameter() if kw.get("bias", True) else None

    def _build(self: _Lazy, x: Tensor) -> Module:
        from . import convolution
        cin = x.shape[1] if x.ndim == d + 2 else x.shape[0]
        return getattr(convolution, real)(cin, *self._args, **self._kw)

    doc = (f"``{real}`` whose ``in_channels`` is read from the first input, as "
           f"``torch.nn.{name}``; it becomes a ``{real}`` at that call.\n\n"
           "    >>> import duograd as dg\n    >>> from duograd import nn\n"
           f"    >>> m = nn.{name}(4, 1, rng=0)\n"
           f"    >>> m(dg.ones((1, 3) + (5,) * {d})).shape[1], type(m).__name__\n"
           f"    (4, '{real}')\n")
    return type(name, (_Lazy,), {"__init__": __init__, "_build": _build, "__doc__": doc,
                                 "__module__": __name__})


LazyConv1d = _lazy_conv("LazyConv1d", "Conv1d", 1, False)
LazyConv2d = _lazy_conv("LazyConv2d", "Conv2d", 2, False)
LazyConv3d = _lazy_conv("LazyConv3d", "Conv3d", 3, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", "ConvTranspose1d", 1, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", "ConvTranspose2d", 2, True)


def _conv_transpose3d() -> type:
    from .convolution import _ConvTransposeNd

    class ConvTranspose3d(_ConvTransposeNd):
        """Transposed 3-D convolution, ``F.conv_transpose3d``, with torch's weight
        (in_channels, out_channels/groups, kd, kh, kw) and initialisation, as
        ``torch.nn.ConvTranspose3d``.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> nn.ConvTranspose3d(2, 3, 2, stride=2, rng=0)(dg.ones((1, 2, 2, 2, 2))).shape
        (1, 3, 4, 4, 4)
        """

        _d = 3
    ConvTranspose3d.__module__ = __name__
    return ConvTranspose3d


ConvTranspose3d = _conv_transpose3d()


def _lazy_transpose3d() -> type:
    cls = _lazy_conv("LazyConvTranspose3d", "ConvTranspose3d", 3, True)

    def _build(self: _Lazy, x: Tensor) -> Module:
        cin = x.shape[1] if x.ndim == 5 else x.shape[0]
        return ConvTranspose3d(cin, *self._args, **self._kw)
    cls._build = _build
    return cls


LazyConvTranspose3d = _lazy_transpose3d()


def _lazy_norm(name: str, real: Callable[[], type], instance: bool) -> type:
    def __init__(self: _Lazy, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        self._opts = dict(eps=eps, momentum=momentum, affine=affine,
                          track_running_stats=track_running_stats, device=device, dtype=dtype, bias=bias)
        self.weight = UninitializedParameter() if affine else None
        self.bias = UninitializedParameter() if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer())
            self.register_buffer("running_var", UninitializedBuffer())

    def _build(self: _Lazy, x: Tensor) -> Module:
        cls = real()
        n = x.shape[1] if (instance and x.ndim == cls._d + 2) or not instance else x.shape[0]
        return cls(n, **self._opts)

    doc = (f"A normalisation whose ``num_features`` is read from the first input, as "
           f"``torch.nn.{name}``.\n\n"
           "    >>> import duograd as dg\n    >>> from duograd import nn\n"
           f"    >>> m = nn.{name}()\n"
           f"    >>> m(dg.randn(2, 3, 4, 4, 4)[(slice(None), slice(None)) + (0,) * (3 - {name[-2]})]).shape[1]\n"
           "    3\n")
    return type(name, (_Lazy,), {"__init__": __init__, "_build": _build, "__doc__": doc,
                                 "__module__": __name__})


def _norm_class(name: str) -> Callable[[], type]:
    def get() -> type:
        from . import normalization
        return getattr(normalization, name, None) or globals()[name]
    return get


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", _norm_class("BatchNorm1d"), False)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", _norm_class("BatchNorm2d"), False)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", _norm_class("BatchNorm3d"), False)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", _norm_class("InstanceNorm1d"), True)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", _norm_class("InstanceNorm2d"), True)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", _norm_class("InstanceNorm3d"), True)



# ====================================================================== adaptive softmax

class _ASMoutput(tuple):
    """``(output, loss)``, with those names, as torch's ``_ASMoutput``."""

    def __new__(cls, output: Tensor, loss: Tensor) -> "_ASMoutput":
        return tuple.__new__(cls, (output, loss))

    output = property(lambda self: self[0])
    loss = property(lambda self: self[1])


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax of Grave et al., as ``torch.nn.AdaptiveLogSoftmaxWithLoss``:
    a ``head`` Linear over the shortlist (the classes below ``cutoffs[0]``) and one entry
    per cluster, and per cluster a ``tail`` of two bias-free Linears (in_features to
    ``in_features // div_value ** (i + 1)`` to the cluster's size). ``forward(input,
    target)`` gives ``(output, loss)``: each target's log-probability and the mean of their
    negatives; ``log_prob(input)`` the full (N, n_classes) log-probabilities; ``predict``
    their argmax.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7], rng=0)
    >>> out, loss = asm(dg.randn(5, 8), dg.tensor([0, 3, 5, 9, 6]))
    >>> out.shape, asm.log_prob(dg.randn(5, 8)).shape
    ((5,), (5, 10))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None, rng: Any = None) -> None:
        from .containers import ModuleList
        from .modules import Sequential
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1) \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and n_classes-1")
        gen = as_rng(rng)
        self.in_features, self.n_classes = int(in_features), int(n_classes)
        self.cutoffs = cutoffs + [self.n_classes]
        self.div_value, self.head_bias = float(div_value), bool(head_bias)
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, rng=gen)
        tails = []
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append(Sequential(Linear(self.in_features, hsz, bias=False, rng=gen),
                                    Linear(hsz, osz, bias=False, rng=gen)))
        self.tail = ModuleList(tails)

    def forward(self, input: Any, target: Any) -> _ASMoutput:
        x = _as_tensor(input)
        t = np.asarray(target._data if isinstance(target, Tensor) else target).astype(np.int64)
        unbatched = x.ndim == 1
        if unbatched:
            if t.ndim != 0:
                raise RuntimeError("1D target tensor expects 0D input tensors, but found inputs "
                                   f"with sizes {list(x.shape)} and {list(t.shape)}")
            x, t = x.unsqueeze(0), t.reshape(1)
        elif x.ndim != 2 or t.ndim != 1 or x.shape[0] != t.shape[0]:
            raise RuntimeError(f"Input and target should have the same size in the batch "
                               f"dimension, got {tuple(x.shape)} and {tuple(t.shape)}")
        n = t.shape[0]
        bounds = [0] + self.cutoffs
        if n and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values "
                               f"in range [{t.min()}, {t.max()}] were found. ")
        gather = t.copy()
        output = tensor(np.zeros(n, x.dtype))
        for i in range(1, len(bounds) - 1):
            rows = np.nonzero((t >= bounds[i]) & (t < bounds[i + 1]))[0]
            if rows.size == 0:
                continue
            gather[rows] = self.shortlist_size + i - 1
            logp = self.tail[i - 1](x[rows]).log_softmax(1)
            local = logp[np.arange(rows.size), t[rows] - bounds[i]]
            output = output.index_add(0, tensor(rows), local)
        head = self.head(x).log_softmax(1)
        output = output + head[np.arange(n), gather]
        loss = (-output).mean()
        return _ASMoutput(output.squeeze(0) if unbatched else output, loss)

    def log_prob(self, input: Any) -> Tensor:
        """The (N, n_classes) log-probabilities of every class."""
        x = _as_tensor(input)
        head = self.head(x).log_softmax(-1)
        parts = [head[..., :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = self.tail[i](x).log_softmax(-1)
            parts.append(cluster + head[..., self.shortlist_size + i:self.shortlist_size + i + 1])
        import duograd
        return duograd.cat(parts, dim=-1)

    def predict(self, input: Any) -> Tensor:
        """The most probable class of each row."""
        return self.log_prob(input).argmax(dim=-1)

    def _extra_repr(self) -> str:
        return ""
