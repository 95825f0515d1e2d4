"""Anomaly mode: find the first operation that makes a NaN or an infinity.

Inside ``with dg.detect_anomaly():`` every primitive's forward result is checked, and
so is every cotangent a VJP rule hands to an input during a backward pass; the first
one holding a NaN or an infinity raises ``AnomalyError`` naming the operation, the pass,
the input, the shapes and the line of *your* code that called the operation in the
forward pass. (Inside a backward pass only the rules' results are checked, not their
intermediate values: a rule may compute an infinity that it then masks with ``where``.)

Where the check lives, and why nothing is paid outside it: anomaly mode is a listener
on the stack of ``duograd._context``, pushed for the block. A primitive call already
tests one flag (``_context.watching``) for listeners; behind it, ``on_call`` checks the
result, and the backward checks are the ``on_node`` and ``on_done`` events of
``autograd.backpropagate``. Outside every block the stack does not hold it.

Locations. Finding the caller's file and line means walking the Python stack, too
costly to do on every operation all the time, so a location is recorded only for the
nodes made while ``detect_anomaly()`` or ``record_locations()`` is on.
``dg.explain`` shows them in its ``where`` column (None for nodes made outside).

>>> import duograd as dg
>>> x = dg.tensor([0.0, 1.0], requires_grad=True)
>>> with dg.detect_anomaly():
...     try:
...         y = x.log()
...     except dg.AnomalyError as e:
...         print(str(e).split(":")[0])
log (forward pass)
"""

from __future__ import annotations

import math

import numpy as np

from . import _context
from ._node import Node
from ._tensor import Tensor
from .hooks import IdWeakMap, _Entry

_where = IdWeakMap()          # node -> (file, line, function)
_d, _drop = _where._d, _where._drop
_user_frame, _isfinite = _context.user_frame, math.isfinite


class AnomalyError(RuntimeError):
    """Raised in anomaly mode by the first operation that made a NaN or an infinity.
    ``.op``, ``.pass_`` ("forward" or "backward"), ``.input`` (the input's index, or None),
    ``.where`` ("file:line", or None) carry the facts of the message.

    >>> import duograd as dg
    >>> with dg.detect_anomaly():
    ...     try:
    ...         dg.tensor([0.0]) / 0.0
    ...     except dg.AnomalyError as e:
    ...         print(e.op, e.pass_, isinstance(e, RuntimeError))
    div forward True
    """

    def __init__(self, message: str, op: str, pass_: str, input: int | None,
                 where: str | None) -> None:
        super().__init__(message)
        self.op, self.pass_, self.input, self.where = op, pass_, input, where


def _caller() -> tuple[tuple[str, int, str] | None, str | None]:
    """The first frame outside duograd (file, line, function) and the outermost duograd
    function on the way (e.g. ``softmax``)."""
    f, _, via = _context.user_frame(2)
    return (None if f is None else (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)), via


def where_of(t: Tensor | Node) -> str | None:
    """``"file:line"`` where node ``t`` (a graph node, or the Tensor it made) was made, if
    locations were being recorded then.

    >>> import duograd as dg
    >>> x = dg.tensor(1.0, requires_grad=True)
    >>> with record_locations():
    ...     y = x * 2
    >>> where_of(y) is not None, where_of(x * 2)
    (True, None)
    """
    if isinstance(t, Tensor):
        t = t._node
    loc = _where.get(t) if type(t) is Node else None
    return None if loc is None else f"{loc[0]}:{loc[1]}"


def _fmt(loc: tuple[str, int, str] | None) -> str:
    return "an unknown place" if loc is None else f"{loc[0]}:{loc[1]} (in {loc[2]})"


def _bad(a: np.ndarray) -> str | None:
    """What is wrong with ``a`` ("nan", "inf", ...) or None if every value is finite."""
    if a.dtype.kind != "f" or np.isfinite(a).all():
        return None
    nan, inf = np.isnan(a), np.isinf(a)
    kinds = [k for k, m in (("nan", nan), ("+inf", inf & (a > 0)), ("-inf", inf & (a < 0))) if m.any()]
    return f"{' and '.join(kinds)} at {int((nan | inf).sum())} of {a.size} elements"


# ---------------------------------------------------------------- the listeners

def _finite(d: np.ndarray) -> bool:
    """Whether every value of a float array is finite. A NaN or an infinity survives a sum
    of squares, which BLAS does faster than ``isfinite(d).all()``; an overflow of the sum
    (huge but finite values) falls back to the exact test."""
    x = d.ravel()
    s = x.dot(x)
    return math.isfinite(s) or bool(np.isfinite(d).all())


