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
from typing import Any, Iterator, Mapping, NamedTuple

import numpy as np

from ..ops import linear_p
from ..shapes import DimError, ShapeError
from .._tensor import Tensor, _draw, tensor  # public names; not `from .. import` (a cycle)
from ..random import as_rng
from ..cuda import is_cuda_device, not_compiled  # torch's answers without a GPU (branch inventory)
from . import functional as F
from . import init
from .. import _context as _ctx

__all__ = ["Module", "Linear", "MLP", "Sequential", "ReLU", "Tanh", "Sigmoid", "Dropout",
           "MSELoss", "CrossEntropyLoss", "Flatten",
           "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "KLDivLoss", "CosineSimilarity"]


def _input(x: Any) -> Tensor:
    """A module's input as a Tensor: a Tensor passes through unchanged, anything else is
    copied into a new leaf (``dg.tensor``; unlike ``_tensor._as_tensor``, which makes
    graph-less operand constants for the primitives)."""
    return x if isinstance(x, Tensor) else tensor(x)


class _StateDictError(RuntimeError, ValueError):
    """A state dict that does not fit the model: torch raises RuntimeError (duograd
    raised ValueError before, so both catch it)."""


class _IncompatibleKeys(NamedTuple):
    """``load_state_dict``'s result, as torch's: the model's keys the state dict lacked,
    and the state dict's keys the model lacks."""

    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


def _read_array(value: Any) -> np.ndarray:
    """A duograd Tensor, a torch tensor or an array-like, as a NumPy array."""
    if isinstance(value, Tensor):
        return value._data
    if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):
        return value.detach().cpu().numpy()  # a torch.Tensor, read without importing torch
    return np.asarray(value)


def _shape_desc(value: Any) -> Any:
    try:
        return np.shape(_read_array(value))
    except ValueError:
        return "unknown"


_GUARDED = (bool, int, float, str, type(None))


