"""torch's global switches, accepted and recorded as torch records them on a CPU.

duograd computes every float32 matmul at full precision with NumPy, runs its operations in
one deterministic way and leaves threading to NumPy's BLAS, so these switches change no
result here. They exist because programs written for torch set them at their top
(``torch.set_float32_matmul_precision("high")``, ``torch.use_deterministic_algorithms(True)``,
``torch.set_num_threads(4)``); each validates its argument as torch does and reads back
what was set. ``inference_mode`` is ``no_grad`` under torch's name.

>>> import duograd as dg
>>> dg.set_float32_matmul_precision("high")
>>> dg.get_float32_matmul_precision(), dg.backends.cuda.matmul.allow_tf32
('high', True)
>>> dg.set_float32_matmul_precision("highest")
"""

from __future__ import annotations

import functools
import os
import warnings
from typing import Any, Callable

from . import _context as _ctx

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads", "inference_mode",
           "is_inference_mode_enabled"]

_state: dict[str, Any] = {
    "float32_matmul_precision": "highest",
    "deterministic": False,
    "deterministic_warn_only": False,
    "num_threads": max(1, os.cpu_count() or 1),
    "num_interop_threads": max(1, os.cpu_count() or 1),
    "inference_mode": 0,
}

_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """Record torch's float32 matmul precision ("highest", "high" or "medium"); another
    value warns and changes nothing, as torch. duograd's float32 matmuls are full precision
    whatever is set.

    >>> import duograd as dg
    >>> dg.set_float32_matmul_precision("medium"); dg.get_float32_matmul_precision()
    'medium'
    >>> dg.set_float32_matmul_precision("highest")
    """
    if precision not in _PRECISIONS:
        warnings.warn(f"set_float32_matmul_precision: {precision!r} is not one of 'highest', 'high' or "
                      "'medium'; the precision is unchanged", UserWarning, stacklevel=2)
        return
    _state["float32_matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last set ("highest" at start, as torch).

    >>> import duograd as dg
    >>> dg.get_float32_matmul_precision()
    'highest'
    """
    return _state["float32_matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the switch (duograd's operations are deterministic either way); ``mode`` must
    be a bool, as torch's.

    >>> import duograd as dg
    >>> dg.use_deterministic_algorithms(True); dg.are_deterministic_algorithms_enabled()
    True
    >>> dg.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state["deterministic"] = mode
    _state["deterministic_warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """What ``use_deterministic_algorithms`` last set (False at start).

    >>> import duograd as dg
    >>> dg.are_deterministic_algorithms_enabled()
    False
    """
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The ``warn_only`` that ``use_deterministic_algorithms`` last set.

    >>> import duograd as dg
    >>> dg.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _state["deterministic_warn_only"]


def _positive_int(op: str, n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{op} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{op} expects a positive integer, got {n}")
    return n


def set_num_threads(n: int) -> None:
    """Record the number of intra-op threads (a positive int, else ``RuntimeError`` as torch);
    duograd's own work is single-threaded, NumPy's BLAS keeps its own setting.

    >>> import duograd as dg
    >>> before = dg.get_num_threads()
    >>> dg.set_num_threads(2); dg.get_num_threads()
    2
    >>> dg.set_num_threads(before)
    """
    _state["num_threads"] = _positive_int("set_num_threads", n)


def get_num_threads() -> int:
    """The number last set by ``set_num_threads`` (at start, the number of CPUs).

    >>> import duograd as dg
    >>> dg.get_num_threads() >= 1
    True
    """
    return _state["num_threads"]


def set_num_interop_threads(n: int) -> None:
    """Record the number of inter-op threads (a positive int).

    >>> import duograd as dg
    >>> dg.set_num_interop_threads(dg.get_num_interop_threads())
    """
    _state["num_interop_threads"] = _positive_int("set_num_interop_threads", n)


def get_num_interop_threads() -> int:
    """The number last set by ``set_num_interop_threads``.

    >>> import duograd as dg
    >>> dg.get_num_interop_threads() >= 1
    True
    """
    return _state["num_interop_threads"]


class inference_mode:
    """torch's ``inference_mode``: here ``no_grad`` (nothing is recorded), as a context
    manager, as a decorator (``@dg.inference_mode()`` or bare ``@dg.inference_mode``);
    ``inference_mode(False)`` changes nothing. Tensors made inside are ordinary tensors
    without history (torch's inference tensors refuse later use in autograd; these do not).

    >>> import duograd as dg
    >>> x = dg.tensor([1.0], requires_grad=True)
    >>> with dg.inference_mode():
    ...     y = x * 2
    >>> y.requires_grad, dg.is_grad_enabled()
    (False, True)
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):  # @inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        if self.mode:
            self._prev = _ctx.set_grad_mode(False)
            _state["inference_mode"] += 1

    def __exit__(self, *exc: object) -> None:
        if self.mode:
            _state["inference_mode"] -= 1
            _ctx.set_grad_mode(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> "inference_mode":
        return inference_mode(self.mode)


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``.

    >>> import duograd as dg
    >>> with dg.inference_mode():
    ...     dg.is_inference_mode_enabled()
    True
    """
    return _state["inference_mode"] > 0
