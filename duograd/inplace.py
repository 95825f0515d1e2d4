"""In-place operations, as torch's: ``add_ ... normal_``, ``+=``, ``t[idx] = v``.

Every in-place write goes through one function, ``write(t, op, *operands)``: it computes
``op(t, *operands)`` with the ordinary primitives (so the result is recorded like any other
operation), copies the values into ``t``'s own array, bumps the version of that memory
(``autograd.bump``) and, when the result has history, rebases ``t`` onto it
(``autograd.rebase``): ``t`` becomes the node of the in-place op, whose input is a stand-in
holding the node ``t`` had. So ``t`` keeps its identity (views and ``from_numpy`` arrays see
the new values) and its gradient flows through its old value, as in torch.

Rules torch has and this module keeps:

- A leaf that requires grad cannot be written while autograd records (``RuntimeError``);
  inside ``no_grad`` it can, and stays a leaf that requires grad.
- A backward that needs a value saved before a write raises the version error, naming the
  operation that saved it and both versions (``autograd._as_recorded``).
- A write into a view changes the memory its base shares; a backward through the base's
  own graph after such a write raises (duograd does not rebase the base; torch does).

``.data`` stays a NumPy escape hatch: writing into ``t.data`` changes the values and bumps
nothing, as torch's ``.data``.

>>> import duograd as dg
>>> w = dg.tensor([1.0, 2.0], requires_grad=True)
>>> (w * w).sum().backward()
>>> with dg.no_grad():
...     w -= 0.5 * w.grad
>>> w.detach().numpy(), w.is_leaf, w.requires_grad, w._version
(array([0., 0.]), True, True, 1)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import ops
from ._tensor import Tensor, _derive, _draw, _new
from . import _context as _ctx
from .random import as_rng
from .autograd import LINEAR, Primitive, bump, rebase, zeros_like_p


def _assign_fwd(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.array(np.broadcast_to(v, x.shape), dtype=x.dtype)


# The new value ignores the old one: no gradient to x, all of it (summed back) to v.
assign_p = Primitive("assign", _assign_fwd,
                     vjp=(lambda g, out, x, v: zeros_like_p(g), lambda g, out, x, v: g), jvp=LINEAR)


def _setitem_fwd(x: np.ndarray, v: np.ndarray, index: Any, basic: bool) -> np.ndarray:
    out = x.copy()
    out[index] = v
    return out


# x with v written at index: x's cotangent is g with zeros there, v's is g read there
# (the engine sums it back to v's shape when v was broadcast). Linear in (x, v) jointly.
setitem_p = Primitive("setitem", _setitem_fwd,
                      vjp=(lambda g, out, x, v, index, basic: setitem_p(g, 0.0, index=index, basic=basic),
                           lambda g, out, x, v, index, basic: ops.getitem_p(g, index=index, basic=basic)),
                      jvp=LINEAR)


def write(t: Any, op: Any, *operands: Any, name: str, keep: bool = False, **kw: Any) -> Tensor:
    """THE in-place write: ``t``'s values become ``op(t, *operands, **kw)``; returns ``t``.

    Every in-place method, augmented assignment and ``__setitem__`` comes here (the
    optimizers write with NumPy and call ``autograd.bump``), so this is the one place that
    checks, records, writes, counts the version and rebases. ``op`` is a primitive or a
    function of primitives; ``t`` is passed to it as a stand-in that holds its current node.
    ``keep``: ``op``'s VJP rules read ``t``'s value before the write (mul_ when the other
    factor requires grad, pow_, clamp_), so the stand-in keeps a copy of it, as torch saves
    the original.
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    recording = _ctx.grad_enabled
    if recording and t.requires_grad and t._op is None:
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                           "in-place operation. (Update parameters inside dg.no_grad(), or "
                           "write to a clone().)")
    if not t._data.flags.writeable:
        raise RuntimeError(f"{name}: the tensor of shape {t.shape} is read-only (a broadcast "
                           "view, where several elements share one memory location, or a "
                           "read-only array); clone() it first")
    src = t
    if keep and not (t.requires_grad or any(_requires(o) for o in operands)):
        keep = False  # nothing will be recorded: no old value to keep
    if recording:  # t's value before the write, holding t's node (t itself gets a new one)
        src = _new(Tensor)
        src._data, src._grad, src._tangent = _derive(np.copy, t._data) if keep else t._data, None, t._tangent
        src.requires_grad, src._op, src._inputs, src._kw = t.requires_grad, t._op, t._inputs, t._kw
        if t._op is not None:
            src._stamp = t._stamp
        operands = tuple(src if o is t else o for o in operands)
    try:
        new = op(src, *operands, **kw)
    except ValueError as e:  # shapes that do not broadcast: torch's class for it
        raise RuntimeError(f"{name}: {e}") from None
    if new.shape != t.shape:
        raise RuntimeError(f"{name}: output with shape {list(t.shape)} doesn't match the "
                           f"broadcast shape {list(new.shape)}")
    if new.dtype != t.dtype:
        if not np.can_cast(new.dtype, t.dtype, "same_kind"):
            raise RuntimeError(f"{name}: result type {new.dtype} can't be cast to the desired "
                               f"output type {t.dtype}")
        if new.requires_grad:
            new = ops.cast_p(new, dtype=t.dtype)
    if _ctx.on_write:  # listeners: dg.compile's recording takes the write as an effect
        _ctx.write(t, name, new, src)
    # Another holder of the array (a view's .base, a view of it) means other tensors may
    # share the memory: t's own reference, src's, getrefcount's argument are the expected ones.
    alias = t._data.base is not None or sys.getrefcount(t._data) > 2 + (src._data is t._data)
    np.copyto(t._data, new._data, casting="same_kind")
    w = bump(t)
    if new.requires_grad:
        rebase(t, src, new, w, alias)
    if new._tangent:
        t._tangent = new._tangent
    return t