def _guard(m: Any) -> None:
    """Tell the listeners (a ``dg.compile`` recording) the module's flags and scalar
    settings that its forward may read: ``training`` and every plain Python number, bool
    or string attribute, or tuple of them (a Dropout's ``p``, an eps, a conv's padding); a
    replay checks them every call."""
    _ctx.attr(m, "training", m.training)
    for k, v in vars(m).items():
        if type(v) in _GUARDED or (type(v) is tuple and all(type(x) in _GUARDED for x in v)):
            _ctx.attr(m, k, v)


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
    >>> m(dg.tensor([1.0, 2.0])).detach().numpy()
    array([3., 5.])
    """

    @property
    def training(self) -> bool:
        """Whether the module is in training mode (True until ``eval()``). Kept in the
        instance's ``__dict__`` as in torch (True when never set, so subclasses need not
        call ``super().__init__``); every read tells a ``dg.compile`` recording, which
        guards it (a replay checks it and records again after ``eval()``), whether or not
        the module is called: ``fn`` reading ``drop.training`` itself is guarded too.

        >>> from duograd import nn
        >>> d = nn.Dropout(0.5)
        >>> d.training, d.eval().training, vars(d)["training"]
        (True, False, False)
        """
        v = self.__dict__.get("training", True)
        if _ctx.on_attr:
            _ctx.attr(self, "training", v)
        return v

    @training.setter
    def training(self, mode: bool) -> None:
        self.__dict__["training"] = mode

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: forward is not defined")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _ctx.on_attr:  # a recording (dg.compile) guards the flags the forward may read
            _guard(self)
        hooks = self.__dict__.get("_hooks")
        if not hooks:
            return self.forward(*args, **kwargs)
        return _call_with_hooks(self, hooks, args, kwargs)

    # ------------------------------------------------------------ hooks (issue 28)
    def _add_hook(self, kind: str, hook: Any, prepend: bool = False, **flags: Any) -> "RemovableHandle":
        hooks = self.__dict__.setdefault("_hooks", {})
        entries = hooks.setdefault(kind, [])
        entry = (hook, flags)
        entries.insert(0, entry) if prepend else entries.append(entry)
        return RemovableHandle(entries, entry)

    def register_forward_pre_hook(self, hook: Any, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> "RemovableHandle":
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``) runs
        before ``forward``; a non-None result replaces the arguments (a tuple, or one value).
        Returns a handle with ``remove()``, as torch.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> m = nn.ReLU()
        >>> h = m.register_forward_pre_hook(lambda mod, args: (-args[0],))
        >>> m(dg.tensor([2.0])).numpy()
        array([0.])
        >>> h.remove(); m(dg.tensor([2.0])).numpy()
        array([2.])
        """
        return self._add_hook("forward_pre", hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(self, hook: Any, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> "RemovableHandle":
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) runs after ``forward``; a non-None result replaces the output.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> m = nn.Linear(2, 1, rng=0)
        >>> seen = []
        >>> _ = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
        >>> _ = m(dg.ones((3, 2))); seen
        [(3, 1)]
        """
        return self._add_hook("forward", hook, prepend, with_kwargs=with_kwargs, always_call=always_call)

    def register_full_backward_pre_hook(self, hook: Any, prepend: bool = False) -> "RemovableHandle":
        """``hook(module, grad_output)`` runs when the gradients of the outputs are known; a
        non-None result (a tuple) replaces them.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> m = nn.Linear(2, 1, rng=0)
        >>> _ = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,))
        >>> m(dg.ones((1, 2))).sum().backward(); m.weight.grad.numpy()
        array([[0., 0.]])
        """
        return self._add_hook("backward_pre", hook, prepend)

    def register_full_backward_hook(self, hook: Any, prepend: bool = False) -> "RemovableHandle":
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's
        tensor inputs are computed (tuples, None for an input that needs none); a non-None
        result replaces ``grad_input``, as torch.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> m = nn.Linear(2, 1, rng=0)
        >>> got = []
        >>> _ = m.register_full_backward_hook(lambda mod, gi, go: got.append((gi[0].shape, go[0].shape)))
        >>> m(dg.ones((3, 2), requires_grad=True)).sum().backward(); got
        [((3, 2), (3, 1))]
        """
        return self._add_hook("backward", hook, prepend)

    def register_backward_hook(self, hook: Any) -> "RemovableHandle":
        """torch's deprecated form: ``register_full_backward_hook``.

        >>> from duograd import nn
        >>> nn.ReLU().register_backward_hook(lambda m, gi, go: None).remove()
        """
        return self.register_full_backward_hook(hook)

    # ------------------------------------------------------------ finding parameters
    def _members(self) -> Iterator[tuple[str, Any]]:
        """The (name, value) pairs the parameter walk visits, in assignment order."""
        return ((k, v) for k, v in vars(self).items() if not k.startswith("_"))

    def _walk(self, prefix: str, buffers: Any = False) -> Iterator[tuple[str, Tensor]]:
        """Parameters (``buffers`` False), registered buffers (True), or both in assignment
        order with only persistent buffers (``"state"``), under dotted names."""
        own = self.__dict__.get("_buffer_names", {})
        members = list(self._members())
        for name, value in members:
            if isinstance(value, Buffer) and name not in own:  # (nn.Buffer: a buffer when assigned)
                own = self.__dict__.setdefault("_buffer_names", {})
                own[name] = value.persistent
        for name, value in members:
            if isinstance(value, Tensor):
                if buffers == "state" and own.get(name, True) or (name in own) == buffers:
                    yield prefix + name, value
            elif isinstance(value, Module):
                yield from value._walk(f"{prefix}{name}.", buffers)
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Tensor) and not buffers:
                        yield f"{prefix}{name}.{i}", item
                    elif isinstance(item, Module):
                        yield from item._walk(f"{prefix}{name}.{i}.", buffers)

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """``(dotted name, module)`` for this module (named ``prefix``, "" by default) and
        every submodule, parents before children, in assignment order; a module reached
        twice is listed once (``remove_duplicate``), as torch.

        >>> from duograd import nn
        >>> [name for name, _ in nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU()).named_modules()]
        ['', '0', '1']
        """
        if isinstance(memo, str):  # (the old positional form named_modules(prefix))
            memo, prefix = None, memo
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        dot = prefix + "." if prefix else ""
        for name, value in self._members():
            items = (value if isinstance(value, (list, tuple)) else [value])
            for i, item in enumerate(items):
                if isinstance(item, Module):
                    child = name if items is not value else f"{name}.{i}"
                    yield from item.named_modules(memo, dot + child, remove_duplicate)

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

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, parameter)`` pairs: assignment order, layer by layer, weight
        before bias. A parameter shared by two layers is listed once, under its first name.

        >>> from duograd import nn
        >>> [n for n, _ in nn.Linear(2, 3, rng=0).named_parameters()]
        ['weight', 'bias']
        """
        seen: set[int] = set()
        dot = prefix + "." if prefix else ""
        for name, p in self._walk(""):
            if not recurse and "." in name and not name.split(".")[0].isdigit() \
                    and isinstance(getattr(self, name.split(".")[0], None), Module):
                continue
            if id(p) not in seen or not remove_duplicate:
                seen.add(id(p))
                yield dot + name, p

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every parameter, in the order of ``named_parameters``: an iterator, as torch's
        (``next(model.parameters())`` is the first; ``list(...)`` to index or count).

        >>> from duograd import nn
        >>> sum(p.numel() for p in nn.MLP(2, [64, 64, 2], rng=0).parameters())
        4482
        >>> next(nn.Linear(2, 3, rng=0).parameters()).shape
        (3, 2)
        """
        return (p for _, p in self.named_parameters(recurse=recurse))

    # ------------------------------------------------------------ buffers, casts (layers branch)
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Keep ``tensor`` as the attribute ``name``, a buffer: in ``state_dict`` (when
        ``persistent``) and cast by ``to``, never a parameter (an optimizer ignores it).

        >>> import duograd as dg
        >>> from duograd import nn
        >>> m = nn.Module()
        >>> m.register_buffer("count", dg.zeros(1))
        >>> list(m.state_dict()), list(m.parameters())
        (['count'], [])
        """
        if not isinstance(name, str) or not name or "." in name or name.startswith("_"):
            raise KeyError(f"register_buffer: invalid buffer name {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: cannot assign a {type(tensor).__name__} as the "
                            f"buffer '{name}' (a Tensor or None is required)")
        self.__dict__.setdefault("_buffer_names", {})[name] = bool(persistent)
        setattr(self, name, tensor)

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Keep ``param`` (a Tensor, or None) as the parameter ``name``, as torch.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> m = nn.Module()
        >>> m.register_parameter("scale", nn.Parameter(dg.ones(2)))
        >>> [n for n, _ in m.named_parameters()]
        ['scale']
        """
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name or not name:
            raise KeyError(f"parameter name can't contain \".\" or be empty, got {name!r}")
        if hasattr(self, name) and not isinstance(getattr(self, name), (Tensor, type(None))):
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Tensor):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self.__dict__.get("_buffer_names", {}).pop(name, None)
        setattr(self, name, param)

    def get_submodule(self, target: str) -> "Module":
        """The submodule at the dotted path ``target`` ("" is this module), as torch.

        >>> from duograd import nn
        >>> net = nn.Sequential(nn.Sequential(nn.Linear(2, 2, rng=0)))
        >>> type(net.get_submodule("0.0")).__name__
        'Linear'
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            child = dict(mod.named_children()).get(item)
            if child is None:
                if not hasattr(mod, item):
                    raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
                child = getattr(mod, item)
            if not isinstance(child, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
            mod = child
        return mod

    def get_parameter(self, target: str) -> Tensor:
        """The parameter at the dotted path ``target``, as torch.

        >>> from duograd import nn
        >>> nn.Sequential(nn.Linear(2, 3, rng=0)).get_parameter("0.bias").shape
        (3,)
        """
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name in mod.__dict__.get("_buffer_names", {}):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        p = getattr(mod, name, None) if name in dict(mod._members()) else None
        if not isinstance(p, Tensor):
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return p

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``, as torch.

        >>> from duograd import nn
        >>> nn.Sequential(nn.BatchNorm1d(3)).get_buffer("0.running_mean").shape
        (3,)
        """
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod.__dict__.get("_buffer_names", {}):
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` for every registered buffer (None ones skipped).

        >>> from duograd import nn
        >>> [n for n, _ in nn.BatchNorm1d(3).named_buffers()]
        ['running_mean', 'running_var', 'num_batches_tracked']
        """
        dot = prefix + "." if prefix else ""
        return ((dot + n, b) for n, b in self._walk("", buffers=True))

    def buffers(self) -> Iterator[Tensor]:
        """Every buffer, in the order of ``named_buffers``.

        >>> from duograd import nn
        >>> [b.shape for b in nn.BatchNorm1d(3).buffers()][:2]
        [(3,), (3,)]
        """
        return (b for _, b in self.named_buffers())

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """``(name, module)`` for each direct submodule.

        >>> from duograd import nn
        >>> [n for n, _ in nn.Sequential(nn.ReLU(), nn.Tanh()).named_children()]
        ['0', '1']
        """
        for name, value in self._members():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def children(self) -> Iterator["Module"]:
        """Each direct submodule.

        >>> from duograd import nn
        >>> len(list(nn.Sequential(nn.ReLU(), nn.Tanh()).children()))
        2
        """
        return (m for _, m in self.named_children())

    def apply(self, fn: Any) -> "Module":
        """Call ``fn(module)`` on every submodule, children first, then on this module (as
        torch); returns the module.

        >>> from duograd import nn
        >>> seen = []
        >>> _ = nn.Sequential(nn.ReLU(), nn.Tanh()).apply(lambda m: seen.append(type(m).__name__))
        >>> seen
        ['ReLU', 'Tanh', 'Sequential']
        """
        for _, m in self.named_children():
            m.apply(fn)
        fn(self)
        return self

    def _cast(self, dtype: Any) -> "Module":
        try:
            dtype = np.dtype(dtype)
        except TypeError:  # a torch dtype such as torch.float32 (or any object named like one)
            dtype = np.dtype(str(dtype).rsplit(".", 1)[-1])
        if dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}.to: nn.Module.to only accepts floating "
                            f"point dtypes, but got desired dtype={dtype}")
        for _, t in list(self.named_parameters()) + list(self.named_buffers()):
            if np.dtype(t.dtype).kind == "f":
                t.data = t._data.astype(dtype)  # the same Tensor objects, as torch keeps Parameters
        return self

    def to(self, *args: Any, dtype: Any = None, **kwargs: Any) -> "Module":
        """Cast every floating parameter and buffer to ``dtype`` in place (the Tensor
        objects stay the same, so an optimizer built before still holds them); a device
        argument "cpu" is accepted. Returns the module.

        >>> import numpy as np
        >>> from duograd import nn
        >>> nn.LayerNorm(3).to(np.float32).weight.dtype
        dtype('float32')
        """
        for a in args + ((kwargs["device"],) if "device" in kwargs else ()):
            if is_cuda_device(a):
                raise not_compiled(a)
        for a in args:
            if isinstance(a, str) or type(a).__name__ == "device":
                if str(a) != "cpu":
                    raise RuntimeError(f"{type(self).__name__}.to: only the cpu device exists, got {a!r}")
            else:
                dtype = a
        if kwargs.get("device") not in (None, "cpu"):
            raise RuntimeError(f"{type(self).__name__}.to: only the cpu device exists")
        return self if dtype is None else self._cast(dtype)

    def cpu(self) -> "Module":
        """``self``: the parameters already live on the CPU (as torch's ``cpu()``, it
        returns the module).

        >>> from duograd import nn
        >>> m = nn.Linear(2, 2)
        >>> m.cpu() is m
        True
        """
        return self

    def cuda(self, device: Any = None) -> "Module":
        """Raises torch's ``AssertionError``: there is no CUDA device here.

        >>> from duograd import nn
        >>> nn.Linear(2, 2).cuda()
        Traceback (most recent call last):
        AssertionError: Torch not compiled with CUDA enabled
        """
        raise not_compiled(device)

    def float(self) -> "Module":
        """``to(float32)``.

        >>> from duograd import nn
        >>> nn.LayerNorm(3).float().weight.dtype
        dtype('float32')
        """
        return self._cast(np.float32)

    def half(self) -> "Module":
        """``to(float16)``.

        >>> from duograd import nn
        >>> nn.LayerNorm(3).half().weight.dtype
        dtype('float16')
        """
        return self._cast(np.float16)

    def double(self) -> "Module":
        """``to(float64)``.

        >>> from duograd import nn
        >>> nn.LayerNorm(3).float().double().weight.dtype
        dtype('float64')
        """
        return self._cast(np.float64)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` on every parameter (freeze with False); returns the module.

        >>> from duograd import nn
        >>> [p.requires_grad for p in nn.LayerNorm(2).requires_grad_(False).parameters()]
        [False, False]
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set every parameter's ``.grad`` to None (the next backward starts afresh), or
        with ``set_to_none=False`` to zeros.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> layer = nn.Linear(2, 1, rng=0)
        >>> layer(dg.ones((1, 2))).sum().backward()
        >>> layer.zero_grad()
        >>> layer.weight.grad is None
        True
        """
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = tensor(np.zeros_like(p.grad._data))

    # ------------------------------------------------------------ state
    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Any]":
        """An ordered dict from dotted names to copies of the arrays of the parameters and
        the persistent buffers (such as batch norm's running statistics), in assignment
        order, as torch orders them for its layers.

        >>> from duograd import nn
        >>> list(nn.LayerNorm(3).state_dict())
        ['weight', 'bias']
        """
        if args:  # torch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        seen: set[int] = set()
        out: Any = OrderedDict() if destination is None else destination
        for name, t in self._walk("", "state"):
            if id(t) not in seen:
                seen.add(id(t))
                out[prefix + name] = t if keep_vars else t._data.copy()
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> "_IncompatibleKeys":
        """Copy arrays (or Tensors, or torch tensors) from ``state_dict`` into the
        parameters and buffers of the same names, as ``torch.nn.Module.load_state_dict``;
        returns torch's ``(missing_keys, unexpected_keys)`` named tuple.

        With ``strict`` (the default) every key must match and every parameter get a
        value; a mismatch raises a ``RuntimeError`` (also a ``ValueError``) listing each
        missing key, unexpected key and shape mismatch, and nothing is loaded. With
        ``strict=False`` the keys that match are loaded and the others reported. A shape
        mismatch always raises. Values are cast to each parameter's dtype.

        The layouts are PyTorch's (a ``Linear`` weight is (out_features, in_features)), so a
        torch model's ``state_dict()`` loads directly: its values may be torch Tensors,
        duograd Tensors or arrays.

        The layout is the model's own, as ``state_dict()`` writes it; layers of the
        layers branch (norms, Embedding, MultiheadAttention's in_proj) share torch's, so a
        torch model's ``state_dict()`` loads as it is.

        >>> from duograd import nn
        >>> a, b = nn.LayerNorm(3), nn.LayerNorm(3)
        >>> a.weight.data[:] = 2.0
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> b.load_state_dict({"weight": a.weight}, strict=False).missing_keys
        ['bias']
        """
        slots: OrderedDict[str, Tensor] = OrderedDict()
        for name, t in self._walk("", "state"):
            slots.setdefault(name, t)
        problems: list[str] = []
        staged: list[tuple[Tensor, np.ndarray]] = []
        missing = [name for name in slots if name not in state_dict]
        unexpected = [name for name in state_dict if name not in slots]
        for name, p in slots.items():
            if name not in state_dict:
                if strict:
                    problems.append(f"missing key '{name}' (of shape {p.shape})")
                continue
            value = state_dict[name]
            try:
                arr = np.array(_read_array(value), dtype=p.dtype)
            except (TypeError, ValueError, RuntimeError) as e:
                problems.append(f"'{name}': cannot read the value as an array ({e})")
                continue
            if arr.shape != p.shape:
                problems.append(f"size mismatch for '{name}': the model's parameter has shape "
                                f"{p.shape}, the value has shape {arr.shape}")
                continue
            staged.append((p, arr))
        if strict:
            for name in unexpected:
                problems.append(f"unexpected key '{name}' (value of shape "
                                f"{_shape_desc(state_dict[name])})")
        if problems:
            raise _StateDictError(f"{type(self).__name__}.load_state_dict: " + "; ".join(problems)
                                  + " (nothing was loaded)")
        for p, arr in staged:
            p.data = arr
        return _IncompatibleKeys(missing, unexpected)

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
        >>> bool((other.weight.data == nn.Linear(2, 3, rng=0).weight.detach().numpy()).all())
        True
        """
        with np.load(os.fspath(path), allow_pickle=False) as f:
            state = OrderedDict((k, f[k]) for k in f.files)
        self.load_state_dict(state)  # (its result is dropped: strict, so every key matched)

    def __repr__(self) -> str:
        children = list(self.named_children())
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = extra.split("\n") if extra else []
        lines += [f"({k}): " + repr(v).replace("\n", "\n  ") for k, v in children]
        return f"{type(self).__name__}(" + "".join("\n  " + line for line in lines) + "\n)"

    def extra_repr(self) -> str:
        """The module's own settings in its ``repr`` (override it, as in torch).

        >>> from duograd import nn
        >>> nn.Linear(2, 3, rng=0).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return self._extra_repr()

    def _extra_repr(self) -> str:
        return ""


class Buffer(Tensor):
    """A tensor that a module assigned it holds as a buffer (in ``state_dict`` when
    ``persistent``, cast by ``to``, never a parameter), as ``torch.nn.Buffer``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> m = nn.Module()
    >>> m.steps = nn.Buffer(dg.zeros(1))
    >>> list(m.state_dict()), list(m.parameters())
    (['steps'], [])
    """

    __slots__ = ()

    def __new__(cls, data: Any = None, *, persistent: bool = True) -> "Buffer":
        t = Tensor.__new__(Tensor, np.zeros(0) if data is None else
                           (data._data if isinstance(data, Tensor) else np.asarray(data)))
        t.__class__ = cls if persistent else _NonPersistentBuffer
        return t

    @property
    def persistent(self) -> bool:
        """Whether the buffer is in the module's ``state_dict``."""
        return not isinstance(self, _NonPersistentBuffer)


class _NonPersistentBuffer(Buffer):
    __slots__ = ()


class RemovableHandle:
    """A registered hook; ``remove()`` unregisters it (also as a context manager)."""

    def __init__(self, entries: list, entry: Any) -> None:
        self._entries, self._entry = entries, entry

    def remove(self) -> None:
        if self._entry in self._entries:
            self._entries.remove(self._entry)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _call_with_hooks(m: "Module", hooks: dict, args: tuple, kwargs: dict) -> Any:
    """``m.forward`` with its forward (pre-)hooks and full backward (pre-)hooks, as torch's
    ``Module.__call__``."""
    for hook, flags in list(hooks.get("forward_pre", ())):
        if flags.get("with_kwargs"):
            res = hook(m, args, kwargs)
            if res is not None:
                args, kwargs = res
        else:
            res = hook(m, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
    backward = list(hooks.get("backward", ())) + list(hooks.get("backward_pre", ()))
    if backward:
        args = _BackwardHooks(m, hooks).wrap_inputs(args)
    out = m.forward(*args, **kwargs)
    for hook, flags in list(hooks.get("forward", ())):
        res = hook(m, args, kwargs, out) if flags.get("with_kwargs") else hook(m, args, out)
        if res is not None:
            out = res
    if backward:
        out = m.__dict__["_bw_state"].wrap_outputs(out)
    return out


class _BackwardHooks:
    """One call's full backward hooks: the tensor inputs and outputs pass through identity
    operations whose gradient hooks collect ``grad_output`` (the pre-hooks may replace it)
    and ``grad_input`` (the hooks see both, and may replace ``grad_input``)."""

    def __init__(self, m: "Module", hooks: dict) -> None:
        self.m, self.hooks = m, hooks
        m.__dict__["_bw_state"] = self
        self.grad_output: list = []
        self.grad_input: list = []
        self.pending = 0

    def wrap_inputs(self, args: tuple) -> tuple:
        out = []
        self.n_in = len(args)
        self.grad_input = [None] * len(args)
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and a.requires_grad:
                a = a.view_as(a) if hasattr(a, "view_as") else a * 1
                self.pending += 1
                a.register_hook(self._input_hook(i))
            out.append(a)
        return tuple(out)

    def _input_hook(self, i: int) -> Any:
        def hook(g: Tensor) -> Any:
            self.grad_input[i] = g
            self.pending -= 1
            if self.pending == 0:
                return self._fire(i)
            return None
        return hook

    def _fire(self, last: int) -> Any:
        gi = tuple(self.grad_input)
        replaced = None
        for hook, _ in list(self.hooks.get("backward", ())):
            res = hook(self.m, gi, tuple(self.grad_output))
            if res is not None:
                gi = tuple(res)
                replaced = gi
        return None if replaced is None else replaced[last]

    def wrap_outputs(self, out: Any) -> Any:
        single = isinstance(out, Tensor)
        outs = [out] if single else list(out) if isinstance(out, (tuple, list)) else [out]
        self.grad_output = [None] * len(outs)
        wrapped = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o.requires_grad:
                o = o * 1
                o.register_hook(self._output_hook(i))
            wrapped.append(o)
        if self.pending == 0 and any(isinstance(o, Tensor) and o.requires_grad for o in wrapped):
            self._no_inputs = True
        return wrapped[0] if single else type(out)(wrapped) if isinstance(out, (tuple, list)) else wrapped[0]

    def _output_hook(self, i: int) -> Any:
        def hook(g: Tensor) -> Any:
            self.grad_output[i] = g
            go = tuple(self.grad_output)
            for h, _ in list(self.hooks.get("backward_pre", ())):
                res = h(self.m, go)
                if res is not None:
                    go = tuple(res)
                    self.grad_output = list(go)
            if getattr(self, "_no_inputs", False):  # (no input needs a gradient: fire now)
                for h, _ in list(self.hooks.get("backward", ())):
                    h(self.m, (None,) * self.n_in, tuple(self.grad_output))
            return self.grad_output[i]
        return hook


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
        self.weight = tensor(np.empty((self.out_features, self.in_features)), requires_grad=True)
        self.bias = tensor(np.empty(self.out_features), requires_grad=True) if bias else None
        self._reset(as_rng(rng))

    def reset_parameters(self) -> None:
        """Draw the weight and bias again, as at construction, from the default generator."""
        self._reset(None)

    def _reset(self, gen: Any) -> None:
        # torch's kaiming_uniform_(weight, a=sqrt(5)): its bound gain * sqrt(3 / fan_in) is
        # 1 / sqrt(fan_in), written so (no rounding in the gain); the bias from the same range
        fan_in = init._calculate_fan_in_and_fan_out(self.weight)[0]
        bound = 1.0 / np.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(self.weight, -bound, bound, generator=gen)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator=gen)

    def forward(self, x: Any) -> Tensor:
        x = _input(x)
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
        return _input(x).relu()


class Tanh(Module):
    """``tanh(x)`` elementwise, as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Tanh()(dg.tensor([0.0])).numpy()
    array([0.])
    """

    def forward(self, x: Any) -> Tensor:
        return _input(x).tanh()


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise, as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Sigmoid()(dg.tensor([0.0])).numpy()
    array([0.5])
    """

    def forward(self, x: Any) -> Tensor:
        return _input(x).sigmoid()


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
        self._rng = as_rng(rng)

    def forward(self, x: Any) -> Tensor:
        x = _input(x)
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
    """``functional.cross_entropy`` as a module, with torch's options (``weight``,
    ``ignore_index``, ``reduction``, ``label_smoothing``): ``loss = nn.CrossEntropyLoss()(
    logits, targets)`` with logits (N, C) or (N, C, d1, ...).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> round(nn.CrossEntropyLoss()(dg.tensor([[2.0, 0.0], [0.0, 2.0]]), [0, 0]).item(), 6)
    1.126928
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        if isinstance(weight, str):  # the old positional form CrossEntropyLoss("sum")
            weight, reduction = None, weight
        F._check_legacy(size_average, reduce, "CrossEntropyLoss")
        F._check_reduction(reduction, "CrossEntropyLoss")
        self.weight, self.ignore_index = _buffer_weight(weight), int(ignore_index)
        self.reduction, self.label_smoothing = reduction, float(label_smoothing)

    def forward(self, logits: Any, targets: Any) -> Tensor:
        return F.cross_entropy(logits, targets, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)

    def _extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


def _buffer_weight(weight: Any) -> Any:
    """A loss's class weight, kept as an array (not a parameter the walk would find)."""
    if weight is None:
        return None
    return np.array(weight._data if isinstance(weight, Tensor) else weight)


class _Loss(Module):
    """A loss module: ``forward(input, target)`` calls ``_fn`` with the stored options."""

    _fn: Any = None
    _options: tuple[str, ...] = ()

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 **options: Any) -> None:
        F._check_legacy(size_average, reduce, type(self).__name__)
        if reduction != "batchmean":
            F._check_reduction(reduction, type(self).__name__)
        self.reduction = reduction
        for k, v in options.items():
            setattr(self, k, _buffer_weight(v) if k in ("weight", "pos_weight") else v)

    def forward(self, input: Any, target: Any) -> Tensor:
        kw = {k: getattr(self, k) for k in self._options}
        return type(self)._fn(input, target, reduction=self.reduction, **kw)

    def _extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class NLLLoss(_Loss):
    """``functional.nll_loss`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.NLLLoss()(dg.tensor([[-0.5, -1.0]]), [1]).item()
    1.0
    """

    _fn, _options = F.nll_loss, ("weight", "ignore_index")

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, weight=weight, ignore_index=int(ignore_index))


