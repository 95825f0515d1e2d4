"""Every torch name duograd lacks, installed as an attribute that raises ``NotImplementedError``.

``install()`` runs once, last in ``duograd/__init__.py``, so that it sees every name the rest
of the package built and leaves each of them alone (a name that exists is never replaced).
For the rest of ``torch_names.json`` it installs, by kind:

- a function: a function that raises ``NotImplementedError`` naming ``torch.<name>`` and the
  reason from ``unsupported.py``;
- a class: a class whose construction raises the same (``isinstance`` checks still work);
- a ``Tensor`` method: a method that raises; a ``Tensor`` attribute: a property that raises;
- a dtype or a constant: an object that raises when it is called or its attributes are read;
- a submodule: a module (also in ``sys.modules``, so ``import duograd.onnx`` works) whose
  attributes raise.

Where torch's object is the same under two names (``torch.nn.functional.conv2d`` is
``torch.conv2d``) and duograd built one of them, the other becomes an alias of it instead of
a stub: the meaning is torch's by construction.

Each stub carries ``__duograd_unsupported__`` (the reason), which is how ``is_stub`` and the
counts tell a stub from a built name.

>>> import duograd as dg
>>> dg.nn.functional.grid_sample(None, None)          # doctest: +SKIP
Traceback (most recent call last):
NotImplementedError: torch.nn.functional.grid_sample is not supported by duograd: not built yet
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

MARK = "__duograd_unsupported__"


def is_stub(obj: Any) -> bool:
    """True for an object ``install()`` made (a name duograd does not build)."""
    try:
        return isinstance(getattr(obj, MARK, None), str) if not isinstance(obj, property) \
            else isinstance(getattr(obj.fget, MARK, None), str)
    except NotImplementedError:
        return False


def _message(qual: str, why: str) -> str:
    return f"{qual} is not supported by duograd: {why}"


def function_stub(qual: str, why: str, module: str) -> Any:
    """A function that raises ``NotImplementedError`` naming ``qual`` and ``why``."""
    msg = _message(qual, why)

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(msg)

    stub.__name__ = stub.__qualname__ = qual.rsplit(".", 1)[-1]
    stub.__doc__ = msg
    stub.__module__ = module
    setattr(stub, MARK, why)
    return stub


def class_stub(qual: str, why: str, module: str) -> type:
    """A class whose construction raises ``NotImplementedError`` naming ``qual`` and ``why``."""
    msg = _message(qual, why)

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(msg)

    return type(qual.rsplit(".", 1)[-1], (), {"__new__": __new__, "__doc__": msg, "__module__": module,
                                              MARK: why})


class Unsupported:
    """A dtype or constant duograd lacks: calling it or reading its attributes raises."""

    __slots__ = ("_qual", "_why")

    def __init__(self, qual: str, why: str) -> None:
        object.__setattr__(self, "_qual", qual)
        object.__setattr__(self, "_why", why)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_message(self._qual, self._why))

    def __getattr__(self, attr: str) -> Any:
        if attr == MARK:
            return self._why
        if attr.startswith("__"):  # protocols probed by Python itself (copy, pickle, NumPy)
            raise AttributeError(attr)
        raise NotImplementedError(_message(f"{self._qual}.{attr}", self._why))

    def __repr__(self) -> str:
        return f"<unsupported {self._qual}: {self._why}>"


class UnsupportedModule(types.ModuleType):
    """A torch submodule duograd lacks: importable, and each attribute read raises."""

    def __init__(self, name: str, qual: str, why: str) -> None:
        super().__init__(name, _message(qual, why))
        self.__dict__[MARK] = why
        self.__dict__["_qual"] = qual

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NotImplementedError(_message(f"{self._qual}.{attr}", self.__dict__[MARK]))


def method_stub(qual: str, why: str) -> Any:
    return function_stub(qual, why, "duograd")


def attribute_stub(qual: str, why: str) -> property:
    msg = _message(qual, why)

    def get(self: Any) -> Any:
        raise NotImplementedError(msg)

    setattr(get, MARK, why)
    return property(get, doc=msg)


def dg_name(namespace: str) -> str:
    """torch's namespace spelled as duograd's module: ``torch.nn`` -> ``duograd.nn``."""
    return "duograd" + namespace[len("torch"):]


def resolve(namespace: str, create: bool = True) -> Any:
    """duograd's object for a torch namespace: the module (imported if it is a file), or,
    when duograd has none, a new empty module put in place (``sys.modules`` and its parent)."""
    import duograd
    if namespace == "torch.Tensor":
        return duograd.Tensor
    name = dg_name(namespace)
    if name in sys.modules:
        return sys.modules[name]
    obj: Any = duograd
    for part in name.split(".")[1:]:
        nxt = getattr(obj, part, None) if not isinstance(obj, UnsupportedModule) else obj.__dict__.get(part)
        if nxt is None:
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{part}")
            except ModuleNotFoundError as e:
                if e.name is None or not f"{obj.__name__}.{part}".startswith(e.name):
                    raise
                if not create:
                    return None
                nxt = types.ModuleType(f"{obj.__name__}.{part}",
                                       f"torch's {namespace.rsplit('.', 1)[0]}.{part}: not built in duograd; "
                                       "each name raises NotImplementedError with its reason")
                nxt.__dict__[MARK] = "not built yet"
                sys.modules[nxt.__name__] = nxt
                setattr(obj, part, nxt)
        obj = nxt
    return obj


def _has(target: Any, name: str) -> bool:
    if isinstance(target, types.ModuleType):
        return name in target.__dict__
    return any(name in vars(k) for k in target.__mro__)


def install() -> int:
    """Put a stub (or an alias) on every torch name duograd lacks; returns how many."""
    from . import inventory
    from .unsupported import reason

    inv = inventory()
    count = 0
    # aliases first: torch's one object under two names, duograd built one of them
    for ns, names in inv.items():
        for n, e in names.items():
            alias = e.get("alias")
            if not alias:
                continue
            here, top = resolve(ns), resolve("torch")
            other = alias.split(".", 1)[1]
            if not _has(here, n) and _has(top, other) and not is_stub(getattr(top, other)):
                setattr(here, n, getattr(top, other))
            elif _has(here, n) and not is_stub(getattr(here, n)) and not _has(top, other):
                setattr(top, other, getattr(here, n))
    for ns, names in inv.items():
        target = resolve(ns)
        module = dg_name(ns)
        for n, e in names.items():
            if _has(target, n):
                continue
            r = reason(ns, n)
            why = r[1] if r is not None else "undecided (no reason in duograd/_inventory/unsupported.py)"
            qual = f"{ns}.{n}"
            kind = e["kind"]
            if ns == "torch.Tensor":
                stub: Any = method_stub(qual, why) if kind == "method" else attribute_stub(qual, why)
            elif kind == "function":
                stub = function_stub(qual, why, module)
            elif kind == "class":
                stub = class_stub(qual, why, module)
            elif kind == "module":
                full = f"{module}.{n}"
                stub = sys.modules.get(full) or UnsupportedModule(full, qual, why)
                sys.modules.setdefault(full, stub)
            else:
                stub = Unsupported(qual, why)
            setattr(target, n, stub)
            count += 1
    return count
