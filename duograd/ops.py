"""THE table: every primitive's NumPy forward beside its derivative rules.

Each row is one primitive: a NumPy forward, one VJP rule per input mapping the
output's cotangent ``g`` to that input's cotangent, and how its JVP is obtained.
Rules are written in Tensor operations, as if nothing broadcast: the engine sums
each result back to its input's shape (``shapes.sum_to``) in one place. Because the
rules are Tensor algebra, ``create_graph=True`` is nothing more than recording while
they run, which is how gradients of gradients work.

Few primitives; everything else (``mean``, ``var``, ``softmax``, ``log_softmax``,
``squeeze``, ``stack``, ...) is composed from them further down. Domain errors follow
NumPy: ``log`` of a negative number is nan with a RuntimeWarning, not an exception.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Iterable, Sequence

import numpy as np

from .autograd import ELEMENTWISE, LINEAR, Primitive, Variadic
from .shapes import broadcast_shape, keepdims_shape, normalize_axes, sum_to
from .tensor import Tensor, _lift_all, _shape_of, _wrap

# ====================================================================== elementwise

add = Primitive("add", np.add, vjp=(lambda g, out, x, y: g,
                                    lambda g, out, x, y: g), jvp=ELEMENTWISE)
sub = Primitive("sub", np.subtract, vjp=(lambda g, out, x, y: g,
                                         lambda g, out, x, y: -g), jvp=ELEMENTWISE)
mul = Primitive("mul", np.multiply, vjp=(lambda g, out, x, y: g * y,
                                         lambda g, out, x, y: g * x), jvp=ELEMENTWISE)
div = Primitive("div", np.divide, vjp=(lambda g, out, x, y: g / y,
                                       lambda g, out, x, y: -(g * out) / y), jvp=ELEMENTWISE)


def _pow_gx(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    gx = g * y * x ** (y - 1)
    # NOTE: x**0 is constant, so its derivative is 0, also at x = 0 where y * x**(y-1) is
    # 0 * inf = nan (torch agrees). The check is on data, so the common case adds no op.
    zero = y._data == 0
    return _where(gx, 0.0, cond=~zero) if zero.any() else gx


def _pow_gy(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    # NOTE: d/dy x**y = x**y log x is nan for x < 0; it is only evaluated when y needs a
    # gradient. At x = 0 (and y >= 0) it is 0, not 0 * log 0 = nan: log sees 1 there.
    zero = x._data == 0
    return g * out * (_where(x, 1.0, cond=~zero) if zero.any() else x).log()


power = Primitive("pow", np.power, vjp=(_pow_gx, _pow_gy), jvp=ELEMENTWISE)
neg = Primitive("neg", np.negative, vjp=(lambda g, out, x: -g,), jvp=LINEAR)
exp = Primitive("exp", np.exp, vjp=(lambda g, out, x: g * out,), jvp=ELEMENTWISE)
log = Primitive("log", np.log, vjp=(lambda g, out, x: g / x,), jvp=ELEMENTWISE)
sqrt = Primitive("sqrt", np.sqrt, vjp=(lambda g, out, x: g / (out * 2),), jvp=ELEMENTWISE)
tanh = Primitive("tanh", np.tanh, vjp=(lambda g, out, x: g * (1 - out * out),), jvp=ELEMENTWISE)
# sigmoid through tanh: no overflow for large |x|, unlike 1 / (1 + exp(-x)).
sigmoid = Primitive("sigmoid", lambda x: 0.5 * np.tanh(0.5 * x) + 0.5,
                    vjp=(lambda g, out, x: g * out * (1 - out),), jvp=ELEMENTWISE)
sin = Primitive("sin", np.sin, vjp=(lambda g, out, x: g * x.cos(),), jvp=ELEMENTWISE)
cos = Primitive("cos", np.cos, vjp=(lambda g, out, x: -(g * x.sin()),), jvp=ELEMENTWISE)

# Piecewise-linear ops multiply g by a constant 0/1 selector built from the forward
# values. The selector is locally constant, so its own derivative is zero and the
# rule stays exact under differentiation (the second derivative of relu is 0). It is
# wrapped as a graph-less Tensor directly (a bool mask stays bool: NumPy's product
# with it keeps g's dtype).
# NOTE: relu'(0) = 0 and abs'(0) = 0, as in PyTorch.
relu = Primitive("relu", lambda x: np.maximum(x, 0),
                 vjp=(lambda g, out, x: g * _wrap(x._data > 0),), jvp=ELEMENTWISE)
absolute = Primitive("abs", np.abs, vjp=(lambda g, out, x: g * _wrap(np.sign(x._data)),), jvp=ELEMENTWISE)
# NOTE: clip passes the gradient where lo <= x <= hi, boundaries included, as torch.clamp.
_clip = Primitive("clip", lambda x, lo, hi: np.clip(x, lo, hi),
                  vjp=(lambda g, out, x, lo, hi: g * _wrap(_inside(x._data, lo, hi)),), jvp=ELEMENTWISE)


def _inside(x: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    mask = np.ones(x.shape, dtype=bool)
    if lo is not None:
        mask &= x >= lo
    if hi is not None:
        mask &= x <= hi
    return mask


def _share(x: np.ndarray, y: np.ndarray, wins: Any) -> Tensor:
    """How much of g goes to x in maximum/minimum: 1 where x wins, 1/2 on a tie."""
    return _wrap((wins(x, y) + 0.5 * (x == y)).astype(np.result_type(x, y), copy=False))


# NOTE: on a tie maximum/minimum split the gradient evenly between x and y, as PyTorch does.
maximum_p = Primitive("maximum", np.maximum,
                      vjp=(lambda g, out, x, y: g * _share(x._data, y._data, np.greater),
                           lambda g, out, x, y: g * _share(y._data, x._data, np.greater)),
                      jvp=ELEMENTWISE)
minimum_p = Primitive("minimum", np.minimum,
                      vjp=(lambda g, out, x, y: g * _share(x._data, y._data, np.less),
                           lambda g, out, x, y: g * _share(y._data, x._data, np.less)),
                      jvp=ELEMENTWISE)
# cond is a parameter, never an input: it is not differentiated.
_where = Primitive("where", lambda x, y, cond: np.where(cond, x, y),
                   vjp=(lambda g, out, x, y, cond: g * _wrap(cond),
                        lambda g, out, x, y, cond: g * _wrap(~cond)), jvp=ELEMENTWISE)

cast = Primitive("cast", lambda x, dtype: x.astype(dtype, copy=False),
                 vjp=(lambda g, out, x, dtype: g,), jvp=LINEAR)  # the engine casts g back
identity = Primitive("identity", lambda x: x, vjp=(lambda g, out, x: g,), jvp=LINEAR)

# ====================================================================== reductions


def _expand(g: Tensor, shape: tuple[int, ...], axis: tuple[int, ...], keepdims: bool) -> Tensor:
    """Undo a reduction's shape: put back the reduced axes, then broadcast along them."""
    if not keepdims and axis != tuple(range(len(axis))):
        # Reduced leading axes (a full reduction included) broadcast back by themselves.
        g = g.reshape(keepdims_shape(shape, axis))
    return g.broadcast_to(shape)