class BCELoss(_Loss):
    """``functional.binary_cross_entropy`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> round(nn.BCELoss()(dg.tensor([0.5]), [1.0]).item(), 6)
    0.693147
    """

    _fn, _options = F.binary_cross_entropy, ("weight",)

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, weight=weight)


class BCEWithLogitsLoss(_Loss):
    """``functional.binary_cross_entropy_with_logits`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> round(nn.BCEWithLogitsLoss(pos_weight=[2.0])(dg.tensor([0.0]), [1.0]).item(), 6)
    1.386294
    """

    _fn, _options = F.binary_cross_entropy_with_logits, ("weight", "pos_weight")

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__(size_average, reduce, reduction, weight=weight, pos_weight=pos_weight)


class L1Loss(_Loss):
    """``functional.l1_loss`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.L1Loss()(dg.tensor([1.0, -2.0]), [0.0, 0.0]).item()
    1.5
    """

    _fn = F.l1_loss


class SmoothL1Loss(_Loss):
    """``functional.smooth_l1_loss`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.SmoothL1Loss(beta=1.0)(dg.tensor([0.5]), [0.0]).item()
    0.125
    """

    _fn, _options = F.smooth_l1_loss, ("beta",)

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction, beta=float(beta))


class HuberLoss(_Loss):
    """``functional.huber_loss`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.HuberLoss(delta=2.0)(dg.tensor([3.0]), [0.0]).item()
    4.0
    """

    _fn, _options = F.huber_loss, ("delta",)

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(None, None, reduction, delta=float(delta))


