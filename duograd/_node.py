"""The graph node, apart from the Tensor: what ``t.grad_fn`` is.

A Tensor computed while autograd records points to the ``Node`` that made it
(``Tensor._node``); a leaf that requires grad points to ``LEAF``; any other tensor to
None. A node holds what its backward needs and nothing more:

- ``op``: the primitive (its VJP rules, and the facts the tools read);
- ``next``: per input, the node that input had *when this node was recorded* (the leaf
  Tensor itself for a leaf that requires grad, None for an input that needs no gradient),
  which are the graph's keys (``autograd.key_of``). These are the
  edges of the graph: an in-place write later gives a tensor a new node, and every node
  recorded before the write keeps the edge to the old one, by construction;
- ``inputs``, ``kw``: the saved input Tensors and keyword parameters the rules read.
  ``inputs`` is a tuple made when read: the node keeps one or two inputs in its own slots
  ``_x0``, ``_x1`` (the tuple itself in ``_x0`` for any other number), so that an op leaves
  one tuple (``next``) rather than two for the cyclic garbage collector to track: an eager
  chain of 20,000 ops otherwise sets off a full collection (``benchmarks/gc_chain.py``).
  Once a backward has released the node, ``next``, ``inputs`` and ``kw`` are None;
- ``stamp``: the write clock at recording (``duograd._versions``): the version every saved
  value had, so that unpacking one after a write to its memory raises torch's error;
- ``extra``: None, or a dict for what few nodes carry (hooks, ``metadata``, values packed
  by saved-tensor hooks); its slot stays empty until one is needed, so a node costs it
  nothing;
- ``_g``, ``_out``: the backward pass's own (``autograd.backpropagate``): while a pass
  runs, the number of consumers still to come and then the cotangent summed so far, and
  the output Tensor the first consumer handed on; None (``_out``: empty) otherwise.

The node holds no reference to its own output (that would make a cycle with
``Tensor._node``): the backward pass takes the output from the consumer that reached it.

Torch's view of a node is here too: ``name()`` (torch's class names, ``MulBackward0``),
``next_functions`` (pairs of node and input number, an ``AccumulateGrad`` holding
``.variable`` for a leaf), ``register_hook``/``register_prehook`` and ``metadata``.

>>> import duograd as dg
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * 3).sum()
>>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
('SumBackward0', 'MulBackward0')
>>> y.grad_fn.next_functions[0][0].next_functions[0][0].variable is x
True
"""

from __future__ import annotations

import itertools
from typing import Any, Callable


class _Leaf:
    """The ``_node`` of a leaf that requires grad (one object for all of them)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "LEAF"


LEAF = _Leaf()
_hook_ids = itertools.count()


class _Handle:
    """What ``register_hook`` returns; ``remove()`` takes the hook off (twice is fine)."""

    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self) -> "_Handle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Node:
    """A node of the backward graph (``t.grad_fn``), as torch's ``autograd.graph.Node``."""

    # (a node is made with ``Node()`` and its fields stored one by one: the hot path of
    # ``Primitive.__call__``; ``_x`` holds ``extra`` once something needs it)
    __slots__ = ("op", "next", "_x0", "_x1", "kw", "stamp", "_g", "_out", "_x", "__weakref__")

    def name(self) -> str:
        """Torch's name for this node's class (``AddBackward0``, ``MmBackward0``, ...)."""
        return torch_name(self)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def inputs(self) -> tuple | None:
        """The saved inputs, one per edge of ``next`` (None once released). The backward
        pass and ``Primitive.__call__`` read and write ``_x0``/``_x1`` as here."""
        edges = self.next
        if edges is None:
            return None
        n = len(edges)
        return (self._x0, self._x1) if n == 2 else (self._x0,) if n == 1 else self._x0

    def _link(self, edges: tuple, inputs: tuple) -> None:
        """Store ``edges`` and ``inputs`` (one edge per input), as ``inputs`` reads them back."""
        self.next = edges
        if len(inputs) == 2:
            self._x0, self._x1 = inputs
        elif len(inputs) == 1:
            self._x0 = inputs[0]
        else:
            self._x0 = inputs

    def _release(self) -> None:
        """Let go of the edges and saved values (a backward without retain_graph)."""
        self.next = self._x0 = self._x1 = self.kw = None

    @property
    def next_functions(self) -> tuple:
        """Per input, ``(node, 0)``: the node that input had when this one was recorded,
        an ``AccumulateGrad`` for a leaf that requires grad, or None."""
        if self.next is None:
            return ()
        out = []
        for e in self.next:
            out.append((e if e is None or type(e) is Node else accumulator(e), 0))
        return tuple(out)

    @property
    def metadata(self) -> dict:
        """A dict of your own, kept with the node (torch's ``Node.metadata``)."""
        return self._extra().setdefault("metadata", {})

    @property
    def extra(self) -> dict | None:
        """None, or the dict of what this node carries (hooks, ``metadata``, packed values)."""
        try:
            return self._x
        except AttributeError:
            return None

    def _extra(self) -> dict:
        try:
            return self._x
        except AttributeError:
            x = self._x = {}
            return x

    def register_prehook(self, fn: Callable) -> _Handle:
        """``fn(grad_outputs)`` runs before this node's rules; a tuple it returns replaces
        the gradient (torch's ``Node.register_prehook``)."""
        return self._add("prehooks", fn)

    def register_hook(self, fn: Callable) -> _Handle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node's rules (torch's
        ``Node.register_hook``); a tuple it returns replaces the inputs' gradients."""
        return self._add("hooks", fn)

    def _add(self, kind: str, fn: Callable) -> _Handle:
        if not callable(fn):
            raise TypeError(f"{kind[:-1]}: expected a callable, got {type(fn).__name__}")
        from . import hooks  # the listener that runs node hooks (it imports this module)
        table = self._extra().setdefault(kind, {})
        key = next(_hook_ids)
        table[key] = fn
        hooks.watch_node(self)
        return _Handle(table, key)


