"""``dg.compile`` and ``Compiled``: the cache of programs by signature, the recording
call, and ``recheck_every``'s comparison of two recordings.

Number arguments, in one place (``torch.compile``'s automatic dynamic shapes): a Python
float or int argument (not a bool, not named static) is part of the signature by its type,
and of the cache key by its value while it is static. Per signature (``_Numbers``): at
its first value it is static (``fn`` gets the plain number); at another value, ``_miss``
records ``fn`` with the number as a 0-d Tensor stand-in (``recording.standin``), an
argument slot of the program, which each replay fills with that call's value
(``_number_arrays``). If the recording found a use that decides the program
(``recording.Numbers``: a read into Python, an op's keyword, a host step's argument, a
return, a reference alive afterwards, an error), what it changed is put back and ``fn``
runs again with the plain number, the number static for good; else it is an input of the
signature's programs from then on. So a learning-rate sweep records twice: once at its
first value, once more at its second. ``traces`` counts the programs kept (an abandoned
stand-in run is not one). Nothing here reads the interpreter's internals (no reference
counts, no ``gc`` referrers, no ``ctypes``: NumPy's global generator is compared through
``np.random.get_state``)."""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import hashlib
import inspect
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from .. import _context
from .._tensor import _CONSTANTS, Tensor, _wrap
from .instructions import Recapture
from .lowering import Builder
from .program import Program, _reached, _snapshot
from . import trees
from .reads import plain_reads
from .refs import (Arg, Const, External, ObjectKey, Record, Value)
from .recording import Numbers, Recorder, signature, standin

CACHE_SIZE = 8             # programs kept per compiled function (least recently used evicted)


# ---------------------------------------------------------------- recheck_every

def _print(v: Any, where: dict | None = None, by_identity: bool = False) -> Any:
    """The one comparable stand-in for a value a recording holds (a keyword parameter, a
    constant, a draw's or host step's argument, a returned or guarded plain value):
    numbers by their bits (-0.0 is not 0.0, and a number argument by its value), arrays by
    their values, or, in ``where`` (an array of this call: an index derived from an
    argument), by where they come from; containers by their items. Anything else is itself
    (compared by ``==``) or, with ``by_identity``, its identity (a Tensor, an optimizer)."""
    if isinstance(v, np.ndarray):
        if where is not None and id(v) in where:
            return where[id(v)]
        return ("array", v.shape, v.dtype.str,
                hashlib.sha1(np.ascontiguousarray(v).tobytes()).hexdigest())
    if isinstance(v, float):
        return ("float", float.hex(v))
    if isinstance(v, (bool, int, str, type(None))):
        return (type(v).__name__, v)
    if isinstance(v, np.generic):
        return ("generic", v.dtype.str, v.tobytes())
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_print(x, where, by_identity) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((repr(k), _print(x, where, by_identity)) for k, x in v.items()))
    if isinstance(v, slice):
        return ("slice", _print(v.start), _print(v.stop), _print(v.step))
    return ObjectKey(id(v)) if by_identity else v


class Printer:
    """Where each value of one recording came from, for the records' ``fingerprint``
    methods: an argument, an earlier record, a constant by value, a tensor read but not
    given by identity."""

    def __init__(self, rec: Recorder, leaves: list) -> None:
        self.rec = rec
        self.where: dict[int, Any] = {}
        for i, leaf in enumerate(leaves):
            self.where[id(leaf)] = Arg(i)
            if isinstance(leaf, Tensor):
                self.where[id(leaf._data)] = Arg(i)
        self.constants = {id(t) for t in _CONSTANTS.values()}

    def seen(self, x: Any) -> Any:
        return self.where.get(id(x))

    def ref(self, t: Any) -> Any:
        where = self.where
        d = where.get(id(t))
        if d is None and isinstance(t, Tensor):
            d = where.get(id(t._data))
            if d is None:
                d = Const(_print(t._data)) \
                    if id(t) in self.rec.made or id(t) in self.constants else External(id(t))
        return d

    def source(self, x: Any) -> Any:
        """A ``Derive``'s source: where it came from, else its value."""
        d = self.ref(x)
        return d if d is not None else Value(_print(x))

    def kw(self, kw: Any) -> Any:
        return _print(kw, self.where)

    def value(self, v: Any) -> Any:
        return _print(v)

    def made(self, k: int, out: Any) -> None:
        if out is not None:
            self.where.setdefault(id(out), Record(k))
            if isinstance(out, Tensor):
                self.where.setdefault(id(out._data), Record(k))


