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

from . import autograd, inplace, ops
from ._tensor import Tensor

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

    def argmax(self, axis=None, *, dim=None) -> Tensor: return ops.argmax(self, axis, dim=dim)
    def argmin(self, axis=None, *, dim=None) -> Tensor: return ops.argmin(self, axis, dim=dim)

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
    def clip(self, lo: float | None = None, hi: float | None = None) -> Tensor:
        return ops.clip(self, lo, hi)

    # ------------------------------------------------------------ reductions
    # (dim and keepdim are PyTorch's names for axis and keepdims)
    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        return ops.sum(self, axis, keepdims, dim=dim, keepdim=keepdim)
    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        return ops.mean(self, axis, keepdims, dim=dim, keepdim=keepdim)
    def max(self, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        return ops.amax(self, axis, keepdims, dim=dim, keepdim=keepdim)
    def min(self, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        return ops.amin(self, axis, keepdims, dim=dim, keepdim=keepdim)
    def var(self, axis=None, keepdims=False, ddof: int = 0, *, dim=None, keepdim=None) -> Tensor:
        return ops.var(self, axis, keepdims, ddof, dim=dim, keepdim=keepdim)
    def logsumexp(self, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        return ops.logsumexp(self, axis, keepdims, dim=dim, keepdim=keepdim)
    def cumsum(self, axis=None, *, dim=None) -> Tensor: return ops.cumsum(self, axis, dim=dim)
    def softmax(self, axis: int = -1, *, dim=None) -> Tensor: return ops.softmax(self, axis, dim=dim)
    def log_softmax(self, axis: int = -1, *, dim=None) -> Tensor:
        return ops.log_softmax(self, axis, dim=dim)

    # ------------------------------------------------------------ shape
    def reshape(self, *shape) -> Tensor: return ops.reshape(self, *shape)
    def transpose(self, *axes) -> Tensor: return ops.transpose(self, *axes)
    @property
    def T(self) -> Tensor: return ops.transpose(self)
    def broadcast_to(self, shape: Iterable[int]) -> Tensor: return ops.broadcast_to(self, shape)
    def squeeze(self, axis=None) -> Tensor: return ops.squeeze(self, axis)
    def unsqueeze(self, axis: int) -> Tensor: return ops.unsqueeze(self, axis)
    def flatten(self) -> Tensor: return ops.reshape(self, -1)
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

    # ------------------------------------------------------------ in-place (branch `inplace`)
    # Each goes through inplace.write (checks, the write, the version, the rebase).
    def add_(self, other, *, alpha=1) -> Tensor: return inplace.add_(self, other, alpha=alpha)
    def sub_(self, other, *, alpha=1) -> Tensor: return inplace.sub_(self, other, alpha=alpha)
    def mul_(self, other) -> Tensor: return inplace.mul_(self, other)
    def div_(self, other) -> Tensor: return inplace.div_(self, other)
    def pow_(self, exponent) -> Tensor: return inplace.pow_(self, exponent)
    def neg_(self) -> Tensor: return inplace.neg_(self)
    def exp_(self) -> Tensor: return inplace.exp_(self)
    def clamp_(self, min=None, max=None) -> Tensor: return inplace.clamp_(self, min, max)  # noqa: A002
    def zero_(self) -> Tensor: return inplace.zero_(self)
    def fill_(self, value) -> Tensor: return inplace.fill_(self, value)
    def copy_(self, src, non_blocking=False) -> Tensor: return inplace.copy_(self, src)
    def uniform_(self, a=0.0, b=1.0, *, generator=None) -> Tensor:
        return inplace.uniform_(self, a, b, generator=generator)
    def normal_(self, mean=0.0, std=1.0, *, generator=None) -> Tensor:
        return inplace.normal_(self, mean, std, generator=generator)
    def __setitem__(self, index, value) -> None: inplace.setitem(self, index, value)
    def __iadd__(self, other): return inplace.add_(self, other)
    def __isub__(self, other): return inplace.sub_(self, other)
    def __imul__(self, other): return inplace.mul_(self, other)
    def __itruediv__(self, other): return inplace.div_(self, other)
    def __imatmul__(self, other): return inplace.imatmul(self, other)

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
_FUNCTIONS = {
    np.sum: ops.sum, np.mean: ops.mean, np.var: ops.var, np.max: ops.amax, np.amax: ops.amax,
    np.min: ops.amin, np.amin: ops.amin, np.argmax: ops.argmax, np.argmin: ops.argmin,
    np.cumsum: ops.cumsum, np.reshape: ops.reshape, np.transpose: ops.transpose,
    np.squeeze: ops.squeeze, np.expand_dims: ops.unsqueeze, np.broadcast_to: ops.broadcast_to,
    np.concatenate: ops.concatenate, np.stack: ops.stack, np.where: ops.where,
    np.clip: ops.clip, np.dot: ops.matmul_p,
}

_CLASS_ONLY = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__",
               "__firstlineno__", "__static_attributes__"}
for _name, _fn in vars(_Methods).items():
    if _name not in _CLASS_ONLY:
        setattr(Tensor, _name, _fn)
