"""OPS: one row type for every operation the tests check, ``OpInfo``, and its ``Sample``s.

In the spirit of PyTorch's OpInfo. An ``OpInfo`` names one public name (``"Tensor.transpose"``,
``"dg.cat"``, ``"F.gelu"``) and holds everything the tests know about it, in one entry:

- ``op(lib, *args, **kwargs)``, written once for both libraries: ``lib`` is the module
  ``duograd`` or ``torch`` and the array arguments arrive as that library's tensors
  (``torch_fn`` when torch spells it differently); ``ref``, a NumPy reference;
- ``samples``: the inputs to try -- 0-d, empty, broadcast, negative dims, float32, integer
  and bool where the op takes them; and ``errors``: samples on which torch raises;
- how to compare: ``grad``, ``float32``, the tolerances, ``compare``, a ``note``.

A ``Sample`` holds positional and keyword arguments; an ``Arg`` among them is an array made
the same way for both libraries from a seeded generator (``draw``, one vocabulary of
domains). A sample may override the entry's settings for itself (``over``): that is how the
samples of the gradient-check variants (the old ``OpSpec`` rows, each a function of its
tensors alone with the axis or index bound in, a NumPy reference and a torch twin) live in
the same entry as the conformance samples. Such a sample has a ``spec`` name
(``"sum(axis=1, keepdims=True)"``) and reads like the old ``OpSpec``: ``fn``, ``ref``,
``torch_fn``, ``shapes``, ``domains``, ``arity``.

Who reads what:

- the conformance driver (tests/conformance/test_conformance.py) runs every sample and error
  sample of every entry against torch: structure, dtype, shape and values of the result, the
  gradient of every float input in float64 and float32, the class of the error;
- ``specs.OP_SPECS`` (every differentiable sample with a spec name) feeds gradcheck,
  gradgradcheck, the JVPs, float32, the replay, vmap and the torch oracle; ``specs.SELECTOR_SPECS``
  (the spec samples that are never differentiated) the selector checks.

The entries are written in tests/conformance/rows_<family>.py, one file per family: ``row``
for a call written once for both libraries (its samples with a ``spec`` name are
gradient-check variants too), ``spec_row``/``selector_row`` (``specs._row``/``_selector``) for a
variant with its own three functions. An entry may also hold a family declaration
(``OpInfo.family``: a ``BinaryOp``, ``AxisOp`` or ``Comparison``, written with its spec samples
in rows_families.py) that the broadcasting, property and error tests read through
``families`` (``specs.BINARY_OPS``, ``AXIS_OPS``, ``COMPARISONS``). ``load_all()`` imports them
all. ``row``, ``spec_sample`` and ``declare`` add to the one entry of a name, creating it the
first time, so a name never has two entries.

>>> info = OpInfo("Tensor.neg", lambda m, x: x.neg(), [S(F(2, 3))])
>>> [a.shape for a in info.samples[0].args]
[(2, 3)]
"""

from __future__ import annotations

import glob
import importlib
import os
import re
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

Shape = tuple[int, ...]

# ---------------------------------------------------------------- domains and draw

# The domains a float argument is drawn from (see draw). They keep finite differences
# honest: logs and square roots see positive numbers, piecewise-linear ops see inputs away
# from their kinks and ties.
REAL = "real"            # standard normal, clipped to [-2, 2]
POSITIVE = "positive"    # uniform on [0.5, 2]: log, sqrt, pow bases, denominators
NONZERO = "nonzero"      # |x| in [0.3, 2] with a random sign: relu and abs, away from 0
UNIT = "unit"            # uniform on (-0.9, 0.9): asin, atanh
DISTINCT = "distinct"    # no two elements equal (~0.1 apart at least): max/min, sorting
CLIP = "clip"            # standard normal pushed at least 0.05 away from the bounds +-0.5
TIES = "ties"            # whole numbers in [-1, 1] (as floats): comparisons see ties
INTEGER = TIES           # (the name the spec rows use)
DOMAINS = (REAL, POSITIVE, NONZERO, UNIT, DISTINCT, CLIP, TIES)
_ALIASES = {"integer": TIES}


