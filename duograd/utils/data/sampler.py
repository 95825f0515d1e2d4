"""Samplers, as ``torch.utils.data``'s: what order a map-style dataset is read in
(``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``,
``WeightedRandomSampler``) and how indices are grouped into batches (``BatchSampler``).
Each random one takes ``generator=`` (a ``dg.Generator``); without one it seeds a fresh
generator from the default generator at each pass, as torch.

>>> import duograd as dg
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
>>> sorted(RandomSampler(range(4), generator=dg.Generator()))
[0, 1, 2, 3]
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..._tensor import Tensor, tensor
from ... import random as _random

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """The base of samplers: subclasses give ``__iter__`` (indices, or lists of them) and
    may give ``__len__``."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__}: a Sampler subclass must implement "
                                  "__iter__")


def _pass_generator(generator: Any) -> Any:
    """The generator for one pass: the given one, else a new one seeded from the default
    generator (as torch's samplers do, so a pass consumes one draw of the default)."""
    if generator is not None:
        return generator
    s = int(_random.default_generator._rng.integers(0, 2 ** 63))
    return _random.Generator().manual_seed(s)


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into ``data_source``: a permutation (``num_samples`` beyond the
    dataset's length gives whole permutations then part of one), or with ``replacement``
    ``num_samples`` independent uniform draws.

    >>> import duograd as dg
    >>> s = RandomSampler(range(3), replacement=True, num_samples=5, generator=dg.Generator())
    >>> len(s), all(0 <= i < 3 for i in s)
    (5, True)
    """

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, int)
                                        or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        gen = _pass_generator(self.generator)
        if self.replacement:
            if n == 0:
                raise ValueError("RandomSampler: cannot draw with replacement from an empty dataset")
            yield from _random.randint(0, n, (self.num_samples,), generator=gen).tolist()
            return
        for _ in range(self.num_samples // n if n else 0):
            yield from _random.randperm(n, generator=gen).tolist()
        if n:
            yield from _random.randperm(n, generator=gen).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new one each pass).

    >>> import duograd as dg
    >>> sorted(SubsetRandomSampler([5, 7, 9], generator=dg.Generator()))
    [5, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _random.randperm(len(self.indices), generator=_pass_generator(self.generator)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices 0 .. len(weights) - 1, each drawn with probability
    proportional to its weight (``dg.multinomial``); without ``replacement`` none repeats.

    >>> import duograd as dg
    >>> list(WeightedRandomSampler([0.0, 0.0, 1.0], 3, generator=dg.Generator()))
    [2, 2, 2]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights._data if isinstance(weights, Tensor) else np.asarray(weights)
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = tensor(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = _random.multinomial(self.weights, self.num_samples, self.replacement,
                                    generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``).

    >>> list(BatchSampler(range(5), 2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