class KLDivLoss(_Loss):
    """``functional.kl_div`` as a module (``reduction="batchmean"`` for the true KL).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.KLDivLoss(reduction="batchmean")(dg.tensor([[0.0]]), [[1.0]]).item()
    0.0
    """

    _fn, _options = F.kl_div, ("log_target",)

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction, log_target=bool(log_target))


class CosineSimilarity(Module):
    """``functional.cosine_similarity(x1, x2, dim, eps)`` as a module.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.CosineSimilarity(dim=0)(dg.tensor([1.0, 0.0]), dg.tensor([2.0, 0.0])).item()
    1.0
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        self.dim, self.eps = int(dim), float(eps)

    def forward(self, x1: Any, x2: Any) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


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
        # (tensors registered on the container itself first, then the layers, as torch)
        own = [(k, v) for k, v in vars(self).items() if not k.startswith("_") and isinstance(v, Tensor)]
        return iter(own + [(str(i), m) for i, m in enumerate(self._modules)])

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
        gen = as_rng(rng)
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


# ---------------------------------------------------------------- flattening

class Flatten(Module):
    """Dimensions ``start_dim`` to ``end_dim`` flattened into one, as ``torch.nn.Flatten``
    (the default keeps the first, the batch, and flattens the rest).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.Flatten()(dg.ones((8, 32, 2, 2))).shape, nn.Flatten(0, 1)(dg.ones((8, 3))).shape
    ((8, 128), (24,))
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, x: Any) -> Tensor:
        try:
            return _input(x).flatten(self.start_dim, self.end_dim)
        except DimError as e:  # (torch's IndexError; named after the layer)
            raise DimError(f"Flatten{str(e)[len('flatten'):]}") from None

    def _extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"