@dataclass(frozen=True)
class Arg:
    """An array argument: made the same way for both libraries from a seeded generator.

    ``kind``: "float" (the sample's float dtype, float64 or float32), "int" (int64),
    "int32", "bool". ``domain`` for floats: one of ``DOMAINS``. ``low``/``high``: the range
    of an int argument. ``grad``: whether a float argument requires grad.
    """

    shape: tuple[int, ...]
    kind: str = "float"
    domain: str = REAL
    low: int = 0
    high: int = 5
    grad: bool = True

    def make(self, rng: np.random.Generator, float_dtype: Any) -> np.ndarray:
        return draw([self], rng, float_dtype)[0]


def draw(args: Sequence[Arg], rng: np.random.Generator, float_dtype: Any = np.float64,
         joint: bool = False) -> list[np.ndarray]:
    """One array per ``Arg``, each from its kind and domain, in order.

    ``joint``: the DISTINCT arguments share one pool of well-separated values drawn first,
    so they never tie with each other either (``maximum(x, y)`` must not see ``x == y``);
    the spec samples draw this way. Otherwise a DISTINCT argument is a permutation of its
    own evenly spaced values.

    >>> a, b = draw([F(2, domain=DISTINCT), F(3, domain=DISTINCT)], np.random.default_rng(0), joint=True)
    >>> len(set(a) | set(b))
    5
    """
    pool: list = []
    if joint:
        n_distinct = sum(int(np.prod(a.shape)) for a in args
                         if a.kind == "float" and _ALIASES.get(a.domain, a.domain) == DISTINCT)
        pool = list(rng.permutation(np.linspace(-2.0, 2.0, max(n_distinct, 2))))
    out = []
    for arg in args:
        shape = arg.shape
        if arg.kind in ("int", "int32"):
            out.append(rng.integers(arg.low, arg.high, shape).astype(
                np.int64 if arg.kind == "int" else np.int32))
            continue
        if arg.kind == "bool":
            out.append(rng.integers(0, 2, shape).astype(bool))
            continue
        if arg.kind != "float":
            raise ValueError(f"draw: unknown kind {arg.kind!r}")
        domain = _ALIASES.get(arg.domain, arg.domain)
        if domain == REAL:
            a = np.clip(rng.standard_normal(shape), -2.0, 2.0)
        elif domain == POSITIVE:
            a = rng.uniform(0.5, 2.0, shape)
        elif domain == NONZERO:
            a = rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        elif domain == UNIT:
            a = rng.uniform(-0.9, 0.9, shape)
        elif domain == DISTINCT:
            n = int(np.prod(shape))
            if joint:
                a = np.array(pool[:n]).reshape(shape)
                del pool[:n]
            else:
                a = rng.permutation(np.linspace(-2, 2, max(n, 1)))[:n].reshape(shape)
        elif domain == CLIP:
            a = rng.standard_normal(shape)
            near = np.abs(np.abs(a) - 0.5) < 0.05
            a = np.where(near, a + 0.2 * np.sign(a), a)
        elif domain == TIES:
            a = rng.integers(-1, 2, shape).astype(np.float64)
        else:
            raise ValueError(f"draw: unknown domain {arg.domain!r}")
        out.append(np.asarray(a, dtype=float_dtype))
    return out


def F(*shape: int, domain: str = REAL, grad: bool = True) -> Arg:
    """A float argument of ``shape`` (the sample's float dtype)."""
    return Arg(tuple(shape), "float", domain, grad=grad)


def I(*shape: int, low: int = 0, high: int = 5) -> Arg:  # noqa: E743 (a short name, like F and B)
    """An int64 argument with values in [low, high)."""
    return Arg(tuple(shape), "int", low=low, high=high)


def B(*shape: int) -> Arg:
    """A bool argument."""
    return Arg(tuple(shape), "bool")


# ---------------------------------------------------------------- samples

