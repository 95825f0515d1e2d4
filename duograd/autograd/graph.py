"""``dg.autograd.graph``, as ``torch.autograd.graph``: the graph's ``Node`` and the hooks on
saved tensors.

``saved_tensors_hooks(pack_hook, unpack_hook)``: while the block runs, every value that an
operation saves for its backward (the inputs and result its VJP rules read, as torch's
saved variables: ``Primitive.reads``) is passed to ``pack_hook`` when the operation is
recorded, and what that returned is passed to ``unpack_hook`` when the backward needs it;
``unpack_hook`` returns a Tensor with the same values. ``save_on_cpu`` keeps saved values
on the CPU, where they are already, so it only checks its arguments.

>>> import duograd as dg
>>> packed = []
>>> def pack(t):
...     packed.append(t.shape)
...     return t
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> with dg.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
...     y = (x * x).sum()
>>> y.backward()
>>> packed, x.grad.tolist()
([(2,), (2,)], [2.0, 4.0])
"""

from __future__ import annotations

from typing import Any, Callable

from .. import _context
from .._node import AccumulateGrad, Node

__all__ = ["Node", "AccumulateGrad", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` for every saved value, ``unpack_hook(packed)``
    when a backward reads it (torch's ``autograd.graph.saved_tensors_hooks``)."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callables")
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        if _disabled:
            raise RuntimeError(f"saved_tensors_hooks: {_disabled[-1]}")
        _context.push_pack_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc: object) -> None:
        _context.pop_pack_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved values kept on the CPU (``pin_memory`` accepted): on this CPU engine they are
    there already, so the hooks pass them through."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


_disabled: list[str] = []


class disable_saved_tensors_hooks:
    """Context manager under which ``saved_tensors_hooks`` raises with ``error_message``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _disabled.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _disabled.pop()
