"""The public op layer: torch's signatures over the rows of the op table.

The rows (every primitive's NumPy forward beside its VJP/JVP rules, ``name_p``) live
below this module, in ``duograd/rows/`` (``rows/core.py`` for the core table, read its
docstring for what a row and a rule may do). This module is the layer above them: each
public function here is a thin normaliser of torch's arguments (``dim``/``axis``,
``keepdim``, sizes given as varargs or one tuple, bounds, indices) that calls rows or
composes them (``mean``, ``var``, ``softmax``, ``squeeze``, ...); where a function would
only pass its arguments on it *is* the row (``exp = exp_p``). Tensor methods
(``methods.py``) call these.

Every row is re-exported here (``from duograd.ops import add_p`` keeps working), so code
above the layer imports from ``ops``; the rows never import this module
(``tests/engine/test_import_graph.py`` checks it).

Domain errors follow NumPy: ``log`` of a negative number is nan with a RuntimeWarning,
not an exception.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Iterable, Sequence

import numpy as np

from .autograd import ELEMENTWISE, LINEAR, Primitive, Variadic, WithConstant, ones_like_p, zeros_like_p  # noqa: F401
from . import return_types
from .shapes import (DimError, ShapeError, broadcast_shape, dim_alias, dim_index, keepdims_shape,  # noqa: F401
                     normalize_axes, sum_to)
from . import _tensor
from ._tensor import Tensor, _derive, _dtype_of, _lift_all, _result_type, _shape_of, _wrap
# The rows, every one re-exported: the core table (rows/core.py).
from .rows.core import (  # noqa: F401
    greater_p, greater_equal_p, less_p, less_equal_p, equal_p, not_equal_p, sign_p, argmax_p,
    argmin_p, clip_mask_p, share_p, extremum_weights_p, row_max_p, add_p, sub_p, mul_p, div_p,
    pow_p, neg_p, exp_p, log_p, sqrt_p, tanh_p, sigmoid_p, softplus_p, sin_p, cos_p, relu_p, abs_p,
    clip_p, maximum_p, minimum_p, where_p, cast_p, cast_nodiff_p, identity_p, detach_p,
    stop_gradient_p, sum_p, max_p, min_p, logsumexp_p, reshape_p, transpose_p, broadcast_to_p,
    cumsum_p, getitem_p, scatter_add_p, concatenate_p, clone_p, onehot_p, std_sqrt_p, matmul_p,
    linear_p,
    _expand, _mT, _selector)
from .rows.indexing import nonzero_along_p

# ====================================================================== the public functions

add, sub, mul, div, power, neg = add_p, sub_p, mul_p, div_p, pow_p, neg_p
exp, log, sqrt, tanh, sigmoid, softplus, sin, cos = exp_p, log_p, sqrt_p, tanh_p, sigmoid_p, softplus_p, sin_p, cos_p
relu, absolute, maximum, minimum, matmul = relu_p, abs_p, maximum_p, minimum_p, matmul_p
greater, greater_equal, less, less_equal, equal, not_equal = (
    greater_p, greater_equal_p, less_p, less_equal_p, equal_p, not_equal_p)
sign, detach, stop_gradient, identity = sign_p, detach_p, stop_gradient_p, identity_p


def _as_bool(mask: Any, op: str = "where") -> Tensor:
    """A condition or mask as a bool Tensor (nonzero meaning True), never differentiated."""
    if isinstance(mask, Tensor):
        return mask if mask.dtype == np.bool_ else not_equal_p(mask, 0)
    return _wrap(_derive(lambda a: np.asarray(a).astype(bool), mask))


def _shape_any(a: Any) -> tuple[int, ...]:
    return a.shape if isinstance(a, Tensor) else np.shape(a)


def where(condition: Any, input: Any, other: Any) -> Tensor:  # noqa: A002  (torch's names)
    """``input`` where ``condition`` holds, else ``other`` (either may be a number, as torch);
    ``condition`` (a bool array or a Tensor read as bool, nonzero meaning True) is never
    differentiated. ``duograd.where`` (``indexing.where``) adds torch's one-argument form.

    >>> import duograd as dg
    >>> dg.where(np.array([True, False]), dg.tensor([1.0, 2.0]), 0.0).numpy()
    array([1., 0.])
    """
    c = _as_bool(condition, "where")
    try:
        np.broadcast_shapes(c.shape, *(_shape_any(a) for a in (input, other)))
    except ValueError:
        raise ShapeError(f"where: shapes {c.shape}, {_shape_any(input)} and {_shape_any(other)} do "
                         "not broadcast") from None
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        dt = _result_type((input, other), "where")  # two numbers: the default dtypes, as torch
        return where_p(c, _wrap(np.asarray(input, dt)), _wrap(np.asarray(other, dt)))
    # Lift input and other on their own: numbers take their dtype, not the bool condition's.
    return where_p(c, *_lift_all("where", (input, other)))


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


def clip(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002  (torch's names)
    """``x`` limited to [min, max], as ``torch.clamp`` (either bound may be None, a number
    or a Tensor); the gradient passes where min <= x <= max, bounds included. Where
    min > max the result is max, as torch.

    >>> import duograd as dg
    >>> dg.clamp(dg.tensor([-2.0, 0.5, 3.0]), -1.0, 1.0).numpy()
    array([-1. ,  0.5,  1. ])
    """
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        # Tensor bounds are inputs: each gets the gradient where it is the result.
        lo_cut = x if min is None else where_p(less_p(x, min), *_lift_all("clamp", (min, x)))
        return lo_cut if max is None else where_p(greater_p(lo_cut, max), *_lift_all("clamp", (max, lo_cut)))
    if isinstance(min, (np.ndarray, list, tuple)) or isinstance(max, (np.ndarray, list, tuple)):
        return clip(x, None if min is None else _lift_all("clamp", (min,))[0],
                    None if max is None else _lift_all("clamp", (max,))[0])
    return clip_p(x, lo=min, hi=max)


clamp = clip


def _np_clip(a: Tensor, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Tensor:
    """``numpy.clip`` on a Tensor (NumPy's argument names)."""
    if out is not None:
        raise TypeError("numpy.clip: out= is not supported for Tensors")
    return clip(a, kw.pop("min", a_min), kw.pop("max", a_max))


def _cast_for(x: Tensor, dtype: Any) -> Tensor:
    return x if dtype is None or np.dtype(dtype) == x.dtype else astype(x, dtype)


def sum(x: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,  # noqa: A001
        axis: Any = None, keepdims: bool | None = None) -> Tensor:
    """Sum over ``dim`` (None: every dim; an int, a negative int or a tuple), as ``torch.sum``;
    ``dtype`` casts first. NumPy's ``axis``/``keepdims`` are accepted too.

    >>> import duograd as dg
    >>> dg.sum(dg.ones((2, 3)), dim=0).numpy()
    array([2., 2., 2.])
    """
    dim, keepdim = dim_alias("sum", dim, keepdim, axis, keepdims)
    x = _cast_for(x, dtype)
    return sum_p(x, axis=normalize_axes(dim, x.ndim, "sum", x.shape), keepdims=keepdim)


def _count(x: Tensor, axis: tuple[int, ...]) -> int:
    return math.prod(x.shape[a] for a in axis)


def mean(x: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         axis: Any = None, keepdims: bool | None = None) -> Tensor:
    """Mean over ``dim``, as ``torch.mean`` (an empty reduction gives nan).

    >>> import duograd as dg
    >>> float(dg.mean(dg.tensor([1.0, 2.0, 6.0])))
    3.0
    """
    dim, keepdim = dim_alias("mean", dim, keepdim, axis, keepdims)
    x = _cast_for(x, dtype)
    if x.dtype.kind != "f":  # torch infers no float dtype for an integer or bool mean
        raise RuntimeError(f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} "
                           f"dtype must be either a floating point or complex dtype. Got: {x.dtype}")
    axes = normalize_axes(dim, x.ndim, "mean", x.shape)
    n = _count(x, axes)
    s = sum_p(x, axis=axes, keepdims=keepdim)
    return s / n if n else s * np.nan


