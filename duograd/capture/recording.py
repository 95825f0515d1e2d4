"""Recording: the signature of a call, and the listener that records ``fn``'s eager run.

The recorder is a listener on the stack of ``duograd._context`` (``records = True``):
it appends every primitive call, as ``(op, xs, kw, out)``, and every effect, as one of
``_context``'s effect records (``Accumulate``, ``SetGrad``, ``Derive``, ``Draw``,
``Host``), to one log in call order; it notes the Tensors made from data, and warns
when the step reads a tensor's value into Python or writes one in place.

Also here: the signature of a call (``signature``: one walk of the arguments,
``trees.flatten``) and the number arguments' stand-ins (``NumberInputs``), which find the
uses that decide the program from the numbers' own methods, from the records that hold
them, and from whether they are still alive after the recording (a weak reference),
never from the interpreter's reference counts or the collector's referrers.
"""

from __future__ import annotations

import types
import warnings
import weakref
import zlib
from typing import Any

import numpy as np

from .. import _context, _versions, autograd
from .._context import Draw, Host, Update
from .._tensor import Tensor, _Input
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
    """The cache key of a call (types, shapes, dtypes, layouts, values, which arguments
    are the same array, grad mode), its arrays, and where its number inputs are. A Python
    float or int argument (not a bool, not inside a container, not named in ``static`` by
    position or name) is an input of the program: keyed by its type, and a leaf (its
    value) like the arrays; ``places`` lists them as ``(position or name, leaf index)``."""
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

class NumberInputs:
    """The number arguments of one recording, each entering ``fn`` as a ``NumberInput``.

    A number is an input of the program (computed from each call's value by the replay)
    when the only thing ``fn`` does with it is hand it to the engine, which makes a 0-d
    array of it (``x * lr``, ``lr * p.grad``, ``dg.tensor(lr)``: ``_tensor._odd_number``,
    a ``Derive`` from the argument). Any other use makes it *static* (the program is then
    keyed by its value), found three ways, none of which looks at the interpreter's
    internals:

    - a use that decides something in Python: arithmetic with another number, a
      comparison, ``bool``/``int``/``float``/``round``/``str``/``hash`` (the methods of
      the subclasses below report it while the recording is open);
    - a use the recording itself holds on to (``finish``): an op's keyword (``dim=n``),
      a draw's or a host step's argument, the returned value;
    - a use that outlives the recording (``settle``): once the recording and the
      program built from it let go of their references, a number still alive (a weak
      reference to a small object that only the number holds, ``_Life``: an int subclass
      takes no weak reference itself) was stored by ``fn``: into an attribute, an
      optimizer's options, a list. It is then looked for from the objects ``fn``'s code names (its closure, its
      globals, ``self``), a few containers deep: each dict entry or list item holding it
      gets the plain number back, and a dict entry is guarded (a replay does not store
      it again: another value there records again).

    Uses that read the value without a method (``math.sqrt(lr)``, ``np.float64(lr)``) are
    found by ``Compiled``'s verification, which records again at the first new value and
    compares.
    """

    def __init__(self) -> None:
        self.static: dict[int, str] = {}   # leaf index -> the first use that made it static
        self.open = True
        self.refs: list = []               # (leaf, value, weakref to its _Life, id of the instance)

    def make(self, value: Any, leaf: int) -> Any:
        x = (FloatInput if type(value) is float else IntInput)(value)
        # An int subclass takes no weak reference: the instance holds the one reference
        # to a small object that does, which lives exactly as long as the instance.
        x._dg_value, x._dg_leaf, x._dg_inputs, x._dg_life = value, leaf, self, _Life()
        self.refs.append((leaf, value, weakref.ref(x._dg_life), id(x)))
        return x

    def finish(self, log: list, result: Any) -> None:
        """After ``fn`` ran: a number held by a record other than a ``Derive`` of it (an
        op's keyword, a draw's or host step's argument) or returned is static."""
        def held(obj: Any, how: str) -> None:
            for x in trees.leaves_of(obj):
                if isinstance(x, _Input) and x._dg_inputs is self:
                    self.static.setdefault(x._dg_leaf, how)
        for e in log:
            if type(e) is tuple:
                if e[2]:
                    held(e[2], f"a keyword of {e[0].name!r}")
            elif type(e) is Host:
                held((e.args, e.kw), "a host step's argument")
            elif type(e) is Draw:
                held(e.args, "a draw's argument")
        held(result, "the result")
        self.open = False

    def settle(self, roots: list) -> list:
        """After the recording and its build let go of the numbers: each one still alive
        was stored by ``fn`` (static). Returns the dict entries found holding one, as
        ``(dict, key, number)`` (each given the plain number back), for the guards."""
        alive = {i: (leaf, value) for leaf, value, life, i in self.refs if life() is not None}
        self.refs = []
        if not alive:
            return []
        for leaf, _ in alive.values():
            self.static.setdefault(leaf, "kept by fn (stored into an attribute, an "
                                         "optimizer's options or a container)")
        return _put_back({i: value for i, (_, value) in alive.items()}, roots)

    def seen(self, x: Any, how: str) -> None:
        if self.open:
            self.static.setdefault(x._dg_leaf, how)


class _Life:
    """The weakly referenced stand-in of a ``NumberInput``'s lifetime."""

    __slots__ = ("__weakref__",)


