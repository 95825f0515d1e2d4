"""Modules: objects that own parameters and map Tensors to Tensors.

A ``Module`` finds its parameters by walking its own attributes in the order they
were assigned: a Tensor attribute is a parameter, a Module attribute is a child, and
a list or tuple holds children (or parameters) named by position. So
``MLP(2, [3, 1])`` has the parameters ``layers.0.weight``, ``layers.0.bias``,
``layers.1.weight``, ``layers.1.bias``, in that order, with nothing to register by
hand. Attributes whose names start with ``_`` are private and never walked.

Every module has a ``training`` flag (True until ``eval()``); ``train()`` and ``eval()``
set it on the module and every submodule, as in PyTorch. Only ``Dropout`` reads it.
"""

from __future__ import annotations

import os
import zipfile
from collections import OrderedDict
from typing import Any, Iterator, Mapping

import numpy as np

from ..conv import avg_pool2d, conv2d, max_pool2d
from ..ops import linear_p
from ..shapes import ShapeError
from .._tensor import Tensor, _draw, tensor  # public names; not `from .. import` (a cycle)
from . import functional as F

__all__ = ["Module", "Linear", "MLP", "Sequential", "ReLU", "Tanh", "Sigmoid", "Dropout",
           "MSELoss", "CrossEntropyLoss", "Conv2d", "MaxPool2d", "AvgPool2d", "Flatten"]


def _as_tensor(x: Any) -> Tensor:
    """A module's input as a Tensor (a Tensor passes through unchanged)."""
    return x if isinstance(x, Tensor) else tensor(x)


