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
from typing import Any, Callable, Sequence

import numpy as np

from .shapes import DimError, ShapeError, sum_to
from ._tensor import Tensor, _lift_all, _ndarray, _new, _wrap

from . import _tensor as _state  # its ``_capture``: the dg.compile recording in progress, or None

# Global recording state (single-threaded by design, as in micrograd and HIPS autograd).
_grad_enabled = True
_fwd_active: set[int] = set()   # levels of the jvp calls in progress
_fwd_below = float("inf")       # only levels below this propagate (masking while a rule runs)
_trace: list | None = None       # the recording in progress (see ``trace``)
_watching = False                # whether any of the two above or _on_call is on
_on_call = None                  # called as _on_call(op, xs, kw, out) after every primitive
                                 # call while set (anomaly mode, recorded locations)
_inspector = None                # hooks, retain_grad, anomaly mode: seen by backpropagate
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
    diagonal) or ``"linear"`` (apply the op itself to the tangents).

    The rule that holds for every rule: it computes only by calling primitives on the
    Tensors it is given (``g``/``t``, ``out``, the inputs) and on constants that do not
    depend on their values; it may read shapes, dtypes and keyword parameters, never
    ``.data``, and it never branches in Python on array values. A 0/1 selector comes
    from a primitive with ``differentiable=False`` (a comparison, ``sign``, a mask):
    such a primitive has no VJP, its output never requires grad and carries a tangent
    only if it has a ``jvp``. That is what makes rules differentiable again
    (``create_graph``) and makes every step a sequence of primitive calls that can be
    recorded (``trace``) and replayed on new data.

    >>> import duograd as dg
    >>> cube = dg.Primitive("cube", forward=lambda x: x ** 3,
    ...                     vjp=(lambda g, out, x: g * 3 * x ** 2,),
    ...                     jvp=(lambda t, out, x: t * 3 * x ** 2,))
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> cube(x).sum().backward()
    >>> x.grad.numpy()
    array([ 3., 12.])
    """

    __slots__ = ("name", "forward", "vjp", "jvp", "differentiable")

    def __init__(self, name: str, forward: Callable[..., np.ndarray],
                 vjp: Sequence[Callable] | None = None,
                 jvp: Sequence[Callable] | str | None = None, differentiable: bool = True) -> None:
        self.name = name
        self.forward = forward
        self.vjp = tuple(vjp) if vjp is not None else None
        self.jvp = jvp if jvp is None or isinstance(jvp, str) else tuple(jvp)
        self.differentiable = differentiable

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    def vjp_rule(self, i: int) -> Callable:
        """The VJP rule for input ``i``, or NotImplementedError naming the operation."""
        try:
            rule = self.vjp[i]
        except (TypeError, IndexError):  # no rules at all, or none for this input
            rule = None
        if rule is None:
            raise NotImplementedError(f"{self.name}: no VJP rule for input {i}")
        return rule

    def jvp_rule(self, i: int) -> Callable:
        """The JVP rule for input ``i`` (the VJP rule for an elementwise op)."""
        if self.jvp == ELEMENTWISE:
            return self.vjp_rule(i)
        rules = self.jvp
        if rules is None or i >= len(rules) or rules[i] is None:
            raise NotImplementedError(f"{self.name}: no JVP rule for input {i}")
        return rules[i]

    def __call__(self, *args: Any, **kw: Any) -> Tensor:
        xs = args
        for a in args:  # fast path: every operand is already a Tensor
            if type(a) is not Tensor:
                xs = _lift_all(self.name, args)
                break
        try:  # by arity: unpacking a list for the common cases costs more than the branch
            if len(xs) == 2:
                data = self.forward(xs[0]._data, xs[1]._data, **kw)
            elif len(xs) == 1:
                data = self.forward(xs[0]._data, **kw)
            else:
                data = self.forward(*[x._data for x in xs], **kw)
        except (ValueError, IndexError, TypeError) as e:
            raise _forward_error(self, e, xs) from None
        # The body of tensor._wrap, inlined: this is the hottest line of the engine and the
        # call alone is ~2% of a primitive call's instructions (benchmarks/instructions.py).
        # tests/engine/test_tensor_api.py checks that the two set the same fields.
        out = _new(Tensor)
        out._data = data if type(data) is _ndarray else np.asarray(data)
        out._grad = out._tangent = None
        if _grad_enabled and self.differentiable:
            for x in xs:
                if x.requires_grad:  # record: the output becomes a node of the graph
                    out.requires_grad = True
                    out._op, out._inputs, out._kw = self, xs, kw
                    break
            else:
                out.requires_grad = False
                out._op = out._inputs = out._kw = None
        else:
            out.requires_grad = False
            out._op = out._inputs = out._kw = None
        if _watching:  # one test for both: a recording, or a jvp in progress
            if _trace is not None:
                _trace.append((self, xs, kw, out))
            if _fwd_active:  # after the trace: the tangent rules read out
                _push_tangents(self, out, xs, kw)
            if _on_call is not None:
                _on_call(self, xs, kw, out)
        return out


def _forward_error(op: Primitive, e: Exception, xs: tuple[Tensor, ...]) -> Exception:
    """``e`` from NumPy, reworded to name the operation (and the shapes, unless NumPy did).

    The one place where the engine's errors get their class: NumPy's ValueError for
    shapes that do not fit (broadcasting, reshape, matmul) becomes ``ShapeError``, which is
    both the ValueError of this project's contract and the RuntimeError PyTorch raises; an
    axis out of range (NumPy's AxisError) becomes ``DimError``, PyTorch's IndexError."""
    kind = (DimError if isinstance(e, IndexError) and isinstance(e, ValueError)
            else IndexError if isinstance(e, IndexError)
            else TypeError if isinstance(e, TypeError) else ShapeError)
    msg, shapes = str(e).strip(), [str(x.shape) for x in xs]
    if not all(s in msg or s.replace(" ", "") in msg for s in shapes):
        msg += f" (input shapes {', '.join(shapes)})"
    return kind(f"{op.name}: {msg}")


class Variadic(Primitive):
    """A primitive over any number of inputs with one VJP rule ``rule(i, g, out, *inputs, **kw)``
    that takes the input's index (kept apart from ``vjp``, which then holds no per-input
    rules, so that ``vjp_rule`` is the one way to reach it)."""

    __slots__ = ("_shared",)

    def __init__(self, name: str, forward: Callable[..., np.ndarray],
                 vjp: Sequence[Callable] | None = None,
                 jvp: Sequence[Callable] | str | None = None, differentiable: bool = True) -> None:
        super().__init__(name, forward, None, jvp, differentiable)
        self._shared = vjp[0] if vjp else None

    def vjp_rule(self, i: int) -> Callable:
        if self._shared is None:
            raise NotImplementedError(f"{self.name}: no VJP rule for input {i}")
        return functools.partial(self._shared, i)


# The engine's own constants, as primitives so that a recorded step contains them too:
# the seed of a backward pass and the tangent of an input that has none.
ones_like_p = Primitive("ones_like", np.ones_like, differentiable=False)
zeros_like_p = Primitive("zeros_like", np.zeros_like, differentiable=False)


class trace:
    """Record every primitive call made inside the block, as ``(op, inputs, kw, out)``
    in call order: forward, backward, casts, seeds and tangents alike.

    A recording holds every Tensor it names, so their ids stay unique while it lives.
    It is how a step is captured for replay. A recording nested in another one is also
    part of the outer one. While ``dg.compile`` records, the list also holds its effects
    (``op`` is ``EFFECT``: ``.grad`` written, a host step such as ``opt.step()``).

    >>> import duograd as dg
    >>> with dg.autograd.trace() as calls:
    ...     y = (dg.tensor([1.0, 2.0], requires_grad=True) * 3).sum()
    >>> [op.name for op, *_ in calls]
    ['mul', 'sum']
    """

    def __enter__(self) -> list:
        global _trace
        self._prev, _trace = _trace, []
        _update_watching()
        return _trace

    def __exit__(self, *exc: object) -> None:
        global _trace
        inner, _trace = _trace, self._prev
        if _trace is not None:
            _trace.extend(inner)
        _update_watching()


EFFECT = "effect"  # the ``op`` of an effect in a dg.compile recording: (EFFECT, kind, args, out)


def host(fn: Callable) -> Callable:
    """Mark ``fn`` as a host step: plain NumPy and Python state, such as ``opt.step()``.

    Outside a ``dg.compile`` recording it is ``fn`` itself. Inside one, the call is
    recorded as a whole, and a replay calls ``fn`` again at the same point, with the
    same arguments; what it does inside is neither recorded nor warned about.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        if _state._capture is None:
            return fn(*args, **kw)
        global _trace
        _trace.append((EFFECT, "host", (fn, args, kw), None))
        capture, prev = _state._capture, _trace
        _state._capture, _trace = None, None
        _update_watching()
        try:
            return fn(*args, **kw)
        finally:
            _state._capture, _trace = capture, prev
            _update_watching()
    return wrapper


