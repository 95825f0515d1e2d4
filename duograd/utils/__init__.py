"""Utilities, as ``torch.utils``: ``duograd.utils.data`` (datasets, samplers and the data
loader).

>>> import duograd as dg
>>> dg.utils.data.TensorDataset(dg.zeros(3, 2))[0][0].shape
(2,)
"""

from . import data

__all__ = ["data"]
