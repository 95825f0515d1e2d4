"""Activation modules, as in ``torch.nn`` (re-exported by ``duograd.nn``): each applies one
function of ``_activations.py`` (``duograd.nn.functional``'s activations) with the
constructor's arguments; ``PReLU`` holds its learned ``weight``.

>>> import duograd as dg
>>> from duograd import nn
>>> nn.LeakyReLU(0.1)(dg.tensor([-1.0, 2.0])).numpy()
array([-0.1,  2. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._activations import (_implicit_dim, _no_inplace, _t, celu, elu, gelu, glu, hardsigmoid, hardswish,
                           hardtanh, leaky_relu, logsigmoid, mish, prelu, relu6, selu, silu, softmin,
                           softplus, softsign)
from ..ops import log_softmax, softmax
from .._tensor import Tensor, _as_tensor, tensor
from .modules import Module
from . import init as _init

# ====================================================================== modules


class _Elementwise(Module):
    """A module with no parameters that applies one function."""

    _fn: Any = None

    def forward(self, x: Any) -> Tensor:
        return type(self)._fn(x, **self._kwargs())

    def _kwargs(self) -> dict:
        return {}


def _module(name: str, fn: Any, doc: str, **defaults: Any) -> type:
    """A torch.nn activation module: its constructor takes ``defaults``' keyword arguments
    (and ``inplace``), its forward applies ``fn``."""
    keys = tuple(defaults)

    def __init__(self, *args: Any, inplace: bool = False, **kw: Any) -> None:
        if len(args) > len(keys):
            raise TypeError(f"{name}: takes at most {len(keys)} positional arguments")
        values = dict(defaults)
        for k, v in zip(keys, args):
            values[k] = v
        for k, v in kw.items():
            if k not in values:
                raise TypeError(f"{name}: unexpected keyword argument {k!r}")
            values[k] = v
        _no_inplace(inplace, name)
        for k, v in values.items():
            setattr(self, k, v)

    def _kwargs(self) -> dict:
        return {k: getattr(self, k) for k in keys}

    def _extra_repr(self) -> str:
        return ", ".join(f"{k}={getattr(self, k)!r}" for k in keys)

    example = (f"\n\n    >>> import duograd as dg\n    >>> from duograd import nn\n"
               f"    >>> nn.{name}()(dg.tensor([[-1.0, 0.5]])).shape\n    (1, {1 if name == 'GLU' else 2})\n")
    return type(name, (_Elementwise,), {"__init__": __init__, "_kwargs": _kwargs, "_fn": staticmethod(fn),
                                        "_extra_repr": _extra_repr, "__doc__": doc + example,
                                        "__module__": __name__})


def _plain(fn: Any) -> Any:
    return lambda x, **kw: fn(x, **kw)


GELU = _module("GELU", gelu, "``gelu`` as a module.", approximate="none")
SiLU = _module("SiLU", _plain(silu), "``silu`` as a module.")
Mish = _module("Mish", _plain(mish), "``mish`` as a module.")
ELU = _module("ELU", elu, "``elu`` as a module.", alpha=1.0)
SELU = _module("SELU", _plain(selu), "``selu`` as a module.")
CELU = _module("CELU", celu, "``celu`` as a module.", alpha=1.0)
LeakyReLU = _module("LeakyReLU", leaky_relu, "``leaky_relu`` as a module.", negative_slope=0.01)
ReLU6 = _module("ReLU6", _plain(relu6), "``relu6`` as a module.")
Hardtanh = _module("Hardtanh", hardtanh, "``hardtanh`` as a module.", min_val=-1.0, max_val=1.0)
Hardsigmoid = _module("Hardsigmoid", _plain(hardsigmoid), "``hardsigmoid`` as a module.")
Hardswish = _module("Hardswish", _plain(hardswish), "``hardswish`` as a module.")
Softsign = _module("Softsign", _plain(softsign), "``softsign`` as a module.")
LogSigmoid = _module("LogSigmoid", _plain(logsigmoid), "``logsigmoid`` as a module.")
Softplus = _module("Softplus", softplus, "``softplus`` as a module.", beta=1.0, threshold=20.0)
Softmin = _module("Softmin", softmin, "``softmin`` along ``dim`` as a module.", dim=None)
GLU = _module("GLU", glu, "``glu`` as a module.", dim=-1)


def _softmax_dim(x: Any, dim: int | None = None) -> Tensor:
    x = _t(x, "softmax")
    return softmax(x, dim=_implicit_dim(x) if dim is None else dim)


def _log_softmax_dim(x: Any, dim: int | None = None) -> Tensor:
    x = _t(x, "log_softmax")
    return log_softmax(x, dim=_implicit_dim(x) if dim is None else dim)


Softmax = _module("Softmax", _softmax_dim, "``softmax`` along ``dim`` as a module.", dim=None)
LogSoftmax = _module("LogSoftmax", _log_softmax_dim, "``log_softmax`` along ``dim`` as a module.",
                     dim=None)


class PReLU(Module):
    """``prelu`` with a learned ``weight`` of ``num_parameters`` elements, each ``init``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.PReLU()(dg.tensor([-2.0, 1.0])).detach().numpy()
    array([-0.5,  1. ])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_parameters, self.init = num_parameters, init
        self.weight = tensor(np.empty((num_parameters,)), requires_grad=True,
                             dtype=np.float64 if dtype is None else dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope back to ``init``."""
        _init.constant_(self.weight, self.init)

    def forward(self, x: Any) -> Tensor:
        return prelu(_as_tensor(x), self.weight)

    def _extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


MODULES = ["GELU", "SiLU", "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "ReLU6", "Hardtanh",
           "Hardsigmoid", "Hardswish", "Softsign", "LogSigmoid", "Softplus", "Softmin", "GLU",
           "PReLU", "Softmax", "LogSoftmax"]
__all__ = MODULES
