"""Recording: the signature of a call, and the listener that records ``fn``'s eager run.

The recorder is a listener on the stack of ``duograd._context`` (``records = True``):
it appends every primitive call, as ``(op, xs, kw, out)``, and every effect, as one of
``_context``'s effect records (``Accumulate``, ``SetGrad``, ``Derive``, ``Draw``,
``Host``), to one log in call order; it notes the Tensors made from data, and warns
when the step reads a tensor's value into Python or writes one in place.

Also here: the signature of a call (``signature``: one walk of the arguments,
``trees.flatten``) and the number arguments' stand-ins (``standin``, ``Numbers``): 0-d
Tensors whose uses the engine already reports (reads through ``_context.read``, the
primitive calls and effects the recorder sees), and a weak reference for the ones ``fn``
kept; never the interpreter's reference counts or the collector's referrers.
"""

from __future__ import annotations

import gc
import warnings
import weakref
import zlib
from typing import Any

import numpy as np

from .. import _context, _tensor, _versions, autograd
from .._context import Derive, Draw, Host, Update
from .._node import Node
from .._tensor import Tensor, _wrap
from . import trees


def _key(obj: Any, leaves: list, where: str) -> Any:
    """A hashable key of argument ``obj``: its structure (``trees.flatten``) and each
    leaf's spec (``_spec``)."""
    if not trees.is_container(obj):  # (the common case, on every call: a Tensor, an array)
        return _spec(obj, leaves, obj, 0, where)
    items: list = []
    structure = trees.flatten(obj, items)
    return structure, tuple(_spec(x, leaves, obj, k, where) for k, x in enumerate(items))


def _spec(x: Any, leaves: list, obj: Any, k: int, where: str) -> Any:
    """A leaf's part of the key: a Tensor or array by its type, shape, dtype and layout
    (it goes to ``leaves``), any other value by itself (it must be hashable; a float by
    its bits, so that -0.0 is not 0.0)."""
    if isinstance(x, Tensor):
        leaves.append(x)
        d = x._data
        return ("T", d.shape, d.dtype.str, x.requires_grad, d.flags.c_contiguous)
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"dg.compile: {_place(obj, k, where)} is an array of dtype "
                            f"{x.dtype} (shape {x.shape}), which cannot be part of a "
                            "signature; pass numbers as a numeric array or a Tensor")
        leaves.append(x)
        return ("A", x.shape, x.dtype.str, x.flags.c_contiguous)
    if type(x) is slice and all(v is None or type(v) is int for v in (x.start, x.stop, x.step)):
        return ("S", x.start, x.stop, x.step)  # (a slice is hashable from Python 3.12 on only)
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"dg.compile: {_place(obj, k, where)} of type {type(x).__name__} "
                        "cannot be part of a signature (it is compared by value, so it must "
                        "be hashable); pass Tensors, NumPy arrays or plain Python values") from None
    return ("V", type(x), x.hex() if type(x) is float else x)


def _place(obj: Any, k: int, where: str) -> str:
    """Where leaf ``k`` of argument ``obj`` (named ``where``) is, for an error."""
    paths: list = []
    trees.flatten(obj, [], paths, where)
    return paths[k]


def _aliases(leaves: list) -> tuple | None:
    """None when every argument array is its own; else, per argument, the first argument
    that is the same object or holds the same array (argument slots are positional, so a
    call that passes one array twice is another program than one passing two)."""
    ids = [id(x._data) if isinstance(x, Tensor) else id(x) for x in leaves]
    if len(set(ids)) == len(ids) and len(set(map(id, leaves))) == len(leaves):
        return None
    return tuple((ids.index(i), [id(y) for y in leaves].index(id(x))) for i, x in zip(ids, leaves))


def signature(args: tuple, kwargs: dict, static: Any = frozenset()) -> tuple[Any, list, list]:
    """The signature of a call (types, shapes, dtypes, layouts, values, which arguments
    are the same array, grad mode), its arrays, and where its number arguments are. A
    Python float or int argument (not a bool, not inside a container, not named in
    ``static`` by position or name) is in the signature by its type, and a leaf (its value)
    like the arrays (``Compiled`` keys by its value while it is static); ``places`` lists
    them as ``(position or name, leaf index)``."""
    leaves: list = []
    places: list = []
    parts = []
    for i, a in enumerate(args):
        t = type(a)
        if (t is float or t is int) and i not in static:
            places.append((i, len(leaves)))
            leaves.append(a)
            parts.append(t)
        else:
            parts.append(_key(a, leaves, f"argument {i}"))
    named = []
    for k in sorted(kwargs):
        a = kwargs[k]
        t = type(a)
        if (t is float or t is int) and k not in static:
            places.append((k, len(leaves)))
            leaves.append(a)
            named.append((k, t))
        else:
            named.append((k, _key(a, leaves, f"argument {k!r}")))
    arrays = [x for x in leaves if type(x) is not float and type(x) is not int] if places \
        else leaves
    key = (tuple(parts), tuple(named), autograd.is_grad_enabled(),
           _aliases(arrays) if len(arrays) > 1 else None)
    return key, leaves, places


