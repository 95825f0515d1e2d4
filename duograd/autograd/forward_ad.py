"""``dg.autograd.forward_ad``, as ``torch.autograd.forward_ad``: dual tensors on the
engine's forward mode.

A ``dual_level`` is one forward-mode level of the engine (``engine.enter_forward_level``,
the same levels ``func.jvp`` opens). ``make_dual(x, t)`` gives a view of ``x`` carrying the
tangent ``t`` at that level; every primitive called on it pushes the tangent through its
JVP rule, so nn layers (Linear, convolutions, activations, normalisations) work on dual
tensors unchanged. ``unpack_dual(y)`` reads ``(primal, tangent)`` back; the tangent is
None for a tensor that carries none. As in torch, only one level may be open at a time.

>>> import duograd as dg
>>> import duograd.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(dg.tensor([1.0, 2.0]), dg.ones(2)) ** 2
...     fwAD.unpack_dual(y).tangent.numpy()
array([2., 4.])
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._tensor import Tensor
from .engine import enter_forward_level, exit_forward_level, set_tangent

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

_current_level = -1  # torch's value when no level is open


def enter_dual_level() -> int:
    """Open the forward-mode level and return its index (torch's nesting error if one is
    open already).

    >>> import duograd.autograd.forward_ad as fwAD
    >>> lvl = fwAD.enter_dual_level(); fwAD.exit_dual_level(level=lvl)
    """
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = enter_forward_level()
    return _current_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level (the current one by default); the tangents it carried vanish.

    >>> import duograd.autograd.forward_ad as fwAD
    >>> fwAD.enter_dual_level() > 0
    True
    >>> fwAD.exit_dual_level()
    """
    global _current_level
    level = _current_level if level is None else level
    if level != _current_level or level < 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    exit_forward_level(level)
    _current_level = -1


def _level(level: int | None) -> int:
    return _current_level if level is None else level


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` at the level (the open one by default).

    >>> import duograd as dg
    >>> import duograd.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(dg.tensor(3.0), dg.tensor(1.0))
    ...     float(fwAD.unpack_dual(d.sin()).tangent)  # cos(3)
    -0.9899924966004454
    """
    lvl = _level(level)
    if lvl < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        bad = tensor if not isinstance(tensor, Tensor) else tangent
        raise TypeError(f"make_dual: expected Tensors, got {type(bad).__name__}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the "
            f"given forward gradient is of size {list(tangent.shape)}.")
    if not tensor.is_floating_point() and not tensor.is_complex():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point() and not tangent.is_complex():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    from ..ops import identity_p
    dual = identity_p(tensor)
    set_tangent(dual, lvl, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype))
    return dual


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without the tangent) and the tangent
    (None if the tensor carries none at the level).

    >>> import duograd as dg
    >>> import duograd.autograd.forward_ad as fwAD
    >>> fwAD.UnpackedDualTensor._fields
    ('primal', 'tangent')
    """

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at the level (the open one by default).

    >>> import duograd as dg
    >>> import duograd.autograd.forward_ad as fwAD
    >>> fwAD.unpack_dual(dg.tensor(1.0)).tangent is None
    True
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    lvl = _level(level)
    if lvl < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tensor._tangent.get(lvl) if tensor._tangent else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    from ..ops import identity_p
    primal = identity_p(tensor)
    if primal._tangent:  # the view is the primal alone
        primal._tangent = {k: v for k, v in primal._tangent.items() if k != lvl} or None
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """The block in which dual tensors live, as ``torch.autograd.forward_ad.dual_level``.

    >>> import duograd as dg
    >>> import duograd.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(dg.tensor(2.0), dg.tensor(1.0))
    >>> fwAD.unpack_dual(d).tangent is None
    True
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()
