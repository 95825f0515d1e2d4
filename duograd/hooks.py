"""Hooks on a Tensor's gradient, ``retain_grad``, and what a backward pass shows them.

``t.register_hook(fn)`` and ``t.retain_grad()`` (bound onto the Tensor by
``methods.py``) keep their state here, in maps keyed by the tensor's place in the graph
(its node, as torch attaches a tensor's hooks to its ``grad_fn``, or the leaf itself) that
forget an entry when its key dies, not in the Tensor itself: a primitive call pays nothing
for them. A node's own hooks (``grad_fn.register_prehook``/``register_hook``) are kept on
the node and run here too. While at least one hook or retained tensor is alive, the one listener below
(``_HOOKS``) sits at the bottom of the listener stack (``duograd._context``) and
``autograd.backpropagate`` tells it of every node's cotangent (``on_node``); otherwise
it is off the stack and costs nothing. At the bottom, it runs before every other
listener of the node, so that anomaly mode checks what a hook returned.

A hook fires once per backward for its tensor, when the tensor's cotangent is complete
(the sum over every use), before it flows on; a Tensor it returns replaces the
cotangent. Under ``create_graph`` the hook sees, and may return, a gradient with history.

>>> import duograd as dg
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> y = x * 3
>>> handle = y.register_hook(lambda g: g * 10)
>>> y.retain_grad()
>>> (y * y).sum().backward()
>>> y.grad.numpy(), x.grad.numpy()
(array([ 60., 120.]), array([180., 360.]))
>>> handle.remove()
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable, Iterator

from . import _context
from ._node import LEAF, Node
from ._tensor import Tensor

_ids = itertools.count()


class _Entry(weakref.ref):
    """A weak reference that carries the map's key and value."""

    __slots__ = ("key", "value")


class IdWeakMap:
    """A map from Tensors, by identity, that drops an entry when its Tensor dies.

    (``weakref.WeakKeyDictionary`` compares keys with ``==``, which is elementwise on
    Tensors; this map never does.)

    >>> import duograd as dg
    >>> m = IdWeakMap()
    >>> t = dg.ones(2)
    >>> m[t] = "note"
    >>> m.get(t), len(m)
    ('note', 1)
    >>> del t
    >>> len(m)
    0
    """

    def __init__(self, on_empty: Callable[[], None] | None = None) -> None:
        self._d: dict[int, _Entry] = {}
        self._on_empty = on_empty

    def _drop(self, entry: _Entry) -> None:
        if self._d.get(entry.key) is entry:
            del self._d[entry.key]
            if not self._d and self._on_empty is not None:
                self._on_empty()

    def __setitem__(self, t: Tensor, value: Any) -> None:
        e = _Entry(t, self._drop)
        e.key, e.value = id(t), value
        self._d[id(t)] = e

    def get(self, t: Tensor, default: Any = None) -> Any:
        e = self._d.get(id(t))
        return e.value if e is not None and e() is t else default

    def pop(self, t: Tensor, default: Any = None) -> Any:
        e = self._d.get(id(t))
        if e is None or e() is not t:
            return default
        self._drop(e)
        return e.value

    def __contains__(self, t: Tensor) -> bool:
        e = self._d.get(id(t))
        return e is not None and e() is t

    def __len__(self) -> int:
        return len(self._d)

    def __iter__(self) -> Iterator[Tensor]:
        return iter([t for t in (e() for e in list(self._d.values())) if t is not None])


def _key(t: Tensor) -> Any:
    """``t``'s place in the graph: its node, or the leaf itself."""
    n = t._node
    return t if n is LEAF else n


class RemovableHandle:
    """What ``register_hook`` returns; ``remove()`` takes the hook off (twice is fine)."""

    def __init__(self, tensor: Tensor, key: int) -> None:
        self._tensor = weakref.ref(_key(tensor))
        self._key = key

    def remove(self) -> None:
        t = self._tensor()
        hooks = _hooks.get(t) if t is not None else None
        if hooks is not None:
            hooks.pop(self._key, None)
            if not hooks:
                _hooks.pop(t)
        _refresh()

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _refresh() -> None:
    """Keep the listener on the stack exactly while something needs it."""
    if _hooks is None or _retained is None:  # a weak reference dying at interpreter exit
        return
    on = bool(len(_hooks) or len(_retained) or len(_watched))
    if on != (_HOOKS in _context.stack()):
        if on:
            _context.push(_HOOKS, bottom=True)
        else:
            _context.remove(_HOOKS)


