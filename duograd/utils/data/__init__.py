"""Data loading, as ``torch.utils.data``: datasets, samplers, collation and ``DataLoader``
(with worker processes for ``num_workers > 0``).

>>> import duograd as dg
>>> from duograd.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(dg.zeros(5, 3)), batch_size=2)
>>> [b.shape for (b,) in loader], len(loader)
([(2, 3), (2, 3), (1, 3)], 3)
"""

from ._collate import default_collate, default_convert
from .dataloader import DataLoader, WorkerInfo, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
           "random_split", "default_collate", "default_convert", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "get_worker_info", "WorkerInfo"]
