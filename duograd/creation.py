"""Creation functions with PyTorch's signatures: ``eye``, ``full``, ``full_like``, ``empty``,
``empty_like``, ``tril_indices``, ``triu_indices``.

New leaves, with no history. ``full`` takes its dtype from the fill value as torch does
(a bool gives bool, an int int64, a float the default float64); ``empty`` gives zeros
(torch leaves the values undefined, so zeros are one valid choice).

>>> import duograd as dg
>>> dg.full((2,), 1.5).numpy()
array([1.5, 1.5])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._tensor import Tensor, _shape_of, _wrap


def _size(size: tuple, op: str) -> tuple[int, ...]:
    shape = _shape_of(size)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"{op}: trying to create a tensor with negative dimension: {shape}")
    return shape


def _leaf(arr: np.ndarray, requires_grad: bool, op: str) -> Tensor:
    if requires_grad and arr.dtype.kind != "f":
        raise RuntimeError(f"{op}: only tensors of floating point dtype can require gradients, "
                           f"got {arr.dtype}")
    return _wrap(arr, bool(requires_grad))


def _fill_dtype(value: Any) -> np.dtype:
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (float, np.floating)):
        return np.dtype(np.float64)
    raise TypeError(f"full: fill_value must be a Number, not {type(value).__name__}")


def eye(n: int, m: int | None = None, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """The n x m identity matrix (m defaults to n).

    >>> import duograd as dg
    >>> dg.eye(2).numpy()
    array([[1., 0.],
           [0., 1.]])
    """
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n must be greater or equal to 0, got {n if n < 0 else m}")
    return _leaf(np.eye(n, n if m is None else m, dtype=np.dtype(dtype or np.float64)), requires_grad, "eye")


def full(size: Any, fill_value: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value as in torch.

    >>> import duograd as dg
    >>> dg.full((2, 2), 7).dtype
    dtype('int64')
    """
    dt = np.dtype(dtype) if dtype is not None else _fill_dtype(fill_value)
    return _leaf(np.full(_size((size,), "full"), fill_value, dtype=dt), requires_grad, "full")


def full_like(x: Tensor, fill_value: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``x``'s shape and dtype filled with ``fill_value``.

    >>> import duograd as dg
    >>> dg.full_like(dg.zeros(2), 3).numpy()
    array([3., 3.])
    """
    if not isinstance(fill_value, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"full_like: fill_value must be a Number, not {type(fill_value).__name__}")
    dt = np.dtype(dtype) if dtype is not None else x.dtype
    return _leaf(np.full(x.shape, fill_value, dtype=dt), requires_grad, "full_like")


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` (its values are zeros here; torch leaves them undefined).

    >>> import duograd as dg
    >>> dg.empty(2, 3).shape
    (2, 3)
    """
    return _leaf(np.zeros(_size(size, "empty"), dtype=np.dtype(dtype or np.float64)), requires_grad, "empty")


def empty_like(x: Tensor, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``x``'s shape and dtype (zeros here; torch leaves the values undefined).

    >>> import duograd as dg
    >>> dg.empty_like(dg.ones(3)).shape
    (3,)
    """
    return _leaf(np.zeros(x.shape, dtype=np.dtype(dtype) if dtype is not None else x.dtype),
                 requires_grad, "empty_like")


def _tri_indices(row: int, col: int, offset: int, upper: bool, op: str) -> Tensor:
    if row < 0 or col < 0:
        raise RuntimeError(f"{op}: row and col must be non-negative, got {row}, {col}")
    mask = ~np.tri(row, col, offset - 1, dtype=bool) if upper else np.tri(row, col, offset, dtype=bool)
    return _wrap(np.stack(np.nonzero(mask)).astype(np.int64).reshape(2, -1))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None) -> Tensor:
    """The (2, N) int64 coordinates of the lower triangle of a row x col matrix, row by row.

    >>> import duograd as dg
    >>> dg.tril_indices(2, 2).numpy()
    array([[0, 1, 1],
           [0, 0, 1]])
    """
    return _tri_indices(row, col, offset, False, "tril_indices")


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None) -> Tensor:
    """The (2, N) int64 coordinates of the upper triangle of a row x col matrix, row by row.

    >>> import duograd as dg
    >>> dg.triu_indices(2, 2).numpy()
    array([[0, 0, 1],
           [0, 1, 1]])
    """
    return _tri_indices(row, col, offset, True, "triu_indices")


__all__ = ["eye", "full", "full_like", "empty", "empty_like", "tril_indices", "triu_indices"]