def _correction(op: str, unbiased: Any, correction: Any) -> float:
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}: give unbiased or correction, not both")
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def _float_only(op: str, x: Tensor) -> None:
    """Raise torch's RuntimeError where ``op`` (var, std, var_mean, std_mean) meets a tensor
    that is not floating point.

    >>> import duograd as dg
    >>> _float_only("var", dg.tensor([1, 2]))
    Traceback (most recent call last):
    RuntimeError: var: std and var only support floating point and complex dtypes, got int64
    """
    if x.dtype.kind != "f":
        what = "std and var" if op in ("std", "var") else op
        raise RuntimeError(f"{op}: {what} only support floating point and complex dtypes, got {x.dtype}")


def var(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, axis: Any = None, keepdims: bool | None = None) -> Tensor:
    """Variance over ``dim``, dividing by n - ``correction`` (default 1, as ``torch.var``;
    ``unbiased=False`` is correction 0). ``x.var(True)`` reads the bool as ``unbiased``, as
    torch does. NumPy's ``np.var(t)`` keeps NumPy's ddof=0 through the dispatch.

    >>> import duograd as dg
    >>> float(dg.var(dg.tensor([1.0, 3.0]))), float(dg.var(dg.tensor([1.0, 3.0]), correction=0))
    (2.0, 1.0)
    """
    if isinstance(dim, bool):  # torch's var(unbiased) overload
        dim, unbiased = None, dim
    _float_only("var", x)
    dim, keepdim = dim_alias("var", dim, keepdim, axis, keepdims)
    c = _correction("var", unbiased, correction)
    axes = normalize_axes(dim, x.ndim, "var", x.shape)
    return _var(x, axes, keepdim, c)


