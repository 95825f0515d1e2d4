"""The engine: grad mode, ``Primitive``, and the traversal (``backpropagate``, ``grad``).

A Tensor computed by a primitive while autograd records points to a graph node
(``Tensor._node``, ``duograd._node.Node``; ``t.grad_fn``): the primitive, the nodes its
inputs had at that moment (the edges), the saved inputs and keyword parameters, and the
write clock. The node holds nothing of its output, so nothing refers back from an input to
its output and an intermediate is freed as soon as nothing uses it. An in-place write
(``duograd/inplace.py``) gives the written tensor a new node; nodes recorded earlier keep
their edge to the old one.

Reverse mode (``backpropagate``) visits the nodes in reverse topological order and
calls each primitive's VJP rules, which are written in Tensor operations. Without
``create_graph`` they run with recording switched off (plain NumPy underneath);
with it, the backward pass records a graph of its own, which is how gradients of
gradients work. After each rule the engine sums the cotangent back to the input's
shape and dtype, in one place. A saved value whose memory was written after its node
was recorded raises torch's version error when a rule would read it (``_unpack``).

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

import dis
import functools
import itertools
from typing import Any, Callable, Sequence

import numpy as np

from .. import _context as _ctx, _versions
from .._context import Accumulate, Host
from .._node import LEAF, Node
from ..shapes import DimError, ShapeError, sum_to
from .._tensor import Tensor, _lift_all, _ndarray, _new, _wrap

# The recording state (grad mode, forward levels, listeners) is in _context, one module for
# the whole engine (single-threaded by design, as in micrograd and HIPS autograd).
_level_counter = itertools.count(1)

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
    - ``value_shape``: the result's shape depends on the input's values (``nonzero``,
      ``unique``, ``bincount``), so a replay checks it and records again when it changes
      (the kernels after it were recorded for the recorded shape).
    - ``batch``: the batching rule ``batch(args, dims, **kw) -> (out, out_dim)`` that
      ``func.vmap`` runs the op by: ``args`` the inputs with their batch dimension in
      (``dims[i]``, None for an input that is not batched), ``out`` the batched result and
      ``out_dim`` where its batch dimension is. None: derived from the other facts where
      they say enough (``duograd.batching``: elementwise rows, reductions, shape ops),
      otherwise a loop over the batch that warns once.
    - ``promote``: how operands of different dtypes meet (``_tensor._lift_all``, the one
      promotion rule): "elementwise" (torch's table; the default of an elementwise op or a
      selector), "matmul" (one category, torch's error otherwise), or None (the op decides).
    """

    __slots__ = ("name", "forward", "vjp", "jvp", "differentiable", "replay", "view", "broadcast",
                 "checkable", "shape_only", "value_shape", "promote", "batch", "_reads")

    def __init__(self, name: str, forward: Callable[..., np.ndarray],
                 vjp: Sequence[Callable] | None = None,
                 jvp: Sequence[Callable] | str | None = None, differentiable: bool = True, *,
                 replay: Callable[..., Any] | None = None, view: bool = False,
                 broadcast: bool = False, checkable: bool = True, shape_only: bool = False,
                 value_shape: bool = False, promote: str | None = "auto",
                 batch: Callable[..., Any] | None = None) -> None:
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
        self.value_shape = value_shape
        if promote == "auto":  # operands of an elementwise op (or a selector) share a dtype
            promote = "elementwise" if jvp == ELEMENTWISE or not differentiable else None
        self.promote = promote
        self.batch = batch
        self._reads = None

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

    def reads(self, edges: Sequence[Any]) -> tuple[frozenset | None, bool]:
        """Which saved values the VJP rules that will run read (those of the inputs whose
        edge in ``edges`` is not None): the input positions (None: all) and whether ``out``.

        Derived once per rule, from the rule itself: a linear op's rules read no value (only
        shapes and keyword parameters); otherwise a rule reads the arguments its code loads
        (a rule taking ``*xs`` reads every input). It decides what the version check guards
        and what saved-tensor hooks pack, as torch's saved variables do (torch too saves
        ``other`` for ``self * other`` only when ``self`` requires grad)."""
        per_rule = self._reads
        if per_rule is None:
            per_rule = self._reads = self._rule_reads()
        ins: set = set()
        out = False
        for i, e in enumerate(edges):
            if e is None:
                continue
            r_in, r_out = per_rule[0] if len(per_rule) == 1 else per_rule[i]
            if r_in is None:
                return None, True
            ins |= r_in
            out = out or r_out
        return frozenset(ins), out

    def _rule_reads(self) -> list[tuple[frozenset | None, bool]]:
        if self.jvp == LINEAR:
            return [(frozenset(), False)]
        variadic = isinstance(self, Variadic)
        rules = [self._shared] if variadic else list(self.vjp or ())
        found = []
        for rule in rules:
            code = getattr(rule, "__code__", None)
            if code is None or code.co_flags & 0x04:  # a callable object, or *inputs: all
                found.append((None, True))
                continue
            skip = 1 if variadic else 0  # a shared rule's first parameter is the input index
            params = code.co_varnames[:code.co_argcount]
            used = {ins.argval for ins in dis.get_instructions(code)
                    if ins.opname.startswith("LOAD_") and isinstance(ins.argval, str)}
            used |= set(code.co_cellvars)
            found.append((frozenset(k for k, p in enumerate(params[skip + 2:]) if p in used),
                          len(params) > skip + 1 and params[skip + 1] in used))
        return found or [(frozenset(), False)]

    def __call__(self, *args: Any, **kw: Any) -> Tensor:
        # By arity: unpacking a list for the common cases costs more than the branch. The
        # fast path: every operand is already a Tensor, and two of them have one dtype.
        # A batched operand (func.vmap's BatchedTensor, a subclass) is never of type Tensor,
        # so the test for one costs the fast path nothing.
        xs, n = args, len(args)
        if n == 2:
            x, y = args
            if type(x) is not Tensor or type(y) is not Tensor or \
                    x._data.dtype is not y._data.dtype and self.promote is not None:
                if _ctx.batch_levels:
                    done = _ctx.batch_call(self, args, kw)
                    if done is not None:
                        return done
                xs = x, y = _lift_all(self.name, args, self.promote or "elementwise")
        elif n == 1:
            x = args[0]
            if type(x) is not Tensor:
                if _ctx.batch_levels:
                    done = _ctx.batch_call(self, args, kw)
                    if done is not None:
                        return done
                xs = (x,) = _lift_all(self.name, args)
        else:
            for a in args:
                if type(a) is not Tensor:
                    if _ctx.batch_levels:
                        done = _ctx.batch_call(self, args, kw)
                        if done is not None:
                            return done
                    xs = _lift_all(self.name, args)
                    break
        try:
            # (a call without an empty ``**kw`` saves ~10% of a primitive call's instructions)
            if n == 2:
                data = self.forward(x._data, y._data, **kw) if kw else self.forward(x._data, y._data)
            elif n == 1:
                data = self.forward(x._data, **kw) if kw else self.forward(x._data)
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
        node = None
        if _ctx.grad_enabled and self.differentiable:
            # the edges: each input's graph key as it is now (its node; the leaf itself for a
            # leaf that requires grad; None for an input that needs no gradient); the inputs
            # in the node's own slots, as ``Node._link`` stores them (no second tuple kept)
            if n == 2:
                xn = x._node
                yn = y._node
                if xn is not None or yn is not None:
                    node = Node()  # (cheaper than object.__new__(Node); ``extra`` stays unset)
                    node.next = (x if xn is LEAF else xn, y if yn is LEAF else yn)
                    node._x0 = x
                    node._x1 = y
            elif n == 1:
                xn = x._node
                if xn is not None:
                    node = Node()
                    node.next = (x if xn is LEAF else xn,)
                    node._x0 = x
            else:
                keys = [a if a._node is LEAF else a._node for a in xs]
                if keys.count(None) != n:
                    node = Node()
                    node.next = tuple(keys)
                    node._x0 = xs
        if node is None:
            out._node = None
        else:  # the output becomes a node of the graph
            node.op = self
            node.kw = kw
            node.stamp = _versions.clock
            node._g = None
            out._node = node
        if _ctx.hot:  # one test for all: saved-tensor hooks, listeners of calls, a jvp
            if _ctx.packing and node is not None:
                _pack(out._node, out)
            if _ctx.on_call:
                call = (self, xs, kw, out)
                for f in _ctx.on_call:
                    f(call)
            if _ctx.fwd_active:  # after the listeners: the tangent rules read out
                _push_tangents(self, out, xs, kw)
        return out


