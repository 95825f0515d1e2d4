"""``Tensor``: a NumPy array, its gradient, and a pointer to the graph node that made it.

This module holds the state and nothing that computes: the class, its one
constructor (``_wrap``), the conversion of operands, and the creation functions. It
imports nothing else from duograd but ``_context``, ``_node`` and ``_versions``, whose listeners it tells of what
happens outside primitives (Tensors made from data, arrays derived from an argument,
random draws, writes to ``.grad`` and ``.data``, reads of a value into Python). The operators and methods (``+``, ``exp``,
``sum``, ``backward``, ...) call the primitives of ``rows/`` through ``ops.py`` and are bound
onto the class by ``methods.py``, the way JAX binds its array methods, so the reading order
``shapes -> _tensor -> autograd -> rows -> ops -> methods`` has no back-references.

How a Tensor is made, one way for each purpose:

- ``tensor(data)``: a new leaf that owns a copy of ``data`` (``Tensor(data)``, torch's legacy
  constructor, the same in the default float dtype);
  ``from_numpy(array)`` shares the array instead.
- ``_wrap(array)``: the engine's constructor, where a Tensor's fields are set (its one
  copy, inlined in ``Primitive.__call__`` for speed, is checked against it by a test).
- ``_as_tensor(x)`` / ``_lift_all(op, xs)``: operands as Tensors (a Tensor passes
  through, a number or array becomes a graph-less constant).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _context as _ctx, _versions
from ._node import LEAF, Node
from .shapes import ShapeError  # (shapes imports nothing from duograd at run time)
from ._context import Derive, Draw, SetGrad

_new = object.__new__
_ndarray = np.ndarray

# ---------------------------------------------------------------- dtypes
# Each is the NumPy dtype of the same name (``t.dtype == dg.float64 == np.float64``).
bool_ = np.dtype(np.bool_)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
_FLOAT64 = float64
_default_float = float64  # the dtype of Python floats (set_default_dtype)
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}  # torch's categories: bool < integer < floating
# A cast with history, ``ops.astype`` (set by ops.py: this module imports nothing from duograd).
_cast: Any = None


def set_default_dtype(dtype: Any) -> None:
    """Make ``dtype`` (float32 or float64) the dtype of Python floats and of float creation.

    >>> import duograd as dg
    >>> dg.set_default_dtype(dg.float32)
    >>> dg.tensor([1.5]).dtype, dg.get_default_dtype()
    (dtype('float32'), dtype('float32'))
    >>> dg.set_default_dtype(dg.float64)
    """
    global _default_float
    dt = _dtype_of(dtype, "set_default_dtype")
    if dt not in (float32, float64):
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {dt}")
    _default_float = dt
    _CONSTANTS.clear()


def get_default_dtype() -> np.dtype:
    """The dtype Python floats become (float64 unless ``set_default_dtype`` changed it).

    >>> import duograd as dg
    >>> dg.get_default_dtype()
    dtype('float64')
    """
    return _default_float


def _dtype_of(dtype: Any, op: str) -> np.dtype:
    """``dtype`` (a dg / NumPy dtype, ``float``, ``int``, ``bool`` or a name) as a NumPy dtype
    the engine holds, or a TypeError naming ``op``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{op}: {dtype!r} is not a dtype") from None
    if dt.kind not in "biuf":
        raise TypeError(f"{op}: unsupported dtype {dt}; expected bool, an integer or a float dtype")
    return dt


