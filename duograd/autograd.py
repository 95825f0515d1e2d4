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

The state all this reads (grad mode, the forward-mode levels) and the listeners that
watch it (``dg.compile``, ``trace``, anomaly mode, hooks, ``explain``) live in
``duograd._context``: a primitive call tells ``on_call`` listeners of itself, and
``backpropagate`` tells ``on_pass``/``on_node``/``on_edge``/``on_done`` listeners
what it does, so that nothing outside this module walks the graph a second way.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from . import _context as _ctx
from ._context import Accumulate, Host
from .shapes import DimError, ShapeError, sum_to
from ._tensor import Tensor, _lift_all, _ndarray, _new, _wrap, _writes_of

# The recording state (grad mode, forward levels, listeners) is in _context, one module for
# the whole engine (single-threaded by design, as in micrograd and HIPS autograd).
_level_counter = itertools.count(1)
_writes = 0                      # in-place writes so far (duograd/inplace.py); each graph node
                                 # keeps the count at its creation in ``_stamp``
_last_alias = 0                  # the last of them that may have changed a view's or base's values

ELEMENTWISE = "elementwise"  # jvp marker: the Jacobian is diagonal, so each VJP rule is its JVP rule
LINEAR = "linear"            # jvp marker: the op is linear in its inputs, so its JVP is the op itself


def is_grad_enabled() -> bool:
    """Whether primitive calls are being recorded right now.

    >>> import duograd as dg
    >>> dg.is_grad_enabled()
    True
    """
    return _ctx.grad_enabled


