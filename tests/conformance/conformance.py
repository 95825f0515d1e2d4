"""The conformance table: every public name that PyTorch also has, checked against torch 2.13.

In the spirit of PyTorch's OpInfo. A ``Row`` names one public name (``"Tensor.transpose"``,
``"dg.cat"``, ``"F.gelu"``) and holds one function written once for both libraries,
``fn(lib, *args, **kwargs)``, where ``lib`` is the module ``duograd`` or ``torch`` and the
array arguments arrive as that library's tensors. Its ``samples`` are the inputs to try:
0-d, empty, broadcast, negative dims, float32, integer and bool where the op takes them.
For each sample the driver (test_conformance.py) compares, against torch:

- the forward result: its structure (tensor, tuple, named tuple and its field names, a
  Python number), each tensor's dtype, shape and values;
- the gradient of every float input (float64 and float32), through a fixed random
  cotangent, and its dtype;
- for ``errors``: that duograd raises an exception of the class torch raised.

Rows live in ``rows_*.py`` beside this file (one file per family); each appends to ``ROWS``
through ``row(...)``. ``public_names()`` lists what must be covered and
``test_every_public_name_has_a_row`` holds the two together.

>>> r = Row("Tensor.neg", lambda m, x: x.neg(), [S(F(2, 3))])
>>> [a.shape for a in r.samples[0].args]
[(2, 3)]
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np


# ---------------------------------------------------------------- sample arguments

@dataclass(frozen=True)
class Arg:
    """An array argument: made the same way for both libraries from a seeded generator.

    ``kind``: "float" (the row's float dtype, float64 or float32), "int" (int64),
    "int32", "bool". ``domain`` for floats: "real" (normal, clipped to +-2), "positive"
    ([0.5, 2]), "unit" ((-0.9, 0.9), for asin/atanh), "distinct" (no ties), "ties" (values
    from {-1, 0, 1}). ``grad``: whether a float argument requires grad.
    """

    shape: tuple[int, ...]
    kind: str = "float"
    domain: str = "real"
    low: int = 0
    high: int = 5
    grad: bool = True

    def make(self, rng: np.random.Generator, float_dtype: Any) -> np.ndarray:
        shape = self.shape
        if self.kind == "float":
            if self.domain == "real":
                a = np.clip(rng.standard_normal(shape), -2, 2)
            elif self.domain == "positive":
                a = rng.uniform(0.5, 2.0, shape)
            elif self.domain == "unit":
                a = rng.uniform(-0.9, 0.9, shape)
            elif self.domain == "distinct":
                n = int(np.prod(shape))
                a = rng.permutation(np.linspace(-2, 2, max(n, 1)))[:n].reshape(shape)
            elif self.domain == "ties":
                a = rng.integers(-1, 2, shape).astype(np.float64)
            else:
                raise ValueError(f"Arg: unknown domain {self.domain!r}")
            return np.asarray(a, dtype=float_dtype)
        if self.kind in ("int", "int32"):
            return rng.integers(self.low, self.high, shape).astype(
                np.int64 if self.kind == "int" else np.int32)
        if self.kind == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        raise ValueError(f"Arg: unknown kind {self.kind!r}")


def F(*shape: int, domain: str = "real", grad: bool = True) -> Arg:
    """A float argument of ``shape`` (the row's float dtype)."""
    return Arg(tuple(shape), "float", domain, grad=grad)


def I(*shape: int, low: int = 0, high: int = 5) -> Arg:  # noqa: E743 (a short name, like F and B)
    """An int64 argument with values in [low, high)."""
    return Arg(tuple(shape), "int", low=low, high=high)


def B(*shape: int) -> Arg:
    """A bool argument."""
    return Arg(tuple(shape), "bool")


@dataclass(frozen=True)
class S:
    """One sample: positional and keyword arguments (``Arg``s become tensors, anything else
    is passed as is), and an optional label."""

    args: tuple
    kwargs: dict
    label: str = ""

    def __init__(self, *args: Any, label: str = "", **kwargs: Any) -> None:
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwargs", kwargs)
        object.__setattr__(self, "label", label)

    def describe(self) -> str:
        if self.label:
            return self.label
        def one(a: Any) -> str:
            if isinstance(a, Arg):
                return f"{a.kind}{list(a.shape)}"
            return repr(a)
        parts = [one(a) for a in self.args] + [f"{k}={one(v)}" for k, v in self.kwargs.items()]
        return ",".join(parts)


# ---------------------------------------------------------------- rows

@dataclass
class Row:
    """One public name and how to check it against torch.

    ``grad``: compare gradients of float inputs (False for ops torch does not differentiate).
    ``float32``: also run every float sample in float32. ``rtol``/``atol``: for float64;
    float32 uses ``rtol32``/``atol32``. ``errors``: samples on which torch raises; duograd
    must raise the same class (or a subclass). ``compare``: "values" (default), "shape"
    (random ops: dtype and shape only), or a function ``(dg_out, torch_out) -> None``.
    ``note``: a deliberate, documented difference, shown in the table.
    """

    name: str
    fn: Callable[..., Any]
    samples: Sequence[S]
    grad: bool = True
    float32: bool = True
    errors: Sequence[S] = ()
    rtol: float = 1e-10
    atol: float = 1e-12
    rtol32: float = 1e-4
    atol32: float = 1e-5
    compare: Any = "values"
    note: str = ""
    torch_fn: Callable[..., Any] | None = None   # when torch spells it differently

    @property
    def torch_side(self) -> Callable[..., Any]:
        return self.torch_fn or self.fn


ROWS: list[Row] = []


def row(name: str, fn: Callable[..., Any], samples: Sequence[S], **kw: Any) -> Row:
    """Append a Row to the table and return it."""
    samples = [x if isinstance(x, S) else S(x) for x in samples]  # a bare Arg is a one-argument sample
    r = Row(name, fn, samples, **kw)
    ROWS.append(r)
    return r


def seed_for(name: str, i: int) -> list[int]:
    return [zlib.crc32(name.encode()), i]


# ---------------------------------------------------------------- conversions

def torch_dtype_name(dt: Any) -> str:
    """'float64', 'int64', 'bool', ... for a torch dtype."""
    return str(dt).replace("torch.", "")


def dg_dtype_name(dt: Any) -> str:
    return np.dtype(dt).name


def build_args(sample: S, lib: Any, rng_seed: list[int], float_dtype: Any,
               is_torch: bool) -> tuple[tuple, dict, list]:
    """The sample's arguments as ``lib``'s tensors; returns (args, kwargs, grad leaves)."""
    rng = np.random.default_rng(rng_seed)
    leaves: list[Any] = []

    def conv(a: Any) -> Any:
        if isinstance(a, Arg):
            arr = a.make(rng, float_dtype)
            rg = a.kind == "float" and a.grad
            if is_torch:
                t = lib.tensor(arr, requires_grad=rg)
            else:
                t = lib.tensor(arr, requires_grad=rg)
            if rg:
                leaves.append(t)
            return t
        if isinstance(a, (list, tuple)) and any(isinstance(b, Arg) for b in a):
            return type(a)(conv(b) for b in a)
        return a

    args = tuple(conv(a) for a in sample.args)
    kwargs = {k: conv(v) for k, v in sample.kwargs.items()}
    return args, kwargs, leaves


def flatten_out(out: Any) -> list[Any]:
    """Tensors and numbers of a result, in order (tuples and lists walked)."""
    if isinstance(out, (tuple, list)):
        res: list[Any] = []
        for o in out:
            res.extend(flatten_out(o))
        return res
    return [out]


def structure(out: Any) -> Any:
    """The shape of a result's nesting: named-tuple field names, tuple/list lengths."""
    fields = getattr(out, "_fields", None) or getattr(type(out), "__match_args__", None)
    if isinstance(out, tuple) and fields:  # a named tuple, or torch's structseq
        return ("named", type(out).__name__, tuple(fields), tuple(structure(o) for o in out))
    if isinstance(out, (tuple, list)):
        return (type(out).__name__, tuple(structure(o) for o in out))
    if isinstance(out, bool):
        return "bool"
    if isinstance(out, (int, float)):
        return "number"
    if out is None:
        return "None"
    return "tensor"