def _put_back(numbers: dict, roots: list, depth: int = 4, budget: int = 20000) -> list:
    """Replace each of ``numbers`` (id of a live ``NumberInput`` -> its plain value) found in the dicts,
    lists and objects' ``__dict__`` reachable from ``roots`` (``depth`` containers deep,
    at most ``budget`` of them) by its plain value; the dict entries changed, as
    ``(dict, key, value)``."""
    stored: list = []
    seen: set[int] = set()
    frontier = list(roots)
    for _ in range(depth + 1):
        later: list = []
        for obj in frontier:
            if id(obj) in seen or len(seen) > budget:
                continue
            seen.add(id(obj))
            if type(obj) is dict:
                for k, v in list(obj.items()):
                    if isinstance(v, _Input) and id(v) in numbers:
                        obj[k] = numbers[id(v)]
                        stored.append((obj, k, obj[k]))
                    elif _walkable(v):
                        later.append(v)
            elif type(obj) is list:
                for i, v in enumerate(obj):
                    if isinstance(v, _Input) and id(v) in numbers:
                        obj[i] = numbers[id(v)]
                    elif _walkable(v):
                        later.append(v)
            elif type(obj) is tuple:
                later.extend(v for v in obj if _walkable(v))
            else:
                d = getattr(obj, "__dict__", None)
                if type(d) is dict:
                    later.append(d)
        frontier = later
    return stored


def _walkable(v: Any) -> bool:
    """Whether ``_put_back`` looks inside ``v``: a container or a plain object, not an
    array, a tensor, a class, a function or a module."""
    t = type(v)
    if t is dict or t is list or t is tuple:
        return True
    return hasattr(v, "__dict__") and not isinstance(
        v, (Tensor, np.ndarray, type, types.ModuleType, types.FunctionType, types.MethodType,
            types.BuiltinFunctionType))


def _plain(x: Any, how: str) -> Any:
    if isinstance(x, _Input):
        x._dg_inputs.seen(x, how)
        return x._dg_value
    return x


def _observing(base: type, name: str) -> Any:
    plain = getattr(base, name)

    def method(self: Any, *args: Any) -> Any:
        if args and isinstance(args[0], Tensor):
            return NotImplemented  # the Tensor's own operator: the engine lifts the number
        self._dg_inputs.seen(self, name)
        return plain(self._dg_value, *[_plain(a, name) for a in args])
    method.__name__ = name
    return method


def _observing_property(base: type, name: str) -> Any:
    def get(self: Any) -> Any:
        self._dg_inputs.seen(self, name)
        return getattr(self._dg_value, name)
    return property(get)


def _copy(self: Any, *args: Any) -> Any:
    self._dg_inputs.seen(self, "copy")
    return self._dg_value


def _reduce(self: Any, *args: Any) -> Any:
    self._dg_inputs.seen(self, "pickle")
    return (type(self._dg_value), (self._dg_value,))


_METHODS = [f"__{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "divmod",
                                 "pow", "and", "or", "xor", "lshift", "rshift")]
_METHODS += [m.replace("__", "__r", 1) for m in _METHODS]
_METHODS += ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__neg__", "__pos__",
             "__abs__", "__invert__", "__bool__", "__int__", "__float__", "__index__",
             "__trunc__", "__floor__", "__ceil__", "__round__", "__hash__", "__repr__",
             "__str__", "__format__", "__getnewargs__", "is_integer", "hex", "as_integer_ratio",
             "conjugate", "bit_length", "bit_count", "to_bytes"]


def _number_input_class(base: type) -> type:
    ns: dict = {"__module__": __name__, "__copy__": _copy, "__deepcopy__": _copy,
                "__reduce__": _reduce, "__reduce_ex__": _reduce}
    for name in _METHODS:
        if hasattr(base, name):
            ns[name] = _observing(base, name)
    for name in ("real", "imag", "numerator", "denominator"):
        if hasattr(base, name):
            ns[name] = _observing_property(base, name)
    return type(f"{base.__name__.capitalize()}Input", (_Input, base), ns)


FloatInput = _number_input_class(float)
FloatInput.__doc__ = "A float argument of a recording (``NumberInputs``)."
IntInput = _number_input_class(int)
IntInput.__doc__ = "An int argument of a recording (``NumberInputs``)."


def warn_at_user_line(message: str) -> None:
    """``warnings.warn(message)`` pointing at the user's line (the first frame outside
    duograd); ``{line}`` in ``message`` becomes its "file:line"."""
    f, level, _ = _context.user_frame(1)
    line = f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"
    warnings.warn(message.format(line=line), RuntimeWarning, stacklevel=level)


class Recorder(_context.listening_to):
    """The listener of one recording: ``with Recorder() as rec: fn(...)``."""

    records = True  # a host step's inside and the engine's sum into .grad are not seen

    def __init__(self, lines: bool = False) -> None:
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
            if lines is not None:
                lines.append(_user_line())

        def on_effect(e: Any) -> None:
            if type(e) is Host or type(e) is Update:  # it may write them: checked now, taken afresh after
                self.check(f"before the host step {getattr(e.fn, '__qualname__', e.fn)!r}")
                sums.clear()
            log.append(e)
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
        # what it names go as soon as the program is built (NumberInputs.settle)
        del self.on_call, self.on_effect
        if exc[0] is None:
            self.check("found at the end of the recording")

    def on_attr(self, obj: Any, name: str, value: Any) -> None:
        self.attrs.setdefault((id(obj), name), (obj, name, value))

    def on_create(self, t: Tensor) -> None:
        self.made.add(id(t))
        self.keep.append(t)

    def on_read(self, t: Tensor, what: str) -> None:
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
