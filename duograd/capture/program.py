"""A compiled program and its replay: the loop over the instructions, the per-call
state (held-back ``.grad`` writes, snapshots for a failure after a host step) and the
result rebuilt from the output template."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np

from .. import random as dg_random
from .._tensor import Tensor, _wrap
from .instructions import KERNELS
from .refs import Arg, Argument, List, Made, Named, Object, Slot, Tuple, Value, slots_in
from .passes import finish


_MISSING = object()


class _Replay:
    """The per-call state of a replay: the call's arguments, the held-back ``.grad``
    writes, the Tensors made for ``.grad``, and snapshots for a failure after a host step."""

    __slots__ = ("args", "pending", "made", "snapshots", "undo", "copies", "at")

    def __init__(self, args: list) -> None:
        self.args = args
        self.pending: dict[Tensor, Tensor | None] = {}
        self.made: dict[int, Tensor] = {}
        self.snapshots: list | None = None
        self.undo: list = []  # (tensor, its array before a write), for a failure after it
        self.copies: list = []  # (array, its values before an in-place write)
        self.at = -1  # the instruction that failed (Program._loop)

    def resolve(self, ref: Any, env: list) -> Tensor:
        """The tensor a leaf reference names in this call (``refs``)."""
        kind = type(ref)
        if kind is Arg:
            return self.args[ref[1]]
        if kind is Made:
            t = self.made.get(ref[1])
            if t is None:
                t = self.made[ref[1]] = _wrap(env[ref[1]], ref[2])
            return t
        return ref[1]

    def tensor(self, s: int, env: list) -> Tensor:
        t = self.made.get(s)
        if t is None:
            t = self.made[s] = _wrap(env[s])
        return t

    def commit(self) -> None:
        for leaf, value in self.pending.items():
            leaf._grad = value
        self.pending.clear()

    def before_host(self, fargs: tuple) -> None:
        """Snapshot what a host step changes (its object's parameters, gradients and
        state), once per replay, so that a later failure can put it back."""
        if self.snapshots is None:
            self.snapshots = []
        self.snapshots.append(_snapshot(fargs))

    def rollback(self) -> None:
        for restore in reversed(self.snapshots or []):
            restore()
        for t, arr in reversed(self.undo):
            t._data = arr
        for arr, values in reversed(self.copies):
            arr[...] = values


def _reached(fargs: Any) -> tuple[dict, list]:
    """The Tensors (by id) and the objects (an optimizer, a scheduler and its optimizer)
    among ``fargs``, a host step's arguments: what it can change."""
    owners: list = []
    tensors: dict[int, Tensor] = {}

    def visit(x: Any) -> None:
        if isinstance(x, Tensor):
            tensors.setdefault(id(x), x)
        elif isinstance(x, (list, tuple)):
            for v in x:
                visit(v)
        elif hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x) \
                and all(o is not x for o in owners):
            owners.append(x)
            visit(list(getattr(x, "params", ())))
            if hasattr(x, "optimizer"):
                visit(x.optimizer)
    visit(list(fargs))
    return tensors, owners


def _snapshot(fargs: tuple) -> Callable[[], None]:
    """A function that puts back what a host step called with ``fargs`` can change: the
    values and gradients of the Tensors among them (an optimizer's ``params`` included)
    and the attributes of the objects among them (an optimizer's state, a scheduler and
    its optimizer)."""
    tensors, owners = _reached(fargs)
    memo = {id(t): t for t in tensors.values()}
    memo.update({id(o): o for o in owners})
    saved_tensors = [(t, t._data, t._data.copy(), t._grad) for t in tensors.values()]
    saved_vars = [(o, {k: copy.deepcopy(v, memo) for k, v in vars(o).items()}) for o in owners]

    def restore() -> None:
        for t, arr, values, g in saved_tensors:
            if t._data is arr and arr.flags.writeable:
                arr[...] = values  # in place: an array shared through from_numpy stays shared
            else:
                t._data = values
            t._grad = g
        for o, attrs in saved_vars:
            vars(o).update(attrs)
    return restore


def _with_releases(code: list, instructions: list, template: Any) -> list:
    """The replay's code with a sixth field per instruction: the slots whose last reader it
    is (None for most), which the replay then lets go of. A replay writes each result into
    a slot of its own, so without this every temporary of the step stayed alive to its
    end (an LSTM's back-propagation through time: thousands of them, a fresh page of
    memory for each new array, where the eager run reuses the memory it just freed)."""
    keep = set(slots_in(template))
    last: dict = {}
    for k, ins in enumerate(instructions):
        for s in ins.reads:
            last[s] = k
    dead: list = [None] * len(code)
    for s, k in last.items():
        if s in keep or not isinstance(s, int):
            continue
        if dead[k] is None:
            dead[k] = []
        dead[k].append(s)
    return [c + (tuple(d) if d else None,) for c, d in zip(code, dead)]


