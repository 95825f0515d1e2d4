"""``Tensor``: a NumPy array, its gradient, and the node of the graph that made it.

The class holds state and one-line methods; every operation lives in ``ops.py``
(the table of primitives and the compositions built from them).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

_new = object.__new__
_FLOATS = (np.float16, np.float32, np.float64)


def _as_array(data: Any, dtype: Any = None, op: str = "tensor") -> np.ndarray:
    """NumPy's view of ``data``: floats keep their dtype, everything else becomes float64."""
    if isinstance(data, Tensor):
        data = data._data
    try:
        arr = np.asarray(data, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: cannot make a tensor from {type(data).__name__} ({e}); "
                        "expected numbers, nested lists of numbers or a NumPy array") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{op}: cannot make a tensor from data of dtype {arr.dtype}; "
                        "expected numbers, nested lists of numbers or a NumPy array")
    if arr.dtype.type not in _FLOATS:
        arr = arr.astype(np.float64)
    return arr


def _wrap(data: np.ndarray) -> "Tensor":
    """A new graph-less Tensor around ``data`` (the engine's fast constructor)."""
    t = _new(Tensor)
    t._data = data if type(data) is np.ndarray else np.asarray(data)
    t.grad = None
    t.requires_grad = False
    t._op = None
    t._inputs = None
    t._kw = None
    t._tangent = None
    return t


_CONSTANTS: dict = {}


def _constant(a: float, dtype: np.dtype) -> "Tensor":
    """A shared 0-d constant Tensor for a Python number (they recur: 1 - x, x * 0.5).

    Safe to share: a constant never requires grad, never gets a tangent and is never
    written to. Zero is not cached, so -0.0 keeps its sign."""
    key = (a, dtype)
    t = _CONSTANTS.get(key)
    if t is None:
        t = _wrap(np.array(a, dtype=dtype))
        if a and a == a:
            if len(_CONSTANTS) > 4096:
                _CONSTANTS.clear()
            _CONSTANTS[key] = t
    return t


def _as_tensor(x: Any) -> "Tensor":
    """``x`` itself if it is a Tensor, else a new leaf Tensor of it."""
    return x if isinstance(x, Tensor) else Tensor(x)


def _zeros_like(x: "Tensor") -> "Tensor":
    return _wrap(np.zeros_like(x._data))


def _lift_all(op: str, args: tuple) -> tuple["Tensor", ...]:
    """Operands of ``op`` as Tensors. Numbers and non-float arrays take the dtype of the
    first Tensor operand (so a float32 tensor times 2 stays float32); float arrays
    keep their own dtype, as in NumPy."""
    dtype = np.float64
    for a in args:
        if isinstance(a, Tensor):
            dtype = a._data.dtype
            break
    return tuple([a if isinstance(a, Tensor) else _lift(op, a, dtype) for a in args])


def _lift(op: str, a: Any, dtype: np.dtype) -> "Tensor":
    if type(a) is float or type(a) is int:
        return _constant(a, dtype)
    if isinstance(a, (int, float, np.number, np.bool_)) and not isinstance(a, (complex, np.complexfloating)):
        return _wrap(np.array(a, dtype=dtype))
    if isinstance(a, (np.ndarray, list, tuple)):
        arr = np.asarray(a)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{op}: unsupported operand of dtype {arr.dtype}; expected a "
                            "Tensor, a number or a NumPy array of numbers")
        # Float arrays keep their dtype; a bool mask stays bool (NumPy's product with it
        # keeps the other operand's dtype, and converting it first would cost a pass).
        return _wrap(arr if arr.dtype.kind in "fb" else arr.astype(dtype))
    raise TypeError(f"{op}: unsupported operand type {type(a).__name__}; expected a "
                    "Tensor, a number or a NumPy array")


