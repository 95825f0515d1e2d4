"""Rows for dtypes: creation and inference, casts, torch's type promotion across dtype pairs
(dimensioned, 0-d and Python numbers), comparisons' and argmax's dtypes, integer and bool
indexing with torch's placement of advanced indices, ``numpy()``/``__array__``, and the
random functions (compared by dtype and shape only)."""

from __future__ import annotations

import numpy as np

from opinfo import Arg, B, F, I, S, row

DTYPES = ["bool", "int32", "int64", "float32", "float64"]


def _dt(m, name):
    """The library's dtype of that name (None stays None)."""
    return None if name is None else getattr(m, name)


def I32(*shape: int, low: int = 0, high: int = 5) -> Arg:
    return Arg(tuple(shape), "int32", low=low, high=high)


def _with_default(m, name, fn):
    """``fn()`` with the library's default float dtype set to ``name``, restored after."""
    before = m.get_default_dtype()
    m.set_default_dtype(getattr(m, name))
    try:
        return fn()
    finally:
        m.set_default_dtype(before)


# ---------------------------------------------------------------- creation

row("dg.tensor", lambda m, data, dt=None: m.tensor(data, dtype=_dt(m, dt)),
    [S([1, 2]), S([1.5, 2]), S([True, False]), S(3), S(2.5), S(True), S([[1, 2], [3, 4]], "float32"),
     S([1, 2], "int32"), S([1.7, -2.2], "int64"), S([0, 2], "bool"), S([]),
     S(np.array([1, 2], dtype=np.int32)), S(np.array([1.0, 2.0], dtype=np.float32)),
     S(np.array([[True], [False]])), S(np.arange(3), "float64")],
    grad=False)
row("dg.tensor", lambda m, data, **kw: m.tensor(data, requires_grad=True, **kw),
    [S([1.0, 2.0]), S(0.5)],
    errors=[S([1, 2]), S([True])])
row("dg.tensor", lambda m, data: _with_default(m, "float32", lambda: m.tensor(data)),
    [S([1.5, 2.0]), S([1, 2]), S(np.array([1.0]))], grad=False)
row("dg.from_numpy", lambda m, a: m.from_numpy(a),
    [S(np.array([1, 2])), S(np.array([1, 2], dtype=np.int32)), S(np.array([True, False])),
     S(np.ones((2, 3), dtype=np.float32)), S(np.zeros(0)), S(np.array(2.5))],
    grad=False, errors=[S([1.0, 2.0])])


def _sized(fname):
    def fn(m, *size, dt=None, **kw):
        return getattr(m, fname)(*size, dtype=_dt(m, dt), **kw)
    return fn


for _name in ("zeros", "ones"):
    row(f"dg.{_name}", _sized(_name),
        [S(2, 3), S((2, 3)), S(0), S(()), S(3, dt="int64"), S(2, dt="bool"), S(2, dt="float32"),
         S(2, requires_grad=True), S([2, 1], device="cpu")],
        grad=False,
        errors=[S(2, dt="int64", requires_grad=True), S(2, device="foo")])
    row(f"dg.{_name}_like", lambda m, x, dt=None, n=_name, **kw: getattr(m, f"{n}_like")(x, dtype=_dt(m, dt), **kw),
        [S(F(2, 3)), S(I(3)), S(B(2)), S(I32(4)), S(F()), S(F(0, 2)), S(I(3), dt="float32"),
         S(F(2), requires_grad=True)],
        grad=False, errors=[S(I(3), requires_grad=True)])

row("dg.arange", lambda m, *a, dt=None, **kw: m.arange(*a, dtype=_dt(m, dt), **kw),
    [S(5), S(1, 4), S(0, 1, 0.25), S(1.0, 3), S(5, dt="float32"), S(0, 10, 3), S(10, 0, -2),
     S(0), S(-1.5, 1.5, 0.5), S(3, requires_grad=False), S(3, dt="float64", requires_grad=True)],
    grad=False, errors=[S(0, 1, 0), S(1, 0, 1), S(3, requires_grad=True)])
row("dg.linspace", lambda m, *a, dt=None, **kw: m.linspace(*a, dtype=_dt(m, dt), **kw),
    [S(0, 1, 5), S(-1, 1, 1), S(0, 1, 0), S(0, 1, 4, dt="float32"), S(2.5, -1.0, 6),
     S(0, 1, 3, requires_grad=True)],
    grad=False, errors=[S(0, 1, -1)])