class AccumulateGrad:
    """torch's node for a leaf: ``variable`` is the leaf whose ``.grad`` it accumulates."""

    __slots__ = ("variable", "__weakref__")

    def __init__(self, variable: Any) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    @property
    def metadata(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def accumulator(t: Any) -> AccumulateGrad:
    """The ``AccumulateGrad`` of leaf ``t`` (the same object while one is alive)."""
    acc = _ACCUMULATORS.get(id(t))
    if acc is None or acc.variable is not t:
        acc = AccumulateGrad(t)
        _ACCUMULATORS[id(t)] = acc
    return acc


import weakref  # noqa: E402

_ACCUMULATORS: "weakref.WeakValueDictionary[int, AccumulateGrad]" = weakref.WeakValueDictionary()


# ---------------------------------------------------------------- torch's names
# The primitive's name, as torch names the node of the same operation. A row whose torch
# node depends on the call (sum with or without dims, matmul of 1-D, 2-D or batched
# operands) has a function of the node. Anything else is CamelCase + "Backward0".

def _matmul_name(node: Node) -> str:
    a, b = (x.ndim for x in node.inputs)
    if a == 1 and b == 1:
        return "DotBackward0"
    if a == 2 and b == 2:
        return "MmBackward0"
    if a == 2 and b == 1:
        return "MvBackward0"
    return "UnsafeViewBackward0" if a > 2 and b <= 2 else "BmmBackward0"


def _by_dims(name: str) -> Callable[[Node], str]:
    """torch's ``...Backward0`` for a reduction over every dim, ``...Backward1`` with ``dim``."""
    def name_of(node: Node) -> str:
        axis, ndim = node.kw.get("axis"), node.inputs[0].ndim if node.inputs else 0
        every = axis is None or not node.kw.get("keepdims") and len(tuple(axis)) == ndim
        return f"{name}Backward{0 if every else 1}"
    return name_of


_TORCH_NAMES: dict[str, Any] = {
    "add": "AddBackward0", "sub": "SubBackward0", "mul": "MulBackward0", "div": "DivBackward0",
    "neg": "NegBackward0", "matmul": _matmul_name, "sum": _by_dims("Sum"), "mean": _by_dims("Mean"),
    "relu": "ReluBackward0", "exp": "ExpBackward0", "log": "LogBackward0", "tanh": "TanhBackward0",
    "sigmoid": "SigmoidBackward0", "power": "PowBackward0", "pow": "PowBackward0",
    "transpose": "TransposeBackward0", "permute": "PermuteBackward0", "reshape": "ViewBackward0",
    "getitem": "IndexBackward0", "cast": "ToCopyBackward0", "broadcast_to": "ExpandBackward0",
    "logsumexp": "LogsumexpBackward0", "abs": "AbsBackward0", "absolute": "AbsBackward0",
    "sqrt": "SqrtBackward0", "sin": "SinBackward0", "cos": "CosBackward0", "addmm": "AddmmBackward0",
    "t": "TBackward0", "conv2d": "ConvolutionBackward0",
    "max_pool2d": "MaxPool2DWithIndicesBackward0", "avg_pool2d": "AvgPool2DBackward0",
    "softmax": "SoftmaxBackward0", "log_softmax": "LogSoftmaxBackward0", "maximum": "MaximumBackward0",
    "minimum": "MinimumBackward0", "where": "WhereBackward0",
    "clip": "ClampBackward1",
}


def torch_name(node: Node) -> str:
    """Torch's class name for ``node``'s operation."""
    name = node.op.name
    known = _TORCH_NAMES.get(name)
    if known is None:
        base = name.split("[")[0]
        return "".join(p[:1].upper() + p[1:] for p in base.split("_")) + "Backward0"
    return known if isinstance(known, str) else known(node)