class _OnTensors:
    """A function of duograd Tensors alone (a spec sample's ``fn``) in the ``op(lib, ...)`` form."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, lib: Any, *xs: Any, **kw: Any) -> Any:
        return self.fn(*xs, **kw)


@dataclass(frozen=True, eq=False)
class Sample:
    """One sample: positional and keyword arguments (``Arg``s become tensors, anything else
    is passed as is), and an optional label.

    Set when the sample joins an entry: ``info`` (its OpInfo), ``seed`` (the generator's seed,
    kept from the table the sample came from so it draws the numbers it always drew),
    ``over`` (settings of the entry this sample overrides), ``spec`` (its name as a
    gradient-check variant, or ""), ``joint`` (how ``draw`` makes its DISTINCT arguments) and
    ``origin`` (which registration call brought it).
    """

    args: tuple
    kwargs: dict
    label: str = ""
    spec: str = ""
    seed: tuple = ()
    joint: bool = False
    over: dict = field(default_factory=dict)
    info: Any = None
    origin: int = -1

    def __init__(self, *args: Any, label: str = "", spec: str = "", **kwargs: Any) -> None:
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwargs", kwargs)
        object.__setattr__(self, "label", label or spec)
        for k, v in (("spec", spec), ("seed", ()), ("joint", False), ("over", {}), ("info", None),
                     ("origin", -1)):
            object.__setattr__(self, k, v)

    def _bound(self, **fields: Any) -> "Sample":
        """A copy of this sample with the given fields set (samples are shared between rows)."""
        s = Sample(*self.args, label=self.label, **self.kwargs)
        for k in ("spec", "seed", "joint", "over", "info", "origin"):
            object.__setattr__(s, k, fields.get(k, getattr(self, k)))
        return s

    def describe(self) -> str:
        if self.label:
            return self.label
        def one(a: Any) -> str:
            if isinstance(a, Arg):
                return f"{a.kind}{list(a.shape)}"
            return repr(a)
        parts = [one(a) for a in self.args] + [f"{k}={one(v)}" for k, v in self.kwargs.items()]
        return ",".join(parts)

    def fill(self, values: Sequence[Any]) -> tuple[tuple, dict]:
        """The sample's arguments with its ``Arg``s replaced by ``values``, in order."""
        it = iter(values)

        def conv(a: Any) -> Any:
            if isinstance(a, Arg):
                return next(it)
            if isinstance(a, (list, tuple)) and any(isinstance(b, Arg) for b in a):
                return type(a)(conv(b) for b in a)
            return a
        return tuple(conv(a) for a in self.args), {k: conv(v) for k, v in self.kwargs.items()}

    def _arrays(self) -> list[Arg]:
        found: list[Arg] = []

        def walk(a: Any) -> None:
            if isinstance(a, Arg):
                found.append(a)
            elif isinstance(a, (list, tuple)):
                for b in a:
                    walk(b)
        for a in list(self.args) + list(self.kwargs.values()):
            walk(a)
        return found

    def setting(self, key: str) -> Any:
        """The entry's setting ``key`` as it applies to this sample."""
        return self.over[key] if key in self.over else getattr(self.info, key)

    def call(self, lib: Any, *args: Any, **kwargs: Any) -> Any:
        """Run the op on ``lib``'s arguments (duograd's ``op``, or torch's side when ``lib`` is torch)."""
        op = self.setting("op")
        if getattr(lib, "__name__", "") == "torch":
            op = self.setting("torch_fn") or op
        return op(lib, *args, **kwargs)

    # -- the spec view: a sample with a spec name reads like the old OpSpec
    @property
    def name(self) -> str:
        return self.spec or self.info.name

    @property
    def fn(self) -> Callable[..., Any]:
        """The op on duograd Tensors (the sample's tensors, in order)."""
        op = self.setting("op")
        if isinstance(op, _OnTensors):
            return op.fn
        import duograd

        def fn(*xs: Any) -> Any:
            args, kwargs = self.fill(xs)
            return op(duograd, *args, **kwargs)
        return fn

    @property
    def ref(self) -> Callable[..., Any] | None:
        """The NumPy reference on arrays."""
        ref = self.setting("ref")
        if ref is None or isinstance(self.setting("op"), _OnTensors):
            return ref

        def on_arrays(*arrays: Any) -> Any:
            args, kwargs = self.fill(arrays)
            return ref(*args, **kwargs)
        return on_arrays

    @property
    def torch_fn(self) -> Callable[..., Any]:
        """The op on torch: ``torch_fn(torch, *tensors)``."""
        op = self.setting("op")
        side = self.setting("torch_fn") or op
        if isinstance(op, _OnTensors):
            return side

        def on_torch(torch: Any, *xs: Any) -> Any:
            args, kwargs = self.fill(xs)
            return side(torch, *args, **kwargs)
        return on_torch

    @property
    def shapes(self) -> tuple[Shape, ...]:
        return tuple(a.shape for a in self._arrays())

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(_ALIASES.get(a.domain, a.domain) for a in self._arrays())

    @property
    def arity(self) -> int:
        return len(self._arrays())

    def __repr__(self) -> str:  # pytest shows this on failure
        if self.spec:
            return f"Sample({self.spec!r}, shapes={self.shapes})"
        return f"Sample({self.describe()!r})"