_sum = Primitive("sum", lambda x, axis, keepdims: np.add.reduce(x, axis=axis, keepdims=keepdims),
                 vjp=(lambda g, out, x, axis, keepdims: _expand(g, x.shape, axis, keepdims),),
                 jvp=LINEAR)


def _extremum(name: str, reduce: Any) -> Primitive:
    """max or min over axes. NOTE: ties share the gradient evenly (as torch.amax does)."""

    def weights(out: Tensor, x: Tensor, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
        best = out._data if keepdims else out._data.reshape(keepdims_shape(x.shape, axis))
        hit = x._data == best
        return (hit / hit.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)

    return Primitive(
        name, lambda x, axis, keepdims: reduce(x, axis=axis, keepdims=keepdims),
        vjp=(lambda g, out, x, axis, keepdims:
             _expand(g, x.shape, axis, keepdims) * weights(out, x, axis, keepdims),),
        jvp=(lambda t, out, x, axis, keepdims:
             (t * weights(out, x, axis, keepdims)).sum(axis, keepdims),))


_amax = _extremum("max", np.max)
_amin = _extremum("min", np.min)


def _logsumexp_fwd(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    # Shift by the max so exp never overflows (inputs of +-1000 are fine).
    m = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros(keepdims_shape(x.shape, axis), x.dtype)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax_of(out: Tensor, x: Tensor, axis: tuple[int, ...], keepdims: bool) -> Tensor:
    return (x - _expand(out, x.shape, axis, keepdims)).exp()


_logsumexp = Primitive(
    "logsumexp", _logsumexp_fwd,
    vjp=(lambda g, out, x, axis, keepdims:
         _expand(g, x.shape, axis, keepdims) * _softmax_of(out, x, axis, keepdims),),
    jvp=(lambda t, out, x, axis, keepdims: (t * _softmax_of(out, x, axis, keepdims)).sum(axis, keepdims),))

# ====================================================================== shape

_reshape = Primitive("reshape", lambda x, shape: np.reshape(x, shape),
                     vjp=(lambda g, out, x, shape: g.reshape(x.shape),), jvp=LINEAR)
_transpose = Primitive("transpose", lambda x, axes: np.transpose(x, axes),
                       vjp=(lambda g, out, x, axes: g.transpose(tuple(np.argsort(axes))),),
                       jvp=LINEAR)
# The adjoint of broadcasting is the engine's own sum_to: one function serves both.
_broadcast_to = Primitive("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                          vjp=(lambda g, out, x, shape: sum_to(g, x.shape),), jvp=LINEAR)


def _scatter_fwd(g: np.ndarray, index: Any, shape: tuple[int, ...], basic: bool) -> np.ndarray:
    z = np.zeros(shape, dtype=g.dtype)
    if basic:  # ints and slices never repeat an element
        z[index] = g
    else:      # integer arrays may: repeated indices accumulate
        np.add.at(z, index, g)
    return z


_getitem = Primitive("getitem", lambda x, index, basic: x[index],
                     vjp=(lambda g, out, x, index, basic: _scatter(g, index=index, shape=x.shape,
                                                                   basic=basic),), jvp=LINEAR)
# getitem's adjoint: a zero tensor of the input's shape with g added at the index.
_scatter = Primitive("scatter_add", _scatter_fwd,
                     vjp=(lambda g, out, x, index, shape, basic: _getitem(g, index=index,
                                                                          basic=basic),),
                     jvp=LINEAR)


def _concat_vjp(i: int, g: Tensor, out: Tensor, *xs: Tensor, axis: int) -> Tensor:
    start = builtins.sum(x.shape[axis] for x in xs[:i])
    index = (slice(None),) * axis + (slice(start, start + xs[i].shape[axis]),)
    return _getitem(g, index=index, basic=True)


_concatenate = Variadic("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                        vjp=(_concat_vjp,), jvp=LINEAR)

# ====================================================================== matmul


def _mT(x: Tensor) -> Tensor:
    """Swap the last two axes."""
    n = x.ndim
    return _transpose(x, axes=tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_gx(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if y.ndim == 1:
        return g * y if x.ndim == 1 else g.unsqueeze(-1) * y         # outer product
    if x.ndim == 1:
        return (g.unsqueeze(-2) @ _mT(y)).squeeze(-2)
    return g @ _mT(y)


def _matmul_gy(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if x.ndim == 1:
        return g * x if y.ndim == 1 else x.unsqueeze(-1) * g.unsqueeze(-2)
    if y.ndim == 1:
        return (_mT(x) @ g.unsqueeze(-1)).squeeze(-1)
    return _mT(x) @ g


def _matmul_fwd(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("both operands need at least one dimension")
    kx, ky = x.shape[-1], y.shape[0 if y.ndim == 1 else -2]
    if kx != ky:
        raise ValueError(f"inner dimensions differ ({kx} != {ky})")
    if x.ndim > 2 or y.ndim > 2:
        broadcast_shape(x.shape[:-2], y.shape[:-2], op="batch dimensions")
    return np.matmul(x, y)


# matmul is bilinear, so its JVP is the product with each tangent in turn.
_matmul = Primitive("matmul", _matmul_fwd, vjp=(_matmul_gx, _matmul_gy),
                    jvp=(lambda t, out, x, y: t @ y, lambda t, out, x, y: x @ t))

# ====================================================================== the public functions
# Thin wrappers: they check and normalise parameters, then call a primitive or compose.


def matmul(x: Any, y: Any) -> Tensor:
    """Matrix product with ``numpy.matmul`` semantics (1-D, 2-D, batched with broadcasting).

    >>> import duograd as dg
    >>> (dg.ones((2, 3)) @ dg.ones(3)).numpy()
    array([3., 3.])
    """
    return _matmul(x, y)


def maximum(x: Any, y: Any) -> Tensor:
    """Elementwise maximum; on a tie each side gets half the gradient.

    >>> import duograd as dg
    >>> dg.maximum(dg.tensor([1.0, 5.0]), 3.0).numpy()
    array([3., 5.])
    """
    return maximum_p(x, y)


def minimum(x: Any, y: Any) -> Tensor:
    """Elementwise minimum; on a tie each side gets half the gradient.

    >>> import duograd as dg
    >>> dg.minimum(dg.tensor([1.0, 5.0]), 3.0).numpy()
    array([1., 3.])
    """
    return minimum_p(x, y)


def where(cond: Any, x: Any, y: Any) -> Tensor:
    """``x`` where ``cond`` holds, else ``y``; ``cond`` (a bool array or a Tensor read as
    bool) is never differentiated.

    >>> import duograd as dg
    >>> dg.where(np.array([True, False]), dg.tensor([1.0, 2.0]), 0.0).numpy()
    array([1., 0.])
    """
    c = np.asarray(cond._data if isinstance(cond, Tensor) else cond).astype(bool)
    return _where(x, y, cond=c)


def clip(x: Tensor, lo: float | None = None, hi: float | None = None) -> Tensor:
    if lo is None and hi is None:
        raise ValueError("clip: give lo, hi or both")
    return _clip(x, lo=lo, hi=hi)


def sum(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    return _sum(x, axis=normalize_axes(axis, x.ndim, "sum", x.shape), keepdims=keepdims)


def _count(x: Tensor, axis: tuple[int, ...]) -> int:
    return math.prod(x.shape[a] for a in axis)


def mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    axes = normalize_axes(axis, x.ndim, "mean", x.shape)
    return _sum(x, axis=axes, keepdims=keepdims) / _count(x, axes)


def var(x: Tensor, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Tensor:
    axes = normalize_axes(axis, x.ndim, "var", x.shape)
    d = x - _sum(x, axis=axes, keepdims=True) / _count(x, axes)
    return _sum(d * d, axis=axes, keepdims=keepdims) / (_count(x, axes) - ddof)


def amax(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _amax(x, axis=normalize_axes(axis, x.ndim, "max", x.shape), keepdims=keepdims)


def amin(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _amin(x, axis=normalize_axes(axis, x.ndim, "min", x.shape), keepdims=keepdims)


def logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _logsumexp(x, axis=normalize_axes(axis, x.ndim, "logsumexp", x.shape), keepdims=keepdims)


def _log_softmax(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    # Shift by the row max first, held constant (softmax does not depend on it): the
    # result (x - m) - log(sum(exp(x - m))) keeps every bit even for logits of +-1000,
    # where x - logsumexp(x) would lose them in rounding m + log(...).
    m = np.max(x._data, axis=axes, keepdims=True) if x.size else 0.0
    s = x - np.where(np.isfinite(m), m, 0)
    return s - _logsumexp(s, axis=axes, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return _log_softmax(x, normalize_axes(axis, x.ndim, "log_softmax", x.shape))


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return _log_softmax(x, normalize_axes(axis, x.ndim, "softmax", x.shape)).exp()


def reshape(x: Tensor, *shape: Any) -> Tensor:
    return _reshape(x, shape=_shape_of(shape))


def transpose(x: Tensor, *axes: Any) -> Tensor:
    if not axes or axes == (None,):
        axes = tuple(range(x.ndim - 1, -1, -1))
    else:
        axes, nd = _shape_of(axes), x.ndim
        # Range first: a % nd alone would let transpose(3, 0) pass as (1, 0) on a matrix.
        if any(not -nd <= a < nd for a in axes) or sorted(a % nd for a in axes) != list(range(nd)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the "
                             f"{x.ndim} axes of a tensor of shape {x.shape}")
        axes = tuple(a % x.ndim for a in axes)
    return _transpose(x, axes=axes)


def broadcast_to(x: Tensor, shape: Iterable[int]) -> Tensor:
    return _broadcast_to(x, shape=tuple(int(n) for n in shape))


def squeeze(x: Tensor, axis: Any = None) -> Tensor:
    if axis is None:
        return _reshape(x, shape=tuple(n for n in x.shape if n != 1))
    axes = normalize_axes(axis, x.ndim, "squeeze", x.shape)
    bad = [a for a in axes if x.shape[a] != 1]
    if bad:
        raise ValueError(f"squeeze: axis {bad[0]} of a tensor of shape {x.shape} has size "
                         f"{x.shape[bad[0]]}, not 1")
    return _reshape(x, shape=tuple(n for i, n in enumerate(x.shape) if i not in axes))


def unsqueeze(x: Tensor, axis: int) -> Tensor:
    nd = x.ndim + 1
    if not -nd <= axis < nd:
        raise ValueError(f"unsqueeze: axis {axis} is out of range for a result of {nd} "
                         f"dimensions (input shape {x.shape})")
    axis %= nd
    return _reshape(x, shape=x.shape[:axis] + (1,) + x.shape[axis:])


def _index_part(i: Any) -> Any:
    if isinstance(i, Tensor):
        i = i._data
        if i.dtype.kind == "f":
            if not np.all(i == np.round(i)):
                raise IndexError("getitem: a float Tensor used as an index must hold whole numbers")
            i = i.astype(np.intp)
    if isinstance(i, list):
        i = np.asarray(i)
    return i


def getitem(x: Tensor, index: Any) -> Tensor:
    """NumPy indexing: ints, slices, None, Ellipsis, integer arrays (repeated indices
    accumulate in the gradient) and boolean masks."""
    parts = index if isinstance(index, tuple) else (index,)
    parts = tuple(_index_part(i) for i in parts)
    basic = all(isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis)))
                and not isinstance(i, bool) for i in parts)
    if not basic and any(isinstance(i, np.ndarray) and i.dtype == bool for i in parts):
        # A boolean mask is the same selection as the integer arrays of its nonzeros.
        expanded: list[Any] = []
        for i in parts:
            expanded.extend(np.nonzero(i) if isinstance(i, np.ndarray) and i.dtype == bool else (i,))
        parts = tuple(expanded)
    return _getitem(x, index=parts, basic=basic)


def concatenate(ts: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis.

    >>> import duograd as dg
    >>> dg.concatenate([dg.ones(2), dg.zeros(1)]).numpy()
    array([1., 1., 0.])
    """
    ts = _lift_all("concatenate", tuple(ts))
    if not ts:
        raise ValueError("concatenate: need at least one tensor")
    nd = ts[0].ndim
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional tensors cannot be concatenated")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"concatenate: axis must be one int, got {axis!r}")
    axis = normalize_axes(axis, nd, "concatenate", ts[0].shape)[0]
    return _concatenate(*ts, axis=axis)


def stack(ts: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis.

    >>> import duograd as dg
    >>> dg.stack([dg.ones(2), dg.zeros(2)]).shape
    (2, 2)
    """
    ts = _lift_all("stack", tuple(ts))
    if not ts:
        raise ValueError("stack: need at least one tensor")
    shapes = {t.shape for t in ts}
    if len(shapes) != 1:
        raise ValueError(f"stack: every tensor needs the same shape, got {sorted(shapes)}")
    if not -ts[0].ndim - 1 <= axis <= ts[0].ndim:
        raise ValueError(f"stack: axis {axis} is out of range for a result of {ts[0].ndim + 1} "
                         f"dimensions (input shape {ts[0].shape})")
    return concatenate([unsqueeze(t, axis) for t in ts], axis=axis if axis >= 0 else axis + ts[0].ndim + 1)
