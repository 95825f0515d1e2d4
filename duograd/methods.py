"""The Tensor's operators and methods, bound onto the class.

Each is one line that calls a function or primitive of ``ops.py`` (or ``autograd``).
They live here, not in ``_tensor.py``, so that the class can be defined before the
primitives that make Tensors (JAX binds its array methods the same way); the class
body below is copied onto ``Tensor`` when duograd is imported.

Comparisons are elementwise and give bool Tensors without history, as in NumPy and
PyTorch; ``==`` included, so Tensors hash by identity (``Tensor.__hash__``).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from . import autograd, ops
from .shapes import DimError
from ._tensor import Size, Tensor

_OPERANDS = (Tensor, int, float, list, tuple, np.ndarray, np.generic)


def _comparable(other: Any) -> bool:
    """Whether ``==`` with ``other`` is elementwise; anything else (None, a string) falls
    back to identity, as Python does when both sides decline."""
    return isinstance(other, _OPERANDS)


class _Methods:
    # ------------------------------------------------------------ arithmetic
    def __add__(self, other): return ops.add_p(self, other)
    def __radd__(self, other): return ops.add_p(other, self)
    def __sub__(self, other): return ops.sub_p(self, other)
    def __rsub__(self, other): return ops.sub_p(other, self)
    def __mul__(self, other): return ops.mul_p(self, other)
    def __rmul__(self, other): return ops.mul_p(other, self)
    def __truediv__(self, other): return ops.div_p(self, other)
    def __rtruediv__(self, other): return ops.div_p(other, self)
    def __pow__(self, other): return ops.pow_p(self, other)
    def __rpow__(self, other): return ops.pow_p(other, self)
    def __matmul__(self, other): return ops.matmul_p(self, other)
    def __rmatmul__(self, other): return ops.matmul_p(other, self)
    def __neg__(self): return ops.neg_p(self)
    def __abs__(self): return ops.abs_p(self)
    def abs(self) -> Tensor: return ops.abs_p(self)

    # ------------------------------------------------------------ comparisons
    def __lt__(self, other): return ops.less_p(self, other)
    def __le__(self, other): return ops.less_equal_p(self, other)
    def __gt__(self, other): return ops.greater_p(self, other)
    def __ge__(self, other): return ops.greater_equal_p(self, other)

    def __eq__(self, other):
        return ops.equal_p(self, other) if _comparable(other) else NotImplemented

    def __ne__(self, other):
        return ops.not_equal_p(self, other) if _comparable(other) else NotImplemented

    def argmax(self, dim=None, keepdim=False, **kw) -> Tensor: return ops.argmax(self, dim, keepdim, **kw)
    def argmin(self, dim=None, keepdim=False, **kw) -> Tensor: return ops.argmin(self, dim, keepdim, **kw)

    # ------------------------------------------------------------ elementwise
    def exp(self) -> Tensor: return ops.exp_p(self)
    def log(self) -> Tensor: return ops.log_p(self)
    def sqrt(self) -> Tensor: return ops.sqrt_p(self)
    def tanh(self) -> Tensor: return ops.tanh_p(self)
    def sigmoid(self) -> Tensor: return ops.sigmoid_p(self)
    def softplus(self) -> Tensor: return ops.softplus_p(self)
    def relu(self) -> Tensor: return ops.relu_p(self)
    def sin(self) -> Tensor: return ops.sin_p(self)
    def cos(self) -> Tensor: return ops.cos_p(self)
    def pow(self, exponent) -> Tensor: return ops.pow_p(self, exponent)
    def clamp(self, min=None, max=None) -> Tensor: return ops.clip(self, min, max)  # noqa: A002
    clip = clamp

    # ------------------------------------------------------------ reductions
    # (torch's dim and keepdim; NumPy's axis and keepdims accepted as keywords)
    def sum(self, dim=None, keepdim=False, **kw) -> Tensor: return ops.sum(self, dim, keepdim, **kw)
    def mean(self, dim=None, keepdim=False, **kw) -> Tensor: return ops.mean(self, dim, keepdim, **kw)
    def max(self, dim=None, keepdim=False, **kw): return ops.max(self, dim, keepdim, **kw)
    def min(self, dim=None, keepdim=False, **kw): return ops.min(self, dim, keepdim, **kw)
    def amax(self, dim=None, keepdim=False, **kw) -> Tensor: return ops.amax(self, dim, keepdim, **kw)
    def amin(self, dim=None, keepdim=False, **kw) -> Tensor: return ops.amin(self, dim, keepdim, **kw)
    def var(self, dim=None, unbiased=None, keepdim=False, **kw) -> Tensor:
        return ops.var(self, dim, unbiased, keepdim, **kw)
    def std(self, dim=None, unbiased=None, keepdim=False, **kw) -> Tensor:
        return ops.std(self, dim, unbiased, keepdim, **kw)
    def logsumexp(self, dim=None, keepdim=False, **kw) -> Tensor:
        return ops.logsumexp(self, dim, keepdim, **kw)
    def cumsum(self, dim=None, **kw) -> Tensor: return ops.cumsum(self, dim, **kw)
    def softmax(self, dim=None, **kw) -> Tensor: return ops.softmax(self, dim, **kw)
    def log_softmax(self, dim=None, **kw) -> Tensor: return ops.log_softmax(self, dim, **kw)

    # ------------------------------------------------------------ shape
    def size(self, dim=None):
        """The shape (a ``dg.Size``, a tuple), or the size of one dim, as ``torch.Tensor.size``."""
        if dim is None:
            return Size(self._data.shape)
        if not self._data.ndim:
            raise DimError(f"size: dim {dim} given but the tensor has no dims (a 0-d tensor)")
        return self._data.shape[ops._one_axis(self, dim, "size")]
    def numel(self) -> int: return self._data.size
    def dim(self) -> int: return self._data.ndim
    def reshape(self, *shape) -> Tensor: return ops.reshape(self, *shape)
    def view(self, *shape) -> Tensor: return ops.reshape(self, *shape)
    def transpose(self, dim0, dim1) -> Tensor: return ops.transpose(self, dim0, dim1)
    def permute(self, *dims) -> Tensor: return ops.permute(self, *dims)
    @property
    def T(self) -> Tensor: return ops.reverse_dims(self)
    @property
    def mT(self) -> Tensor: return ops.matrix_transpose(self)
    def expand(self, *sizes) -> Tensor: return ops.expand(self, *sizes)
    def repeat(self, *sizes) -> Tensor: return ops.repeat(self, *sizes)
    def broadcast_to(self, shape: Iterable[int]) -> Tensor: return ops.broadcast_to(self, shape)
    def squeeze(self, dim=None, **kw) -> Tensor: return ops.squeeze(self, dim, **kw)
    def unsqueeze(self, dim=None, **kw) -> Tensor: return ops.unsqueeze(self, dim, **kw)
    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return ops.flatten(self, start_dim, end_dim)
    def clone(self) -> Tensor: return ops.clone(self)
    def contiguous(self) -> Tensor: return self  # NumPy arrays need no copy for any op here
    def __getitem__(self, index) -> Tensor: return ops.getitem(self, index)

    # ------------------------------------------------------------ casts and the graph
    def astype(self, dtype: Any) -> Tensor:
        """A differentiable cast (the gradient is cast back)."""
        return ops.astype(self, dtype)

    def float(self) -> Tensor:
        """A differentiable cast to float32."""
        return ops.astype(self, np.float32)

    def double(self) -> Tensor:
        """A differentiable cast to float64."""
        return ops.astype(self, np.float64)

    def detach(self) -> Tensor:
        """The same values (shared) with no history and no tangents."""
        return ops.detach_p(self)

    def backward(self, gradient: Any = None, retain_graph: bool = False,
                 create_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad."""
        autograd.backward(self, gradient, retain_graph, create_graph)

    # ------------------------------------------------------------ NumPy's functions
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = _UFUNCS.get(ufunc) if method == "__call__" and not kwargs else None
        if fn is None:
            how = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
            extra = f" with {', '.join(kwargs)}" if kwargs else ""
            raise TypeError(f"{how}{extra} has no duograd counterpart for Tensors; use the "
                            "Tensor's methods or .numpy() for a plain array")
        return fn(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        fn = _FUNCTIONS.get(func)
        if fn is None:
            raise TypeError(f"{func.__module__}.{func.__name__} has no duograd counterpart for Tensors; use "
                            ".numpy() for a plain array")
        return fn(*args, **kwargs)


# NumPy's ufuncs and functions that have a duograd counterpart: np.exp(t) is t.exp().
_UFUNCS = {
    np.add: ops.add_p, np.subtract: ops.sub_p, np.multiply: ops.mul_p, np.divide: ops.div_p,
    np.power: ops.pow_p, np.negative: ops.neg_p, np.matmul: ops.matmul_p, np.exp: ops.exp_p,
    np.log: ops.log_p, np.sqrt: ops.sqrt_p, np.tanh: ops.tanh_p, np.sin: ops.sin_p,
    np.cos: ops.cos_p, np.absolute: ops.abs_p, np.maximum: ops.maximum_p, np.minimum: ops.minimum_p,
    np.sign: ops.sign_p, np.greater: ops.greater_p, np.greater_equal: ops.greater_equal_p,
    np.less: ops.less_p, np.less_equal: ops.less_equal_p, np.equal: ops.equal_p,
    np.not_equal: ops.not_equal_p,
}
# NumPy's own functions keep NumPy's meaning where torch's differs (np.transpose(t, axes),
# np.var with ddof=0, np.squeeze raising for a non-1 axis, np.clip's a_min/a_max).
_FUNCTIONS = {
    np.sum: ops.sum, np.mean: ops.mean, np.var: ops._np_var, np.std: ops._np_std,
    np.max: ops.amax, np.amax: ops.amax, np.min: ops.amin, np.amin: ops.amin,
    np.argmax: ops.argmax, np.argmin: ops.argmin,
    np.cumsum: ops.cumsum, np.reshape: ops._np_reshape, np.transpose: ops._np_transpose,
    np.squeeze: ops._np_squeeze, np.expand_dims: ops.unsqueeze, np.broadcast_to: ops.broadcast_to,
    np.concatenate: ops.concatenate, np.stack: ops.stack, np.where: ops.where,
    np.clip: ops._np_clip, np.dot: ops.matmul_p,
}

_CLASS_ONLY = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__",
               "__firstlineno__", "__static_attributes__"}
for _name, _fn in vars(_Methods).items():
    if _name not in _CLASS_ONLY:
        setattr(Tensor, _name, _fn)
