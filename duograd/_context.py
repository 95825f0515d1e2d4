"""The engine's state, at the bottom of the house: grad mode, forward-mode levels, and
one stack of listeners.

Everything that watches the engine work is a *listener* pushed on one stack:
``dg.compile``'s recording (``duograd.capture``), ``autograd.trace``, anomaly mode and
``record_locations`` (``duograd.anomaly``), hooks and ``retain_grad``
(``duograd.hooks``) and ``dg.explain``. The engine tells the stack of events; a
listener defines a method for each event it wants, and nothing else is called. Nesting
is stack order: the events reach the listeners bottom first, so an inner block sees
what an outer one already did (a hook's return value, say). Nobody chains callbacks by
hand and no module writes another module's globals.

The events (all optional; what a listener lacks costs nothing):

==============================  =================================================================
``on_call(call)``               after every primitive call (forward, VJP rules, casts, seeds),
                                ``call`` being the tuple ``(op, xs, kw, out)`` (so that a
                                recording's ``on_call`` can be its list's ``append``)
``on_create(t)``                a Tensor made from data outside a primitive (``_tensor._wrap``)
``on_effect(effect)``           something a replay must redo that is not a primitive call: one of
                                the record types below (``Accumulate``, ``SetGrad``, ...)
``on_read(t, what)``            a tensor's value read into Python or NumPy (``item()``, ...)
``on_write(t, what, value, src)`` a tensor written: ``t.data = ...`` (``value`` None: the new
                                values are ``t._data``), or in place (``inplace.write``: in-place
                                ops, ``t[i] = v``; ``value`` the Tensor about to be copied into
                                ``t``'s array, ``src`` the stand-in for ``t``'s old values that
                                the op read), so that a recording can take each as an effect
``on_attr(obj, name, value)``   an attribute read that decides what a step computes (every read
                                of a module's ``.training``, a called module's settings, an
                                optimizer's structure), reported by ``attr``: where a recording
                                takes its guards
``on_pass(begin)``              a backward pass (``autograd.backpropagate``) begins / ends
``on_node(node, g) -> g``       backward: ``node``'s cotangent is complete (summed over every
                                use), before its rules run; the listener returns ``g`` or a
                                replacement (a hook's return value)
``on_edge(node, i, x, raw, gx)`` backward: the rule for input ``i`` gave ``raw``; ``gx`` is
                                it fitted to ``x``'s shape and dtype
``on_done(node, inputs, grads)`` backward: every rule of ``node`` ran; ``grads`` maps each
                                input to its cotangent so far
==============================  =================================================================

Two attributes shape what a listener sees. ``records = True`` (a recording: capture,
``trace``) hides it inside ``unrecorded()``, the work of a host step or of the
engine's own bookkeeping that a recording takes as one effect. ``opaque = True``
(``explain``) hides every listener below it while it is on the stack: its own walk
of the graph fires no hook, writes no ``.grad`` and lands in no recording.

The hot path (``Primitive.__call__``) tests one flag, ``hot``: ``watching`` (a listener of
``on_call`` or a forward-mode level is on) or saved-tensor hooks are. Everything else pays
one test of a tuple.

>>> import duograd as dg
>>> from duograd import _context
>>> class Count:
...     n = 0
...     def on_call(self, call):
...         self.n += 1
>>> with _context.listening(Count()) as c:
...     y = dg.tensor([1.0, 2.0]) * 3 + 1
>>> c.n, _context.watching
(2, False)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

# ---------------------------------------------------------------- grad mode and forward mode

grad_enabled = True              # whether primitive calls record the graph
fwd_active: set[int] = set()     # levels of the jvp calls in progress
fwd_below = float("inf")         # only levels below this propagate (masking while a rule runs)
batch_levels: list = []          # the func.vmap levels in progress (innermost last)
batch_call: Callable | None = None  # duograd.batching's dispatch (set when it is imported)


def set_grad_mode(mode: bool) -> bool:
    """Switch recording on or off; returns the previous mode (``dg.set_grad_enabled``)."""
    global grad_enabled
    prev, grad_enabled = grad_enabled, bool(mode)
    return prev


def open_level(lvl: int) -> None:
    """Make forward-mode level ``lvl`` active (``autograd.enter_forward_level``)."""
    fwd_active.add(lvl)
    refresh()


def close_level(lvl: int) -> None:
    fwd_active.discard(lvl)
    refresh()


# Saved-tensor hooks (``autograd.graph.saved_tensors_hooks``): a stack of (pack, unpack)
# pairs; ``packing`` is the flag a recorded primitive call tests.
pack_hooks: list = []
packing = False


def push_pack_hooks(pack: Callable, unpack: Callable) -> None:
    global packing, hot
    pack_hooks.append((pack, unpack))
    packing = hot = True


def pop_pack_hooks() -> None:
    global packing, hot
    pack_hooks.pop()
    packing = bool(pack_hooks)
    hot = watching or packing


def mask_levels(below: float) -> float:
    """Let only levels below ``below`` propagate (while a level's JVP rule runs); returns
    the previous bound, for ``mask_levels(previous)`` afterwards."""
    global fwd_below
    prev, fwd_below = fwd_below, below
    return prev

# ---------------------------------------------------------------- the listeners

EVENTS = ("on_call", "on_create", "on_effect", "on_read", "on_write", "on_attr", "on_pass",
          "on_node", "on_edge", "on_done")

_stack: list = []        # bottom first
_hidden: list = []       # the recording listeners that unrecorded() blocks hide

# Per event, the bound methods of the listeners that see it, bottom first (rebuilt on
# every change of the stack, never per call).
on_call: tuple = ()
on_create: tuple = ()
on_effect: tuple = ()
on_read: tuple = ()
on_write: tuple = ()
on_attr: tuple = ()
on_pass: tuple = ()
on_node: tuple = ()
on_edge: tuple = ()
on_done: tuple = ()
watching = False         # on_call listeners or a forward level
hot = False              # the hot path's one flag: watching, or saved-tensor hooks (packing)
any_listener = False     # some listener sees some event
backward_watched = False  # a backward pass has listeners (on_pass/on_node/on_edge/on_done)


# (ids of the stack, ids of the hidden) -> the event tuples, for the configurations that a
# recording's host steps and backward passes repeat; cleared whenever a listener comes off
# the stack, so an id in it always names a listener that is alive on the stack.
_memo: dict = {}


_class_events: dict[type, tuple[str, ...]] = {}


def _events_of(listener: Any) -> tuple[str, ...]:
    """The events ``listener`` has a method or attribute for (its class's, cached, and its
    own: a recording's ``on_call`` is its list's ``append``)."""
    cls = type(listener)
    evs = _class_events.get(cls)
    if evs is None:
        evs = _class_events[cls] = tuple(ev for ev in EVENTS
                                         if any(ev in vars(c) for c in cls.__mro__))
    own = getattr(listener, "__dict__", None)
    if own:
        evs = evs + tuple(ev for ev in EVENTS if ev in own and ev not in evs)
    return evs


def refresh() -> None:
    """Rebuild the per-event tuples and the flags from the stack."""
    g = globals()
    key = (tuple(map(id, _stack)), tuple(map(id, _hidden)))
    hit = _memo.get(key)
    if hit is not None:
        g.update(hit)
        g["watching"] = bool(on_call) or bool(fwd_active)
        g["hot"] = watching or packing
        return
    start = 0
    for k, lst in enumerate(_stack):
        if getattr(lst, "opaque", False):
            start = k
    seen = [lst for lst in _stack[start:] if not any(lst is h for h in _hidden)]
    tables: dict[str, list] = {ev: [] for ev in EVENTS}
    for lst in seen:
        for ev in _events_of(lst):
            m = getattr(lst, ev)
            if m is not None:
                tables[ev].append(m)
    for ev, methods in tables.items():
        g[ev] = tuple(methods)
    g["watching"] = bool(on_call) or bool(fwd_active)
    g["hot"] = watching or packing
    g["any_listener"] = bool(seen)
    g["backward_watched"] = bool(on_pass or on_node or on_edge or on_done)
    if len(_memo) > 16:
        _memo.clear()
    _memo[key] = {k: g[k] for k in EVENTS + ("any_listener", "backward_watched")}


def push(listener: Any, bottom: bool = False) -> Any:
    """Put ``listener`` on the stack (on top; with ``bottom``, under every other one:
    hooks, which belong to tensors rather than to a block) and return it."""
    if bottom:
        _stack.insert(0, listener)
    else:
        _stack.append(listener)
    refresh()
    return listener


def remove(listener: Any) -> None:
    """Take ``listener`` off the stack (wherever it is; nothing if it is not on it)."""
    for k in range(len(_stack) - 1, -1, -1):
        if _stack[k] is listener:
            del _stack[k]
            break
    _memo.clear()
    refresh()


def stack() -> tuple:
    """The listeners, bottom first."""
    return tuple(_stack)


class listening_to:
    """Base for context managers that push themselves: ``with Listener(): ...``."""

    def __enter__(self) -> Any:
        return push(self)

    def __exit__(self, *exc: object) -> None:
        remove(self)


class listening:
    """``with listening(obj) as obj:``: ``obj`` on the stack for the block."""

    def __init__(self, listener: Any) -> None:
        self.listener = listener

    def __enter__(self) -> Any:
        return push(self.listener)

    def __exit__(self, *exc: object) -> None:
        remove(self.listener)


class unrecorded:
    """A block that the listeners with ``records = True`` on the stack do not see: a host
    step's inside, or the engine's own sum into ``.grad``, which a recording takes as one
    effect. (A recording started inside the block, a checkpoint's, sees it.)"""

    def __enter__(self) -> None:
        self.hidden = [lst for lst in _stack if getattr(lst, "records", False)]
        _hidden.extend(self.hidden)
        refresh()

    def __exit__(self, *exc: object) -> None:
        for lst in self.hidden:
            for k in range(len(_hidden) - 1, -1, -1):
                if _hidden[k] is lst:
                    del _hidden[k]
                    break
        refresh()


# ---------------------------------------------------------------- telling the listeners

def effect(e: Any) -> None:
    for f in on_effect:
        f(e)


def created(t: Any) -> None:
    for f in on_create:
        f(t)


def read(t: Any, what: str) -> None:
    for f in on_read:
        f(t, what)


def write(t: Any, what: str, value: Any = None, src: Any = None) -> None:
    for f in on_write:
        f(t, what, value, src)


def attr(obj: Any, name: str, value: Any) -> Any:
    """Tell the listeners that ``obj.name`` was read as ``value`` (a guard for a
    recording); returns ``value``."""
    for f in on_attr:
        f(obj, name, value)
    return value


# ---------------------------------------------------------------- effects
#
# Each effect record lowers itself into a program (``lower(builder)``: the builder's method
# for its kind, ``capture.lowering.Builder`` or ``capture.xla.XlaBuilder``) and prints
# itself for ``dg.compile``'s comparison of two recordings (``fingerprint(p)``, ``p`` a
# ``capture.compiled.Printer``: ``p.ref(x)`` says where ``x`` came from, ``p.kw(v)`` prints
# a keyword value, ``p.value(v)`` any other value).


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", repr(fn))


@dataclass(slots=True)
class Accumulate:
    """``leaf.grad`` became ``out``: the old ``.grad`` plus ``g`` (``backward``)."""
    leaf: Any
    g: Any
    out: Any

    def lower(self, b: Any) -> None:
        b.accumulate(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("accumulate", p.ref(self.leaf), p.ref(self.g))


@dataclass(slots=True)
class SetGrad:
    """``t.grad = value`` (``zero_grad``, a user's assignment); ``value`` may be None."""
    t: Any
    value: Any

    def lower(self, b: Any) -> None:
        b.set_grad(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("set_grad", p.ref(self.t), None if self.value is None else p.ref(self.value))


@dataclass(slots=True)
class Derive:
    """``out = fn(source, **kw)``: an array computed from an argument outside the
    primitives (a conversion, a check of class labels)."""
    source: Any
    fn: Callable
    kw: dict
    out: Any

    def lower(self, b: Any) -> None:
        b.derive(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("derive", getattr(self.fn, "__name__", repr(self.fn)), p.kw(self.kw),
                p.source(self.source))


@dataclass(slots=True)
class Draw:
    """``out = fn(*args)``: random numbers, drawn afresh each call (a dropout mask)."""
    fn: Callable
    args: tuple
    out: Any

    def lower(self, b: Any) -> None:
        b.draw(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("draw", _name(self.fn), p.value(self.args))


@dataclass(slots=True)
class Host:
    """``fn(*args, **kw)`` ran as a whole (``autograd.host``: an optimizer's step)."""
    fn: Callable
    args: tuple
    kw: dict

    def lower(self, b: Any) -> None:
        b.host(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("host", _name(self.fn), len(self.args))


@dataclass(slots=True)
class Update:
    """``opt.step()`` of an optimizer whose update a program runs as its own kernels
    (``optim.foreach``): ``fn`` is the eager step, ``grads`` the ``.grad`` of each of
    ``opt``'s parameters (in group order) when it ran."""
    opt: Any
    fn: Callable
    grads: list

    def lower(self, b: Any) -> None:
        b.update(self)

    def fingerprint(self, p: Any) -> tuple:
        return ("update", _name(self.fn), id(self.opt), tuple(g is not None for g in self.grads))


# ---------------------------------------------------------------- the user's frame

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_inside: dict[Any, bool] = {}  # code object -> whether it belongs to duograd


def user_frame(depth: int = 1) -> tuple[Any, int, str | None]:
    """The innermost frame outside duograd, from ``depth`` frames up (1: the caller):
    ``(frame or None, its stacklevel for the caller's warnings.warn, the outermost
    duograd function on the way)``. The one stack walker of duograd (warnings of
    ``dg.compile``, locations of anomaly mode)."""
    f, level, via = sys._getframe(depth), depth, None
    while f is not None:
        code = f.f_code
        inside = _inside.get(code)
        if inside is None:
            inside = _inside[code] = os.path.abspath(code.co_filename).startswith(_PACKAGE)
        if not inside:
            return f, level, via
        via = code.co_name
        f, level = f.f_back, level + 1
    return None, level, via
