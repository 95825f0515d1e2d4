"""``dg.checkpoint(fn, *args)``: trade compute for memory.

``fn(*args)`` runs without recording, so none of its intermediate results is kept; the
graph gets one node in their place. Its inputs are the Tensors that require grad and
that ``fn`` read: the Tensor arguments and also the ones it reached by itself, such as
a module's parameters (found by recording the primitive calls of that first run with
``autograd.trace``). When a backward pass reaches the node, its rule runs ``fn`` again
on the same inputs, this time recording, and takes ``dg.grad`` of the recomputed
output with the arriving cotangent: the same rules on the same values, so the
gradients equal the plain call's bit for bit. Under ``create_graph`` the recomputation
and its gradient are recorded, so a gradient penalty through a checkpointed block
differentiates again; its second-order gradients are the plain call's terms summed in
another order (the recomputed graph is a second copy of the block), equal to round-off
(tests/inspection/test_hooks_checkpoint.py: 1e-13 relative), not bit for bit.

``fn`` must compute the same thing both times (no randomness of its own, such as
dropout drawing fresh masks) and return one Tensor.

>>> import numpy as np, duograd as dg
>>> W = dg.tensor(np.full((3, 3), 0.1), requires_grad=True)
>>> x = dg.tensor(np.ones((2, 3)), requires_grad=True)
>>> block = lambda h: (h @ W).tanh() @ W
>>> dg.checkpoint(block, x).sum().backward()
>>> gW, gx = W.grad.numpy().copy(), x.grad.numpy().copy()
>>> W.grad = x.grad = None
>>> block(x).sum().backward()
>>> bool((W.grad.numpy() == gW).all() and (x.grad.numpy() == gx).all())
True
"""

from __future__ import annotations

from typing import Any, Callable

from . import autograd
from .autograd import Variadic, enable_grad, is_grad_enabled, no_grad
from ._node import Node
from ._tensor import Tensor, _wrap


def _rule(i: int, g: Tensor, out: Tensor, *inputs: Tensor, fn: Callable, args: tuple,
          memo: dict) -> Tensor:
    """Input ``i``'s cotangent. The first call for a given ``g`` recomputes ``fn`` and
    takes every input's gradient at once; the calls for the other inputs reuse them."""
    if memo.get("g") is not g:
        create = is_grad_enabled()  # the backward records exactly when create_graph is on
        stand_in = {}
        if not create:
            # Plain backward: stand-ins that share the arguments' data, so the recomputed
            # graph ends at them instead of reaching back through the whole outer graph.
            stand_in = {id(x): _wrap(x._data, True) for x in inputs if type(x._node) is Node}
        call = tuple(stand_in.get(id(a), a) if isinstance(a, Tensor) else a for a in args)
        wrt = tuple(stand_in.get(id(x), x) for x in inputs)
        with enable_grad():
            y = fn(*call)
        gs = autograd.grad(y, wrt, grad_outputs=g, create_graph=create, allow_unused=True)
        memo["g"], memo["grads"] = g, gs
    gx = memo["grads"][i]
    return autograd.zeros_like_p(inputs[i]) if gx is None else gx


# The forward is never called through the primitive (``checkpoint`` makes the node), so
# explain's finite-difference check has no forward of its own to test the rule against.
checkpoint_p = Variadic("checkpoint", lambda *xs, fn, args, memo: fn(*args)._data, vjp=(_rule,),
                        checkable=False)


def checkpoint(fn: Callable[..., Tensor], *args: Any) -> Tensor:
    """``fn(*args)`` without keeping its intermediate results; the backward pass runs
    ``fn`` again to get them. Gradients equal the plain call's bit for bit, also under
    ``create_graph=True``.

    >>> import duograd as dg
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dg.checkpoint(lambda t: (t * t).exp(), x)
    >>> (gx,) = dg.grad(y.sum(), x)
    >>> gx.numpy().round(3)
    array([  5.437, 218.393])
    """
    if not callable(fn):
        raise TypeError(f"checkpoint: expected a callable, got {type(fn).__name__}")
    if not is_grad_enabled():
        return fn(*args)
    with autograd.trace() as calls, no_grad():
        out = fn(*args)
    if not isinstance(out, Tensor):
        raise TypeError(f"checkpoint: fn must return one Tensor, got {type(out).__name__}")
    made = {id(o) for _, _, _, o in calls}
    inputs: dict[int, Tensor] = {}
    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            inputs.setdefault(id(a), a)
    for _, xs, _, _ in calls:
        for x in xs:
            if x.requires_grad and id(x) not in made:
                inputs.setdefault(id(x), x)
    if not inputs:
        return out
    del calls  # the recording held every intermediate; let them go now
    return _wrap(out._data, node=autograd.make_node(checkpoint_p, tuple(inputs.values()),
                                                    {"fn": fn, "args": args, "memo": {}}))
