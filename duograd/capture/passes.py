"""The passes that finish a draft program at its first replay: rewrites that keep every
bit, buffers reused for results that never leave the replay, chains of elementwise
kernels fused into one (``fusion.py``), snapshot flags for host steps, and the loads of
tensors read but not given."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import fusion, memo
from .instructions import BUF1, BUF2, CALL1, CALL2, LOAD, Instr


# ``reuse_buffers=None`` (dg.compile's default) reuses buffers for results of at most this
# many bytes: for a small array, allocating a new one costs more than computing it, and a
# buffer that small stays in the cache; a large buffer goes cold between calls when other
# work runs in between, while a new array reuses memory just freed (benchmarks/run.py times
# the default beside reuse_buffers=True and False).
SMALL_BUFFER = 16 * 1024


def finish(code: list, loads: list, needed_out: set[int], shapes: dict, dtypes: dict,
           reuse_buffers: bool | None, strided: frozenset = frozenset()) -> list:
    """The recorded code made ready to run. Done at the first replay, so that the
    recording call does not pay for it."""
    code = peephole(code, needed_out=needed_out, shapes=shapes)
    if reuse_buffers is not False:
        code = reuse(code, needed_out, shapes, dtypes, strided,
                     None if reuse_buffers else SMALL_BUFFER)
    if fusion.enabled():  # chains of elementwise kernels as one (capture/fusion.py)
        code = fusion.fuse(code, needed_out, shapes, dtypes, strided,
                           None if reuse_buffers else SMALL_BUFFER, reuse_buffers)
        code = memo.memo_derives(code, needed_out)  # derived arrays kept (capture/memo.py)
    later_kernel = False
    for ins in reversed(code):  # a host step (or an optimizer's update) followed by
        if ins.role in _STEPS:  # kernels snapshots what it changes
            ins.f.snapshot = later_kernel  # (lowering.HostStep, UpdateStep)
        later_kernel = later_kernel or ins.role not in _STEPS
    program: list = list(loads)
    for ins in code:
        program.append(ins)
        if ins.role in _STEPS:
            program.extend(loads)  # a host step may have moved or replaced them
    while program and program[-1].kind == LOAD:  # nothing reads them any more
        program.pop()
    return program


_STEPS = ("host", "update")  # the roles of host steps and optimizer updates (lowering.py)


def _ufunc_reader(ins: Instr) -> bool:
    return ins.role == "kernel" and ins.kind in (CALL1, CALL2) and isinstance(ins.f, np.ufunc)


def peephole(code: list, needed_out: set[int], shapes: dict[int, tuple]) -> list:
    """Two rewrites that leave every value the same bit for bit:

    - a 0-d result is turned into an array (``np.asarray``, as the eager engine holds it)
      only where something other than a ufunc reads it: a ufunc computes the same on a
      NumPy scalar, and a result handed out is wrapped into an array anyway;
    - a broadcast (an op whose row says ``broadcast``) read only by binary ufuncs whose
      result and other operand have the broadcast shape is dropped: the ufunc broadcasts
      the same way by itself (with a scalar or a smaller other operand it would not).
    """
    readers: dict[int, list] = {}
    for ins in code:
        for s in ins.reads:
            readers.setdefault(s, []).append(ins)
    out, renamed = [], {}
    for ins in code:
        o = ins.out
        if ins.role == "kernel" and ins.f is np.asarray and o not in needed_out \
                and all(_ufunc_reader(r) for r in readers.get(o, []) if r is not ins):
            continue
        if ins.role == "kernel" and ins.op is not None and ins.op.broadcast and ins.kind == CALL1 \
                and o not in needed_out and readers.get(o) \
                and all(_ufunc_reader(r) and r.kind == CALL2 and shapes.get(r.out) == shapes.get(o)
                        and shapes.get(r.b if r.a == o else r.a) == shapes.get(o)
                        for r in readers[o]):
            renamed[o] = ins.a
            continue
        if renamed and (ins.a in renamed or ins.b in renamed):
            ins = ins._replace(a=renamed.get(ins.a, ins.a), b=renamed.get(ins.b, ins.b),
                               reads=[renamed.get(s, s) for s in ins.reads])
        out.append(ins)
    return out


def reuse(code: list, needed_out: set[int], shapes: dict[int, tuple],
          dtypes: dict[int, np.dtype], strided: frozenset = frozenset(),
          max_bytes: int | None = None) -> list:
    """Give each ufunc result that never leaves the replay (of at most ``max_bytes``, when
    given) an array of its own, allocated once and written in place (``out=``) by every
    replay, instead of a new one per call.

    A result leaves the replay when it is returned, stored into ``.grad``, read by an
    effect, or read by a kernel other than a ufunc, except through a view (an op whose
    row says ``view``: transpose, reshape, broadcast, which leaves only if the view
    does): such results keep a new array per call. Each slot is written once per
    replay, so its buffer is never read stale. A result that the eager run held in
    another layout than C order (a ufunc keeps its input's: ``x.T * 2`` is in Fortran
    order) keeps a new array too: a C-ordered buffer would change the order in which a
    later reduction or matmul adds, and so its last bits.
    """
    escapes = set(needed_out)
    views = []
    for ins in code:
        if ins.role == "kernel" and ins.op is not None and ins.op.view and ins.kind == CALL1:
            views.append(ins)
        elif ins.role != "kernel" or not (ins.kind in (CALL1, CALL2) and makes_new_array(ins.f)):
            escapes.update(ins.reads)
    for ins in reversed(views):  # a view of a view: from the last one back
        if ins.out in escapes:
            escapes.add(ins.a)
    out = []
    for ins in code:
        o = ins.out
        shape = shapes.get(o)
        if ins.role == "kernel" and isinstance(ins.f, np.ufunc) and ins.kind in (CALL1, CALL2) \
                and o not in escapes and shape and ins.f.nout == 1 and o not in ins.reads \
                and o not in strided and (max_bytes is None or
                                          np.prod(shape) * dtypes[o].itemsize <= max_bytes):
            buf = np.empty(shape, dtypes[o])
            if ins.kind == CALL1:
                ins = ins._replace(kind=BUF1, b=buf)
            else:
                ins = ins._replace(kind=BUF2, a=(ins.a, ins.b), b=buf)
        out.append(ins)
    return out


def makes_new_array(f: Any) -> bool:
    """Whether kernel ``f`` returns a new array, never a view of an input: a ufunc, or a
    ufunc's reduction (``sum``)."""
    if isinstance(f, np.ufunc):
        return True
    inner = getattr(f, "func", None)  # functools.partial(np.add.reduce, ...)
    return getattr(inner, "__name__", None) == "reduce" and isinstance(getattr(inner, "__self__", None), np.ufunc)
