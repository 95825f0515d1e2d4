"""Neural networks on the tensor engine: modules (``Module``, ``Linear``, ``MLP``,
``Sequential``, ``ReLU``, ``Tanh``, ``Sigmoid``, ``Dropout``, ``MSELoss``,
``CrossEntropyLoss``, ``Conv2d``, ``MaxPool2d``, ``AvgPool2d``, ``Flatten``), in
``duograd.nn.functional`` the losses composed from primitive operations, and in
``duograd.nn.utils`` gradient clipping and PyTorch state-dict conversion.

>>> import duograd as dg
>>> from duograd import nn
>>> from duograd.nn import functional as F
>>> net = nn.MLP(2, [8, 3], rng=0)
>>> loss = F.cross_entropy(net(dg.ones((4, 2))), [0, 1, 2, 0])
>>> loss.backward()
>>> [p.grad.shape for p in net.parameters()]
[(8, 2), (8,), (3, 8), (3,)]
"""

from . import functional
from .modules import (MLP, CrossEntropyLoss, Dropout, Linear, Module, MSELoss, ReLU, Sequential,
                      Sigmoid, Tanh)
from .modules import AvgPool2d, Conv2d, Flatten, MaxPool2d
from . import utils  # noqa: E402  (it refers to the modules above)

__all__ = ["Module", "Linear", "MLP", "Sequential", "ReLU", "Tanh", "Sigmoid", "Dropout",
           "MSELoss", "CrossEntropyLoss", "Conv2d", "MaxPool2d", "AvgPool2d", "Flatten",
           "functional", "utils"]