def _as_rng(rng: Any = None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator, an int seed or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected a numpy.random.Generator or an int seed, got {type(rng).__name__}")


def _shape_of(value: Any) -> Any:
    try:
        return np.shape(value.data if isinstance(value, Tensor) else value)
    except ValueError:
        return "unknown"


class Module:
    """Base class: subclasses assign parameters and child modules in ``__init__`` and
    define ``forward``; calling the module calls ``forward``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> class Affine(nn.Module):
    ...     def __init__(self):
    ...         self.scale = dg.tensor(2.0, requires_grad=True)
    ...         self.shift = dg.tensor(1.0, requires_grad=True)
    ...     def forward(self, x):
    ...         return x * self.scale + self.shift
    >>> m = Affine()
    >>> list(m.state_dict())
    ['scale', 'shift']
    >>> m(dg.tensor([1.0, 2.0])).numpy()
    array([3., 5.])
    """

    training: bool = True  # a class default, so subclasses need not call super().__init__

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: forward is not defined")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------ finding parameters
    def _members(self) -> Iterator[tuple[str, Any]]:
        """The (name, value) pairs the parameter walk visits, in assignment order."""
        return ((k, v) for k, v in vars(self).items() if not k.startswith("_"))

    def _walk(self, prefix: str) -> Iterator[tuple[str, Tensor]]:
        for name, value in self._members():
            if isinstance(value, Tensor):
                yield prefix + name, value
            elif isinstance(value, Module):
                yield from value._walk(f"{prefix}{name}.")
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Tensor):
                        yield f"{prefix}{name}.{i}", item
                    elif isinstance(item, Module):
                        yield from item._walk(f"{prefix}{name}.{i}.")

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        """``(dotted name, module)`` for this module (named ``prefix``, "" by default) and
        every submodule, parents before children, in assignment order.

        >>> from duograd import nn
        >>> [name for name, _ in nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU()).named_modules()]
        ['', '0', '1']
        """
        yield prefix, self
        dot = prefix + "." if prefix else ""
        for name, value in self._members():
            items = (value if isinstance(value, (list, tuple)) else [value])
            for i, item in enumerate(items):
                if isinstance(item, Module):
                    child = name if items is not value else f"{name}.{i}"
                    yield from item.named_modules(dot + child)

    def modules(self) -> Iterator["Module"]:
        """This module and every submodule, as in ``named_modules``.

        >>> from duograd import nn
        >>> [type(m).__name__ for m in nn.MLP(2, [3, 1], rng=0).modules()]
        ['MLP', 'Linear', 'Linear']
        """
        return (m for _, m in self.named_modules())

    def train(self, mode: bool = True) -> "Module":
        """Set ``training`` to ``mode`` on this module and every submodule; returns the
        module, so ``net = Net().train()`` reads as in PyTorch.

        >>> from duograd import nn
        >>> net = nn.Sequential(nn.Linear(2, 2, rng=0), nn.Dropout(0.5))
        >>> [m.training for m in net.eval().modules()]
        [False, False, False]
        >>> [m.training for m in net.train().modules()]
        [True, True, True]
        """
        mode = bool(mode)
        for m in self.modules():
            m.training = mode
        return self

    def eval(self) -> "Module":
        """``train(False)``: evaluation mode (``Dropout`` becomes the identity).

        >>> from duograd import nn
        >>> nn.Dropout(0.5).eval().training
        False
        """
        return self.train(False)

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, parameter)`` pairs: assignment order, layer by layer, weight
        before bias. A parameter shared by two layers is listed once, under its first name.

        >>> from duograd import nn
        >>> [n for n, _ in nn.Linear(2, 3, rng=0).named_parameters()]
        ['weight', 'bias']
        """
        seen: set[int] = set()
        for name, p in self._walk(""):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def parameters(self) -> list[Tensor]:
        """Every parameter, in the order of ``named_parameters``.

        >>> from duograd import nn
        >>> sum(p.numel() for p in nn.MLP(2, [64, 64, 2], rng=0).parameters())
        4482
        """
        return [p for _, p in self.named_parameters()]

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to None (the next backward starts afresh).

        >>> import duograd as dg
        >>> from duograd import nn
        >>> layer = nn.Linear(2, 1, rng=0)
        >>> layer(dg.ones((1, 2))).sum().backward()
        >>> layer.zero_grad()
        >>> layer.weight.grad is None
        True
        """
        for p in self.parameters():
            p.grad = None

    # ------------------------------------------------------------ state
    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """An ordered dict from dotted names to copies of the parameters' arrays.

        >>> from duograd import nn
        >>> {k: v.shape for k, v in nn.Linear(2, 3, rng=0).state_dict().items()}
        {'weight': (3, 2), 'bias': (3,)}
        """
        return OrderedDict((name, p.data.copy()) for name, p in self.named_parameters())

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Copy arrays from ``state_dict`` into the parameters of the same names.

        The layouts are PyTorch's (a ``Linear`` weight is (out_features, in_features)), so a
        torch model's ``state_dict()`` loads directly: its values may be torch Tensors,
        duograd Tensors or arrays.

        Every key must match a parameter and every parameter must get a value of its
        own shape; values are cast to the parameter's dtype. Everything is checked
        before anything is assigned, so on a ValueError (which lists each missing key,
        unexpected key and shape mismatch) the model is exactly as it was.

        >>> from duograd import nn
        >>> a, b = nn.Linear(2, 3, rng=0), nn.Linear(2, 3, rng=1)
        >>> b.load_state_dict(a.state_dict())
        >>> bool((a.weight.data == b.weight.data).all())
        True
        """
        params = OrderedDict(self.named_parameters())
        problems: list[str] = []
        staged: list[tuple[Tensor, np.ndarray]] = []
        for name, p in params.items():
            if name not in state_dict:
                problems.append(f"missing key '{name}' (parameter of shape {p.shape})")
                continue
            value = state_dict[name]
            try:
                if isinstance(value, Tensor):
                    value = value.data
                elif hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):
                    value = value.detach().cpu().numpy()  # a torch.Tensor, without importing torch
                arr = np.array(value, dtype=p.dtype)
            except (TypeError, ValueError) as e:
                problems.append(f"'{name}': cannot read the value as an array ({e})")
                continue
            if arr.shape != p.shape:
                problems.append(f"size mismatch for '{name}': the model's parameter has shape "
                                f"{p.shape}, the value has shape {arr.shape}")
                continue
            staged.append((p, arr))
        for name in state_dict:
            if name not in params:
                problems.append(f"unexpected key '{name}' (value of shape "
                                f"{_shape_of(state_dict[name])})")
        if problems:
            raise ValueError(f"{type(self).__name__}.load_state_dict: " + "; ".join(problems)
                             + " (nothing was loaded)")
        for p, arr in staged:
            p.data = arr

    def save(self, path: str | os.PathLike) -> str:
        """Write ``state_dict()`` to a ``.npz`` file; returns the path written (NumPy adds
        ``.npz`` when the name lacks it). ``load`` reproduces the model bit for bit.

        >>> import os, tempfile
        >>> from duograd import nn
        >>> path = nn.Linear(2, 3, rng=0).save(os.path.join(tempfile.mkdtemp(), "layer"))
        >>> os.path.basename(path)
        'layer.npz'
        """
        path = os.fspath(path)
        if not path.endswith(".npz"):
            path += ".npz"
        # The .npz layout written by hand (one .npy per key), so that any parameter
        # name works: np.savez(path, **arrays) fails on a name such as "file".
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
            for name, arr in self.state_dict().items():
                with zf.open(name + ".npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, arr, allow_pickle=False)
        return path

    def load(self, path: str | os.PathLike) -> None:
        """Load parameters saved by ``save`` (same checks as ``load_state_dict``).

        >>> import os, tempfile
        >>> from duograd import nn
        >>> path = nn.Linear(2, 3, rng=0).save(os.path.join(tempfile.mkdtemp(), "layer.npz"))
        >>> other = nn.Linear(2, 3, rng=1)
        >>> other.load(path)
        >>> bool((other.weight.data == nn.Linear(2, 3, rng=0).weight.data).all())
        True
        """
        with np.load(os.fspath(path), allow_pickle=False) as f:
            state = OrderedDict((k, f[k]) for k in f.files)
        self.load_state_dict(state)

    def __repr__(self) -> str:
        children = [(k, v) for k, v in self._members() if isinstance(v, Module)]
        if not children:
            return f"{type(self).__name__}({self._extra_repr()})"
        body = "".join(f"\n  ({k}): " + repr(v).replace("\n", "\n  ") for k, v in children)
        return f"{type(self).__name__}({body}\n)"

    def _extra_repr(self) -> str:
        return ""


class Linear(Module):
    """``x @ weight.T + bias``, as ``torch.nn.Linear``: ``weight`` of shape
    (out_features, in_features) and ``bias`` of shape (out_features,) or None.

    PyTorch's layout and default initialisation: both drawn uniformly from
    [-1/sqrt(in_features), 1/sqrt(in_features)] (kaiming_uniform with a=sqrt(5) for the
    weight), weight first; ``rng`` (a ``numpy.random.Generator`` or an int seed) makes them
    reproducible. A torch ``state_dict()`` loads as it is.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> layer = nn.Linear(in_features=3, out_features=2, rng=0)
    >>> layer.weight.shape, layer(dg.ones((5, 3))).shape
    ((2, 3), (5, 2))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, rng: Any = None) -> None:
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
                raise ValueError(f"Linear: {name} must be a non-negative int, got {n!r}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        gen = _as_rng(rng)
        bound = 1.0 / np.sqrt(self.in_features) if self.in_features else 0.0
        self.weight = Tensor(gen.uniform(-bound, bound, (self.out_features, self.in_features)),
                             requires_grad=True)
        self.bias = (Tensor(gen.uniform(-bound, bound, self.out_features), requires_grad=True)
                     if bias else None)

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ShapeError(f"Linear: expected input with last dimension {self.in_features}, "
                             f"got shape {x.shape} (weight of shape {self.weight.shape})")
        out = linear_p(x, self.weight)  # x @ weight.T, against a transposed view (no copy)
        return out if self.bias is None else out + self.bias

    def _extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class ReLU(Module):
    """``max(x, 0)`` elementwise, as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.ReLU()(dg.tensor([-1.0, 2.0])).numpy()
    array([0., 2.])
    """

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).relu()