class device:
    """Where a tensor lives, as ``torch.device``: duograd computes on the CPU only. A CUDA
    device can be named (``dg.device("cuda:0")``, as torch builds one without a GPU), but
    making a tensor there raises torch's ``AssertionError``.

    >>> import duograd as dg
    >>> dg.device("cpu"), dg.zeros(2, device="cpu").device, dg.device("cuda", 1)
    (device(type='cpu'), device(type='cpu'), device(type='cuda', index=1))
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:  # noqa: A002 (torch's name)
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        self.type, self.index = _device_name(type)
        if index is not None:
            self.index = int(index)

    def __repr__(self) -> str:
        return f"device(type={self.type!r})" if self.index is None else \
            f"device(type={self.type!r}, index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (other.type, other.index) == (self.type, self.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


def _device_name(name: Any) -> tuple[str, int | None]:
    """``name`` ("cpu", "cpu:0", "cuda", "cuda:1") as a (type, index) pair."""
    if isinstance(name, str):
        kind, _, idx = name.partition(":")
        if kind in ("cpu", "cuda") and (not idx or idx.isdigit()):
            return kind, int(idx) if idx else None
    raise RuntimeError(f"device: duograd runs on the CPU only; expected 'cpu' (or a CUDA name, "
                       f"which no tensor can use), got {name!r}")


def _check_device(dev: Any) -> "device":
    """``dev`` (None, a name or a ``device``) as the CPU; a CUDA device raises torch's error
    for a build without CUDA."""
    if dev is None:
        return _CPU
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "cpu":
        raise AssertionError("Torch not compiled with CUDA enabled")
    return _CPU


_CPU = device("cpu")


def _check_grad(t: "Tensor", flag: Any, op: str) -> bool:
    """``flag`` as a bool; True on a tensor that is not floating raises, as torch."""
    if flag and t._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: only Tensors of floating point dtype can require gradients "
                           f"(this one is {t._data.dtype}, shape {t._data.shape})")
    return bool(flag)


def _as_array(data: Any, dtype: Any = None, op: str = "tensor", copy: bool = False) -> np.ndarray:
    """NumPy's view of ``data`` with torch's dtypes: arrays keep theirs; Python bools give bool,
    ints int64, floats the default float dtype. With ``copy`` the result never shares memory
    with ``data``."""
    if isinstance(data, Tensor):
        data = data._data
    want = None if dtype is None else _dtype_of(dtype, op)
    try:
        if isinstance(data, (np.ndarray, np.generic)):
            arr = np.array(data, dtype=want) if copy else np.asarray(data, dtype=want)
        else:
            arr = np.array(data) if want is None else np.array(data, dtype=want)
            if want is None and arr.dtype == float64 and _default_float is not float64:
                arr = arr.astype(_default_float)
            elif want is None and arr.dtype.kind in "iu" and arr.dtype != int64:
                arr = arr.astype(int64)  # Python ints are int64 (NumPy may pick another width)
    except (TypeError, ValueError, RuntimeError) as e:
        raise TypeError(f"{op}: cannot make a tensor from {type(data).__name__} ({e}); "
                        "expected numbers, nested lists of numbers or a NumPy array") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{op}: cannot make a tensor from data of dtype {arr.dtype}; "
                        "expected numbers, nested lists of numbers or a NumPy array")
    return arr


def _wrap(data: np.ndarray, requires_grad: bool = False, node: Any = None) -> "Tensor":
    """A new Tensor around ``data`` (not copied): the place where a Tensor's fields are
    set (``Primitive.__call__`` inlines this body; tests/engine/test_tensor_api.py holds the two
    to the same fields). Without ``node`` it is a leaf (one that requires grad when
    ``requires_grad``); ``node``: the graph node that made it.
    ``autograd.set_tangent`` owns ``_tangent`` after that."""
    t = _new(Tensor)
    t._data = data if type(data) is _ndarray else np.asarray(data)
    t._grad = t._tangent = None
    t._node = node if node is not None else LEAF if requires_grad else None
    if _ctx.on_create:
        _ctx.created(t)
    return t


def _derive(fn: Any, source: Any, **kw: Any) -> np.ndarray:
    """``fn(source, **kw)``, an array computed from ``source`` outside the primitives (a
    conversion, a check of class labels). A ``dg.compile`` recording notes it, so that a
    replay computes it again from that call's argument instead of freezing it."""
    if isinstance(source, Tensor):
        source = source._data
    out = fn(source, **kw)
    if isinstance(out, np.generic):  # an array, so that the recording knows it when read
        out = np.asarray(out)
    if _ctx.on_effect:  # (also when out is source: fn may check it, as labels are)
        _ctx.effect(Derive(source, fn, kw, out))
    return out


