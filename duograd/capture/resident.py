"""Values that live on the XLA side between calls of a ``dg.compile(fn, backend="xla")``
program, and their lazy write-back into the Tensors and optimizer state.

A call of an XLA program returns the new parameter values, ``.grad`` values and optimizer
state as device buffers (one per dtype, ``Carry``), and leaves them there. Each tensor
whose value is now in a buffer holds a ``Pending`` (the buffer, the offset, the shape, and
the NumPy array the value belongs in) in its ``_data`` slot, and its class is swapped for a
subclass (``lazy_class``: one per Tensor class, ``__slots__ = ()``) whose ``_data``
property copies the value into the NumPy array, puts that array back in the slot and
restores the class, at the first read of ``t._data`` from anywhere: the library reads
``_data`` everywhere, so ``.data``, ``.numpy()``, ``.item()``, printing, an eager op, a
NumPy-backend program and ``state_dict()`` all see the value. A write (``t._data = a``)
through the property drops the pending value and restores the class as well. Ordinary
tensors never pay anything: their class is the plain one.

An optimizer whose state entries are pending has its class swapped the same way
(``lazy_optimizer_class``): reading ``opt.state`` copies every pending entry into its
array first (``opt.state_dict()``, ``opt.step()``, ``opt.state[p]["exp_avg"]``), and
setting ``opt.state`` (``load_state_dict``) drops them.

A tensor or state entry that was read since (so is an ordinary NumPy array again) is
handed to the next call from its array: a read costs the next call an upload, never a
stale value. A program passes its last buffers straight back in (no copy) only when every
value it reads is still pending in them (``Carry`` identity).

>>> import numpy as np
>>> from duograd._tensor import tensor
>>> t = tensor([1.0, 2.0])
>>> old = t._data
>>> set_pending(t, Pending(Carry([np.array([5.0, 6.0])]), 0, 0, (2,), old.dtype, old))
>>> type(t).__name__, t.numpy(), t._data is old, type(t) is type(tensor(0.0))
('Tensor', array([5., 6.]), True, True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor

_SLOT = Tensor.__dict__["_data"]
raw_get, raw_set = _SLOT.__get__, _SLOT.__set__


class Carry:
    """The buffers one call carried out (device arrays, one per dtype) and their host
    views, each made at its first read."""

    __slots__ = ("dev", "_host")

    def __init__(self, dev: Any) -> None:
        self.reset(dev)

    def reset(self, dev: Any) -> None:
        """Hold ``dev`` from now on (a program's home carry moves on to its next call's
        buffers: every value pending in it is the newer one)."""
        self.dev = tuple(dev)
        self._host: list = [None] * len(self.dev)

    def host(self, g: int) -> np.ndarray:
        h = self._host[g]
        if h is None:
            h = self._host[g] = np.asarray(self.dev[g])
        return h


class Pending:
    """A value in buffer ``g`` of ``carry`` at ``off``, of ``shape`` and ``dtype``; ``old``:
    the NumPy array it is written into when read (None: a new array)."""

    __slots__ = ("carry", "g", "off", "shape", "dtype", "old")

    def __init__(self, carry: Carry, g: int, off: int, shape: tuple, dtype: np.dtype,
                 old: np.ndarray | None) -> None:
        self.carry, self.g, self.off, self.shape, self.dtype, self.old = carry, g, off, shape, dtype, old

    def value(self) -> np.ndarray:
        """The value as a (read-only) host array, the tensor left as it is."""
        return self.carry.host(self.g)[self.off:self.off + math.prod(self.shape)].reshape(self.shape)

    def __deepcopy__(self, memo: dict) -> np.ndarray:
        # (a copy of the state that holds it, e.g. a replay's snapshot, holds the values)
        return np.array(self.value())

    def __reduce__(self) -> tuple:
        return (np.array, (np.array(self.value()),))

    def materialise(self) -> np.ndarray:
        v, old = self.value(), self.old
        if old is not None and old.flags.writeable and old.shape == self.shape and \
                old.dtype == self.dtype:
            np.copyto(old, v)
            return old
        return np.array(v)


_LAZY: dict = {}   # a Tensor class -> its lazy subclass
_BASE: dict = {}   # a lazy subclass -> its Tensor class


def _reduce_ex(self: Any, protocol: int) -> Any:
    self._data  # (settles it: its class is the plain one again)
    return self.__reduce_ex__(protocol)


def lazy_class(cls: type) -> type:
    """The subclass of Tensor class ``cls`` whose ``_data`` settles a pending value."""
    sub = _LAZY.get(cls)
    if sub is not None:
        return sub

    def get(self: Any) -> np.ndarray:
        d = raw_get(self)
        if type(d) is Pending:
            d = d.materialise()
            raw_set(self, d)
        self.__class__ = cls
        return d

    def put(self: Any, value: Any) -> None:
        raw_set(self, value)
        self.__class__ = cls

    sub = type(cls.__name__, (cls,), {"__slots__": (), "_data": property(get, put),
                                      "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                      "__doc__": cls.__doc__, "__reduce_ex__": _reduce_ex})
    _LAZY[cls], _BASE[sub] = sub, cls
    return sub


def set_pending(t: Tensor, p: Pending) -> None:
    """``t``'s value is ``p`` from now on, until it is read or written."""
    raw_set(t, p)
    c = type(t)
    if c not in _BASE:
        t.__class__ = lazy_class(c)


def peek(t: Tensor) -> Any:
    """``t``'s array, or its ``Pending``, without settling it."""
    return raw_get(t)


def host_value(t: Tensor) -> np.ndarray:
    """``t``'s value as a host array, without settling it (a pending value's view)."""
    d = raw_get(t)
    return d.value() if type(d) is Pending else d


def old_array(t: Tensor) -> np.ndarray:
    """The NumPy array ``t``'s value belongs in."""
    d = raw_get(t)
    return d.old if type(d) is Pending else d


# ---------------------------------------------------------------- optimizer state

def settle_state(state: dict) -> None:
    """Copy every pending entry of an optimizer's ``state`` into its array."""
    for st in state.values():
        for k, v in st.items():
            if type(v) is Pending:
                st[k] = v.materialise()


_LAZY_OPT: dict = {}
_BASE_OPT: dict = {}


def lazy_optimizer_class(cls: type) -> type:
    """The subclass of optimizer class ``cls`` whose ``state`` settles pending entries."""
    sub = _LAZY_OPT.get(cls)
    if sub is not None:
        return sub

    def get(self: Any) -> dict:
        st = self.__dict__["state"]
        settle_state(st)
        self.__class__ = cls
        return st

    def put(self: Any, value: dict) -> None:
        self.__dict__["state"] = value
        self.__class__ = cls

    def reduce_ex(self: Any, protocol: int) -> Any:
        self.state  # (settles it)
        return self.__reduce_ex__(protocol)

    sub = type(cls.__name__, (cls,), {"state": property(get, put), "__module__": cls.__module__,
                                      "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
                                      "__reduce_ex__": reduce_ex})
    _LAZY_OPT[cls], _BASE_OPT[sub] = sub, cls
    return sub


def raw_state(opt: Any) -> dict:
    """``opt.state`` without settling it."""
    return opt.__dict__["state"]


def mark_optimizer(opt: Any) -> None:
    """``opt``'s state holds pending entries."""
    c = type(opt)
    if c not in _BASE_OPT:
        opt.__class__ = lazy_optimizer_class(c)


def base_class(c: type) -> type:
    """The class a lazy tensor or optimizer class stands for (``c`` itself otherwise)."""
    return _BASE.get(c) or _BASE_OPT.get(c) or c
