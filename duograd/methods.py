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

from . import _tensor, autograd, elementwise as ew, hooks, indexing, inplace, linalg, ops, reductions
from .shapes import DimError, axis_keyword, dim_index
from ._tensor import Size, Tensor
from .cuda import is_cuda_device, not_compiled  # torch's answers without a GPU (branch inventory)

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

    # ------------------------------------------------------------ elementwise family (branch elementwise)
    def tan(self) -> Tensor: return ew.tan_p(self)
    def asin(self) -> Tensor: return ew.asin_p(self)
    def acos(self) -> Tensor: return ew.acos_p(self)
    def atan(self) -> Tensor: return ew.atan_p(self)
    def atan2(self, other) -> Tensor: return ew.atan2_p(self, other)
    def arctan2(self, other) -> Tensor: return ew.atan2_p(self, other)
    def sinh(self) -> Tensor: return ew.sinh_p(self)
    def cosh(self) -> Tensor: return ew.cosh_p(self)
    def asinh(self) -> Tensor: return ew.asinh_p(self)
    def acosh(self) -> Tensor: return ew.acosh_p(self)
    def atanh(self) -> Tensor: return ew.atanh_p(self)
    def exp2(self) -> Tensor: return ew.exp2_p(self)
    def expm1(self) -> Tensor: return ew.expm1_p(self)
    def log2(self) -> Tensor: return ew.log2_p(self)
    def log10(self) -> Tensor: return ew.log10_p(self)
    def log1p(self) -> Tensor: return ew.log1p_p(self)
    def rsqrt(self) -> Tensor: return ew.rsqrt_p(self)
    def erf(self) -> Tensor: return ew.erf_p(self)
    def erfc(self) -> Tensor: return ew.erfc_p(self)
    def erfinv(self) -> Tensor: return ew.erfinv_p(self)
    def sign(self) -> Tensor: return ew.sign_p(self)
    def copysign(self, other) -> Tensor: return ew.copysign_p(self, other)
    def floor(self) -> Tensor: return ew.floor_p(self)
    def ceil(self) -> Tensor: return ew.ceil_p(self)
    def round(self, *, decimals: int = 0) -> Tensor: return ew.round(self, decimals=decimals)
    def __round__(self, ndigits=None) -> Tensor: return ew.round(self, decimals=ndigits or 0)
    def trunc(self) -> Tensor: return ew.trunc_p(self)
    def frac(self) -> Tensor: return ew.frac(self)
    def fmod(self, other) -> Tensor: return ew.fmod_p(self, other)
    def remainder(self, other) -> Tensor: return ew.remainder_p(self, other)
    def __mod__(self, other): return ew.remainder_p(self, other)
    def __rmod__(self, other): return ew.remainder_p(other, self)
    def __floordiv__(self, other): return ew.floor_divide(self, other)
    def __rfloordiv__(self, other): return ew.floor_divide(other, self)
    def floor_divide(self, other) -> Tensor: return ew.floor_divide(self, other)
    def isnan(self) -> Tensor: return ew.isnan_p(self)
    def isinf(self) -> Tensor: return ew.isinf_p(self)
    def isfinite(self) -> Tensor: return ew.isfinite_p(self)
    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        return ew.isclose(self, other, rtol, atol, equal_nan)
    def logaddexp(self, other) -> Tensor: return ew.logaddexp_p(self, other)
    def lerp(self, end, weight) -> Tensor: return ew.lerp(self, end, weight)
    def hypot(self, other) -> Tensor: return ew.hypot_p(self, other)
    def logical_not(self) -> Tensor: return ew.logical_not_p(self)
    def logical_and(self, other) -> Tensor: return ew.logical_and_p(self, other)
    def logical_or(self, other) -> Tensor: return ew.logical_or_p(self, other)
    def logical_xor(self, other) -> Tensor: return ew.logical_xor_p(self, other)
    def __invert__(self): return ew.bitwise_not(self)
    def __and__(self, other): return ew.bitwise_and(self, other)
    def __rand__(self, other): return ew.bitwise_and(other, self)
    def __or__(self, other): return ew.bitwise_or(self, other)
    def __ror__(self, other): return ew.bitwise_or(other, self)
    def __xor__(self, other): return ew.bitwise_xor(self, other)
    def __rxor__(self, other): return ew.bitwise_xor(other, self)
    def prelu(self, weight) -> Tensor:
        from .nn._activations import prelu
        return prelu(self, weight)
    # linear algebra (branch elementwise)
    def mm(self, other) -> Tensor: return linalg.mm(self, other)
    def bmm(self, other) -> Tensor: return linalg.bmm(self, other)
    def mv(self, vec) -> Tensor: return linalg.mv(self, vec)
    def dot(self, other) -> Tensor: return linalg.dot(self, other)
    def outer(self, vec2) -> Tensor: return linalg.outer(self, vec2)
    def addmm(self, mat1, mat2, *, beta: float = 1, alpha: float = 1) -> Tensor:
        return linalg.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta: float = 1, alpha: float = 1) -> Tensor:
        return linalg.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
        return linalg.tensor_norm(self, p, dim, keepdim, dtype)

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
        return self._data.shape[dim_index(dim, self.ndim, "size", self.shape)]
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

    # ------------------------------------------------------------ shapes branch: reductions,
    # scans, sorting (reductions.py) and shape/indexing (indexing.py), torch's signatures
    def prod(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        return reductions.prod(self, dim, keepdim, dtype=dtype)
    def all(self, dim=None, keepdim=False) -> Tensor: return reductions.all(self, dim, keepdim)
    def any(self, dim=None, keepdim=False) -> Tensor: return reductions.any(self, dim, keepdim)
    def cumprod(self, dim, *, dtype=None) -> Tensor: return reductions.cumprod(self, dim, dtype=dtype)
    def cummax(self, dim): return reductions.cummax(self, dim)
    def cummin(self, dim): return reductions.cummin(self, dim)
    def logcumsumexp(self, dim) -> Tensor: return reductions.logcumsumexp(self, dim)
    def sort(self, dim=-1, descending=False, stable=False):
        return reductions.sort(self, dim, descending, stable)
    def argsort(self, dim=-1, descending=False, stable=False) -> Tensor:
        return reductions.argsort(self, dim, descending, stable)
    def topk(self, k, dim=-1, largest=True, sorted=True):
        return reductions.topk(self, k, dim, largest, sorted)
    def kthvalue(self, k, dim=-1, keepdim=False): return reductions.kthvalue(self, k, dim, keepdim)
    def median(self, dim=None, keepdim=False): return reductions.median(self, dim, keepdim)
    def mode(self, dim=-1, keepdim=False): return reductions.mode(self, dim, keepdim)
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return reductions.unique(self, sorted, return_inverse, return_counts, dim)
    def split(self, split_size, dim=0): return indexing.split(self, split_size, dim)
    def chunk(self, chunks, dim=0): return indexing.chunk(self, chunks, dim)
    def unbind(self, dim=0): return indexing.unbind(self, dim)
    def unflatten(self, dim, sizes) -> Tensor: return indexing.unflatten(self, dim, sizes)
    def movedim(self, source, destination) -> Tensor: return indexing.movedim(self, source, destination)
    def moveaxis(self, source, destination) -> Tensor: return indexing.movedim(self, source, destination)
    def flip(self, *dims) -> Tensor:
        return indexing.flip(self, dims[0] if len(dims) == 1 else dims)
    def roll(self, shifts, dims=None) -> Tensor: return indexing.roll(self, shifts, dims)
    def tril(self, diagonal=0) -> Tensor: return indexing.tril(self, diagonal)
    def triu(self, diagonal=0) -> Tensor: return indexing.triu(self, diagonal)
    def diag(self, diagonal=0) -> Tensor: return indexing.diag(self, diagonal)
    def diagonal(self, offset=0, dim1=0, dim2=1) -> Tensor:
        return indexing.diagonal(self, offset, dim1, dim2)
    def diag_embed(self, offset=0, dim1=-2, dim2=-1) -> Tensor:
        return indexing.diag_embed(self, offset, dim1, dim2)
    def trace(self) -> Tensor: return indexing.trace(self)
    def gather(self, dim, index) -> Tensor: return indexing.gather(self, dim, index)
    def scatter(self, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
        return indexing.scatter(self, dim, index, src, value=value, reduce=reduce)
    def scatter_add(self, dim, index, src) -> Tensor: return indexing.scatter_add(self, dim, index, src)
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True) -> Tensor:
        return indexing.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    def index_select(self, dim, index) -> Tensor: return indexing.index_select(self, dim, index)
    def index_add(self, dim, index, source, *, alpha=1) -> Tensor:
        return indexing.index_add(self, dim, index, source, alpha=alpha)
    def take_along_dim(self, indices, dim=None) -> Tensor:
        return indexing.take_along_dim(self, indices, dim)
    def masked_fill(self, mask, value) -> Tensor: return indexing.masked_fill(self, mask, value)
    def masked_select(self, mask) -> Tensor: return indexing.masked_select(self, mask)
    def nonzero(self, *, as_tuple=False): return indexing.nonzero(self, as_tuple=as_tuple)
    def where(self, condition, y) -> Tensor: return indexing.where(condition, self, y)
    def repeat_interleave(self, repeats, dim=None, *, output_size=None) -> Tensor:
        return indexing.repeat_interleave(self, repeats, dim, output_size=output_size)
    def unfold(self, dimension, size, step) -> Tensor: return indexing.unfold(self, dimension, size, step)

    # ------------------------------------------------------------ casts and the graph
    def astype(self, dtype: Any) -> Tensor:
        """A differentiable cast (the gradient is cast back)."""
        return ops.astype(self, dtype)

    def float(self) -> Tensor:
        """A differentiable cast to float32 (``self`` when it is float32 already, as torch)."""
        return _cast(self, np.float32)

    def double(self) -> Tensor:
        """A differentiable cast to float64 (``self`` when it is float64 already, as torch)."""
        return _cast(self, np.float64)

    # ------------------------------------------------------------ casts (dtypes branch)
    def long(self) -> Tensor:
        """A cast to int64, without history (``self`` when it is int64 already)."""
        return _cast(self, np.int64)

    def int(self) -> Tensor:
        """A cast to int32, without history (``self`` when it is int32 already)."""
        return _cast(self, np.int32)

    def bool(self) -> Tensor:
        """A cast to bool (nonzero is True), without history."""
        return _cast(self, np.bool_)

    def type(self, dtype: Any = None) -> Any:
        """``self`` cast to ``dtype``; with no argument, torch's type name
        (``"torch.DoubleTensor"``)."""
        if dtype is None:
            return _TYPE_NAMES.get(self.dtype.name, f"torch.{self.dtype.name}")
        return _cast(self, dtype)

    def to(self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False,
           non_blocking: bool = False) -> Tensor:
        """``self`` on ``device`` (only "cpu") with ``dtype``, as torch's ``to``:
        ``t.to(dg.float32)``, ``t.to("cpu")``, ``t.to("cpu", dg.float64)``, ``t.to(other)``
        (other's dtype). Returns ``self`` when nothing changes, unless ``copy``."""
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype if dtype is None else dtype
            elif isinstance(a, (str, _tensor.device)) or (isinstance(a, int) and not isinstance(a, bool)):
                device = a
            elif dtype is None:
                dtype = a
            else:
                raise TypeError(f"to: unexpected argument {a!r} (after dtype {dtype!r})")
        if is_cuda_device(device):
            raise not_compiled(device)
        _tensor._check_device(device)
        out = self if dtype is None else _cast(self, dtype)
        return ops.identity_p(out) if copy and out is self else out

    def cpu(self) -> Tensor:
        """``self``: duograd's tensors live on the CPU."""
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
        """Raises torch's ``AssertionError`` (there is no CUDA device here), as torch
        built without CUDA does (a ``RuntimeError`` for an int device index, as torch)."""
        raise not_compiled(device)

    def detach(self) -> Tensor:
        """The same values (shared) with no history and no tangents."""
        return ops.detach_p(self)

    def backward(self, gradient: Any = None, retain_graph: bool = False,
                 create_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad."""
        autograd.backward(self, gradient, retain_graph, create_graph)

    register_hook = hooks.register_hook  # state kept by duograd.hooks, keyed by identity
    retain_grad = hooks.retain_grad

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


def _cast(x: Tensor, dtype: Any) -> Tensor:
    """``x`` itself when it has ``dtype`` already (as torch's casts), else ``ops.astype``."""
    dt = _tensor._dtype_of(dtype, "to")
    return x if x.dtype == dt else ops.astype(x, dt)


_TYPE_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
               "int32": "torch.IntTensor", "int64": "torch.LongTensor", "bool": "torch.BoolTensor",
               "float16": "torch.HalfTensor", "int16": "torch.ShortTensor",
               "int8": "torch.CharTensor", "uint8": "torch.ByteTensor"}


# NumPy's ufuncs and functions that have a duograd counterpart: np.exp(t) is t.exp().
_UFUNCS = {
    np.add: ops.add_p, np.subtract: ops.sub_p, np.multiply: ops.mul_p, np.divide: ops.div_p,
    np.power: ops.pow_p, np.negative: ops.neg_p, np.matmul: ops.matmul_p, np.exp: ops.exp_p,
    np.log: ops.log_p, np.sqrt: ops.sqrt_p, np.tanh: ops.tanh_p, np.sin: ops.sin_p,
    np.cos: ops.cos_p, np.absolute: ops.abs_p, np.maximum: ops.maximum_p, np.minimum: ops.minimum_p,
    np.sign: ops.sign_p, np.greater: ops.greater_p, np.greater_equal: ops.greater_equal_p,
    np.less: ops.less_p, np.less_equal: ops.less_equal_p, np.equal: ops.equal_p,
    np.not_equal: ops.not_equal_p,
    # the elementwise family (branch elementwise)
    np.tan: ew.tan_p, np.arcsin: ew.asin_p, np.arccos: ew.acos_p, np.arctan: ew.atan_p,
    np.arctan2: ew.atan2_p, np.sinh: ew.sinh_p, np.cosh: ew.cosh_p, np.arcsinh: ew.asinh_p,
    np.arccosh: ew.acosh_p, np.arctanh: ew.atanh_p, np.exp2: ew.exp2_p, np.expm1: ew.expm1_p,
    np.log2: ew.log2_p, np.log10: ew.log10_p, np.log1p: ew.log1p_p, np.copysign: ew.copysign_p,
    np.floor: ew.floor_p, np.ceil: ew.ceil_p, np.trunc: ew.trunc_p, np.fmod: ew.fmod_p,
    np.remainder: ew.remainder_p, np.floor_divide: ew.floor_divide, np.isnan: ew.isnan_p,
    np.isinf: ew.isinf_p, np.isfinite: ew.isfinite_p, np.logaddexp: ew.logaddexp_p,
    np.hypot: ew.hypot_p, np.logical_not: ew.logical_not_p, np.logical_and: ew.logical_and_p,
    np.logical_or: ew.logical_or_p, np.logical_xor: ew.logical_xor_p,
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
    np.einsum: linalg.einsum, np.outer: linalg.outer,  # (branch elementwise)
}

_CLASS_ONLY = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__",
               "__firstlineno__", "__static_attributes__"}
for _name, _fn in vars(_Methods).items():
    if _name not in _CLASS_ONLY:
        setattr(Tensor, _name, _fn)


# ---------------------------------------------------------------- random draws (branch data)
def _bind_random() -> None:
    from . import random as _random

    def random_(self, *args, to=None, generator=None) -> Tensor:
        return inplace.random_(self, *args, to=to, generator=generator)

    def exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
        return inplace.exponential_(self, lambd, generator=generator)

    def geometric_(self, p, *, generator=None) -> Tensor:
        return inplace.geometric_(self, p, generator=generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
        return inplace.cauchy_(self, median, sigma, generator=generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None) -> Tensor:
        return inplace.log_normal_(self, mean, std, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        return inplace.bernoulli_(self, p, generator=generator)

    def bernoulli(self, p=None, *, generator=None) -> Tensor:
        return _random.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples, replacement=False, *, generator=None) -> Tensor:
        return _random.multinomial(self, num_samples, replacement, generator=generator)

    for fn in (random_, exponential_, geometric_, cauchy_, log_normal_, bernoulli_, bernoulli,
               multinomial):
        setattr(Tensor, fn.__name__, fn)


_bind_random()
# serialization branch: copy.deepcopy and Python's pickle of a Tensor, as torch's tensors allow
from .serialization import _tensor_deepcopy, _tensor_reduce_ex  # noqa: E402
Tensor.__deepcopy__ = _tensor_deepcopy
Tensor.__reduce_ex__ = _tensor_reduce_ex
# branch inventory: what torch's CPU tensors answer about their device and layout
# (duograd's tensors are dense NumPy arrays on the CPU)
Tensor.is_cpu = property(lambda self: True, doc="True: the values live on the CPU.")
for _name in ("is_cuda", "is_ipu", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia", "is_nested",
              "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xla", "is_xpu"):
    setattr(Tensor, _name, property(lambda self: False, doc="False: a dense tensor on the CPU, as torch's."))


def _get_device(self: Tensor) -> int:
    """-1, torch's answer for a tensor on the CPU."""
    return -1


Tensor.get_device = _get_device
# ---------------------------------------------------------------- branch `methods`: the Tensor
# methods that are torch functions or operators (tensor_api.py), with torch's parameter names,
# and the in-place twins (inplace.py). Bound after the block above, so a name here replaces it.
from . import tensor_api as _api  # noqa: E402

_numpy_of = Tensor.numpy


class _TorchMethods:
    def add(self, other, *, alpha=1) -> Tensor: return _api.add(self, other, alpha=alpha)
    def sub(self, other, *, alpha=1) -> Tensor: return _api.sub(self, other, alpha=alpha)
    subtract = sub
    def mul(self, other) -> Tensor: return ops.mul_p(self, other)
    multiply = mul
    def div(self, other, *, rounding_mode=None) -> Tensor:
        return _api.div(self, other, rounding_mode=rounding_mode)
    divide = div
    def true_divide(self, other) -> Tensor: return ops.div_p(self, other)
    def floor_divide(self, other) -> Tensor: return ew.floor_divide(self, other)
    def neg(self) -> Tensor: return _api.neg(self)
    negative = neg
    def positive(self) -> Tensor: return _api.positive(self)
    def __pos__(self) -> Tensor: return _api.positive(self)
    def square(self) -> Tensor: return _api.square(self)
    def reciprocal(self) -> Tensor: return _api.reciprocal(self)
    def absolute(self) -> Tensor: return ops.abs_p(self)
    def sgn(self) -> Tensor: return ew.sign_p(self)
    def signbit(self) -> Tensor: return _api.signbit(self)
    def deg2rad(self) -> Tensor: return _api.deg2rad(self)
    def rad2deg(self) -> Tensor: return _api.rad2deg(self)
    def heaviside(self, values) -> Tensor: return _api.heaviside(self, values)
    def fix(self) -> Tensor: return ew.trunc_p(self)
    def arccos(self) -> Tensor: return ew.acos_p(self)
    def arcsin(self) -> Tensor: return ew.asin_p(self)
    def arctan(self) -> Tensor: return ew.atan_p(self)
    def arccosh(self) -> Tensor: return ew.acosh_p(self)
    def arcsinh(self) -> Tensor: return ew.asinh_p(self)
    def arctanh(self) -> Tensor: return ew.atanh_p(self)
    def clamp_min(self, min) -> Tensor: return _api.clamp_min(self, min)  # noqa: A002
    def clamp_max(self, max) -> Tensor: return _api.clamp_max(self, max)  # noqa: A002
    def maximum(self, other) -> Tensor: return ops.maximum_p(self, other)
    def minimum(self, other) -> Tensor: return ops.minimum_p(self, other)
    def fmax(self, other) -> Tensor: return _api.fmax(self, other)
    def fmin(self, other) -> Tensor: return _api.fmin(self, other)
    def xlogy(self, other) -> Tensor: return _api.xlogy(self, other)
    def logit(self, eps=None) -> Tensor: return _api.logit(self, eps)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None) -> Tensor:
        return _api.nan_to_num(self, nan, posinf, neginf)
    def bitwise_not(self) -> Tensor: return ew.bitwise_not(self)
    def bitwise_and(self, other) -> Tensor: return ew.bitwise_and(self, other)
    def bitwise_or(self, other) -> Tensor: return ew.bitwise_or(self, other)
    def bitwise_xor(self, other) -> Tensor: return ew.bitwise_xor(self, other)
    def addcmul(self, tensor1, tensor2, *, value=1) -> Tensor:
        return _api.addcmul(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1) -> Tensor:
        return _api.addcdiv(self, tensor1, tensor2, value=value)
    def addmv(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        return _api.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
        return _api.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        return _api.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def mm(self, mat2) -> Tensor: return linalg.mm(self, mat2)
    def bmm(self, mat2) -> Tensor: return linalg.bmm(self, mat2)
    def matmul(self, other) -> Tensor: return _api.matmul(self, other)
    def ger(self, vec2) -> Tensor: return linalg.outer(self, vec2)
    def inner(self, other) -> Tensor: return _api.inner(self, other)
    def vdot(self, other) -> Tensor: return linalg.dot(self, other)
    def kron(self, other) -> Tensor: return _api.kron(self, other)
    def t(self) -> Tensor: return _api.t(self)
    def cross(self, other, dim=None) -> Tensor: return _api.cross(self, other, dim)
    def dist(self, other, p=2) -> Tensor: return _api.dist(self, other, p)
    def logdet(self) -> Tensor: return _api.logdet(self)
    def lerp(self, end, weight) -> Tensor: return ew.lerp(self, end, weight)

    # comparisons under torch's names
    def eq(self, other) -> Tensor: return ops.equal_p(self, other)
    def ne(self, other) -> Tensor: return ops.not_equal_p(self, other)
    def lt(self, other) -> Tensor: return ops.less_p(self, other)
    def le(self, other) -> Tensor: return ops.less_equal_p(self, other)
    def gt(self, other) -> Tensor: return ops.greater_p(self, other)
    def ge(self, other) -> Tensor: return ops.greater_equal_p(self, other)
    not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge
    def equal(self, other) -> bool: return _api.equal(self, other)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return _api.allclose(self, other, rtol, atol, equal_nan)
    def is_nonzero(self) -> bool: return _api.is_nonzero(self)

    # shapes, views and the layout
    def narrow(self, dim, start, length) -> Tensor: return _api.narrow(self, dim, start, length)
    def select(self, dim, index) -> Tensor: return _api.select(self, dim, index)
    def tile(self, *dims) -> Tensor:
        return _api.tile(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)
    def swapaxes(self, axis0, axis1) -> Tensor: return ops.transpose(self, axis0, axis1)
    def swapdims(self, dim0, dim1) -> Tensor: return ops.transpose(self, dim0, dim1)
    def ravel(self) -> Tensor: return _api.ravel(self)
    def expand_as(self, other) -> Tensor: return ops.expand(self, other.shape)
    def view_as(self, other) -> Tensor: return ops.reshape(self, other.shape)
    def reshape_as(self, other) -> Tensor: return ops.reshape(self, other.shape)
    def type_as(self, other) -> Tensor: return _api.type_as(self, other)
    def sum_to_size(self, *size) -> Tensor: return _api.sum_to_size(self, *size)
    def flip(self, *dims, **kw) -> Tensor:
        dims = kw.pop("dims", dims[0] if len(dims) == 1 else dims)
        return indexing.flip(self, dims)
    @property
    def mH(self) -> Tensor: return ops.matrix_transpose(self)
    def adjoint(self) -> Tensor: return ops.matrix_transpose(self)
    def stride(self, dim=None): return _api.stride(self, dim)
    def storage_offset(self) -> int: return _api.storage_offset(self)
    def is_contiguous(self, memory_format=None) -> bool: return _api.is_contiguous(self, memory_format)
    def nelement(self) -> int: return self._data.size
    def ndimension(self) -> int: return self._data.ndim
    def element_size(self) -> int: return self._data.itemsize
    @property
    def itemsize(self) -> int: return self._data.itemsize
    @property
    def nbytes(self) -> int: return self._data.nbytes
    def is_floating_point(self) -> bool: return self.dtype.kind == "f"
    def is_complex(self) -> bool: return self.dtype.kind == "c"
    def is_signed(self) -> bool: return _api.is_signed(self)

    # new tensors of this one's dtype
    new_zeros, new_ones, new_empty = _api.new_zeros, _api.new_ones, _api.new_empty
    new_full, new_tensor = _api.new_full, _api.new_tensor

    # reductions, counting, searching
    def count_nonzero(self, dim=None) -> Tensor: return _api.count_nonzero(self, dim)
    def nansum(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        return _api.nansum(self, dim, keepdim, dtype=dtype)
    def nanmean(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        return _api.nanmean(self, dim, keepdim, dtype=dtype)
    def aminmax(self, *, dim=None, keepdim=False): return _api.aminmax(self, dim=dim, keepdim=keepdim)
    def diff(self, n=1, dim=-1, prepend=None, append=None) -> Tensor:
        return _api.diff(self, n, dim, prepend, append)
    def bincount(self, weights=None, minlength=0) -> Tensor: return _api.bincount(self, weights, minlength)
    def histc(self, bins=100, min=0, max=0) -> Tensor: return _api.histc(self, bins, min, max)  # noqa: A002
    def argwhere(self) -> Tensor: return _api.argwhere(self)
    def cumsum(self, dim=None, *, dtype=None, **kw) -> Tensor: return ops.cumsum(self, dim, dtype=dtype, **kw)
    def mean(self, dim=None, keepdim=False, *, dtype=None, **kw) -> Tensor:
        return ops.mean(self, dim, keepdim, dtype=dtype, **kw)

    # indexing
    def index_fill(self, dim, index, value) -> Tensor: return _api.index_fill(self, dim, index, value)
    def index_copy(self, dim, index, source) -> Tensor: return _api.index_copy(self, dim, index, source)
    def take(self, index) -> Tensor: return _api.take(self, index)
    def put(self, index, source, accumulate=False) -> Tensor: return _api.put(self, index, source, accumulate)

    # copies and the graph
    def clone(self, *, memory_format=None) -> Tensor: return ops.clone_p(self)
    def cpu(self, memory_format=None) -> Tensor: return self
    def detach_(self) -> Tensor: return _api.detach_(self)

    def numpy(self, *, force: bool = False):
        """The values as a NumPy array (shared); ``force=True`` detaches first, as torch's."""
        return _numpy_of(self.detach() if force else self)


def _sized(fn: Any, key: str) -> Any:
    """A varargs-of-sizes method that also takes its sizes by torch's keyword (``shape=``, ...)."""
    def method(self, *sizes, **kw):
        if key in kw:
            if sizes:
                raise TypeError(f"{fn.__name__}(): got {key} both by position and by keyword")
            sizes = (kw.pop(key),)
        return fn(self, *sizes, **kw)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name, _key in [("permute", "dims"), ("reshape", "shape"), ("view", "size"), ("expand", "size"),
                    ("repeat", "repeats"), ("tile", "dims"), ("new_zeros", "size"),
                    ("new_ones", "size"), ("new_empty", "size"), ("sum_to_size", "size")]:
    _own = vars(_TorchMethods)
    setattr(_TorchMethods, _name, _sized(_own[_name] if _name in _own else getattr(Tensor, _name), _key))


def _where(self, condition, y=None, **kw) -> Tensor:
    return indexing.where(condition, self, kw.pop("other") if "other" in kw else y)


def _uniform_(self, a=0.0, b=1.0, *, generator=None, **kw) -> Tensor:
    """Fill with uniform samples from [from, to) (torch's keywords ``from``/``to``; ``a``/``b``)."""
    return inplace.uniform_(self, kw.pop("from", a), kw.pop("to", b), generator=generator)


_TorchMethods.where, _TorchMethods.uniform_ = _where, _uniform_

for _name, _fn in vars(_TorchMethods).items():
    if _name not in _CLASS_ONLY:
        setattr(Tensor, _name, _fn)

def _axis_alias(fn: Any) -> Any:
    """``fn`` taking ``axis=`` as an alias of its ``dim=``, as torch's argument parser does."""
    def method(self, *args, **kw):
        return fn(self, *args, **axis_keyword(fn.__name__, kw))
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name in ("cummax", "cummin", "cumprod", "all", "any", "prod", "sort", "argsort", "topk",
              "kthvalue", "median", "mode", "logcumsumexp", "unbind", "chunk", "nansum", "nanmean",
              "count_nonzero", "diff", "aminmax"):
    setattr(Tensor, _name, _axis_alias(getattr(Tensor, _name)))

# the in-place twins (inplace.TWINS), each going through inplace.write
for _name in inplace.TWINS:
    setattr(Tensor, _name + "_", getattr(inplace, _name + "_"))
Tensor.div_ = inplace.div_
Tensor.divide_ = inplace.div_
