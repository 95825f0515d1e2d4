"""A small neural-network library on the scalar engine: ``Neuron``, ``Layer``, ``MLP``.

Every weight is a ``Value``, so a forward pass records the whole network as a graph
and ``loss.backward()`` fills every parameter's ``.grad``.

Parameters are listed layer by layer, neuron by neuron, each neuron's weights before
its bias. Weights start uniform in [-1, 1), biases at 0.

Reproducible initialisation: every constructor takes ``rng``, a
``numpy.random.Generator`` or an int seed. ``rng=None`` means seed 0, so building the
same model twice gives the same weights; pass a shared Generator to draw different
ones. An ``MLP`` or ``Layer`` draws all its neurons from one generator, in parameter order.

>>> model = MLP(2, [16, 16, 1], rng=0)
>>> len(model.parameters())
337
>>> out = model([0.5, -1.0])   # one output: a Value
>>> out.backward()
"""

from __future__ import annotations

import numbers
from typing import Sequence, Union

import numpy as np

from duograd.scalar.engine import Number, Value

Rng = Union[np.random.Generator, int, None]
Inputs = Union[Sequence[Union[Value, Number]], Value, Number]


def _generator(rng: Rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng(0)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng: expected a numpy.random.Generator, an int seed or None, got {type(rng).__name__}")


class Module:
    """What every model here shares: its parameters, and a way to clear their gradients.

    >>> n = Neuron(2)
    >>> n([1.0, 2.0]).backward()
    >>> n.zero_grad()
    >>> [p.grad for p in n.parameters()]
    [0.0, 0.0, 0.0]
    """

    def parameters(self) -> list[Value]:
        return []

    def zero_grad(self) -> None:
        # backward() accumulates, so a training step must clear the previous step's gradients.
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    """``relu(w . x + b)``, or ``w . x + b`` when ``nonlin=False``.

    >>> n = Neuron(3, nonlin=False, rng=1)
    >>> len(n.parameters())   # three weights, then the bias
    4
    >>> n([0.0, 0.0, 0.0]).data   # the bias starts at 0
    0.0
    """

    def __init__(self, nin: int, nonlin: bool = True, rng: Rng = None) -> None:
        gen = _generator(rng)
        self.w = [Value(float(w)) for w in gen.uniform(-1.0, 1.0, size=nin)]
        self.b = Value(0.0)
        self.nonlin = nonlin

    def __call__(self, x: Inputs) -> Value:
        # A single input may be passed bare, which lets a one-output layer feed the next.
        xs = [x] if isinstance(x, (Value, numbers.Real)) else list(x)
        if len(xs) != len(self.w):
            raise ValueError(f"Neuron: expected {len(self.w)} inputs, got {len(xs)}")
        act = sum((wi * xi for wi, xi in zip(self.w, xs)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self) -> list[Value]:
        return self.w + [self.b]

    def __repr__(self) -> str:
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    """``nout`` neurons reading the same inputs; ``kw`` (``nonlin``) goes to each neuron.

    >>> layer = Layer(2, 3, rng=0)
    >>> len(layer([1.0, -1.0])), len(layer.parameters())
    (3, 9)
    """

    def __init__(self, nin: int, nout: int, rng: Rng = None, **kw: bool) -> None:
        gen = _generator(rng)
        self.neurons = [Neuron(nin, rng=gen, **kw) for _ in range(nout)]

    def __call__(self, x: Inputs) -> Value | list[Value]:
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Layers of sizes ``nouts`` on ``nin`` inputs: relu on the hidden layers, the last linear.

    >>> model = MLP(3, [4, 2], rng=0)
    >>> [len(layer.neurons) for layer in model.layers], len(model.parameters())
    ([4, 2], 26)
    >>> len(model([1.0, 2.0, 3.0]))   # two outputs: a list of Values
    2
    """

    def __init__(self, nin: int, nouts: Sequence[int], rng: Rng = None) -> None:
        gen = _generator(rng)
        sizes = [nin, *nouts]
        self.layers = [Layer(sizes[i], sizes[i + 1], rng=gen, nonlin=i != len(nouts) - 1)
                       for i in range(len(nouts))]

    def __call__(self, x: Inputs) -> Value | list[Value]:
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
