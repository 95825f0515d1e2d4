"""``torch.cuda`` as torch answers on a machine without a GPU: duograd runs on the CPU.

``is_available()`` is False and ``device_count()`` is 0, so the idiom
``device = "cuda" if dg.cuda.is_available() else "cpu"`` picks the CPU; ``manual_seed`` and
``manual_seed_all`` are accepted and do nothing (torch queues them until a GPU is used, which
never happens here). Asking for a CUDA tensor or module (``t.cuda()``, ``t.to("cuda")``,
``module.cuda()``) raises torch's own ``AssertionError("Torch not compiled with CUDA
enabled")``. ``dg.cuda.amp`` (``autocast``, ``GradScaler``, the older spelling of
``dg.amp``'s with ``device_type="cuda"``) disables itself with a warning, as torch's does
without a GPU. The rest of torch.cuda (streams, memory statistics, ...) raises
``NotImplementedError`` with the reason (duograd/_inventory).

>>> import duograd as dg
>>> dg.cuda.is_available(), dg.cuda.device_count()
(False, 0)
>>> dg.zeros(2).cuda()
Traceback (most recent call last):
AssertionError: Torch not compiled with CUDA enabled
"""

from __future__ import annotations

import sys
import types
from typing import Any

from . import amp as _amp

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "not_compiled", "is_cuda_device", "amp"]

NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available() -> bool:
    """False: there is no CUDA device (as torch on a machine without one).

    >>> import duograd as dg
    >>> dg.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """0: there is no CUDA device.

    >>> import duograd as dg
    >>> dg.cuda.device_count()
    0
    """
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialised here.

    >>> import duograd as dg
    >>> dg.cuda.is_initialized()
    False
    """
    return False


def manual_seed(seed: int) -> None:
    """Accepted and ignored, as torch does without a GPU (the CPU generator is unchanged).

    >>> import duograd as dg
    >>> dg.cuda.manual_seed(0) is None
    True
    """
    int(seed)  # torch converts it the same way: a seed that is not a number raises


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as ``manual_seed``.

    >>> import duograd as dg
    >>> dg.cuda.manual_seed_all(0) is None
    True
    """
    int(seed)


def is_cuda_device(dev: Any) -> bool:
    """Whether ``dev`` names a CUDA device: "cuda", "cuda:1", or an int (torch reads an int
    as a CUDA device index).

    >>> from duograd.cuda import is_cuda_device
    >>> is_cuda_device("cuda:0"), is_cuda_device(0), is_cuda_device("cpu")
    (True, True, False)
    """
    if isinstance(dev, bool):
        return False
    if isinstance(dev, int):
        return True
    name = dev if isinstance(dev, str) else getattr(dev, "type", None)
    return isinstance(name, str) and (name == "cuda" or name.startswith("cuda:"))


def not_compiled(dev: Any = None) -> Exception:
    """The error torch raises for a CUDA request on a build without CUDA: an
    ``AssertionError`` for a device named by a string (or none), and a ``RuntimeError`` for
    one named by an int index (torch then asks for an accelerator, finds none and says so).

    >>> from duograd.cuda import not_compiled
    >>> not_compiled("cuda"), not_compiled(0)
    (AssertionError('Torch not compiled with CUDA enabled'), RuntimeError('Cannot access accelerator device when none is available.'))
    """
    if isinstance(dev, int) and not isinstance(dev, bool):
        return RuntimeError("Cannot access accelerator device when none is available.")
    return AssertionError(NOT_COMPILED)


class _CudaAutocast(_amp.autocast):
    """``torch.cuda.amp.autocast``: ``dg.amp.autocast("cuda", ...)``, disabled here with a warning."""

    def __init__(self, enabled: bool = True, dtype: Any = "float16", cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CudaGradScaler(_amp.GradScaler):
    """``torch.cuda.amp.GradScaler``: ``dg.amp.GradScaler("cuda", ...)``, disabled here."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


amp = types.ModuleType(f"{__name__}.amp", "torch.cuda.amp without a GPU: autocast and GradScaler disable "
                       "themselves with a warning, as torch's.")
amp.autocast = _CudaAutocast
amp.GradScaler = _CudaGradScaler
sys.modules[amp.__name__] = amp