class set_grad_enabled:
    """Switch recording on (True) or off (False), as ``torch.set_grad_enabled``: at once when
    called, and back to the previous mode at the end of a ``with`` block that uses it.

    >>> import duograd as dg
    >>> with dg.set_grad_enabled(False):
    ...     dg.is_grad_enabled()
    False
    >>> dg.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self._prev = _ctx.set_grad_mode(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _ctx.set_grad_mode(self._prev)


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
        self._prev = _ctx.set_grad_mode(False)

    def __exit__(self, *exc: object) -> None:
        _ctx.set_grad_mode(self._prev)

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
        self._prev = _ctx.set_grad_mode(True)


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

    The row also carries the facts that the tools around the engine need about the op,
    so that none of them tests which op it is (each has a default that is right for a
    row that says nothing):

    - ``replay``: ``replay(**kw)`` gives the NumPy function that ``dg.compile``'s replay
      calls on the input arrays, the same computation as ``forward`` bit for bit with
      less Python in between (``np.matmul`` for matmul), or a ``WithConstant``; None:
      ``forward`` with ``kw`` bound.
    - ``view``: the forward's result is a view of its input (reshape, transpose), so a
      replay lets a buffer escape through it.
    - ``broadcast``: the op only broadcasts its input to the output's shape, and its VJP
      rule is the adjoint of broadcasting: ``explain`` reports the axes it sums, and a
      replay leaves the broadcast to a ufunc that reads it.
    - ``checkable``: ``explain(check=True)`` may test the VJP rules against finite
      differences of ``forward`` (False where ``forward`` is not the op's real work).
    - ``shape_only``: the result depends on the input's shape and dtype alone (the
      seed of ones), so a replay computes it once, at recording time.
    """

    __slots__ = ("name", "forward", "vjp", "jvp", "differentiable", "replay", "view", "broadcast",
                 "checkable", "shape_only")

    def __init__(self, name: str, forward: Callable[..., np.ndarray],
                 vjp: Sequence[Callable] | None = None,
                 jvp: Sequence[Callable] | str | None = None, differentiable: bool = True, *,
                 replay: Callable[..., Any] | None = None, view: bool = False,
                 broadcast: bool = False, checkable: bool = True, shape_only: bool = False) -> None:
        self.name = name
        self.forward = forward
        self.vjp = tuple(vjp) if vjp is not None else None
        self.jvp = jvp if jvp is None or isinstance(jvp, str) else tuple(jvp)
        self.differentiable = differentiable
        self.replay = replay
        self.view = view
        self.broadcast = broadcast
        self.checkable = checkable
        self.shape_only = shape_only

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
        # By arity: unpacking a list for the common cases costs more than the branch. The
        # fast path: every operand is already a Tensor, and two of them have one dtype.
        xs, n = args, len(args)
        if n == 2:
            x, y = args
            if type(x) is not Tensor or type(y) is not Tensor or \
                    x._data.dtype is not y._data.dtype and \
                    (self.jvp == ELEMENTWISE or not self.differentiable):
                xs = x, y = _lift_all(self.name, args)  # numbers; torch's promotion
        elif n == 1:
            x = args[0]
            if type(x) is not Tensor:
                xs = (x,) = _lift_all(self.name, args)
        else:
            for a in args:
                if type(a) is not Tensor:
                    xs = _lift_all(self.name, args)
                    break
        try:
            if n == 2:
                data = self.forward(x._data, y._data, **kw)
            elif n == 1:
                data = self.forward(x._data, **kw)
            else:
                data = self.forward(*[a._data for a in xs], **kw)
        except (ValueError, IndexError, TypeError) as e:
            raise _forward_error(self, e, xs) from None
        # The body of tensor._wrap, inlined: this is the hottest line of the engine and the
        # call alone is ~2% of a primitive call's instructions (benchmarks/instructions.py).
        # tests/engine/test_tensor_api.py checks that the two set the same fields.
        out = _new(Tensor)
        out._data = data if type(data) is _ndarray else np.asarray(data)
        out._grad = out._tangent = None
        if _ctx.grad_enabled and self.differentiable:
            for x in xs:
                if x.requires_grad:  # record: the output becomes a node of the graph
                    out.requires_grad = True
                    out._op, out._inputs, out._kw = self, xs, kw
                    out._stamp = _writes
                    break
            else:
                out.requires_grad = False
                out._op = out._inputs = out._kw = None
        else:
            out.requires_grad = False
            out._op = out._inputs = out._kw = None
        if _ctx.watching:  # one test for both: listeners of calls, or a jvp in progress
            if _ctx.on_call:
                call = (self, xs, kw, out)
                for f in _ctx.on_call:
                    f(call)
            if _ctx.fwd_active:  # after the listeners: the tangent rules read out
                _push_tangents(self, out, xs, kw)
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
                 jvp: Sequence[Callable] | str | None = None, differentiable: bool = True,
                 **facts: Any) -> None:
        super().__init__(name, forward, None, jvp, differentiable, **facts)
        self._shared = vjp[0] if vjp else None

    def vjp_rule(self, i: int) -> Callable:
        if self._shared is None:
            raise NotImplementedError(f"{self.name}: no VJP rule for input {i}")
        return functools.partial(self._shared, i)


# The engine's own constants, as primitives so that a recorded step contains them too:
# the seed of a backward pass and the tangent of an input that has none.
# Their results depend on the input's shape and dtype alone (``shape_only``: a replay folds them).
ones_like_p = Primitive("ones_like", np.ones_like, differentiable=False, shape_only=True)
zeros_like_p = Primitive("zeros_like", np.zeros_like, differentiable=False, shape_only=True)


class WithConstant:
    """A replay kernel that is a binary ufunc with a constant second operand, in the
    first input's dtype (relu: ``np.maximum(x, 0)``): a replay holds the constant in a
    slot of its own, so the ufunc can write into a reused buffer."""

    __slots__ = ("ufunc", "value")

    def __init__(self, ufunc: np.ufunc, value: Any) -> None:
        self.ufunc, self.value = ufunc, value


