"""Hooks on a Tensor's gradient, ``retain_grad``, and what a backward pass shows them.

``t.register_hook(fn)`` and ``t.retain_grad()`` keep their state here, in maps keyed by
the Tensor's identity that forget a Tensor when it dies, not in the Tensor itself: a
primitive call pays nothing for them. While at least one hook, retained tensor or
``detect_anomaly`` block is alive, ``autograd.backpropagate`` is given the one
``_Inspector`` below (``autograd.set_inspector``) and calls it once per node; otherwise
it calls nothing.

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

from . import autograd
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


class RemovableHandle:
    """What ``register_hook`` returns; ``remove()`` takes the hook off (twice is fine)."""

    def __init__(self, tensor: Tensor, key: int) -> None:
        self._tensor = weakref.ref(tensor)
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
    """Give backpropagate the inspector exactly while something needs it."""
    on = bool(len(_hooks) or len(_retained) or _INSPECTOR.checks)
    autograd.set_inspector(_INSPECTOR if on else None)


_hooks = IdWeakMap(on_empty=_refresh)     # Tensor -> {key: fn}, in registration order
_retained = IdWeakMap(on_empty=_refresh)  # Tensor -> True


def register_hook(self: Tensor, fn: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """Call ``fn(grad)`` whenever this tensor's gradient has been computed in a backward
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
    if not callable(fn):
        raise TypeError(f"register_hook: expected a callable, got {type(fn).__name__}")
    hooks = _hooks.get(self)
    if hooks is None:
        hooks = {}
        _hooks[self] = hooks
    key = next(_ids)
    hooks[key] = fn
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
    if self._op is not None:
        _retained[self] = True
        _refresh()


class _Inspector:
    """What backpropagate calls per node while hooks, retained tensors or anomaly checks
    exist. ``checks`` is the anomaly checker (``duograd.anomaly``) or None."""

    def __init__(self) -> None:
        self.checks: Any = None
        self.passes: list[bool] = []  # one entry per backpropagate in progress

    def begin(self, is_backward: bool) -> None:
        self.passes.append(is_backward)

    def end(self) -> None:
        self.passes.pop()

    def node(self, node: Tensor, g: Tensor) -> Tensor:
        hooks = _hooks.get(node)
        if hooks:
            g = self._run_hooks(node, g, hooks)
        if node._op is not None and node in _retained:
            node.grad = g if node.grad is None else node.grad + g
        return g

    def _run_hooks(self, node: Tensor, g: Tensor, hooks: dict) -> Tensor:
        for fn in list(hooks.values()):
            r = fn(g)
            if r is not None:
                if not isinstance(r, Tensor) or r.shape != node.shape:
                    got = r.shape if isinstance(r, Tensor) else type(r).__name__
                    raise ValueError(f"register_hook: a hook on a tensor of shape "
                                     f"{node.shape} returned {got}; it must return None "
                                     "or a Tensor of the tensor's shape")
                g = r
        if self.checks is not None:  # a hook's return value is checked like a rule's
            self.checks.arriving(node, g)
        return g

    def done(self, node: Tensor, inputs: tuple[Tensor, ...], grads: dict) -> None:
        if self.checks is not None:
            self.checks.backward(node, inputs, grads)


_INSPECTOR = _Inspector()


def set_checks(checks: Any) -> Any:
    """Install the anomaly checker the inspector calls (None: none); returns the previous."""
    prev, _INSPECTOR.checks = _INSPECTOR.checks, checks
    _refresh()
    return prev


def in_backward() -> bool:
    """Whether a backward pass is running right now (seen only while inspecting)."""
    return bool(_INSPECTOR.passes)


Tensor.register_hook = register_hook
Tensor.retain_grad = retain_grad