def _record(op: Primitive, xs: tuple[Tensor, ...], kw: dict, out: Tensor) -> Tensor:
    """The tail of ``Primitive.__call__`` for a result computed elsewhere (``func.vmap``'s
    batching rules): record ``out``'s node, tell the listeners, push the tangents."""
    if _ctx.grad_enabled and op.differentiable:
        edges = tuple([a if a._node is LEAF else a._node for a in xs])  # graph keys, as above
        if edges.count(None) != len(xs):
            node = Node()  # (as Primitive.__call__ makes it)
            node.op, node.kw = op, kw
            node._link(edges, xs)
            node.stamp, node._g = _versions.clock, None
            out._node = node
            if _ctx.packing:
                _pack(node, out)
    if _ctx.on_call:
        call = (op, xs, kw, out)
        for f in _ctx.on_call:
            f(call)
    if _ctx.fwd_active:
        _push_tangents(op, out, xs, kw)
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
# The graph's keys: a Node for a computed tensor, the Tensor itself for a leaf that requires
# grad (so a consumer's ``next`` holds keys, and the traversal needs no other lookup).

def make_node(op: Primitive, xs: tuple[Tensor, ...], kw: dict) -> Node:
    """A graph node for ``op`` applied to ``xs`` now (for results made outside
    ``Primitive.__call__``: ``checkpoint``)."""
    node = Node()
    node.op, node.kw = op, kw
    node._link(tuple(key_of(x) for x in xs), xs)
    node.stamp, node._g = _versions.clock, None
    return node


