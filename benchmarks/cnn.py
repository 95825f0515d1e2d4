"""The digits CNN that the walkthrough trains (experiments/digits_cnn.py) and the
benchmark times (benchmarks/run.py), defined here, below both, so that the benchmark
does not import the experiments.

>>> net = build_cnn(0)
>>> sum(p.numel() for p in net.parameters()), net(dg.ones((2, 1, 8, 8))).shape
(6090, (2, 10))
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import duograd as dg
import duograd.nn as nn
from duograd.nn import functional as F

CHANNELS = (16, 32)
DROPOUT = 0.3


def build_cnn(rng: Any = None, dropout: float = DROPOUT) -> nn.Sequential:
    """The digits CNN; one ``rng`` (a seed or a Generator) draws every layer's weights in order.

    >>> net = build_cnn(0)
    >>> sum(p.numel() for p in net.parameters()), net(dg.ones((2, 1, 8, 8))).shape
    (6090, (2, 10))
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    c1, c2 = CHANNELS
    return nn.Sequential(nn.Conv2d(1, c1, 3, padding=1, rng=gen), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c1, c2, 3, padding=1, rng=gen), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Dropout(dropout, rng=gen), nn.Linear(4 * c2, 10, rng=gen))


def make_step(model: nn.Module) -> Callable[[dg.Tensor, np.ndarray], dg.Tensor]:
    """One training step without the optimizer: ``step(X, y)`` clears the gradients, runs
    the model, the cross-entropy and the backward pass, and returns the loss. Written as a
    plain function of its arguments so that ``dg.compile(step)`` can capture it.

    >>> net = build_cnn(0)
    >>> loss = make_step(net)(dg.ones((3, 1, 8, 8)), np.array([0, 1, 2]))
    >>> net[0].weight.grad.shape
    (16, 1, 3, 3)
    """
    def step(X: dg.Tensor, y: np.ndarray) -> dg.Tensor:
        model.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        return loss
    return step