S = Sample  # the short name the rows use


# ---------------------------------------------------------------- entries

@dataclass(eq=False)
class OpInfo:
    """One public name and everything the tests check it with.

    ``op(lib, *args, **kwargs)``: the call, written once for both libraries (``torch_fn`` when
    torch spells it differently). ``ref``: a NumPy reference, when there is one.
    ``grad``: compare gradients of float inputs (False for ops torch does not differentiate).
    ``float32``: also run every float sample in float32. ``rtol``/``atol``: for float64;
    float32 uses ``rtol32``/``atol32``. ``errors``: samples on which torch raises; duograd
    must raise the same class (or a subclass). ``compare``: "values" (default), "shape"
    (random ops: dtype and shape only), or a function ``(dg_out, torch_out) -> None``.
    ``note``: a deliberate, documented difference, shown in the table. A sample's ``over``
    overrides any of these for that sample.
    """

    name: str
    op: Callable[..., Any] | None = None
    samples: list = field(default_factory=list)
    grad: bool = True
    float32: bool = True
    errors: list = field(default_factory=list)
    rtol: float = 1e-10
    atol: float = 1e-12
    rtol32: float = 1e-4
    atol32: float = 1e-5
    compare: Any = "values"
    note: str = ""
    torch_fn: Callable[..., Any] | None = None   # when torch spells it differently
    ref: Callable[..., Any] | None = None
    family: Any = None  # a BinaryOp, AxisOp or Comparison declaration (``declare``; ``families``)

    def __post_init__(self) -> None:
        self.samples = [s if isinstance(s, Sample) else Sample(s) for s in self.samples]
        self.errors = [s if isinstance(s, Sample) else Sample(s) for s in self.errors]
        self.samples = [s._bound(info=self) if s.info is None else s for s in self.samples]
        self.errors = [s._bound(info=self) if s.info is None else s for s in self.errors]

    @property
    def fn(self) -> Callable[..., Any] | None:
        return self.op

    @property
    def torch_side(self) -> Callable[..., Any] | None:
        return self.torch_fn or self.op

    def __repr__(self) -> str:
        return f"OpInfo({self.name!r}, {len(self.samples)} samples, {len(self.errors)} errors)"


_SETTINGS = ("op", "torch_fn", "ref", "grad", "float32", "rtol", "atol", "rtol32", "atol32",
             "compare", "note")
_DEFAULTS = {k: getattr(OpInfo("_"), k) for k in _SETTINGS}

OPS: list[OpInfo] = []
OPS_BY_NAME: dict[str, OpInfo] = {}
_calls = [0]


def _differs(a: Any, b: Any) -> bool:
    if callable(a) or callable(b):
        return a is not b
    return a != b


def _entry(name: str) -> OpInfo:
    info = OPS_BY_NAME.get(name)
    if info is None:
        info = OpInfo(name)
        OPS.append(info)
        OPS_BY_NAME[name] = info
    return info


def _join(info: OpInfo, settings: dict, samples: Sequence[Any], errors: Sequence[Any],
          seeds: Callable[[int, bool, Sample], tuple], base: bool = True, **fields: Any) -> list[Sample]:
    """Add samples with their settings to ``info``: the first ``row`` of a name sets the
    entry's settings; a later one records where it differs in each of its samples' ``over``
    (``base=False``: never the entry's settings, always the samples' own)."""
    full = dict(_DEFAULTS, **settings)
    if base and info.op is None:
        for k in _SETTINGS:
            setattr(info, k, full[k])
        over: dict = {}
    else:
        over = {k: v for k, v in full.items() if not base or _differs(v, getattr(info, k))}
    _calls[0] += 1
    added = []
    for lst, group, is_error in ((info.samples, samples, False), (info.errors, errors, True)):
        for i, s in enumerate(group):
            s = s if isinstance(s, Sample) else Sample(s)  # a bare Arg is a one-argument sample
            own = dict(fields)
            if s.spec:  # a spec sample draws as its spec always did: seeded by its name, jointly
                own.setdefault("joint", True)
            s = s._bound(info=info, over=over, seed=seeds(i, is_error, s), origin=_calls[0], **own)
            lst.append(s)
            added.append(s)
    return added