def key_of(t: Tensor) -> Any:
    """The key ``t`` has in the backward graph now: its node, or itself for a leaf
    (None for a tensor that does not require grad)."""
    n = t._node
    return t if n is LEAF else n


def _released(node: Node) -> RuntimeError:
    return RuntimeError(
        f"backward: the graph through '{node.op.name}' was already released by an earlier "
        "backward; pass retain_graph=True to the first backward to go through it twice")


def _toposort(roots: Sequence[Tensor]) -> list:
    """The graph keys reachable from the tensors ``roots`` through edges that need a
    gradient, every consumer before its inputs.

    Two iterative passes (no recursion, so a chain of any depth works): count each
    node's consumers, then emit a node once all its consumers have been emitted."""
    deps: dict[Any, int] = {}
    stack = []
    for r in roots:
        k = key_of(r)
        if k not in deps:
            deps[k] = 0
            stack.append(k)
    while stack:
        node = stack.pop()
        if type(node) is not Node:  # a leaf
            continue
        edges = node.next
        if edges is None:
            raise _released(node)
        for e in edges:
            if e is not None:
                c = deps.get(e)
                if c is None:
                    deps[e] = 1
                    stack.append(e)
                else:
                    deps[e] = c + 1
    order = []
    ready = [k for k in dict.fromkeys(key_of(r) for r in roots) if deps[k] == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        if type(node) is Node:
            for e in node.next:
                if e is not None:
                    c = deps[e] - 1
                    deps[e] = c
                    if c == 0:
                        ready.append(e)
    return order


def inputs_of(node: Any) -> list[tuple[Any, Tensor]]:
    """``node``'s edges that need a gradient, as (key, saved input) pairs (none for a leaf):
    the one way the tools (``explain``, ``viz``, ``func``) walk the graph."""
    if type(node) is not Node or node.next is None:
        return []
    return [(e, x) for e, x in zip(node.next, node.inputs) if e is not None]


def _prune(order: list, targets: Sequence[Any], allow_unused: bool) -> set:
    """The keys of ``order`` on a path to one of ``targets``; raises for a target that is
    not in the graph unless ``allow_unused`` (checked before anything is released)."""
    wanted = set(targets)
    needed: set = set()
    for node in reversed(order):  # inputs before their consumers
        if node in wanted or any(k in needed for k, _ in inputs_of(node)):
            needed.add(node)
    if not allow_unused:
        for i, t in enumerate(targets):
            if t not in needed:
                shape = getattr(t, "shape", None)
                raise RuntimeError(f"grad: input {i}{'' if shape is None else f' (shape {shape})'} "
                                   "is not in the graph of the outputs; pass allow_unused=True "
                                   "to get None for it")
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


def _stand_in(arr: np.ndarray, node: Any) -> Tensor:
    """A Tensor holding ``arr`` at graph position ``node`` (what a rule gets for a saved value
    whose tensor moved on: its values, its node as recorded)."""
    t = _new(Tensor)
    t._data, t._grad, t._tangent, t._node = arr, None, None, node
    return t


def _version_error(node: Node, what: str, arr: np.ndarray) -> RuntimeError:
    name = node.op.name
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{what} of '{name}', shape {arr.shape}, {arr.dtype}] is at version "
        f"{_versions.version(arr)}; expected version {_versions.version_at(arr, node.stamp)} "
        f"instead. Hint: the write came after '{name}' saved it; do it on a clone(), or after "
        "the backward")