# ---------------------------------------------------------------- number arguments

def standin(value: Any) -> Tensor:
    """The 0-d Tensor a number argument enters ``fn`` as, in a recording that makes it an
    input of the program: float64 for a float, int64 for an int (an argument slot, so
    ``x * lr`` is a recorded operation on an input). While the recording runs, the engine
    ranks it, and what is computed from it alone, as the Python number it stands for
    (``_tensor._WEAK``)."""
    return _wrap(np.array(value, dtype=np.float64 if type(value) is float else np.int64))


# The operations on numbers alone whose NumPy kernels give the bits Python's arithmetic
# gives (IEEE float64 and int64 arithmetic, NumPy's floor division and remainder following
# Python's); any other (``round(lr, 1)``, ``lr ** 2``) makes the number static.
_PYTHON_EXACT = frozenset(("add", "sub", "mul", "div", "neg", "abs", "floor_divide", "remainder",
                           "cast"))


class Numbers:
    """The stand-ins of one recording (``Recorder(numbers=...)``) and the uses that make
    their numbers static: their values read into Python (``float(lr)``, ``bool(lr > 0)``,
    ``.item()``, ``np.asarray``: ``_context.read``), an op's keyword, a host step's or a
    draw's argument, a module setting, an array derived from one outside the operations
    (other than ``dg.tensor(lr)``), returned where a number is computed from them alone, or
    still referenced after the recording (``alive``: a weak reference)."""

    def __init__(self, standins: dict) -> None:
        # id(array) -> the leaf indices (of the stand-ins) its values come from
        self.deps: dict[int, frozenset] = {id(t._data): frozenset((i,)) for i, t in standins.items()}
        self.taint: dict[int, str] = {}  # leaf -> the first use that makes it static
        # (weak reference, leaves) of the stand-ins and of what is computed from them alone
        self.refs: list = [(weakref.ref(t), frozenset((i,))) for i, t in standins.items()]
        self.own: set[int] = {id(t) for t in standins.values()}  # (ids, while they live)
        self.kept: set[int] = set()      # the leaves of those still referenced (``alive``)
        self.start = set(self.deps)

    def open(self) -> None:
        _tensor._WEAK.update(self.start)

    def close(self) -> None:
        _tensor._WEAK.clear()

    def use(self, leaves: frozenset, how: str) -> None:
        for i in leaves:
            self.taint.setdefault(i, how)

    def held(self, obj: Any, how: str) -> None:
        deps = self.deps
        for x in trees.leaves_of(obj):
            if isinstance(x, Tensor):
                d = deps.get(id(x._data))
                if d is not None:
                    self.use(d, how)

    def call(self, call: tuple) -> None:
        op, xs, kw, out = call
        deps, weak = self.deps, _tensor._WEAK
        d = None
        alone = True
        for x in xs:
            i = id(x._data)
            s = deps.get(i)
            if s is not None:
                d = s if d is None else d | s
            if i not in weak:
                alone = False
        if kw:
            self.held(kw, f"a keyword of {op.name!r}")
        if d is not None:
            o = id(out._data)
            deps[o] = d
            if alone:  # computed from numbers alone: a number, as the eager run has it
                if op.name not in _PYTHON_EXACT:
                    self.use(d, f"{op.name!r} computed from it alone (Python's own may differ)")
                weak.add(o)
                self.refs.append((weakref.ref(out), d))
                self.own.add(id(out))

    def effect(self, e: Any) -> None:
        kind = type(e)
        if kind is Derive:
            d = self.deps.get(id(e.source))
            if d is not None:
                if e.fn is _tensor._as_array and not (
                        e.kw.get("dtype") is None and e.out.dtype.kind == "f"
                        and e.out.dtype != _tensor._default_float):
                    self.deps[id(e.out)] = d  # dg.tensor(lr): a tensor of the input
                else:
                    self.use(d, "an array derived from it outside the operations")
        elif kind is Host:
            self.held((e.args, e.kw), f"an argument of the host step {getattr(e.fn, '__qualname__', e.fn)!r}")
        elif kind is Draw:
            self.held(e.args, "a draw's argument")

    def finish(self, result: Any) -> None:
        """After ``fn`` returned ``result``: a returned stand-in, or a Tensor computed from
        stand-ins alone (the eager run returns a number there), makes them static."""
        weak = _tensor._WEAK
        for x in trees.leaves_of(result):
            if isinstance(x, Tensor) and id(x._data) in weak:
                d = self.deps.get(id(x._data))
                if d is not None:
                    self.use(d, "returned")

    def unhold(self, roots: list) -> None:
        """Let the graphs of ``roots`` (the result's tensors, the ``.grad`` of the tensors
        read) save a plain Tensor of the same array where they saved a stand-in (or a
        number computed from them alone), so that only what ``fn`` itself kept holds one."""
        own = self.own
        seen: set[int] = set()
        todo = []
        for t in roots:
            if isinstance(t, Tensor):
                todo.append(t._node)
                g = t._grad
                if g is not None:
                    todo.append(g._node)
        while todo:
            n = todo.pop()
            if type(n) is not Node or id(n) in seen:
                continue
            seen.add(id(n))
            ins = n.inputs
            if ins and any(id(x) in own for x in ins):
                n._link(n.next, tuple(_wrap(x._data) if id(x) in own else x for x in ins))
            if n.next:
                todo.extend(n.next)

    def alive(self) -> None:
        """After the recording and its program let go of them: a stand-in (or a number
        computed from them alone) still referenced was stored by ``fn``."""
        live = [d for r, d in self.refs if r() is not None]
        if live:
            gc.collect()  # (only a cycle of garbage may hold them: then they go)
            live = [d for r, d in self.refs if r() is not None]
        for d in live:
            self.kept |= d
            self.use(d, "kept by fn (stored into an attribute, an optimizer's options or a container)")
        self.refs = []