row("dg.set_default_dtype",
    lambda m, x: _with_default(m, "float32", lambda: [m.tensor([1.5]), m.zeros(2), m.arange(0.0, 2.0),
                                                       m.tensor([1, 2]) / 2, m.tensor([1, 2]) * 0.5,
                                                       x.float() * 2.5, m.linspace(0, 1, 3)]),
    [S(F(3))])
row("dg.get_default_dtype",
    lambda m: [m.zeros(1, dtype=m.get_default_dtype()),
               _with_default(m, "float32", lambda: m.zeros(1, dtype=m.get_default_dtype()))],
    [S()], grad=False)

# ---------------------------------------------------------------- casts

for _name, _dtype in (("long", "int64"), ("int", "int32"), ("bool", "bool"), ("float", "float32"),
                      ("double", "float64")):
    row(f"Tensor.{_name}", lambda m, x, n=_name: getattr(x, n)(),
        [S(F(3, 4)), S(F()), S(F(0)), S(I(3)), S(B(2)), S(I32(2)), S(F(3, domain="ties"))])
row("Tensor.to", lambda m, x, *a, **kw: x.to(*[_dt(m, v) if v in DTYPES else v for v in a], **kw),
    [S(F(3), "float32"), S(F(3), "float64"), S(F(2, 2), "int64"), S(I(3), "float64"), S(B(3), "int32"),
     S(F(3), "cpu"), S(F(3), "cpu", "float32"), S(F(3), device="cpu"), S(F(2), F(3))],
    errors=[S(F(3), "foo")])
row("Tensor.type", lambda m, x, dt: x.type(getattr(m, dt)),
    [S(F(3), "float32"), S(F(3), "int64"), S(I(2), "float64"), S(B(2), "float32")])


def _same_string(d, t):
    assert d == t, f"{d!r} where torch gives {t!r}"


row("Tensor.type", lambda m, x: x.type(), [S(F(3)), S(I(2)), S(B(1)), S(I32(2))], grad=False,
    compare=_same_string)
row("Tensor.cpu", lambda m, x: x.cpu(), [S(F(3)), S(I(2))])
row("Tensor.device", lambda m, x: str(x.device), [S(F(3)), S(I(2))], grad=False,
    compare=_same_string)
row("Tensor.dtype", lambda m, x: m.zeros(1, dtype=x.dtype),
    [S(F(3)), S(I(2)), S(B(1)), S(I32(2))], grad=False)
row("Tensor.numpy", lambda m, x: m.from_numpy(x.detach().numpy().copy()),
    [S(F(3)), S(I(2, 2)), S(B(1)), S(F())], grad=False)
row("Tensor.numpy", lambda m, x: x.numpy(), [], errors=[S(F(3), label="requires grad")])
row("Tensor.__array__", lambda m, x: m.tensor(np.asarray(x.detach()) * 2),
    [S(F(3)), S(I(2, 2)), S(F())], grad=False)
row("Tensor.__array__", lambda m, x: np.asarray(x), [], errors=[S(F(3), label="requires grad")])
row("Tensor.__array__", lambda m, x: np.asarray(x).sum().item(), [S(F(3, grad=False))], grad=False,
    compare=lambda d, t: np.testing.assert_allclose(d, t, rtol=1e-6))
row("Tensor.requires_grad_", lambda m, x, *a: x.detach().requires_grad_(*a),
    [S(F(3)), S(F(3), False), S(I(2), False)], grad=False,
    errors=[S(I(2)), S(B(2)), S(I32(2), True)])

# ---------------------------------------------------------------- promotion
# (float32 results in the float64 run: tolerances of float32's rounding; the dtypes are exact)


def _cast(m, x, dt):
    return x if dt is None else x.to(getattr(m, dt))


def _pair_samples(skip=()):
    out = []
    for a in DTYPES:
        for b in DTYPES:
            if (a, b) in skip:
                continue
            out.append(S(F(3), F(3), a, b, label=f"{a}[3],{b}[3]"))
            out.append(S(F(3), F(), a, b, label=f"{a}[3],{b}[]"))
            out.append(S(F(), F(3), a, b, label=f"{a}[],{b}[3]"))
    for a in DTYPES:
        for num in (2, 2.5, True):
            out.append(S(F(2, 3), num, a, None, label=f"{a}[2,3],{num!r}"))
        out.append(S(F(), 3, a, None, label=f"{a}[],3"))
    return out