def _unpack(node: Node, edges: tuple, xs: tuple, out: Tensor) -> tuple[Tensor, tuple]:
    """What ``node``'s rules get, for a node recorded before some in-place write: ``out`` and
    the inputs as they were recorded. A value the rules read whose memory was written since
    raises torch's version error (op, both versions); one they do not read is handed on
    (its shape and dtype are still right). An input whose memory was written through another
    tensor (a view, a base) between its own node and this one raises: its graph does not
    explain the value this node consumed."""
    s = node.stamp
    reads_in, reads_out = node.op.reads(edges)
    args = list(xs)
    # an in-place op's node is stamped with the write it made, after what it consumed
    consumed = s - 1 if node.extra is not None and node.extra.get("written") == s else s
    for i, (e, x) in enumerate(zip(edges, xs)):
        arr = x._data
        if type(e) is Node and _versions.last_recorded > e.stamp and \
                _versions.recorded_between(arr, e.stamp, consumed):
            raise RuntimeError(
                f"backward: input {i} of '{node.op.name}' (shape {x.shape}), the output of "
                f"'{e.op.name}', was modified in place through a view or through its base "
                "after it was computed; duograd does not carry such a write over to the other "
                "tensors sharing the memory. Write to the tensor itself, or clone() the view first")
        if _versions.written_since(arr, s):
            if reads_in is None or i in reads_in:
                raise _version_error(node, f"input {i}", arr)
        if (x._node is not e) if type(e) is Node else (e is None and x._node is not None):
            args[i] = _stand_in(arr, e)
    if out._node is not node or _versions.written_since(out._data, s):
        if reads_out and _versions.written_since(out._data, s):
            raise _version_error(node, "output", out._data)
        out = _stand_in(out._data, node)
    return out, tuple(args)


_busy = False    # a pass that keeps its cotangents on the nodes (``_sweep``) is in progress
_packed = False  # some node was ever given packed values (saved-tensor hooks)