class trace:
    """Record every primitive call made inside the block, as ``(op, inputs, kw, out)``
    in call order: forward, backward, casts, seeds and tangents alike.

    A recording holds every Tensor it names, so their ids stay unique while it lives.
    It is a listener (``duograd._context``) of ``on_call``; nested recordings each get
    every call made inside them. The inside of a host step (``host``) is not recorded.

    >>> import duograd as dg
    >>> with dg.autograd.trace() as calls:
    ...     y = (dg.tensor([1.0, 2.0], requires_grad=True) * 3).sum()
    >>> [op.name for op, *_ in calls]
    ['mul', 'sum']
    """

    records = True

    def __enter__(self) -> list:
        self.calls: list = []
        self.on_call = self.calls.append  # the event's (op, xs, kw, out), as it comes
        _ctx.push(self)
        return self.calls

    def __exit__(self, *exc: object) -> None:
        _ctx.remove(self)


def host(fn: Callable) -> Callable:
    """Mark ``fn`` as a host step: plain NumPy and Python state, such as ``opt.step()``.

    Outside a ``dg.compile`` recording it is ``fn`` itself. Inside one, the call is
    recorded as a whole (a ``Host`` effect), and a replay calls ``fn`` again at the same
    point, with the same arguments; what it does inside is neither recorded nor warned
    about (``_context.unrecorded``).
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        if not _ctx.on_effect:
            return fn(*args, **kw)
        _ctx.effect(Host(fn, args, kw))
        with _ctx.unrecorded():
            return fn(*args, **kw)
    return wrapper


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
    if op.jvp is None and not op.differentiable:
        return  # a selector: locally constant, its tangent is zero
    active, below = _ctx.fwd_active, _ctx.fwd_below
    levels = {lvl for x in xs if x._tangent for lvl in x._tangent
              if lvl in active and lvl < below}
    for lvl in sorted(levels):
        ts = [x._tangent.get(lvl) if x._tangent else None for x in xs]
        saved = _ctx.mask_levels(lvl)
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
            _ctx.mask_levels(saved)
        set_tangent(out, lvl, t_out)


def enter_forward_level() -> int:
    """Open a new forward-mode level (used by ``func.jvp``)."""
    lvl = next(_level_counter)
    _ctx.open_level(lvl)
    return lvl


def exit_forward_level(lvl: int) -> None:
    _ctx.close_level(lvl)


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
    rebased = bool(_REBASED)  # a tensor was rebased by an in-place write: follow the old nodes
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
        if rebased and node._stamp != _writes:  # the inputs as they were when recorded
            inputs = _recorded_inputs(node)
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
            if rebased and node._stamp != _writes:
                inputs = _recorded_inputs(node)
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
        if node in wanted or (node._inputs is not None and any(
                x in needed for x in (node._inputs if node._stamp == _writes
                                      else _recorded_inputs(node)))):
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

    Listeners of the backward (``_context``: hooks, anomaly mode, ``explain``) are told
    of the pass (``on_pass``), of each node's complete cotangent (``on_node``, which may
    replace it), of each rule's result (``on_edge``) and of each node done
    (``on_done``); without any, the sweep pays one test per node and per edge.
    """
    order = _toposort(roots)
    needed = _prune(order, targets, allow_unused) if targets is not None else None
    wanted = set(targets) if targets is not None else None
    grads: dict[Tensor, Tensor] = {}
    results: dict[Tensor, Tensor] = {}
    watched = _ctx.backward_watched  # hooks, retain_grad, anomaly mode, explain
    if watched:
        on_node, on_edge, on_done = _ctx.on_node, _ctx.on_edge, _ctx.on_done
        for f in _ctx.on_pass:
            f(True)
    # after a write through a view (or its base), every node is checked (_as_recorded)
    careful = _last_alias and any(n._inputs is not None and n._stamp < _last_alias for n in order)
    prev_mode = _ctx.set_grad_mode(create_graph)
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
            if watched:
                for f in on_node:
                    g = f(node, g)
            if wanted is None:
                if inputs is None:  # a leaf
                    results[node] = g
            elif node in wanted:
                results[node] = g
            if inputs is None:
                continue
            op = node._op
            rules = op.vjp
            out, args = node, inputs
            if node._stamp != _writes or careful:  # an in-place write since this node was made
                inputs, out, args = _as_recorded(node, inputs)
            for i, x in enumerate(inputs):
                if not x.requires_grad or (needed is not None and x not in needed):
                    continue
                try:  # the table itself on the hot path; vjp_rule for the rest (and its errors)
                    rule = rules[i]
                except (TypeError, IndexError):
                    rule = None
                if rule is None:
                    rule = op.vjp_rule(i)
                gx = raw = rule(g, out, *args, **kw)
                xd, gd = x._data, raw._data
                if gd.shape != xd.shape or gd.dtype is not xd.dtype:  # the cheap test first
                    gx = _fit(op, i, raw, x)
                if watched:
                    for f in on_edge:
                        f(node, i, x, raw, gx)
                prev = grads.get(x)
                grads[x] = gx if prev is None else prev + gx
            if watched:
                for f in on_done:
                    f(node, inputs, grads)
    finally:
        _ctx.set_grad_mode(prev_mode)
        if watched:
            for f in _ctx.on_pass:
                f(False)
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
    if g.dtype != out.dtype:  # as torch: the seed takes the output's dtype (float32 stays float32)
        g = g.astype(out.dtype)
    return g