def fingerprint(rec: Recorder, leaves: list) -> list:
    """One comparable entry per record of a recording (a primitive call, or an effect's
    own ``fingerprint``): what it did, and where each input came from. Two recordings of
    the same program have equal fingerprints."""
    p = Printer(rec, leaves)
    prints: list = []
    for k, e in enumerate(rec.log):
        if type(e) is tuple:
            op, xs, kw, out = e
            prints.append((op.name, tuple(p.ref(x) for x in xs), p.kw(kw),
                           out._data.shape, out._data.dtype.str))
            p.made(k, out)
        else:
            prints.append(e.fingerprint(p))
            p.made(k, getattr(e, "out", None))
    return prints


def _first_difference(old: list, new: list) -> int | None:
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return i
    return None if len(old) == len(new) else min(len(old), len(new))


def _describe_ref(r: Any) -> str:
    if type(r) is Arg:
        return f"argument {r.index}"
    if type(r) is Record:
        return f"the result of operation {r.index}"
    if type(r) is Const:
        return "a constant"
    if type(r) is External:
        return "a tensor read but not given"
    return "?"


def _describe_print(p: Any, line: str | None = None) -> str:
    if p is None:
        return "nothing (the recording ended)"
    at = f" at {line}" if line else ""
    if p[0] in ("derive", "draw"):
        return f"{p[0]} {p[1]!r}{at} (keywords {p[2]!r}, from {_describe_ref(p[3]) if p[0] == 'derive' else 'a generator'})"
    if p[0] in ("host", "write", "update"):
        return f"{p[0]} {p[1]!r}{at}"
    if p[0] in ("accumulate", "set_grad"):
        return f"{p[0]}{at} (of {_describe_ref(p[1])})"
    name, ins, kw, shape, dtype = p
    inputs = ", ".join(_describe_ref(r) for r in ins)
    return (f"'{name}'{at} on ({inputs}) with keywords {kw!r} (output shape {shape}, "
            f"{np.dtype(dtype)})")


def _state_of(program: Program, leaves: list) -> Any:
    """A function that puts back everything the program's step can change: the values and
    ``.grad`` of the tensors it reads (parameters) and of the argument Tensors, what its
    host steps change (optimizer state), and the state of the generators it draws from."""
    tensors = [t for t, *_ in program.guards] + [x for x in leaves if isinstance(x, Tensor)]
    restore = _snapshot((tensors, *[a for args in program.hosts for a in args]))
    gens = [(g, copy.deepcopy(g.bit_generator.state)) for g in program.generators]

    def put_back() -> None:
        restore()
        for g, state in gens:
            g.bit_generator.state = state
    return put_back