def _sort(roots: Sequence[Tensor]) -> tuple[list, dict]:
    """``_toposort``'s order, counted on the nodes themselves: ``Node._g`` holds a node's
    number of consumers during the sort (None: not reached yet) and is None again for every
    node of the order at the end; only the leaves are counted in a dict (returned, empty).
    The same two passes visit the same keys in the same order as ``_toposort``."""
    leaves: dict[Any, int] = {}
    stack = []
    ready = []
    for r in roots:
        k = r._node
        if type(k) is not Node:  # a leaf (key_of's None for a root that needs no gradient)
            k = r if k is LEAF else None
            if k not in leaves:
                leaves[k] = 0
                ready.append(k)
        elif k._g is None:
            k._g = 0
            stack.append(k)
            ready.append(k)
    try:
        while stack:  # count the consumers of every key reached
            node = stack.pop()
            edges = node.next
            if edges is None:
                raise _released(node)
            for e in edges:
                if e is None:
                    continue
                if type(e) is Node:
                    c = e._g
                    if c is None:
                        e._g = 1
                        stack.append(e)
                    else:
                        e._g = c + 1
                else:
                    c = leaves.get(e)
                    leaves[e] = 1 if c is None else c + 1
    except BaseException:
        for n in _reached(roots):
            n._g = None
        raise
    ready = [k for k in ready if (leaves[k] if type(k) is not Node else k._g) == 0]
    order = []
    while ready:  # emit a key once its last consumer is out
        node = ready.pop()
        order.append(node)
        if type(node) is Node:
            node._g = None
            for e in node.next:
                if e is None:
                    continue
                if type(e) is Node:
                    c = e._g - 1
                    e._g = c
                    if not c:
                        ready.append(e)
                else:
                    c = leaves[e] - 1
                    leaves[e] = c
                    if not c:
                        ready.append(e)
    return order, leaves


def _reached(roots: Sequence[Tensor]) -> list:
    """The nodes reached from ``roots`` whose ``_g`` is set (after a failed ``_sort``)."""
    stack = [r._node for r in roots if type(r._node) is Node]
    seen: set = set()
    while stack:
        n = stack.pop()
        if n._g is None or n in seen:
            continue
        seen.add(n)
        stack.extend(e for e in n.next or () if type(e) is Node)
    return list(seen)


def _careful(order: list) -> bool:
    """Whether every node of ``order`` is unpacked with its checks (``_unpack``): after a
    recorded write, a node made later may still have consumed a value written through a
    view or a base."""
    last = _versions.last_recorded
    return bool(last) and any(type(n) is Node and n.stamp < last for n in order)


