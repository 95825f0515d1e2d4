"""Neural networks on the tensor engine: modules (``Module``, ``Linear``, ``MLP``,
``Sequential``, ``ReLU``, ``Tanh``) and, in ``duograd.nn.functional``, losses composed
from primitive operations.

>>> import duograd as dg
>>> from duograd import nn
>>> from duograd.nn import functional as F
>>> net = nn.MLP(2, [8, 3], rng=0)
>>> loss = F.cross_entropy(net(dg.ones((4, 2))), [0, 1, 2, 0])
>>> loss.backward()
>>> [p.grad.shape for p in net.parameters()]
[(2, 8), (8,), (8, 3), (3,)]
"""

from . import functional
from .modules import MLP, Linear, Module, ReLU, Sequential, Tanh

__all__ = ["Module", "Linear", "MLP", "Sequential", "ReLU", "Tanh", "functional"]
