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

Each stub carries ``__duograd_unsupported__`` (its torch name), which is how ``is_stub`` and
the counts tell a stub from a built name; the reason is read from ``unsupported.py`` when the
stub is used, so installing costs little at import.

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
    """True for an object ``install()`` made (a name duograd does not build), also when a
    decorator has wrapped it since (``functools.wraps`` keeps ``__wrapped__``)."""
    if isinstance(obj, property):
        obj = obj.fget
    for _ in range(8):
        if isinstance(vars(obj).get(MARK) if hasattr(obj, "__dict__") else getattr(obj, MARK, None), str):
            return True
        inner = vars(obj).get("__wrapped__") if hasattr(obj, "__dict__") and not isinstance(obj, type) else None
        if inner is None:
            return False
        obj = inner
    return False


def _message(qual: str, attr: str = "") -> str:
    """``qual`` (``torch.nn.LSTM``) and its reason, read from ``unsupported.py`` when a stub
    is used (not at import: installing two thousand stubs stays cheap)."""
    from .unsupported import reason
    ns, _, name = qual.rpartition(".")
    r = reason(ns, name)
    why = r[1] if r is not None else "undecided (no reason in duograd/_inventory/unsupported.py)"
    return f"{qual}{attr} is not supported by duograd: {why}"


def _doc(qual: str) -> str:
    return f"{qual}: not built in duograd; using it raises NotImplementedError with the reason."


def function_stub(qual: str, module: str) -> Any:
    """A function that raises ``NotImplementedError`` naming ``qual`` and its reason."""
    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_message(qual))

    stub.__name__ = stub.__qualname__ = qual.rsplit(".", 1)[-1]
    stub.__doc__ = _doc(qual)
    stub.__module__ = module
    setattr(stub, MARK, qual)
    return stub


def class_stub(qual: str, module: str) -> type:
    """A class whose construction raises ``NotImplementedError`` naming ``qual`` and its reason."""
    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_message(qual))

    return type(qual.rsplit(".", 1)[-1], (), {"__new__": __new__, "__doc__": _doc(qual), "__module__": module,
                                              MARK: qual})


class Unsupported:
    """A dtype or constant duograd lacks: calling it or reading its attributes raises."""

    __slots__ = ("_qual",)

    def __init__(self, qual: str) -> None:
        object.__setattr__(self, "_qual", qual)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_message(self._qual))

    def __getattr__(self, attr: str) -> Any:
        if attr == MARK:
            return self._qual
        if attr.startswith("__"):  # protocols probed by Python itself (copy, pickle, NumPy)
            raise AttributeError(attr)
        raise NotImplementedError(_message(self._qual, f".{attr}"))

    def __repr__(self) -> str:
        return f"<{self._qual}: not built in duograd>"


class UnsupportedModule(types.ModuleType):
    """A torch submodule duograd lacks: importable, and each attribute read raises."""

    def __init__(self, name: str, qual: str) -> None:
        super().__init__(name, _doc(qual))
        self.__dict__[MARK] = qual

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NotImplementedError(_message(self.__dict__[MARK], f".{attr}"))


def method_stub(qual: str) -> Any:
    return function_stub(qual, "duograd")


def attribute_stub(qual: str) -> property:
    def get(self: Any) -> Any:
        raise NotImplementedError(_message(qual))

    setattr(get, MARK, qual)
    return property(get, doc=_doc(qual))


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
                nxt.__dict__[MARK] = namespace.rsplit(".", 1)[0] + "." + part
                sys.modules[nxt.__name__] = nxt
                setattr(obj, part, nxt)
        obj = nxt
    return obj


def _import(name: str) -> Any:
    """The module ``name`` if duograd has a file for it (not yet imported), else None: a real
    module is never shadowed by a stub in ``sys.modules``."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or not name.startswith(e.name):
            raise
        return None


def _has(target: Any, name: str) -> bool:
    if isinstance(target, types.ModuleType):
        return name in target.__dict__
    return any(name in vars(k) for k in target.__mro__)


def install() -> int:
    """Put a stub (or an alias) on every torch name duograd lacks; returns how many."""
    from . import inventory

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
            qual = f"{ns}.{n}"
            kind = e["kind"]
            if ns == "torch.Tensor":
                stub: Any = method_stub(qual) if kind == "method" else attribute_stub(qual)
            elif kind == "function":
                stub = function_stub(qual, module)
            elif kind == "class":
                stub = class_stub(qual, module)
            elif kind == "module":
                full = f"{module}.{n}"
                stub = sys.modules.get(full) or _import(full)
                if stub is None:
                    stub = sys.modules[full] = UnsupportedModule(full, qual)
            else:
                stub = Unsupported(qual)
            setattr(target, n, stub)
            count += 1
    return count