class Tensor:
    """An n-dimensional array that records the operations applied to it.

    >>> import duograd as dg
    >>> x = dg.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad.numpy()
    array([[2., 4.]])
    """

    __slots__ = ("_data", "grad", "requires_grad", "_op", "_inputs", "_kw", "_tangent",
                 "__weakref__")
    __array_ufunc__ = None  # numpy_array * tensor defers to Tensor.__rmul__

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self._data = _as_array(data, dtype)
        self.grad: Tensor | None = None
        self.requires_grad = bool(requires_grad)
        self._op = None
        self._inputs = None
        self._kw = None
        self._tangent = None

    # ------------------------------------------------------------ state
    @property
    def data(self) -> np.ndarray:
        """The values, a NumPy array. Assigning one of the same shape updates them in place
        of the old array (how optimizers update parameters)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        arr = _as_array(value, op="Tensor.data")
        if arr.shape != self._data.shape:
            raise ValueError(f"Tensor.data: cannot assign an array of shape {arr.shape} "
                             f"to a tensor of shape {self._data.shape}")
        self._data = arr

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def is_leaf(self) -> bool:
        return self._op is None

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shared, not copied)."""
        return self._data

    def item(self) -> float:
        """The single value of a one-element tensor, as a Python float."""
        if self._data.size != 1:
            raise ValueError(f"item: only a one-element tensor has an item; this one has shape {self.shape}")
        return self._data.item()

    def __float__(self) -> float:
        return float(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(f"bool: the truth value of a tensor of shape {self.shape} is "
                             "ambiguous; use .numpy().any() or .numpy().all()")
        return bool(self._data)

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def detach(self) -> "Tensor":
        """The same values with no history and no tangents."""
        return _wrap(self._data)

    def astype(self, dtype: Any) -> "Tensor":
        """A differentiable cast (the gradient is cast back)."""
        return ops.cast(self, dtype=np.dtype(dtype))

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        self.requires_grad = bool(flag)
        return self

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = ", requires_grad=True" if self.requires_grad else ""
        if self._data.dtype != np.float64:
            extra += f", dtype={self._data.dtype}"
        return f"tensor({body}{extra})"

    def backward(self, gradient: Any = None, retain_graph: bool = False,
                 create_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad."""
        autograd.backward(self, gradient, retain_graph, create_graph)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other): return ops.add(self, other)
    def __radd__(self, other): return ops.add(other, self)
    def __sub__(self, other): return ops.sub(self, other)
    def __rsub__(self, other): return ops.sub(other, self)
    def __mul__(self, other): return ops.mul(self, other)
    def __rmul__(self, other): return ops.mul(other, self)
    def __truediv__(self, other): return ops.div(self, other)
    def __rtruediv__(self, other): return ops.div(other, self)
    def __pow__(self, other): return ops.power(self, other)
    def __rpow__(self, other): return ops.power(other, self)
    def __matmul__(self, other): return ops.matmul(self, other)
    def __rmatmul__(self, other): return ops.matmul(other, self)
    def __neg__(self): return ops.neg(self)
    def __abs__(self): return ops.absolute(self)
    def abs(self) -> "Tensor": return ops.absolute(self)

    # ------------------------------------------------------------ elementwise
    def exp(self) -> "Tensor": return ops.exp(self)
    def log(self) -> "Tensor": return ops.log(self)
    def sqrt(self) -> "Tensor": return ops.sqrt(self)
    def tanh(self) -> "Tensor": return ops.tanh(self)
    def sigmoid(self) -> "Tensor": return ops.sigmoid(self)
    def relu(self) -> "Tensor": return ops.relu(self)
    def sin(self) -> "Tensor": return ops.sin(self)
    def cos(self) -> "Tensor": return ops.cos(self)
    def clip(self, lo: float | None = None, hi: float | None = None) -> "Tensor":
        return ops.clip(self, lo, hi)

    # ------------------------------------------------------------ reductions
    def sum(self, axis=None, keepdims: bool = False) -> "Tensor": return ops.sum(self, axis, keepdims)
    def mean(self, axis=None, keepdims: bool = False) -> "Tensor": return ops.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims: bool = False) -> "Tensor": return ops.amax(self, axis, keepdims)
    def min(self, axis=None, keepdims: bool = False) -> "Tensor": return ops.amin(self, axis, keepdims)
    def var(self, axis=None, keepdims: bool = False, ddof: int = 0) -> "Tensor":
        return ops.var(self, axis, keepdims, ddof)
    def logsumexp(self, axis=None, keepdims: bool = False) -> "Tensor":
        return ops.logsumexp(self, axis, keepdims)
    def softmax(self, axis: int = -1) -> "Tensor": return ops.softmax(self, axis)
    def log_softmax(self, axis: int = -1) -> "Tensor": return ops.log_softmax(self, axis)

    # ------------------------------------------------------------ shape
    def reshape(self, *shape) -> "Tensor": return ops.reshape(self, *shape)
    def transpose(self, *axes) -> "Tensor": return ops.transpose(self, *axes)
    @property
    def T(self) -> "Tensor": return ops.transpose(self)
    def broadcast_to(self, shape: Iterable[int]) -> "Tensor": return ops.broadcast_to(self, shape)
    def squeeze(self, axis=None) -> "Tensor": return ops.squeeze(self, axis)
    def unsqueeze(self, axis: int) -> "Tensor": return ops.unsqueeze(self, axis)
    def flatten(self) -> "Tensor": return ops.reshape(self, -1)
    def __getitem__(self, index) -> "Tensor": return ops.getitem(self, index)




# ---------------------------------------------------------------- creation

def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new leaf Tensor. Numbers, lists and integer arrays become float64; a float32
    array stays float32 unless ``dtype`` says otherwise.

    >>> import duograd as dg
    >>> dg.tensor([1, 2]).dtype
    dtype('float64')
    """
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _shape_of(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    for n in shape:
        if type(n) is not int:
            return tuple(int(n) for n in shape)
    return shape


def zeros(*shape: Any, requires_grad: bool = False, dtype: Any = np.float64) -> Tensor:
    """A Tensor of zeros: ``dg.zeros((2, 3))`` or ``dg.zeros(2, 3)``.

    >>> import duograd as dg
    >>> dg.zeros((2, 3)).shape
    (2, 3)
    """
    return Tensor(np.zeros(_shape_of(shape), dtype=dtype), requires_grad=requires_grad)


def ones(*shape: Any, requires_grad: bool = False, dtype: Any = np.float64) -> Tensor:
    """A Tensor of ones: ``dg.ones((2, 3))`` or ``dg.ones(2, 3)``.

    >>> import duograd as dg
    >>> float(dg.ones(3).sum())
    3.0
    """
    return Tensor(np.ones(_shape_of(shape), dtype=dtype), requires_grad=requires_grad)


def as_rng(rng: Any = None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator, an int seed or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected a numpy.random.Generator or an int seed, got {type(rng).__name__}")


def randn(*shape: Any, rng: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples; ``rng`` is a ``numpy.random.Generator`` or an int seed.

    >>> import duograd as dg
    >>> dg.randn(2, 3, rng=0).shape
    (2, 3)
    """
    return Tensor(as_rng(rng).standard_normal(_shape_of(shape)), requires_grad=requires_grad)


from . import autograd, ops  # noqa: E402  (the methods above call into these)