def backpropagate(roots: Sequence[Tensor], seeds: Sequence[Tensor], create_graph: bool = False,
                  retain_graph: bool = False, targets: Sequence[Any] | None = None,
                  allow_unused: bool = True) -> dict[Any, Tensor]:
    """Cotangents of ``roots`` (seeded with ``seeds``) with respect to graph keys.

    Returns a dict from key (``key_of``: a leaf Tensor, or a Node) to cotangent: for every
    leaf that requires grad when ``targets`` (keys) is None, otherwise for each target
    reached. Only paths that reach a target are walked. Nothing is written to any ``.grad``
    here, so a failure part-way leaves every gradient as it was. Unless ``retain_graph``,
    each node lets go of its saved values as soon as its rules have run, so intermediates
    are freed during the sweep (as PyTorch frees saved tensors) rather than all at its end.

    Listeners of the backward (``_context``: hooks, anomaly mode, ``explain``) are told
    of the pass (``on_pass``), of each node's complete cotangent (``on_node``, which may
    replace it), of each rule's result (``on_edge``) and of each node done
    (``on_done``): that pass is ``_watched_pass``, which keeps the cotangents in a dict
    that ``on_done`` may change. Without listeners (and outside another such pass: a rule
    of an ``autograd.Function`` may run a backward of its own) the sweep keeps each node's
    cotangent and output on the node itself (``Node._g``, ``Node._out``), cleared as it goes.
    """
    global _busy
    if _ctx.backward_watched or _busy:
        return _watched_pass(roots, seeds, create_graph, retain_graph, targets, allow_unused)
    order, grads = _sort(roots)  # grads: the leaves' cotangents (their counts are all 0 now)
    needed = _prune(order, targets, allow_unused) if targets is not None else None
    wanted = set(targets) if targets is not None else None
    results: dict[Any, Tensor] = {}
    clock, packed = _versions.clock, _packed
    careful = _careful(order)
    prev_mode = _ctx.set_grad_mode(create_graph)
    _busy = True
    k = 0
    try:
        grads.clear()
        for r, s in zip(roots, seeds):
            n = r._node
            if type(n) is not Node:
                n = r if n is LEAF else None
                prev = grads.get(n)
                grads[n] = s if prev is None else prev + s
            else:
                prev = n._g
                n._g = s if prev is None else prev + s
                n._out = r  # the node's output, for its rules (the node itself holds none)
        for k in range(len(order)):
            node = order[k]
            if type(node) is not Node:  # a leaf
                g = grads.pop(node, None)
                if g is not None and (wanted is None or node in wanted):
                    results[node] = g
                continue
            g = node._g  # each cotangent is dropped once its node has run
            edges, kw = node.next, node.kw
            n = len(edges)  # (the inputs as ``Node.inputs`` reads them, without its call)
            xs = (node._x0, node._x1) if n == 2 else (node._x0,) if n == 1 else node._x0
            if not retain_graph:
                order[k] = None
                node.next = node._x0 = node._x1 = node.kw = None  # (``Node._release``)
            if g is None:
                continue
            node._g = None
            out = node._out
            node._out = None
            if wanted is not None and node in wanted:
                results[node] = g
            op = node.op
            rules = op.vjp
            args = xs
            if node.stamp != clock or careful:  # an in-place write since this node was recorded
                out, args = _unpack(node, edges, xs, out)
            if packed and "packed" in (node.extra or ()):
                out, args = _unpacked(node, edges, out, args)
            # the rules called with their arguments spelled out (``*args`` costs ~40% of a
            # call of a small rule): by arity, as in Primitive.__call__
            arity = -1 if kw else n  # (args: one per input, as xs)
            if arity == 2:
                a0, a1 = args
            elif arity == 1:
                a0 = args[0]
            for i, e in enumerate(edges):
                if e is None or needed is not None and e not in needed:
                    continue
                x = xs[i]
                try:  # the table itself on the hot path; vjp_rule for the rest (and its errors)
                    rule = rules[i]
                except (TypeError, IndexError):
                    rule = None
                if rule is None:
                    rule = op.vjp_rule(i)
                if arity == 2:
                    gx = rule(g, out, a0, a1)
                elif arity == 1:
                    gx = rule(g, out, a0)
                else:
                    gx = rule(g, out, *args, **kw)
                gd = gx._data
                xd = x._data
                if gd.shape != xd.shape or gd.dtype is not xd.dtype:  # the cheap test first
                    gx = _fit(op, i, gx, x)
                if type(e) is Node:
                    prev = e._g
                    if prev is None:
                        e._g = gx
                        e._out = x  # the first consumer hands the input's Tensor on
                    else:
                        e._g = prev + gx
                else:
                    prev = grads.get(e)
                    grads[e] = gx if prev is None else prev + gx
        k = -1
    finally:
        _busy = False
        _ctx.set_grad_mode(prev_mode)
        if k >= 0:  # a rule raised: let go of the cotangents still held by nodes
            for n in order:
                if type(n) is Node:
                    n._g = None
                    n._out = None
    return results


