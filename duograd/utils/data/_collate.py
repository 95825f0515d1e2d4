"""Collation, as ``torch.utils.data``'s: ``default_collate`` turns a list of samples into
one batch of the same structure (Tensors, NumPy arrays and numbers stacked into Tensors
with a new dim 0; strings kept as a list; dicts, named tuples, tuples and lists collated
field by field), and ``default_convert`` turns NumPy arrays into Tensors without batching.

>>> import duograd as dg
>>> default_collate([(dg.zeros(2), 1), (dg.ones(2), 2)])
[tensor([[0., 0.],
        [1., 1.]]), tensor([1, 2])]
"""

from __future__ import annotations

import collections.abc
import copy
from typing import Any

import numpy as np

from ..._tensor import Tensor, tensor as _tensor_of
from ... import indexing as _indexing

__all__ = ["default_collate", "default_convert"]

_UNSUPPORTED = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_text_array(a: np.ndarray) -> bool:
    return a.dtype.kind in "SaUO"


def _same_container(elem: Any, fields: Any) -> Any:
    """A container of ``elem``'s type holding ``fields`` (a dict or a list), or the plain
    dict/list when the type cannot be built that way (torch's fallback)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            out = copy.copy(elem)
            out.update(fields)
            return out
        if isinstance(elem, collections.abc.Mapping):
            return type(elem)(fields)
        if isinstance(elem, collections.abc.MutableSequence):
            out = copy.copy(elem)
            for i, v in enumerate(fields):
                out[i] = v
            return out
        return type(elem)(fields)
    except TypeError:
        return fields


def default_collate(batch: list) -> Any:
    """One batch from a list of samples, with the structure of one sample, as torch's.

    >>> import numpy as np
    >>> out = default_collate([{"x": np.zeros(2), "name": "a"}, {"x": np.ones(2), "name": "b"}])
    >>> out["x"].shape, out["name"]
    ((2, 2), ['a', 'b'])
    >>> default_collate([1.5, 2.5]).dtype
    dtype('float64')
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        shapes = {b.shape for b in batch}
        if len(shapes) > 1:
            raise RuntimeError(f"default_collate: stack expects each tensor to be equal size, but "
                               f"got shapes {sorted(shapes)}")
        return _indexing.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _is_text_array(elem):
            raise TypeError(_UNSUPPORTED.format(elem.dtype))
        return default_collate([_tensor_of(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return _tensor_of(np.asarray(batch))
    if isinstance(elem, float):
        return _tensor_of(batch, dtype=np.float64)
    if isinstance(elem, int):  # (bool too: a bool tensor, as torch.tensor([True, ...]))
        return _tensor_of(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_container(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as torch (kept for backward compatibility there)
        return _same_container(elem, columns)
    raise TypeError(_UNSUPPORTED.format(type(elem)))


def default_convert(data: Any) -> Any:
    """``data`` with each NumPy array and NumPy number in it made a Tensor (no batching):
    what a ``DataLoader`` with ``batch_size=None`` applies to each sample.

    >>> import numpy as np
    >>> default_convert([np.array([0, 1]), "a", 3])
    [tensor([0, 1]), 'a', 3]
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _is_text_array(data) else _tensor_of(data)
    if isinstance(data, (np.bool_, np.number)):
        return _tensor_of(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _same_container(data, {k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, tuple):
        return [default_convert(v) for v in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_container(data, [default_convert(v) for v in data])
    return data