def _update_watching() -> None:
    global _watching
    _watching = bool(_fwd_active) or _trace is not None or _on_call is not None


def set_on_call(fn: Callable | None) -> Callable | None:
    """Install ``fn(op, xs, kw, out)``, called after every primitive call (None: nothing);
    returns the previous one. ``duograd.anomaly`` uses it."""
    global _on_call
    prev, _on_call = _on_call, fn
    _update_watching()
    return prev


def set_inspector(insp: Any) -> Any:
    """Install the object whose ``begin()``, ``node(node, g) -> g``, ``done(node, inputs,
    grads)`` and ``end()`` every ``backpropagate`` calls (None: nothing is called, and a
    backward pays one test per node); returns the previous one. ``duograd.hooks`` uses it."""
    global _inspector
    prev, _inspector = _inspector, insp
    return prev


# ---------------------------------------------------------------- forward mode

def set_tangent(x: Tensor, level: int, t: Tensor) -> None:
    """Give ``x`` the tangent ``t`` at forward-mode ``level``."""
    if x._tangent is None:
        x._tangent = {}
    x._tangent[level] = t


def pop_tangent(x: Tensor, level: int) -> Tensor | None:
    """Take ``x``'s tangent at ``level`` off it (None if it has none)."""
    return x._tangent.pop(level, None) if x._tangent else None