def _watched_pass(roots: Sequence[Tensor], seeds: Sequence[Tensor], create_graph: bool,
                  retain_graph: bool, targets: Sequence[Any] | None,
                  allow_unused: bool) -> dict[Any, Tensor]:
    """``backpropagate`` with its listeners told of everything, the cotangents in a dict."""
    order = _toposort(roots)
    needed = _prune(order, targets, allow_unused) if targets is not None else None
    wanted = set(targets) if targets is not None else None
    grads: dict[Any, Tensor] = {}
    results: dict[Any, Tensor] = {}
    watched = _ctx.backward_watched  # hooks, retain_grad, anomaly mode, explain
    if watched:
        on_node, on_edge, on_done = _ctx.on_node, _ctx.on_edge, _ctx.on_done
        for f in _ctx.on_pass:
            f(True)
    clock = _versions.clock
    careful = _careful(order)
    prev_mode = _ctx.set_grad_mode(create_graph)
    try:
        # for each node, a Tensor holding its output: the root, or the input of the first
        # consumer that handed it a cotangent (the node itself holds none: no cycle)
        outs: dict[Any, Tensor] = {}
        for r, s in zip(roots, seeds):
            k = key_of(r)
            prev = grads.get(k)
            grads[k] = s if prev is None else prev + s
            outs[k] = r
        for k in range(len(order)):
            node = order[k]
            g = grads.pop(node, None)
            if type(node) is not Node:  # a leaf
                if g is not None:
                    if watched:
                        for f in on_node:
                            g = f(node, g)
                    if wanted is None or node in wanted:
                        results[node] = g
                continue
            edges, xs, kw = node.next, node.inputs, node.kw
            out = outs.pop(node, None)
            if not retain_graph:
                order[k] = None
                node._release()
            if g is None:
                continue
            if watched:
                for f in on_node:
                    g = f(node, g)
            if wanted is not None and node in wanted:
                results[node] = g
            op = node.op
            args = xs
            if node.stamp != clock or careful:
                out, args = _unpack(node, edges, xs, out)
            if "packed" in (node.extra or ()):
                out, args = _unpacked(node, edges, out, args)
            for i, e in enumerate(edges):
                if e is None or needed is not None and e not in needed:
                    continue
                x = xs[i]
                gx = raw = op.vjp_rule(i)(g, out, *args, **kw)
                xd, gd = x._data, raw._data
                if gd.shape != xd.shape or gd.dtype is not xd.dtype:
                    gx = _fit(op, i, raw, x)
                if watched:
                    for f in on_edge:
                        f(node, i, x, raw, gx)
                prev = grads.get(e)
                if prev is None:
                    grads[e] = gx
                    outs[e] = x
                else:
                    grads[e] = prev + gx
            if watched:
                for f in on_done:
                    f(node, edges, xs, grads)
    finally:
        _ctx.set_grad_mode(prev_mode)
        if watched:
            for f in _ctx.on_pass:
                f(False)
    return results


# ---------------------------------------------------------------- saved-tensor hooks
# While ``autograd.graph.saved_tensors_hooks(pack, unpack)`` is on (``_context.packing``),
# every value a node's rules read is packed when the node is recorded and unpacked when its
# rules run, as torch does with its saved variables.

def _pack(node: Node, out: Tensor) -> None:
    global _packed
    _packed = True
    pack = _ctx.pack_hooks[-1][0]
    reads_in, reads_out = node.op.reads(node.next)
    packed = {}
    with _ctx.unrecorded(), no_grad():
        for i, x in enumerate(node.inputs):
            if reads_in is None or i in reads_in:
                packed[i] = pack(x)
        if reads_out:
            packed["out"] = pack(out)
    node._extra()["packed"] = (packed, _ctx.pack_hooks[-1][1])