def _as_tensors(args: tuple, kwargs: dict, leaves: list) -> tuple[tuple, dict, list, frozenset]:
    """The call with each array argument a Tensor (one per distinct array), as ``fn`` sees
    it while recording: NumPy arithmetic on it goes through the primitives and is recorded.
    Returns the new arguments, the leaves in signature order, and which leaves were arrays."""
    if not any(isinstance(x, np.ndarray) for x in leaves):
        return args, kwargs, leaves, frozenset()
    memo: dict[int, Tensor] = {}

    def tensor(obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            t = memo.get(id(obj))
            if t is None:
                t = memo[id(obj)] = _wrap(obj)
            return t
        return obj
    args = tuple(trees.map_leaves(a, tensor) for a in args)
    kwargs = {k: trees.map_leaves(v, tensor) for k, v in kwargs.items()}
    wrapped = frozenset(i for i, x in enumerate(leaves) if isinstance(x, np.ndarray))
    return args, kwargs, [memo[id(x)] if isinstance(x, np.ndarray) else x for x in leaves], wrapped


# ---------------------------------------------------------------- the compiled callable

class Compiled:
    """``fn`` compiled: call it as ``fn``. ``.traces`` counts the recordings made so far,
    ``.programs`` holds the programs by signature. A Python number argument is static at
    its first value and an input of the programs from its second on, unless its value
    decides the program (then, or when named by ``static_argnums``/``static_argnames``,
    it is keyed by value; see ``compile``). See ``duograd.capture``.

    >>> import duograd as dg
    >>> double = dg.compile(lambda x: dg.tensor(x) * 2)
    >>> double(np.ones(2)).numpy(), double(np.ones(3)).numpy(), double.traces
    (array([2., 2.]), array([2., 2., 2.]), 2)
    >>> scale = dg.compile(lambda x, s: dg.tensor(x) * s)
    >>> [scale(np.ones(2), s).tolist() for s in (2.0, 3.0, 0.5)], scale.traces
    ([[2.0, 2.0], [3.0, 3.0], [0.5, 0.5]], 2)
    >>> power = dg.compile(lambda x, n: dg.tensor(x) ** n, static_argnums=1)
    >>> [power(np.full(2, 2.0), n).tolist() for n in (2, 3)], power.traces
    ([[4.0, 4.0], [8.0, 8.0]], 2)
    """

    def __init__(self, fn: Callable, recheck_every: int | None = None,
                 reuse_buffers: bool | None = None, static_argnums: Any = (),
                 static_argnames: Any = (), backend: str = "numpy") -> None:
        if backend not in ("numpy", "xla"):
            raise ValueError(f"dg.compile: backend must be 'numpy' or 'xla', got {backend!r}")
        if backend == "xla":
            from .xla import require_jax
            require_jax()  # ImportError naming the extra, now rather than at the first call
        self.backend = backend
        if not callable(fn):
            raise TypeError(f"dg.compile: expected a callable, got {type(fn).__name__}")
        self._static = _static_arguments(fn, static_argnums, static_argnames)
        self._numbers: dict = {}  # signature -> its number arguments (_Numbers)
        if recheck_every is not None and (not isinstance(recheck_every, int) or recheck_every < 1):
            raise ValueError(f"dg.compile: recheck_every must be a positive int or None, got "
                             f"{recheck_every!r}")
        self.fn = fn
        self.recheck_every = recheck_every
        self.reuse_buffers = None if reuse_buffers is None else bool(reuse_buffers)
        self.traces = 0
        self.calls = 0
        self.programs: OrderedDict[Any, Program] = OrderedDict()
        self._last: Program | None = None  # the program of the last eager run of fn
        self._attempt: Numbers | None = None  # the stand-ins of the recording under way
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<dg.compile of {getattr(self.fn, '__qualname__', self.fn)!r}: {self.traces} recordings>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _context.watching:  # inside a recording, anomaly mode or a jvp: eager
            self._last = None
            return self.fn(*args, **kwargs)
        key, leaves, places = signature(args, kwargs, self._static)
        self.calls += 1
        base = key
        if places:  # keyed by the values of the number arguments not (yet) dynamic
            nums = self._numbers.get(base)
            key = (base, _values(leaves, places, nums.dynamic if nums is not None else ()))
            program = self.programs.get(key)
            if program is not None and nums is not None and nums.kept and \
                    program is not self._last:
                program = None  # another eager run stored other values since: record again
        else:
            program = self.programs.get(key)
        if program is not None and program.guard():
            self.programs.move_to_end(key)
            if self.recheck_every is not None and self.calls % self.recheck_every == 0:
                return self._recheck(key, base, program, args, kwargs, leaves, places)
            run = leaves
            if program.standins:
                try:
                    run = _number_arrays(leaves, program.standins)
                except OverflowError:  # an int beyond int64: not a value of the slot
                    self._last = None
                    return self.fn(*args, **kwargs)
            gens = program.generators
            states = [g.bit_generator.state for g in gens] if gens else None
            try:
                return program.run(run)
            except Recapture:  # (rolled back) a value-dependent shape changed: record again,
                for g, state in zip(gens, states or ()):  # from the generators' states before
                    g.bit_generator.state = state
                del self.programs[key]
        return self._miss(base, args, kwargs, leaves, places)

    # ------------------------------------------------------------ number arguments

    def _miss(self, base: Any, args: tuple, kwargs: dict, leaves: list, places: list) -> Any:
        """No program for this call: record one. A number argument is static at its first
        value; at another value for the same signature (not yet found static) it enters
        ``fn`` as a stand-in (``recording.standin``), and stays an input of the
        signature's programs unless the recording finds a use that decides the program
        (``recording.Numbers``). Then what that run changed is put back, the number is
        static for good, and ``fn`` runs again (recorded) with the plain number: that run's
        result is the call's."""
        if not places:
            result, program, _ = self._record(args, kwargs, leaves, ())
            self._last = program
            self.traces += 1
            self._put(base, program)
            return result
        nums = self._numbers.get(base)
        if nums is None or nums.ref is None:  # (none, or its first recording raised)
            nums = self._numbers[base] = _Numbers(leaves, places)
        mine = {i for _, i in places}
        trying = {i for i in mine - nums.dynamic - nums.static
                  if _number_key(leaves[i]) != nums.first[i] and _fits(leaves[i])}
        standins = (nums.dynamic | trying) & mine
        while True:
            put_back = _state_of(nums.ref, leaves) if standins and nums.ref is not None \
                else None
            failed = False
            try:
                result, program, numbers = self._record(args, kwargs, leaves,
                                                        tuple(sorted(standins)))
            except Exception:
                if not standins:
                    raise
                failed = True
            if failed:  # (a stand-in fn cannot take, or fn's own error: run it plainly)
                numbers, self._attempt = self._attempt, None
                if numbers is not None:
                    numbers.alive()  # (the exception and its frames are gone)
                    if numbers.kept:
                        nums.kept = True
                put_back()
                gone = standins & trying or standins  # (the new ones first)
                nums.static |= gone
                standins -= gone
                trying = set()
                continue
            if numbers is None:
                break
            covered = None
            if numbers.taint:  # abandoned: its result and program go before the look
                covered = put_back is not None and _covers(nums.ref, program, numbers.own)
                result = program = None
            numbers.alive()  # (the recording and the build let go of the stand-ins)
            taint = numbers.taint
            if not taint:
                break
            if numbers.kept:
                nums.kept = True
            if covered is None:
                covered = put_back is not None and _covers(nums.ref, program, numbers.own)
                result = program = None
            if not covered:
                if put_back is not None:
                    put_back()
                raise RuntimeError(
                    f"dg.compile: a number argument of {getattr(self.fn, '__qualname__', 'fn')} "
                    f"entered it as a stand-in and was found to decide the program "
                    f"({next(iter(taint.values()))}), but the run changed state the earlier "
                    "recording of this signature did not, so it cannot be put back; pass the "
                    "number with static_argnums/static_argnames")
            put_back()
            nums.static |= set(taint)
            standins -= set(taint)
        if nums.dynamic != standins:  # the programs keyed by the old set of values go
            nums.dynamic = frozenset(standins)
            n = len(places) - len(nums.dynamic)
            for k in [k for k in self.programs if len(k) == 2 and k[0] == base and len(k[1]) != n]:
                del self.programs[k]
        nums.ref = self._last = program
        self.traces += 1
        self._put((base, _values(leaves, places, nums.dynamic)), program)
        return result

    def _put(self, key: Any, program: Program) -> None:
        self.programs[key] = program
        self.programs.move_to_end(key)
        while len(self.programs) > CACHE_SIZE:
            self.programs.popitem(last=False)
        if len(self._numbers) > 2 * CACHE_SIZE:  # the number states of signatures evicted go
            live = {k[0] for k in self.programs if len(k) == 2}
            for b in [b for b in self._numbers if b not in live]:
                del self._numbers[b]

    def _record(self, args: tuple, kwargs: dict, leaves: list,
                standins: tuple) -> tuple[Any, Program, Numbers | None]:
        """One recording of ``fn`` on this call, the number arguments at leaf indices
        ``standins`` as stand-ins; returns the result, the program and, with stand-ins,
        what the recording found of their uses (``recording.Numbers``: ``taint``, the
        uses that make a number static; after ``alive()``, called once the caller lets
        go of what it does not keep, ``kept``, the numbers ``fn`` stored)."""
        self._last = None  # (an eager run of fn)
        with _collector_off():
            result, program, numbers = self._record_step(args, kwargs, leaves, standins)
        if numbers is not None:
            self._attempt = None
            numbers.unhold(list(trees.leaves_of(result)) + [t for t, *_ in program.guards])
        return result, program, numbers

    def _record_step(self, args: tuple, kwargs: dict, leaves: list,
                     standins: tuple) -> tuple[Any, Program, Numbers | None]:
        args, kwargs, leaves, wrapped = _as_tensors(args, kwargs, leaves)
        numbers = None
        if standins:
            args, kwargs, leaves, made = _as_standins(args, kwargs, leaves, standins)
            wrapped = wrapped | frozenset(standins)
            numbers = self._attempt = Numbers(made)
            del made
        legacy = _legacy_position()  # where NumPy's global generator is
        values, objects = plain_reads(self.fn)
        try:
            if numbers is not None:
                numbers.open()
            with Recorder(lines=self.recheck_every is not None, numbers=numbers) as rec:
                result = self.fn(*args, **kwargs)
                if numbers is not None:
                    numbers.finish(result)
        except AttributeError as e:
            if isinstance(getattr(e, "obj", None), Tensor) and wrapped:
                raise AttributeError(
                    f"dg.compile: while recording, every array argument enters fn as a Tensor "
                    f"(so that NumPy arithmetic on it is recorded), and Tensor has no attribute "
                    f"{e.name!r}: use the Tensor's own method (or compute it outside fn)") from e
            raise
        finally:
            if numbers is not None:
                numbers.close()
        if _legacy_moved(legacy):
            raise RuntimeError(
                "dg.compile: fn drew random numbers from NumPy's global generator (np.random.*) "
                "while recording; a replay would reuse the recorded numbers. Draw with "
                "dg.rand/dg.randn/dg.randint (drawn again by every replay), or draw outside fn "
                "and pass the numbers as an argument")
        if self.backend == "xla":
            from .xla import build as xla_build  # (JAX imported only for this backend)
            program = xla_build(rec, leaves, wrapped, result, self.reuse_buffers)
        else:
            program = Program(Builder(rec, leaves, wrapped).build(result), self.reuse_buffers)
        if self.recheck_every is not None:
            program.prints = fingerprint(rec, leaves)
            program.lines = rec.lines
        program.values_read = values
        program.objects_read = objects
        program.standins = tuple((i, leaves[i]._data.dtype) for i in standins)
        return result, program, numbers

    def _recheck(self, key: Any, base: Any, program: Program, args: tuple, kwargs: dict,
                 leaves: list, places: list) -> Any:
        put_back = _state_of(program, leaves)
        standins = tuple(i for i, _ in program.standins)
        try:
            result, fresh, numbers = self._record(args, kwargs, leaves, standins)
            if numbers is not None:
                numbers.alive()
            taint = numbers.taint if numbers is not None else {}
        except BaseException:
            put_back()
            raise
        if taint:  # a stand-in decides the program now: static for good, recorded plainly
            put_back()
            del self.programs[key]
            nums = self._numbers[base]
            nums.static |= set(taint)
            nums.dynamic = nums.dynamic - set(taint)
            return self._miss(base, args, kwargs, leaves, places)
        i = _first_difference(program.prints, fresh.prints)
        if i is not None:
            put_back()
            del self.programs[key]
            old = program.prints[i] if i < len(program.prints) else None
            new = fresh.prints[i] if i < len(fresh.prints) else None
            line_old = program.lines[i] if program.lines and i < len(program.lines) else None
            line_new = fresh.lines[i] if fresh.lines and i < len(fresh.lines) else None
            raise RuntimeError(
                f"dg.compile: the recording of {getattr(self.fn, '__qualname__', 'fn')} differs from "
                f"a fresh eager run at operation {i}: recorded {_describe_print(old, line_old)}; "
                f"now {_describe_print(new, line_new)}. Python control flow, a value read from a "
                "tensor or a global changed. Nothing was changed by this call (parameters, .grad, "
                "optimizer state and generators are as before it); the next call records again")
        return result


@contextlib.contextmanager
def _collector_off() -> Any:
    """The garbage collector off for a recording call and its build: the recording holds
    every tensor, array and record it names alive until the program is built, so a
    collection would only walk that growing heap again and again (a 10^5-op step spent a
    fifth of its first call there). Cyclic garbage ``fn`` makes is collected after the
    call, as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _number_key(x: Any) -> Any:
    """A number argument's value as a key: a float by its bits (-0.0 is not 0.0, a nan
    equals itself)."""
    return x.hex() if type(x) is float else x


def _values(leaves: list, places: list, dynamic: Any) -> tuple:
    """The part of a call's key the number arguments make: the values of those that are
    not inputs (dynamic) of the signature's programs."""
    return tuple(_number_key(leaves[i]) for _, i in places if i not in dynamic)