def _draw(fn: Any, *args: Any) -> np.ndarray:
    """``fn(*args)``, an array drawn afresh on every call (random numbers, a dropout
    mask). A ``dg.compile`` recording notes it, so that a replay draws again, from the same
    generator, instead of reusing the recorded draw."""
    out = fn(*args)
    if type(out) is not np.ndarray:  # a 0-d draw may come back as a NumPy scalar: an array,
        out = np.asarray(out)        # so that the recording knows it when an op reads it
    if _ctx.on_effect:
        _ctx.effect(Draw(fn, args, out))
    return out


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

    ``Tensor(data)`` is torch's legacy constructor: a new leaf holding a copy of ``data`` in the
    default float dtype (``dg.tensor`` infers the dtype); ``Tensor(2, 3)`` a (2, 3) tensor of
    zeros; ``requires_grad=``, ``device=`` and (not torch's) ``dtype=`` are keywords.

    >>> import duograd as dg
    >>> x = dg.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad.numpy()
    array([[2., 4.]])
    """

    # _node: the graph node that made it (``grad_fn``), ``LEAF`` for a leaf that requires
    # grad, None for a tensor that needs no gradient (``requires_grad`` reads it).
    __slots__ = ("_data", "_grad", "_node", "_tangent", "__weakref__")
    # Comparisons are elementwise (methods.py), so identity hashing is kept explicitly:
    # the engine keys its dicts and sets by Tensor.
    __hash__ = object.__hash__

    def __new__(cls, *args: Any, requires_grad: bool = False, dtype: Any = None,
                device: Any = None) -> "Tensor":
        # torch's legacy constructor: Tensor(data) in the default float dtype (whatever the
        # data's dtype), Tensor(*sizes) a tensor of that shape (zeros; torch leaves it
        # uninitialised), Tensor() an empty one. ``dtype=`` (not torch's) overrides.
        if not args:
            data: Any = []
        elif all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in args) \
                or len(args) == 1 and isinstance(args[0], Size):
            shape = tuple(int(a) for a in (args[0] if isinstance(args[0], Size) else args))
            return _made(np.zeros(shape, _float_dtype(dtype, "Tensor")), requires_grad, device, "Tensor")
        elif len(args) == 1:
            data = args[0]
        else:
            raise TypeError(f"Tensor(): expected data or sizes (ints), got {len(args)} arguments "
                            f"of types {', '.join(type(a).__name__ for a in args)}")
        return _leaf(data, requires_grad, _default_float if dtype is None else dtype, device)

    # ------------------------------------------------------------ gradient
    @property
    def grad(self) -> "Tensor | None":
        """The gradient accumulated by ``backward``, a Tensor of this tensor's shape, or None."""
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if _ctx.on_effect:
            _ctx.effect(SetGrad(self, value))
        self._grad = value

    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor (a computed tensor requires grad
        when one of its inputs did)."""
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        node = self._node
        if node is not None and node is not LEAF:
            if flag:
                return
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        self._node = LEAF if flag else None

    @property
    def grad_fn(self) -> "Node | None":
        """The graph node that made this tensor (None for a leaf), as torch's:
        ``name()``, ``next_functions``, ``register_hook``.

        >>> import duograd as dg
        >>> y = dg.tensor([1.0], requires_grad=True) * 2
        >>> y.grad_fn.name()
        'MulBackward0'
        """
        node = self._node
        return None if node is None or node is LEAF else node

    # ------------------------------------------------------------ state
    @property
    def data(self) -> "Tensor":
        """The values as a Tensor without history that shares this tensor's memory, as
        torch's ``.data``: ``t.data.add_(1)`` changes ``t`` and bumps no version that ``t``'s
        graph checks (the new tensor has a counter of its own). Assigning a Tensor or a
        NumPy array of the same shape replaces the values (a documented extension: torch
        takes a Tensor).

        >>> import duograd as dg
        >>> w = dg.tensor([1.0, 2.0], requires_grad=True)
        >>> _ = w.data.mul_(2)
        >>> w.detach().numpy(), w._version
        (array([2., 4.]), 0)
        """
        return _wrap(_derive(_versions.fresh_root, self._data))  # (a replay: of its argument)

    @data.setter
    def data(self, value: Any) -> None:
        arr = _as_array(value, op="Tensor.data")
        if arr.dtype.kind != "f" and self.requires_grad:
            arr = arr.astype(self._data.dtype)  # a tensor that requires grad stays floating
        if arr.shape != self._data.shape:
            raise ValueError(f"Tensor.data: cannot assign an array of shape {arr.shape} "
                             f"to a tensor of shape {self._data.shape}")
        self._data = arr
        if _ctx.on_write:  # after the write: a recording takes the new values as an effect
            _ctx.write(self, "assigning .data")

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
        """Whether no operation recorded by autograd made this tensor (torch's rule: every
        tensor that does not require grad is a leaf)."""
        node = self._node
        return node is None or node is LEAF

    @property
    def device(self) -> "device":
        """Where the values live: always ``dg.device("cpu")``."""
        return _CPU

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's memory has had (0 for a new tensor). Views
        share their base's counter, as torch's do: the counter belongs to the memory."""
        return _versions.version(self._data)

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shared, not copied). A tensor that requires grad
        raises, as torch's does: a plain array would silently leave the graph, so say so
        with ``.detach().numpy()``.

        >>> import duograd as dg
        >>> dg.tensor([1.0, 2.0]).numpy()
        array([1., 2.])
        """
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if _ctx.on_read:
            _ctx.read(self, "numpy()")
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.asarray(t)``: the values, with ``numpy()``'s rule for a tensor that requires grad."""
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if _ctx.on_read:
            _ctx.read(self, "np.asarray()")
        arr = self._data if dtype is None else self._data.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def item(self) -> float:
        """The single value of a one-element tensor, as a Python number."""
        return self._single("item")

    def _single(self, what: str) -> Any:
        """The one value, for ``item()`` and ``float()`` (named in the error and warning)."""
        if self._data.size != 1:
            raise ShapeError(f"{what}: only a one-element tensor has a single value; this one "
                             f"has shape {self.shape}")
        if _ctx.on_read:
            _ctx.read(self, f"{what}()")
        return self._data.item()

    def tolist(self) -> Any:
        """The values as nested Python lists (a number for a 0-d tensor)."""
        if _ctx.on_read:
            _ctx.read(self, "tolist()")
        return self._data.tolist()

    def __float__(self) -> float:
        return float(self._single("float"))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ShapeError(f"bool: the truth value of a tensor of shape {self.shape} is "
                             "ambiguous; use .numpy().any() or .numpy().all()")
        if _ctx.on_read:
            _ctx.read(self, "bool()")
        return bool(self._data)

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __iter__(self) -> Any:
        """The sub-tensors along the first dimension, as torch's; a 0-d tensor raises."""
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self._data)))

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place and return the tensor (only a floating tensor can
        require grad, as in torch)."""
        self.requires_grad = _check_grad(self, requires_grad, "requires_grad_")
        return self

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a one-element tensor formats its value, as torch's 0-d tensors do;
        without a format spec, any tensor formats as ``str``."""
        if not spec:
            return str(self)
        if self._data.ndim == 0:
            return format(self._single("format"), spec)
        raise TypeError(f"unsupported format string passed to Tensor.__format__: a tensor of "
                        f"shape {self.shape} has no single value to format with {spec!r}")

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        fn = self.grad_fn
        extra = (f", grad_fn=<{fn.name()}>" if fn is not None else
                 ", requires_grad=True" if self.requires_grad else "")
        if self._data.dtype not in (_default_float, int64, bool_):
            extra += f", dtype={self._data.dtype}"
        return f"tensor({body}{extra})"