class Tanh(Module):
    """``tanh(x)`` elementwise, as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Tanh()(dg.tensor([0.0])).numpy()
    array([0.])
    """

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).tanh()


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise, as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Sigmoid()(dg.tensor([0.0])).numpy()
    array([0.5])
    """

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).sigmoid()


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``, so the expected output equals the input; in eval mode, the identity.

    The mask is drawn with NumPy from the module's own generator (``rng``: a
    ``numpy.random.Generator`` or an int seed) and the input is multiplied by it, so the
    gradient flows through the kept elements only, scaled by the same factor.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> drop = nn.Dropout(0.5, rng=0)
    >>> sorted(set(drop(dg.ones(1000)).numpy().tolist()))   # dropped, or kept and doubled
    [0.0, 2.0]
    >>> drop.eval()(dg.ones(3)).numpy()
    array([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, rng: Any = None) -> None:
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be a probability in [0, 1], got {p}")
        self.p = p
        self._rng = _as_rng(rng)

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:  # every element dropped (PyTorch gives zeros, not 0 * inf)
            return x * np.zeros(x.shape, dtype=x.dtype)
        return x * _draw(self._mask, x.shape, x.dtype)  # (drawn again by a dg.compile replay)

    def _mask(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        keep = self._rng.random(shape) >= self.p   # kept with probability 1 - p
        return keep.astype(dtype) * dtype.type(1.0 / (1.0 - self.p))

    def _extra_repr(self) -> str:
        return f"p={self.p}"


class MSELoss(Module):
    """``functional.mse_loss`` as a module: ``loss = nn.MSELoss()(pred, target)``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.MSELoss()(dg.tensor([1.0, 2.0]), [0.0, 0.0]).item()
    2.5
    """

    def __init__(self, reduction: str = "mean") -> None:
        F._check_reduction(reduction, "MSELoss")
        self.reduction = reduction

    def forward(self, pred: Any, target: Any) -> Tensor:
        return F.mse_loss(pred, target, reduction=self.reduction)

    def _extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(Module):
    """``functional.cross_entropy`` as a module: ``loss = nn.CrossEntropyLoss()(logits,
    targets)`` with logits (N, C) and integer class targets (N,).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> round(nn.CrossEntropyLoss()(dg.tensor([[2.0, 0.0], [0.0, 2.0]]), [0, 0]).item(), 6)
    1.126928
    """

    def __init__(self, reduction: str = "mean") -> None:
        F._check_reduction(reduction, "CrossEntropyLoss")
        self.reduction = reduction

    def forward(self, logits: Any, targets: Any) -> Tensor:
        return F.cross_entropy(logits, targets, reduction=self.reduction)

    def _extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class Sequential(Module):
    """Modules applied one after another. As in PyTorch, children are named by their
    position, so the first layer's weight is ``0.weight``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> net = nn.Sequential(nn.Linear(2, 4, rng=0), nn.ReLU(), nn.Linear(4, 1, rng=1))
    >>> list(net.state_dict())
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> net(dg.ones((3, 2))).shape
    (3, 1)
    """

    def __init__(self, *modules: Module) -> None:
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} is a {type(m).__name__}, not a Module")
        self._modules = tuple(modules)

    def _members(self) -> Iterator[tuple[str, Any]]:
        return ((str(i), m) for i, m in enumerate(self._modules))

    def forward(self, x: Any) -> Any:
        for m in self._modules:
            x = m(x)
        return x

    def __getitem__(self, i: int) -> Module:
        return self._modules[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules)


_ACTIVATIONS = {"relu": Tensor.relu, "tanh": Tensor.tanh}


class MLP(Module):
    """A multilayer perceptron: ``Linear`` layers of sizes ``nin -> nouts[0] -> ... ->
    nouts[-1]``, every hidden layer followed by ``activation`` ("relu" or "tanh"); the
    last layer is linear, so the output is logits.

    One ``rng`` feeds the layers in order, so the same seed gives the same model.
    Parameters are named ``layers.0.weight``, ``layers.0.bias``, ``layers.1.weight``, ...

    >>> import duograd as dg
    >>> from duograd import nn
    >>> net = nn.MLP(64, [64, 32, 10], rng=0)
    >>> sum(p.numel() for p in net.parameters())
    6570
    >>> net(dg.ones((8, 64))).shape
    (8, 10)
    """

    def __init__(self, nin: int, nouts: list[int] | tuple[int, ...], activation: str = "relu",
                 rng: Any = None) -> None:
        if activation not in _ACTIVATIONS:
            raise ValueError(f"MLP: activation must be one of {sorted(_ACTIVATIONS)}, "
                             f"got {activation!r}")
        nouts = list(nouts)
        if not nouts:
            raise ValueError("MLP: nouts must list at least one layer size")
        gen = _as_rng(rng)
        sizes = [nin] + nouts
        self.activation = activation
        self.layers = [Linear(sizes[i], sizes[i + 1], rng=gen) for i in range(len(nouts))]

    def forward(self, x: Any) -> Tensor:
        act = _ACTIVATIONS[self.activation]
        *hidden, last = self.layers
        for layer in hidden:
            x = act(layer(x))
        return last(x)

    def __repr__(self) -> str:
        sizes = [self.layers[0].in_features] + [layer.out_features for layer in self.layers]
        return f"MLP({' -> '.join(map(str, sizes))}, activation={self.activation!r})"


# ---------------------------------------------------------------- convolution and pooling

def _pair_arg(value: Any, name: str, layer: str, minimum: int) -> tuple[int, int]:
    """A layer's int-or-pair argument, checked when the layer is built (not at first use)."""
    from ..conv import _pair  # the same check and message as the functions

    return _pair(value, name, layer, minimum)


