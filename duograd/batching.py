"""The batching interpreter behind ``func.vmap``: batched tensors and the rows' batching rules.

Inside ``vmap`` each mapped input becomes a ``BatchedTensor``: a Tensor that *looks* like one
example (its ``shape``, ``dtype``, graph node and tangents are the example's) and holds the
whole batch in ``_value``, a Tensor whose first dimension is the batch. Every batched tensor
belongs to one vmap *level*; nested ``vmap`` calls get higher levels, and a level's
``_value`` may itself be batched at a lower level, so nesting is the same rule applied again.

``Primitive.__call__`` hands a call with a batched operand to ``dispatch`` (only while a vmap
is active: ``_context.batch_levels``). It takes the innermost level present, unwraps the
operands of that level, runs the row's batching rule (``Primitive.batch``, or one derived
from the row's other facts, or the loop fallback that warns once per op) on the values,
wraps the result at the same level, and records the call as one node of the example's
graph (``engine._record``). That is why ``vmap(grad(f))`` works: ``grad`` inside ``vmap``
differentiates the graph of one example, whose VJP rules then run batched in turn.

A rule is ``rule(args, dims, **kw) -> (out, out_dim)``: ``args`` the values (a batched input
has its batch dimension at ``dims[i]``, which this interpreter keeps at 0; an input that is
not batched has ``dims[i]`` None), ``kw`` the call's keyword parameters in the example's
terms. The derived rules:

- elementwise rows (``jvp == "elementwise"``, the comparisons and other selectors, the
  arithmetic): every batched operand gets its batch dimension in front and ones to the
  example's rank, and NumPy's broadcasting does the rest;
- reductions and running ops with an ``axis`` keyword: the axes shift by one;
- ``reshape`` (``shape``), ``transpose`` (``axes``), ``broadcast_to``: the batch dimension
  is put in front of the keyword;
- explicit rules for ``matmul``, ``linear``, ``getitem``, ``concatenate`` and ``where``.

>>> import duograd as dg
>>> dg.func.vmap(lambda x: x.sum())(dg.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
array([3., 7.])
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from . import _context as _ctx
from . import ops
from ._tensor import Tensor, _lift_all, _new
from .autograd import engine
from .autograd.engine import ELEMENTWISE, LINEAR, Primitive, Variadic

__all__ = ["BatchedTensor", "ValueAccessError", "dispatch", "elementwise_rule", "unary_rule", "warned"]


class ValueAccessError(RuntimeError):
    """A batched tensor's values were read into Python or NumPy inside ``vmap``."""


_ACCESS = ("vmap: a batched tensor's values were read as an array inside vmap (the values "
           "differ across the batch); this operation is not supported under vmap")