# A program replays through ``Program._loop`` until it has run this many times, then
# through ``_generate``'s straight-line code: writing and compiling that costs about 20 us
# of Python's compiler per instruction, and it saves about 0.2 us per instruction per
# replay (the loop's unpacking and dispatch), so it pays after about a hundred replays.
# Tests set it to 0 to run every replay through the generated code.
GENERATE_AFTER = 100


def _generate(code: list) -> Callable[[list, "_Replay"], None]:
    """The replay of ``code`` (``_with_releases``'s tuples) as one Python function of
    ``(env, st)`` that makes the same calls, in the same order, as ``Program._loop``: each
    instruction one line, with its slots as constants and its kernel, buffer and slot
    tuple as names of the function's globals. Line ``k + 2`` of its source is instruction
    ``k`` (line 1 is the ``def``), releases of dead slots included, so that ``_failed_at``
    finds the failing instruction from the traceback."""
    names: dict[str, Any] = {}
    lines = ["def replay(env, st):"]
    for k, (kind, f, a, b, o, dead) in enumerate(code):
        fk = f"f{k}"
        names[fk] = f
        if kind == 1:
            line = f"env[{o}] = {fk}(env[{a}], env[{b}])"
        elif kind == 0:
            line = f"env[{o}] = {fk}(env[{a}])"
        elif kind == 6:
            names[f"b{k}"] = b
            line = f"env[{o}] = {fk}(env[{a[0]}], env[{a[1]}], out=b{k})"
        elif kind == 5:
            names[f"b{k}"] = b
            line = f"env[{o}] = {fk}(env[{a}], out=b{k})"
        elif kind == 3:
            line = f"env[{o}] = {fk}._data"
        elif kind == 2:
            line = f"env[{o}] = {fk}({''.join(f'env[{i}], ' for i in a)})"
        else:
            line = f"{fk}(env, st)"
        if dead:
            line += "; " + " = ".join(f"env[{s}]" for s in dead) + " = None"
        lines.append("    " + line)
    lines.append("    return None")
    exec(compile("\n".join(lines), "<duograd replay>", "exec"), names)
    return names["replay"]


def _failed_at(e: BaseException, replay: Callable) -> int:
    """The instruction of ``_generate``'s ``replay`` that raised ``e``: the line of the
    replay's frame in the traceback (line 1 is the ``def``, line ``k + 2`` instruction k)."""
    code, tb, line = replay.__code__, e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line - 2


def generators_of(draws: list) -> list:
    """The NumPy generators the recorded draws ``(fn, args)`` draw from: the function's
    owner, its arguments and attributes, and duograd's own generator."""
    gens: dict = {}
    for fn, args in draws:
        owner = getattr(fn, "__self__", None)
        near = list(vars(owner).values()) if hasattr(owner, "__dict__") else []
        for g in (owner, *args, *near, dg_random.as_rng()):
            if isinstance(g, np.random.Generator):
                gens[id(g)] = g
    return list(gens.values())


