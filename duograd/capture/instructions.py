"""The instruction format of a compiled program.

A program is a list of ``Instr`` over a list of *slots* (the arrays of one replay). The
replay loop (``program.Program.run``) reads only the first five fields, as a plain
tuple, and spells the kinds as literals; the other fields are for the passes and the
error messages.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

# How the replay loop calls ``f`` (Program.run spells them as these literals):
CALL1 = 0    # env[out] = f(env[a])
CALL2 = 1    # env[out] = f(env[a], env[b])
CALLN = 2    # env[out] = f(*[env[i] for i in a])
LOAD = 3     # env[out] = f._data          (a tensor read but not given)
EFFECT = 4   # f(env, replay_state)        (an effect, or a kernel with per-call keywords)
BUF1 = 5     # env[out] = f(env[a], out=b) (b: the buffer this result is written into)
BUF2 = 6     # env[out] = f(env[a[0]], env[a[1]], out=b)

KERNELS = (CALL1, CALL2, CALLN, BUF1, BUF2)


class Instr(NamedTuple):
    """One instruction: ``kind`` says how ``f`` is called on which slots (above)."""

    kind: int
    f: Any
    a: Any
    b: Any
    out: int | None
    reads: list        # every slot the instruction reads (for the passes)
    label: str         # what a failure names: the op's name, "accumulate .grad", ...
    role: str          # "kernel" (a pure computation), "effect", "host" or "load"
    op: Any = None     # for a kernel, the Primitive it runs (its facts: view, broadcast)


# ``new((kind, f, a, b, out, reads, label, role, op))``: an Instr made without the Python-level
# ``__new__`` of a NamedTuple (a recording makes one per kernel; all nine fields given).
new = functools.partial(tuple.__new__, Instr)


class Recapture(Exception):
    """A replay found that its program does not hold for this call: a result whose shape
    depends on the values (``Primitive.value_shape``) came out another shape than
    recorded. Raised before anything is written back; ``Compiled`` records the call again."""


class ShapeChecked:
    """A kernel whose result's shape may depend on its input's values (a ``value_shape``
    primitive, a derive): the shape must be the recorded one (every kernel after it was
    recorded for that shape), else ``Recapture``. ``f`` is the kernel it checks."""

    __slots__ = ("f", "shape", "name")

    def __init__(self, f: Callable, shape: tuple, name: str) -> None:
        self.f, self.shape, self.name = f, shape, name

    def __call__(self, *args: Any, **kw: Any) -> Any:
        out = self.f(*args, **kw)
        if np.shape(out) != self.shape:
            raise Recapture(f"{self.name}: the values give shape {np.shape(out)}, the "
                            f"recording {self.shape}")
        return out
