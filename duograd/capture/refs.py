"""The references inside a program, one small named record per kind.

How a replay finds a tensor whose ``.grad`` or values it writes (``lowering.Builder``):
``Arg`` (an argument Tensor), ``Made`` (a tensor ``fn`` made, made afresh by each replay
from its slot), ``Object`` (the tensor itself: a model's parameter), ``Slot`` (a result of
the step's kernels); ``ObjectKey`` names an ``Object`` by identity.

The template of ``fn``'s result (``Builder.output``): ``Slot``, ``Argument`` (an argument
Tensor returned as it is), ``Object``, ``Value``, and the containers ``List``, ``Tuple``,
``Named`` (a named tuple) and ``Dict``.

Where a value came from, in a recording's fingerprint (``compiled.Printer``): ``Arg``,
``Record`` (the result of an earlier record), ``Const`` (a constant, by value),
``External`` (a tensor read but not given, by identity).

Each record is a tuple ``(tag, *fields)`` with named fields, so that it compares and
hashes as that tuple (a dict key); code tells the kinds apart by type (``type(ref) is Arg``),
never by the tag:

>>> r = Made(3, True)
>>> r.slot, r.requires_grad, type(r).__name__, r == ("made", 3, True)
(3, True, 'Made', True)
"""

from __future__ import annotations

import operator
from typing import Any


class _Ref(tuple):
    """A reference: the tuple ``(tag, *fields)``, its fields by name."""

    __slots__ = ()
    tag = ""
    names: tuple = ()

    def __new__(cls, *values: Any) -> Any:
        if len(values) != len(cls.names):
            raise TypeError(f"{cls.__name__} takes {cls.names}, got {len(values)} values")
        return tuple.__new__(cls, (cls.tag, *values))

    def __getnewargs__(self) -> tuple:  # (copy and pickle rebuild it from its fields)
        return tuple(self[1:])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self[1:]))})"

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        for i, name in enumerate(cls.names):
            setattr(cls, name, property(operator.itemgetter(i + 1)))


class Arg(_Ref):
    """The argument at leaf ``index`` (a Tensor the call was given)."""
    __slots__ = ()
    tag, names = "arg", ("index",)


class Made(_Ref):
    """A leaf tensor ``fn`` made, held in ``slot``; a replay makes it afresh."""
    __slots__ = ()
    tag, names = "made", ("slot", "requires_grad")


class Object(_Ref):
    """A tensor (or any object) that outlives the step, by reference."""
    __slots__ = ()
    tag, names = "object", ("obj",)


class ObjectKey(_Ref):
    """An ``Object`` named by the identity of its object (a dict key)."""
    __slots__ = ()
    tag, names = "object", ("ident",)


class Slot(_Ref):
    """The array of slot ``slot`` (a result of the step's kernels)."""
    __slots__ = ()
    tag, names = "slot", ("slot",)


class Argument(_Ref):
    """A template's argument Tensor at leaf ``index``, returned as it is."""
    __slots__ = ()
    tag, names = "argument", ("index",)


class Value(_Ref):
    """A template's plain value, returned as it was recorded."""
    __slots__ = ()
    tag, names = "value", ("value",)


class List(_Ref):
    __slots__ = ()
    tag, names = "list", ("items",)


class Tuple(_Ref):
    __slots__ = ()
    tag, names = "tuple", ("items",)


class Named(_Ref):
    """A named tuple of type ``type``."""
    __slots__ = ()
    tag, names = "namedtuple", ("type", "items")


class Dict(_Ref):
    __slots__ = ()
    tag, names = "dict", ("items",)


class Record(_Ref):
    """The result of record ``index`` of a recording."""
    __slots__ = ()
    tag, names = "record", ("index",)


class Const(_Ref):
    """A constant, by its value's fingerprint."""
    __slots__ = ()
    tag, names = "const", ("print",)


class External(_Ref):
    """A tensor read but not given, by identity."""
    __slots__ = ()
    tag, names = "external", ("ident",)


def leaf_key(ref: Any) -> Any:
    """A leaf reference as a dict key: an ``Object`` by its object's identity."""
    return ObjectKey(id(ref[1])) if type(ref) is Object else ref


def slots_in(template: Any) -> list[int]:
    """The slots an output template reads."""
    t = type(template)
    if t is Slot:
        return [template[1]]
    if t is List or t is Tuple:
        return [s for v in template[1] for s in slots_in(v)]
    if t is Named:
        return [s for v in template[2] for s in slots_in(v)]
    if t is Dict:
        return [s for v in template[1].values() for s in slots_in(v)]
    return []