# ---------------------------------------------------------------- the methods

def _scaled(other: Any, alpha: Any) -> Any:
    return other if alpha == 1 else ops.mul_p(other, alpha) if isinstance(other, Tensor) else other * alpha


def add_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``t += alpha * other`` in place; returns ``t``."""
    return write(t, ops.add_p, _scaled(other, alpha), name="add_")


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``t -= alpha * other`` in place; returns ``t``."""
    return write(t, ops.sub_p, _scaled(other, alpha), name="sub_")


def _requires(x: Any) -> bool:
    return isinstance(x, Tensor) and x.requires_grad


def mul_(t: Tensor, other: Any) -> Tensor:
    """``t *= other`` in place; returns ``t``."""
    return write(t, ops.mul_p, other, name="mul_", keep=_requires(other))


def div_(t: Tensor, other: Any) -> Tensor:
    """``t /= other`` in place; returns ``t``."""
    return write(t, ops.div_p, other, name="div_")


def pow_(t: Tensor, exponent: Any) -> Tensor:
    """``t = t ** exponent`` in place; returns ``t``."""
    return write(t, ops.pow_p, exponent, name="pow_", keep=True)


def neg_(t: Tensor) -> Tensor:
    """``t = -t`` in place; returns ``t``."""
    return write(t, ops.neg_p, name="neg_")


def exp_(t: Tensor) -> Tensor:
    """``t = exp(t)`` in place; returns ``t``."""
    return write(t, ops.exp_p, name="exp_")


def clamp_(t: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 (torch's names)
    """``t`` limited to [min, max] in place (the gradient passes where min <= t <= max)."""
    if min is None and max is None:
        raise RuntimeError("clamp_: At least one of 'min' or 'max' must not be None")
    return write(t, ops.clip, min, max, name="clamp_", keep=True)


def zero_(t: Tensor) -> Tensor:
    """Zeros written into ``t``; returns ``t`` (no gradient reaches its old value)."""
    return write(t, assign_p, 0.0, name="zero_")


def fill_(t: Tensor, value: Any) -> Tensor:
    """``value`` (a number or a 0-d Tensor, differentiable) written everywhere in ``t``."""
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_: only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions")
    return write(t, assign_p, value, name="fill_")


def copy_(t: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """``src`` (broadcast to ``t``'s shape, cast to its dtype) written into ``t``;
    differentiable with respect to ``src``."""
    shape = np.shape(src._data if isinstance(src, Tensor) else src)
    try:
        ok = np.broadcast_shapes(shape, t.shape) == t.shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"copy_: the source of shape {list(shape)} must be broadcastable to "
                           f"the destination's shape {list(t.shape)}")
    return write(t, assign_p, src, name="copy_")


def _generator(generator: Any) -> np.random.Generator:
    """``generator``, else duograd's default generator (the one ``dg.manual_seed`` seeds)."""
    return as_rng(generator=generator)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with uniform samples from [a, b); ``generator``: a NumPy Generator."""
    values = _draw(_generator(generator).uniform, a, b, t.shape)
    return write(t, assign_p, values.astype(t.dtype, copy=False), name="uniform_")


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with normal samples; ``generator``: a NumPy Generator."""
    values = _draw(_generator(generator).normal, mean, std, t.shape)
    return write(t, assign_p, values.astype(t.dtype, copy=False), name="normal_")


def _index(index: Any) -> tuple[tuple, bool]:
    """An index as getitem reads it: its parts, and whether it is basic (no arrays)."""
    parts = index if isinstance(index, tuple) else (index,)
    parts = tuple(ops._index_part(i) for i in parts)
    basic = all(isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis)))
                and not isinstance(i, bool) for i in parts)
    return parts, basic


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``, differentiable with respect to ``t``'s earlier value and ``value``."""
    parts, basic = _index(index)
    write(t, setitem_p, value, index=parts, basic=basic, name="setitem")