class Program:
    """One recorded step, compiled: instructions over a list of slots. Every field is
    declared here: those of the draft (``lowering.Builder.build``), those ``Compiled``
    fills after the recording (what ``fn`` read, the number arguments, the fingerprints),
    and those the first replay fills (the finished code)."""

    backend: str = "numpy"  # which backend runs it (``xla.XlaProgram``: "xla")

    def __init__(self, draft: dict, reuse_buffers: bool | None = None) -> None:
        self._draft = draft
        self._reuse_buffers = reuse_buffers
        self._code: list | None = None
        self.instructions: list = []     # the finished instructions (``instructions.Instr``)
        self.labels: list = []           # each one's label, for errors
        self._freeing: list = []         # the replay loop's tuples (``_with_releases``)
        # the replay as generated Python (``_generate``), once it has run GENERATE_AFTER
        # times through the loop; None before
        self._generated: Callable | None = None
        self._replays = 0
        self.values = draft["values"]
        self.arg_slots = draft["arg_slots"]
        self.guards = draft["guards"]
        self.template = draft["template"]
        self.const = draft["const"]
        self.attrs = draft["attrs"]    # (object, name, value): attributes the recording read
        self.hosts = draft["hosts"]
        self.draws = draft["draws"]
        # the generators the draws move (put back when a replay is abandoned: Recapture)
        self.generators: list = generators_of(self.draws)
        self.prints: list | None = None  # the recording's fingerprint, kept for recheck_every
        # what fn's code reads outside its arguments (capture.reads): (a dict, a closure
        # cell with name None, or an object read with getattr; name; value), compared by
        # value, and the objects on the way to them, compared by identity
        self.values_read: list = []
        self.objects_read: list = []
        # the number arguments that entered the recording as stand-ins (0-d Tensors: set by
        # ``Compiled._record``), as (leaf index, dtype): each call's value becomes a 0-d
        # array of that dtype in the argument slot
        self.standins: tuple = ()
        self.lines: list | None = None   # recheck_every: each record's user line

    @property
    def code(self) -> list:
        """The instructions, as the tuples ``(kind, kernel, a, b, out)`` the replay loop
        reads, finished on first use (``instructions.Instr`` has the full ones)."""
        if self._code is None:
            d = self._draft
            self.instructions = finish(d["code"], d["loads"], d["needed_out"], d["shapes"],
                                       d["dtypes"], self._reuse_buffers, d["strided"])
            self._code = [tuple(ins[:5]) for ins in self.instructions]
            self.labels = [ins.label for ins in self.instructions]
            self._freeing = _with_releases(self._code, self.instructions, self.template)
            self._draft = None
        return self._code

    @property
    def kernels(self) -> int:
        """How many NumPy kernels a replay runs."""
        return sum(1 for ins in self.code if ins[0] in KERNELS)

    def guard(self) -> bool:
        """Whether the tensors read but not given still have their recorded shapes, dtypes
        and ``requires_grad``, and the attributes the recording read (a module's
        ``training``, a Dropout's ``p``) their recorded values."""
        for t, shape, dtype, rg in self.guards:
            d = t._data
            if d.shape != shape or d.dtype != dtype or t.requires_grad != rg:
                return False
        for obj, name, value in self.attrs:
            v = getattr(obj, name, _MISSING)
            if v is not value and (type(v) is not type(value) or v != value):
                return False
        for where, name, value in self.values_read:
            try:
                v = where.cell_contents if name is None else where.get(name, _MISSING) \
                    if type(where) is dict else getattr(where, name, _MISSING)
            except ValueError:
                return False
            if v is not value and (type(v) is not type(value) or v != value):
                return False
        for where, name, obj in self.objects_read:
            try:
                v = where.cell_contents if name is None else where.get(name, _MISSING) \
                    if type(where) is dict else getattr(where, name, _MISSING)
            except ValueError:
                return False
            if v is not obj:
                return False
        return True

    def run(self, leaves: list) -> Any:
        env = self.values.copy()
        for (s, is_tensor), leaf in zip(self.arg_slots, leaves):
            env[s] = leaf._data if is_tensor else leaf
        st = _Replay(leaves)
        self.code  # (finished)
        replay = self._generated
        if replay is None:
            self._replays += 1
            if self._replays > GENERATE_AFTER:
                replay = self._generated = _generate(self._freeing)
        try:
            if replay is not None:
                replay(env, st)
            else:
                self._loop(env, st)
        except Exception as e:
            st.rollback()
            label = self.labels[_failed_at(e, replay) if replay is not None else st.at]
            if type(e) in (ValueError, IndexError, TypeError, FloatingPointError) and \
                    not str(e).startswith(label):
                raise type(e)(f"{label}: {e} (in a dg.compile replay)") from e
            raise
        st.commit()
        return self._rebuild(self.template, env, st, leaves)

    def _loop(self, env: list, st: _Replay) -> None:
        """The replay as a loop over the instructions (``_generate`` writes the same calls
        out as straight-line code); on a failure ``st.at`` is the failing instruction."""
        k = -1
        try:
            # The kinds are literals (instructions.py: CALL2 == 1, CALL1 == 0, BUF2 == 6,
            # BUF1 == 5, LOAD == 3, CALLN == 2, EFFECT == 4), most frequent first: this
            # loop is the whole cost a replay adds per kernel.
            for kind, f, a, b, o, dead in self._freeing:
                k += 1
                if kind == 1:
                    env[o] = f(env[a], env[b])
                elif kind == 0:
                    env[o] = f(env[a])
                elif kind == 6:
                    env[o] = f(env[a[0]], env[a[1]], out=b)
                elif kind == 5:
                    env[o] = f(env[a], out=b)
                elif kind == 3:
                    env[o] = f._data
                elif kind == 2:
                    env[o] = f(*[env[i] for i in a])
                else:
                    f(env, st)
                if dead:  # the slots nothing reads any more: their arrays go, as eagerly
                    for s in dead:
                        env[s] = None
        except Exception:
            st.at = k
            raise

    def _rebuild(self, t: Any, env: list, st: _Replay, leaves: list) -> Any:
        """``fn``'s result from its template (``refs``)."""
        kind = type(t)
        if kind is Slot:
            made = st.made.get(t[1])
            if made is not None:
                return made
            value = env[t[1]]
            return _wrap(value.copy() if t[1] in self.const else value)
        if kind is Argument:
            return leaves[t[1]]
        if kind is Object or kind is Value:
            return t[1]
        if kind is List:
            return [self._rebuild(v, env, st, leaves) for v in t[1]]
        if kind is Tuple:
            return tuple(self._rebuild(v, env, st, leaves) for v in t[1])
        if kind is Named:
            return t[1](*[self._rebuild(v, env, st, leaves) for v in t[2]])
        return {k: self._rebuild(v, env, st, leaves) for k, v in t[1].items()}
