"""Derived arrays kept between replays while their source is unchanged.

An array computed from a step's argument outside the primitives (``_tensor._derive``: the
class targets of a cross-entropy checked and flattened, each target's weight, a
conversion of an index) is computed again by every replay, from that call's argument. A
training loop usually hands the same targets step after step, so the pass (run by
``passes.finish``) wraps each such kernel of ``nn.functional``'s label functions whose
keywords hold no array (``keepable``): when its source is an array of at most
``LIMIT`` bytes with the same dtype, shape and bytes as at the previous call, the previous
result is handed out again; otherwise it is computed as before. The functions derived
are pure functions of their source (that is what a ``Derive`` record says), so the
values are the same bit for bit; a result that is its source or a view of it is never
kept.

A kept result must never be written or handed out: the pass keeps only results whose
readers are all kernels of the program, through views and other kernels' results that
may share their memory, none of them returned, stored into ``.grad`` or read by an
effect; and it makes the kept array read-only, so a write would raise rather than
change a later call's values. ``DUOGRAD_FUSION=0`` (the fusion switch) turns this pass
off too.

>>> import numpy as np
>>> calls = []
>>> m = Memo(lambda a: calls.append(1) or a * 2)
>>> y = np.arange(3)
>>> [m(y).tolist(), m(y.copy()).tolist(), len(calls)]
[[0, 2, 4], [0, 2, 4], 1]
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .instructions import BUF1, BUF2, CALL1, CALL2, EFFECT, ShapeChecked

LIMIT = 64 * 1024  # sources larger than this are not compared (the comparison costs a copy)


class Memo:
    """``f`` of one array, its last result kept while the source's bytes are unchanged."""

    __slots__ = ("f", "key", "value", "__wrapped__")

    def __init__(self, f: Callable) -> None:
        self.f = f
        self.key: Any = None
        self.value: Any = None
        self.__wrapped__ = f

    def __call__(self, src: Any) -> Any:
        if type(src) is not np.ndarray or src.nbytes > LIMIT:
            return self.f(src)
        key = (src.dtype, src.shape, src.tobytes())
        if key == self.key:
            return self.value
        out = self.f(src)
        if type(out) is np.ndarray and out is not src and out.base is None:
            out.flags.writeable = False
            self.key, self.value = key, out
        else:
            self.key = self.value = None
        return out


def _plain(v: Any) -> bool:
    """Whether a keyword's value is fixed for good (numbers, strings, dtypes, None, and
    tuples of them): never an array, which may be written between calls."""
    if v is None or isinstance(v, (bool, int, float, complex, str, np.dtype, type, np.generic)):
        return True
    if isinstance(v, (tuple, frozenset)):
        return all(_plain(x) for x in v)
    return False


def keepable(f: Any) -> bool:
    """Whether derive kernel ``f`` is a pure function of its source alone: one of
    ``nn.functional``'s label functions (the cross-entropy's checks and weights,
    ``one_hot``), no closure, with keywords that hold no array (a loss's class ``weight``
    is an array the caller may change in place: such a kernel is computed every call).

    >>> import functools
    >>> from duograd.nn import functional as F
    >>> keepable(F._one_hot), keepable(functools.partial(F._one_hot, num_classes=np.ones(2)))
    (True, False)
    """
    kw = {}
    if type(f) is ShapeChecked:
        f = f.f
    if isinstance(f, functools.partial):
        if f.args:
            return False
        f, kw = f.func, f.keywords
    return (getattr(f, "__module__", None) == "duograd.nn.functional"
            and getattr(f, "__closure__", None) is None and all(_plain(v) for v in kw.values()))


def _pure_reader(ins: Any) -> bool:
    """A kernel whose result is a new array (never its input's memory)."""
    from .passes import makes_new_array
    return ins.role == "kernel" and (
        (ins.kind in (CALL1, CALL2) and makes_new_array(ins.f)) or ins.kind in (BUF1, BUF2)
        or (ins.kind == EFFECT and hasattr(ins.f, "outs")))  # a fused kernel (fusion.py)


def memo_derives(code: list, needed_out: set) -> list:
    """``code`` with each derive kernel whose result stays inside the program wrapped in a
    ``Memo`` (see the module docstring)."""
    derives = [k for k, ins in enumerate(code) if ins.role == "kernel" and ins.kind == CALL1
               and ins.label == "derive" and ins.op is None and not isinstance(ins.f, Memo)
               and keepable(ins.f)]
    if not derives:
        return code
    readers: dict[int, list] = {}
    for ins in code:
        for s in ins.reads:
            readers.setdefault(s, []).append(ins)
    safe: dict[int, bool] = {}

    def stays(s: int) -> bool:
        """Whether slot ``s``'s array (or anything sharing its memory) stays inside."""
        if s in safe:
            return safe[s]
        safe[s] = False  # (a cycle: not safe)
        ok = s not in needed_out
        for r in readers.get(s, ()):
            if not ok:
                break
            if r.role != "kernel":
                ok = False
            elif not _pure_reader(r):  # may hand back s's memory (a view, itself)
                ok = r.out is not None and r.out != s and stays(r.out)
        safe[s] = ok
        return ok
    out = list(code)
    for k in derives:
        ins = code[k]
        try:
            keep = stays(ins.out)
        except RecursionError:  # (a very long chain of views: not kept)
            keep = False
        if keep:
            out[k] = ins._replace(f=Memo(ins.f))
    return out