def _unpacked(node: Node, edges: tuple, out: Tensor, args: tuple) -> tuple[Tensor, tuple]:
    packed, unpack = node.extra["packed"]
    args = list(args)
    for k, v in packed.items():
        t = unpack(v)
        if not isinstance(t, Tensor):
            raise TypeError(f"saved_tensors_hooks: unpack_hook must return a Tensor, got "
                            f"{type(t).__name__} (for '{node.op.name}')")
        if k == "out":
            out = t if t._node is node else _stand_in(t._data, node)
        else:
            e = edges[k]
            args[k] = t if key_of(t) is e else _stand_in(t._data, LEAF if isinstance(e, Tensor) else e)
    return out, tuple(args)


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
         only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False
         ) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, as ``torch.autograd.grad``.

    ``is_grads_batched``: each grad_output has a leading batch dimension and the result
    gets one too (one backward sweep of the batched cotangents, through ``func.vmap``);
    ``materialize_grads``: zeros instead of None for an unused input.

    >>> import duograd as dg
    >>> x = dg.tensor(3.0, requires_grad=True)
    >>> (gx,) = dg.grad(x ** 3, x, create_graph=True)   # 3x^2, with history
    >>> (gxx,) = dg.grad(gx, x)                          # 6x
    >>> float(gx), float(gxx)
    (27.0, 18.0)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    allow_unused = bool(materialize_grads) if allow_unused is None else allow_unused
    if is_grads_batched or materialize_grads:
        return _grad_extras(outputs, inputs, grad_outputs, retain_graph, create_graph,
                            allow_unused, is_grads_batched, materialize_grads)
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
    keys = [key_of(x) for x in inputs]
    results = backpropagate(outputs, seeds, create_graph, retain_graph, targets=keys,
                            allow_unused=allow_unused)
    return tuple(results.get(k) for k in keys)



def _grad_extras(outputs: Any, inputs: Any, grad_outputs: Any, retain_graph: bool | None,
                 create_graph: bool, allow_unused: bool, batched: bool,
                 materialize: bool) -> tuple[Tensor | None, ...]:
    """``grad`` with ``is_grads_batched`` (one backward sweep of batched cotangents, through
    ``func.vmap``, as torch; a VJP rule that reads a batched value makes it a loop of
    backwards over the batch entries) and/or ``materialize_grads`` (zeros for None)."""
    many_in = not isinstance(inputs, Tensor)
    ins = tuple(inputs) if many_in else (inputs,)
    if not batched:
        res = grad(outputs, ins, grad_outputs, retain_graph, create_graph, allow_unused=allow_unused)
    else:
        from ..ops import stack
        outs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        gos = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs or ())
        if len(gos) != len(outs) or not all(isinstance(g, Tensor) and g.ndim >= 1 for g in gos):
            raise RuntimeError("grad: is_grads_batched=True needs one grad_output per output, each "
                               "a Tensor with a leading batch dimension")
        n = gos[0].shape[0]
        for i, (g, o) in enumerate(zip(gos, outs)):
            if g.shape[0] != n or tuple(g.shape[1:]) != tuple(o.shape):
                raise RuntimeError(f"grad: with is_grads_batched=True, grad_output {i} has shape "
                                   f"{g.shape}; expected ({n},) + {o.shape}")
        if retain_graph is None:
            retain_graph = create_graph
        from .. import batching, func
        unused: list = []

        def one(*gs: Tensor) -> tuple:
            r = grad(outs, ins, list(gs), True, create_graph, allow_unused=allow_unused)
            unused[:] = [g is None for g in r]
            return tuple(zeros_like_p(x) if g is None else g for g, x in zip(r, ins))
        try:
            got = func.vmap(one)(*gos) if n else None
        except batching.ValueAccessError:
            got = None
        if got is not None:
            res = tuple(None if u else g for g, u in zip(got, unused))
            if not retain_graph:  # what the sweep would have let go of, as one backward does
                for node in _toposort([o for o in outs if o.requires_grad]):
                    if type(node) is Node:
                        node._release()
        else:
            rows = [grad(outs, ins, [g[b] for g in gos], True if b < n - 1 else retain_graph,
                         create_graph, allow_unused=allow_unused) for b in range(n)]
            res = tuple(None if not rows or rows[0][j] is None else stack([r[j] for r in rows])
                        for j in range(len(ins)))
    if materialize:
        res = tuple(zeros_like_p(x) if r is None else r for r, x in zip(res, ins))
    return res
