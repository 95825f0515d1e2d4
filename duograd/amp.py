"""``torch.amp``: mixed precision as torch does it on a machine without a GPU.

``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`` (also ``dg.autocast``),
a context manager and decorator:

- ``enabled=False``: changes nothing, on any device;
- ``device_type="cuda"`` (or another device that is not here): torch warns that the device is
  not available and disables autocast; so does duograd;
- ``device_type="cpu"`` with a dtype torch's CPU autocast does not take (float32, float64):
  torch warns and disables autocast; so does duograd;
- ``device_type="cpu"`` with bfloat16 (the default) or float16: torch runs matmuls and
  convolutions in that dtype; duograd has neither dtype, so entering the block raises
  ``NotImplementedError`` naming it, rather than computing in float32 and calling it bfloat16.

``GradScaler(device="cuda", ..., enabled=True)`` without a GPU disables itself as torch's does
(``scale`` returns its argument, ``step`` calls ``optimizer.step()``, ``update`` and
``unscale_`` do nothing, ``get_scale()`` is 1.0); an enabled scaler on the CPU raises
``NotImplementedError`` (its use is with float16, which duograd lacks).

>>> import duograd as dg
>>> with dg.autocast("cpu", enabled=False):
...     y = dg.ones(2, 2) @ dg.ones(2, 2)
>>> y.dtype
dtype('float64')
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

__all__ = ["autocast", "GradScaler", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                 "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def _dtype_name(dtype: Any) -> str:
    return str(getattr(dtype, "name", dtype)).replace("torch.", "")


class autocast:
    """torch's ``autocast`` on a machine without a GPU (see the module's docstring).

    >>> import duograd as dg
    >>> @dg.autocast("cpu", enabled=False)
    ... def f(x):
    ...     return x * 2
    >>> f(dg.ones(1)).tolist()
    [2.0]
    >>> with dg.autocast("cpu"):
    ...     pass
    Traceback (most recent call last):
    NotImplementedError: autocast(device_type='cpu', dtype=bfloat16): duograd has no bfloat16 ...
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        base = device_type.split(":")[0]
        if base not in _DEVICE_TYPES:
            raise RuntimeError(f"autocast: expected a device type such as 'cpu' or 'cuda', got {device_type!r}")
        self.device = base
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled

    def _active(self) -> bool:
        """Whether torch would cast here; warns where torch warns and disables."""
        if not self._enabled:
            return False
        if self.device != "cpu":
            warnings.warn(f"autocast: device_type={self.device!r} is not available (duograd runs on the "
                          "CPU); disabling autocast", UserWarning, stacklevel=3)
            return False
        name = "bfloat16" if self.fast_dtype is None else _dtype_name(self.fast_dtype)
        if name not in ("bfloat16", "float16", "half"):
            warnings.warn(f"autocast: CPU autocast supports bfloat16 and float16 only, got {name}; "
                          "disabling autocast", UserWarning, stacklevel=3)
            return False
        return True

    def __enter__(self) -> "autocast":
        if self._active():
            name = "bfloat16" if self.fast_dtype is None else _dtype_name(self.fast_dtype)
            raise NotImplementedError(
                f"autocast(device_type='cpu', dtype={name}): duograd has no {name} dtype, so it cannot run "
                "matmuls and convolutions in it as torch's CPU autocast does; use enabled=False")
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` takes ``device_type`` (True for "cpu" and "cuda", as torch).

    >>> import duograd as dg
    >>> dg.amp.is_autocast_available("cpu")
    True
    """
    return device_type in ("cpu", "cuda")


class GradScaler:
    """torch's gradient scaler as it behaves without a GPU: disabled (see the module).

    >>> import duograd as dg
    >>> scaler = dg.amp.GradScaler(enabled=False)
    >>> loss = dg.tensor(2.0)
    >>> scaler.scale(loss) is loss, scaler.is_enabled(), scaler.get_scale()
    (True, False, 1.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        if enabled and device == "cpu":
            raise NotImplementedError("GradScaler(device='cpu', enabled=True): duograd has no float16, "
                                      "the dtype loss scaling protects; use enabled=False")
        if enabled:
            warnings.warn("GradScaler: CUDA is not available (duograd runs on the CPU); disabling the scaler",
                          UserWarning, stacklevel=2)
        self._enabled = False

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None