def backward(tensor: Tensor, gradient: Any = None, retain_graph: bool = False,
             create_graph: bool = False) -> None:
    """Accumulate d(tensor)/d(leaf) into ``.grad`` of every leaf that requires grad."""
    if not tensor.requires_grad:
        raise RuntimeError(f"backward: the tensor of shape {tensor.shape} does not require grad "
                           "and has no graph")
    seed = _seed(tensor, gradient, "backward")
    results = backpropagate([tensor], [seed], create_graph, retain_graph or create_graph)
    if not _ctx.on_effect:
        for leaf, g in results.items():
            leaf._grad = g if leaf._grad is None else leaf._grad + g
    else:  # each leaf one effect of a dg.compile recording (the sum is part of it)
        with _ctx.unrecorded():
            sums = [(leaf, g, g if leaf._grad is None else leaf._grad + g)
                    for leaf, g in results.items()]
        for leaf, g, new in sums:
            _ctx.effect(Accumulate(leaf, g, new))
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


# ---------------------------------------------------------------- in-place writes and versions
# duograd/inplace.py writes tensors in place (the optimizers too, through ``bump``). A tensor
# written while autograd records gets a new node (it is "rebased": its node becomes the
# in-place op, whose input is a new Tensor holding the node it had). Consumers recorded
# before the write still hold the tensor itself, so ``_REBASED[t]`` lists (write number,
# the node t had before that write): a backward routes each consumer to the node it saw.
# A node's own ``_stamp`` (the write count at its creation) is all the hot path pays: only
# when a write happened since does a backward come here.

# (Keyed by id, each entry dropped when its tensor dies: a WeakKeyDictionary would compare
# Tensors with ==, which is elementwise.)
_REBASED: dict[int, list] = {}
_SUPERSEDED: dict[int, int] = {}  # id(stand-in) -> the write that replaced that node


def _keep(table: dict, t: Tensor, value: Any) -> None:
    key = id(t)
    if key not in table:
        weakref.finalize(t, table.pop, key, None)
    table[key] = value


def bump(t: Tensor) -> int:
    """Count one in-place write to ``t``'s memory (its version, and its views', goes up by
    one); returns the write's number."""
    global _writes
    _writes += 1
    _writes_of(t._data, create=True).add(_writes)
    return _writes


def rebase(t: Tensor, old: Tensor, new: Tensor, w: int, alias: bool) -> None:
    """``t`` (written in place by write number ``w``) takes ``new``'s node; ``old`` holds the
    node ``t`` had, for the consumers recorded before the write. ``alias``: other arrays
    may share the memory (a view, a base), whose nodes do not know of the write."""
    global _last_alias
    if alias:
        _last_alias = w
    _writes_of(t._data).graph.append(w)
    _keep(_REBASED, t, _REBASED.get(id(t), []) + [(w, old)])
    _keep(_SUPERSEDED, old, w)
    t._op, t._inputs, t._kw = new._op, new._inputs, new._kw
    t.requires_grad = True
    t._stamp = w