def imatmul(t: Tensor, other: Any) -> Any:
    """``t @= other``: in place when ``t @ other`` has ``t``'s shape (``other`` square in its
    last two dims, its batch dims broadcasting into ``t``'s), else ``NotImplemented``: Python
    then rebinds ``t`` to ``t @ other``, which is what torch always does."""
    shape = np.shape(other._data if isinstance(other, Tensor) else other)
    k = t.shape[-1] if t.ndim else None
    fits = (t.ndim >= 2 and len(shape) >= 2 and shape[-2:] == (k, k) and len(shape) <= t.ndim
            and all(a in (1, b) for a, b in zip(shape[-3::-1], t.shape[-3::-1])))
    if not fits:
        return NotImplemented
    return write(t, ops.matmul_p, other, name="__imatmul__", keep=_requires(other))


# ---------------------------------------------------------------- branch `methods`: the in-place
# twin of every elementwise, activation, comparison and indexing method torch has as a Tensor
# method (``relu_``, ``sigmoid_``, ``masked_fill_``, ``index_add_``, ``addcmul_``, ...). Each
# computes the out-of-place method on the stand-in and goes through ``write`` (checks, the
# write, the version, the rebase). ``keep``: the old value is kept for the rules that read it.
# Left out, because they change the shape or the strides and not the values (``write`` keeps a
# tensor's shape): ``t_``, ``transpose_``, ``swapaxes_``, ``swapdims_``, ``squeeze_``,
# ``unsqueeze_``, ``resize_``, ``as_strided_``.

TWINS = (
    # elementwise, one input
    "abs", "absolute", "acos", "arccos", "acosh", "arccosh", "asin", "arcsin", "asinh", "arcsinh",
    "atan", "arctan", "atanh", "arctanh", "ceil", "floor", "trunc", "fix", "round", "frac", "cos",
    "cosh", "sin", "sinh", "tan", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "log", "log2",
    "log10", "log1p", "exp2", "expm1", "erf", "erfc", "erfinv", "sign", "sgn", "reciprocal",
    "square", "negative", "deg2rad", "rad2deg", "logit", "nan_to_num", "logical_not", "bitwise_not",
    "clamp_min", "clamp_max", "clip", "cumsum", "cumprod", "tril", "triu",
    # two or more inputs
    "atan2", "arctan2", "copysign", "hypot", "fmod", "remainder", "floor_divide", "true_divide",
    "divide", "multiply", "subtract", "xlogy", "heaviside", "lerp", "addcmul", "addcdiv",
    "addmm", "addmv", "addr", "addbmm", "baddbmm", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor",
    # comparisons (the bool result is written in the tensor's own dtype)
    "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
    "greater_equal",
    # indexing
    "masked_fill", "index_fill", "index_copy", "index_add", "scatter", "scatter_add",
    "scatter_reduce", "put",
)


def _method(base: str) -> Any:
    def op(x: Tensor, *args: Any, **kw: Any) -> Tensor:
        return getattr(x, base)(*args, **kw)
    return op


def twin(t: Tensor, base: str, *args: Any, **kw: Any) -> Tensor:
    """``t``'s values replaced by ``t.<base>(*args, **kw)`` through ``write``; returns ``t``.

    >>> import duograd as dg
    >>> x = dg.tensor([-1.0, 2.0])
    >>> twin(x, "relu") is x, x.numpy(), x._version
    (True, array([0., 2.]), 1)
    """
    return write(t, _method(base), *args, name=base + "_", keep=True, **kw)


def _make_twin(base: str) -> Any:
    def method(t: Tensor, *args: Any, **kw: Any) -> Tensor:
        return twin(t, base, *args, **kw)
    method.__name__ = method.__qualname__ = base + "_"
    method.__doc__ = (f"In place: ``t`` becomes ``t.{base}(...)``, as torch's ``Tensor.{base}_``; "
                      "returns ``t`` (its version bumped; differentiable as the out-of-place op).")
    return method


for _base in TWINS:
    globals()[_base + "_"] = _make_twin(_base)


def div_(t: Tensor, other: Any, *, rounding_mode: Any = None) -> Tensor:  # noqa: F811 (replaces the one above)
    """``t /= other`` in place, rounded as ``torch.div``'s ``rounding_mode``; returns ``t``.

    >>> import duograd as dg
    >>> dg.tensor([7, -7]).div_(2, rounding_mode="floor").numpy()
    array([ 3, -4])
    """
    if rounding_mode is None:
        return write(t, ops.div_p, other, name="div_")
    return write(t, _method("div"), other, name="div_", keep=True, rounding_mode=rounding_mode)
