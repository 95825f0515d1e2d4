"""``dg.compile`` and ``Compiled``: the cache of programs by signature, the recording
call, and ``recheck_every``'s comparison of two recordings."""

from __future__ import annotations

import functools
import gc
import hashlib
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from .. import _context
from .._context import Accumulate, Derive, Draw, Host, SetGrad
from .._tensor import _CONSTANTS, Tensor
from .lowering import Builder
from .program import Program
from .recording import Recorder, signature

CACHE_SIZE = 8             # programs kept per compiled function (least recently used evicted)


# ---------------------------------------------------------------- recheck_every

def _fingerprint(value: Any) -> Any:
    """A comparable stand-in for a keyword parameter or a constant's value."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str,
                hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_fingerprint(v) for v in value))
    if isinstance(value, dict):
        return tuple((k, _fingerprint(v)) for k, v in sorted(value.items()))
    if isinstance(value, slice):
        return ("slice", value.start, value.stop, value.step)
    return value


def fingerprint(rec: Recorder, leaves: list) -> list:
    """One comparable entry per record of a recording (a primitive call or an effect):
    what it did, and where each input came from (an argument, an earlier record, a
    constant by value, a tensor read but not given by identity). Two recordings of the
    same program have equal fingerprints."""
    where: dict[int, Any] = {}
    for i, leaf in enumerate(leaves):
        where[id(leaf)] = ("arg", i)
        if isinstance(leaf, Tensor):
            where[id(leaf._data)] = ("arg", i)
    constants = {id(t) for t in _CONSTANTS.values()}

    def of(t: Any) -> Any:
        d = where.get(id(t))
        if d is None and isinstance(t, Tensor):
            d = where.get(id(t._data))
            if d is None:
                d = ("const", _fingerprint(t._data)) if id(t) in rec.made or id(t) in constants \
                    else ("external", id(t))
        return d

    def made(k: int, out: Any) -> None:
        if out is not None:
            where.setdefault(id(out), ("record", k))
            if isinstance(out, Tensor):
                where.setdefault(id(out._data), ("record", k))

    prints: list = []
    for k, e in enumerate(rec.log):
        if type(e) is tuple:
            op, xs, kw, out = e
            prints.append((op.name, tuple(of(x) for x in xs), _fingerprint(kw),
                           out._data.shape, out._data.dtype.str))
            made(k, out)
        elif type(e) is Derive:
            src = of(e.source)
            prints.append(("derive", getattr(e.fn, "__name__", repr(e.fn)), _fingerprint(e.kw),
                           src if src is not None else ("value", _fingerprint(e.source))))
            made(k, e.out)
        elif type(e) is Draw:
            prints.append(("draw", getattr(e.fn, "__qualname__", repr(e.fn)), _fingerprint(e.args)))
            made(k, e.out)
        elif type(e) is Accumulate:
            prints.append(("accumulate", of(e.leaf), of(e.g)))
            made(k, e.out)
        elif type(e) is SetGrad:
            prints.append(("set_grad", of(e.t), None if e.value is None else of(e.value)))
        elif type(e) is Host:
            prints.append(("host", getattr(e.fn, "__qualname__", repr(e.fn)), len(e.args)))
    return prints


def _first_difference(old: list, new: list) -> int | None:
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return i
    return None if len(old) == len(new) else min(len(old), len(new))


def _describe_print(p: Any) -> str:
    if p is None:
        return "nothing (the recording ended)"
    if p[0] in ("derive", "host", "draw"):
        return f"{p[0]} {p[1]!r}"
    if p[0] in ("accumulate", "set_grad"):
        return p[0]
    name, ins, _, shape, dtype = p
    return f"'{name}' (output shape {shape}, {np.dtype(dtype)})"


# ---------------------------------------------------------------- the compiled callable

class Compiled:
    """``fn`` compiled: call it as ``fn``. ``.traces`` counts the recordings made so far,
    ``.programs`` holds the programs by signature. See ``duograd.capture``.

    >>> import duograd as dg
    >>> double = dg.compile(lambda x: dg.tensor(x) * 2)
    >>> double(np.ones(2)).numpy(), double(np.ones(3)).numpy(), double.traces
    (array([2., 2.]), array([2., 2., 2.]), 2)
    """

    def __init__(self, fn: Callable, recheck_every: int | None = None,
                 reuse_buffers: bool = True) -> None:
        if not callable(fn):
            raise TypeError(f"dg.compile: expected a callable, got {type(fn).__name__}")
        if recheck_every is not None and (not isinstance(recheck_every, int) or recheck_every < 1):
            raise ValueError(f"dg.compile: recheck_every must be a positive int or None, got "
                             f"{recheck_every!r}")
        self.fn = fn
        self.recheck_every = recheck_every
        self.reuse_buffers = bool(reuse_buffers)
        self.traces = 0
        self.calls = 0
        self.programs: OrderedDict[Any, Program] = OrderedDict()
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<dg.compile of {getattr(self.fn, '__qualname__', self.fn)!r}: {self.traces} recordings>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _context.watching:  # inside a recording, anomaly mode or a jvp: eager
            return self.fn(*args, **kwargs)
        key, leaves = signature(args, kwargs)
        self.calls += 1
        program = self.programs.get(key)
        if program is not None and program.guard():
            self.programs.move_to_end(key)
            if self.recheck_every is not None and self.calls % self.recheck_every == 0:
                return self._recheck(key, program, args, kwargs, leaves)
            return program.run(leaves)
        result, program = self._record(args, kwargs, leaves)
        self.programs[key] = program
        self.programs.move_to_end(key)
        while len(self.programs) > CACHE_SIZE:
            self.programs.popitem(last=False)
        return result

    def _record(self, args: tuple, kwargs: dict, leaves: list) -> tuple[Any, Program]:
        with Recorder() as rec:
            result = self.fn(*args, **kwargs)
        # The collector would walk the recording's ~10 objects per call again and again
        # while the program is built; nothing built here is cyclic garbage.
        enabled = gc.isenabled()
        gc.disable()
        try:
            program = Program(Builder(rec, leaves).build(result), self.reuse_buffers)
            if self.recheck_every is not None:
                program.prints = fingerprint(rec, leaves)
        finally:
            if enabled:
                gc.enable()
        self.traces += 1
        return result, program

    def _recheck(self, key: Any, program: Program, args: tuple, kwargs: dict, leaves: list) -> Any:
        result, fresh = self._record(args, kwargs, leaves)
        self.traces -= 1  # a check, not a new program
        i = _first_difference(program.prints, fresh.prints)
        if i is not None:
            del self.programs[key]
            old = program.prints[i] if i < len(program.prints) else None
            new = fresh.prints[i] if i < len(fresh.prints) else None
            raise RuntimeError(
                f"dg.compile: the recording of {getattr(self.fn, '__qualname__', 'fn')} differs from "
                f"a fresh eager run at operation {i}: recorded {_describe_print(old)}, now "
                f"{_describe_print(new)}. Python control flow or a number computed from a tensor's "
                "value changed; this call ran eagerly, and the program is recorded again on the next call")
        return result


def compile(fn: Callable, recheck_every: int | None = None, reuse_buffers: bool = True) -> Compiled:
    """``fn`` with its NumPy work recorded on the first call per signature and replayed
    after: the same results, gradients and effects, bit for bit, without the per-operation
    cost of the eager engine. See ``duograd.capture`` for what is captured.

    ``recheck_every=N`` runs ``fn`` eagerly every N-th call and raises ``RuntimeError``
    naming the first operation where the fresh recording differs. ``reuse_buffers``
    (on by default) writes ufunc results that never leave a replay into arrays
    allocated once, instead of new ones per call; the values are the same bit for bit.

    >>> import duograd as dg
    >>> from duograd import nn, optim
    >>> from duograd.nn import functional as F
    >>> model = nn.MLP(2, [8, 2], rng=0)
    >>> opt = optim.SGD(model.parameters(), lr=0.1)
    >>> def train_step(X, y):
    ...     model.zero_grad()
    ...     loss = F.cross_entropy(model(X), y)
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> fast = dg.compile(train_step)
    >>> X, y = np.random.default_rng(0).standard_normal((16, 2)), np.arange(16) % 2
    >>> losses = [fast(X, y).item() for _ in range(20)]
    >>> losses[-1] < losses[0], fast.traces
    (True, 1)
    """
    return Compiled(fn, recheck_every, reuse_buffers)
