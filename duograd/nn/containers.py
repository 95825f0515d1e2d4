"""Containers and small building blocks with torch's names: ``Parameter``, ``Identity``,
``ModuleList`` and ``ModuleDict``.

A ``Module`` finds its parameters by walking its attributes (see modules.py), so a
``Parameter`` is simply a Tensor that requires grad by default; the containers name their
children as torch does (``layers.0.weight`` in a ``ModuleList``, ``heads.cls.weight`` in a
``ModuleDict``), so torch state dicts load into them.

>>> from duograd import nn
>>> blocks = nn.ModuleList([nn.LayerNorm(2), nn.Identity()])
>>> list(blocks.state_dict())
['0.weight', '0.bias']
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from .._tensor import Tensor, _leaf
from .modules import Module

__all__ = ["Parameter", "Identity", "ModuleList", "ModuleDict"]


class Parameter(Tensor):
    """A Tensor that a ``Module`` holds as a parameter: a new leaf with a copy of ``data``
    (torch shares the memory of ``data`` instead), requiring grad by default.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> w = nn.Parameter(dg.zeros(3))
    >>> w.requires_grad, isinstance(w, dg.Tensor), w.shape
    (True, True, (3,))
    """

    __slots__ = ()

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = np.zeros(0)
        t = _leaf(data, requires_grad)
        t.__class__ = cls
        return t

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)


class Identity(Module):
    """Returns its input unchanged (any arguments to the constructor are ignored, as torch).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> x = dg.ones(2)
    >>> nn.Identity(54, unused="x")(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def forward(self, input: Any) -> Any:
        return input


def _check_module(m: Any, where: str) -> Module:
    if not isinstance(m, Module):
        raise TypeError(f"{where}: {type(m).__name__} is not a Module subclass")
    return m


class ModuleList(Module):
    """A list of modules, named ``0``, ``1``, ... as torch names them; indexable,
    iterable, ``append``/``extend``/``insert``. It has no ``forward``.

    >>> from duograd import nn
    >>> layers = nn.ModuleList([nn.LayerNorm(4) for _ in range(2)])
    >>> layers.append(nn.Identity())
    ModuleList(
      (0): LayerNorm((4,), eps=1e-05, elementwise_affine=True)
      (1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)
      (2): Identity()
    )
    >>> len(layers), list(layers.state_dict())[-1]
    (3, '1.bias')
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        self._list: list[Module] = []
        if modules is not None:
            self.extend(modules)

    def _members(self) -> Iterator[tuple[str, Any]]:
        return ((str(i), m) for i, m in enumerate(self._list))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return ModuleList(self._list[i])
        return self._list[i]

    def __setitem__(self, i: int, m: Module) -> None:
        self._list[i] = _check_module(m, "ModuleList")

    def __delitem__(self, i: Any) -> None:
        del self._list[i]

    def __len__(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._list)

    def append(self, module: Module) -> "ModuleList":
        self._list.append(_check_module(module, "ModuleList.append"))
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        self._list.insert(index, _check_module(module, "ModuleList.insert"))


class _Entries(Module):
    """What ``ModuleDict`` and ``ParameterDict`` share: an ordered dict of named entries
    (``_dict``), reached by key or as an attribute, with the mapping methods. A subclass
    defines ``__setitem__`` (what an entry may be)."""

    def __init__(self, entries: Any = None) -> None:
        self.__dict__["_dict"] = {}
        if entries is not None:
            self.update(entries)

    def _members(self) -> Iterator[tuple[str, Any]]:
        return iter(list(self._dict.items()))

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    def __getattr__(self, key: str) -> Any:
        entries = self.__dict__.get("_dict")
        if entries is not None and key in entries:
            return entries[key]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'")

    def __delitem__(self, key: str) -> None:
        del self._dict[key]

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __len__(self) -> int:
        return len(self._dict)

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict)

    def keys(self) -> Any:
        return self._dict.keys()

    def values(self) -> Any:
        return self._dict.values()

    def items(self) -> Any:
        return self._dict.items()

    def pop(self, key: str) -> Any:
        return self._dict.pop(key)

    def clear(self) -> None:
        self._dict.clear()

    def update(self, entries: Any) -> None:
        items = entries.items() if isinstance(entries, Mapping) else entries
        for k, v in items:
            self[k] = v


class ModuleDict(_Entries):
    """An ordered dict of modules, named by their keys as torch names them; an entry is
    reached as an attribute too (``self.transformer.wte``), as torch.

    >>> from duograd import nn
    >>> heads = nn.ModuleDict({"norm": nn.LayerNorm(2), "id": nn.Identity()})
    >>> list(heads.keys()), list(heads.state_dict()), heads.id is heads["id"]
    (['norm', 'id'], ['norm.weight', 'norm.bias'], True)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__(modules)

    def __setattr__(self, key: str, value: Any) -> None:
        if isinstance(value, Module) and not key.startswith("_"):
            self[key] = value
        else:
            object.__setattr__(self, key, value)

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str) or "." in key or not key:
            raise KeyError(f"ModuleDict: invalid key {key!r} (a non-empty string without '.')")
        self._dict[key] = _check_module(module, "ModuleDict")
