"""Recording: the signature of a call, and the listener that records ``fn``'s eager run.

The recorder is a listener on the stack of ``duograd._context`` (``records = True``):
it appends every primitive call, as ``(op, xs, kw, out)``, and every effect, as one of
``_context``'s effect records (``Accumulate``, ``SetGrad``, ``Derive``, ``Draw``,
``Host``), to one log in call order; it notes the Tensors made from data, and warns
when the step reads a tensor's value into Python or writes one in place.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _context, autograd
from .._tensor import Tensor


def _flatten(obj: Any, leaves: list, where: str) -> Any:
    """A hashable key of ``obj`` with each Tensor or array replaced by its spec; the
    Tensors and arrays themselves go to ``leaves`` in order."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return ("T", obj._data.shape, obj._data.dtype.str, obj.requires_grad)
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"dg.compile: {where} is an array of dtype {obj.dtype} (shape "
                            f"{obj.shape}), which cannot be part of a signature; pass numbers "
                            "as a numeric array or a Tensor")
        leaves.append(obj)
        return ("A", obj.shape, obj.dtype.str)
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__,
                tuple(_flatten(v, leaves, f"{where}[{i}]") for i, v in enumerate(obj)))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten(obj[k], leaves, f"{where}[{k!r}]"))
                              for k in sorted(obj, key=repr)))
    try:
        hash(obj)
    except TypeError:
        raise TypeError(f"dg.compile: {where} of type {type(obj).__name__} cannot be part of a "
                        "signature (it is compared by value, so it must be hashable); pass "
                        "Tensors, NumPy arrays or plain Python values") from None
    return ("V", type(obj), obj)


def signature(args: tuple, kwargs: dict) -> tuple[Any, list]:
    """The cache key of a call (types, shapes, dtypes, values, grad mode) and its arrays."""
    leaves: list = []
    key = (tuple(_flatten(a, leaves, f"argument {i}") for i, a in enumerate(args)),
           tuple((k, _flatten(kwargs[k], leaves, f"argument {k!r}")) for k in sorted(kwargs)),
           autograd.is_grad_enabled())
    return key, leaves


def warn_at_user_line(message: str) -> None:
    """``warnings.warn(message)`` pointing at the user's line (the first frame outside
    duograd); ``{line}`` in ``message`` becomes its "file:line"."""
    f, level, _ = _context.user_frame(1)
    line = f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"
    warnings.warn(message.format(line=line), RuntimeWarning, stacklevel=level)


class Recorder(_context.listening_to):
    """The listener of one recording: ``with Recorder() as rec: fn(...)``."""

    records = True  # a host step's inside and the engine's sum into .grad are not seen

    def __init__(self) -> None:
        self.log: list = []            # (op, xs, kw, out) per call, an effect record per effect
        self.made: set[int] = set()    # ids of Tensors made from data during the recording
        self.keep: list = []           # everything the log names stays alive: ids stay unique
        self.on_call = self.on_effect = self.log.append  # calls and effects, in order

    def on_create(self, t: Tensor) -> None:
        self.made.add(id(t))
        self.keep.append(t)

    def on_read(self, t: Tensor, what: str) -> None:
        warn_at_user_line(f"dg.compile: {what} at {{line}} reads a tensor's value while "
                          "recording; a replay does not run this line again, so any decision or "
                          "number computed from it is frozen at its recorded value "
                          "(recheck_every=N re-runs eagerly to catch a change)")

    on_write = on_read  # a write in place (assigning .data) is not replayed either
