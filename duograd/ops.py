"""THE table: every primitive's NumPy forward beside its derivative rules.

Each row is one primitive: a NumPy forward, one VJP rule per input mapping the
output's cotangent ``g`` to that input's cotangent, and how its JVP is obtained.
Rules are written in Tensor operations, as if nothing broadcast: the engine sums
each result back to its input's shape (``shapes.sum_to``) in one place. Because the
rules are Tensor algebra, ``create_graph=True`` is nothing more than recording while
they run, which is how gradients of gradients work.

What a rule may do (``autograd.Primitive`` says it once more): call primitives on the
Tensors it is given and on value-independent constants, and read shapes, dtypes and
keyword parameters. It never reads ``.data`` and never branches in Python on array
values. The 0/1 selectors that piecewise-linear rules need (relu, abs, clip,
maximum/minimum, max/min, pow at 0, where) come from the selector primitives below:
``differentiable=False``, no VJP, an output that never requires grad. So a whole
step, forward and backward, is a sequence of primitive calls (``autograd.trace``).

Names, one convention:

- ``name_p`` is a Primitive (``add_p``, ``sum_p``, ``greater_p``), as in JAX.
- ``name`` is the public function. Where it would only pass its arguments on, it *is*
  the primitive (``exp = exp_p``); otherwise it checks and normalises its arguments
  (axes, shapes, indices) and calls primitives, or composes them (``mean``, ``var``,
  ``softmax``, ``squeeze``, ``stack``, ...). Tensor methods (``methods.py``) call these.

Domain errors follow NumPy: ``log`` of a negative number is nan with a RuntimeWarning,
not an exception.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Iterable, Sequence

import numpy as np

import functools
import operator

from .autograd import ELEMENTWISE, LINEAR, Primitive, Variadic, WithConstant, ones_like_p, zeros_like_p  # noqa: F401
from .shapes import broadcast_shape, keepdims_shape, normalize_axes, sum_to
from . import _tensor
from ._tensor import Tensor, _derive, _dtype_of, _lift_all, _shape_of, _wrap

# ====================================================================== selectors
# Never differentiated: they are locally constant, so their derivative is zero and a
# rule that multiplies by one stays exact under differentiation (relu'' = 0).


def _selector(name: str, forward: Any) -> Primitive:
    return Primitive(name, forward, differentiable=False)


greater_p = _selector("greater", np.greater)
greater_equal_p = _selector("greater_equal", np.greater_equal)
less_p = _selector("less", np.less)
less_equal_p = _selector("less_equal", np.less_equal)
equal_p = _selector("equal", np.equal)
not_equal_p = _selector("not_equal", np.not_equal)
sign_p = _selector("sign", np.sign)
argmax_p = _selector("argmax", lambda x, axis: np.argmax(x, axis=axis))
argmin_p = _selector("argmin", lambda x, axis: np.argmin(x, axis=axis))
# NOTE: clip passes the gradient where lo <= x <= hi, boundaries included, as torch.clamp.
clip_mask_p = _selector("clip_mask", lambda x, lo, hi: (x >= (-np.inf if lo is None else lo))
                        & (x <= (np.inf if hi is None else hi)))


def _share(x: np.ndarray, y: np.ndarray, wins: Any) -> np.ndarray:
    # NOTE: on a tie maximum/minimum split the gradient evenly between x and y, as PyTorch.
    return (wins(x, y) + 0.5 * (x == y)).astype(np.result_type(x, y), copy=False)


share_p = _selector("share", _share)  # how much of g goes to x: 1 where x wins, 1/2 on a tie


def _extremum_weights(x: np.ndarray, out: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    # NOTE: ties share the gradient of max/min evenly (as torch.amax does).
    hit = x == (out if keepdims else out.reshape(keepdims_shape(x.shape, axis)))
    return (hit / hit.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)


extremum_weights_p = _selector("extremum_weights", _extremum_weights)


def _finite_max(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """The max over ``axis`` (kept as size 1), 0 where it is not finite or x is empty."""
    if not x.size:
        return np.zeros(keepdims_shape(x.shape, axis), x.dtype)
    m = np.max(x, axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, x.dtype.type(0))


# The shift that makes log_softmax stable. Softmax does not change when a constant is
# subtracted, so the exact derivative through it is zero at any order (as JAX's
# stop_gradient in log_softmax); keeping it out of the graph saves round-off too.
row_max_p = _selector("row_max", _finite_max)

# ====================================================================== elementwise

add_p = Primitive("add", np.add, vjp=(lambda g, out, x, y: g,
                                      lambda g, out, x, y: g), jvp=ELEMENTWISE)
sub_p = Primitive("sub", np.subtract, vjp=(lambda g, out, x, y: g,
                                           lambda g, out, x, y: -g), jvp=ELEMENTWISE)
mul_p = Primitive("mul", np.multiply, vjp=(lambda g, out, x, y: g * y,
                                           lambda g, out, x, y: g * x), jvp=ELEMENTWISE)
def _true_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # NOTE: `/` of integers (or bools) is true division in the default float dtype, as torch.
    out = np.divide(x, y)
    if out.dtype is not _tensor._default_float and x.dtype.kind != "f" and y.dtype.kind != "f":
        out = out.astype(_tensor._default_float)
    return out


div_p = Primitive("div", _true_divide, vjp=(lambda g, out, x, y: g / y,
                                         lambda g, out, x, y: -(g * out) / y), jvp=ELEMENTWISE)


def _pow_gx(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    # NOTE: x**0 is constant, so its derivative is 0, also at x = 0 where y * x**(y-1) is
    # 0 * inf = nan (torch agrees). where (not a product with a mask) keeps the nan out.
    return where_p(equal_p(y, 0.0), 0.0, g * y * x ** (y - 1))


def _pow_gy(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    # NOTE: d/dy x**y = x**y log x is nan for x < 0; it is only evaluated when y needs a
    # gradient. At x = 0 (and y >= 0) it is 0, not 0 * log 0 = nan: log sees 1 there.
    return g * out * where_p(equal_p(x, 0.0), 1.0, x).log()


pow_p = Primitive("pow", np.power, vjp=(_pow_gx, _pow_gy), jvp=ELEMENTWISE)
neg_p = Primitive("neg", np.negative, vjp=(lambda g, out, x: -g,), jvp=LINEAR)
exp_p = Primitive("exp", np.exp, vjp=(lambda g, out, x: g * out,), jvp=ELEMENTWISE)
log_p = Primitive("log", np.log, vjp=(lambda g, out, x: g / x,), jvp=ELEMENTWISE)
sqrt_p = Primitive("sqrt", np.sqrt, vjp=(lambda g, out, x: g / (out * 2),), jvp=ELEMENTWISE)
tanh_p = Primitive("tanh", np.tanh, vjp=(lambda g, out, x: g * (1 - out * out),), jvp=ELEMENTWISE)
# sigmoid through tanh: no overflow for large |x|, unlike 1 / (1 + exp(-x)).
sigmoid_p = Primitive("sigmoid", lambda x: 0.5 * np.tanh(0.5 * x) + 0.5,
                      vjp=(lambda g, out, x: g * out * (1 - out),), jvp=ELEMENTWISE)
# softplus(x) = log(1 + e^x), computed as logaddexp(0, x): no overflow for large x.
softplus_p = Primitive("softplus", lambda x: np.logaddexp(x.dtype.type(0), x),
                       vjp=(lambda g, out, x: g * sigmoid_p(x),), jvp=ELEMENTWISE)
sin_p = Primitive("sin", np.sin, vjp=(lambda g, out, x: g * cos_p(x),), jvp=ELEMENTWISE)
cos_p = Primitive("cos", np.cos, vjp=(lambda g, out, x: -(g * sin_p(x)),), jvp=ELEMENTWISE)

# Piecewise-linear ops multiply g by a selector (a bool mask keeps g's dtype in NumPy's
# product). NOTE: relu'(0) = 0 and abs'(0) = 0, as in PyTorch.
relu_p = Primitive("relu", lambda x: np.maximum(x, x.dtype.type(0)),
                   vjp=(lambda g, out, x: g * greater_p(x, 0.0),), jvp=ELEMENTWISE,
                   replay=lambda: WithConstant(np.maximum, 0))
abs_p = Primitive("abs", np.abs, vjp=(lambda g, out, x: g * sign_p(x),), jvp=ELEMENTWISE)
clip_p = Primitive("clip", lambda x, lo, hi: np.clip(x, lo, hi),
                   vjp=(lambda g, out, x, lo, hi: g * clip_mask_p(x, lo=lo, hi=hi),), jvp=ELEMENTWISE)
maximum_p = Primitive("maximum", np.maximum,
                      vjp=(lambda g, out, x, y: g * share_p(x, y, wins=np.greater),
                           lambda g, out, x, y: g * share_p(y, x, wins=np.greater)),
                      jvp=ELEMENTWISE)
minimum_p = Primitive("minimum", np.minimum,
                      vjp=(lambda g, out, x, y: g * share_p(x, y, wins=np.less),
                           lambda g, out, x, y: g * share_p(y, x, wins=np.less)),
                      jvp=ELEMENTWISE)
# cond is an input that never requires grad (a bool Tensor), so it has no rule.
where_p = Primitive("where", np.where,
                    vjp=(None,
                         lambda g, out, cond, x, y: where_p(cond, g, 0.0),
                         lambda g, out, cond, x, y: where_p(cond, 0.0, g)), jvp=ELEMENTWISE)

cast_p = Primitive("cast", lambda x, dtype: x.astype(dtype, copy=False),
                   vjp=(lambda g, out, x, dtype: g,), jvp=LINEAR)  # the engine casts g back
# A cast to an integer or bool dtype has no derivative and no history, as in torch.
cast_nodiff_p = _selector("cast", lambda x, dtype: x.astype(dtype, copy=False))
identity_p = Primitive("identity", lambda x: x, vjp=(lambda g, out, x: g,), jvp=LINEAR)
# Both cut the reverse-mode graph. detach also drops forward-mode tangents (as
# torch.Tensor.detach); stop_gradient keeps them, for transforms that hand back a value
# without its graph but inside an outer jvp.
detach_p = _selector("detach", lambda x: x)
stop_gradient_p = Primitive("stop_gradient", lambda x: x, jvp=(lambda t, out, x: t,),
                            differentiable=False)

# ====================================================================== reductions


def _expand(g: Tensor, shape: tuple[int, ...], axis: tuple[int, ...], keepdims: bool) -> Tensor:
    """Undo a reduction's shape: put back the reduced axes, then broadcast along them."""
    if not keepdims and axis != tuple(range(len(axis))):
        # Reduced leading axes (a full reduction included) broadcast back by themselves.
        g = reshape_p(g, shape=keepdims_shape(shape, axis))
    return broadcast_to_p(g, shape=shape)


