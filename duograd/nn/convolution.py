"""Convolution, pooling, resampling and sliding-block layers with torch.nn's parameter layout,
initialisation and ``state_dict`` keys: ``Conv1d``, ``Conv2d``, ``Conv3d``,
``ConvTranspose1d``, ``ConvTranspose2d``, ``MaxPool1d``, ``MaxPool2d``, ``MaxUnpool1d``,
``MaxUnpool2d``, ``AvgPool1d``, ``AvgPool2d``, the adaptive pools, ``Upsample``, ``Unfold``
and ``Fold``. Each is the matching function of ``duograd.conv`` with its arguments kept, so a
``torch.nn`` layer's ``state_dict()`` loads as it is (``load_state_dict`` or
``nn.utils.load_torch_state_dict``).

>>> import duograd as dg
>>> from duograd import nn
>>> conv = nn.Conv1d(2, 4, 3, padding="same", groups=2, rng=0)
>>> conv.weight.shape, conv(dg.ones((5, 2, 7))).shape
((4, 1, 3), (5, 4, 7))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import conv as C
from .._tensor import Tensor, tensor
from ..random import as_rng
from . import init
from .modules import Module, _input

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
           "MaxUnpool1d", "MaxUnpool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample", "Unfold", "Fold"]


def _positive(n: Any, name: str, layer: str) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{layer}: {name} must be a positive int, got {n!r}")
    return int(n)


def _empty(shape: Any, dtype: Any) -> Tensor:
    return tensor(np.empty(shape, dtype=np.float64 if dtype is None else dtype), requires_grad=True)


class _ConvNd(Module):
    _d = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None, rng: Any = None,
                 output_padding: Any = 0) -> None:
        layer, d = type(self).__name__, self._d
        self.in_channels = _positive(in_channels, "in_channels", layer)
        self.out_channels = _positive(out_channels, "out_channels", layer)
        self.groups = _positive(groups, "groups", layer)
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"{layer}: in_channels {in_channels} and out_channels {out_channels} must "
                             f"both be divisible by groups {groups}")
        self.kernel_size = C._ints(kernel_size, d, "kernel_size", layer, 1)
        self.stride = C._ints(stride, d, "stride", layer, 1)
        self.dilation = C._ints(dilation, d, "dilation", layer, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{layer}: padding must be 'same', 'valid', an int or a tuple, got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{layer}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = C._ints(padding, d, "padding", layer, 0)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{layer}: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             f"'circular', got {padding_mode!r}")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f"{layer}: only padding_mode='zeros' is supported")
        self.padding_mode = padding_mode
        self.output_padding = C._ints(output_padding, d, "output_padding", layer, 0)
        gen = as_rng(rng)
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = _empty(shape, dtype)
        self.bias = _empty((self.out_channels,), dtype) if bias else None
        self._reset(gen)

    def reset_parameters(self) -> None:
        """Draw the weight and bias again, as at construction, from the default generator."""
        self._reset(None)

    def _reset(self, gen: Any) -> None:
        # torch's kaiming_uniform_(weight, a=sqrt(5)): its bound gain * sqrt(3 / fan_in) is
        # 1 / sqrt(fan_in), written so (no rounding in the gain); the bias from the same range
        fan_in = init._calculate_fan_in_and_fan_out(self.weight)[0]
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(self.weight, -bound, bound, generator=gen)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator=gen)

    def _padded_input(self, x: Tensor) -> tuple[Tensor, Any]:
        """(input, padding for the conv): a non-zeros padding_mode pads first, with F.pad."""
        if self.padding_mode == "zeros":
            return x, self.padding
        pads = C._conv_padding(self.padding, self._d, self.kernel_size, self.dilation, self.stride,
                               type(self).__name__)
        flat = tuple(v for lo_hi in reversed(pads) for v in lo_hi)
        return C.pad(x, flat, mode=self.padding_mode), 0

    def forward(self, x: Any) -> Tensor:
        x = _input(x)
        if self._transposed:
            return C._conv_transpose(self._d, f"conv_transpose{self._d}d", x, self.weight, self.bias,
                                     self.stride, self.padding, self.output_padding, self.groups,
                                     self.dilation)
        x, padding = self._padded_input(x)
        return C._conv(self._d, f"conv{self._d}d", x, self.weight, self.bias, self.stride, padding,
                       self.dilation, self.groups)

    def _extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
                f"groups={self.groups}, bias={self.bias is not None}")


class Conv1d(_ConvNd):
    """1-D convolution, ``F.conv1d(x, weight, bias, stride, padding, dilation, groups)``, with
    torch's weight (out_channels, in_channels/groups, k), bias (out_channels,) and default
    initialisation U(-1/sqrt(fan_in), 1/sqrt(fan_in)); ``rng`` seeds it.

    >>> from duograd import nn
    >>> nn.Conv1d(3, 6, 5, stride=2, rng=0).weight.shape
    (6, 3, 5)
    """

    _d = 1


class Conv2d(_ConvNd):
    """2-D convolution of NCHW input, ``F.conv2d(x, weight, bias, stride, padding, dilation,
    groups)``, with ``weight`` of shape (out_channels, in_channels/groups, kh, kw) and ``bias``
    of shape (out_channels,) or None: PyTorch's layout, so a ``torch.nn.Conv2d``'s state dict
    loads as it is. ``padding`` may be "same" or "valid"; ``padding_mode`` "zeros",
    "reflect", "replicate" or "circular".

    Both are drawn uniformly from [-1/sqrt(fan_in), 1/sqrt(fan_in)] with fan_in =
    in_channels/groups * kh * kw, weight first, as PyTorch's default initialisation; ``rng``
    (a ``numpy.random.Generator`` or an int seed) makes them reproducible.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> conv = nn.Conv2d(1, 16, 3, padding=1, rng=0)
    >>> conv.weight.shape, conv.bias.shape
    ((16, 1, 3, 3), (16,))
    >>> conv(dg.ones((8, 1, 8, 8))).shape
    (8, 16, 8, 8)
    """

    _d = 2


class Conv3d(_ConvNd):
    """3-D convolution, ``F.conv3d``, weight (out_channels, in_channels/groups, kd, kh, kw).

    >>> from duograd import nn
    >>> nn.Conv3d(2, 4, 3, rng=0).weight.shape
    (4, 2, 3, 3, 3)
    """

    _d = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 rng: Any = None) -> None:
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, rng, output_padding)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution, ``F.conv_transpose1d``, with torch's weight
    (in_channels, out_channels/groups, k) and initialisation.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.ConvTranspose1d(2, 3, 3, stride=2, rng=0)(dg.ones((1, 2, 4))).shape
    (1, 3, 9)
    """

    _d = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution, ``F.conv_transpose2d``, with torch's weight
    (in_channels, out_channels/groups, kh, kw), bias (out_channels,) and initialisation.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> up = nn.ConvTranspose2d(4, 2, 2, stride=2, rng=0)
    >>> up.weight.shape, up(dg.ones((1, 4, 3, 3))).shape
    ((4, 2, 2, 2), (1, 2, 6, 6))
    """

    _d = 2


class _MaxPoolNd(Module):
    _d = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        layer, d = type(self).__name__, self._d
        self.kernel_size = C._ints(kernel_size, d, "kernel_size", layer, 1)
        self.stride = self.kernel_size if stride is None else C._ints(stride, d, "stride", layer, 1)
        self.padding = C._ints(padding, d, "padding", layer, 0)
        self.dilation = C._ints(dilation, d, "dilation", layer, 1)
        self.return_indices, self.ceil_mode = bool(return_indices), bool(ceil_mode)

    def forward(self, x: Any) -> Any:
        return C._max_pool(self._d, f"max_pool{self._d}d", _input(x), self.kernel_size, self.stride,
                           self.padding, self.dilation, self.ceil_mode, self.return_indices)

    def _extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """``F.max_pool1d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.MaxPool1d(2)(dg.ones((1, 3, 8))).shape
    (1, 3, 4)
    """

    _d = 1


class MaxPool2d(_MaxPoolNd):
    """``F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices)``
    as a module; ``stride`` defaults to ``kernel_size``. A window's gradient goes to its first
    maximum, as in torch.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.MaxPool2d(2)(dg.ones((8, 16, 8, 8))).shape
    (8, 16, 4, 4)
    """

    _d = 2


class _MaxUnpoolNd(Module):
    _d = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        layer, d = type(self).__name__, self._d
        self.kernel_size = C._ints(kernel_size, d, "kernel_size", layer, 1)
        self.stride = self.kernel_size if stride is None else C._ints(stride, d, "stride", layer, 1)
        self.padding = C._ints(padding, d, "padding", layer, 0)

    def forward(self, x: Any, indices: Any, output_size: Any = None) -> Tensor:
        return C._max_unpool(self._d, f"max_unpool{self._d}d", x, indices, self.kernel_size, self.stride,
                             self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """``F.max_unpool1d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> y, i = nn.MaxPool1d(2, return_indices=True)(dg.tensor([[[1.0, 3.0, 2.0, 5.0]]]))
    >>> nn.MaxUnpool1d(2)(y, i).numpy()
    array([[[0., 3., 0., 5.]]])
    """

    _d = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """``F.max_unpool2d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> y, i = nn.MaxPool2d(2, return_indices=True)(dg.ones((1, 1, 4, 4)))
    >>> nn.MaxUnpool2d(2)(y, i).shape
    (1, 1, 4, 4)
    """

    _d = 2


class AvgPool1d(Module):
    """``F.avg_pool1d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True)(dg.ones((1, 1, 6))).shape
    (1, 1, 4)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        self.kernel_size = C._ints(kernel_size, 1, "kernel_size", "AvgPool1d", 1)
        self.stride = self.kernel_size if stride is None else C._ints(stride, 1, "stride", "AvgPool1d", 1)
        self.padding = C._ints(padding, 1, "padding", "AvgPool1d", 0)
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)

    def forward(self, x: Any) -> Tensor:
        return C.avg_pool1d(_input(x), self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(Module):
    """``F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override)`` as a module; ``stride`` defaults to ``kernel_size``, and padding zeros
    count in the average unless ``count_include_pad=False`` (as in PyTorch).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AvgPool2d(2)(dg.ones((1, 1, 4, 4))).numpy()
    array([[[[1., 1.],
             [1., 1.]]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Any = None) -> None:
        self.kernel_size = C._ints(kernel_size, 2, "kernel_size", "AvgPool2d", 1)
        self.stride = self.kernel_size if stride is None else C._ints(stride, 2, "stride", "AvgPool2d", 1)
        self.padding = C._ints(padding, 2, "padding", "AvgPool2d", 0)
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, x: Any) -> Tensor:
        return C.avg_pool2d(_input(x), self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def _extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _Adaptive(Module):
    _fn = staticmethod(C.adaptive_avg_pool2d)

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        self.output_size, self.return_indices = output_size, bool(return_indices)

    def forward(self, x: Any) -> Any:
        return type(self)._fn(_input(x), self.output_size)


class AdaptiveAvgPool1d(_Adaptive):
    """``F.adaptive_avg_pool1d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AdaptiveAvgPool1d(3)(dg.ones((2, 4, 10))).shape
    (2, 4, 3)
    """

    _fn = staticmethod(C.adaptive_avg_pool1d)

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveAvgPool2d(_Adaptive):
    """``F.adaptive_avg_pool2d`` as a module (``AdaptiveAvgPool2d(1)`` is global average pooling).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AdaptiveAvgPool2d(1)(dg.ones((2, 4, 5, 5))).shape
    (2, 4, 1, 1)
    """

    _fn = staticmethod(C.adaptive_avg_pool2d)

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveMaxPool1d(_Adaptive):
    """``F.adaptive_max_pool1d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AdaptiveMaxPool1d(2)(dg.ones((1, 1, 5))).shape
    (1, 1, 2)
    """

    def forward(self, x: Any) -> Any:
        return C.adaptive_max_pool1d(_input(x), self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_Adaptive):
    """``F.adaptive_max_pool2d`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AdaptiveMaxPool2d((2, 3))(dg.ones((1, 1, 5, 7))).shape
    (1, 1, 2, 3)
    """

    def forward(self, x: Any) -> Any:
        return C.adaptive_max_pool2d(_input(x), self.output_size, self.return_indices)


class Upsample(Module):
    """``F.interpolate(x, size, scale_factor, mode, align_corners)`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Upsample(scale_factor=2, mode="bilinear")(dg.ones((1, 1, 2, 3))).shape
    (1, 1, 4, 6)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: Any = None, recompute_scale_factor: Any = None) -> None:
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: Any) -> Tensor:
        return C.interpolate(_input(x), self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)


class Unfold(Module):
    """``F.unfold`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Unfold(2, stride=2)(dg.ones((1, 3, 4, 4))).shape
    (1, 12, 4)
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, x: Any) -> Tensor:
        return C.unfold(_input(x), self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    """``F.fold`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Fold((4, 4), 2, stride=2)(dg.ones((1, 12, 4))).shape
    (1, 3, 4, 4)
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: Any) -> Tensor:
        return C.fold(_input(x), self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)