def _fits(x: Any) -> bool:
    """Whether number ``x`` has a stand-in (an int beyond int64 does not)."""
    return type(x) is float or -2 ** 63 <= x < 2 ** 63


def _number_arrays(leaves: list, standins: tuple) -> list:
    """The leaves of a replay: each stand-in's number as the 0-d array of its slot."""
    run = list(leaves)
    for i, dtype in standins:
        run[i] = np.array(leaves[i], dtype=dtype)
    return run


class _Numbers:
    """The number arguments of one signature: their values at its first recording, which
    of them are inputs of its programs (``dynamic``), which are keyed by value for good
    (``static``), and the program last recorded (what a recording with stand-ins may
    change, put back when it is abandoned)."""

    __slots__ = ("first", "dynamic", "static", "ref", "kept")

    def __init__(self, leaves: list, places: list) -> None:
        self.first = {i: _number_key(leaves[i]) for _, i in places}
        self.dynamic: frozenset = frozenset()
        self.static: set = set()
        self.ref: Program | None = None
        # fn stores them: each eager run does, a replay does not, so a program replays only
        # right after its own recording (or its own replays) stored the same values
        self.kept = False


def _as_standins(args: tuple, kwargs: dict, leaves: list,
                 standins: tuple) -> tuple[tuple, dict, list, dict]:
    """The call with the number arguments at leaf indices ``standins`` as stand-ins, as
    ``fn`` sees it while recording; also the stand-ins by leaf index."""
    at = {i: where for where, i in signature(args, kwargs)[2]}  # (recording: the slow path)
    args, kwargs, leaves = list(args), dict(kwargs), list(leaves)
    made = {}
    for i in standins:
        x = leaves[i] = made[i] = standin(leaves[i])
        where = at[i]
        if type(where) is int:
            args[where] = x
        else:
            kwargs[where] = x
    return tuple(args), kwargs, leaves, made