_BINARY = {
    "__add__": lambda x, y: x + y,
    "__sub__": lambda x, y: x - y,
    "__mul__": lambda x, y: x * y,
    "__truediv__": lambda x, y: x / y,
}
_REFLECTED = {
    "__radd__": lambda x, y: y + x,
    "__rsub__": lambda x, y: y - x,
    "__rmul__": lambda x, y: y * x,
    "__rtruediv__": lambda x, y: y / x,
}
def _has_bool(s: S) -> bool:
    return "bool" in s.args[2:] or s.args[1] is True


for _name, _op in _BINARY.items():
    samples = _pair_samples()
    errors = []
    if _name == "__sub__":  # torch raises for `-` with a bool tensor or a bool number
        errors = [s for s in samples if _has_bool(s) and s.args[2:] != ("bool", "bool")][::8]
        samples = [s for s in samples if not _has_bool(s)]
    row(f"Tensor.{_name}", lambda m, x, y, a, b, op=_op: op(_cast(m, x, a), _cast(m, y, b)
                                                           if not isinstance(y, (int, float)) else y),
        samples, errors=errors, rtol=1e-6, atol=1e-6)
for _name, _op in _REFLECTED.items():
    row(f"Tensor.{_name}", lambda m, x, y, a, op=_op: op(_cast(m, x, a), y),
        [S(F(3), 2, "float32"), S(F(3), 2.5, "int64"), S(F(2, 2), 3, "int32"), S(F(3), 1.5, "float64"),
         S(F(), 2, "float32"), S(F(3), 2, "int64")] +
        ([S(F(3), True, "float32"), S(F(3), 0.5, "bool")] if _name != "__rsub__" else []),
        rtol=1e-6, atol=1e-6)
row("Tensor.__pow__", lambda m, x, y, a, b=None: _cast(m, x, a) ** (_cast(m, y, b) if b else y),
    [S(F(3, domain="positive"), 2, "float32"), S(F(3, domain="positive"), 2, "int64"),
     S(F(3, domain="positive"), 0.5, "int64"), S(F(3, domain="positive"), F(), "float32", "float64"),
     S(F(3, domain="positive"), I(3), "float32", "int64"), S(I(3, low=1, high=4), F(3), None, "float32"),
     S(F(3, domain="positive"), I32(3), "int64", "int32")], rtol=1e-6, atol=1e-6)
row("Tensor.__rpow__", lambda m, x, y, a: y ** _cast(m, x, a),
    [S(F(3), 2, "float32"), S(F(3), 2.0, "int64"), S(F(3, domain="positive"), 2, "int64")], rtol=1e-6, atol=1e-6)
row("dg.result_type", lambda m, x, y, a, b=None: m.zeros(1, dtype=m.result_type(
        _cast(m, x, a), _cast(m, y, b) if b else y)),
    [S(F(3), F(), a, b) for a in DTYPES for b in DTYPES] + [S(F(3), v, a) for a in DTYPES for v in (1, 1.5, False)],
    grad=False)

# ---------------------------------------------------------------- comparisons and argmax

_CMP = {"__lt__": lambda x, y: x < y, "__le__": lambda x, y: x <= y, "__gt__": lambda x, y: x > y,
        "__ge__": lambda x, y: x >= y, "__eq__": lambda x, y: x == y, "__ne__": lambda x, y: x != y}
for _name, _op in _CMP.items():
    row(f"Tensor.{_name}", lambda m, x, y, a=None, b=None, op=_op: op(_cast(m, x, a), _cast(m, y, b)
                                                                     if isinstance(y, m.Tensor) else y),
        [S(F(3, 4, domain="ties"), F(4, domain="ties")), S(F(3, domain="ties"), 0.0),
         S(F(3, domain="ties"), 1, "int64"), S(F(3, domain="ties"), 0.5, "int64"),
         S(F(3, domain="ties"), F(domain="ties"), "int64", "float32"),
         S(F(2, domain="ties"), F(2, domain="ties"), "bool", "bool"), S(F(2, domain="ties"), True, "bool"),
         S(F(0), 1.0)], grad=False)
for _prefix, _call in (("Tensor", lambda m, x, n, **kw: getattr(x, n)(**kw)),
                       ("dg", lambda m, x, n, **kw: getattr(m, n)(x, **kw))):
    for _name in ("argmax", "argmin"):
        row(f"{_prefix}.{_name}", lambda m, x, a=None, c=_call, n=_name, **kw: c(m, _cast(m, x, a), n, **kw),
            [S(F(3, 4, domain="distinct")), S(F(3, 4, domain="distinct"), dim=1),
             S(F(3, 4, domain="distinct"), dim=-2), S(F(5, domain="distinct"), "int64"),
             S(F(domain="distinct"))], grad=False)