def _push_tangents(op: Primitive, out: Tensor, xs: tuple[Tensor, ...], kw: dict) -> None:
    """Give ``out`` a tangent at every active level that one of ``xs`` carries one at.

    Levels go outermost first. While level L's rule runs, only levels below L
    propagate, so the rule's own arithmetic carries the outer tangents (that is what
    makes nested jvp correct) but never confuses level L with itself.
    """
    global _fwd_below
    if op.jvp is None and not op.differentiable:
        return  # a selector: locally constant, its tangent is zero
    levels = {lvl for x in xs if x._tangent for lvl in x._tangent
              if lvl in _fwd_active and lvl < _fwd_below}
    for lvl in sorted(levels):
        ts = [x._tangent.get(lvl) if x._tangent else None for x in xs]
        saved, _fwd_below = _fwd_below, lvl
        try:
            if op.jvp == LINEAR:
                t_out = op(*[t if t is not None else zeros_like_p(x) for t, x in zip(ts, xs)], **kw)
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
        set_tangent(out, lvl, t_out)


def enter_forward_level() -> int:
    """Open a new forward-mode level (used by ``func.jvp``)."""
    lvl = next(_level_counter)
    _fwd_active.add(lvl)
    _update_watching()
    return lvl


def exit_forward_level(lvl: int) -> None:
    _fwd_active.discard(lvl)
    _update_watching()


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


