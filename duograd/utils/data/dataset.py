"""Datasets, as ``torch.utils.data``'s: the two protocols (``Dataset``: ``__getitem__`` and
``__len__``; ``IterableDataset``: ``__iter__``), the ready-made ones (``TensorDataset``,
``Subset``, ``ConcatDataset``, ``ChainDataset``) and ``random_split``.

>>> import duograd as dg
>>> from duograd.utils.data import TensorDataset, random_split
>>> ds = TensorDataset(dg.arange(10), dg.arange(10) * 2)
>>> ds[3]
(tensor(3), tensor(6))
>>> [len(s) for s in random_split(ds, [0.7, 0.3], generator=dg.Generator().manual_seed(0))]
[7, 3]
"""

from __future__ import annotations

import bisect
import math
import warnings
from typing import Any, Generic, Iterable, Iterator, Sequence, TypeVar

from ..._tensor import Tensor
from ... import random as _random

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "ChainDataset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses give ``__getitem__(index)`` (and usually
    ``__len__``). ``a + b`` concatenates two datasets.

    >>> class Squares(Dataset):
    ...     def __len__(self): return 4
    ...     def __getitem__(self, i): return i * i
    >>> ds = Squares() + Squares()
    >>> len(ds), ds[5]
    (8, 1)
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError(f"{type(self).__name__}: a Dataset subclass must implement "
                                  "__getitem__")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses give ``__iter__``. With ``num_workers > 0``
    each worker process iterates its own copy of the whole dataset unless ``__iter__``
    shards by ``get_worker_info()``, as torch.

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__}: an IterableDataset subclass must "
                                  "implement __iter__")

    def __add__(self, other: Any) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are rows: ``ds[i]`` is ``tuple(t[i] for t in tensors)``; every tensor must
    have the same size in dim 0.

    >>> import duograd as dg
    >>> ds = TensorDataset(dg.zeros(4, 3), dg.arange(4))
    >>> len(ds), ds[-1][1]
    (4, tensor(3))
    """

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expected Tensors, got {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset: a 0-d tensor has no dim 0 to index samples by")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) > 1:
            raise AssertionError(f"Size mismatch between tensors: dim 0 sizes {sizes}")
        self.tensors = tuple(tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0] if self.tensors else 0

    def __getitem__(self, index: Any) -> tuple:
        n = len(self)
        if isinstance(index, int) and not -n <= index < n:
            raise IndexError(f"TensorDataset: index {index} is out of range for a dataset of "
                             f"{n} samples")
        return tuple(t[index] for t in self.tensors)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> s = Subset(list("abcde"), [4, 0])
    >>> len(s), s[0], s[1]
    (2, 'e', 'a')
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        if isinstance(idx, int) and not -len(self.indices) <= idx < len(self.indices):
            raise IndexError(f"Subset: index {idx} is out of range for a subset of "
                             f"{len(self.indices)} samples")
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several map-style datasets one after another.

    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError(f"ConcatDataset: absolute value of index should not exceed dataset "
                                 f"length (index {idx}, length {n})")
            idx += n
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} is out of range for a dataset of {n} samples")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another.

    >>> list(ChainDataset([range(2), range(3)]))
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given ``lengths``
    (which sum to ``len(dataset)``), or of the given fractions (which sum to 1: each gets
    ``floor(fraction * n)``, and what is left over goes one by one to the first splits), as
    ``torch.utils.data.random_split``. ``generator``: a ``dg.Generator``.

    >>> import duograd as dg
    >>> a, b, c = random_split(range(10), [0.5, 0.3, 0.2], generator=dg.Generator())
    >>> len(a), len(b), len(c), sorted(list(a) + list(b) + list(c)) == list(range(10))
    (5, 3, 2, True)
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if not 0 <= frac <= 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1")
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                              "dataset.", stacklevel=2)
        lengths = sizes
    if any(isinstance(x, float) and not x.is_integer() for x in lengths) or any(x < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be non-negative ints or fractions that sum "
                         f"to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: sum of input lengths ({sum(lengths)}) does not equal the "
                         f"length of the input dataset ({n})!")
    order = _random.randperm(n, generator=generator).tolist()
    out, start = [], 0
    for size in lengths:
        out.append(Subset(dataset, order[start:start + int(size)]))
        start += int(size)
    return out
