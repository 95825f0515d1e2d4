"""Pure shape logic: broadcasting, its adjoint, and the argument normalisers of dims.

Every operation reads its dims through the three normalisers here, so they all speak one
error vocabulary, torch's: ``dim_index`` (one dim), ``normalize_axes`` (None, one dim or a
tuple of them) and ``dim_alias`` (torch's ``dim``/``keepdim`` or NumPy's ``axis``/``keepdims``).
A dim out of range is a ``DimError`` (torch's IndexError) that names the op, the dim
and the shape, then says torch's "Dimension out of range (expected to be in range of
[lo, hi], but got d)"; a dim that is not an int a TypeError; a
repeated dim a ``ShapeError``. Sizes given as varargs or one sequence are ``_tensor._shape_of``.

Broadcasting is a linear map that copies an input along new or size-1 axes. Its
adjoint (transpose) sums a gradient back over exactly those axes. ``sum_to`` is that
adjoint, and the engine calls it in one place, after every VJP rule, so no rule ever
reduces its own broadcast (see ``autograd.backpropagate``).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from ._tensor import Tensor

Shape = tuple[int, ...]


class ShapeError(ValueError, RuntimeError):
    """Shapes that do not fit together: operands that do not broadcast, a matmul whose
    inner dimensions differ, a ``view`` of the wrong number of elements, an ``expand`` of a
    dimension whose size is not 1, a repeated dim. PyTorch raises ``RuntimeError`` for these
    and this project's contract (and NumPy) ``ValueError``; this class is both, so either
    ``except`` catches it (a row of "Differences from PyTorch" in docs/api.md).

    >>> issubclass(ShapeError, RuntimeError) and issubclass(ShapeError, ValueError)
    True
    """


class DimError(IndexError, ValueError):
    """A dim out of range for a tensor's number of dimensions: ``IndexError`` as in
    PyTorch, and ``ValueError`` as NumPy's ``AxisError`` (which is both, too).

    >>> issubclass(DimError, IndexError) and issubclass(DimError, ValueError)
    True
    """


def broadcast_shape(*shapes: Shape, op: str = "broadcast") -> Shape:
    """The NumPy broadcast of ``shapes``, or a ValueError naming ``op`` and the shapes.

    >>> broadcast_shape((3, 1), (1, 4))
    (3, 4)
    """
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            if len(s) >= -i:
                n = s[i]
                if n != 1:
                    if size not in (1, n):
                        shown = " and ".join(str(tuple(s)) for s in shapes)
                        raise ShapeError(f"{op}: shapes {shown} do not broadcast")
                    size = n
        result.append(size)
    return tuple(result)


def sum_to(g: "Tensor", shape: Shape) -> "Tensor":
    """Sum ``g`` down to ``shape``: the adjoint of broadcasting ``shape`` to ``g.shape``.

    It sums over the leading axes that broadcasting added and over the axes where
    ``shape`` has size 1. It is written with Tensor operations, so it records a graph
    when gradients are themselves being differentiated.

    >>> import duograd as dg
    >>> sum_to(dg.ones((64, 10)), (10,)).numpy()[:3]
    array([64., 64., 64.])
    """
    if g.shape == shape:  # the cheap comparison first: most edges do not broadcast
        return g
    lead = g.ndim - len(shape)
    if lead > 0 and g.shape[lead:] == shape:  # only leading axes were added (a bias)
        return g.sum(axis=tuple(range(lead)))
    if lead < 0 or any(n not in (1, m) for n, m in zip(shape, g.shape[lead:])):
        raise ValueError(f"sum_to: a gradient of shape {g.shape} cannot be summed to shape "
                         f"{tuple(shape)}: {tuple(shape)} does not broadcast to it")
    inner = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    g = g.sum(axis=tuple(range(lead)) + inner, keepdims=True)
    return g if g.shape == shape else g.reshape(shape)


def _out_of_range(op: str, d: int, ndim: int, shape: Shape | None) -> DimError:
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    of = f"a tensor of shape {tuple(shape)}" if shape is not None else f"a tensor of {ndim} dims"
    return DimError(f"{op}: dim {d} is out of range for {of}: Dimension out of range (expected to be "
                    f"in range of [{lo}, {hi}], but got {d})")


def _not_int(op: str, d: object, many: bool = False) -> TypeError:
    return TypeError(f"{op}: dim (axis) must be {'an int or a tuple of ints' if many else 'one int'}, "
                     f"got {d!r}")


def dim_index(d: object, ndim: int, op: str, shape: Shape | None = None) -> int:
    """``d`` as a non-negative dim of a tensor with ``ndim`` dims (a 0-d tensor takes -1 and
    0, as torch, both meaning 0). Out of range: ``DimError``; not one int: TypeError.
    ``shape``, when given, is named in the error message.

    >>> dim_index(-1, 3, "softmax"), dim_index(-1, 0, "softmax")
    (2, 0)
    """
    if type(d) is int and -ndim <= d < ndim:  # the common case first
        return d % ndim
    # NumPy integers count as ints (a dim often comes from np.argmax); bools do not.
    if isinstance(d, bool) or not hasattr(d, "__index__"):
        raise _not_int(op, d)
    d = operator.index(d)  # type: ignore[arg-type]
    n = max(ndim, 1)
    if not -n <= d < n:
        raise _out_of_range(op, d, ndim, shape)
    return d % n


def _both(op: str) -> TypeError:
    return TypeError(f"{op}(): give dim or its alias axis, not both")


def axis_keyword(op: str, kw: dict) -> dict:
    """``kw`` with ``axis=`` renamed ``dim=`` (torch's argument parser takes either), in place:
    the one rename of ``torch_signatures`` and the Tensor methods; both given is a TypeError.

    >>> axis_keyword("cumsum", {"axis": 1})
    {'dim': 1}
    """
    if "axis" in kw:
        if "dim" in kw:
            raise _both(op)
        kw["dim"] = kw.pop("axis")
    return kw


def dim_alias(op: str, dim: object, keepdim: object = False, axis: object = None,
              keepdims: object = None) -> tuple[object, bool]:
    """PyTorch's ``dim``/``keepdim`` (primary) or NumPy's ``axis``/``keepdims`` (accepted),
    as one (dim, keepdim) pair; both ``dim`` and ``axis`` given is a TypeError.

    >>> dim_alias("sum", None, False, 1, True)
    (1, True)
    """
    if axis is not None:
        if dim is not None:
            raise _both(op)
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, bool(keepdim)


def normalize_axes(axis: None | int | Iterable[int], ndim: int, op: str,
                   shape: Shape | None = None) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative axes; None means every axis.
    ``shape``, when given, is named in the error message. A 0-d tensor accepts dim 0 and
    -1, as in PyTorch (they name no axis). Out of range: ``DimError``; repeated:
    ``ShapeError``.

    >>> normalize_axes(-1, 3, "sum"), normalize_axes(0, 0, "sum")
    ((2,), ())
    """
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:  # the common case, without the loop
        return (axis % ndim,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        # NumPy integers count as ints (an axis often comes from np.argmax); bools do not.
        if isinstance(a, bool) or not hasattr(a, "__index__"):
            raise _not_int(op, axis, many=True)
        a = operator.index(a)
        lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
        if not lo <= a <= hi:
            raise _out_of_range(op, a, ndim, shape)
        if ndim:
            out.append(a % ndim)
    if len(set(out)) != len(out):
        of = f" for a tensor of shape {tuple(shape)}" if shape is not None else ""
        raise ShapeError(f"{op}: repeated dim in {axis!r}{of}")
    return tuple(sorted(out))


def keepdims_shape(shape: Shape, axes: tuple[int, ...]) -> Shape:
    """``shape`` with the reduced ``axes`` kept as size 1."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))