def row(name: str, fn: Callable[..., Any], samples: Sequence[Any], errors: Sequence[Any] = (),
        **kw: Any) -> OpInfo:
    """Add samples (and error samples) to the entry of the public name ``name``, the call
    written once for both libraries; returns the entry. Keywords: the OpInfo settings.

    A sample with a ``spec`` name (``S(F(3, 4), spec="exp")``, float arguments only) is also a
    gradient-check variant in OP_SPECS, its ``fn``/``torch_fn``/``ref`` the row's with the
    sample's other arguments bound; such a row needs a ``ref``.

    >>> import duograd
    >>> info = row("Tensor.doctest_exp", lambda m, x: x.exp(), [S(F(2), spec="doctest_exp")], ref=np.exp)
    >>> s = info.samples[0]
    >>> s.spec, s.shapes, float(s.fn(duograd.zeros(2)).sum()), float(s.ref(np.zeros(2)).sum())
    ('doctest_exp', ((2,),), 2.0, 2.0)
    >>> _ = OPS.remove(info), OPS_BY_NAME.pop(info.name)
    """
    unknown = set(kw) - set(_SETTINGS)
    assert not unknown, f"row({name!r}): unknown settings {sorted(unknown)}"
    info = _entry(name)
    crc = zlib.crc32(name.encode())

    def seed(i: int, err: bool, s: Sample) -> tuple:
        if s.spec:
            assert not err and kw.get("ref") is not None, f"{name}: a spec sample needs the row's ref"
            assert all(a.kind == "float" for a in s._arrays()), f"{s.spec}: spec samples take floats"
            return (zlib.crc32(s.spec.encode()), 0)
        return (crc, 1000 + i if err else i)
    _join(info, dict(kw, op=fn), samples, errors, seed)
    return info


# The public name a spec sample's entry has, where its name does not say it by rule.
_SPEC_NAMES = {
    "add": "Tensor.__add__", "sub": "Tensor.__sub__", "mul": "Tensor.__mul__",
    "div": "Tensor.__truediv__", "pow": "Tensor.__pow__", "rsub": "Tensor.__rsub__",
    "rdiv": "Tensor.__rtruediv__", "neg": "Tensor.__neg__", "getitem": "Tensor.__getitem__",
    "matmul": "Tensor.__matmul__", "abs.builtin": "Tensor.__abs__", "matmul.function": "dg.matmul",
    "<": "Tensor.__lt__", "<=": "Tensor.__le__", ">": "Tensor.__gt__", ">=": "Tensor.__ge__",
    "==": "Tensor.__eq__", "!=": "Tensor.__ne__", "and": "Tensor.__and__", "or": "Tensor.__or__",
    "xor": "Tensor.__xor__", "invert": "Tensor.__invert__", "mod": "Tensor.__mod__",
    "pow.number_tensor": "Tensor.__rpow__", "where": "dg.where", "maximum": "dg.maximum",
    "minimum": "dg.minimum", "softplus": "F.softplus", "vector_norm": "linalg.vector_norm",
}


def spec_entry_name(spec: str) -> str:
    """The public name of the entry a spec sample joins: ``"sum(axis=1, keepdims=True)"`` is
    a sample of ``"Tensor.sum"``.

    >>> spec_entry_name("mul.broadcast"), spec_entry_name("<=.number")
    ('Tensor.__mul__', 'Tensor.__le__')
    """
    if spec in _SPEC_NAMES:
        return _SPEC_NAMES[spec]
    dotted = re.match(r"(F|linalg)\.[A-Za-z_0-9]+", spec)
    if dotted:
        return dotted.group()
    base = re.match(r"[A-Za-z_0-9]+|[<>=!]+", spec).group()
    if base in _SPEC_NAMES:
        return _SPEC_NAMES[base]
    import duograd
    for prefix, where in (("Tensor.", duograd.Tensor), ("dg.", duograd),
                          ("F.", duograd.nn.functional)):
        if hasattr(where, base):
            return prefix + base
    return "spec." + base


