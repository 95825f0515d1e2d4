"""``dg.compile`` and ``Compiled``: the cache of programs by signature, the recording
call, and ``recheck_every``'s comparison of two recordings.

Number arguments, in one place: a Python float or int argument (not a bool, not named
static) is part of the signature by its type only. While recording it enters ``fn`` as a
``recording.NumberInput``; where the engine makes a 0-d array of it, the array is a
``Derive`` from the argument, recomputed by each replay from that call's value. Its uses
that decide the program make it static, keyed by value (``recording.NumberInputs``: a
method called in Python, a record that holds it, or alive after the recording let go of
it). What no method call shows (``math.sqrt(lr)``) is found by the verification: the
first call with a new value of a number not yet confirmed runs ``fn`` eagerly, records
again, and compares the two recordings' fingerprints (``Printer``; each record prints
itself) with the number's own arrays masked; equal, the number is an input from then on
and the second recording is dropped, not counted in ``.traces``; different, it is keyed by
value. So a learning-rate sweep records once, as with ``torch.compile``'s automatic dynamic
shapes, with the difference that the first program already reads the number (torch's is
specialised to the first value and recompiled at the second): the verification needs a
recording that holds the number as an input to compare with. Nothing here reads the
interpreter's internals (no reference counts, no ``gc`` referrers, no ``ctypes``: NumPy's
global generator is compared through ``np.random.get_state``)."""

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
from .._context import Host
from .._tensor import _CONSTANTS, Tensor, _Input, _wrap
from .instructions import Recapture
from .lowering import Builder
from .program import Program, _snapshot
from . import trees
from .reads import plain_reads
from .refs import (Arg, Argument, Const, Dict, External, Named, Object, ObjectKey, Record, Slot,
                   Value)