def _at(x: Tensor, stamp: int) -> Tensor:
    """The node ``x`` was when write number ``stamp`` had just happened."""
    log = _REBASED.get(id(x))
    if log is not None:
        for w, old in log:
            if w > stamp:
                return old
    return x


def _recorded_inputs(node: Tensor) -> tuple:
    """``node``'s inputs as the nodes they were when ``node`` was recorded."""
    if node._stamp == _writes:
        return node._inputs
    return tuple([_at(x, node._stamp) for x in node._inputs])


class _Stale:
    """The values of a tensor written in place after a node saved it: the shape and dtype
    can be read (rules read them), the values cannot: any use raises the version error."""

    __slots__ = ("shape", "dtype", "ndim", "size", "_msg")

    def __init__(self, arr: np.ndarray, msg: str) -> None:
        self.shape, self.dtype, self.ndim, self.size, self._msg = (arr.shape, arr.dtype, arr.ndim,
                                                                   arr.size, msg)

    def _fail(self, *args: Any, **kw: Any) -> Any:
        raise RuntimeError(self._msg)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(self._msg)

    __array__ = __array_ufunc__ = __array_function__ = __getitem__ = __len__ = __iter__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __rtruediv__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __abs__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __float__ = __bool__ = _fail
    __hash__ = object.__hash__


def _stale(x: Tensor, node: Tensor, what: str, version: int, expected: int) -> Tensor:
    msg = (f"one of the variables needed for gradient computation has been modified by an "
           f"inplace operation: [{what} of '{node._op.name}', shape {x.shape}, {x.dtype}] is at "
           f"version {version}; expected version {expected} instead. Hint: the write came after "
           f"'{node._op.name}' saved it; do it on a clone(), or after the backward")
    t = _new(Tensor)
    t._data = _Stale(x._data, msg)
    t._grad = t._tangent = None
    t.requires_grad = x.requires_grad
    t._op = t._inputs = t._kw = None
    return t


def _as_recorded(node: Tensor, inputs: tuple) -> tuple[tuple, Tensor, list]:
    """For a node recorded before some in-place write: the inputs it consumed (the edges of
    the graph), and what its rules get: ``out`` and the inputs, each replaced by a stand-in
    that raises the version error if a rule reads values written after the node saved them.
    Raises at once for an input whose value was changed through a view or its base before
    the node consumed it (its own graph does not explain that value)."""
    s = node._stamp
    edges = tuple([_at(x, s) for x in inputs])
    args = list(edges)
    for i, x in enumerate(edges):
        if x._op is not None:
            rec = _writes_of(x._data)
            upper = min(s, _SUPERSEDED.get(id(x), s + 1) - 1)
            if rec is not None and rec.rebased_between(x._stamp, upper):
                raise RuntimeError(
                    f"backward: input {i} of '{node._op.name}' (shape {x.shape}), the output of "
                    f"'{x._op.name}', was modified in place through a view or through its base "
                    "after it was computed; duograd does not carry such a write over to the other "
                    "tensors sharing the memory. Write to the tensor itself, or clone() the view "
                    "first")
        # the memory the node read (a stand-in holding a copy of an old value reads its copy
        # only for the in-place op that made it; the tensor itself for everyone else)
        rec = _writes_of(inputs[i]._data)
        if rec is not None and rec.since(s):
            args[i] = _stale(x, node, f"input {i}", rec.version, rec.version_at(s))
    out = node
    rec = _writes_of(node._data)
    if rec is not None and rec.since(s):
        out = _stale(node, node, "output", rec.version, rec.version_at(s))
    return edges, out, args



# ---------------------------------------------------------------- dg.autograd.Function
# PyTorch's way to define an operation, built on Primitive: a subclass gives
# ``@staticmethod forward(ctx, *args)`` (Tensors in, Tensors out; run with recording off) and
# ``@staticmethod backward(ctx, *grads)`` (one gradient per output in, one per forward argument
# out, None where an argument needs none). ``apply`` makes each output a node whose VJP rules
# call ``backward``, so a backward written in Tensor operations is recorded under
# ``create_graph`` like any rule and can be differentiated again.