def _covers(ref: Program, fresh: Program, own: set) -> bool:
    """Whether putting back what ``ref``'s step can change (``_state_of``) puts back what
    ``fresh``'s changed: its tensors (but the stand-ins and what was computed from them
    alone, ``own``), host steps' objects and generators are ``ref``'s."""
    def reach(p: Program) -> tuple[set, set]:
        tensors, owners = _reached([a for args in p.hosts for a in args])
        return ({id(t) for t, *_ in p.guards} | set(tensors),
                {id(o) for o in owners} | {id(g) for g in p.generators})
    t1, o1 = reach(ref)
    t2, o2 = reach(fresh)
    return t2 - own <= t1 and o2 <= o1


def _static_arguments(fn: Any, argnums: Any, argnames: Any) -> frozenset:
    """The positions and names of the arguments keyed by value (``static_argnums``,
    ``static_argnames``), each named both ways where ``fn``'s signature says both."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    for n in nums:
        if type(n) is not int or n < 0:
            raise ValueError(f"dg.compile: static_argnums must be non-negative ints, got {n!r}")
    for n in names:
        if type(n) is not str:
            raise ValueError(f"dg.compile: static_argnames must be strings, got {n!r}")
    out = set(nums) | set(names)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return frozenset(out)
    both = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for i, prm in enumerate(params):
        if prm.kind in both and (i in out or prm.name in out):
            out.update((i, prm.name))
    return frozenset(out)


def _legacy_position() -> Any:
    """Where NumPy's global generator (``np.random.rand`` and co.) is: its whole state, as
    ``np.random.get_state`` gives it (the key's 624 words, the position, the cached
    Gaussian); any draw changes it. A copy of 2.5 KiB per recording, compared once."""
    _, key, pos, has_gauss, gauss = np.random.get_state()
    return key, pos, has_gauss, gauss


def _legacy_moved(before: Any) -> bool:
    key, pos, has_gauss, gauss = _legacy_position()
    return pos != before[1] or has_gauss != before[2] or gauss != before[3] or \
        not np.array_equal(key, before[0])


def compile(fn: Callable, recheck_every: int | None = None, reuse_buffers: bool | None = None,
            static_argnums: Any = (), static_argnames: Any = (), backend: str = "numpy") -> Compiled:
    """``fn`` with its NumPy work recorded on the first call per signature and replayed
    after: the same results, gradients and effects, bit for bit, without the per-operation
    cost of the eager engine. See ``duograd.capture`` for what is captured.

    ``recheck_every=N`` runs ``fn`` eagerly every N-th call and raises ``RuntimeError``
    naming the first operation where the fresh recording differs. ``reuse_buffers=True``
    writes the ufunc results that never leave a replay into arrays allocated once, instead
    of new ones per call; ``False`` never does; the default (None) does for results of at
    most 16 KiB (``capture.passes.SMALL_BUFFER``): a small array costs more to allocate than
    to compute, while a large fixed buffer goes cold in the cache between calls. The values
    are the same bit for bit either way; benchmarks/run.py times the choices.

    A Python float or int argument is handled as ``torch.compile``'s automatic dynamic
    shapes: static at its first value (``fn`` gets the number, the program is keyed by
    it), an input of the program from its second distinct value on (recorded once more,
    with the number as a 0-d Tensor stand-in; later values replay), as long as ``fn`` only
    hands it to duograd's operations (``x * lr``, ``lr * p.grad``, ``dg.tensor(lr)``,
    ``lr * 0.5 * g``). A number whose value decides the program stays keyed by its value
    (a new value records again): one read into Python (``math.sqrt(lr)``, a comparison in
    an ``if``, ``range(n)``, formatting), passed as an op's keyword (``dim=n``) or a host
    step's argument, returned, or kept by ``fn`` (stored into an attribute, an optimizer's
    options, a list); that run is put back and ``fn`` runs again with the plain number.
    ``static_argnums`` (positions) and ``static_argnames`` (names) key the numbers among
    them by value from the start, as ``jax.jit``'s; bools are flags, always keyed by value.

    ``backend="xla"`` runs each recorded program as one ``jax.jit`` computation instead
    (``duograd.capture.xla``; needs ``pip install duograd[xla]``): the same recording and
    guards, the values equal to the NumPy backend's up to the order XLA adds in.

    >>> import duograd as dg
    >>> w = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> def sgd_step(x, lr):
    ...     w.grad = None
    ...     (w * x).sum().backward()
    ...     with dg.no_grad():
    ...         w.sub_(lr * w.grad)
    ...     return w * 1.0
    >>> sweep = dg.compile(sgd_step)
    >>> [sweep(np.ones(2), lr).tolist() for lr in (0.5, 0.25, 0.125)], sweep.traces
    ([[0.5, 1.5], [0.25, 1.25], [0.125, 1.125]], 2)

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
    return Compiled(fn, recheck_every, reuse_buffers, static_argnums, static_argnames, backend)