# ---------------------------------------------------------------- operands

_CONSTANTS: dict = {}

# The ids of the arrays of the 0-d Tensors that stand for Python numbers while a
# ``dg.compile`` recording runs: its number arguments' stand-ins, what is computed from them
# alone and the numbers the engine lifts (``_number``). ``_result_type`` ranks them as the
# Python numbers they stand for (torch's "wrapped numbers"): a float32 tensor times a
# stand-in stays float32. Empty outside such a recording (``capture.recording.Recorder``).
_WEAK: set = set()


def _number(x: Any, dtype: np.dtype) -> Tensor:
    """A Python number as a graph-less 0-d constant of ``dtype``, shared between calls
    (they recur: 1 - x, x * 0.5); that is safe because a constant never requires grad,
    never gets a tangent and is never written to. Zero is not shared, so -0.0 keeps its
    sign, and neither is nan."""
    key = (x, dtype)
    t = _CONSTANTS.get(key)
    if t is None:
        t = _wrap(np.array(x, dtype=dtype))
        if x and x == x:
            if len(_CONSTANTS) > 4096:
                _CONSTANTS.clear()
            _CONSTANTS[key] = t
    if _WEAK:
        _WEAK.add(id(t._data))
    return t


def _number_dtype(x: Any) -> np.dtype | None:
    """The dtype torch gives the Python number ``x`` on its own, or None if it is not one."""
    if isinstance(x, (bool, np.bool_)):
        return bool_
    if isinstance(x, (int, np.integer)):
        return int64
    if isinstance(x, (float, np.floating)):
        return _default_float
    return None