class FunctionCtx:
    """The ``ctx`` of a ``Function``: what ``forward`` keeps for ``backward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self._saved: tuple = ()
        self._versions: tuple = ()
        self._non_differentiable: set[int] = set()
        self._outputs: dict[int, Tensor] = {}   # id(forward's output) -> the node returned
        self._last: tuple = (None, None)         # (the cotangents, backward's result) cached

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (inputs, outputs, or None) for ``backward``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save Tensors or None, got "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors (an output saved in ``forward`` is the output ``apply``
        returned); raises if one was modified in place since it was saved."""
        out = []
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [saved tensor {i} of {self._name}, shape {t.shape}] is "
                    f"at version {t._version}; expected version {v} instead")
            out.append(self._outputs.get(id(t), t) if t is not None else None)
        return tuple(out)

    def mark_non_differentiable(self, *outputs: Tensor) -> None:
        """Outputs that get no gradient (their nodes have no VJP: indices, masks)."""
        self._non_differentiable.update(id(t) for t in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """Accepted for torch's API; gradients are always materialised (zeros, not None)."""


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``apply``, as ``torch.autograd.Function``.

    >>> import duograd as dg
    >>> class Cube(dg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 3 * x ** 2
    >>> x = dg.tensor(2.0, requires_grad=True)
    >>> (gx,) = dg.grad(Cube.apply(x), x, create_graph=True)
    >>> (gxx,) = dg.grad(gx, x)
    >>> float(gx), float(gxx)
    (12.0, 12.0)
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Function.forward: define it in the subclass")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError("Function.backward: define it in the subclass")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        name = cls.__name__
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        ctx._name = name
        with no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        many = isinstance(result, tuple)
        outs = result if many else (result,)
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                raise TypeError(f"{name}.forward must return Tensors; output {i} is a "
                                f"{type(o).__name__}")
        where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        inputs = tuple(args[i] for i in where)
        n_out = len(outs)

        def grads_for(k: int, g: Tensor, out: Tensor, xs: tuple) -> tuple:
            """backward's gradients for the forward arguments, given ``g`` for output k
            (zeros for the others; backward is linear in them). Cached for one ``g``."""
            if ctx._last[0] is g:
                return ctx._last[1]
            gs = tuple(g if j == k else zeros_like_p(o_node) for j, o_node in enumerate(nodes))
            res = cls.backward(ctx, *gs)
            res = res if isinstance(res, tuple) else (res,)
            if len(res) != len(args):
                raise RuntimeError(f"{name}.backward returned an incorrect number of gradients "
                                   f"(expected {len(args)}, got {len(res)})")
            ctx._last = (g, res)
            return res

        def rule_for(k: int, i: int) -> Any:
            def rule(g: Tensor, out: Tensor, *xs: Tensor) -> Tensor:
                gx = grads_for(k, g, out, xs)[where[i]]
                if gx is None:
                    return zeros_like_p(xs[i])
                if not isinstance(gx, Tensor):
                    raise TypeError(f"{name}.backward: the gradient of argument {where[i]} is a "
                                    f"{type(gx).__name__}, not a Tensor or None")
                if gx.shape != xs[i].shape:
                    raise RuntimeError(f"{name}.backward: the gradient of argument {where[i]} has "
                                       f"shape {gx.shape}; the argument has shape {xs[i].shape}")
                return gx
            return rule

        nodes: list[Tensor] = []
        for k, o in enumerate(outs):
            data = o._data
            label = name if n_out == 1 else f"{name}[{k}]"
            if id(o) in ctx._non_differentiable:
                prim = Primitive(label, lambda *xs, data=data: data, differentiable=False)
            else:
                prim = Primitive(label, lambda *xs, data=data: data,
                                 vjp=tuple(rule_for(k, i) for i in range(len(inputs))))
            node = prim(*inputs) if inputs else o
            ctx._outputs[id(o)] = node
            nodes.append(node)
        return tuple(nodes) if many else nodes[0]