sum_p = Primitive("sum", lambda x, axis, keepdims: np.add.reduce(x, axis=axis, keepdims=keepdims),
                  vjp=(lambda g, out, x, axis, keepdims: _expand(g, x.shape, axis, keepdims),),
                  jvp=LINEAR, replay=lambda axis, keepdims: functools.partial(
                      np.add.reduce, axis=axis, keepdims=keepdims))


def _extremum(name: str, reduce: Any) -> Primitive:
    """max or min over axes; the gradient goes to the elements equal to the result."""
    return Primitive(
        name, lambda x, axis, keepdims: reduce(x, axis=axis, keepdims=keepdims),
        vjp=(lambda g, out, x, axis, keepdims: _expand(g, x.shape, axis, keepdims)
             * extremum_weights_p(x, out, axis=axis, keepdims=keepdims),),
        jvp=(lambda t, out, x, axis, keepdims:
             sum_p(t * extremum_weights_p(x, out, axis=axis, keepdims=keepdims),
                   axis=axis, keepdims=keepdims),))


max_p = _extremum("max", np.max)
min_p = _extremum("min", np.min)


def _logsumexp_fwd(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    m = _finite_max(x, axis)  # shifted by the max, exp never overflows (+-1000 is fine)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax_of(out: Tensor, x: Tensor, axis: tuple[int, ...], keepdims: bool) -> Tensor:
    return exp_p(x - _expand(out, x.shape, axis, keepdims))


logsumexp_p = Primitive(
    "logsumexp", _logsumexp_fwd,
    vjp=(lambda g, out, x, axis, keepdims:
         _expand(g, x.shape, axis, keepdims) * _softmax_of(out, x, axis, keepdims),),
    jvp=(lambda t, out, x, axis, keepdims:
         sum_p(t * _softmax_of(out, x, axis, keepdims), axis=axis, keepdims=keepdims),))

# ====================================================================== shape

reshape_p = Primitive("reshape", lambda x, shape: np.reshape(x, shape),
                      vjp=(lambda g, out, x, shape: reshape_p(g, shape=x.shape),), jvp=LINEAR,
                      view=True, replay=lambda shape: operator.methodcaller("reshape", shape))
transpose_p = Primitive("transpose", lambda x, axes: np.transpose(x, axes),
                        vjp=(lambda g, out, x, axes: transpose_p(g, axes=tuple(np.argsort(axes))),),
                        jvp=LINEAR, view=True,
                        replay=lambda axes: operator.methodcaller("transpose", axes))
# The adjoint of broadcasting is the engine's own sum_to: one function serves both.
broadcast_to_p = Primitive("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                           vjp=(lambda g, out, x, shape: sum_to(g, x.shape),), jvp=LINEAR,
                           view=True, broadcast=True)


def _flip(x: Tensor, axis: int) -> Tensor:
    return getitem_p(x, index=(slice(None),) * axis + (slice(None, None, -1),), basic=True)


# The adjoint of a running sum is the running sum taken from the other end.
cumsum_p = Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis),
                     vjp=(lambda g, out, x, axis: _flip(cumsum_p(_flip(g, axis), axis=axis), axis),),
                     jvp=LINEAR)