def warn_at_user_line(message: str) -> None:
    """``warnings.warn(message)`` pointing at the user's line (the first frame outside
    duograd); ``{line}`` in ``message`` becomes its "file:line"."""
    f, level, _ = _context.user_frame(1)
    line = f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"
    warnings.warn(message.format(line=line), RuntimeWarning, stacklevel=level)


class Recorder(_context.listening_to):
    """The listener of one recording: ``with Recorder() as rec: fn(...)``."""

    records = True  # a host step's inside and the engine's sum into .grad are not seen

    def __init__(self, lines: bool = False, numbers: Numbers | None = None) -> None:
        self.numbers = numbers         # the number arguments' stand-ins, if any
        self.log: list = []            # (op, xs, kw, out) per call, an effect record per effect
        self.made: set[int] = set()    # ids of Tensors made from data during the recording
        self.keep: list = []           # everything the log names stays alive: ids stay unique
        self.attrs: dict = {}          # (id(obj), name) -> (obj, name, value): the guards
        self.sums: dict = {}           # id(array) -> (array, checksum): leaves' arrays read
        self.outputs: set[int] = set()  # ids of the arrays the primitive calls returned
        log, sums, outputs = self.log, self.sums, self.outputs
        lines = self.lines = [] if lines else None  # recheck_every: each record's user line

        def on_call(call: tuple) -> None:
            # The arrays of the leaves read (parameters, arguments, constants) are
            # checksummed when first read and checked at each host step and at the end: a
            # write into them through NumPy (``p.data -= ...``), which no replay could redo,
            # raises instead of training silently once.
            for x in call[1]:
                d = x._data
                i = id(d)
                if i not in sums and i not in outputs and d.flags.writeable:  # (not the others)
                    sums[i] = (d, _checksum(d))
            log.append(call)
            outputs.add(id(call[3]._data))
            if numbers is not None:
                numbers.call(call)
            if lines is not None:
                lines.append(_user_line())

        def on_effect(e: Any) -> None:
            if type(e) is Host or type(e) is Update:  # it may write them: checked now, taken afresh after
                self.check(f"before the host step {getattr(e.fn, '__qualname__', e.fn)!r}")
                sums.clear()
            log.append(e)
            if numbers is not None:
                numbers.effect(e)
            if lines is not None:
                lines.append(_user_line())
        self.on_call, self.on_effect = on_call, on_effect

    def check(self, when: str) -> None:
        """Raise if an array read as a leaf's values changed since it was first read."""
        for d, c in self.sums.values():
            if _checksum(d) != c:
                raise RuntimeError(
                    f"dg.compile: fn changed the values of a tensor it reads (shape {d.shape}, "
                    f"{d.dtype}) in place through NumPy ({when}): a write into `p.data`, "
                    "`x.numpy()` or an array shared with a tensor (`p.data -= ...`, "
                    "`x.numpy()[i] = ...`). No recording sees such a write, so no replay could "
                    "redo it. Write with Tensor operations (`p.data = (p - lr * p.grad).detach()`, "
                    "in-place methods) or an optimizer")

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        # the listener's closures hold the recorder (a cycle, which the collector, off
        # while recording, would free only later): let go of them, so that the log and
        # what it names go as soon as the program is built (Numbers.alive)
        del self.on_call, self.on_effect
        if exc[0] is None:
            self.check("found at the end of the recording")

    def on_attr(self, obj: Any, name: str, value: Any) -> None:
        if self.numbers is not None:
            self.numbers.held(value, f"the setting {name!r} of a {type(obj).__name__}")
        self.attrs.setdefault((id(obj), name), (obj, name, value))

    def on_create(self, t: Tensor) -> None:
        self.made.add(id(t))
        self.keep.append(t)

    def on_read(self, t: Tensor, what: str) -> None:
        if self.numbers is not None:
            d = self.numbers.deps.get(id(t._data))
            if d is not None:  # a number argument's value decides something: it is static
                self.numbers.use(d, f"read into Python ({what})")
                return
        warn_at_user_line(f"dg.compile: {what} at {{line}} reads a tensor's value while "
                          "recording; a replay does not run this line again, so any decision or "
                          "number computed from it is frozen at its recorded value "
                          "(recheck_every=N re-runs eagerly to catch a change)")

    def on_write(self, t: Tensor, what: str, value: Any = None, src: Any = None) -> None:
        """``t`` was written (its new values are ``t._data``), or is about to be written in
        place with ``value``'s values: an effect the replay redoes, when the values come from
        the primitives; else an error, here, at the user's line."""
        d = t._data
        if value is not None and _versions.through_data(d):
            raise RuntimeError(
                f"dg.compile: {what} writes in place through `.data` (shape {d.shape}, {d.dtype}), "
                "a tensor sharing another tensor's memory that no replay could find again. Write "
                "to the tensor itself under no_grad (`with dg.no_grad(): p.add_(...)`) or with an "
                "optimizer")
        if value is not None:  # in place (inplace.write): value is a Tensor of the recording
            seen = self.sums.pop(id(d), None)
            if seen is not None and _checksum(d) != seen[1]:
                self.sums[id(d)] = seen
                self.check(f"found at {what}")
            local = id(t) in self.made or id(d) in self.outputs  # a tensor of the step
            self.on_effect(Write(t, value, what, _user_line(), True, d.copy() if local else None,
                                 src if src is not None and src is not t and src._data is d else None))
            return
        seen = self.sums.get(id(d))
        if seen is not None and _checksum(d) == seen[1]:
            return  # the array it had, unchanged (``p.data = p.data``)
        if seen is not None or id(d) not in self.outputs:
            how = ("its own array, changed in place through NumPy (`p.data -= ...`)"
                   if seen is not None else "values computed outside duograd's operations")
            raise RuntimeError(
                f"dg.compile: {what} stores {how} (shape {d.shape}, {d.dtype}); no recording "
                "sees such values, so no replay could compute them again. Write with Tensor "
                "operations (`p.data = (p - lr * p.grad).detach()`, in-place methods) or an "
                "optimizer")
        self.on_effect(Write(t, d, what, _user_line(), src=src))


def _checksum(d: np.ndarray) -> int:
    return zlib.crc32(d if d.flags.c_contiguous else np.ascontiguousarray(d))


def _user_line() -> str:
    f, _, _ = _context.user_frame(2)
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


class Write:
    """``t``'s values became ``value`` (``t.data = ...``, an in-place op) at ``line``."""

    __slots__ = ("t", "value", "what", "line", "inplace", "before", "src")

    def __init__(self, t: Any, value: Any, what: str, line: str, inplace: bool = False,
                 before: Any = None, src: Any = None) -> None:
        self.t, self.value, self.what, self.line = t, value, what, line
        # in place: value is a Tensor; before, t's values before (a tensor of the step);
        # src, the stand-in the op read that shares t's array (also of a new view, write_shape)
        self.inplace, self.before, self.src = inplace, before, src

    def lower(self, b: Any) -> None:
        b.write(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("write", self.what, p.ref(self.t), p.seen(self.value))
