"""``Tensor``: a NumPy array, its gradient, and the node of the graph that made it.

This module holds the state and nothing that computes: the class, its one
constructor (``_wrap``), the conversion of operands, and the creation functions. It
imports nothing else from duograd. The operators and methods (``+``, ``exp``,
``sum``, ``backward``, ...) call the primitives of ``ops.py`` and are bound onto the
class by ``methods.py``, the way JAX binds its array methods, so the reading order
``shapes -> _tensor -> autograd -> ops -> methods`` has no back-references.

How a Tensor is made, one way for each purpose:

- ``tensor(data)`` / ``Tensor(data)``: a new leaf that owns a copy of ``data``;
  ``from_numpy(array)`` shares the array instead.
- ``_wrap(array)``: the engine's constructor, where a Tensor's fields are set (its one
  copy, inlined in ``Primitive.__call__`` for speed, is checked against it by a test).
- ``_as_tensor(x)`` / ``_lift_all(op, xs)``: operands as Tensors (a Tensor passes
  through, a number or array becomes a graph-less constant).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_new = object.__new__

# The recording in progress of ``dg.compile`` (duograd/capture.py), or None. While one is
# on, this module tells it of what happens outside primitives: Tensors made from data,
# arrays derived from an argument (``_derive``), writes to ``.grad`` and reads of a value
# as a Python number (which a replay would freeze).
_capture: Any = None
_ndarray = np.ndarray
_FLOATS = (np.float16, np.float32, np.float64)
_FLOAT64 = np.dtype(np.float64)


def _as_array(data: Any, dtype: Any = None, op: str = "tensor", copy: bool = False) -> np.ndarray:
    """NumPy's view of ``data``: floats keep their dtype, everything else becomes float64.
    With ``copy`` the result never shares memory with ``data``."""
    if isinstance(data, Tensor):
        data = data._data
    try:
        arr = np.array(data, dtype=dtype) if copy else np.asarray(data, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: cannot make a tensor from {type(data).__name__} ({e}); "
                        "expected numbers, nested lists of numbers or a NumPy array") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{op}: cannot make a tensor from data of dtype {arr.dtype}; "
                        "expected numbers, nested lists of numbers or a NumPy array")
    if arr.dtype.type not in _FLOATS:
        arr = arr.astype(np.float64)
    return arr


def _wrap(data: np.ndarray, requires_grad: bool = False, op: Any = None, inputs: Any = None,
          kw: Any = None) -> "Tensor":
    """A new Tensor around ``data`` (not copied): the place where a Tensor's fields are
    set (``Primitive.__call__`` inlines this body; tests/engine/test_tensor_api.py holds the two
    to the same fields). Without ``op`` it has no history; ``autograd.Primitive`` passes the
    primitive, its inputs and keyword parameters to make a node of the graph.
    ``autograd.set_tangent`` owns ``_tangent`` after that."""
    t = _new(Tensor)
    t._data = data if type(data) is _ndarray else np.asarray(data)
    t._grad = t._tangent = None
    t.requires_grad = requires_grad
    t._op = op
    t._inputs = inputs
    t._kw = kw
    if _capture is not None:
        _capture.created(t)
    return t


def _derive(fn: Any, source: Any, **kw: Any) -> np.ndarray:
    """``fn(source, **kw)``, an array computed from ``source`` outside the primitives (a
    conversion, a check of class labels). A ``dg.compile`` recording notes it, so that a
    replay computes it again from that call's argument instead of freezing it."""
    if isinstance(source, Tensor):
        source = source._data
    out = fn(source, **kw)
    if _capture is not None:  # (also when out is source: fn may check it, as labels are)
        _capture.derived(out, source, fn, kw)
    return out


def _draw(fn: Any, *args: Any) -> np.ndarray:
    """``fn(*args)``, an array drawn afresh on every call (random numbers, a dropout
    mask). A ``dg.compile`` recording notes it, so that a replay draws again, from the same
    generator, instead of reusing the recorded draw."""
    out = fn(*args)
    if _capture is not None:
        _capture.drawn(out, fn, args)
    return out


