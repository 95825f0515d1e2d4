"""torch's functions and Tensor methods that are compositions of the op rows.

Each public function here has torch's name, parameter names, positional order and result
(dtype, shape, named tuple); the arithmetic is done by the primitives of ``duograd/rows/``
(through ``ops.py``, ``elementwise.py``, ``indexing.py`` and ``linalg.py``), so every differentiable name gets its
gradient (and its second order, and its JVP) from the rows it is made of. The few that
torch does not differentiate (``bincount``, ``histc``, ``bucketize``, ``searchsorted``,
``heaviside``, ``signbit``) are selectors without history.

``methods.py`` binds the Tensor methods of the same names onto ``Tensor``; ``out=`` writes
the result into a given tensor, as torch's.

>>> import duograd as dg
>>> x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dg.addcmul(x, x, x, value=0.5).sum().backward()
>>> x.grad.numpy()
array([[2., 3.],
       [4., 5.]])
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from . import _context as _ctx, _tensor, elementwise as ew, indexing, inplace, linalg, ops, return_types
from ._tensor import Tensor, _as_tensor, _derive, _lift_all
from .shapes import dim_index
from .autograd import Primitive, no_grad
from .rows.indexing import gather_p, hit_p
# The rows, every one re-exported (rows/tensor_api.py).
from .rows.tensor_api import (  # noqa: F401
    signbit_p, heaviside_p, fmax_p, fmin_p, bincount_p, bincount_w_p, histc_p, search_p,
    _inverse_p, _logdet_p,
    _first_wins, _fmax_x, _fmin_x, _histc, _inverse_fwd, _logdet_fwd, _search)

_bool, _int, _float = builtins.bool, builtins.int, builtins.float


def _t(x: Any, op: str) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor(x, op=op)


def _dim(x: Tensor, dim: Any, op: str) -> int:
    return dim_index(dim, x.ndim, op, x.shape)


def _out(result: Any, out: Any, op: str) -> Any:
    """``result``, or with ``out`` given: ``result`` written into ``out`` (resized when it is
    empty, as torch does), which is returned."""
    if out is None:
        return result
    if isinstance(out, (tuple, list)):
        return type(result)(*(_out(r, o, op) for r, o in zip(result, out)))
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}: out= must be a Tensor, got {type(out).__name__}")
    if _ctx.grad_enabled and (out.requires_grad or getattr(result, "requires_grad", False)):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    result = _t(result, op)
    if out.shape != result.shape:
        if out._data.size:
            raise RuntimeError(f"{op}: out= has shape {list(out.shape)} but the result has shape "
                               f"{list(result.shape)}")
        out._data = np.zeros(result.shape, out.dtype)
    with no_grad():
        inplace.copy_(out, result)
    return out


def _float_of(x: Tensor) -> Tensor:
    """``x``, or cast to the default float dtype when it is an integer or bool tensor."""
    return x if x.dtype.kind == "f" else ops.astype(x, _tensor.get_default_dtype())


# ====================================================================== arithmetic


def _scaled(other: Any, alpha: Any) -> Any:
    return other if alpha == 1 else ops.mul_p(other, alpha)


def add(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``input + alpha * other``, as ``torch.add``.

    >>> import duograd as dg
    >>> dg.add(dg.tensor([1.0, 2.0]), 10, alpha=2).numpy()
    array([21., 22.])
    """
    return _out(ops.add_p(input, _scaled(other, alpha)), out, "add")


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``input - alpha * other``, as ``torch.sub`` (``subtract``).

    >>> import duograd as dg
    >>> dg.sub(dg.tensor([1.0, 2.0]), 1.0, alpha=0.5).numpy()
    array([0.5, 1.5])
    """
    _no_bool_sub(input, other, "sub")
    return _out(ops.sub_p(input, _scaled(other, alpha)), out, "sub")


subtract = sub


def _no_bool_sub(x: Any, y: Any, op: str) -> None:
    if all(isinstance(v, Tensor) and v.dtype == np.bool_ for v in (x, y)):
        raise RuntimeError(f"{op}: subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input``, as ``torch.rsub``.

    >>> import duograd as dg
    >>> dg.rsub(dg.tensor([1.0, 2.0]), 5.0).numpy()
    array([4., 3.])
    """
    _no_bool_sub(input, other, "rsub")
    return ops.sub_p(other, _scaled(input, alpha))