# ---------------------------------------------------------------- indexing

_Z = F(2, 3, 4)
row("Tensor.__getitem__", lambda m, x, idx: x[idx],
    [S(F(3, 4), I(2, high=3)), S(F(3, 4), B(3)), S(F(3, 4), [True, False, True]),
     S(F(3, 4), I(2, 2, high=3)), S(F(3, 4), (I(2, high=3), I(2, high=4))),
     S(F(3, 4), (slice(None), I(5, high=4)), label="repeated indices"),
     S(F(5), I(high=5), label="0-d int tensor"), S(F(3, 4), B(3, 4)), S(F(3, 4), (B(3), 1)),
     S(_Z, (0, slice(None), [0, 1]), label="z[0, :, [0, 1]]"),
     S(_Z, ([0, 1], 0, [0, 1]), label="z[[0, 1], 0, [0, 1]]"),
     S(_Z, (slice(None), 0, [1, 2]), label="z[:, 0, [1, 2]]"),
     S(_Z, ([0, 1], slice(None), 0), label="z[[0, 1], :, 0]"),
     S(_Z, ([1, 0], None, [0, 2]), label="z[[1, 0], None, [0, 2]]"),
     S(_Z, (0, [0, 1], None, [1, 2]), label="z[0, [0, 1], None, [1, 2]]"),
     S(_Z, (Ellipsis, 0, [1, 2]), label="z[..., 0, [1, 2]]"),
     S(_Z, (1, slice(None), I(2, 2, high=4)), label="z[1, :, int[2, 2]]"),
     S(_Z, (B(2), slice(None), 0), label="z[mask, :, 0]"),
     S(F(3), 1), S(F(3, 4), (slice(1, None), -1)), S(I(4), I(3, high=4)), S(B(4), B(4))],
    errors=[S(F(3, 4), F(2)), S(F(3), 5)])

# ---------------------------------------------------------------- random numbers (dtype and shape)

row("dg.manual_seed", lambda m, n: (m.manual_seed(n), m.rand(2))[1], [S(0), S(123)], grad=False,
    compare="shape")
row("dg.rand", lambda m, *size, dt=None, **kw: m.rand(*size, dtype=_dt(m, dt), **kw),
    [S(2, 3), S((4,)), S(0), S(2, dt="float32"), S(3, requires_grad=True)], grad=False,
    compare="shape", errors=[S(2, dt="int64")])
row("dg.randn", lambda m, *size, dt=None, **kw: m.randn(*size, dtype=_dt(m, dt), **kw),
    [S(2, 3), S((4,)), S(()), S(2, dt="float32"), S(3, requires_grad=True)], grad=False,
    compare="shape")
row("dg.randint", lambda m, *a, dt=None, **kw: m.randint(*a, dtype=_dt(m, dt), **kw),
    [S(5, (3,)), S(2, 7, (2, 2)), S(-3, 3, (4,)), S(0, 2, (3,), dt="int32"), S(10, size=(2,)),
     S(0, 4, (2,), dt="float64")], grad=False, compare="shape",
    errors=[S(5, 5, (2,)), S(3, (2,), dt="int64", requires_grad=True)])
row("dg.randperm", lambda m, n, dt=None: m.randperm(n, dtype=_dt(m, dt)),
    [S(5), S(0), S(3, "int32")], grad=False, compare="shape", errors=[S(-1)])
row("dg.normal", lambda m, mean, std, *size, **kw: m.normal(mean, std, *size, **kw),
    [S(0.0, 1.0, (2, 3)), S(2.0, 0.5, (4,)), S(F(3), 1.0), S(0.0, F(2, 3, domain="positive")),
     S(F(3), F(3, domain="positive"))], grad=False, compare="shape")
row("dg.rand_like", lambda m, x, dt=None: m.rand_like(x, dtype=_dt(m, dt)),
    [S(F(2, 3)), S(F(0)), S(I(2), "float32")], grad=False, compare="shape",
    errors=[S(I(2))])
row("dg.randn_like", lambda m, x, dt=None: m.randn_like(x, dtype=_dt(m, dt)),
    [S(F(2, 3)), S(F()), S(I(2), "float64")], grad=False, compare="shape")