def _as_tensor(x: Any, dtype: Any = None, op: str = "tensor") -> Tensor:
    """``x`` itself if it is a Tensor, else a graph-less constant of it: of ``dtype`` when
    given, else with torch's inference (a Python float takes the default float dtype, an
    int int64, an array keeps its dtype)."""
    if isinstance(x, Tensor):
        return x
    if type(x) is float or type(x) is int or isinstance(x, (bool, np.number, np.bool_)) \
            and not isinstance(x, np.complexfloating):
        return _number(x, _number_dtype(x) if dtype is None else np.dtype(dtype))
    if isinstance(x, (np.ndarray, list, tuple)):
        try:
            arr = _derive(_as_array, x, dtype=dtype, op=op) if isinstance(x, np.ndarray) \
                else _as_array(x, dtype, op)
        except TypeError as e:
            raise TypeError(f"{op}: {e}; expected a Tensor, a number or a NumPy array of "
                            "numbers") from None
        return _wrap(arr)
    raise TypeError(f"{op}: unsupported operand type {type(x).__name__}; expected a "
                    "Tensor, a number or a NumPy array")


def _lift_all(op: str, args: tuple, rule: str = "elementwise") -> tuple[Tensor, ...]:
    """Operands of ``op`` as Tensors of one dtype, by torch's promotion (``result_type``): the
    one place where an operation's dtype is decided. ``rule`` is the op row's fact
    (``Primitive.promote``): "elementwise" (torch's table), or "matmul" (torch's products
    need one category: an integer with a float operand, or a bool one, raises torch's
    error; two float dtypes give the wider, a documented difference from torch).

    The common case first and cheaply: a float Tensor with a Python number (``x * 2``,
    ``1 - x``) gives the number the Tensor's dtype."""
    if rule == "matmul":
        return _promote_matmul(op, args)
    if len(args) == 2:
        a, b = args
        if type(a) is Tensor:
            if type(b) is float or type(b) is int:
                dt = a._data.dtype
                if dt.kind == "f":
                    return a, _number(b, dt)
            elif type(b) is Tensor:
                da, db = a._data.dtype, b._data.dtype
                # One dtype, or a bool mask (NumPy keeps the other dtype, as torch's table).
                if da is db or (da.kind == "b" or db.kind == "b") and op != "sub" and not _WEAK:
                    return args
            elif type(b) is _ndarray and b.dtype == a._data.dtype and b.dtype.kind == "f":
                return a, _wrap(_derive(_operand_array, b, dtype=b.dtype))  # one float dtype
        elif type(b) is Tensor:
            if type(a) is float or type(a) is int:
                dt = b._data.dtype
                if dt.kind == "f":
                    return _number(a, dt), b
            elif type(a) is _ndarray and a.dtype == b._data.dtype and a.dtype.kind == "f":
                return _wrap(_derive(_operand_array, a, dtype=a.dtype)), b
    elif len(args) == 1 and type(args[0]) is Tensor:  # one Tensor keeps its dtype
        return args
    return _promote(op, args)