from .recording import NumberInputs, Recorder, signature

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
    if isinstance(v, _Input):
        return ("number", _number_key(v._dg_value))
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
    ``.programs`` holds the programs by signature. Python number arguments are inputs
    of the programs, read on every call, unless their values decide the program (then,
    or when named by ``static_argnums``/``static_argnames``, they are keyed by value;
    see ``compile``). See ``duograd.capture``.

    >>> import duograd as dg
    >>> double = dg.compile(lambda x: dg.tensor(x) * 2)
    >>> double(np.ones(2)).numpy(), double(np.ones(3)).numpy(), double.traces
    (array([2., 2.]), array([2., 2., 2.]), 2)
    >>> scale = dg.compile(lambda x, s: dg.tensor(x) * s)
    >>> [scale(np.ones(2), s).tolist() for s in (2.0, 3.0, 0.5)], scale.traces
    ([[2.0, 2.0], [3.0, 3.0], [0.5, 0.5]], 1)
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
        self._fixed: dict = {}  # signature -> leaf indices of the numbers found static
        if recheck_every is not None and (not isinstance(recheck_every, int) or recheck_every < 1):
            raise ValueError(f"dg.compile: recheck_every must be a positive int or None, got "
                             f"{recheck_every!r}")
        self.fn = fn
        self.recheck_every = recheck_every
        self.reuse_buffers = None if reuse_buffers is None else bool(reuse_buffers)
        self.traces = 0
        self.calls = 0
        self.programs: OrderedDict[Any, Program] = OrderedDict()
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<dg.compile of {getattr(self.fn, '__qualname__', self.fn)!r}: {self.traces} recordings>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _context.watching:  # inside a recording, anomaly mode or a jvp: eager
            return self.fn(*args, **kwargs)
        key, leaves, _ = signature(args, kwargs, self._static)
        self.calls += 1
        base, fixed = key, ()
        if self._fixed:
            fixed = self._fixed.get(key, ())
            if fixed:
                key = ("fixed", base, fixed, tuple(_number_key(leaves[i]) for i in fixed))
        program = self.programs.get(key)
        if program is not None and program.guard():
            self.programs.move_to_end(key)
            if self.recheck_every is not None and self.calls % self.recheck_every == 0 and \
                    (program.numbers is None or _same_numbers(program.numbers, leaves)):
                return self._recheck(key, program, args, kwargs, leaves)
            if program.numbers is not None and not _same_numbers(program.numbers, leaves):
                return self._verify(base, program, args, kwargs, leaves)
            gens = program.generators
            states = [g.bit_generator.state for g in gens] if gens else None
            try:
                return program.run(leaves)
            except Recapture:  # (rolled back) a value-dependent shape changed: record again,
                for g, state in zip(gens, states or ()):  # from the generators' states before
                    g.bit_generator.state = state
                del self.programs[key]
        result, program = self._record(args, kwargs, leaves, fixed)
        self._keep(base, program)
        return result

    # ------------------------------------------------------------ number arguments

    def _keep(self, base: Any, program: Program) -> None:
        """Cache ``program`` (recorded for signature ``base``): under ``base`` when every
        number argument is an input, else under the values of those found static."""
        fixed = program.fixed
        if not program.found <= set(fixed):
            fixed = tuple(sorted(set(fixed) | program.found))
            self._refix(base, fixed)
        self._put(base, program, fixed)

    def _put(self, base: Any, program: Program, fixed: tuple) -> None:
        if program.numbers is not None:
            program.numbers = tuple(n for n in program.numbers if n[0] not in fixed) or None
        key = ("fixed", base, fixed, tuple(program.recorded[i] for i in fixed)) if fixed else base
        self.programs[key] = program
        self.programs.move_to_end(key)
        while len(self.programs) > CACHE_SIZE:
            self.programs.popitem(last=False)

    def _refix(self, base: Any, fixed: tuple) -> None:
        """The numbers at leaf indices ``fixed`` decide ``base``'s program: its programs
        are keyed by their values from now on (each stays valid at the values it was
        recorded with)."""
        self._fixed[base] = fixed
        items = list(self.programs.items())
        self.programs.clear()
        for k, p in items:
            if k == base or (k[0] == "fixed" and k[1] == base):
                self._put(base, p, fixed)
            else:
                self.programs[k] = p

    def _verify(self, base: Any, program: Program, args: tuple, kwargs: dict, leaves: list) -> Any:
        """The first call with a new value of a number argument that is not yet confirmed
        an input: runs ``fn`` eagerly (its result is this call's), records again and
        compares the two recordings, the arrays derived from the number arguments
        masked. Equal: the numbers that changed are inputs, and later values replay.
        Different: they decide the program (``math.sqrt(lr)`` folded as a constant, a
        branch taken through NumPy), and are keyed by value from now on."""
        result, fresh = self._record(args, kwargs, leaves, program.fixed)
        changed = {i for i, v in program.numbers if _number_key(leaves[i]) != v}
        same = fresh.vprint == program.vprint
        found = fresh.found - set(program.fixed)
        if same and not found:
            self.traces -= 1  # a check, not a new program
            program.numbers = tuple(n for n in program.numbers if n[0] not in changed) or None
            return result
        fixed = tuple(sorted(set(program.fixed) | found | (set() if same else changed)))
        self._refix(base, fixed)
        self._put(base, fresh, fixed)
        return result

    def _record(self, args: tuple, kwargs: dict, leaves: list,
                fixed: tuple = ()) -> tuple[Any, Program]:
        with _collector_off():
            result, program, inputs = self._record_step(args, kwargs, leaves, fixed)
        if inputs is not None:  # (the recording's own references to the numbers are gone)
            program.values_read.extend(inputs.settle(_roots(self.fn, program)))
            program.found = set(inputs.static)
            program.static_uses = dict(inputs.static)
        return result, program

    def _record_step(self, args: tuple, kwargs: dict, leaves: list,
                     fixed: tuple) -> tuple[Any, Program, NumberInputs | None]:
        given = leaves
        places = signature(args, kwargs, self._static)[2]  # (the recording: the slow path)
        args, kwargs, leaves, wrapped = _as_tensors(args, kwargs, leaves)
        inputs = None
        if places:
            inputs = NumberInputs()
            args, kwargs, leaves = _as_numbers(args, kwargs, leaves, places, inputs)
        legacy = _legacy_position()  # where NumPy's global generator is
        values, objects = plain_reads(self.fn)
        try:
            with Recorder(lines=self.recheck_every is not None) as rec:
                result = self.fn(*args, **kwargs)
                if inputs is not None:
                    inputs.finish(rec.log, result)
                    result = _plain_numbers(result)
        except AttributeError as e:
            if isinstance(getattr(e, "obj", None), Tensor) and wrapped:
                raise AttributeError(
                    f"dg.compile: while recording, every array argument enters fn as a Tensor "
                    f"(so that NumPy arithmetic on it is recorded), and Tensor has no attribute "
                    f"{e.name!r}: use the Tensor's own method (or compute it outside fn)") from e
            raise
        finally:
            if inputs is not None:
                inputs.open = False
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
        program.fixed = tuple(fixed)
        program.recorded = {i: _number_key(x) for i, x in enumerate(given)
                            if type(x) is float or type(x) is int}
        program.numbers = tuple((i, program.recorded[i]) for _, i in places
                                if i not in fixed) or None
        program.vprint = _verification_print(rec, leaves, program) if program.numbers else None
        self.traces += 1
        return result, program, inputs

    def _recheck(self, key: Any, program: Program, args: tuple, kwargs: dict, leaves: list) -> Any:
        put_back = _state_of(program, leaves)
        try:
            result, fresh = self._record(args, kwargs, leaves, program.fixed)
        except BaseException:
            put_back()
            raise
        self.traces -= 1  # a check, not a new program
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


