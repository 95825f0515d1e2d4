"""THE table: every primitive's NumPy forward beside its derivative rules (the core rows).

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
- ``name`` is the public function, in the layer above the rows (``duograd/ops.py``, which
  imports this module and re-exports every row; this module imports nothing of it). Where
  it would only pass its arguments on, it *is* the primitive (``exp = exp_p``); otherwise
  it checks and normalises torch's arguments (axes, shapes, indices) and calls primitives,
  or composes them (``mean``, ``var``, ``softmax``, ``squeeze``, ...). Tensor methods
  (``methods.py``) call these.

Domain errors follow NumPy: ``log`` of a negative number is nan with a RuntimeWarning,
not an exception.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from typing import Any

import numpy as np

from ..autograd import ELEMENTWISE, LINEAR, Primitive, Variadic, WithConstant
from ..shapes import broadcast_shape, keepdims_shape, sum_to
from .. import _tensor
from .._tensor import Tensor, _wrap  # noqa: F401  (_wrap: for tests/mutants.py's E-sum-detached)

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
    m = np.maximum.reduce(x, axis=axis, keepdims=True)  # (np.max, without its Python wrapper)
    finite = np.isfinite(m)
    if finite.all():  # the common case: m itself, with no select
        return m
    return np.where(finite, m, x.dtype.type(0))


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
    # gradient. At x = 0 it is torch's: 0 for y >= 0 (not 0 * log 0 = nan: log sees 1
    # there), and inf * log 0 = -inf for y < 0.
    at_zero = where_p(less_p(y, 0.0), -math.inf, 0.0)
    zero = equal_p(x, 0.0)
    return g * where_p(zero, at_zero, out * where_p(zero, 1.0, x).log())


pow_p = Primitive("pow", np.power, vjp=(_pow_gx, _pow_gy), jvp=ELEMENTWISE)
def _negative(x: np.ndarray) -> np.ndarray:
    # NOTE: torch refuses -bool with a RuntimeError (NumPy's np.negative with a TypeError).
    if x.dtype.kind == "b":
        raise RuntimeError("neg: Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return np.negative(x)


neg_p = Primitive("neg", _negative, vjp=(lambda g, out, x: -g,), jvp=LINEAR)
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
                   vjp=(lambda g, out, x: g * greater_p(out, 0.0),), jvp=ELEMENTWISE,
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

# ---------------------------------------------------------------------- torch's signatures
# clone copies (identity shares memory); onehot is the selector of max/min along a dim,
# whose gradient goes to the one element chosen, as torch's max(dim).
clone_p = Primitive("clone", np.copy, vjp=(lambda g, out, x: g,), jvp=LINEAR)
onehot_p = _selector("onehot", lambda i, axis, n: np.arange(n).reshape(
    (n,) + (1,) * (i.ndim - 1 - axis)) == i)
# std's square root: NOTE its gradient is 0 where the result is 0 (a constant input), as
# torch's std_backward masks it, not 0 * inf = nan.
std_sqrt_p = Primitive("std_sqrt", np.sqrt,
                       vjp=(lambda g, out, x: where_p(equal_p(out, 0.0), 0.0, g / (out * 2)),),
                       jvp=ELEMENTWISE)

# ====================================================================== matmul


def _mT(x: Tensor) -> Tensor:
    """Swap the last two axes."""
    n = x.ndim
    return transpose_p(x, axes=tuple(range(n - 2)) + (n - 1, n - 2))


def _unsqueeze(x: Tensor, dim: int) -> Tensor:
    """A new size-1 dim at ``dim`` (negative: counted from the end of the result), as
    ``ops.unsqueeze`` without its argument checks: the rules' dims are always valid."""
    d = dim % (x.ndim + 1)
    return reshape_p(x, shape=x.shape[:d] + (1,) + x.shape[d:])


def _squeeze(x: Tensor, dim: int) -> Tensor:
    """Dim ``dim`` (of size 1) dropped, as ``ops.squeeze(x, dim)`` without its checks."""
    d = dim % x.ndim
    shape = x.shape[:d] + x.shape[d + 1:] if x.shape[d] == 1 else x.shape
    return reshape_p(x, shape=shape) if shape != x.shape else identity_p(x)


def _matmul_gx(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if y.ndim == 1:
        return g * y if x.ndim == 1 else _unsqueeze(g, -1) * y         # outer product
    if x.ndim == 1:
        return _squeeze(_unsqueeze(g, -2) @ _mT(y), -2)
    return g @ _mT(y)


def _matmul_gy(g: Tensor, out: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if x.ndim == 1:
        return g * x if y.ndim == 1 else _unsqueeze(x, -1) * _unsqueeze(g, -2)
    if y.ndim == 1:
        return _squeeze(_mT(x) @ _unsqueeze(g, -1), -1)
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
                     replay=lambda: np.matmul, promote="matmul")

# nn.Linear's product in torch's layout, x @ w.T with w of shape (out, in), as one primitive
# (torch.nn.functional.linear): the weight's gradient comes out (out, in) and contiguous,
# g^T x, with no transpose nodes in the graph, so a Linear step costs no more than x @ W did.


def _linear_gw(g: Tensor, out: Tensor, x: Tensor, w: Tensor) -> Tensor:
    if x.ndim == 1:
        return _unsqueeze(g, -1) * x                                      # outer product
    if x.ndim > 2:  # the batch dims folded into one: the sum over them is the product's
        g, x = reshape_p(g, shape=(-1, g.shape[-1])), reshape_p(x, shape=(-1, x.shape[-1]))
    return _mT(g) @ x


linear_p = Primitive("linear", lambda x, w: np.matmul(x, w.T),  # NumPy's errors name the shapes
                     vjp=(lambda g, out, x, w: g @ w, _linear_gw),
                     jvp=(lambda t, out, x, w: linear_p(t, w), lambda t, out, x, w: linear_p(x, t)),
                     promote="matmul")

__all__ = sorted(n for n in dir() if n.endswith("_p"))  # every row (what ``rows/__init__`` re-exports)
