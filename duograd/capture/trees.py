"""The one walk over the containers of a step's arguments and results: lists, tuples
(named tuples included) and dicts, everything else a leaf. The signature
(``recording.signature``), the arguments' stand-ins while recording
(``compiled.Compiled``) and the numbers' uses (``recording.NumberInputs``) all walk
through here.

>>> map_leaves({"a": [1, 2], "b": (3,)}, lambda v: v * 10)
{'a': [10, 20], 'b': (30,)}
>>> list(leaves_of([1, {"k": (2, 3)}]))
[1, 2, 3]
"""

from __future__ import annotations

from typing import Any, Callable, Iterator


def is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def children(obj: Any) -> list | None:
    """The items of a container (a dict's values, in its order), or None for a leaf."""
    t = type(obj)
    if t is list or t is tuple or is_namedtuple(obj):
        return list(obj)
    if t is dict:
        return list(obj.values())
    return None


def leaves_of(obj: Any) -> Iterator[Any]:
    """Every leaf inside ``obj``, depth first, in order."""
    items = children(obj)
    if items is None:
        yield obj
        return
    for v in items:
        yield from leaves_of(v)


def map_leaves(obj: Any, f: Callable[[Any], Any]) -> Any:
    """``obj`` with ``f`` applied to each leaf, the containers rebuilt around the results."""
    t = type(obj)
    if t is list or t is tuple:
        return t(map_leaves(v, f) for v in obj)
    if is_namedtuple(obj):
        return t(*[map_leaves(v, f) for v in obj])
    if t is dict:
        return {k: map_leaves(v, f) for k, v in obj.items()}
    return f(obj)
