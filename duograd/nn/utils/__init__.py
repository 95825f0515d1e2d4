"""Utilities on modules and their parameters: gradient clipping, and moving weights
between duograd and PyTorch.

Both libraries name parameters the same way (dotted paths, such as ``0.weight`` in a
``Sequential`` or ``layers.1.bias`` in a module holding a list) and, since ``Linear``
follows PyTorch's layout (weight (out_features, in_features), forward ``x @ weight.T``),
store every parameter the same way. ``load_torch_state_dict`` and ``torch_state_dict``
remain for naming, dtype conversion and their checks; ``Module.load_state_dict`` takes a
torch ``state_dict()`` directly too.

``TORCH_LAYOUTS`` is the one place that would record where a layout differs: for a module
class, which of its own parameters differ and the two conversions. It is empty: every
parameter is copied as it is.

>>> import duograd as dg
>>> from duograd import nn
>>> net = nn.Sequential(nn.Linear(3, 2, rng=0), nn.ReLU(), nn.Linear(2, 1, rng=1))
>>> {k: v.shape for k, v in nn.utils.torch_state_dict(net, numpy=True).items()}
{'0.weight': (2, 3), '0.bias': (2,), '2.weight': (1, 2), '2.bias': (1,)}
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np

from ...autograd import host
from ..._tensor import Tensor, tensor  # public names; not `from .. import` (an import cycle)
from ..modules import Module

__all__ = ["clip_grad_norm_", "load_torch_state_dict", "torch_state_dict", "TORCH_LAYOUTS",
           "TorchLayout"]


# ---------------------------------------------------------------- gradient clipping


def clip_grad_norm_(params: Iterable[Tensor] | Tensor, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> float:
    """Scale the gradients of ``params`` together so that their total norm is at most
    ``max_norm``, as ``torch.nn.utils.clip_grad_norm_``; returns the total norm *before*
    clipping, as a float.

    The total norm is the ``norm_type``-norm of all gradients seen as one vector (``inf``
    for the largest magnitude). Every gradient is multiplied by
    ``min(1, max_norm / (total + 1e-6))``, PyTorch's factor. Parameters whose ``.grad`` is
    None are skipped. Each ``.grad`` is replaced by a new Tensor (no gradient array is
    changed in place, since one may be shared with another tensor).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> w = dg.tensor([0.0, 0.0], requires_grad=True)
    >>> w.grad = dg.tensor([3.0, 4.0])
    >>> nn.utils.clip_grad_norm_([w], max_norm=1.0)
    5.0
    >>> w.grad.numpy().round(6)
    array([0.6, 0.8])
    """
    if isinstance(params, Tensor):
        params = [params]
    # (listed here, outside the host step: a generator such as model.parameters() would be
    # exhausted when a dg.compile replay calls the step again with the recorded arguments)
    return _clip_grad_norm(list(params), max_norm, norm_type, error_if_nonfinite)


@host  # a dg.compile replay calls it again (it computes in NumPy on the gradients)
def _clip_grad_norm(params: list[Tensor], max_norm: float, norm_type: float,
                    error_if_nonfinite: bool) -> float:
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"clip_grad_norm_: parameter {i} is a {type(p).__name__}, not a Tensor")
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not norm_type > 0.0:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return 0.0
    grads = [p.grad._data for p in with_grad]
    if norm_type == math.inf:
        norms = np.array([np.max(np.abs(g)) if g.size else 0.0 for g in grads])
        total = float(np.max(norms))
    elif norm_type == 2.0:
        # the norm of the per-tensor norms, as PyTorch stacks them
        norms = np.array([np.sqrt(np.sum(g * g)) for g in grads])
        total = float(np.sqrt(np.sum(norms * norms)))
    else:
        norms = np.array([np.sum(np.abs(g) ** norm_type) ** (1.0 / norm_type) for g in grads])
        total = float(np.sum(norms ** norm_type) ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients of {len(grads)} parameters is {total}, so they cannot "
                           "be clipped (error_if_nonfinite=False scales them anyway)")
    coef = min(max_norm / (total + 1e-6), 1.0)
    for p, g in zip(with_grad, grads):
        p.grad = tensor(g * g.dtype.type(coef), dtype=g.dtype)
    return total


# ---------------------------------------------------------------- PyTorch state dicts


class TorchLayout(NamedTuple):
    """How one parameter is stored in PyTorch, when that differs from duograd."""

    to_torch: Callable[[np.ndarray], np.ndarray]    # duograd's array -> PyTorch's
    from_torch: Callable[[np.ndarray], np.ndarray]  # PyTorch's array -> duograd's
    description: str                                # for error messages


# {module class: {its own parameter's name: layout}}. A subclass inherits its base's
# entry. Add a class here only if PyTorch stores one of its parameters differently.
TORCH_LAYOUTS: dict[type, dict[str, TorchLayout]] = {}


def _layouts(module: Module) -> dict[str, TorchLayout]:
    """The layout of every parameter of ``module`` that PyTorch stores differently,
    by dotted name."""
    out: dict[str, TorchLayout] = {}
    for prefix, m in module.named_modules():
        table = next((TORCH_LAYOUTS[c] for c in type(m).__mro__ if c in TORCH_LAYOUTS), None)
        if table is None:
            continue
        for local, _ in m.named_parameters():
            if local in table:
                out[f"{prefix}.{local}" if prefix else local] = table[local]
    return out


def _read(value: Any) -> np.ndarray:
    """A PyTorch tensor, a duograd Tensor or an array-like, as a NumPy array."""
    if isinstance(value, Tensor):
        return value._data
    if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):
        return value.detach().cpu().numpy()  # a torch.Tensor, read without importing torch
    return np.asarray(value)


def torch_state_dict(module: Module, numpy: bool = False) -> "OrderedDict[str, Any]":
    """``module``'s parameters under the names ``state_dict()`` uses, ready for a torch
    model's ``load_state_dict`` (the layouts are the same: a ``Linear`` weight is (out, in)).

    The values are copies, as ``torch.Tensor``s (which needs PyTorch), or NumPy arrays
    with ``numpy=True``.

    >>> from duograd import nn
    >>> layer = nn.Linear(3, 2, rng=0)
    >>> sd = nn.utils.torch_state_dict(layer, numpy=True)
    >>> sd["weight"].shape, bool((sd["weight"] == layer.weight.detach().numpy()).all())
    ((2, 3), True)
    """
    layouts = _layouts(module)
    arrays = OrderedDict()
    for name, p in module.named_parameters():
        arr = layouts[name].to_torch(p._data) if name in layouts else p._data
        arrays[name] = np.array(arr, order="C", copy=True)
    if numpy:
        return arrays
    try:
        import torch
    except ImportError as e:
        raise ImportError("torch_state_dict: PyTorch is not installed (`pip install torch`); "
                          "numpy=True gives the same values as NumPy arrays") from e
    return OrderedDict((k, torch.from_numpy(v)) for k, v in arrays.items())


def load_torch_state_dict(module: Module, state_dict: Mapping[str, Any]) -> None:
    """Load a PyTorch model's ``state_dict()`` (torch Tensors or arrays) into the matching
    duograd ``module``; the layouts are the same, so nothing is transposed. Values are cast
    to each parameter's dtype.

    The names must be the ones ``module.state_dict()`` has (a ``torch.nn.Sequential`` of
    Linear and activation layers matches an ``nn.Sequential`` of the same layers). Every
    key and shape is checked first: a missing key, an unexpected key or a shape that is
    not the PyTorch shape of the parameter raises a ValueError naming each of them, and
    nothing is loaded.

    >>> import numpy as np
    >>> from duograd import nn
    >>> layer = nn.Linear(3, 2, rng=0)
    >>> w_torch = np.arange(6.0).reshape(2, 3)           # PyTorch's (out, in)
    >>> nn.utils.load_torch_state_dict(layer, {"weight": w_torch, "bias": np.zeros(2)})
    >>> layer.weight.detach().numpy()                                # the same layout
    array([[0., 1., 2.],
           [3., 4., 5.]])
    """
    if not isinstance(module, Module):
        raise TypeError(f"load_torch_state_dict: expected a duograd nn.Module, got "
                        f"{type(module).__name__}")
    layouts = _layouts(module)
    params = OrderedDict(module.named_parameters())
    params.update((k, b) for k, b in module.named_buffers() if k in module.state_dict())
    problems: list[str] = []
    converted: OrderedDict[str, np.ndarray] = OrderedDict()
    for name, p in params.items():
        layout = layouts.get(name)
        torch_shape = layout.to_torch(p._data).shape if layout else p.shape
        where = f" ({layout.description})" if layout else ""
        if name not in state_dict:
            problems.append(f"missing key '{name}' (PyTorch shape {torch_shape}{where})")
            continue
        try:
            arr = _read(state_dict[name])
        except (TypeError, ValueError, RuntimeError) as e:
            problems.append(f"'{name}': cannot read the value as an array ({e})")
            continue
        if arr.shape != torch_shape:
            problems.append(f"size mismatch for '{name}': the value has shape {arr.shape}, the "
                            f"model expects PyTorch shape {torch_shape}{where}")
            continue
        converted[name] = layout.from_torch(arr) if layout else arr
    for name in state_dict:
        if name not in params:
            try:
                shape = tuple(_read(state_dict[name]).shape)
            except (TypeError, ValueError, RuntimeError):
                shape = "unknown"
            problems.append(f"unexpected key '{name}' (value of shape {shape})")
    if problems:
        raise ValueError(f"load_torch_state_dict into {type(module).__name__}: "
                         + "; ".join(problems) + " (nothing was loaded)")
    module.load_state_dict(converted)


from . import rnn  # noqa: E402  (torch.nn.utils.rnn: padding and packing sequences)

__all__ += ["rnn"]
