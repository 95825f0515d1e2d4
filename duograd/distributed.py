"""``torch.distributed``: importable; duograd runs in one process, so there is no process
group. ``is_available()`` and ``is_initialized()`` are False (torch's CPU build says
``is_available()`` True: it has the library; duograd does not), so the usual guard
``if dist.is_available() and dist.is_initialized():`` takes the single-process path. Every
other name raises ``NotImplementedError`` naming itself and the reason (duograd/_inventory).

>>> import duograd as dg
>>> dg.distributed.is_available(), dg.distributed.is_initialized()
(False, False)
"""

from __future__ import annotations

__all__ = ["is_available", "is_initialized"]


def is_available() -> bool:
    """False: duograd has no multi-process communication.

    >>> import duograd as dg
    >>> dg.distributed.is_available()
    False
    """
    return False


def is_initialized() -> bool:
    """False: no process group is ever initialised.

    >>> import duograd as dg
    >>> dg.distributed.is_initialized()
    False
    """
    return False