def _remember(node: Node) -> None:
    """Note where ``node`` was made (``_where[node] = ...``, the map's insertion inlined:
    this runs once per primitive call in anomaly mode)."""
    f = _user_frame(3)[0]
    e = _Entry(node, _drop)
    e.key = k = id(node)
    e.value = None if f is None else (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
    _d[k] = e


class _Locations:
    """``record_locations``: the place that made every node created while it is on."""

    def on_call(self, call: tuple) -> None:
        node = call[3]._node
        if type(node) is Node:
            _remember(node)


class _Checks(_Locations):
    """``detect_anomaly``: every forward result outside a backward pass, every cotangent a
    rule hands on, and every cotangent arriving at a node that no rule made (the seed, a
    hook's return value)."""

    def __init__(self) -> None:
        self.passes = 0         # backward passes in progress
        self.checked: dict = {}  # input -> the cotangent on_done found finite

    def on_pass(self, begin: bool) -> None:
        self.passes += 1 if begin else -1
        if not self.passes:
            self.checked.clear()

    def on_call(self, call: tuple) -> None:
        op, xs, kw, out = call
        node = out._node
        if type(node) is Node:  # (_remember's body, inlined: this runs on every call)
            f = _user_frame(3)[0]  # from the caller of Primitive.__call__
            e = _Entry(node, _drop)
            e.key = k = id(node)
            e.value = None if f is None else (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
            _d[k] = e
        if self.passes:  # inside a backward pass: only the rules' results are checked
            return
        d = out._data
        if d.dtype.kind == "f" and not _isfinite(d.ravel().dot(d.ravel())) and not _finite(d):
            loc, via = _caller()
            shapes = ", ".join(f"input {i} {x.shape}" + (f" already holding {_bad(x._data)}"
                                                           if _bad(x._data) else "")
                               for i, x in enumerate(xs))
            inside = f" inside duograd's {via}()" if via not in (None, "__call__") else ""
            where = None if loc is None else f"{loc[0]}:{loc[1]}"
            bad_in = next((i for i, x in enumerate(xs) if _bad(x._data)), None)
            raise AnomalyError(
                f"{op.name} (forward pass): the result of shape {d.shape} holds {_bad(d)}; "
                f"inputs: {shapes or 'none'}. Called{inside} at {_fmt(loc)}.",
                op.name, "forward", bad_in, where)

    def on_node(self, node: Node | Tensor, g: Tensor) -> Tensor:
        if self.checked.pop(node, None) is not g:  # not what on_done already checked
            bad = _bad(g._data)
            if bad:
                leaf = type(node) is not Node
                what = "the node" if leaf else f"{node.op.name}'s result"
                raise AnomalyError(
                    f"backward pass: the gradient arriving at {what} (shape {g.shape}) holds "
                    f"{bad} before any rule ran on it (the seed, or a hook's return value). "
                    f"Made at {_fmt(None if leaf else _where.get(node))}.",
                    "leaf" if leaf else node.op.name, "backward", None,
                    None if leaf else where_of(node))
        return g

    def on_done(self, node: Node, edges: tuple, inputs: tuple[Tensor, ...], grads: dict) -> None:
        checked = self.checked
        for i, (e, x) in enumerate(zip(edges, inputs)):
            if e is None:
                continue
            k = e
            gx = grads.get(k)
            if gx is None or checked.get(k) is gx:
                continue
            if gx._data.dtype.kind == "f" and not _finite(gx._data):
                bad = _bad(gx._data)
                op = node.op.name
                raise AnomalyError(
                    f"{op} (backward pass): the gradient it gave input {i} (shape {x.shape}) "
                    f"holds {bad}; the gradient arriving at its result was finite. {op} was "
                    f"called at {_fmt(_where.get(node))} in the forward pass.",
                    op, "backward", i, where_of(node))
            checked[k] = gx


class detect_anomaly:
    """Context manager: raise ``AnomalyError`` at the first operation whose forward result,
    or whose VJP result in a backward pass, holds a NaN or an infinity. The message names
    the operation, the pass, the input, the shapes and your file and line. Nested blocks
    are fine; outside every block nothing is checked and nothing costs time.

    >>> import duograd as dg
    >>> x = dg.tensor([0.0, 4.0], requires_grad=True)
    >>> with dg.detect_anomaly():
    ...     y = x.sqrt().sum()                 # sqrt(0) = 0 is fine going forward...
    ...     try:
    ...         y.backward()                   # ...but its derivative there is infinite
    ...     except dg.AnomalyError as e:
    ...         print(e.op, e.pass_, e.input)
    sqrt backward 0
    """

    def __enter__(self) -> "detect_anomaly":
        self._listener = _context.push(_Checks())
        return self

    def __exit__(self, *exc: object) -> None:
        _context.remove(self._listener)


class record_locations:
    """Context manager: remember the file and line that made every graph node created
    inside it (``dg.explain``'s ``where`` column), without anomaly mode's checks.

    >>> import duograd as dg
    >>> with record_locations():
    ...     y = dg.tensor(2.0, requires_grad=True) * 3
    >>> where_of(y) is not None
    True
    """

    def __enter__(self) -> "record_locations":
        self._listener = _context.push(_Locations())
        return self

    def __exit__(self, *exc: object) -> None:
        _context.remove(self._listener)