def _var(x: Tensor, axes: tuple[int, ...], keepdim: bool, correction: float) -> Tensor:
    n = _count(x, axes)
    d = x - sum_p(x, axis=axes, keepdims=True) / (n if n else np.nan)
    ss = sum_p(d * d, axis=axes, keepdims=keepdim)
    dof = builtins.max(n - correction, 0)
    return ss / dof if dof else ss * np.nan  # torch gives nan (or inf) where n <= correction


def std(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, axis: Any = None, keepdims: bool | None = None) -> Tensor:
    """Standard deviation, ``sqrt(var(...))`` with ``torch.std``'s arguments.

    >>> import duograd as dg
    >>> float(dg.std(dg.tensor([1.0, 3.0]), correction=0))
    1.0
    """
    _float_only("std", x)
    return std_sqrt_p(var(x, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims))


def _np_var(a: Tensor, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
            keepdims: bool = False, **kw: Any) -> Tensor:
    """``numpy.var`` on a Tensor: NumPy's meaning (ddof=0 by default)."""
    if out is not None or kw:
        raise TypeError(f"numpy.var: {', '.join(['out'] * (out is not None) + list(kw))} not supported for Tensors")
    a = _cast_for(a, dtype)
    return _var(a, normalize_axes(axis, a.ndim, "var", a.shape), bool(keepdims), ddof)


def _np_std(a: Tensor, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
            keepdims: bool = False, **kw: Any) -> Tensor:
    """``numpy.std`` on a Tensor: NumPy's meaning (ddof=0 by default)."""
    return std_sqrt_p(_np_var(a, axis, dtype, out, ddof, keepdims, **kw))


