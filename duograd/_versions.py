"""Version counters: how many in-place writes each piece of memory has had.

A counter belongs to memory, not to a Tensor: it is kept per *memory root* (the NumPy
array that owns the memory), so a view and its base share one, as in torch. A Tensor
whose memory was never written has no record, and a version costs it nothing.

Every write gets a number from one clock (``clock``). A graph node remembers the clock at
its creation (``Node.stamp``), which is all the hot path pays: the version a saved value
had when the node saved it is the number of writes to its memory numbered at most the
stamp, so a backward asks this module only about nodes made before the latest write
(``written_since``, ``version_at``). Writes that autograd recorded (the result had history,
so a tensor got a new node) are kept apart (``recorded_between``): a value consumed after
such a write to *another* tensor sharing its memory is not explained by its own graph.

``Tensor.data`` gives a tensor on a fresh root (``fresh_root``): it shares the memory but
has its own counter, so ``p.data.add_(1)`` bumps nothing that ``p``'s graph saved (torch's
``.data``).

>>> import numpy as np
>>> a = np.zeros(3)
>>> version(a), version(a[1:])
(0, 0)
>>> _ = bump(a[1:])
>>> version(a), version(a[:1]), version(fresh_root(a))
(1, 1, 0)
"""

from __future__ import annotations

import weakref

import numpy as np

clock = 0           # the number of the latest in-place write, anywhere
last_recorded = 0   # the number of the latest write that autograd recorded (0: none yet)
_LOG = 4096         # write numbers kept per memory root (older ones only lower a version's bound)


class _Writes:
    """The writes one memory root has had: its version, the numbers of its latest writes
    (``log``, the last ``_LOG`` of them), and those that autograd recorded (``recorded``)."""

    __slots__ = ("version", "log", "recorded")

    def __init__(self) -> None:
        self.version, self.log, self.recorded = 0, [], []

    def add(self, w: int, recorded: bool) -> None:
        self.version += 1
        self.log.append(w)
        if len(self.log) > _LOG:
            del self.log[:len(self.log) // 2]
        if recorded:
            self.recorded.append(w)
            if len(self.recorded) > _LOG:
                del self.recorded[:len(self.recorded) // 2]


_RECORDS: dict[int, _Writes] = {}


def _root(arr: np.ndarray) -> np.ndarray:
    """The array that owns ``arr``'s memory (``arr`` itself if it owns it)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _record(arr: np.ndarray, create: bool = False) -> _Writes | None:
    if arr.base is not None:  # (an array that owns its memory, the common case, is its root)
        arr = _root(arr)
    key = id(arr)
    rec = _RECORDS.get(key)
    if rec is None and create:
        rec = _RECORDS[key] = _Writes()
        weakref.finalize(arr, _RECORDS.pop, key, None)
    return rec


def bump(arr: np.ndarray, recorded: bool = False) -> int:
    """Count one in-place write to ``arr``'s memory (its version, and every view's, goes up
    by one); returns the write's number. ``recorded``: autograd gave the written tensor a
    new node."""
    global clock, last_recorded
    clock += 1
    # (_record's lookup inlined: an optimizer step bumps every parameter)
    rec = _RECORDS.get(id(arr if arr.base is None else _root(arr)))
    if rec is None:
        rec = _record(arr, create=True)
    rec.add(clock, recorded)
    if recorded:
        last_recorded = clock
    return clock


def version(arr: np.ndarray) -> int:
    """How many in-place writes ``arr``'s memory has had (``Tensor._version``)."""
    rec = _record(arr)
    return 0 if rec is None else rec.version


def written_since(arr: np.ndarray, stamp: int) -> bool:
    """Whether ``arr``'s memory was written after write number ``stamp``."""
    rec = _record(arr)
    return rec is not None and bool(rec.log) and rec.log[-1] > stamp


def version_at(arr: np.ndarray, stamp: int) -> int:
    """The version ``arr``'s memory had just after write number ``stamp``."""
    rec = _record(arr)
    return 0 if rec is None else rec.version - sum(1 for w in rec.log if w > stamp)


def recorded_between(arr: np.ndarray, lo: int, hi: int) -> bool:
    """Whether a write that autograd recorded, numbered in (lo, hi], reached ``arr``'s memory."""
    rec = _record(arr)
    return rec is not None and any(lo < w <= hi for w in rec.recorded)


class _Interface:
    """An object that only exposes an array's memory, so that the array NumPy makes of it
    is a root of its own (its ``base`` is this object, not an ndarray)."""

    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, arr: np.ndarray) -> None:
        self.__array_interface__ = arr.__array_interface__
        self._keep = arr


def fresh_root(arr: np.ndarray) -> np.ndarray:
    """An array on ``arr``'s memory that is a memory root of its own: writes through it
    count on a counter of their own (``Tensor.data``)."""
    out = np.asarray(_Interface(arr))
    if not arr.flags.writeable:
        out.flags.writeable = False
    return out


def through_data(arr: np.ndarray) -> bool:
    """Whether ``arr`` is (a view of) memory reached through ``Tensor.data``."""
    return isinstance(_root(arr).base, _Interface)