class Conv2d(Module):
    """2-D convolution of NCHW input, ``dg.conv2d(x, weight, bias, stride, padding)``, with
    ``weight`` of shape (out_channels, in_channels, kh, kw) and ``bias`` of shape
    (out_channels,) or None: PyTorch's layout, so ``nn.utils.load_torch_state_dict`` copies
    a ``torch.nn.Conv2d``'s parameters as they are.

    Both are drawn uniformly from [-1/sqrt(fan_in), 1/sqrt(fan_in)] with fan_in =
    in_channels * kh * kw, weight first, as PyTorch's default initialisation; ``rng`` (a
    ``numpy.random.Generator`` or an int seed) makes them reproducible.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> conv = nn.Conv2d(1, 16, 3, padding=1, rng=0)
    >>> conv.weight.shape, conv.bias.shape
    ((16, 1, 3, 3), (16,))
    >>> conv(dg.ones((8, 1, 8, 8))).shape
    (8, 16, 8, 8)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, bias: bool = True, rng: Any = None) -> None:
        for name, n in (("in_channels", in_channels), ("out_channels", out_channels)):
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
                raise ValueError(f"Conv2d: {name} must be a positive int, got {n!r}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = _pair_arg(kernel_size, "kernel_size", "Conv2d", 1)
        self.stride = _pair_arg(stride, "stride", "Conv2d", 1)
        self.padding = _pair_arg(padding, "padding", "Conv2d", 0)
        gen = _as_rng(rng)
        bound = 1.0 / np.sqrt(self.in_channels * self.kernel_size[0] * self.kernel_size[1])
        shape = (self.out_channels, self.in_channels) + self.kernel_size
        self.weight = Tensor(gen.uniform(-bound, bound, shape), requires_grad=True)
        self.bias = (Tensor(gen.uniform(-bound, bound, self.out_channels), requires_grad=True)
                     if bias else None)

    def forward(self, x: Any) -> Tensor:
        return conv2d(_as_tensor(x), self.weight, self.bias, self.stride, self.padding)

    def _extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, bias={self.bias is not None}")


class MaxPool2d(Module):
    """``dg.max_pool2d(x, kernel_size, stride, padding)`` as a module; ``stride`` defaults
    to ``kernel_size``. Tied elements share a window's gradient.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.MaxPool2d(2)(dg.ones((8, 16, 8, 8))).shape
    (8, 16, 4, 4)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        self.kernel_size = _pair_arg(kernel_size, "kernel_size", "MaxPool2d", 1)
        self.stride = self.kernel_size if stride is None else _pair_arg(stride, "stride", "MaxPool2d", 1)
        self.padding = _pair_arg(padding, "padding", "MaxPool2d", 0)

    def forward(self, x: Any) -> Tensor:
        return max_pool2d(_as_tensor(x), self.kernel_size, self.stride, self.padding)

    def _extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """``dg.avg_pool2d(x, kernel_size, stride, padding)`` as a module; ``stride`` defaults
    to ``kernel_size``, and padding zeros count in the average (as in PyTorch).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.AvgPool2d(2)(dg.ones((1, 1, 4, 4))).numpy()
    array([[[[1., 1.],
             [1., 1.]]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        self.kernel_size = _pair_arg(kernel_size, "kernel_size", "AvgPool2d", 1)
        self.stride = self.kernel_size if stride is None else _pair_arg(stride, "stride", "AvgPool2d", 1)
        self.padding = _pair_arg(padding, "padding", "AvgPool2d", 0)

    def forward(self, x: Any) -> Tensor:
        return avg_pool2d(_as_tensor(x), self.kernel_size, self.stride, self.padding)

    def _extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Flatten(Module):
    """Every dimension but the first (the batch) flattened into one, as ``torch.nn.Flatten()``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Flatten()(dg.ones((8, 32, 2, 2))).shape
    (8, 128)
    """

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        if x.ndim < 2:
            raise ValueError(f"Flatten: expected an input with a batch dimension and at least "
                             f"one more, got shape {x.shape}")
        return x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