def _scatter_fwd(g: np.ndarray, index: Any, shape: tuple[int, ...], basic: bool) -> np.ndarray:
    z = np.zeros(shape, dtype=g.dtype)
    if basic:  # ints and slices never repeat an element
        z[index] = g
    else:      # integer arrays may: repeated indices accumulate
        np.add.at(z, index, g)
    return z


getitem_p = Primitive("getitem", lambda x, index, basic: x[index],
                      vjp=(lambda g, out, x, index, basic:
                           scatter_add_p(g, index=index, shape=x.shape, basic=basic),), jvp=LINEAR,
                      replay=lambda index, basic: operator.itemgetter(index))
# getitem's adjoint: a zero tensor of the input's shape with g added at the index.
scatter_add_p = Primitive("scatter_add", _scatter_fwd,
                          vjp=(lambda g, out, x, index, shape, basic:
                               getitem_p(g, index=index, basic=basic),), jvp=LINEAR)


def _concat_vjp(i: int, g: Tensor, out: Tensor, *xs: Tensor, axis: int) -> Tensor:
    start = builtins.sum(x.shape[axis] for x in xs[:i])
    index = (slice(None),) * axis + (slice(start, start + xs[i].shape[axis]),)
    return getitem_p(g, index=index, basic=True)


concatenate_p = Variadic("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                         vjp=(_concat_vjp,), jvp=LINEAR)

# ====================================================================== matmul


def _mT(x: Tensor) -> Tensor:
    """Swap the last two axes."""
    n = x.ndim
    return transpose_p(x, axes=tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_gx(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if y.ndim == 1:
        return g * y if x.ndim == 1 else unsqueeze(g, -1) * y         # outer product
    if x.ndim == 1:
        return squeeze(unsqueeze(g, -2) @ _mT(y), -2)
    return g @ _mT(y)


def _matmul_gy(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if x.ndim == 1:
        return g * x if y.ndim == 1 else unsqueeze(x, -1) * unsqueeze(g, -2)
    if y.ndim == 1:
        return squeeze(_mT(x) @ unsqueeze(g, -1), -1)
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
matmul_p = Primitive("matmul", _matmul_fwd, vjp=(_matmul_gx, _matmul_gy),
                     jvp=(lambda t, out, x, y: t @ y, lambda t, out, x, y: x @ t),
                     replay=lambda: np.matmul)

# ====================================================================== the public functions

add, sub, mul, div, power, neg = add_p, sub_p, mul_p, div_p, pow_p, neg_p
exp, log, sqrt, tanh, sigmoid, softplus, sin, cos = exp_p, log_p, sqrt_p, tanh_p, sigmoid_p, softplus_p, sin_p, cos_p
relu, absolute, maximum, minimum, matmul = relu_p, abs_p, maximum_p, minimum_p, matmul_p
greater, greater_equal, less, less_equal, equal, not_equal = (
    greater_p, greater_equal_p, less_p, less_equal_p, equal_p, not_equal_p)
sign, detach, stop_gradient, identity = sign_p, detach_p, stop_gradient_p, identity_p


def _as_bool(cond: Any) -> np.ndarray:
    return np.asarray(cond).astype(bool)


def where(cond: Any, x: Any, y: Any) -> Tensor:
    """``x`` where ``cond`` holds, else ``y``; ``cond`` (a bool array or a Tensor read as
    bool, nonzero meaning True) is never differentiated.

    >>> import duograd as dg
    >>> dg.where(np.array([True, False]), dg.tensor([1.0, 2.0]), 0.0).numpy()
    array([1., 0.])
    """
    if isinstance(cond, Tensor):
        c = cond if cond.dtype == np.bool_ else not_equal_p(cond, 0)
    else:
        c = _wrap(_derive(_as_bool, cond))
    # Lift x and y on their own: numbers take their dtype, not the bool condition's.
    return where_p(c, *_lift_all("where", (x, y)))


def astype(x: Tensor, dtype: Any) -> Tensor:
    """``x`` cast to ``dtype``: differentiable between floating dtypes (the gradient is cast
    back to ``x``'s dtype); a cast to an integer or bool dtype has no history, as in torch.

    >>> import duograd as dg
    >>> x = dg.tensor([1.5, -2.0], requires_grad=True)
    >>> dg.ops.astype(x, dg.float32).requires_grad, dg.ops.astype(x, dg.int64)
    (True, tensor([ 1, -2]))
    """
    dt = _dtype_of(dtype, "astype")
    return (cast_p if dt.kind == "f" else cast_nodiff_p)(x, dtype=dt)


_tensor._cast = astype  # how _tensor's promotion casts an operand (it imports nothing from here)


def clip(x: Tensor, lo: float | None = None, hi: float | None = None) -> Tensor:
    """``x`` limited to [lo, hi] (either may be None); the gradient passes where
    lo <= x <= hi, bounds included.

    >>> import duograd as dg
    >>> dg.clip(dg.tensor([-2.0, 0.5, 3.0]), -1.0, 1.0).numpy()
    array([-1. ,  0.5,  1. ])
    """
    if lo is None and hi is None:
        raise ValueError("clip: give lo, hi or both")
    return clip_p(x, lo=lo, hi=hi)


def _torch_names(op: str, axis: Any, keepdims: Any, dim: Any, keepdim: Any) -> tuple[Any, Any]:
    """PyTorch's ``dim``/``keepdim`` accepted for NumPy's ``axis``/``keepdims``."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{op}: give axis or dim, not both")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    return axis, bool(keepdims)


def _one_axis(x: Tensor, axis: Any, op: str) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be one int, got {axis!r}")
    return normalize_axes(axis, x.ndim, op, x.shape)[0]


def sum(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
        keepdim: bool | None = None) -> Tensor:
    """Sum over ``axis`` (None: every axis); ``dim``/``keepdim`` are PyTorch's names.

    >>> import duograd as dg
    >>> dg.sum(dg.ones((2, 3)), dim=0).numpy()
    array([2., 2., 2.])
    """
    axis, keepdims = _torch_names("sum", axis, keepdims, dim, keepdim)
    return sum_p(x, axis=normalize_axes(axis, x.ndim, "sum", x.shape), keepdims=keepdims)


def _count(x: Tensor, axis: tuple[int, ...]) -> int:
    return math.prod(x.shape[a] for a in axis)


def mean(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    """Mean over ``axis``.

    >>> import duograd as dg
    >>> float(dg.mean(dg.tensor([1.0, 2.0, 6.0])))
    3.0
    """
    axis, keepdims = _torch_names("mean", axis, keepdims, dim, keepdim)
    axes = normalize_axes(axis, x.ndim, "mean", x.shape)
    return sum_p(x, axis=axes, keepdims=keepdims) / _count(x, axes)


def var(x: Tensor, axis: Any = None, keepdims: bool = False, ddof: int = 0, *, dim: Any = None,
        keepdim: bool | None = None) -> Tensor:
    """Variance over ``axis`` with ``ddof`` degrees of freedom removed (NumPy's default 0).

    >>> import duograd as dg
    >>> float(dg.var(dg.tensor([1.0, 3.0])))
    1.0
    """
    axis, keepdims = _torch_names("var", axis, keepdims, dim, keepdim)
    axes = normalize_axes(axis, x.ndim, "var", x.shape)
    d = x - sum_p(x, axis=axes, keepdims=True) / _count(x, axes)
    return sum_p(d * d, axis=axes, keepdims=keepdims) / (_count(x, axes) - ddof)


def amax(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    """The largest value over ``axis`` (values only); ties share the gradient.

    >>> import duograd as dg
    >>> dg.max(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1).numpy()
    array([5., 7.])
    """
    axis, keepdims = _torch_names("max", axis, keepdims, dim, keepdim)
    return max_p(x, axis=normalize_axes(axis, x.ndim, "max", x.shape), keepdims=keepdims)


def amin(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    """The smallest value over ``axis`` (values only); ties share the gradient.

    >>> import duograd as dg
    >>> dg.min(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1).numpy()
    array([1., 2.])
    """
    axis, keepdims = _torch_names("min", axis, keepdims, dim, keepdim)
    return min_p(x, axis=normalize_axes(axis, x.ndim, "min", x.shape), keepdims=keepdims)


def argmax(x: Tensor, axis: Any = None, *, dim: Any = None) -> Tensor:
    """Index of the largest value (over the flattened tensor when ``axis`` is None), int64,
    without history.

    >>> import duograd as dg
    >>> dg.argmax(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1).numpy()
    array([1, 0])
    """
    axis, _ = _torch_names("argmax", axis, False, dim, None)
    return argmax_p(x, axis=None if axis is None else _one_axis(x, axis, "argmax"))


def argmin(x: Tensor, axis: Any = None, *, dim: Any = None) -> Tensor:
    """Index of the smallest value (over the flattened tensor when ``axis`` is None), int64,
    without history.

    >>> import duograd as dg
    >>> dg.argmin(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1).numpy()
    array([0, 1])
    """
    axis, _ = _torch_names("argmin", axis, False, dim, None)
    return argmin_p(x, axis=None if axis is None else _one_axis(x, axis, "argmin"))


def logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
              keepdim: bool | None = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, shifted by the max so it never overflows.

    >>> import duograd as dg
    >>> float(dg.logsumexp(dg.tensor([1000.0, 1000.0])))
    1000.6931471805599
    """
    axis, keepdims = _torch_names("logsumexp", axis, keepdims, dim, keepdim)
    return logsumexp_p(x, axis=normalize_axes(axis, x.ndim, "logsumexp", x.shape), keepdims=keepdims)


def cumsum(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Running sum along ``axis``, as ``numpy.cumsum`` (``dim`` is PyTorch's name).

    >>> import duograd as dg
    >>> dg.cumsum(dg.tensor([1.0, 2.0, 3.0]), axis=0).numpy()
    array([1., 3., 6.])
    """
    axis, _ = _torch_names("cumsum", axis, False, dim, None)
    return cumsum_p(x, axis=_one_axis(x, axis, "cumsum"))


def _log_softmax(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    # Shift by the row max first, held constant: the result (x - m) - log(sum(exp(x - m)))
    # keeps every bit even for logits of +-1000, where x - logsumexp(x) would lose them in
    # rounding m + log(...).
    # After the shift every row's max is 0, so exp(s) <= 1 and its sum is >= 1: plain
    # exp, sum and log are stable here (logsumexp would find the max a second time).
    s = x - row_max_p(x, axis=axes)
    return s - log_p(sum_p(exp_p(s), axis=axes, keepdims=True))


def log_softmax(x: Any, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``log(softmax(x))`` along ``axis``, stable for any finite input.

    >>> import duograd as dg
    >>> dg.tensor([1000.0, 0.0]).log_softmax().numpy()
    array([    0., -1000.])
    """
    axis, _ = _torch_names("log_softmax", None if dim is not None else axis, False, dim, None)
    x = _lift_all("log_softmax", (x,))[0]
    return _log_softmax(x, normalize_axes(axis, x.ndim, "log_softmax", x.shape))


def softmax(x: Any, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, as ``exp(log_softmax(x))``.

    >>> import duograd as dg
    >>> dg.tensor([0.0, 0.0]).softmax().numpy()
    array([0.5, 0.5])
    """
    axis, _ = _torch_names("softmax", None if dim is not None else axis, False, dim, None)
    x = _lift_all("softmax", (x,))[0]
    return exp_p(_log_softmax(x, normalize_axes(axis, x.ndim, "softmax", x.shape)))


def reshape(x: Tensor, *shape: Any) -> Tensor:
    """The same values in a new shape (one entry may be -1).

    >>> import duograd as dg
    >>> dg.reshape(dg.ones(6), (2, -1)).shape
    (2, 3)
    """
    return reshape_p(x, shape=_shape_of(shape))


def transpose(x: Tensor, *axes: Any) -> Tensor:
    """Permute the axes (NumPy's meaning; no axes reverses them).

    >>> import duograd as dg
    >>> dg.transpose(dg.ones((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    if not axes or axes == (None,):
        axes = tuple(range(x.ndim - 1, -1, -1))
    else:
        axes, nd = _shape_of(axes), x.ndim
        # Range first: a % nd alone would let transpose(3, 0) pass as (1, 0) on a matrix.
        if any(not -nd <= a < nd for a in axes) or sorted(a % nd for a in axes) != list(range(nd)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the "
                             f"{x.ndim} axes of a tensor of shape {x.shape}")
        axes = tuple(a % x.ndim for a in axes)
    return transpose_p(x, axes=axes)


def broadcast_to(x: Tensor, shape: Iterable[int]) -> Tensor:
    """``x`` repeated along new or size-1 axes; its gradient sums back (``sum_to``).

    >>> import duograd as dg
    >>> dg.broadcast_to(dg.tensor([1.0, 2.0]), (2, 2)).numpy()
    array([[1., 2.],
           [1., 2.]])
    """
    return broadcast_to_p(x, shape=tuple(int(n) for n in shape))


def squeeze(x: Tensor, axis: Any = None) -> Tensor:
    """Drop size-1 axes (all of them, or those named by ``axis``).

    >>> import duograd as dg
    >>> dg.squeeze(dg.ones((1, 3, 1))).shape
    (3,)
    """
    if axis is None:
        return reshape_p(x, shape=tuple(n for n in x.shape if n != 1))
    axes = normalize_axes(axis, x.ndim, "squeeze", x.shape)
    bad = [a for a in axes if x.shape[a] != 1]
    if bad:
        raise ValueError(f"squeeze: axis {bad[0]} of a tensor of shape {x.shape} has size "
                         f"{x.shape[bad[0]]}, not 1")
    return reshape_p(x, shape=tuple(n for i, n in enumerate(x.shape) if i not in axes))


def unsqueeze(x: Tensor, axis: int) -> Tensor:
    """A new size-1 axis at ``axis``.

    >>> import duograd as dg
    >>> dg.unsqueeze(dg.ones(3), 0).shape
    (1, 3)
    """
    nd = x.ndim + 1
    if not -nd <= axis < nd:
        raise ValueError(f"unsqueeze: axis {axis} is out of range for a result of {nd} "
                         f"dimensions (input shape {x.shape})")
    axis %= nd
    return reshape_p(x, shape=x.shape[:axis] + (1,) + x.shape[axis:])


def _index_part(i: Any) -> Any:
    # NOTE: a Tensor used as an index is read as values, as NumPy and PyTorch do: the
    # selection is fixed when the index is built, so it is a parameter, not an input.
    if isinstance(i, Tensor):
        i = i._data
        if i.dtype.kind not in "biu":
            raise IndexError(f"getitem: tensors used as indices must be long, int, byte or bool "
                             f"tensors, got {i.dtype} (shape {i.shape})")
    elif isinstance(i, (list, tuple)):
        i = np.asarray(i)
    if isinstance(i, np.ndarray) and i.dtype.kind not in "biu":
        raise IndexError(f"getitem: arrays used as indices must be of integer or bool type, "
                         f"got {i.dtype} (shape {i.shape})")
    return i


def _is_int(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)


def _torch_order(parts: tuple) -> tuple[tuple, tuple]:
    """torch's placement of advanced indices, as two NumPy indexings: the ints first (they
    select, as basic indexing), then the arrays on what is left. NumPy counts an int beside
    an array as advanced too, so ``z[0, :, [0, 1]]`` would put the array's dim first."""
    first: list[Any] = []
    then: list[Any] = []
    for i in parts:
        if _is_int(i):
            first.append(i)
        elif isinstance(i, np.ndarray):
            first.extend([slice(None)] * (i.ndim if i.dtype == bool else 1))
            then.append(i)
        else:  # a slice, None (applied in the first step, a full slice in the second) or ...
            first.append(i)
            then.append(Ellipsis if i is Ellipsis else slice(None))
    return tuple(first), tuple(then)


def getitem(x: Tensor, index: Any) -> Tensor:
    """Indexing as torch: ints, slices, None, Ellipsis, integer tensors or arrays (repeated
    indices accumulate in the gradient) and bool masks; advanced indices that a slice
    separates go first in the result, and ints are applied before them (torch's rule).

    >>> import duograd as dg
    >>> z = dg.zeros(2, 3, 4)
    >>> z[0, :, [0, 1]].shape, z[dg.tensor([True, False])].shape
    ((3, 2), (1, 3, 4))
    """
    parts = index if isinstance(index, tuple) else (index,)
    parts = tuple(_index_part(i) for i in parts)
    basic = all(isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis)))
                and not isinstance(i, bool) for i in parts)
    if not basic and any(_is_int(i) for i in parts) and \
            any(isinstance(i, np.ndarray) and i.ndim for i in parts):
        first, then = _torch_order(parts)
        return getitem(getitem_p(x, index=first, basic=True), then)
    if not basic and any(isinstance(i, np.ndarray) and i.dtype == bool for i in parts):
        # A boolean mask is the same selection as the integer arrays of its nonzeros.
        expanded: list[Any] = []
        for i in parts:
            expanded.extend(np.nonzero(i) if isinstance(i, np.ndarray) and i.dtype == bool else (i,))
        parts = tuple(expanded)
    return getitem_p(x, index=parts, basic=basic)


def concatenate(ts: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis.

    >>> import duograd as dg
    >>> dg.concatenate([dg.ones(2), dg.zeros(1)]).numpy()
    array([1., 1., 0.])
    """
    ts = _lift_all("concatenate", tuple(ts))
    if not ts:
        raise ValueError("concatenate: need at least one tensor")
    if ts[0].ndim == 0:
        raise ValueError("concatenate: zero-dimensional tensors cannot be concatenated")
    return concatenate_p(*ts, axis=_one_axis(ts[0], axis, "concatenate"))


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