def _extreme(name: str, prim: Primitive, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    axes = normalize_axes(dim, x.ndim, name, x.shape)
    for a in axes:
        if x.shape[a] == 0:
            raise DimError(f"{name}: expected reduction dim {a} to have non-zero size "
                           f"(input shape {x.shape})")
    if not axes and x.ndim and not x._data.size:
        raise ShapeError(f"{name}: expected reduction dim to be specified for an empty input "
                         f"(shape {x.shape})")
    return prim(x, axis=axes, keepdims=keepdim)


def amax(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool | None = None) -> Tensor:
    """The largest values over ``dim`` (any dims; None: all), as ``torch.amax``; ties share
    the gradient evenly.

    >>> import duograd as dg
    >>> dg.amax(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).numpy()
    array([5., 7.])
    """
    dim, keepdim = dim_alias("amax", dim, keepdim, axis, keepdims)
    if dim is None and x._data.size == 0:
        raise ShapeError(f"amax: the input is empty (shape {x.shape}); name a dim of non-zero size")
    return _extreme("amax", max_p, x, dim, keepdim)


def amin(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
         keepdims: bool | None = None) -> Tensor:
    """The smallest values over ``dim`` (any dims; None: all), as ``torch.amin``; ties share
    the gradient evenly.

    >>> import duograd as dg
    >>> dg.amin(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).numpy()
    array([1., 2.])
    """
    dim, keepdim = dim_alias("amin", dim, keepdim, axis, keepdims)
    if dim is None and x._data.size == 0:
        raise ShapeError(f"amin: the input is empty (shape {x.shape}); name a dim of non-zero size")
    return _extreme("amin", min_p, x, dim, keepdim)


def _selected(name: str, arg: Primitive, rtype: Any, x: Tensor, dim: Any, keepdim: bool) -> Any:
    """max/min along one dim: ``(values, indices)``; the gradient goes to the selected element
    only (the first of ties, as torch's max(dim))."""
    a = dim_index(dim, x.ndim, name, x.shape)
    if x.ndim and x.shape[a] == 0:
        raise DimError(f"{name}: expected reduction dim {a} to have non-zero size (input shape {x.shape})")
    if x.ndim == 0:
        return rtype(identity_p(x), zeros_like_p(argmax_p(x, axis=None)))
    idx = arg(x, axis=a)                                  # int64, no history
    chosen = onehot_p(unsqueeze(idx, a), axis=a, n=x.shape[a])
    values = sum_p(where_p(chosen, x, 0.0), axis=(a,), keepdims=keepdim)
    return rtype(values, unsqueeze(idx, a) if keepdim else idx)


def max(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool | None = None) -> Any:
    """As ``torch.max``: no ``dim`` gives the largest value (ties share the gradient); with
    ``dim`` the named tuple ``(values, indices)``; a Tensor second argument is
    ``maximum(x, other)``.

    >>> import duograd as dg
    >>> v, i = dg.max(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
    >>> v.numpy(), i.numpy()
    (array([5., 7.]), array([1, 0]))
    """
    if isinstance(dim, Tensor):
        return maximum_p(x, dim)
    dim, keepdim = dim_alias("max", dim, keepdim, axis, keepdims)
    if dim is None:
        return amax(x)
    return _selected("max", argmax_p, return_types.max, x, dim, keepdim)


def min(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool | None = None) -> Any:
    """As ``torch.min``: no ``dim`` gives the smallest value; with ``dim`` the named tuple
    ``(values, indices)``; a Tensor second argument is ``minimum(x, other)``.

    >>> import duograd as dg
    >>> dg.min(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).indices.numpy()
    array([0, 1])
    """
    if isinstance(dim, Tensor):
        return minimum_p(x, dim)
    dim, keepdim = dim_alias("min", dim, keepdim, axis, keepdims)
    if dim is None:
        return amin(x)
    return _selected("min", argmin_p, return_types.min, x, dim, keepdim)


def _arg(name: str, prim: Primitive, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    if dim is None:
        if not x._data.size:
            raise DimError(f"{name}: expected reduction dim to be specified for an empty input "
                           f"(shape {x.shape})")
        i = prim(x, axis=None)
        return reshape_p(i, shape=(1,) * x.ndim) if keepdim else i
    a = dim_index(dim, x.ndim, name, x.shape)
    if x.ndim == 0:
        return prim(x, axis=None)
    if x.shape[a] == 0:
        raise DimError(f"{name}: expected reduction dim {a} to have non-zero size (input shape {x.shape})")
    i = prim(x, axis=a)
    return unsqueeze(i, a) if keepdim else i


def argmax(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
           keepdims: bool | None = None) -> Tensor:
    """Index of the largest value (over the flattened tensor when ``dim`` is None), int64,
    without history, as ``torch.argmax``.

    >>> import duograd as dg
    >>> dg.argmax(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).numpy()
    array([1, 0])
    """
    dim, keepdim = dim_alias("argmax", dim, keepdim, axis, keepdims)
    return _arg("argmax", argmax_p, x, dim, keepdim)


def argmin(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
           keepdims: bool | None = None) -> Tensor:
    """Index of the smallest value (over the flattened tensor when ``dim`` is None), int64,
    without history, as ``torch.argmin``.

    >>> import duograd as dg
    >>> dg.argmin(dg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).numpy()
    array([0, 1])
    """
    dim, keepdim = dim_alias("argmin", dim, keepdim, axis, keepdims)
    return _arg("argmin", argmin_p, x, dim, keepdim)


def logsumexp(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
              keepdims: bool | None = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, shifted by the max so it never overflows.

    >>> import duograd as dg
    >>> float(dg.logsumexp(dg.tensor([1000.0, 1000.0])))
    1000.6931471805599
    """
    dim, keepdim = dim_alias("logsumexp", dim, keepdim, axis, keepdims)
    return logsumexp_p(x, axis=normalize_axes(dim, x.ndim, "logsumexp", x.shape), keepdims=keepdim)


def cumsum(x: Tensor, dim: int | None = None, *, axis: int | None = None, dtype: Any = None) -> Tensor:
    """Running sum along ``dim``, as ``torch.cumsum`` (a 0-d tensor accepts dim 0 and -1).

    >>> import duograd as dg
    >>> dg.cumsum(dg.tensor([1.0, 2.0, 3.0]), dim=0).numpy()
    array([1., 3., 6.])
    """
    dim, _ = dim_alias("cumsum", dim, False, axis, None)
    x = _cast_for(x, dtype)
    a = dim_index(dim, x.ndim, "cumsum", x.shape)
    return cumsum_p(x, axis=a) if x.ndim else identity_p(x)


def _log_softmax(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    # Shift by the row max first, held constant: the result (x - m) - log(sum(exp(x - m)))
    # keeps every bit even for logits of +-1000, where x - logsumexp(x) would lose them in
    # rounding m + log(...).
    # After the shift every row's max is 0, so exp(s) <= 1 and its sum is >= 1: plain
    # exp, sum and log are stable here (logsumexp would find the max a second time).
    s = x - row_max_p(x, axis=axes)
    return s - log_p(sum_p(exp_p(s), axis=axes, keepdims=True))


def log_softmax(x: Any, dim: int | None = None, *, axis: int | None = None) -> Tensor:
    """``log(softmax(x))`` along ``dim`` (default -1), stable for any finite input.

    >>> import duograd as dg
    >>> dg.tensor([1000.0, 0.0]).log_softmax(0).numpy()
    array([    0., -1000.])
    """
    dim, _ = dim_alias("log_softmax", dim, False, axis, None)
    x = _lift_all("log_softmax", (x,))[0]
    d = dim_index(-1 if dim is None else dim, x.ndim, "log_softmax", x.shape)
    return _log_softmax(x, (d,) if x.ndim else ())


def softmax(x: Any, dim: int | None = None, *, axis: int | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (default -1), as ``exp(log_softmax(x))``.

    >>> import duograd as dg
    >>> dg.tensor([0.0, 0.0]).softmax(0).numpy()
    array([0.5, 0.5])
    """
    dim, _ = dim_alias("softmax", dim, False, axis, None)
    x = _lift_all("softmax", (x,))[0]
    d = dim_index(-1 if dim is None else dim, x.ndim, "softmax", x.shape)
    return exp_p(_log_softmax(x, (d,) if x.ndim else ()))


def reshape(x: Tensor, *shape: Any) -> Tensor:
    """The same values in a new shape, given as varargs or one tuple (one entry may be -1),
    as ``torch.reshape`` / ``Tensor.view``.

    >>> import duograd as dg
    >>> dg.reshape(dg.ones(6), (2, -1)).shape, dg.ones(6).view(3, 2).shape
    ((2, 3), (3, 2))
    """
    return reshape_p(x, shape=_shape_of(shape))


def _np_reshape(a: Tensor, shape: Any = None, order: str = "C", **kw: Any) -> Tensor:
    """``numpy.reshape`` on a Tensor (``newshape=`` accepted, C order only)."""
    shape = kw.pop("newshape", shape)
    if order != "C" or kw:
        raise TypeError("numpy.reshape: only C order and a shape are supported for Tensors")
    return reshape(a, shape)


def permute(x: Tensor, *dims: Any) -> Tensor:
    """The dims reordered: result dim i is input dim ``dims[i]`` (varargs or one tuple), as
    ``torch.permute``.

    >>> import duograd as dg
    >>> dg.ones((2, 3, 4)).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    dims = _shape_of(dims) if dims else ()
    nd = x.ndim
    if len(dims) != nd:
        raise ShapeError(f"permute: {len(dims)} dims {dims} given for a tensor of shape {x.shape} "
                         f"({nd} dims)")
    axes = tuple(dim_index(d, x.ndim, "permute", x.shape) for d in dims)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"permute: repeated dim in {dims} (tensor of shape {x.shape})")
    return transpose_p(x, axes=axes) if nd else identity_p(x)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """``x`` with dims ``dim0`` and ``dim1`` swapped, as ``torch.transpose`` (a 0-d tensor
    accepts 0 and -1). ``np.transpose(t, axes)`` keeps NumPy's meaning.

    >>> import duograd as dg
    >>> dg.transpose(dg.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a, b = dim_index(dim0, x.ndim, "transpose", x.shape), dim_index(dim1, x.ndim, "transpose", x.shape)
    if x.ndim < 2 or a == b:
        return identity_p(x)
    axes = list(range(x.ndim))
    axes[a], axes[b] = b, a
    return transpose_p(x, axes=tuple(axes))


def _np_transpose(a: Tensor, axes: Any = None) -> Tensor:
    """``numpy.transpose`` on a Tensor: a permutation of the axes (None reverses them)."""
    if axes is None:
        return reverse_dims(a)
    return permute(a, tuple(axes))


def reverse_dims(x: Tensor) -> Tensor:
    """Every dim in reverse order (``Tensor.T``)."""
    return transpose_p(x, axes=tuple(range(x.ndim - 1, -1, -1))) if x.ndim > 1 else identity_p(x)


def matrix_transpose(x: Tensor) -> Tensor:
    """The last two dims swapped (``Tensor.mT``); a 1-D tensor raises, as torch (a 0-d one
    is left as it is, torch's deprecated identity)."""
    if x.ndim == 0:
        return identity_p(x)
    if x.ndim < 2:
        raise ShapeError(f"mT: only matrices or batches of matrices can be transposed; got "
                         f"shape {x.shape}")
    return _mT(x)


def broadcast_to(x: Tensor, shape: Iterable[int]) -> Tensor:
    """``x`` repeated along new or size-1 axes; its gradient sums back (``sum_to``).

    >>> import duograd as dg
    >>> dg.broadcast_to(dg.tensor([1.0, 2.0]), (2, 2)).numpy()
    array([[1., 2.],
           [1., 2.]])
    """
    return broadcast_to_p(x, shape=tuple(int(n) for n in shape))


def expand(x: Tensor, *sizes: Any) -> Tensor:
    """``x`` broadcast to ``sizes`` (varargs or one tuple); -1 keeps that dim's size, as
    ``Tensor.expand``. Only a dim of size 1 can grow.

    >>> import duograd as dg
    >>> dg.ones((3, 1)).expand(2, -1, 4).shape
    (2, 3, 4)
    """
    sizes = _shape_of(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: {len(sizes)} sizes {sizes} given for a tensor of shape {x.shape}; "
                         "need at least one per dim")
    shape = []
    for i, n in enumerate(sizes):
        if n == -1:
            if i < lead:
                raise ShapeError(f"expand: -1 is not allowed for the new leading dim {i} "
                                 f"(sizes {sizes}, tensor of shape {x.shape})")
            n = x.shape[i - lead]
        elif n < 0:
            raise ShapeError(f"expand: size {n} in {sizes} is negative")
        shape.append(n)
    return broadcast_to_p(x, shape=tuple(shape))


def repeat(x: Tensor, *sizes: Any) -> Tensor:
    """``x`` tiled ``sizes[i]`` times along dim i (varargs or one tuple, at least one per
    dim; extra sizes add leading dims), as ``Tensor.repeat``.

    >>> import duograd as dg
    >>> dg.tensor([1.0, 2.0]).repeat(2, 2).numpy()
    array([[1., 2., 1., 2.],
           [1., 2., 1., 2.]])
    """
    sizes = _shape_of(sizes)
    if len(sizes) < x.ndim:
        raise ShapeError(f"repeat: {len(sizes)} sizes {sizes} given for a tensor of shape "
                         f"{x.shape}; need at least one per dim")
    if any(n < 0 for n in sizes):
        raise ShapeError(f"repeat: negative size in {sizes}")
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    # Interleave: (r0, s0, r1, s1, ...) from (1, s0, 1, s1, ...), then merge each pair.
    spread = tuple(v for n in shape for v in (1, n))
    tiled = tuple(v for r, n in zip(sizes, shape) for v in (r, n))
    y = broadcast_to_p(reshape_p(x, shape=spread), shape=tiled)
    return reshape_p(y, shape=tuple(r * n for r, n in zip(sizes, shape)))


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dims ``start_dim`` to ``end_dim`` merged into one, as ``torch.flatten`` (a 0-d
    tensor becomes shape (1,)).

    >>> import duograd as dg
    >>> dg.flatten(dg.ones((2, 3, 4)), 1).shape
    (2, 12)
    """
    if x.ndim == 0:
        dim_index(start_dim, x.ndim, "flatten", x.shape), dim_index(end_dim, x.ndim, "flatten", x.shape)
        return reshape_p(x, shape=(1,))
    a, b = dim_index(start_dim, x.ndim, "flatten", x.shape), dim_index(end_dim, x.ndim, "flatten", x.shape)
    if a > b:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"(tensor of shape {x.shape})")
    shape = x.shape[:a] + (math.prod(x.shape[a:b + 1]),) + x.shape[b + 1:]
    return reshape_p(x, shape=shape) if shape != x.shape else identity_p(x)


def squeeze(x: Tensor, dim: Any = None, *, axis: Any = None) -> Tensor:
    """Drop size-1 dims: all of them, or those named by ``dim`` (an int or a tuple); a named
    dim whose size is not 1 is left alone, as ``torch.squeeze``.

    >>> import duograd as dg
    >>> dg.squeeze(dg.ones((1, 3, 1))).shape, dg.ones((1, 3)).squeeze(1).shape
    ((3,), (1, 3))
    """
    dim, _ = dim_alias("squeeze", dim, False, axis, None)
    axes = normalize_axes(dim, x.ndim, "squeeze", x.shape)
    shape = tuple(n for i, n in enumerate(x.shape) if not (i in axes and n == 1))
    return reshape_p(x, shape=shape) if shape != x.shape else identity_p(x)


def _np_squeeze(a: Tensor, axis: Any = None) -> Tensor:
    """``numpy.squeeze`` on a Tensor: a named axis whose size is not 1 raises, as NumPy."""
    axes = normalize_axes(axis, a.ndim, "squeeze", a.shape)
    if axis is not None and any(a.shape[i] != 1 for i in axes):
        raise ShapeError(f"numpy.squeeze: cannot select an axis to squeeze out which has size "
                         f"not equal to one (axis {axis}, shape {a.shape})")
    return squeeze(a, axis)


def unsqueeze(x: Tensor, dim: int | None = None, *, axis: int | None = None) -> Tensor:
    """A new size-1 dim at ``dim``, as ``torch.unsqueeze``.

    >>> import duograd as dg
    >>> dg.unsqueeze(dg.ones(3), 0).shape
    (1, 3)
    """
    dim, _ = dim_alias("unsqueeze", dim, False, axis, None)
    dim = dim_index(dim, x.ndim + 1, "unsqueeze", x.shape)  # a dim of the result
    return reshape_p(x, shape=x.shape[:dim] + (1,) + x.shape[dim:])


def clone(x: Tensor) -> Tensor:
    """A differentiable copy (new memory), as ``torch.clone``.

    >>> import duograd as dg
    >>> a = dg.ones(2)
    >>> b = a.clone()
    >>> b.numpy() is a.numpy()
    False
    """
    return clone_p(x)


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
    given = index if isinstance(index, tuple) else (index,)
    parts = tuple(_index_part(i) for i in given)
    basic = all(isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis)))
                and not isinstance(i, bool) for i in parts)
    if not basic and any(_is_int(i) for i in parts) and \
            any(isinstance(i, np.ndarray) and i.ndim for i in parts):
        first, then = _torch_order(parts)
        return getitem(getitem_p(x, index=first, basic=True), then)
    if not basic and any(isinstance(i, np.ndarray) and i.dtype == bool for i in parts):
        # A boolean mask is the same selection as the integer arrays of its nonzeros, found
        # by a primitive, so that a dg.compile replay finds them again from its values.
        expanded: list[Any] = []
        for i, g in zip(parts, given):
            if isinstance(i, np.ndarray) and i.dtype == bool:
                m = g if isinstance(g, Tensor) else _wrap(i)
                expanded.extend(nonzero_along_p(m, axis=k)._data for k in range(i.ndim))
            else:
                expanded.append(i)
        parts = tuple(expanded)
    return getitem_p(x, index=parts, basic=basic)


def _join(tensors: Sequence[Any], dim: Any, op: str) -> Tensor:
    """torch.cat: ``tensors`` joined along the existing dim ``dim`` (1-D empty ones skipped,
    dtypes promoted); every join (cat, concat, concatenate, stack) comes here."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a sequence of tensors, got {type(tensors).__name__}")
    ts = _lift_all(op, tuple(tensors))
    if not ts:
        raise ValueError(f"{op}: expected a non-empty list of tensors")
    kept = [t for t in ts if not (t.ndim == 1 and t.shape[0] == 0)] or [ts[0]]
    first = kept[0]
    if first.ndim == 0:
        raise RuntimeError(f"{op}: zero-dimensional tensor cannot be concatenated")
    d = dim_index(dim, first.ndim, op, first.shape)
    for k, t in enumerate(kept):
        if t.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape))
                                       if i != d):
            raise ShapeError(f"{op}: sizes of tensors must match except in dimension {d}; got "
                             f"{first.shape} and {t.shape} (tensor {k})")
    dtype = _result_type(kept, op)
    kept = [t if t.dtype == dtype else astype(t, dtype) for t in kept]
    return kept[0] if len(kept) == 1 else concatenate_p(*kept, axis=d)


def concatenate(tensors: Sequence[Any], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """torch.concatenate (``axis`` is its name as well as NumPy's; ``dim`` works too).

    >>> import duograd as dg
    >>> dg.concatenate([dg.ones(2), dg.zeros(1)]).numpy()
    array([1., 1., 0.])
    """
    return _join(tensors, axis if dim is None else dim, "concatenate")


def stack(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors of one shape along a new dim (torch.stack; ``axis`` is NumPy's name).

    >>> import duograd as dg
    >>> dg.stack([dg.ones(2), dg.zeros(2)], dim=1).shape
    (2, 2)
    """
    if axis is not None:
        dim = axis
    ts = _lift_all("stack", tuple(tensors))
    if not ts:
        raise RuntimeError("stack: expects a non-empty list of tensors")
    for k, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise ShapeError(f"stack: expects each tensor to be equal size, but got {ts[0].shape} "
                             f"at entry 0 and {t.shape} at entry {k}")
    d = dim_index(dim, ts[0].ndim + 1, "stack", ts[0].shape)
    return _join([unsqueeze(t, d) for t in ts], d, "stack")