def result_type(*operands: Any) -> np.dtype:
    """The dtype of an elementwise operation on ``operands``, by torch's rule: categories
    bool < integer < floating; within the highest category, a dimensioned tensor decides
    over 0-d tensors, and those over Python numbers; a number of a higher category than
    every tensor gives that category's default (int64, or the default float dtype).

    >>> import duograd as dg
    >>> dg.result_type(dg.tensor([1, 2]), 2.5), dg.result_type(dg.ones(2, dtype=dg.float32), dg.tensor(1.0))
    (dtype('float64'), dtype('float32'))
    """
    return _result_type(operands, "result_type")


def _result_type(args: Any, op: str) -> np.dtype:
    dims: list = []
    zeros: list = []
    num_cat = -1
    for a in args:
        if isinstance(a, Tensor):
            a = a._data
            if _WEAK and id(a) in _WEAK:  # a stand-in for a Python number: ranked as one
                num_cat = max(num_cat, _CATEGORY[a.dtype.kind])
                continue
        if isinstance(a, np.ndarray):
            (dims if a.ndim else zeros).append(a.dtype)
            continue
        dt = _number_dtype(a)
        if dt is None:
            if isinstance(a, (list, tuple)):
                arr = _as_array(a, op=op)
                (dims if arr.ndim else zeros).append(arr.dtype)
                continue
            raise TypeError(f"{op}: unsupported operand type {type(a).__name__}; expected a "
                            "Tensor, a number or a NumPy array")
        num_cat = max(num_cat, _CATEGORY[dt.kind])
    res, cat = None, -1
    for group in (dims, zeros):
        if group:
            top = max(_CATEGORY.get(d.kind, 3) for d in group)
            if top == 3:
                bad = next(d for d in group if d.kind not in _CATEGORY)
                raise TypeError(f"{op}: unsupported operand of dtype {bad}")
            if top > cat:
                same = [d for d in group if _CATEGORY[d.kind] == top]
                res, cat = (same[0] if len(same) == 1 else np.result_type(*same)), top
    if num_cat > cat:
        res = (bool_, int64, _default_float)[num_cat]
    return res