class _Placeholder(np.ndarray):
    """A batched tensor's ``_data``: the example's shape and dtype and no memory. Its values
    mean nothing, so every NumPy function or ufunc applied to it raises instead of
    computing garbage (a library function that reads ``_data`` directly); what
    ``np.asarray`` lets through (it takes a subclass's memory without asking) is NaN, or the
    most negative integer (an index out of every range)."""

    def __array_ufunc__(self, *args: Any, **kw: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def __array_function__(self, *args: Any, **kw: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def __getitem__(self, key: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def astype(self, *args: Any, **kw: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def tolist(self) -> Any:
        raise ValueAccessError(_ACCESS)

    def item(self, *args: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def __iter__(self) -> Any:
        raise ValueAccessError(_ACCESS)

    def copy(self, *args: Any, **kw: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def __bool__(self) -> bool:
        raise ValueAccessError(_ACCESS)

    def __float__(self) -> float:
        raise ValueAccessError(_ACCESS)

    def __int__(self) -> int:
        raise ValueAccessError(_ACCESS)

    def __index__(self) -> int:
        raise ValueAccessError(_ACCESS)

    # the methods that make a new view of the memory (an in-place shape change on a batched
    # tensor, ``write_shape``/``resize_``): they would reshape the example and not the batch
    def reshape(self, *args: Any, **kw: Any) -> Any:
        raise ValueAccessError(_ACCESS)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise ValueAccessError(_ACCESS)

    reshape = transpose = swapaxes = squeeze = ravel = flatten = view = fill = resize = reshape

    @property
    def T(self) -> Any:  # noqa: N802 (NumPy's name)
        raise ValueAccessError(_ACCESS)

    def __repr__(self) -> str:
        return f"<batched placeholder shape={self.shape} dtype={self.dtype}>"

    __str__ = __repr__


_buffers: dict = {}


def _placeholder(shape: tuple, dtype: np.dtype) -> np.ndarray:
    buf = _buffers.get(dtype)
    if buf is None:  # a value that shows itself where it leaks (np.asarray sees no hook)
        kind = dtype.kind
        fill = np.nan if kind in "fc" else np.iinfo(dtype).min if kind == "i" else \
            np.iinfo(dtype).max if kind == "u" else 0
        buf = _buffers[dtype] = np.full(1, fill, dtype=dtype)
    return np.ndarray.__new__(_Placeholder, shape, dtype, buf, 0, (0,) * len(shape))


class BatchedTensor(Tensor):
    """One example's view of a batch inside ``func.vmap``: ``shape`` is the example's,
    ``_value`` holds the batch (batch dimension first), ``_level`` the vmap level."""

    __slots__ = ("_value", "_level")

    def numpy(self) -> np.ndarray:
        raise ValueAccessError("vmap: numpy() of a batched tensor inside vmap is not supported: "
                           "the values differ across the batch (return it from the function "
                           "instead)")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.numpy()

    @property
    def data(self) -> "BatchedTensor":
        """The batch without history, sharing its memory (``Tensor.data`` per example)."""
        return wrap(self._value.data, self._level)

    @data.setter
    def data(self, value: Any) -> None:
        raise ValueAccessError("vmap: assigning .data of a batched tensor inside vmap is not "
                               "supported")

    def _single(self, what: str) -> Any:
        raise ValueAccessError(f"vmap: It looks like you're calling .{what}() on a Tensor inside "
                           "vmap. We don't support vmap over calling .item() on a Tensor, "
                           "since its value differs across the batch")

    def tolist(self) -> Any:
        return self._single("tolist")

    def __bool__(self) -> bool:
        raise ValueAccessError("vmap: It looks like you're attempting to use a Tensor in some "
                           "data-dependent control flow. We don't support that yet")

    def __repr__(self) -> str:
        return f"BatchedTensor(level={self._level}, example shape={tuple(self.shape)}, value={self._value!r})"


def wrap(value: Tensor, level: int) -> BatchedTensor:
    """``value`` (batch dimension first) as a batched tensor of ``level``."""
    t = _new(BatchedTensor)
    shape = value.shape[1:]
    t._data = _placeholder(tuple(shape), value.dtype)
    t._grad = t._tangent = None
    t._node = None
    t._value = value
    t._level = level
    return t


def batch_size(level: int) -> int:
    for lvl, size in _ctx.batch_levels:
        if lvl == level:
            return size
    raise RuntimeError("vmap: a batched tensor escaped the vmap that made it (it was kept after "
                       "the function returned, or captured by a closure); return it instead")


def movedim(x: Tensor, src: int, dst: int) -> Tensor:
    if src == dst:
        return x
    order = list(range(x.ndim))
    order.insert(dst, order.pop(src))
    return ops.transpose_p(x, axes=tuple(order))


def _lead(v: Tensor, rank: int) -> Tensor:
    """A value (batch first) with ones inserted after the batch dimension up to ``rank``
    example dimensions, so that it broadcasts against examples of that rank."""
    have = v.ndim - 1
    if have >= rank:
        return v
    return ops.reshape_p(v, shape=(v.shape[0],) + (1,) * (rank - have) + tuple(v.shape[1:]))


def _expand(v: Tensor, size: int) -> Tensor:
    """An unbatched value repeated along a new batch dimension in front."""
    return ops.broadcast_to_p(v, shape=(size,) + tuple(v.shape))


# ---------------------------------------------------------------- rules

def elementwise_rule(op: Primitive) -> Callable:
    def rule(args, dims, **kw):
        rank = max((a.ndim - (d is not None) for a, d in zip(args, dims)), default=0)
        vals = [_lead(a, rank) if d is not None else a for a, d in zip(args, dims)]
        return op(*vals, **kw), 0
    return rule


def unary_rule(op: Primitive) -> Callable:
    def rule(args, dims, **kw):
        return op(*args, **kw), dims[0]
    return rule


def _norm_axes(axis: Any, nd: int) -> Any:
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(a % nd + 1 if nd else a + 1 for a in axis)
    return axis % nd + 1 if nd else axis + 1


def _arg_rule(op: Primitive) -> Callable:
    """argmax / argmin: an int ``axis`` shifts; None (the flat index) flattens each example."""
    def rule(args, dims, axis=None, **kw):
        (x,) = args
        nd = x.ndim - 1
        if nd == 0:
            raise NotImplementedError
        if axis is None:
            if kw.get("keepdims"):
                raise NotImplementedError
            return op(ops.reshape_p(x, shape=(x.shape[0], -1)), axis=1, **kw), 0
        return op(x, axis=axis % nd + 1, **kw), 0
    return rule


def axis_rule(op: Primitive) -> Callable:
    """A one-input op whose ``axis`` keyword names example axes (None: all)."""
    def rule(args, dims, **kw):
        (x,) = args
        nd = x.ndim - 1
        ax = kw.get("axis")
        kw = dict(kw)
        if nd == 0 and ax is not None and ax != ():  # axis 0 / -1 of a 0-d example: of (B, 1)
            kw["axis"] = (1,) if isinstance(ax, (tuple, list)) else 1
            out = op(ops.reshape_p(x, shape=(x.shape[0], 1)), **kw)
            return ops.reshape_p(out, shape=(x.shape[0],)), 0
        if ax is None:
            kw["axis"] = tuple(range(1, nd + 1))
        else:
            kw["axis"] = _norm_axes(ax, nd)
        return op(x, **kw), 0
    return rule


def _reshape_rule(args, dims, shape):
    (x,) = args
    return ops.reshape_p(x, shape=(x.shape[0],) + tuple(shape)), 0


def _transpose_rule(args, dims, axes):
    (x,) = args
    return ops.transpose_p(x, axes=(0,) + tuple(a + 1 for a in axes)), 0


def _broadcast_rule(args, dims, shape):
    (x,) = args
    x = _lead(x, len(shape))
    return ops.broadcast_to_p(x, shape=(x.shape[0],) + tuple(shape)), 0


def _is_advanced(i: Any) -> bool:
    return isinstance(i, (np.ndarray, list)) or (isinstance(i, Tensor))


def _index_shifts(idx: tuple, basic: bool) -> bool:
    """Whether a leading full slice keeps the batch dimension first for this index."""
    if any(isinstance(i, Tensor) for i in idx):
        return False
    if basic:
        return True
    # NumPy puts the advanced indices' dimensions first when they are not adjacent; a
    # leading slice keeps the batch first only when they are.
    if any(isinstance(i, (bool, np.bool_)) or isinstance(i, np.ndarray) and i.dtype == bool
           for i in idx):
        return False
    pos = [k for k, i in enumerate(idx) if _is_advanced(i) or isinstance(i, (int, np.integer))]
    return not pos or pos == list(range(pos[0], pos[-1] + 1))


def _getitem_rule(args, dims, index, basic):
    (x,) = args
    idx = index if isinstance(index, tuple) else (index,)
    if not _index_shifts(idx, basic):
        raise NotImplementedError
    return ops.getitem_p(x, index=(slice(None),) + idx, basic=basic), 0


def _scatter_add_rule(args, dims, index, shape, basic):
    (g,) = args
    idx = index if isinstance(index, tuple) else (index,)
    if not _index_shifts(idx, basic):
        raise NotImplementedError
    return ops.scatter_add_p(g, index=(slice(None),) + idx, shape=(g.shape[0],) + tuple(shape),
                             basic=basic), 0


def _concat_rule(args, dims, axis):
    size = next(a.shape[0] for a, d in zip(args, dims) if d is not None)
    vals = [a if d is not None else _expand(a, size) for a, d in zip(args, dims)]
    nd = vals[0].ndim - 1
    return ops.concatenate_p(*vals, axis=axis % nd + 1), 0


def _matmul_values(x, dx, y, dy, op=None):
    """Batched ``x @ y`` (values, dims 0 or None): ranks made at least 2, batch in front."""
    nx, ny = x.ndim - (dx is not None), y.ndim - (dy is not None)
    if nx == 0 or ny == 0:
        raise ValueError("matmul: both operands need at least one dimension")
    sq = []
    if nx == 1:
        x = ops.reshape_p(x, shape=tuple(x.shape[:-1]) + (1, x.shape[-1]))
        nx, _ = 2, sq.append(-2)
    if ny == 1:
        y = ops.reshape_p(y, shape=tuple(y.shape) + (1,))
        ny, _ = 2, sq.append(-1)
    rank = max(nx, ny)
    if dx is not None:
        x = _lead(x, rank)
    if dy is not None:
        y = _lead(y, rank)
    if dx is None and nx > ny:  # the batch must stand left of every example dimension of x
        y = _lead(y, rank)
    if dy is None and ny > nx:
        x = _lead(x, rank)
    if x.shape[-1] == 1 and y.shape[-2] == 1 and not sq:
        # an outer product per example (a per-sample weight gradient): one product per
        # element either way, and NumPy's stacked matmul of 1-wide matrices is the slower
        out = ops.mul_p(x, y)
    else:
        out = ops.matmul_p(x, y)
    if sq:
        shape = tuple(out.shape)
        out = ops.reshape_p(out, shape=shape[:-2] if len(sq) == 2 else
                            shape[:-2] + shape[-1:] if sq == [-2] else shape[:-1])
    return out


def _matmul_rule(args, dims):
    (x, y), (dx, dy) = args, dims
    if dy is None and dx is not None and y.ndim <= 2:  # one product of the stacked examples
        return ops.matmul_p(x, y), 0
    return _matmul_values(x, dx, y, dy), 0


def _linear_rule(args, dims):
    (x, w), (dx, dw) = args, dims
    if dw is None:
        return ops.linear_p(x, w), 0
    wt = ops.transpose_p(w, axes=(0, 2, 1))
    return _matmul_values(x, dx, wt, 0), 0


# ---------------------------------------------------------------- deciding a row's rule

_warned: set = set()
warned = _warned  # the ops that took the loop fallback (the warning is given once per op)
_NO_AXES = {"axis", "axes", "shape", "index", "dim", "size", "shapes", "perm", "pad",
            "kernel", "stride", "padding", "dilation", "groups", "out_shape", "window"}
_SELECTORS = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "sign",
              "clip_mask", "share", "cast", "detach", "copysign_ratio", "floor_divide", "isnan",
              "isinf", "isfinite", "isclose", "logical_not", "logical_and", "logical_or",
              "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
              "ones_like", "zeros_like", "stop_gradient", "identity", "clone", "neg", "add",
              "sub", "mul", "div", "pow", "where"}
_AXIS_OPS = {"sum", "max", "min", "logsumexp", "prod", "cumsum", "cumprod", "argmax", "argmin", "row_max",
             "all", "any", "logcumsumexp", "extremum_weights_never"}
_rules: dict = {}


def _derive(op: Primitive) -> Callable | None:
    """The rule that follows from the row's facts, or None (the loop fallback)."""
    name = op.name
    if isinstance(op, Variadic):
        return _concat_rule if name == "concatenate" else None
    if name in ("argmax", "argmin"):
        return _arg_rule(op)
    if name in _AXIS_OPS:
        return axis_rule(op)
    if op.jvp == ELEMENTWISE or name in _SELECTORS:
        return elementwise_rule(op)
    if op.jvp == LINEAR and name in ("clone", "identity", "neg", "cast"):
        return elementwise_rule(op)
    return None


def rule_of(op: Primitive, kw: dict) -> Callable | None:
    r = op.batch
    if r is not None:
        return r
    r = _rules.get(op, False)
    if r is False:
        r = _rules[op] = _derive(op)
    if r is not None and r.__name__ == "rule" and (op.jvp == ELEMENTWISE or op.name in _SELECTORS) \
            and any(k in _NO_AXES for k in kw):
        return None  # an "elementwise" row that reads axes: not derivable
    return r


ops.reshape_p.batch = _reshape_rule
ops.transpose_p.batch = _transpose_rule
ops.broadcast_to_p.batch = _broadcast_rule
ops.getitem_p.batch = _getitem_rule
ops.scatter_add_p.batch = _scatter_add_rule
ops.matmul_p.batch = _matmul_rule
ops.linear_p.batch = _linear_rule
ops.extremum_weights_p.batch = lambda args, dims, axis, keepdims: (
    ops.extremum_weights_p(*[_lead(a, args[0].ndim - 1) if d is not None else a
                             for a, d in zip(args, dims)],
                           axis=_norm_axes(axis, max(a.ndim - (d is not None)
                                                     for a, d in zip(args, dims))),
                           keepdims=keepdims), 0) if all(d is not None for d in dims) or keepdims \
    else _loop(ops.extremum_weights_p, args, dims, dict(axis=axis, keepdims=keepdims))


# ---------------------------------------------------------------- conv, pooling, padding

def _merged(op: Primitive, shape_kw: str | None = None) -> Callable:
    """A one-input op that treats its first dimension as independent samples (conv's
    ``im2col``/``col2im``): the batch is folded into that dimension and split out again."""
    def rule(args, dims, **kw):
        (x,) = args
        b = x.shape[0]
        if x.ndim < 2:
            raise NotImplementedError
        flat = ops.reshape_p(x, shape=(b * x.shape[1],) + tuple(x.shape[2:]))
        if shape_kw is not None:
            kw = dict(kw)
            shape = tuple(kw[shape_kw])
            kw[shape_kw] = (b * shape[0],) + shape[1:]
        out = op(flat, **kw)
        return ops.reshape_p(out, shape=(b, x.shape[1]) + tuple(out.shape[1:])), 0
    return rule


def _along_rule(op: Primitive) -> Callable:
    """gather / scatter_add_along / scatter_along (indexing's rows along one axis): the
    value and the index at the same rank (a shared one gets a length-1 batch dimension,
    which the index then broadcasts over as the batch's), the axis shifted, and a
    scatter's ``shape`` given the batch dimension."""
    def rule(args, dims, axis, **kw):
        b = next(a.shape[0] for a, d in zip(args, dims) if d is not None)
        vals = []
        for a, d in zip(args, dims):
            vals.append(a if d is not None else ops.reshape_p(a, shape=(1,) + tuple(a.shape)))
        nd = vals[0].ndim - 1
        if vals[1].ndim - 1 != nd:
            raise NotImplementedError
        if "shape" in kw:  # a scatter writes into a batch of outputs
            kw = dict(kw, shape=(b,) + tuple(kw["shape"]))
            vals = [ops.broadcast_to_p(v, shape=(b,) + tuple(v.shape[1:])) if v.shape[0] != b
                    else v for v in vals]
        elif vals[1].shape[0] != vals[0].shape[0]:  # gather: both batched alike
            m = max(vals[0].shape[0], vals[1].shape[0])
            vals = [ops.broadcast_to_p(v, shape=(m,) + tuple(v.shape[1:])) for v in vals]
        return op(*vals, axis=axis % nd + 1, **kw), 0
    return rule


def _install_conv_rules() -> None:
    from . import conv, indexing
    conv.im2col_p.batch = _merged(conv.im2col_p)
    conv.col2im_p.batch = _merged(conv.col2im_p, "shape")
    conv.pad_p.batch = unary_rule(conv.pad_p)   # pads the last axes: the batch stays in front
    conv.window_max_p.batch = axis_rule(conv.window_max_p)
    conv.window_argmax_p.batch = axis_rule(conv.window_argmax_p)
    for op in (indexing.gather_p, indexing.scatter_add_along_p, indexing.scatter_along_p):
        op.batch = _along_rule(op)


_install_conv_rules()


# ---------------------------------------------------------------- the loop fallback

def _loop(op: Primitive, args: tuple, dims: tuple, kw: dict) -> tuple[Tensor, int]:
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    outs = []
    for b in range(size):
        one = [ops.getitem_p(a, index=(b,), basic=True) if d is not None else a
               for a, d in zip(args, dims)]
        outs.append(op(*one, **kw))
    return ops.concatenate_p(*[ops.reshape_p(o, shape=(1,) + tuple(o.shape)) for o in outs],
                             axis=0), 0


def fallback(op: Primitive, args: tuple, dims: tuple, kw: dict) -> tuple[Tensor, int]:
    if op.name not in _warned:
        _warned.add(op.name)
        warnings.warn(f"vmap: there is a performance drop because there is no batching rule "
                      f"for '{op.name}'; it runs in a loop over the batch, one call per "
                      "example (give its Primitive a batch= rule)", UserWarning, stacklevel=4)
    return _loop(op, args, dims, kw)


# ---------------------------------------------------------------- dispatch

def dispatch(op: Primitive, args: tuple, kw: dict) -> Tensor | None:
    """Run ``op`` on ``args`` if one is batched (the innermost level present), else None."""
    level = -1
    for a in args:
        if type(a) is BatchedTensor and a._level > level:
            level = a._level
    if level < 0:
        return None
    size = batch_size(level)
    n = len(args)
    if any(not isinstance(a, Tensor) for a in args):
        xs = _lift_all(op.name, args, (op.promote or "elementwise") if n == 2 else "elementwise")
    elif n == 2 and op.promote is not None and args[0].dtype != args[1].dtype:
        xs = _lift_all(op.name, args, op.promote)
    elif op.promote == "matmul":
        xs = _lift_all(op.name, args, "matmul")
    else:
        xs = args
    vals, dims = [], []
    for a in xs:
        if type(a) is BatchedTensor and a._level == level:
            vals.append(a._value)
            dims.append(0)
        else:
            vals.append(a)
            dims.append(None)
    rule = rule_of(op, kw)
    vals, dims = tuple(vals), tuple(dims)
    out = None
    if rule is not None:
        try:
            out, od = rule(vals, dims, **kw)
        except NotImplementedError:
            out = None
    if out is None:
        out, od = fallback(op, vals, dims, kw)
    if od is None:
        out = _expand(out, size)
    elif od != 0:
        out = movedim(out, od, 0)
    if out.shape[0] != size:
        raise RuntimeError(f"vmap: the batching rule of '{op.name}' gave a batch of "
                           f"{out.shape[0]}, expected {size}")
    res = wrap(out, level)
    return engine._record(op, xs, kw, res)


_ctx.batch_call = dispatch


# ---------------------------------------------------------------- autograd.Function

class VmapInfo:
    """What an ``autograd.Function``'s ``vmap`` staticmethod is told: ``batch_size`` and
    ``randomness``, as torch's ``info``."""

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size = batch_size
        self.randomness = randomness


def _own(cls: type, name: str) -> bool:
    """Whether a subclass of ``autograd.Function`` defines ``name`` itself."""
    from .autograd.function import Function
    return any(name in vars(c) for c in cls.__mro__ if c is not Function and c is not object)


def function_forward(cls: type, ctx: Any, args: tuple, kwargs: dict, level: int) -> Any:
    """``cls.forward`` under vmap level ``level``: on the batched tensors themselves
    (``generate_vmap_rule = True``), by the ``vmap`` staticmethod, or one example at a time
    (with a warning; ``backward`` then runs per example too)."""
    from .autograd.engine import no_grad
    from .autograd.function import FunctionCtx
    size = batch_size(level)
    from .autograd.function import _forward
    if getattr(cls, "generate_vmap_rule", False):
        with no_grad():
            return _forward(cls, ctx, args, kwargs)
    in_dims = tuple(0 if type(a) is BatchedTensor and a._level == level else None for a in args)
    vals = tuple(a._value if d == 0 else a for a, d in zip(args, in_dims))
    if _own(cls, "vmap"):
        with no_grad():
            res = cls.vmap(VmapInfo(size, "error"), in_dims, *vals, **kwargs)
        if not isinstance(res, tuple) or len(res) != 2:
            raise RuntimeError(f"{cls.__name__}.vmap must return a tuple (outputs, out_dims)")
        outs, odims = res
        many = isinstance(outs, tuple)
        outs = outs if many else (outs,)
        odims = odims if isinstance(odims, tuple) else (odims,) * len(outs)
        if len(odims) != len(outs):
            raise RuntimeError(f"{cls.__name__}.vmap: {len(outs)} outputs but out_dims {odims}")
        wrapped = []
        for o, d in zip(outs, odims):
            v = _expand(o, size) if d is None else movedim(o, d % o.ndim, 0)
            wrapped.append(wrap(v, level))
        result = tuple(wrapped) if many else wrapped[0]
        # what backward reads: setup_context on the batched tensors where the class has
        # one; otherwise forward (its ctx only) on them, when a gradient can be asked for
        if _own(cls, "setup_context"):
            cls.setup_context(ctx, args, result)
        elif any(ctx.needs_input_grad) or any(type(a) is BatchedTensor and a._node is not None
                                              for a in args):
            with no_grad():
                cls.forward(ctx, *args, **kwargs)
        return result
    if cls.__name__ not in _warned:
        _warned.add(cls.__name__)
        warnings.warn(f"vmap: there is a performance drop because the autograd.Function "
                      f"'{cls.__name__}' has neither a vmap staticmethod nor "
                      "generate_vmap_rule = True; it runs in a loop over the batch, one call "
                      "per example", UserWarning, stacklevel=4)
    ctxs, results = [], []
    for b in range(size):
        one = [ops.getitem_p(v, index=(b,), basic=True) if d == 0 else v
               for v, d in zip(vals, in_dims)]
        c = FunctionCtx(ctx.needs_input_grad)
        c._name = cls.__name__
        with no_grad():
            results.append(_forward(cls, c, tuple(one), kwargs))
        ctxs.append(c)
    many = isinstance(results[0], tuple)
    cols = list(zip(*results)) if many else [results]
    outs = tuple(wrap(ops.stack(list(col), 0), level) for col in cols)

    def backward_per_example(gs: tuple) -> tuple:
        per = []
        for b, c in enumerate(ctxs):
            gb = [ops.getitem_p(g._value, index=(b,), basic=True)
                  if type(g) is BatchedTensor and g._level == level else g for g in gs]
            r = cls.backward(c, *gb)
            per.append(r if isinstance(r, tuple) else (r,))
        res = []
        for col in zip(*per):
            res.append(None if col[0] is None else wrap(ops.stack(list(col), 0), level))
        return tuple(res)

    ctx._loop = backward_per_example
    return outs if many else outs[0]
