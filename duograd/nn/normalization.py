"""Normalisation layers with torch's parameters, buffers, initialisation and state-dict
keys: ``LayerNorm``, ``BatchNorm1d``, ``BatchNorm2d``, ``GroupNorm``, and their functions
``layer_norm``, ``batch_norm``, ``group_norm`` (also in ``nn.functional``).

Each normalisation is composed from primitives (a mean, a mean of squared deviations, a
reciprocal square root), so its gradient, and its second derivative, is the chain rule;
the tests check both against torch. Running statistics are plain arrays updated in place
(without history), as torch updates its buffers.

>>> import duograd as dg
>>> from duograd import nn
>>> ln = nn.LayerNorm(2)
>>> ln(dg.tensor([[1.0, 3.0]])).detach().numpy().round(4)
array([[-1.,  1.]])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._tensor import Tensor, _as_tensor, tensor
from ..autograd import no_grad as _no_grad
from .functional import batch_norm, group_norm, layer_norm
from .modules import Module
from . import init

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "layer_norm", "batch_norm",
           "group_norm"]














def _affine(shape: tuple[int, ...], weight: bool, bias: bool) -> tuple[Any, Any]:
    w = init.ones_(tensor(np.empty(shape), requires_grad=True)) if weight else None
    b = init.zeros_(tensor(np.empty(shape), requires_grad=True)) if weight and bias else None
    return w, b


def _reset_affine(m: Module) -> None:
    if m.weight is not None:
        init.ones_(m.weight)
    if m.bias is not None:
        init.zeros_(m.bias)


class LayerNorm(Module):
    """``layer_norm`` with ``weight`` (ones) and ``bias`` (zeros) of ``normalized_shape``,
    as ``torch.nn.LayerNorm``; ``elementwise_affine=False`` has neither, ``bias=False``
    no bias.

    >>> from duograd import nn
    >>> {k: v.shape for k, v in nn.LayerNorm((2, 3)).state_dict().items()}
    {'weight': (2, 3), 'bias': (2, 3)}
    """

    def __init__(self, normalized_shape: Sequence[int] | int, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True) -> None:
        shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) \
            else tuple(int(n) for n in normalized_shape)
        self.normalized_shape, self.eps = shape, float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        self.weight, self.bias = _affine(shape, self.elementwise_affine, bias)

    def reset_parameters(self) -> None:
        """Weight ones and bias zeros again."""
        _reset_affine(self)

    def forward(self, input: Any) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def _extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True) -> None:
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        self.weight, self.bias = _affine((self.num_features,), self.affine, True)
        if self.track_running_stats:
            self.register_buffer("running_mean", tensor(np.zeros(self.num_features)))
            self.register_buffer("running_var", tensor(np.ones(self.num_features)))
            self.register_buffer("num_batches_tracked", tensor(np.array(0, dtype=np.int64)))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def reset_parameters(self) -> None:
        """Running statistics reset, weight ones and bias zeros again, as torch's."""
        self.reset_running_stats()
        _reset_affine(self)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def forward(self, input: Any) -> Tensor:
        input = _as_tensor(input)
        if input.ndim not in self._dims:
            raise ValueError(f"{type(self).__name__}: expected a {' or '.join(f'{d}D' for d in self._dims)}"
                             f" input, got shape {input.shape}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with _no_grad():  # in place, so that a dg.compile replay counts too
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average (a Tensor: read every call)
                momentum = 1.0 / self.num_batches_tracked
        use_batch = self.training or not self.track_running_stats
        return batch_norm(input, self.running_mean if not self.training or self.track_running_stats else None,
                          self.running_var if not self.training or self.track_running_stats else None,
                          self.weight, self.bias, use_batch, momentum, self.eps)

    def _extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L), as ``torch.nn.BatchNorm1d``: ``weight``
    (ones) and ``bias`` (zeros) with ``affine``; buffers ``running_mean`` (zeros),
    ``running_var`` (ones) and ``num_batches_tracked`` with ``track_running_stats``.
    Training mode normalises with the batch's statistics and updates the running ones
    (``momentum=None``: a cumulative average); eval mode uses the running ones.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> bn = nn.BatchNorm1d(2)
    >>> list(bn.state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    >>> bn(dg.tensor([[1.0, 2.0], [3.0, 2.0]])).detach().numpy().round(4)
    array([[-1.,  0.],
           [ 1.,  0.]])
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """``BatchNorm1d`` for (N, C, H, W) inputs, as ``torch.nn.BatchNorm2d``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.BatchNorm2d(3)(dg.randn(4, 3, 2, 2)).shape
    (4, 3, 2, 2)
    """

    _dims = (4,)


class GroupNorm(Module):
    """``group_norm`` with per-channel ``weight`` (ones) and ``bias`` (zeros) when
    ``affine``, as ``torch.nn.GroupNorm``.

    >>> from duograd import nn
    >>> list(nn.GroupNorm(2, 4).state_dict())
    ['weight', 'bias']
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True) -> None:
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels {num_channels} must be divisible by "
                             f"num_groups {num_groups}")
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        self.eps, self.affine = float(eps), bool(affine)
        self.weight, self.bias = _affine((self.num_channels,), self.affine, True)

    def reset_parameters(self) -> None:
        """Weight ones and bias zeros again."""
        _reset_affine(self)

    def forward(self, input: Any) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def _extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