def _promote(op: str, args: tuple) -> tuple[Tensor, ...]:
    """Every operand as a Tensor of torch's result dtype. Bool Tensors are left as they are
    (NumPy computes with them as 0 and 1 and keeps the other dtype; a condition stays a
    condition); a Tensor of another dtype gets a cast with history."""
    res = _result_type(args, op)
    if op == "sub" and any(isinstance(a, (bool, np.bool_)) or getattr(a, "dtype", None) == bool_
                           for a in args):
        raise RuntimeError("sub: Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    out = []
    for a in args:
        if isinstance(a, Tensor):
            dt = a._data.dtype
            if dt != res and dt.kind != "b":
                a = _cast(a, res)
        elif isinstance(a, np.ndarray):
            a = _wrap(_derive(_operand_array, a, dtype=res))
        elif isinstance(a, (list, tuple)):
            a = _wrap(_operand_array(_as_array(a, op=op), res))
        else:
            a = _number(a, res)
        out.append(a)
    return tuple(out)


_TORCH_DTYPE_NAMES = {"b": "bool", "int32": "int", "int64": "long int", "float32": "float",
                      "float64": "double", "int16": "short int", "uint8": "unsigned char"}


def _promote_matmul(op: str, args: tuple) -> tuple[Tensor, ...]:
    """``_lift_all``'s "matmul" rule: every operand a Tensor of one dtype."""
    ts = tuple(a if isinstance(a, Tensor) else _as_tensor(a, op=op) for a in args)
    dts = [t._data.dtype for t in ts]
    if all(d is dts[0] for d in dts):
        if dts[0].kind == "b":
            raise NotImplementedError(f"{op}: \"addmm_impl_cpu_\" not implemented for 'Bool'")
        return ts
    cats = {_CATEGORY.get(d.kind, 3) for d in dts}
    if len(cats) > 1 or 0 in cats:
        a, b = (d for d in dts if d != dts[0]).__next__(), dts[0]
        name = lambda d: _TORCH_DTYPE_NAMES.get("b" if d.kind == "b" else str(d), str(d))  # noqa: E731
        raise RuntimeError(f"{op}: expected m1 and m2 to have the same dtype, but got: "
                           f"{name(b)} != {name(a)}")
    res = _result_type(ts, op)
    return tuple(t if t._data.dtype == res else _cast(t, res) for t in ts)


def _operand_array(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An array operand in the operation's dtype (bool kept, see ``_promote``)."""
    return arr if arr.dtype == dtype or arr.dtype.kind == "b" else arr.astype(dtype)


# ---------------------------------------------------------------- creation

def _leaf(data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> Tensor:
    """A new leaf holding a copy of ``data`` (``tensor``'s body; ``nn.Parameter`` uses it too)."""
    _check_device(device)
    if isinstance(data, (Tensor, np.ndarray)):
        arr = _derive(_as_array, data, dtype=dtype, copy=True)
    else:  # numbers and lists are values of the call, not arrays that can change
        arr = _as_array(data, dtype, copy=True)
    t = _wrap(arr)
    t.requires_grad = _check_grad(t, requires_grad, "tensor")
    return t


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A new leaf Tensor holding a copy of ``data`` (changing ``data`` afterwards never
    changes it), as ``torch.tensor``. Without ``dtype``: Python bools give bool, ints
    int64, floats the default float dtype (float64); an array keeps its dtype.

    >>> import duograd as dg
    >>> a = np.array([1.0, 2.0])
    >>> t = dg.tensor(a)
    >>> a[0] = 99.0
    >>> t.numpy(), dg.tensor([1, 2]).dtype, dg.tensor([1, 2], dtype=dg.float32).dtype
    (array([1., 2.]), dtype('int64'), dtype('float32'))
    """
    return _leaf(data, requires_grad, dtype, device)


def from_numpy(array: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A leaf Tensor sharing memory with ``array`` (any bool, integer or float dtype), as
    ``torch.from_numpy``: changes to either are seen by the other (an optimizer step
    included). ``requires_grad`` (not in torch's signature) makes it a leaf that requires grad.

    >>> import duograd as dg
    >>> a = np.zeros(2)
    >>> t = dg.from_numpy(a)
    >>> a[0] = 5.0
    >>> t.numpy(), dg.from_numpy(np.arange(3)).dtype
    (array([5., 0.]), dtype('int64'))

    Inside ``dg.compile``'s recording an array argument arrives as a Tensor (a leaf of no
    history around the array): from_numpy takes it as its array, so that ``fn`` runs as it
    does eagerly (and a replay reads that call's array).

    >>> dg.compile(lambda a: dg.from_numpy(a) * 2)(np.ones(2)).tolist()
    [2.0, 2.0]
    """
    if type(array) is Tensor and array._node is None and \
            any(getattr(lst, "records", False) for lst in _ctx._stack):
        array = array._data  # (a recording's array argument; eagerly a Tensor is refused)
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise TypeError(f"from_numpy: expected a NumPy array of bool, integer or float dtype, "
                        f"got {kind}")
    return _made(array, requires_grad, None, "from_numpy")


def _shape_of(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    for n in shape:
        if type(n) is not int:
            return tuple(int(n) for n in shape)
    return shape


def _made(data: np.ndarray, requires_grad: Any, device: Any, op: str) -> Tensor:
    """A new leaf of a creation function, with its ``requires_grad`` and ``device`` checked."""
    _check_device(device)
    t = _wrap(data)
    t.requires_grad = _check_grad(t, requires_grad, op)
    return t


def _float_dtype(dtype: Any, op: str) -> np.dtype:
    return _default_float if dtype is None else _dtype_of(dtype, op)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A Tensor of zeros: ``dg.zeros((2, 3))`` or ``dg.zeros(2, 3)`` (the default float dtype).

    >>> import duograd as dg
    >>> dg.zeros((2, 3)).shape, dg.zeros(2, dtype=dg.int64).dtype
    ((2, 3), dtype('int64'))
    """
    return _made(np.zeros(_shape_of(size), dtype=_float_dtype(dtype, "zeros")), requires_grad,
                 device, "zeros")


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A Tensor of ones: ``dg.ones((2, 3))`` or ``dg.ones(2, 3)`` (the default float dtype).

    >>> import duograd as dg
    >>> float(dg.ones(3).sum())
    3.0
    """
    return _made(np.ones(_shape_of(size), dtype=_float_dtype(dtype, "ones")), requires_grad,
                 device, "ones")


def _like(t: Any, dtype: Any, op: str) -> tuple[tuple[int, ...], np.dtype]:
    arr = _as_tensor(t, op=op)._data
    return arr.shape, arr.dtype if dtype is None else _dtype_of(dtype, op)


def zeros_like(input: Any, dtype: Any = None, requires_grad: bool = False,  # noqa: A002
               device: Any = None) -> Tensor:
    """Zeros of ``input``'s shape and dtype (or ``dtype``).

    >>> import duograd as dg
    >>> dg.zeros_like(dg.ones(2, dtype=np.float32)).dtype
    dtype('float32')
    """
    shape, dt = _like(input, dtype, "zeros_like")
    return _made(np.zeros(shape, dt), requires_grad, device, "zeros_like")


def ones_like(input: Any, dtype: Any = None, requires_grad: bool = False,  # noqa: A002
              device: Any = None) -> Tensor:
    """Ones of ``input``'s shape and dtype (or ``dtype``).

    >>> import duograd as dg
    >>> dg.ones_like(dg.zeros(2)).numpy()
    array([1., 1.])
    """
    shape, dt = _like(input, dtype, "ones_like")
    return _made(np.ones(shape, dt), requires_grad, device, "ones_like")


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           requires_grad: bool = False, device: Any = None) -> Tensor:
    """Evenly spaced values in [start, end): int64 when every argument is an int, else the
    default float dtype, as torch.

    >>> import duograd as dg
    >>> dg.arange(3), dg.arange(0, 1, 0.5)
    (tensor([0, 1, 2]), tensor([0. , 0.5]))
    """
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) or
               isinstance(v, Tensor) and v.dtype.kind in "iu" for v in (start, end, step))
    dt = (int64 if ints else _default_float) if dtype is None else _dtype_of(dtype, "arange")
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign "
                           f"(start {start}, end {end}, step {step})")
    vals = [float(v) if not ints else int(v) for v in (start, end, step)]
    n = max(0, math.ceil((vals[1] - vals[0]) / vals[2]))  # torch's count: computed in double
    data = (vals[0] + np.arange(n, dtype=np.float64 if not ints else np.int64) * vals[2]).astype(dt)
    return _made(data, requires_grad, device, "arange")


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, requires_grad: bool = False,
             device: Any = None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (the default float
    dtype).

    >>> import duograd as dg
    >>> dg.linspace(0, 1, 3).numpy()
    array([0. , 0.5, 1. ])
    """
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
        raise RuntimeError(f"linspace: number of steps must be a non-negative int, got {steps!r}")
    dt = _float_dtype(dtype, "linspace")
    # torch's formula, in the result's dtype: the first half counts up from start, the
    # second half down from end (NumPy's linspace can differ from it in the last bit).
    n = int(steps)
    lo, hi = dt.type(start), dt.type(end)
    i = np.arange(n)
    step = (hi - lo) / dt.type(max(n - 1, 1))
    data = np.where((i < n // 2) | (n == 1), lo + step * i.astype(dt), hi - step * (n - 1 - i).astype(dt))
    return _made(data.astype(dt, copy=False), requires_grad, device, "linspace")