# A spec sample's own settings (whatever entry it joins): values to the default tolerances.
_SPEC_SETTINGS = {"compare": "values", "float32": True, "rtol": 1e-10, "atol": 1e-12,
                  "rtol32": 1e-4, "atol32": 1e-5, "note": ""}


def spec_sample(spec: str, fn: Callable[..., Any], ref: Callable[..., Any], torch_fn: Callable[..., Any],
                shapes: Sequence[Shape], domains: Sequence[str], *, differentiable: bool = True,
                entry: str | None = None) -> Sample:
    """Add a gradient-check variant to the entry of its public name (``entry``, or
    ``spec_entry_name(spec)``): the op on duograd Tensors alone (``fn``), a NumPy reference
    (``ref``) and torch's twin (``torch_fn(torch, *tensors)``), with one float input per shape,
    drawn from its domain. ``differentiable=False``: a selector (never differentiated)."""
    assert len(shapes) == len(domains), spec
    assert callable(torch_fn), f"{spec}: every spec sample has a torch twin"
    info = _entry(entry or spec_entry_name(spec))
    args = [Arg(tuple(s), "float", d) for s, d in zip(shapes, domains)]
    settings = dict(_SPEC_SETTINGS, op=_OnTensors(fn), torch_fn=torch_fn, ref=ref, grad=differentiable)
    crc = zlib.crc32(spec.encode())
    (s,) = _join(info, settings, [Sample(*args, spec=spec)], (), lambda i, err, s: (crc, 0), base=False)
    return s


def spec_row(name: str, fn: Callable, ref: Callable, torch_fn: Callable, shapes: Sequence[Shape],
             domains: Sequence[str] | None = None, entry: str | None = None) -> Sample:
    """A gradient-check variant written with its own three functions (``specs._row``): one
    float input per shape, domains REAL unless given; joins the entry of its public name.

    >>> spec_row("doctest_twice", lambda x: x * 2, lambda x: x * 2, lambda torch, x: x * 2, ((3,),),
    ...          entry="Tensor.doctest_twice").arity
    1
    >>> _ = OPS.remove(OPS_BY_NAME.pop("Tensor.doctest_twice"))
    """
    shapes = tuple(tuple(x) for x in shapes)
    domains = tuple(domains) if domains is not None else (REAL,) * len(shapes)
    return spec_sample(name, fn, ref, torch_fn, shapes, domains, entry=entry)


def selector_row(name: str, fn: Callable, ref: Callable, torch_fn: Callable, shapes: Sequence[Shape],
                 domains: Sequence[str], entry: str | None = None) -> Sample:
    """A never-differentiated variant (``specs._selector``: SELECTOR_SPECS)."""
    return spec_sample(name, fn, ref, torch_fn, tuple(tuple(x) for x in shapes), tuple(domains),
                       differentiable=False, entry=entry)


def condition(shape: Shape, seed: int = 7) -> np.ndarray:
    """A fixed random bool array: where's condition in a spec sample (a constant, never
    differentiated).

    >>> condition((2, 3)).dtype
    dtype('bool')
    """
    return np.random.default_rng(seed).random(shape) > 0.5


def spec_samples(differentiable: bool = True) -> list[Sample]:
    """The spec samples in the order they were written (OP_SPECS, or the selectors)."""
    found = [s for info in OPS for s in info.samples if s.spec and s.setting("grad") == differentiable]
    return sorted(found, key=lambda s: s.origin)


def seed_for(name: str, i: int) -> list[int]:
    return [zlib.crc32(name.encode()), i]


