"""The one walk over the containers of a step's arguments and results: lists, tuples
(named tuples included) and dicts, and their subclasses (an ``OrderedDict``); anything
else is a leaf. The signature (``recording.signature``), the arguments' stand-ins while
recording (``compiled``) and the numbers' uses (``recording.Numbers``) all walk through
here.

``flatten`` lists the leaves and gives the structure, a hashable value (a dict's keys in
its own order: two dicts with their items in another order are another structure, since
``fn`` may iterate them); ``unflatten`` rebuilds a structure around new leaves.

>>> leaves = []
>>> s = flatten({"a": [1, 2], "b": (3,)}, leaves)
>>> leaves, unflatten(s, iter([10, 20, 30]))
([1, 2, 3], {'a': [10, 20], 'b': (30,)})
>>> map_leaves([1, (2, {"k": 3})], lambda v: -v)
[-1, (-2, {'k': -3})]
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

LEAF = None  # the structure of a leaf


def is_container(obj: Any) -> bool:
    """Whether ``flatten`` walks into ``obj`` (else it is a leaf)."""
    return isinstance(obj, (list, tuple, dict))


def flatten(obj: Any, leaves: list, paths: list | None = None, where: str = "") -> Any:
    """Append ``obj``'s leaves to ``leaves`` (depth first, in order) and return its
    structure: ``LEAF``, or ``(type, keys, children)`` (``keys`` a dict's, else None).
    With ``paths``, each leaf's place (``where[1]['k']``) is appended there too."""
    if isinstance(obj, dict):
        return (type(obj), tuple(obj), tuple(flatten(v, leaves, paths, f"{where}[{k!r}]")
                                             for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return (type(obj), None,
                tuple(flatten(v, leaves, paths, f"{where}[{i}]") for i, v in enumerate(obj)))
    leaves.append(obj)
    if paths is not None:
        paths.append(where)
    return LEAF


def unflatten(structure: Any, leaves: Iterator[Any]) -> Any:
    """The container ``structure`` describes, its leaves taken from ``leaves`` in order (a
    subclass that cannot be made from its items, a ``defaultdict``, becomes its base)."""
    if structure is LEAF:
        return next(leaves)
    t, keys, children = structure
    if keys is not None:
        items = {k: unflatten(c, leaves) for k, c in zip(keys, children)}
        if t is dict:
            return items
    else:
        items = [unflatten(c, leaves) for c in children]
        if t is list or t is tuple:
            return t(items)
        if hasattr(t, "_fields"):  # a named tuple
            return t(*items)
    try:
        return t(items)
    except Exception:
        return dict(items) if keys is not None else list(items) if issubclass(t, list) \
            else tuple(items)


def leaves_of(obj: Any) -> list:
    """Every leaf inside ``obj``, in order."""
    leaves: list = []
    flatten(obj, leaves)
    return leaves


def map_leaves(obj: Any, f: Callable[[Any], Any]) -> Any:
    """``obj`` with ``f`` applied to each leaf, the containers rebuilt around the results
    (``obj`` itself where ``f`` changed nothing: a ``Size`` stays the same object)."""
    if not is_container(obj):
        return f(obj)
    leaves: list = []
    structure = flatten(obj, leaves)
    new = [f(x) for x in leaves]
    if all(a is b for a, b in zip(new, leaves)):
        return obj
    return unflatten(structure, iter(new))