def _prune(order: list[Tensor], targets: Sequence[Tensor], allow_unused: bool) -> set[Tensor]:
    """The nodes of ``order`` on a path to one of ``targets``; raises for a target that is
    not in the graph unless ``allow_unused`` (checked before anything is released)."""
    wanted = set(targets)
    needed: set[Tensor] = set()
    for node in reversed(order):  # inputs before their consumers
        if node in wanted or (node._inputs is not None and any(x in needed for x in node._inputs)):
            needed.add(node)
    if not allow_unused:
        for i, t in enumerate(targets):
            if t not in needed:
                raise RuntimeError(f"grad: input {i} (shape {t.shape}) is not in the graph of "
                                   "the outputs; pass allow_unused=True to get None for it")
    return needed


def _fit(op: Primitive, i: int, gx: Tensor, x: Tensor) -> Tensor:
    """A rule's result made to fit its input: the adjoint of broadcasting (summing back
    to the input's shape), then the cast back to the input's dtype. This is the one
    place either happens; no rule reduces its own broadcast."""
    if gx.shape != x.shape:
        try:
            gx = sum_to(gx, x.shape)
        except ValueError as e:
            raise ValueError(f"{op.name}: the VJP rule for input {i} gave a cotangent of the "
                             f"wrong shape ({e})") from None
    if gx.dtype is not x.dtype:
        gx = gx.astype(x.dtype)
    return gx


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
    needed = _prune(order, targets, allow_unused) if targets is not None else None
    wanted = set(targets) if targets is not None else None
    grads: dict[Tensor, Tensor] = {}
    results: dict[Tensor, Tensor] = {}
    insp = _inspector  # hooks, retain_grad, anomaly mode (None unless one is on)
    if insp is not None:
        insp.begin(targets is None)
    prev_mode = set_grad_enabled(create_graph)
    try:
        for r, s in zip(roots, seeds):
            prev = grads.get(r)
            grads[r] = s if prev is None else prev + s
        for k in range(len(order)):
            node = order[k]
            g = grads.pop(node, None)  # each cotangent is dropped once its node has run
            inputs, kw = node._inputs, node._kw
            if not retain_graph:
                order[k] = None
                node._inputs = node._kw = None
            if g is None:
                continue
            if insp is not None:
                g = insp.node(node, g)
            if wanted is None:
                if inputs is None:  # a leaf
                    results[node] = g
            elif node in wanted:
                results[node] = g
            if inputs is None:
                continue
            op = node._op
            rules = op.vjp
            for i, x in enumerate(inputs):
                if not x.requires_grad or (needed is not None and x not in needed):
                    continue
                try:  # the table itself on the hot path; vjp_rule for the rest (and its errors)
                    rule = rules[i]
                except (TypeError, IndexError):
                    rule = None
                if rule is None:
                    rule = op.vjp_rule(i)
                gx = rule(g, node, *inputs, **kw)
                xd, gd = x._data, gx._data
                if gd.shape != xd.shape or gd.dtype is not xd.dtype:  # the cheap test first
                    gx = _fit(op, i, gx, x)
                prev = grads.get(x)
                grads[x] = gx if prev is None else prev + gx
            if insp is not None:
                insp.done(node, inputs, grads)
    finally:
        set_grad_enabled(prev_mode)
        if insp is not None:
            insp.end()
    return results


def _seed(out: Tensor, g: Any, op: str) -> Tensor:
    if g is None:
        if out._data.size != 1:
            raise RuntimeError(f"{op}: the output has shape {out.shape}; a gradient can be implied "
                               "only for a single-element output, so pass one of that shape")
        return ones_like_p(out)
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
        if _state._capture is None:
            leaf._grad = g if leaf._grad is None else leaf._grad + g
        else:  # one effect of a dg.compile recording (the sum is part of it)
            _accumulate_recorded(leaf, g)


def _accumulate_recorded(leaf: Tensor, g: Tensor) -> None:
    global _trace
    recording, _trace = _trace, None
    try:
        new = g if leaf._grad is None else leaf._grad + g
    finally:
        _trace = recording
    _trace.append((EFFECT, "accumulate", (leaf, g), new))
    leaf._grad = new


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
