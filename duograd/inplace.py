"""In-place operations, as torch's: ``add_ ... normal_``, ``+=``, ``t[idx] = v``.

Every in-place write goes through one function, ``write(t, op, *operands)``: it computes
``op(t, *operands)`` with the ordinary primitives (so the result is recorded like any other
operation), copies the values into ``t``'s own array and bumps the version of that memory
(``_versions.bump``). When the result has history, ``t`` takes the result's graph node: the
in-place op, whose input is a stand-in holding the node ``t`` had. Every node recorded
before the write keeps its edge to that old node (``Node.next``), so nothing needs
rewriting. ``t`` keeps its identity (views and ``from_numpy`` arrays see the new values)
and its gradient flows through its old value, as in torch.

Rules torch has and this module keeps:

- A leaf that requires grad cannot be written while autograd records (``RuntimeError``);
  inside ``no_grad`` it can, and stays a leaf that requires grad.
- A backward that needs a value saved before a write raises the version error, naming the
  operation that saved it and both versions (``autograd._unpack``).
- A write into a view changes the memory its base shares; a backward through the base's
  own graph after such a write raises (duograd does not rebase the base; torch does).

``t.data`` is a Tensor on the same memory with a version counter of its own, so writing
into it changes the values and bumps nothing ``t``'s graph checks, as torch's ``.data``.

>>> import duograd as dg
>>> w = dg.tensor([1.0, 2.0], requires_grad=True)
>>> (w * w).sum().backward()
>>> with dg.no_grad():
...     w -= 0.5 * w.grad
>>> w.detach().numpy(), w.is_leaf, w.requires_grad, w._version
(array([0., 0.]), True, True, 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from ._tensor import Tensor, _derive, _draw, _new
from . import _context as _ctx, _versions
from ._node import LEAF
from .random import as_rng
# The rows of the writes, re-exported (rows/inplace.py).
from .rows.inplace import assign_p, setitem_p  # noqa: F401


def write(t: Any, op: Any, *operands: Any, name: str, keep: bool = False, **kw: Any) -> Tensor:
    """THE in-place write: ``t``'s values become ``op(t, *operands, **kw)``; returns ``t``.

    Every in-place method, augmented assignment and ``__setitem__`` comes here (the
    optimizers write with NumPy and call ``_versions.bump``), so this is the one place that
    checks, records, writes and counts the version. ``op`` is a primitive or a function of
    primitives; ``t`` is passed to it as a stand-in that holds its current node.
    ``keep``: ``op``'s VJP rules read ``t``'s value before the write (mul_ when the other
    factor requires grad, pow_, clamp_), so the stand-in keeps a copy of it, as torch saves
    the original.
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    recording = _ctx.grad_enabled
    if recording and t._node is LEAF:
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
    if recording:  # t's value before the write, at t's node (t itself gets a new one)
        src = _new(Tensor)
        src._data = _derive(np.copy, t._data) if keep else t._data
        src._grad, src._tangent, src._node = None, t._tangent, t._node
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
    np.copyto(t._data, new._data, casting="same_kind")
    node = new._node if new.requires_grad else None
    w = _versions.bump(t._data, recorded=node is not None)
    if node is not None:  # t's value is now the in-place op's result, as of this write
        node.stamp = w
        node._extra()["written"] = w  # (the write it made is not one it consumed)
        t._node = node
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
    return _fill(t, generator, "uniform", a, b, name="uniform_")


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with normal samples; ``generator``: a NumPy Generator."""
    return _fill(t, generator, "normal", mean, std, name="normal_")


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


# ---------------------------------------------------------------- more random fills (branch data)
# Each draws through _tensor._draw (a dg.compile replay draws anew) and writes through write().

from ._tensor import _wrap  # noqa: E402

def _sample(gen: np.random.Generator, how: Any, dtype: np.dtype, *args: Any) -> np.ndarray:
    """``gen``'s method ``how`` (or the function ``how(gen, ...)``) of ``args``, in ``dtype``."""
    values = getattr(gen, how)(*args) if isinstance(how, str) else how(gen, *args)
    return np.asarray(values).astype(dtype, copy=False)