_hooks = IdWeakMap(on_empty=_refresh)     # graph key -> {key: fn}, in registration order
_retained = IdWeakMap(on_empty=_refresh)  # node -> weak reference to the tensor keeping its grad
_watched = IdWeakMap(on_empty=_refresh)   # nodes with hooks of their own -> True


def watch_node(node: Node) -> None:
    """Keep the listener on while ``node`` (which has hooks of its own) lives."""
    _watched[node] = True
    _refresh()


def register_hook(self: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """Call ``hook(grad)`` whenever this tensor's gradient has been computed in a backward
    pass (``backward``, ``dg.grad``, ``duograd.func``); a Tensor it returns replaces the
    gradient. Returns a handle whose ``remove()`` takes the hook off.

    >>> import duograd as dg
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> seen = []
    >>> h = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    >>> (x * x).sum().backward()
    >>> seen
    [array([2., 4.])]
    """
    if not self.requires_grad:
        raise RuntimeError(f"register_hook: the tensor of shape {self.shape} does not require "
                           "grad, so no gradient will ever reach a hook on it")
    if not callable(hook):
        raise TypeError(f"register_hook: expected a callable, got {type(hook).__name__}")
    k = _key(self)
    hooks = _hooks.get(k)
    if hooks is None:
        hooks = {}
        _hooks[k] = hooks
    key = next(_ids)
    hooks[key] = hook
    _refresh()
    return RemovableHandle(self, key)


def retain_grad(self: Tensor) -> None:
    """Make a non-leaf tensor keep its gradient in ``.grad`` after each backward pass
    (accumulating, as a leaf's does; as in PyTorch, ``dg.grad`` writes it too); a leaf
    keeps it anyway.

    >>> import duograd as dg
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 2
    >>> y.retain_grad()
    >>> (y * y).sum().backward()
    >>> y.grad.numpy()
    array([4., 8.])
    """
    if not self.requires_grad:
        raise RuntimeError(f"retain_grad: the tensor of shape {self.shape} does not require "
                           "grad and has no gradient to keep")
    if self._node is not LEAF:
        _retained[self._node] = weakref.ref(self)
        _refresh()


def retains_grad(self: Tensor) -> bool:
    """Whether this non-leaf tensor keeps its ``.grad`` (``retain_grad()`` was called)."""
    return self._node is not LEAF and self._node is not None and \
        (_retained.get(self._node) or (lambda: None))() is self


class _Hooks:
    """The listener of the backward pass while hooks or retained tensors exist."""

    def __init__(self) -> None:
        self._edges: dict = {}  # node -> the gradients its rules gave, for its post-hooks

    def on_node(self, node: Any, g: Tensor) -> Tensor:
        hooks = _hooks.get(node)
        if hooks:
            g = self._run_hooks(g, hooks)
        if type(node) is Node:
            extra = node.extra
            if extra is not None and extra.get("prehooks"):
                for fn in list(extra["prehooks"].values()):
                    r = fn((g,))
                    if r is not None:
                        g = self._checked(g, r[0] if isinstance(r, (tuple, list)) else r)
            if extra is not None and extra.get("hooks"):
                self._edges[node] = (g, {})
            ref = _retained.get(node)
            t = ref() if ref is not None else None
            if t is not None:
                t.grad = g if t.grad is None else t.grad + g
        return g

    def on_edge(self, node: Any, i: int, x: Tensor, raw: Tensor, gx: Tensor) -> None:
        seen = self._edges.get(node)
        if seen is not None:
            seen[1][i] = gx

    def on_done(self, node: Any, edges: tuple, inputs: tuple, grads: dict) -> None:
        seen = self._edges.pop(node, None)
        if seen is None:
            return
        g, given = seen
        grad_inputs = tuple(given.get(i) for i in range(len(edges)))
        for fn in list(node.extra["hooks"].values()):
            r = fn(grad_inputs, (g,))
            if r is None:
                continue
            for i, (old, new) in enumerate(zip(grad_inputs, r)):
                if old is None or new is old:
                    continue
                k = edges[i]
                grads[k] = grads[k] - old + new
            grad_inputs = tuple(r)

    @staticmethod
    def _checked(g: Tensor, r: Any) -> Tensor:
        if not isinstance(r, Tensor) or r.shape != g.shape:
            got = r.shape if isinstance(r, Tensor) else type(r).__name__
            raise ValueError(f"register_hook: a hook on a tensor of shape {g.shape} returned "
                             f"{got}; it must return None or a Tensor of the tensor's shape")
        return r

    @classmethod
    def _run_hooks(cls, g: Tensor, hooks: dict) -> Tensor:
        for fn in list(hooks.values()):
            r = fn(g)
            if r is not None:
                g = cls._checked(g, r)
        return g


_HOOKS = _Hooks()
