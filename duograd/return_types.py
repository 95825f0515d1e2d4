"""The named tuples that PyTorch's ``torch.return_types`` gives, with the same field names.

``values, indices = x.max(dim=1)`` unpacks as in torch, and ``x.max(dim=1).indices`` reads
a field, because each result is one of these.

>>> import duograd as dg
>>> r = max(values=dg.tensor([2.0]), indices=dg.tensor([1]))
>>> r.values.shape, type(r).__name__
((1,), 'max')
"""

from __future__ import annotations

from typing import Any, NamedTuple


class _ValuesIndices(NamedTuple):
    values: Any
    indices: Any


def _values_indices(name: str) -> type:
    """A named tuple class called ``name`` with fields (values, indices), as torch's."""
    return type(name, (_ValuesIndices,), {"__slots__": ()})


max = _values_indices("max")  # noqa: A001  (torch.return_types.max)
min = _values_indices("min")  # noqa: A001
median = _values_indices("median")
mode = _values_indices("mode")
sort = _values_indices("sort")
topk = _values_indices("topk")
kthvalue = _values_indices("kthvalue")
cummax = _values_indices("cummax")
cummin = _values_indices("cummin")


class aminmax(NamedTuple):  # noqa: N801  (torch.return_types.aminmax)
    min: Any
    max: Any


__all__ = ["max", "min", "median", "mode", "sort", "topk", "kthvalue", "cummax", "cummin", "aminmax"]