def _fill(t: Tensor, generator: Any, how: Any, *args: Any, name: str) -> Tensor:
    """``t`` filled with a draw of ``how`` (``_sample``) of ``args`` and ``t``'s shape. The
    draw is cast to ``t``'s dtype inside it, so that a dg.compile replay writes its own draw
    (a cast outside would be a copy the recording holds as a constant)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    return write(t, assign_p, _draw(_sample, _generator(generator), how, t.dtype, *args, t.shape),
                 name=name)


def _random_bounds(dtype: np.dtype) -> tuple[int, int]:
    """The inclusive range ``random_()`` draws from for a dtype (torch's): the integers a
    float represents exactly, or the dtype's own range from 0."""
    if dtype.kind == "f":
        return 0, 2 ** (np.finfo(dtype).nmant + 1)
    if dtype.kind == "b":
        return 0, 1
    return 0, int(np.iinfo(dtype).max)


def _random_ints(gen: np.random.Generator, low: int, high: int, shape: tuple) -> np.ndarray:
    return gen.integers(low, high, shape, dtype=np.int64 if high <= 2 ** 63 else np.uint64)


def random_(t: Tensor, *args: Any, to: Any = None, generator: Any = None) -> Tensor:
    """Fill ``t`` with integers drawn uniformly: ``random_()`` over [0, the dtype's largest
    exactly representable integer], ``random_(to)`` over [0, to), ``random_(from, to)``
    over [from, to), as torch.

    >>> import duograd as dg
    >>> t = dg.zeros(100).random_(2, 5)
    >>> sorted(set(t.tolist()))
    [2.0, 3.0, 4.0]
    """
    if len(args) > 2 or (len(args) == 2 and to is not None):
        raise TypeError("random_: expected random_(), random_(to) or random_(from, to)")
    lo_d, hi_d = _random_bounds(t.dtype)
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        low, high = (0, args[0]) if to is None else (args[0], to)
    else:
        low, high = 0, to
    if high is None:
        high = hi_d + 1
        if low > hi_d:
            raise RuntimeError(f"random_: 'from' {low} is out of range for {t.dtype}")
    for v in (low, high):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"random_: 'from' and 'to' must be ints, got {type(v).__name__}")
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if t.dtype.kind != "f" and (high - 1 > hi_d or low < (-hi_d - 1 if t.dtype.kind == "i" else 0)):
        raise RuntimeError(f"random_: to - 1 is out of bounds for {t.dtype} (got from={low}, "
                           f"to={high})")
    return _fill(t, generator, _random_ints, low, high, name="random_")


def exponential_(t: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with exponential samples of rate ``lambd`` (mean 1 / lambd)."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(t, generator, "exponential", 1.0 / lambd, name="exponential_")


def geometric_(t: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with geometric samples: the number of trials, each succeeding with
    probability ``p``, up to and including the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(t, generator, "geometric", p, name="geometric_")


def _cauchy(gen: np.random.Generator, median: float, sigma: float, shape: tuple) -> np.ndarray:
    return median + sigma * gen.standard_cauchy(shape)


def cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with Cauchy samples of location ``median`` and scale ``sigma``."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill(t, generator, _cauchy, median, sigma, name="cauchy_")


def log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with exp(N(mean, std**2)) samples."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill(t, generator, "lognormal", mean, std, name="log_normal_")


def bernoulli_(t: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with 0/1 samples, 1 with probability ``p`` (a number, or a Tensor that
    broadcasts to ``t``'s shape)."""
    arr = p._data if isinstance(p, Tensor) else np.asarray(p, dtype=np.float64)
    if arr.size and not np.all((arr >= 0) & (arr <= 1)):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p if arr.ndim == 0 else arr}")
    u = _wrap(_draw(_generator(generator).random, t.shape))
    hit = ops.less_p(u, p.detach() if isinstance(p, Tensor) else float(arr))
    return write(t, assign_p, ops.astype(hit, t.dtype), name="bernoulli_")
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


# ---------------------------------------------------------------- shape-changing writes (branch names2)

def write_shape(t: Any, view: Any, op: Any, *, name: str) -> Tensor:
    """The in-place ops that change a tensor's shape and not its values (``t_``,
    ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``swapaxes_``): ``t``'s array becomes
    ``view(t's array)`` (a NumPy view: the same memory, so other views and ``from_numpy``
    arrays still see it) and, while autograd records, ``t`` takes the node of ``op(t)``, a
    new node whose output has the new shape. The version is bumped, as torch's in-place
    view ops do. ``write`` keeps shapes; this is its twin for shapes.

    >>> import duograd as dg
    >>> x = dg.ones(2, 3)
    >>> write_shape(x, lambda a: a.T, lambda s: s.t(), name="t_") is x, x.shape
    (True, (3, 2))
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    recording = _ctx.grad_enabled
    if recording and t._node is LEAF:
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    new = None
    watched = _ctx.on_write  # (a dg.compile recording: the view must come from a primitive)
    if (recording and t.requires_grad) or watched:
        src = _new(Tensor)
        src._data, src._grad, src._tangent, src._node = t._data, None, t._tangent, t._node
        new = op(src)
    arr = new._data if watched else view(t._data)
    t._data = arr
    if watched:  # a replay gives ``t`` the new view too, and reads it afterwards
        _ctx.write(t, f"{name}()", src=src)
    node = new._node if new is not None and new.requires_grad else None
    w = _versions.bump(t._data, recorded=node is not None)
    if node is not None:
        node.stamp = w
        node._extra()["written"] = w
        t._node = node
    if new is not None and new._tangent:
        t._tangent = new._tangent
    return t