def load_all() -> list[OpInfo]:
    """Import every file that writes entries (tests/specs.py and tests/conformance/rows_*.py);
    returns ``OPS``."""
    here = os.path.dirname(os.path.abspath(__file__))
    conf = os.path.join(here, "conformance")
    if conf not in sys.path:
        sys.path.insert(0, conf)
    importlib.import_module("specs")
    for path in sorted(glob.glob(os.path.join(conf, "rows_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3])
    return OPS


# ---------------------------------------------------------------- declared families
# Three families are described once, declaratively, on their entries (``OpInfo.family``), and
# every test that needs them reads the declarations (``families``; specs.BINARY_OPS, AXIS_OPS
# and COMPARISONS are views) instead of keeping its own list. tests/conformance/rows_families.py
# writes them, with the spec samples each declaration makes.


@dataclass(frozen=True)
class BinaryOp:
    """A binary elementwise op, declared once for every test that needs it.

    Every function takes ``(x, y, c)``: ``c`` is a bool array of the output's shape, the
    condition of ``where`` (the other ops ignore it). ``partials`` gives the elementwise
    partial derivatives (d out/dx, d out/dy) in NumPy, on arrays already broadcast to
    the output's shape; the broadcasting tests sum them back themselves. ``name`` is
    how the op's error messages name it.

    >>> op = BinaryOp("mul", None, None, None, lambda x, y, c: (y, x))
    >>> op.partials(np.array([2.0]), np.array([3.0]), None)
    (array([3.]), array([2.]))
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., np.ndarray]
    torch_fn: Callable[..., Any]
    partials: Callable[..., tuple[np.ndarray, np.ndarray]]
    domains: tuple[str, str] = (REAL, REAL)


@dataclass(frozen=True)
class AxisOp:
    """An op with an ``axis`` argument (a reduction, softmax, a running sum), declared once.

    ``fn(x, axis, keepdims)`` on a Tensor, ``ref`` on a NumPy array, ``torch_fn`` on a
    torch tensor (ops without ``keepdims`` ignore it). ``grad(x, axis, keepdims, g)`` is
    the gradient of ``sum(g * op(x))`` in closed form, in NumPy. ``axes`` are the axis
    arguments its spec samples use on a (2, 3, 4) input. ``one_axis``: the op takes a
    single int (a tuple is a TypeError); otherwise None, an int or a tuple of ints.
    ``name`` is how its errors name it.
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., np.ndarray]
    torch_fn: Callable[..., Any]
    grad: Callable[..., np.ndarray]
    domain: str = REAL
    axes: tuple[Any, ...] = (None, 1, -1, (0, 2))
    keepdims: bool = True
    one_axis: bool = False


@dataclass(frozen=True)
class Comparison:
    """A comparison operator: ``fn(x, y)`` on duograd Tensors (and torch tensors), ``ref`` its
    NumPy ufunc. ``name`` is its symbol."""

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., np.ndarray]


def declare(name: str, family: Any) -> OpInfo:
    """Attach a family declaration to the entry of the public name ``name`` (created the first
    time); a name holds one declaration. Returns the entry.

    >>> info = declare("Tensor.doctest_cmp", Comparison("?", None, None))
    >>> families(Comparison)["?"] is info.family
    True
    >>> _ = OPS.remove(OPS_BY_NAME.pop("Tensor.doctest_cmp"))
    """
    info = _entry(name)
    assert info.family is None or info.family is family, f"{name}: two family declarations"
    info.family = family
    return info


def families(kind: type) -> dict[str, Any]:
    """The declarations of one kind (``BinaryOp``, ``AxisOp``, ``Comparison``) on the entries of
    ``OPS``, by their names, in the order of the entries: a view, like the spec samples."""
    return {i.family.name: i.family for i in OPS if isinstance(i.family, kind)}


# ---------------------------------------------------------------- conversions

def torch_dtype_name(dt: Any) -> str:
    """'float64', 'int64', 'bool', ... for a torch dtype."""
    return str(dt).replace("torch.", "")


def dg_dtype_name(dt: Any) -> str:
    return np.dtype(dt).name


def build_args(sample: S, lib: Any, rng_seed: list[int], float_dtype: Any,
               is_torch: bool) -> tuple[tuple, dict, list]:
    """The sample's arguments as ``lib``'s tensors; returns (args, kwargs, grad leaves)."""
    rng = np.random.default_rng(list(rng_seed))
    leaves: list[Any] = []
    # a joint sample (all of its arguments Args) draws them in one go, as its spec did
    joint = iter(draw(sample.args, rng, float_dtype, joint=True)) if sample.joint else None

    def conv(a: Any) -> Any:
        if isinstance(a, Arg):
            arr = next(joint) if joint is not None else a.make(rng, float_dtype)
            rg = a.kind == "float" and a.grad
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