def _convert(x: Any, dtype: Any) -> np.ndarray:
    """An array operand as the engine holds it: float and bool kept, integers cast."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"unsupported operand of dtype {arr.dtype}")
    return arr if arr.dtype.kind in "fb" else arr.astype(dtype)


class Size(tuple):
    """A tensor's shape, as ``torch.Size``: a tuple of ints (``t.size()``).

    >>> Size((2, 3)) == (2, 3), Size((2, 3)).numel()
    (True, 6)
    """

    __slots__ = ()

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"dg.Size({list(self)})"


class Tensor:
    """An n-dimensional array that records the operations applied to it.

    ``Tensor(data, requires_grad=False, dtype=None)`` is the same as ``dg.tensor``: a
    new leaf holding a copy of ``data``.

    >>> import duograd as dg
    >>> x = dg.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad.numpy()
    array([[2., 4.]])
    """

    __slots__ = ("_data", "_grad", "requires_grad", "_op", "_inputs", "_kw", "_tangent",
                 "__weakref__")
    # Comparisons are elementwise (methods.py), so identity hashing is kept explicitly:
    # the engine keys its dicts and sets by Tensor.
    __hash__ = object.__hash__

    def __new__(cls, data: Any, requires_grad: bool = False, dtype: Any = None) -> "Tensor":
        if isinstance(data, (Tensor, np.ndarray)):
            arr = _derive(_as_array, data, dtype=dtype, copy=True)
        else:  # numbers and lists are values of the call, not arrays that can change
            arr = _as_array(data, dtype, copy=True)
        return _wrap(arr, bool(requires_grad))

    # ------------------------------------------------------------ gradient
    @property
    def grad(self) -> "Tensor | None":
        """The gradient accumulated by ``backward``, a Tensor of this tensor's shape, or None."""
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if _capture is not None:
            _capture.set_grad(self, value)
        self._grad = value

    # ------------------------------------------------------------ state
    @property
    def data(self) -> np.ndarray:
        """The values, a NumPy array. Assigning one of the same shape replaces them (how
        optimizers update parameters)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        if _capture is not None:
            _capture.read_value("assigning .data")
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
    def is_leaf(self) -> bool:
        return self._op is None

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shared, not copied)."""
        if _capture is not None:
            _capture.read_value("numpy()")
        return self._data

    def item(self) -> float:
        """The single value of a one-element tensor, as a Python number."""
        return self._single("item")

    def _single(self, what: str) -> Any:
        """The one value, for ``item()`` and ``float()`` (named in the error and warning)."""
        if self._data.size != 1:
            raise ValueError(f"{what}: only a one-element tensor has a single value; this one "
                             f"has shape {self.shape}")
        if _capture is not None:
            _capture.read_value(f"{what}()")
        return self._data.item()

    def tolist(self) -> Any:
        """The values as nested Python lists (a number for a 0-d tensor)."""
        if _capture is not None:
            _capture.read_value("tolist()")
        return self._data.tolist()

    def __float__(self) -> float:
        return float(self._single("float"))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(f"bool: the truth value of a tensor of shape {self.shape} is "
                             "ambiguous; use .numpy().any() or .numpy().all()")
        if _capture is not None:
            _capture.read_value("bool()")
        return bool(self._data)

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place and return the tensor."""
        self.requires_grad = bool(flag)
        return self

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = ", requires_grad=True" if self.requires_grad else ""
        if self._data.dtype != np.float64:
            extra += f", dtype={self._data.dtype}"
        return f"tensor({body}{extra})"


# ---------------------------------------------------------------- operands

_CONSTANTS: dict = {}


def _as_tensor(x: Any, dtype: Any = np.float64, op: str = "tensor") -> Tensor:
    """``x`` itself if it is a Tensor, else a graph-less constant of it.

    A Python number takes ``dtype`` (so a float32 tensor times 2 stays float32) and is
    shared between calls (they recur: 1 - x, x * 0.5); that is safe because a constant
    never requires grad, never gets a tangent and is never written to. Zero is not
    shared, so -0.0 keeps its sign. Float arrays keep their dtype, as in NumPy, and a
    bool mask stays bool (NumPy's product with it keeps the other operand's dtype)."""
    if isinstance(x, Tensor):
        return x
    if type(x) is float or type(x) is int:
        key = (x, dtype)
        t = _CONSTANTS.get(key)
        if t is None:
            t = _wrap(np.array(x, dtype=dtype))
            if x and x == x:
                if len(_CONSTANTS) > 4096:
                    _CONSTANTS.clear()
                _CONSTANTS[key] = t
        return t
    if isinstance(x, (int, float, np.number, np.bool_)) and not isinstance(x, (complex, np.complexfloating)):
        return _wrap(np.array(x, dtype=dtype))
    if isinstance(x, (np.ndarray, list, tuple)):
        try:
            arr = _derive(_convert, x, dtype=dtype) if isinstance(x, np.ndarray) else _convert(x, dtype)
        except TypeError as e:
            raise TypeError(f"{op}: {e}; expected a Tensor, a number or a NumPy array of "
                            "numbers") from None
        return _wrap(arr)
    raise TypeError(f"{op}: unsupported operand type {type(x).__name__}; expected a "
                    "Tensor, a number or a NumPy array")


def _lift_all(op: str, args: tuple) -> tuple[Tensor, ...]:
    """Operands of ``op`` as Tensors; numbers take the dtype of the first float Tensor."""
    dtype = _FLOAT64
    for a in args:
        if isinstance(a, Tensor) and a._data.dtype.kind == "f":  # not a bool mask
            dtype = a._data.dtype
            break
    return tuple([a if isinstance(a, Tensor) else _as_tensor(a, dtype, op) for a in args])


# ---------------------------------------------------------------- creation

def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new leaf Tensor holding a copy of ``data`` (changing ``data`` afterwards never
    changes it). Numbers, lists and integer arrays become float64; a float32 array
    stays float32 unless ``dtype`` says otherwise.

    >>> import duograd as dg
    >>> a = np.array([1.0, 2.0])
    >>> t = dg.tensor(a)
    >>> a[0] = 99.0
    >>> t.numpy(), dg.tensor([1, 2]).dtype
    (array([1., 2.]), dtype('float64'))
    """
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def from_numpy(array: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A leaf Tensor sharing memory with a float ``array``, as ``torch.from_numpy``:
    changes to either are seen by the other (an optimizer step included).

    >>> import duograd as dg
    >>> a = np.zeros(2)
    >>> t = dg.from_numpy(a)
    >>> a[0] = 5.0
    >>> t.numpy()
    array([5., 0.])
    """
    if not isinstance(array, np.ndarray) or array.dtype.type not in _FLOATS:
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise TypeError(f"from_numpy: expected a float NumPy array, got {kind}; "
                        "use dg.tensor to convert (it copies)")
    return _wrap(array, bool(requires_grad))


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
    return _wrap(np.zeros(_shape_of(shape), dtype=dtype), bool(requires_grad))


def ones(*shape: Any, requires_grad: bool = False, dtype: Any = np.float64) -> Tensor:
    """A Tensor of ones: ``dg.ones((2, 3))`` or ``dg.ones(2, 3)``.

    >>> import duograd as dg
    >>> float(dg.ones(3).sum())
    3.0
    """
    return _wrap(np.ones(_shape_of(shape), dtype=dtype), bool(requires_grad))


def zeros_like(t: Any, requires_grad: bool = False) -> Tensor:
    """Zeros of ``t``'s shape and dtype.

    >>> import duograd as dg
    >>> dg.zeros_like(dg.ones(2, dtype=np.float32)).dtype
    dtype('float32')
    """
    return _wrap(np.zeros_like(_as_tensor(t)._data), bool(requires_grad))


def ones_like(t: Any, requires_grad: bool = False) -> Tensor:
    """Ones of ``t``'s shape and dtype.

    >>> import duograd as dg
    >>> dg.ones_like(dg.zeros(2)).numpy()
    array([1., 1.])
    """
    return _wrap(np.ones_like(_as_tensor(t)._data), bool(requires_grad))


def arange(start: float, stop: float | None = None, step: float = 1,
           requires_grad: bool = False) -> Tensor:
    """Evenly spaced values in [start, stop), float64 (``numpy.arange``).

    >>> import duograd as dg
    >>> dg.arange(3).numpy()
    array([0., 1., 2.])
    """
    data = np.arange(start, step=step, dtype=np.float64) if stop is None else \
        np.arange(start, stop, step, dtype=np.float64)
    return _wrap(data, bool(requires_grad))


def linspace(start: float, stop: float, num: int, requires_grad: bool = False) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive, float64.

    >>> import duograd as dg
    >>> dg.linspace(0, 1, 3).numpy()
    array([0. , 0.5, 1. ])
    """
    return _wrap(np.linspace(start, stop, num, dtype=np.float64), bool(requires_grad))


def as_rng(rng: Any = None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator, an int seed or None.

    >>> bool(as_rng(0).integers(10) == as_rng(0).integers(10))
    True
    """
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
    return _wrap(as_rng(rng).standard_normal(_shape_of(shape)), bool(requires_grad))

