"""``torch.jit`` as torch runs it with TorchScript switched off (``PYTORCH_JIT=0``).

duograd has no TorchScript. The decision: ``script`` and ``trace`` return what they were
given, unchanged, which is exactly what torch does when its JIT is disabled
(``PYTORCH_JIT=0``): the function or module runs eagerly and computes what the scripted one
computes. The decorators that only steer the compiler (``ignore``, ``unused``, ``export``,
``script_if_tracing``... ) return their function; ``is_scripting()`` and ``is_tracing()`` are
False, as in eager torch. What needs a real TorchScript program (``save``, ``load``,
``freeze``, ``fork``, ``ScriptModule``, a scripted object's ``.graph`` or ``.code``) raises
``NotImplementedError`` naming itself (duograd/_inventory).

>>> import duograd as dg
>>> @dg.jit.script
... def f(x):
...     return x * 2
>>> f(dg.ones(1)).tolist(), dg.jit.is_scripting()
([2.0], False)
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing", "script_if_tracing"]


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """``obj`` itself (torch with ``PYTORCH_JIT=0`` does the same).

    >>> import duograd as dg
    >>> m = dg.nn.Linear(2, 2)
    >>> dg.jit.script(m) is m
    True
    """
    return obj


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """``func`` itself: it runs eagerly, as a traced function would compute (and, unlike a
    trace, keeps its Python control flow).

    >>> import duograd as dg
    >>> m = dg.nn.Linear(2, 2)
    >>> dg.jit.trace(m, dg.ones(1, 2)) is m
    True
    """
    return func


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """The function (``@ignore`` or ``@ignore(drop=...)``).

    >>> import duograd as dg
    >>> f = lambda x: x
    >>> dg.jit.ignore(f) is f, dg.jit.ignore(drop=True)(f) is f
    (True, True)
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    """``fn`` (a hint to the TorchScript compiler).

    >>> import duograd as dg
    >>> f = lambda x: x
    >>> dg.jit.unused(f) is f
    True
    """
    return fn


def export(fn: Callable) -> Callable:
    """``fn`` (a hint to the TorchScript compiler).

    >>> import duograd as dg
    >>> f = lambda x: x
    >>> dg.jit.export(f) is f
    True
    """
    return fn


def script_if_tracing(fn: Callable) -> Callable:
    """``fn``: nothing is traced here.

    >>> import duograd as dg
    >>> f = lambda x: x
    >>> dg.jit.script_if_tracing(f) is f
    True
    """
    return fn


def is_scripting() -> bool:
    """False: nothing runs as TorchScript here (as in eager torch).

    >>> import duograd as dg
    >>> dg.jit.is_scripting()
    False
    """
    return False


def is_tracing() -> bool:
    """False: nothing is traced here (as in eager torch).

    >>> import duograd as dg
    >>> dg.jit.is_tracing()
    False
    """
    return False