def mul(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input * other``, as ``torch.mul`` (``multiply``).

    >>> import duograd as dg
    >>> dg.mul(dg.tensor([1.0, 2.0]), 3).numpy()
    array([3., 6.])
    """
    return _out(ops.mul_p(input, other), out, "mul")


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Any = None) -> Tensor:  # noqa: A002
    """``input / other``, as ``torch.div``: true division (integers give the default float
    dtype), or rounded with ``rounding_mode="trunc"`` / ``"floor"`` (integers stay integers).

    >>> import duograd as dg
    >>> dg.div(dg.tensor([-7, 7]), 2, rounding_mode="trunc").numpy()
    array([-3,  3])
    """
    if rounding_mode is None:
        res = ops.div_p(input, other)
    elif rounding_mode == "floor":
        dt = _tensor.result_type(input, other)
        # floats: floor of the quotient, torch's zero gradient; integers: exact integer division
        res = ew.floor_divide(input, other) if dt.kind in "iub" else ew.floor_p(ops.div_p(input, other))
    elif rounding_mode == "trunc":
        x, y = _lift_all("div", (input, other))
        dt = _tensor.result_type(input, other)
        if dt.kind in "iub":
            if np.any(y._data == 0):
                raise RuntimeError("div: ZeroDivisionError (integer division by zero)")
            q = ew.trunc_p(ops.div_p(x, y))
            res = ops.astype(q, dt)
        else:
            res = ew.trunc_p(ops.div_p(x, y))
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           f"found '{rounding_mode}'")
    return _out(res, out, "div")


divide = div


def true_divide(dividend: Any, divisor: Any, *, out: Any = None) -> Tensor:
    """``dividend / divisor`` (always true division), as ``torch.true_divide``.

    >>> import duograd as dg
    >>> dg.true_divide(dg.tensor([1, 3]), 2).numpy()
    array([0.5, 1.5])
    """
    return _out(ops.div_p(dividend, divisor), out, "true_divide")


def neg(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``-input``, as ``torch.neg`` (``negative``); a bool tensor raises, as torch.

    >>> import duograd as dg
    >>> dg.neg(dg.tensor([1.0, -2.0])).numpy()
    array([-1.,  2.])
    """
    return _out(ops.neg_p(_t(input, "neg")), out, "neg")  # neg_p refuses a bool tensor


negative = neg


def positive(input: Any) -> Tensor:  # noqa: A002
    """``input`` itself, as ``torch.positive`` (a bool tensor raises).

    >>> import duograd as dg
    >>> dg.positive(dg.tensor([1.0])).numpy()
    array([1.])
    """
    x = _t(input, "positive")
    if x.dtype == np.bool_:
        raise RuntimeError("positive: The `+` operator, on a bool tensor is not supported.")
    return x


def square(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input * input``, as ``torch.square`` (a bool tensor gives int64).

    >>> import duograd as dg
    >>> dg.square(dg.tensor([-3.0, 2.0])).numpy()
    array([9., 4.])
    """
    x = _t(input, "square")
    if x.dtype == np.bool_:
        x = ops.astype(x, np.int64)
    return _out(ops.mul_p(x, x), out, "square")


def reciprocal(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``1 / input`` (integers give the default float dtype), as ``torch.reciprocal``.

    >>> import duograd as dg
    >>> dg.reciprocal(dg.tensor([2.0, 4.0])).numpy()
    array([0.5 , 0.25])
    """
    x = _float_of(_t(input, "reciprocal"))
    return _out(ops.div_p(1.0, x), out, "reciprocal")


def sgn(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The sign of each element, as ``torch.sgn`` (``sign`` for real tensors).

    >>> import duograd as dg
    >>> dg.sgn(dg.tensor([-2.0, 0.0, 3.0])).numpy()
    array([-1.,  0.,  1.])
    """
    return _out(ew.sign_p(_t(input, "sgn")), out, "sgn")


def signbit(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Whether the sign bit is set (``-0.0`` included): a bool tensor, as ``torch.signbit``.

    >>> import duograd as dg
    >>> dg.signbit(dg.tensor([-0.0, 1.0, -2.0])).numpy()
    array([ True, False,  True])
    """
    return _out(signbit_p(_t(input, "signbit")), out, "signbit")


def deg2rad(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Degrees to radians (integers give the default float dtype), as ``torch.deg2rad``.

    >>> import duograd as dg
    >>> round(float(dg.deg2rad(dg.tensor(180.0))), 6)
    3.141593
    """
    return _out(ops.mul_p(_float_of(_t(input, "deg2rad")), math.pi / 180.0), out, "deg2rad")


def rad2deg(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Radians to degrees, as ``torch.rad2deg``.

    >>> import duograd as dg
    >>> float(dg.rad2deg(dg.tensor(math.pi)))
    180.0
    """
    return _out(ops.mul_p(_float_of(_t(input, "rad2deg")), 180.0 / math.pi), out, "rad2deg")


def heaviside(input: Any, values: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive (no gradient:
    torch does not differentiate it either), as ``torch.heaviside``.

    >>> import duograd as dg
    >>> dg.heaviside(dg.tensor([-1.0, 0.0, 2.0]), dg.tensor(0.5)).numpy()
    array([0. , 0.5, 1. ])
    """
    x, v = _t(input, "heaviside"), _t(values, "heaviside")
    if x.dtype != v.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                           f"({x.dtype} and {v.dtype})")
    if x.requires_grad or v.requires_grad:
        return _out(heaviside_p(ops.detach_p(x), ops.detach_p(v)), out, "heaviside")
    return _out(heaviside_p(x, v), out, "heaviside")


def clamp_min(input: Any, min: Any) -> Tensor:  # noqa: A002
    """``input`` limited below by ``min``, as ``torch.clamp_min``.

    >>> import duograd as dg
    >>> dg.clamp_min(dg.tensor([-1.0, 2.0]), 0.0).numpy()
    array([0., 2.])
    """
    return ops.clip(_t(input, "clamp_min"), min, None)


def clamp_max(input: Any, max: Any) -> Tensor:  # noqa: A002
    """``input`` limited above by ``max``, as ``torch.clamp_max``.

    >>> import duograd as dg
    >>> dg.clamp_max(dg.tensor([-1.0, 2.0]), 0.0).numpy()
    array([-1.,  0.])
    """
    return ops.clip(_t(input, "clamp_max"), None, max)


def fmax(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The larger of the two, a NaN losing to a number, as ``torch.fmax``.

    >>> import duograd as dg
    >>> dg.fmax(dg.tensor([1.0, float("nan")]), dg.tensor([0.0, 2.0])).numpy()
    array([1., 2.])
    """
    return _out(fmax_p(input, other), out, "fmax")


def fmin(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The smaller of the two, a NaN losing to a number, as ``torch.fmin``.

    >>> import duograd as dg
    >>> dg.fmin(dg.tensor([1.0, float("nan")]), dg.tensor([0.0, 2.0])).numpy()
    array([0., 2.])
    """
    return _out(fmin_p(input, other), out, "fmin")


def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN), as
    ``torch.xlogy``.

    >>> import duograd as dg
    >>> dg.xlogy(dg.tensor([0.0, 2.0]), dg.tensor([0.0, 1.0])).numpy()
    array([0., 0.])
    """
    x, y = _lift_all("xlogy", (input, other))
    x, y = _float_of(x), _float_of(y)
    zero = ops.equal_p(x, 0.0)
    safe = ops.where_p(zero, 1.0, y)  # so the unused branch's log(0) sends no NaN back
    res = ops.where_p(zero, ops.where_p(ew.isnan_p(y), y, 0.0), x * ops.log_p(safe))
    return _out(res, out, "xlogy")


def logit(input: Any, eps: float | None = None, *, out: Any = None) -> Tensor:  # noqa: A002
    """``log(p / (1 - p))``, ``p`` clamped to [eps, 1 - eps] when ``eps`` is given, as
    ``torch.logit``.

    >>> import duograd as dg
    >>> dg.logit(dg.tensor([0.5, 0.75])).numpy()
    array([0.        , 1.09861229])
    """
    x = _float_of(_t(input, "logit"))
    if eps is not None:
        x = ops.clip(x, eps, 1.0 - eps)
    return _out(ops.log_p(x / (1.0 - x)), out, "logit")


def addcmul(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``input + value * tensor1 * tensor2``, as ``torch.addcmul``.

    >>> import duograd as dg
    >>> dg.addcmul(dg.ones(2), dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0]), value=0.5).numpy()
    array([2.5, 5. ])
    """
    return _out(ops.add_p(input, _scaled(ops.mul_p(tensor1, tensor2), value)), out, "addcmul")


def addcdiv(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``input + value * tensor1 / tensor2``, as ``torch.addcdiv`` (two integer tensors raise).

    >>> import duograd as dg
    >>> dg.addcdiv(dg.zeros(2), dg.tensor([1.0, 2.0]), dg.tensor([4.0, 4.0])).numpy()
    array([0.25, 0.5 ])
    """
    t1, t2 = _lift_all("addcdiv", (tensor1, tensor2))
    if t1.dtype.kind in "iub" and t2.dtype.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           "release addcdiv will perform a true division of tensor1 and tensor2.")
    return _out(ops.add_p(input, _scaled(ops.div_p(t1, t2), value)), out, "addcdiv")


def _beta_alpha(op: str, input: Any, prod: Tensor, beta: Any, alpha: Any) -> Tensor:
    inp = _t(input, op)
    try:
        np.broadcast_shapes(inp.shape, prod.shape)
    except ValueError:
        raise RuntimeError(f"{op}: input of shape {inp.shape} does not broadcast to the product's "
                           f"shape {prod.shape}") from None
    if np.broadcast_shapes(inp.shape, prod.shape) != prod.shape:
        raise RuntimeError(f"{op}: input of shape {inp.shape} does not broadcast to the product's "
                           f"shape {prod.shape}")
    scaled = _scaled(prod, alpha)
    # NOTE: beta = 0 ignores input (its nan and inf do not propagate), as torch.
    if beta == 0:
        return scaled
    return scaled + _scaled(inp, beta)


def addmv(input: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat @ vec)``, as ``torch.addmv``.

    >>> import duograd as dg
    >>> dg.addmv(dg.ones(2), dg.ones((2, 3)), dg.ones(3)).numpy()
    array([4., 4.])
    """
    return _out(_beta_alpha("addmv", input, linalg.mv(mat, vec), beta, alpha), out, "addmv")


def addr(input: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``beta * input + alpha * outer(vec1, vec2)``, as ``torch.addr``.

    >>> import duograd as dg
    >>> dg.addr(dg.zeros((2, 2)), dg.tensor([1.0, 2.0]), dg.tensor([1.0, 3.0])).numpy()
    array([[1., 3.],
           [2., 6.]])
    """
    v1, v2 = _lift_all("addr", (vec1, vec2))
    if v1.ndim != 1 or v2.ndim != 1:
        raise RuntimeError(f"addr: expected 1-D vectors, got shapes {v1.shape} and {v2.shape}")
    return _out(_beta_alpha("addr", input, linalg.outer(v1, v2), beta, alpha), out, "addr")


def addbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1, out: Any = None) -> Tensor:  # noqa: A002
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``, as ``torch.addbmm``.

    >>> import duograd as dg
    >>> dg.addbmm(dg.zeros((2, 2)), dg.ones((3, 2, 4)), dg.ones((3, 4, 2))).numpy()
    array([[12., 12.],
           [12., 12.]])
    """
    prod = ops.sum(linalg.bmm(batch1, batch2), 0)
    return _out(_beta_alpha("addbmm", input, prod, beta, alpha), out, "addbmm")


def t(input: Any) -> Tensor:  # noqa: A002
    """The transpose of a matrix (0-d and 1-D tensors are returned as they are), as
    ``torch.t``; more than 2 dims raises.

    >>> import duograd as dg
    >>> dg.t(dg.ones((2, 3))).shape
    (3, 2)
    """
    x = _t(input, "t")
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return ops.transpose(x, 0, -1) if x.ndim == 2 else ops.identity_p(x)


def cross(input: Any, other: Any, dim: int | None = None, *, out: Any = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (None: the first dim of size 3, as
    ``torch.cross``); the two broadcast against each other.

    >>> import duograd as dg
    >>> dg.cross(dg.tensor([1.0, 0.0, 0.0]), dg.tensor([0.0, 1.0, 0.0])).numpy()
    array([0., 0., 1.])
    """
    x, y = _lift_all("cross", (input, other))
    if x.ndim != y.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions "
                           f"(got {x.shape} and {y.shape})")
    try:
        shape = np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise RuntimeError(f"cross: shapes {x.shape} and {y.shape} do not broadcast") from None
    if dim is None:
        dims = [i for i, n in enumerate(shape) if n == 3]
        if not dims:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {x.shape}, {y.shape})")
        d = dims[0]
    else:
        d = dim_index(dim, len(shape), "cross", shape)
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{x.shape[d]} and {y.shape[d]}")
    x, y = ops.broadcast_to(x, shape), ops.broadcast_to(y, shape)

    def c(a: Tensor, i: int) -> Tensor:
        return narrow(a, d, i, 1)
    parts = [c(x, 1) * c(y, 2) - c(x, 2) * c(y, 1),
             c(x, 2) * c(y, 0) - c(x, 0) * c(y, 2),
             c(x, 0) * c(y, 1) - c(x, 1) * c(y, 0)]
    return _out(indexing.cat(parts, d), out, "cross")


def dist(input: Any, other: Any, p: float = 2) -> Tensor:  # noqa: A002
    """The ``p``-norm of ``input - other`` (broadcast), as ``torch.dist``.

    >>> import duograd as dg
    >>> float(dg.dist(dg.tensor([0.0, 0.0]), dg.tensor([3.0, 4.0])))
    5.0
    """
    return linalg.vector_norm(ops.sub_p(input, other), p)


def matmul(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The matrix product with NumPy's broadcasting rules, as ``torch.matmul``.

    >>> import duograd as dg
    >>> dg.matmul(input=dg.ones((2, 3)), other=dg.ones(3)).numpy()
    array([3., 3.])
    """
    x, y = _lift_all("matmul", (input, other))
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(f"matmul: both arguments to matmul need to be at least 1D, but they "
                           f"are {x.ndim}D and {y.ndim}D")
    return _out(ops.matmul_p(x, y), out, "matmul")


def ger(input: Any, vec2: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``outer(input, vec2)``, as torch's older name ``torch.ger``.

    >>> import duograd as dg
    >>> dg.ger(dg.tensor([1.0, 2.0]), dg.tensor([3.0])).numpy()
    array([[3.],
           [6.]])
    """
    return _out(linalg.outer(input, vec2), out, "ger")


def inner(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The sum over the last dims of ``input`` and ``other`` (a number scales), as
    ``torch.inner``.

    >>> import duograd as dg
    >>> dg.inner(dg.ones((2, 3)), dg.ones((4, 3))).shape
    (2, 4)
    """
    x, y = _lift_all("inner", (input, other))
    if x.ndim == 0 or y.ndim == 0:
        return _out(x * y, out, "inner")
    if x.shape[-1] != y.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(x.shape)} and {list(y.shape)}")
    xs = x.reshape(x.shape[:-1] + (1,) * (y.ndim - 1) + (x.shape[-1],))
    return _out(ops.sum(xs * y, -1), out, "inner")


def vdot(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The dot product of two 1-D tensors (real: ``dot``), as ``torch.vdot``.

    >>> import duograd as dg
    >>> float(dg.vdot(dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0])))
    11.0
    """
    return _out(linalg.dot(input, other), out, "vdot")


def kron(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The Kronecker product, as ``torch.kron``.

    >>> import duograd as dg
    >>> dg.kron(dg.eye(2), dg.ones((1, 2))).numpy()
    array([[1., 1., 0., 0.],
           [0., 0., 1., 1.]])
    """
    x, y = _lift_all("kron", (input, other))
    nd = builtins.max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    a = x.reshape(tuple(v for n in xs for v in (n, 1)))
    b = y.reshape(tuple(v for n in ys for v in (1, n)))
    return _out((a * b).reshape(tuple(m * n for m, n in zip(xs, ys))), out, "kron")


# ====================================================================== comparisons


def _cmp(prim: Primitive, name: str) -> Any:
    def cmp(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        return _out(prim(input, other), out, name)
    cmp.__name__ = cmp.__qualname__ = name
    cmp.__doc__ = (f"Elementwise ``{name}`` of ``input`` and ``other`` (broadcast): a bool tensor "
                   f"without history, as ``torch.{name}``.\n\n    >>> import duograd as dg\n"
                   f"    >>> dg.{name}(dg.tensor([1.0, 2.0]), 1.5).dtype\n    dtype('bool')\n    ")
    return cmp


eq = _cmp(ops.equal_p, "eq")
ne = _cmp(ops.not_equal_p, "ne")
lt = _cmp(ops.less_p, "lt")
le = _cmp(ops.less_equal_p, "le")
gt = _cmp(ops.greater_p, "gt")
ge = _cmp(ops.greater_equal_p, "ge")
not_equal = _cmp(ops.not_equal_p, "not_equal")
less = _cmp(ops.less_p, "less")
less_equal = _cmp(ops.less_equal_p, "less_equal")
greater = _cmp(ops.greater_p, "greater")
greater_equal = _cmp(ops.greater_equal_p, "greater_equal")


def equal(input: Any, other: Any) -> _bool:  # noqa: A002
    """True when both have the same shape and elements (a Python bool), as ``torch.equal``.

    >>> import duograd as dg
    >>> dg.equal(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.0]))
    True
    """
    x, y = _t(input, "equal"), _t(other, "equal")
    return x.shape == y.shape and _bool(np.array_equal(x._data, y._data))


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: _bool = False) -> _bool:
    """Whether ``|input - other| <= atol + rtol * |other|`` everywhere (a Python bool), as
    ``torch.allclose``.

    >>> import duograd as dg
    >>> dg.allclose(dg.tensor([1.0]), dg.tensor([1.0 + 1e-9]))
    True
    """
    x, y = _t(input, "allclose"), _t(other, "allclose")
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise RuntimeError(f"allclose: shapes {x.shape} and {y.shape} do not broadcast") from None
    if x.dtype != y.dtype:
        raise RuntimeError(f"Float did not match Double: allclose needs one dtype, got {x.dtype} "
                           f"and {y.dtype}")
    return _bool(np.allclose(x._data, y._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


# ====================================================================== shapes and views


def narrow(input: Any, dim: int, start: Any, length: int) -> Tensor:  # noqa: A002
    """``length`` elements of ``input`` along ``dim`` from ``start`` (negative counts from
    the end), as ``torch.narrow``.

    >>> import duograd as dg
    >>> dg.narrow(dg.arange(5), 0, 1, 3).numpy()
    array([1, 2, 3])
    """
    x = _t(input, "narrow")
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _dim(x, dim, "narrow")
    if isinstance(start, Tensor):
        start = _int(start.item())
    n = x.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"narrow: start ({start}) out of range for dimension {d} of size {n} "
                         f"(expected in [{-n}, {n}])")
    start = start % n if start < 0 else start
    if length < 0 or start + length > n:
        raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return ops.getitem_p(x, index=(slice(None),) * d + (slice(start, start + length),), basic=True)


def tile(input: Any, dims: Sequence[int]) -> Tensor:  # noqa: A002
    """``input`` repeated ``dims[i]`` times along dim i; fewer dims than the tensor has are
    read as leading ones, as ``torch.tile``.

    >>> import duograd as dg
    >>> dg.tile(dg.tensor([[1, 2]]), (2,)).numpy()
    array([[1, 2, 1, 2]])
    """
    x = _t(input, "tile")
    dims = tuple(_tensor._shape_of(tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)))
    dims = (1,) * (x.ndim - len(dims)) + dims
    return ops.repeat(x, dims)


def swapaxes(input: Any, axis0: int, axis1: int) -> Tensor:  # noqa: A002
    """``transpose(input, axis0, axis1)``, as ``torch.swapaxes``.

    >>> import duograd as dg
    >>> dg.swapaxes(dg.ones((2, 3)), 0, 1).shape
    (3, 2)
    """
    return ops.transpose(_t(input, "swapaxes"), axis0, axis1)


def swapdims(input: Any, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """``transpose(input, dim0, dim1)``, as ``torch.swapdims``.

    >>> import duograd as dg
    >>> dg.swapdims(dg.ones((2, 3)), 0, 1).shape
    (3, 2)
    """
    return ops.transpose(_t(input, "swapdims"), dim0, dim1)


def ravel(input: Any) -> Tensor:  # noqa: A002
    """The elements as a 1-D tensor, as ``torch.ravel``.

    >>> import duograd as dg
    >>> dg.ravel(dg.ones((2, 3))).shape
    (6,)
    """
    x = _t(input, "ravel")
    return ops.reshape_p(x, shape=(x.numel(),))


def sum_to_size(input: Tensor, *size: Any) -> Tensor:  # noqa: A002
    """``input`` summed down to ``size`` (which must broadcast to its shape), as
    ``Tensor.sum_to_size``.

    >>> import duograd as dg
    >>> dg.ones((2, 3)).sum_to_size(1, 3).numpy()
    array([[2., 2., 2.]])
    """
    x = _t(input, "sum_to_size")
    shape = _tensor._shape_of(size)
    lead = x.ndim - len(shape)
    if lead < 0 or any(n not in (1, m) for n, m in zip(shape, x.shape[lead:])):
        raise RuntimeError(f"sum_to_size: size {list(shape)} is not expandable to size {list(x.shape)}")
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    s = ops.sum_p(x, axis=axes, keepdims=True) if axes else x
    return ops.reshape_p(s, shape=shape) if s.shape != shape else ops.identity_p(s)


# ====================================================================== reductions


def count_nonzero(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    """The number of nonzero elements over ``dim`` (an int or a tuple; None: all), int64,
    as ``torch.count_nonzero``.

    >>> import duograd as dg
    >>> dg.count_nonzero(dg.tensor([[0, 1], [2, 3]]), dim=0).numpy()
    array([1, 2])
    """
    x = _t(input, "count_nonzero")
    nz = ops.astype(ops.not_equal_p(x, 0), np.int64)
    return ops.sum(nz, dim)


def nansum(input: Any, dim: Any = None, keepdim: _bool = False, *, dtype: Any = None,  # noqa: A002
           out: Any = None) -> Tensor:
    """The sum with NaNs read as zero (their gradient is zero), as ``torch.nansum``.

    >>> import duograd as dg
    >>> float(dg.nansum(dg.tensor([1.0, float("nan"), 2.0])))
    3.0
    """
    x = _t(input, "nansum")
    if dtype is not None:
        x = ops.astype(x, dtype)
    clean = ops.where_p(ew.isnan_p(x), 0.0, x) if x.dtype.kind == "f" else x
    return _out(ops.sum(clean, dim, keepdim), out, "nansum")


def nanmean(input: Any, dim: Any = None, keepdim: _bool = False, *, dtype: Any = None,  # noqa: A002
            out: Any = None) -> Tensor:
    """The mean over the elements that are not NaN, as ``torch.nanmean`` (floats only).

    >>> import duograd as dg
    >>> float(dg.nanmean(dg.tensor([1.0, float("nan"), 3.0])))
    2.0
    """
    x = _t(input, "nanmean")
    if x.dtype.kind != "f":  # torch checks the input's dtype, before any dtype= cast
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {x.dtype}")
    if dtype is not None:
        if np.dtype(dtype).kind != "f":
            raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either "
                               f"a floating point or complex dtype. Got: {np.dtype(dtype)}")
        x = ops.astype(x, dtype)
    keep = ew.logical_not_p(ew.isnan_p(x))
    n = ops.sum(ops.astype(keep, x.dtype), dim, keepdim)
    return _out(nansum(x, dim, keepdim) / n, out, "nanmean")


def aminmax(input: Any, *, dim: Any = None, keepdim: _bool = False, out: Any = None) -> Any:  # noqa: A002
    """``(min, max)`` over ``dim`` (None: all elements), the named tuple ``aminmax``, as
    ``torch.aminmax``.

    >>> import duograd as dg
    >>> dg.aminmax(dg.tensor([3.0, -1.0, 2.0]))
    aminmax(min=tensor(-1.), max=tensor(3.))
    """
    x = _t(input, "aminmax")
    if dim is None:
        if not x._data.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        lo, hi = ops.amin(x), ops.amax(x)
        if keepdim:
            lo, hi = (ops.reshape_p(v, shape=(1,) * x.ndim) for v in (lo, hi))
    else:
        d = _dim(x, dim, "aminmax")
        if x.ndim and not x.shape[d]:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        lo, hi = ops.amin(x, d, keepdim), ops.amax(x, d, keepdim)
    return _out(return_types.aminmax(lo, hi), out, "aminmax")


def _var_args(dim: Any, unbiased: Any, correction: Any) -> tuple[Any, Any]:
    if isinstance(dim, _bool):  # torch's var_mean(input, unbiased) overload
        return None, dim
    return dim, unbiased


def var_mean(input: Any, dim: Any = None, unbiased: Any = None, keepdim: _bool = False, *,  # noqa: A002
             correction: Any = None, out: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` (a plain tuple), with ``var``'s ``correction``, as
    ``torch.var_mean``.

    >>> import duograd as dg
    >>> v, m = dg.var_mean(dg.tensor([1.0, 3.0]))
    >>> float(v), float(m)
    (2.0, 2.0)
    """
    x = _t(input, "var_mean")
    ops._float_only("var_mean", x)
    dim, unbiased = _var_args(dim, unbiased, correction)
    res = (ops.var(x, dim, unbiased, keepdim, correction=correction), ops.mean(x, dim, keepdim))
    return _out(res, out, "var_mean")


def std_mean(input: Any, dim: Any = None, unbiased: Any = None, keepdim: _bool = False, *,  # noqa: A002
             correction: Any = None, out: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` (a plain tuple), as ``torch.std_mean``.

    >>> import duograd as dg
    >>> s, m = dg.std_mean(dg.tensor([1.0, 3.0]), correction=0)
    >>> float(s), float(m)
    (1.0, 2.0)
    """
    x = _t(input, "std_mean")
    ops._float_only("std_mean", x)
    dim, unbiased = _var_args(dim, unbiased, correction)
    res = (ops.std(x, dim, unbiased, keepdim, correction=correction), ops.mean(x, dim, keepdim))
    return _out(res, out, "std_mean")


def diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:  # noqa: A002
    """The ``n``-th forward difference along ``dim``, ``prepend``/``append`` joined first, as
    ``torch.diff``.

    >>> import duograd as dg
    >>> dg.diff(dg.tensor([1.0, 4.0, 9.0])).numpy()
    array([3., 5.])
    """
    x = _t(input, "diff")
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _dim(x, dim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        parts = [_t(p, "diff") for p in parts]
        parts = [ops.broadcast_to(p, x.shape[:d] + (1,) + x.shape[d + 1:]) if p.ndim == 0 else p
                 for p in parts]
        x = indexing.cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = narrow(x, d, 1, m - 1), narrow(x, d, 0, m - 1)
        x = ew.logical_xor_p(hi, lo) if x.dtype == np.bool_ else hi - lo
    return x


def _trapezoid_parts(y: Tensor, x: Any, dx: Any, d: int, op: str) -> Tensor:
    """Each interval's area along ``d``: (y[i] + y[i+1]) / 2 * width."""
    m = y.shape[d]
    if m == 0:
        return narrow(y, d, 0, 0)
    mids = (narrow(y, d, 1, m - 1) + narrow(y, d, 0, m - 1)) * 0.5
    if x is None:
        return mids * (1.0 if dx is None else dx)
    xs = _t(x, op)
    widths = diff(xs, dim=-1 if xs.ndim == 1 else d)
    if xs.ndim == 1:
        widths = widths.reshape(widths.shape + (1,) * (y.ndim - d - 1))
    return mids * widths


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: spacing ``dx`` (default 1) or sample points ``x``,
    as ``torch.trapezoid`` (``trapz``).

    >>> import duograd as dg
    >>> float(dg.trapezoid(dg.tensor([1.0, 2.0, 3.0])))
    4.0
    """
    yt = _t(y, "trapezoid")
    if x is not None and dx is not None:
        raise TypeError("trapezoid: give x or dx, not both")
    if isinstance(x, (int, _float)) and not isinstance(x, _bool):
        x, dx = None, x
    d = _dim(yt, dim, "trapezoid")
    return ops.sum(_trapezoid_parts(_float_of(yt), x, dx, d, "trapezoid"), d)


def trapz(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name, as ``torch.trapz``.

    >>> import duograd as dg
    >>> float(dg.trapz(dg.tensor([0.0, 1.0]), dx=2.0))
    1.0
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one fewer element), as
    ``torch.cumulative_trapezoid``.

    >>> import duograd as dg
    >>> dg.cumulative_trapezoid(dg.tensor([1.0, 2.0, 3.0])).numpy()
    array([1.5, 4. ])
    """
    yt = _t(y, "cumulative_trapezoid")
    if isinstance(x, (int, _float)) and not isinstance(x, _bool):
        x, dx = None, x
    d = _dim(yt, dim, "cumulative_trapezoid")
    return ops.cumsum(_trapezoid_parts(_float_of(yt), x, dx, d, "cumulative_trapezoid"), d)


# ====================================================================== counting and searching


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each value 0..max occurs in a 1-D non-negative integer tensor (summing
    ``weights`` instead when given), as ``torch.bincount``; no gradient, as torch.

    >>> import duograd as dg
    >>> dg.bincount(dg.tensor([0, 2, 2])).numpy()
    array([1, 0, 2])
    """
    x = _t(input, "bincount")
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f"bincount: not implemented for {x.dtype} (integer inputs only)")
    if x.ndim != 1:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape "
                           f"{x.shape}, {x.dtype})")
    _derive(indexing._not_negative, x,
            message="bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return bincount_p(x, minlength=_int(minlength))
    w = _t(weights, "bincount")
    if w.shape != x.shape:
        raise RuntimeError(f"weights should be 1-d and have the same length as input (got "
                           f"{w.shape} for input {x.shape})")
    w = ops.detach_p(w if w.dtype.kind == "f" else ops.astype(w, np.float64))
    return bincount_w_p(ops.astype(x, w.dtype), w, minlength=_int(minlength))


def histc(input: Any, bins: int = 100, min: float = 0, max: float = 0, *, out: Any = None) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal bins over [min, max] (both 0: the data's range),
    elements outside ignored, as ``torch.histc`` (floats only).

    >>> import duograd as dg
    >>> dg.histc(dg.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).numpy()
    array([0., 2., 1., 0.])
    """
    x = _t(input, "histc")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"histc: \"histogram_cpu\" not implemented for '{x.dtype}'")
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
    if max < min:
        raise RuntimeError("max must be larger than min")
    return _out(histc_p(ops.detach_p(x), bins=_int(bins), lo=_float(min), hi=_float(max)), out, "histc")


def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: _bool = False,  # noqa: A002
                 right: _bool = False, side: str | None = None, out: Any = None,
                 sorter: Any = None) -> Tensor:
    """Where each element of ``input`` would go in ``sorted_sequence`` (its last dim) to keep
    it sorted, as ``torch.searchsorted``; int64 (int32 with ``out_int32``), no gradient.

    >>> import duograd as dg
    >>> dg.searchsorted(dg.tensor([1.0, 3.0, 5.0]), dg.tensor([3.0, 6.0])).numpy()
    array([1, 3])
    """
    s = _t(sorted_sequence, "searchsorted")
    v = _t(input, "searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                               "side of left while right was True")
        right = side == "right"
    if sorter is not None:
        s = indexing.take_along_dim(s, sorter, -1)
    if s.ndim > 1 and (v.ndim != s.ndim or v.shape[:-1] != s.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor must "
                           f"match, but we got boundaries tensor {list(s.shape)} and input value "
                           f"tensor {list(v.shape)}")
    if s.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor must "
                           "match, but we got boundaries tensor [] and input value tensor")
    res = search_p(ops.detach_p(s), ops.detach_p(v), right=_bool(right),
                   dtype=np.dtype(np.int32 if out_int32 else np.int64))
    return _out(res, out, "searchsorted")


def bucketize(input: Any, boundaries: Any, *, out_int32: _bool = False, right: _bool = False,  # noqa: A002
              out: Any = None) -> Tensor:
    """The bucket of each element of ``input`` among the 1-D sorted ``boundaries``, as
    ``torch.bucketize`` (``right``: ``boundaries[i-1] <= x < boundaries[i]``).

    >>> import duograd as dg
    >>> dg.bucketize(dg.tensor([1.0, 4.0]), dg.tensor([1.0, 3.0, 5.0])).numpy()
    array([0, 2])
    """
    b = _t(boundaries, "bucketize")
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    v = _t(input, "bucketize")
    res = search_p(ops.detach_p(b), ops.detach_p(v), right=_bool(right),
                   dtype=np.dtype(np.int32 if out_int32 else np.int64))
    return _out(res, out, "bucketize")


# ====================================================================== indexing


def index_fill(input: Any, dim: int, index: Any, value: Any) -> Tensor:  # noqa: A002
    """``input`` with ``value`` (a number or a 0-d tensor) at ``index`` along ``dim``, as
    ``torch.index_fill``.

    >>> import duograd as dg
    >>> dg.index_fill(dg.zeros(3), 0, dg.tensor([0, 2]), 1.0).numpy()
    array([1., 0., 1.])
    """
    x = _t(input, "index_fill")
    d = _dim(x, dim, "index_fill")
    idx = indexing.as_index(index, "index_fill")
    if idx.ndim > 1:
        raise IndexError(f"index_fill_(): Index is supposed to be a vector, got shape {idx.shape}")
    n = x.shape[d] if x.ndim else 1
    indexing._check_range(idx, n, "index_fill", d, IndexError)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                           f"with {value.ndim} dimension(s).")
    # where the index hits, found by a primitive (a dg.compile replay reads the index again)
    flat = ops.reshape_p(idx, shape=(idx.numel(),))
    hit = hit_p(flat, axis=0, shape=(n,), dtype=np.dtype(np.float64))
    mask = ops.reshape_p(hit, shape=(n,) + (1,) * (x.ndim - d - 1) if x.ndim else ())
    return indexing.masked_fill(x, mask, value)


def index_copy(input: Any, dim: int, index: Any, source: Any) -> Tensor:  # noqa: A002
    """``input`` with the slices of ``source`` written at ``index`` along ``dim``, as
    ``torch.index_copy`` (differentiable in both).

    >>> import duograd as dg
    >>> dg.index_copy(dg.zeros(3), 0, dg.tensor([2, 0]), dg.tensor([5.0, 7.0])).numpy()
    array([7., 0., 5.])
    """
    x = _t(input, "index_copy")
    d = _dim(x, dim, "index_copy")
    idx = indexing.as_index(index, "index_copy")
    src = _lift_all("index_copy", (x, source))[1]
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if x.ndim == 0:
        return ops.identity_p(ops.broadcast_to(src, ()) if src.ndim == 0 else ops.reshape_p(src, shape=()))
    if src.ndim == x.ndim and src.shape[d] != idx.numel():
        raise IndexError(f"index_copy_(): Number of indices ({idx.numel()}) should be equal to "
                         f"source.size(dim) ({src.shape[d]})")
    if src.ndim != x.ndim or \
            src.shape[:d] + src.shape[d + 1:] != x.shape[:d] + x.shape[d + 1:]:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes "
                           f"(source {src.shape}, destination {x.shape}, index {idx.shape}, dim {d})")
    indexing._check_range(idx, x.shape[d], "index_copy", d, IndexError)
    return inplace.setitem_p(x, src, index=(slice(None),) * d + (idx._data.reshape(-1),), basic=False)


def take(input: Any, index: Any) -> Tensor:  # noqa: A002
    """The elements of ``input`` read as 1-D at ``index`` (any shape), as ``torch.take``.

    >>> import duograd as dg
    >>> dg.take(dg.tensor([[1.0, 2.0], [3.0, 4.0]]), dg.tensor([3, 0])).numpy()
    array([4., 1.])
    """
    x = _t(input, "take")
    idx = indexing.as_index(index, "take")
    n = x.numel()
    if idx._data.size and (idx._data.max() >= n or idx._data.min() < -n):
        raise IndexError(f"take: index out of range in self (size {n})")
    flat = ops.reshape_p(x, shape=(n,))
    return ops.reshape_p(gather_p(flat, _wrapped_flat_index(idx, n), axis=0), shape=idx.shape)


def _wrapped_flat_index(idx: Tensor, n: int) -> Tensor:
    """``idx`` as 1-D, its negative entries counted from the end of ``n``, by primitives (so
    that a dg.compile replay reads the index again instead of freezing it)."""
    i = ops.reshape_p(idx, shape=(idx.numel(),))
    return ops.where_p(ops.less_p(i, 0), i + n, i)


def put(input: Any, index: Any, source: Any, accumulate: _bool = False) -> Tensor:  # noqa: A002
    """``input`` (read as 1-D) with ``source`` written at ``index`` (added with
    ``accumulate``), as ``torch.put``.

    >>> import duograd as dg
    >>> dg.put(dg.zeros(3), dg.tensor([0, 0]), dg.tensor([1.0, 2.0]), accumulate=True).numpy()
    array([3., 0., 0.])
    """
    x = _t(input, "put")
    idx = indexing.as_index(index, "put")
    src = _lift_all("put", (x, source))[1]
    n = x.numel()
    if idx.numel() != src.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, "
                           f"but got source.numel() = {src.numel()}, index.numel() = {idx.numel()}")
    if idx._data.size and (idx._data.max() >= n or idx._data.min() < -n):
        raise IndexError(f"put_(): index out of range in self (size {n})")
    where = _wrapped_flat_index(idx, n)
    flat = ops.reshape_p(x, shape=(n,))
    s = ops.reshape_p(src, shape=(src.numel(),))
    if accumulate:
        res = flat + indexing.scatter_add_along_p(s, where, axis=0, shape=(n,))
    else:  # (the index array is the primitive's result: a dg.compile replay reads it again)
        res = inplace.setitem_p(flat, s, index=(where._data,), basic=False)
    return ops.reshape_p(res, shape=x.shape)


def select(input: Any, dim: int, index: int) -> Tensor:  # noqa: A002
    """The slice of ``input`` at ``index`` along ``dim`` (that dim removed), as ``torch.select``.

    >>> import duograd as dg
    >>> dg.select(dg.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, -1).numpy()
    array([2., 4.])
    """
    x = _t(input, "select")
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(x, dim, "select")
    n = x.shape[d]
    if isinstance(index, Tensor):
        index = _int(index.item())
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x.shape)} at "
                         f"dimension {d}")
    return ops.getitem_p(x, index=(slice(None),) * d + (_int(index) % n,), basic=True)


def argwhere(input: Any) -> Tensor:  # noqa: A002
    """The (n, ndim) int64 coordinates of the nonzero elements, as ``torch.argwhere``.

    >>> import duograd as dg
    >>> dg.argwhere(dg.tensor([0.0, 3.0, 1.0])).numpy()
    array([[1],
           [2]])
    """
    return indexing.nonzero(_t(input, "argwhere"))


def nan_to_num(input: Any, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None, *, out: Any = None) -> Tensor:
    """``input`` with NaN, +inf and -inf replaced (by 0 and the dtype's largest and smallest
    finite values unless given), as ``torch.nan_to_num``; the gradient passes where the
    value is kept.

    >>> import duograd as dg
    >>> dg.nan_to_num(dg.tensor([float("nan"), 1.0]), nan=-1.0).numpy()
    array([-1.,  1.])
    """
    x = _t(input, "nan_to_num")
    if x.dtype.kind != "f":
        return _out(ops.identity_p(x), out, "nan_to_num")
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    y = ops.where_p(ew.isnan_p(x), np.asarray(nan, x.dtype), x)
    y = ops.where_p(ops.equal_p(x, np.inf), np.asarray(hi, x.dtype), y)
    y = ops.where_p(ops.equal_p(x, -np.inf), np.asarray(lo, x.dtype), y)
    return _out(y, out, "nan_to_num")


# ====================================================================== log-determinant


def logdet(input: Any) -> Tensor:  # noqa: A002
    """``log(det(A))`` of a square matrix or a batch of them (nan where the determinant is
    negative, -inf where it is 0), as ``torch.logdet``; its gradient is ``inv(A)^T``.

    >>> import duograd as dg
    >>> round(float(dg.logdet(dg.tensor([[2.0, 0.0], [0.0, 3.0]]))), 6)
    1.791759
    """
    a = _t(input, "logdet")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.det: A must be batches of square matrices, but they are "
                           f"{a.shape[-2] if a.ndim > 1 else a.ndim} by {a.shape[-1] if a.ndim else 0} matrices")
    if a.dtype.kind != "f":
        raise RuntimeError(f"linalg.det: Expected a floating point or complex tensor as input. Got {a.dtype}")
    return _logdet_p(a)


# ====================================================================== tests and creation


def is_tensor(obj: Any) -> _bool:
    """Whether ``obj`` is a duograd Tensor, as ``torch.is_tensor``.

    >>> import duograd as dg
    >>> dg.is_tensor(dg.ones(1)), dg.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> _bool:  # noqa: A002
    """Whether ``input``'s dtype is a floating dtype, as ``torch.is_floating_point``.

    >>> import duograd as dg
    >>> dg.is_floating_point(dg.ones(1)), dg.is_floating_point(dg.tensor([1]))
    (True, False)
    """
    return _t(input, "is_floating_point").dtype.kind == "f"


def is_complex(input: Tensor) -> _bool:  # noqa: A002
    """Whether ``input``'s dtype is complex (never, here), as ``torch.is_complex``.

    >>> import duograd as dg
    >>> dg.is_complex(dg.ones(1))
    False
    """
    return _t(input, "is_complex").dtype.kind == "c"


def is_nonzero(input: Tensor) -> _bool:  # noqa: A002
    """The truth of a one-element tensor, as ``torch.is_nonzero``.

    >>> import duograd as dg
    >>> dg.is_nonzero(dg.tensor([1.0]))
    True
    """
    x = _t(input, "is_nonzero")
    if x.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                           if x.numel() else "Boolean value of Tensor with no values is ambiguous")
    if _ctx.on_read:  # a Python bool of the value: a dg.compile recording warns it is frozen
        _ctx.read(x, "is_nonzero()")
    return _bool(x._data.reshape(()))


def numel(input: Tensor) -> _int:  # noqa: A002
    """The number of elements, as ``torch.numel``.

    >>> import duograd as dg
    >>> dg.numel(dg.ones((2, 3)))
    6
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input._data.size


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002
    """A differentiable copy in new memory, as ``torch.clone``.

    >>> import duograd as dg
    >>> a = dg.ones(2)
    >>> dg.clone(a).numpy() is a.numpy()
    False
    """
    return ops.clone_p(_t(input, "clone"))


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """The same values (shared), with no history, as ``torch.detach``.

    >>> import duograd as dg
    >>> dg.detach(dg.ones(2, requires_grad=True)).requires_grad
    False
    """
    return ops.detach_p(_t(input, "detach"))


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a Tensor, sharing memory where it can (a Tensor of that dtype is itself, a
    NumPy array is shared), as ``torch.as_tensor``.

    >>> import duograd as dg
    >>> import numpy as np
    >>> a = np.zeros(2)
    >>> dg.as_tensor(a).numpy() is a
    True
    """
    _tensor._check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or np.dtype(_tensor._dtype_of(dtype, "as_tensor")) == data.dtype) \
            and data.dtype.kind in "biuf":
        return _tensor.from_numpy(data)
    return _tensor.tensor(data, dtype=dtype)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: _bool | None = None,
            requires_grad: _bool = False) -> Tensor:
    """``obj`` as a Tensor, as ``torch.asarray``: shared unless ``copy`` (or a dtype change)
    needs new memory; ``copy=False`` where a copy is needed raises.

    >>> import duograd as dg
    >>> dg.asarray([1, 2]).dtype
    dtype('int64')
    """
    if copy:
        res = _tensor.tensor(obj._data if isinstance(obj, Tensor) else obj, dtype=dtype, device=device)
    else:
        res = as_tensor(obj, dtype, device)
        if copy is False and (not isinstance(obj, (Tensor, np.ndarray)) or
                              np.shares_memory(res._data, obj._data if isinstance(obj, Tensor) else obj) is False):
            raise ValueError("asarray: can't alias the object, a copy is needed (copy=False given)")
    if requires_grad:
        res.requires_grad_(True)
    return res


# ====================================================================== Tensor-only methods


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: _bool = False, layout: Any = None, pin_memory: _bool = False) -> Tensor:
    """``data`` as a new leaf with this tensor's dtype (unless ``dtype``), as
    ``Tensor.new_tensor``.

    >>> import duograd as dg
    >>> dg.ones(1, dtype=dg.float32).new_tensor([1, 2]).dtype
    dtype('float32')
    """
    src = data._data if isinstance(data, Tensor) else data
    return _tensor.tensor(src, dtype=self.dtype if dtype is None else dtype, device=device,
                          requires_grad=requires_grad)


def _new(fill: Any, op: str) -> Any:
    def new(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
            requires_grad: _bool = False, layout: Any = None, pin_memory: _bool = False) -> Tensor:
        shape = _tensor._shape_of(size)
        if any(n < 0 for n in shape):
            raise RuntimeError(f"{op}: Trying to create tensor with negative dimension: {list(shape)}")
        dt = self.dtype if dtype is None else _tensor._dtype_of(dtype, op)
        return _tensor._made(np.full(shape, fill, dt), requires_grad, device, op)
    new.__name__ = new.__qualname__ = op
    return new


new_zeros = _new(0, "new_zeros")
new_ones = _new(1, "new_ones")
new_empty = _new(0, "new_empty")


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: _bool = False, layout: Any = None, pin_memory: _bool = False) -> Tensor:
    """A new leaf of ``size`` filled with ``fill_value``, this tensor's dtype unless ``dtype``,
    as ``Tensor.new_full``.

    >>> import duograd as dg
    >>> dg.ones(1).new_full((2,), 3).numpy()
    array([3., 3.])
    """
    shape = _tensor._shape_of((size,))
    dt = self.dtype if dtype is None else _tensor._dtype_of(dtype, "new_full")
    return _tensor._made(np.full(shape, fill_value, dt), requires_grad, device, "new_full")


def stride(self: Tensor, dim: Any = None) -> Any:
    """The step in elements between neighbours along each dim (a tuple), or along ``dim``, as
    ``Tensor.stride``.

    >>> import duograd as dg
    >>> dg.ones((2, 3)).stride(), dg.ones((2, 3)).T.stride()
    ((3, 1), (1, 3))
    """
    arr = self._data
    st = tuple(s // arr.itemsize if n > 1 else _contiguous_stride(arr.shape, i)
               for i, (s, n) in enumerate(zip(arr.strides, arr.shape)))
    if dim is None:
        return st
    if not arr.ndim:
        raise IndexError(f"stride: dimension specified as {dim} but tensor has no dimensions")
    return st[_dim(self, dim, "stride")]


def _contiguous_stride(shape: tuple[int, ...], i: int) -> int:
    # torch reports the contiguous stride for a dim of size 0 or 1 (NumPy may report any)
    return builtins.max(math.prod(builtins.max(n, 1) for n in shape[i + 1:]), 1)


def storage_offset(self: Tensor) -> _int:
    """Where this tensor's first element sits in the memory it shares, in elements, as
    ``Tensor.storage_offset``.

    >>> import duograd as dg
    >>> dg.arange(6)[2:].storage_offset()
    2
    """
    arr = self._data
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is arr or not arr.size:
        return 0
    return (arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // arr.itemsize


def is_contiguous(self: Tensor, memory_format: Any = None) -> _bool:
    """Whether the elements are laid out row-major without gaps, as ``Tensor.is_contiguous``.

    >>> import duograd as dg
    >>> dg.ones((2, 3)).is_contiguous(), dg.ones((2, 3)).T.is_contiguous()
    (True, False)
    """
    arr = self._data
    if arr.size <= 1:
        return True
    return stride(self) == tuple(_contiguous_stride(arr.shape, i) for i in range(arr.ndim)) \
        or _bool(arr.flags.c_contiguous)


def is_signed(self: Tensor) -> _bool:
    """Whether the dtype is signed (floats and signed integers), as ``Tensor.is_signed``.

    >>> import duograd as dg
    >>> dg.ones(1).is_signed(), dg.tensor([True]).is_signed()
    (True, False)
    """
    return self.dtype.kind in "if"


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``self`` cast to ``other``'s dtype (itself when it has it), as ``Tensor.type_as``.

    >>> import duograd as dg
    >>> dg.tensor([1, 2]).type_as(dg.ones(1)).dtype
    dtype('float64')
    """
    return self if self.dtype == other.dtype else ops.astype(self, other.dtype)


def detach_(self: Tensor) -> Tensor:
    """``self`` cut from its history in place (a leaf that does not require grad), as
    ``Tensor.detach_``.

    >>> import duograd as dg
    >>> y = dg.ones(2, requires_grad=True) * 2
    >>> y.detach_().is_leaf, y.requires_grad
    (True, False)
    """
    fn = self.grad_fn
    if self._data.base is not None and fn is not None and fn.inputs and any(
            i._data is self._data.base for i in fn.inputs):
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    self._node = None
    self._tangent = None
    return self


__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "neg",
    "negative", "positive", "square", "reciprocal", "sgn", "signbit", "deg2rad", "rad2deg",
    "heaviside", "clamp_min", "clamp_max", "fmax", "fmin", "xlogy", "logit", "addcmul", "addcdiv",
    "addmv", "addr", "addbmm", "t", "cross", "dist", "matmul", "ger", "inner", "vdot", "kron",
    "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "equal", "allclose", "narrow", "tile", "swapaxes", "swapdims", "ravel",
    "count_nonzero", "nansum", "nanmean", "aminmax", "var_mean", "std_mean", "diff", "trapezoid",
    "trapz", "cumulative_trapezoid", "bincount", "histc", "searchsorted", "bucketize",
    "index_fill", "index_copy", "take", "put", "select", "argwhere", "nan_to_num", "logdet", "is_tensor", "is_floating_point", "is_complex",
    "is_nonzero", "numel", "clone", "detach", "as_tensor", "asarray",
]
