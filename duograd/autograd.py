"""Recording and replaying the graph: ``Primitive``, ``no_grad``, ``backpropagate``, ``grad``.

A Tensor that was computed by a primitive remembers the primitive (``_op``), its
inputs (``_inputs``) and its keyword parameters (``_kw``): the Tensor *is* the graph
node. There is no separate node object and no closure, so nothing refers back from
an input to its output and an intermediate is freed as soon as nothing uses it.

Reverse mode (``backpropagate``) visits the nodes in reverse topological order and
calls each primitive's VJP rules, which are written in Tensor operations. Without
``create_graph`` they run with recording switched off (plain NumPy underneath);
with it, the backward pass records a graph of its own, which is how gradients of
gradients work. After each rule the engine sums the cotangent back to the input's
shape and dtype, in one place.

Forward mode rides on the same primitives: while a ``jvp`` is active, a Tensor may
carry tangents, one per active level (nested ``jvp`` calls get higher levels), and
every primitive call pushes them through its JVP rules.
"""

from __future__ import annotations

import functools
import itertools
import sys
from typing import Any, Callable, Sequence

import numpy as np

from .shapes import sum_to
from .tensor import Tensor, _lift_all, _wrap, _zeros_like

_new = object.__new__
_ndarray = np.ndarray

# Global recording state (single-threaded by design, as in micrograd and HIPS autograd).
_grad_enabled = True
_fwd_active: set[int] = set()   # levels of the jvp calls in progress
_fwd_below = float("inf")       # only levels below this propagate (masking while a rule runs)
_level_counter = itertools.count(1)

ELEMENTWISE = "elementwise"  # jvp marker: the Jacobian is diagonal, so each VJP rule is its JVP rule
LINEAR = "linear"            # jvp marker: the op is linear in its inputs, so its JVP is the op itself


def is_grad_enabled() -> bool:
    """Whether primitive calls are being recorded right now.

    >>> import duograd as dg
    >>> dg.is_grad_enabled()
    True
    """
    return _grad_enabled


def set_grad_enabled(mode: bool) -> bool:
    """Switch recording on or off; returns the previous mode.

    >>> import duograd as dg
    >>> previous = dg.set_grad_enabled(False)
    >>> dg.is_grad_enabled(), dg.set_grad_enabled(previous)
    (False, False)
    """
    global _grad_enabled
    prev, _grad_enabled = _grad_enabled, bool(mode)
    return prev