def _plain_numbers(obj: Any) -> Any:
    """``fn``'s result with each number argument in it as the plain number."""
    return trees.map_leaves(obj, lambda x: x._dg_value if isinstance(x, _Input) else x)


def _same_numbers(numbers: tuple, leaves: list) -> bool:
    for i, v in numbers:
        if _number_key(leaves[i]) != v:
            return False
    return True


def _as_numbers(args: tuple, kwargs: dict, leaves: list, places: list,
                inputs: NumberInputs) -> tuple[tuple, dict, list]:
    """The call with each number input a ``NumberInput`` of ``inputs``, as ``fn`` sees
    it while recording."""
    args, kwargs, leaves = list(args), dict(kwargs), list(leaves)
    for where, i in places:
        x = leaves[i] = inputs.make(leaves[i], i)
        if type(where) is int:
            args[where] = x
        else:
            kwargs[where] = x
    return tuple(args), kwargs, leaves


def _roots(fn: Any, program: Program) -> list:
    """Where ``NumberInputs.settle`` looks for a number ``fn`` stored: the objects ``fn``
    names (its closure, its bound ``self``, the globals its code names, the objects its
    code reads attributes of)."""
    roots: list = [obj for _, _, obj in program.objects_read]
    f = getattr(fn, "__func__", fn)
    if hasattr(fn, "__self__"):
        roots.append(fn.__self__)
    if not hasattr(f, "__code__") and hasattr(type(fn), "__call__"):  # a callable object
        roots.append(fn)
        f = getattr(type(fn).__call__, "__func__", type(fn).__call__)
    for cell in getattr(f, "__closure__", None) or ():
        try:
            roots.append(cell.cell_contents)
        except ValueError:
            pass
    code, g = getattr(f, "__code__", None), getattr(f, "__globals__", {})
    if code is not None:
        roots.extend(g[n] for n in code.co_names if n in g)
    return roots


def _verification_print(rec: Recorder, leaves: list, program: Program) -> list:
    """``fingerprint`` (the arrays derived from number arguments are derives from the
    argument: masked), and what else a replay hands on that a number could have reached:
    the result's constants and plain values, host steps' arguments, guarded attributes."""
    prints = fingerprint(rec, leaves)
    prints.append(("result", _template_print(program.template, program)))
    prints.append(("hosts", [(_print(e.args, by_identity=True), _print(e.kw, by_identity=True)) for e in rec.log
                             if type(e) is Host]))
    prints.append(("attrs", [(name, _print(v, by_identity=True)) for _, name, v in rec.attrs.values()]))
    return prints


def _template_print(t: Any, program: Program) -> Any:
    kind = type(t)
    if kind is Slot:
        return Const(_print(program.values[t.slot])) if t.slot in program.const else t
    if kind is Value:
        return Value(_print(t.value, by_identity=True))
    if kind is Object:
        return ObjectKey(id(t.obj))
    if kind is Argument:
        return t
    if kind is Named:
        return Named(t.type, tuple(_template_print(v, program) for v in t.items))
    if kind is Dict:
        return Dict(tuple((k, _template_print(v, program))
                          for k, v in sorted(t.items.items(), key=repr)))
    return kind(tuple(_template_print(v, program) for v in t.items))


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

    A Python float or int argument is an input of the program, read on every call, as
    long as ``fn`` only hands it to duograd's operations (``x * lr``, ``lr * p.grad``,
    ``dg.tensor(lr)``). A number whose value decides the program is keyed by its value
    instead (a new value records again): one used in Python (arithmetic with another
    number, a comparison, ``int()``, formatting), kept by ``fn`` (an op's keyword such as
    ``dim=``, a host step's argument, stored into an attribute or an optimizer's options),
    or found by the verification, which runs ``fn`` eagerly at the first new value of a
    number and compares the two recordings (``math.sqrt(lr)``, ``range(n)``).
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
    ([[0.5, 1.5], [0.25, 1.25], [0.125, 1.125]], 1)

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