class no_grad:
    """Context manager and decorator under which nothing is recorded.

    >>> import duograd as dg
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> with dg.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __enter__(self) -> None:
        self._prev = set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        set_grad_enabled(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class enable_grad(no_grad):
    """Record even inside ``no_grad`` (transforms that need the graph use it).

    >>> import duograd as dg
    >>> x = dg.tensor(2.0, requires_grad=True)
    >>> with dg.no_grad():
    ...     with dg.enable_grad():
    ...         y = x * x
    >>> y.requires_grad
    True
    """

    def __enter__(self) -> None:
        self._prev = set_grad_enabled(True)


class Primitive:
    """An operation with a NumPy forward and hand-written derivative rules.

    ``forward`` maps NumPy arrays (and keyword parameters) to a NumPy array. ``vjp``
    holds one rule per input, ``rule(g, out, *inputs, **kw)``, mapping the output's
    cotangent ``g`` to that input's cotangent *as if nothing broadcast*; the engine
    sums it back to the input's shape. ``jvp`` holds one rule per input,
    ``rule(t, out, *inputs, **kw)``, mapping that input's tangent to its share of the
    output's tangent, or is ``"elementwise"`` (reuse the VJP rules: the Jacobian is
    diagonal) or ``"linear"`` (apply the op itself to the tangents). Rules are written
    in Tensor operations, never on ``.data``, so they can be differentiated again.

    >>> import duograd as dg
    >>> cube = dg.Primitive("cube", forward=lambda x: x ** 3,
    ...                     vjp=(lambda g, out, x: g * 3 * x ** 2,),
    ...                     jvp=(lambda t, out, x: t * 3 * x ** 2,))
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> cube(x).sum().backward()
    >>> x.grad.numpy()
    array([ 3., 12.])
    """

    __slots__ = ("name", "forward", "vjp", "jvp")

    def __init__(self, name: str, forward: Callable[..., np.ndarray],
                 vjp: Sequence[Callable] | None = None,
                 jvp: Sequence[Callable] | str | None = None) -> None:
        self.name = name
        self.forward = forward
        self.vjp = tuple(vjp) if vjp is not None else None
        self.jvp = jvp if jvp is None or isinstance(jvp, str) else tuple(jvp)

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    def vjp_rule(self, i: int) -> Callable:
        rules = self.vjp
        rule = rules[i] if rules is not None and i < len(rules) else None
        if rule is None:
            raise NotImplementedError(f"{self.name}: no VJP rule for input {i}")
        return rule

    def jvp_rule(self, i: int) -> Callable:
        rules = self.vjp if self.jvp == ELEMENTWISE else self.jvp
        if rules is None or i >= len(rules) or rules[i] is None:
            raise NotImplementedError(f"{self.name}: no JVP rule for input {i}")
        return rules[i]

    def __call__(self, *args: Any, **kw: Any) -> Tensor:
        xs = args
        for a in args:
            if type(a) is not Tensor:
                xs = _lift_all(self.name, args)
                break
        try:
            if len(xs) == 2:
                data = self.forward(xs[0]._data, xs[1]._data, **kw)
            elif len(xs) == 1:
                data = self.forward(xs[0]._data, **kw)
            else:
                data = self.forward(*[x._data for x in xs], **kw)
        except (ValueError, IndexError, TypeError) as e:
            shapes = ", ".join(str(x.shape) for x in xs)
            err = IndexError if isinstance(e, IndexError) else TypeError if isinstance(e, TypeError) else ValueError
            raise err(f"{self.name}: {e} (input shapes {shapes})") from None
        # Inlined _wrap: this is the hottest line of the library.
        out = _new(Tensor)
        out._data = data if type(data) is _ndarray else np.asarray(data)
        out.grad = out._op = out._inputs = out._kw = out._tangent = None
        out.requires_grad = False
        if _grad_enabled:
            for x in xs:
                if x.requires_grad:
                    out.requires_grad = True
                    out._op = self
                    out._inputs = xs
                    out._kw = kw
                    break
        if _fwd_active:
            _push_tangents(self, out, xs, kw)
        return out


class _PerIndex(tuple):
    """One VJP rule shared by any number of inputs: ``rules[i]`` binds the index."""

    def __getitem__(self, i):
        return functools.partial(tuple.__getitem__(self, 0), i)

    def __len__(self) -> int:
        return sys.maxsize


class Variadic(Primitive):
    """A primitive over any number of inputs whose VJP rule takes the input's index.

    ``vjp`` is one rule ``rule(i, g, out, *inputs, **kw)`` shared by every input.
    """

    __slots__ = ()

    def __init__(self, name: str, forward: Callable[..., np.ndarray], vjp: Sequence[Callable],
                 jvp: Sequence[Callable] | str | None = None) -> None:
        super().__init__(name, forward, None, jvp)
        self.vjp = _PerIndex(vjp)


# ---------------------------------------------------------------- forward mode

def _push_tangents(op: Primitive, out: Tensor, xs: tuple[Tensor, ...], kw: dict) -> None:
    """Give ``out`` a tangent at every active level that one of ``xs`` carries one at.

    Levels go outermost first. While level L's rule runs, only levels below L
    propagate, so the rule's own arithmetic carries the outer tangents (that is what
    makes nested jvp correct) but never confuses level L with itself.
    """
    global _fwd_below
    levels = {lvl for x in xs if x._tangent for lvl in x._tangent
              if lvl in _fwd_active and lvl < _fwd_below}
    if not levels:
        return
    for lvl in sorted(levels):
        ts = [x._tangent.get(lvl) if x._tangent else None for x in xs]
        saved, _fwd_below = _fwd_below, lvl
        try:
            if op.jvp == LINEAR:
                t_out = op(*[t if t is not None else _zeros_like(x) for t, x in zip(ts, xs)], **kw)
            else:
                t_out = None
                for i, t in enumerate(ts):
                    if t is not None:
                        ti = op.jvp_rule(i)(t, out, *xs, **kw)
                        t_out = ti if t_out is None else t_out + ti
            if t_out.shape != out.shape:
                t_out = t_out.broadcast_to(out.shape)
            if t_out.dtype != out.dtype:
                t_out = t_out.astype(out.dtype)
        finally:
            _fwd_below = saved
        if out._tangent is None:
            out._tangent = {}
        out._tangent[lvl] = t_out


def enter_forward_level() -> int:
    """Open a new forward-mode level (used by ``func.jvp``)."""
    lvl = next(_level_counter)
    _fwd_active.add(lvl)
    return lvl


def exit_forward_level(lvl: int) -> None:
    _fwd_active.discard(lvl)


# ---------------------------------------------------------------- reverse mode

def _released(node: Tensor) -> RuntimeError:
    return RuntimeError(
        f"backward: the graph through '{node._op.name}' (output shape {node.shape}) was already "
        "released by an earlier backward; pass retain_graph=True to the first backward to go "
        "through it twice")


def _toposort(roots: Sequence[Tensor]) -> list[Tensor]:
    """Nodes reachable from ``roots`` through inputs that require grad, every consumer
    before its inputs.

    Two iterative passes (no recursion, so a chain of any depth works): count each
    node's consumers, then emit a node once all its consumers have been emitted.
    Tensors hash by identity, so they key the dicts directly.
    """
    deps: dict[Tensor, int] = {}
    stack = []
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    while stack:
        node = stack.pop()
        inputs = node._inputs
        if inputs is None:
            if node._op is not None:
                raise _released(node)
            continue
        for x in inputs:
            if x.requires_grad:
                c = deps.get(x)
                if c is None:
                    deps[x] = 1
                    stack.append(x)
                else:
                    deps[x] = c + 1
    order = []
    ready = [r for r in dict.fromkeys(roots) if deps[r] == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        inputs = node._inputs
        if inputs is not None:
            for x in inputs:
                if x.requires_grad:
                    c = deps[x] - 1
                    deps[x] = c
                    if c == 0:
                        ready.append(x)
    return order


def backpropagate(roots: Sequence[Tensor], seeds: Sequence[Tensor], create_graph: bool = False,
                  retain_graph: bool = False, targets: Sequence[Tensor] | None = None,
                  allow_unused: bool = True) -> dict[Tensor, Tensor]:
    """Cotangents of ``roots`` (seeded with ``seeds``) with respect to graph nodes.

    Returns a dict from node to cotangent: for every leaf that requires grad when
    ``targets`` is None, otherwise for each target reached. Only paths that reach a
    target are walked. Nothing is written to any ``.grad`` here, so a failure part-way
    leaves every gradient as it was. Unless ``retain_graph``, each node lets go of its
    inputs as soon as its rules have run, so intermediates are freed during the sweep
    (as PyTorch frees saved tensors) rather than all at its end.
    """
    order = _toposort(roots)
    needed: set[Tensor] | None = None
    if targets is not None:
        wanted = set(targets)
        needed = set()
        for node in reversed(order):  # inputs before their consumers
            if node in wanted or (node._inputs is not None and
                                  any(x in needed for x in node._inputs)):
                needed.add(node)
        if not allow_unused:  # checked before anything is released
            for i, t in enumerate(targets):
                if t not in needed:
                    raise RuntimeError(f"grad: input {i} (shape {t.shape}) is not in the graph of "
                                       "the outputs; pass allow_unused=True to get None for it")

    grads: dict[Tensor, Tensor] = {}
    for r, s in zip(roots, seeds):
        prev = grads.get(r)
        grads[r] = s if prev is None else prev + s
    results: dict[Tensor, Tensor] = {}
    prev_mode = set_grad_enabled(create_graph)
    try:
        for k in range(len(order)):
            node = order[k]
            g = grads.pop(node, None)  # each cotangent is dropped once its node has run
            inputs, kw = node._inputs, node._kw
            if not retain_graph:
                order[k] = None
                node._inputs = node._kw = None
            if g is None:
                continue
            if targets is None:
                if inputs is None:
                    results[node] = g
                    continue
            elif node in wanted:
                results[node] = g
            if inputs is None:
                continue
            op, rules = node._op, node._op.vjp
            for i, x in enumerate(inputs):
                if not x.requires_grad or (needed is not None and x not in needed):
                    continue
                try:
                    rule = rules[i]
                except (TypeError, IndexError):
                    rule = None
                if rule is None:
                    op.vjp_rule(i)  # raises NotImplementedError naming the op
                gx = rule(g, node, *inputs, **kw)
                # The adjoint of broadcasting, in one place: no rule reduces its own.
                xd, gd = x._data, gx._data
                if gd.shape != xd.shape:
                    try:
                        gx = sum_to(gx, xd.shape)
                    except ValueError as e:
                        raise ValueError(f"{op.name}: the VJP rule for input {i} gave a "
                                         f"cotangent of the wrong shape ({e})") from None
                if gd.dtype is not xd.dtype:
                    gx = gx.astype(xd.dtype)
                prev = grads.get(x)
                grads[x] = gx if prev is None else prev + gx
    finally:
        set_grad_enabled(prev_mode)
    return results


def _seed(out: Tensor, g: Any, op: str) -> Tensor:
    if g is None:
        if out.size != 1:
            raise RuntimeError(f"{op}: the output has shape {out.shape}; a gradient can be implied "
                               "only for a single-element output, so pass one of that shape")
        return _wrap(np.ones_like(out._data))
    g = g if isinstance(g, Tensor) else _wrap(np.asarray(g, dtype=out.dtype))
    if g.shape != out.shape:
        raise ValueError(f"{op}: the gradient has shape {g.shape} but the output has shape {out.shape}")
    return g


def backward(tensor: Tensor, gradient: Any = None, retain_graph: bool = False,
             create_graph: bool = False) -> None:
    """Accumulate d(tensor)/d(leaf) into ``.grad`` of every leaf that requires grad."""
    if not tensor.requires_grad:
        raise RuntimeError(f"backward: the tensor of shape {tensor.shape} does not require grad "
                           "and has no graph")
    seed = _seed(tensor, gradient, "backward")
    results = backpropagate([tensor], [seed], create_graph, retain_graph or create_graph)
    for leaf, g in results.items():
        leaf.grad = g if leaf.grad is None else leaf.grad + g


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, as ``torch.autograd.grad``.

    >>> import duograd as dg
    >>> x = dg.tensor(3.0, requires_grad=True)
    >>> (gx,) = dg.grad(x ** 3, x, create_graph=True)   # 3x^2, with history
    >>> (gxx,) = dg.grad(gx, x)                          # 6x
    >>> float(gx), float(gxx)
    (27.0, 18.0)
    """
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None or isinstance(grad_outputs, (Tensor, np.ndarray)) and len(outputs) == 1:
        grad_outputs = (grad_outputs,) * len(outputs) if grad_outputs is None else (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(outputs)} outputs but {len(grad_outputs)} grad_outputs")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"grad: input {i} is a {type(x).__name__}, not a Tensor")
        if not x.requires_grad:
            raise RuntimeError(f"grad: input {i} (shape {x.shape}) does not require grad")
    for i, y in enumerate(outputs):
        if not y.requires_grad:
            raise RuntimeError(f"grad: output {i} (shape {y.shape}) does not require grad and has "
                               "no graph")
    seeds = [_seed(y, g, "grad") for y, g in zip(outputs, grad_outputs)]
    if retain_graph is None:
        retain_graph = create_graph
    results = backpropagate(outputs, seeds, create_graph, retain_graph, targets=inputs,
                            allow_unused=allow_unused)
    return tuple(results.get(x) for x in inputs)
