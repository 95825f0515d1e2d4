"""Rows for the Tensor methods that are torch functions or operators, their ``torch.*``
functional forms, and the in-place twins (branch `methods`, issue 28 items 3 and 4).

An in-place row writes into ``x.clone()`` (a leaf that requires grad cannot be written, as
torch), so the gradient through the twin reaches ``x``. Three rows pin behaviour that matched
torch before any row said so: an int, an Ellipsis and an index list in one subscript, NaN
first in a descending ``sort``/``topk``, and ``ceil_mode`` dropping a last window that
starts at the input length plus padding.
"""

from __future__ import annotations

import numpy as np

from opinfo import B, F, I, S, row

EDGES = [S(F(3, 4)), S(F()), S(F(0, 3)), S(F(2, 1, 3))]
POS = [S(F(3, 4, domain="positive")), S(F(domain="positive")), S(F(0, 3, domain="positive"))]
UNIT = [S(F(3, 4, domain="unit")), S(F(domain="unit")), S(F(0, 3, domain="unit"))]
DISTINCT = [S(F(3, 4, domain="distinct")), S(F(domain="distinct")), S(F(0, 3, domain="distinct"))]
BINARY = [S(F(3, 4), F(3, 4)), S(F(3, 4), F(4)), S(F(), F()), S(F(2, 3), 1.5), S(F(0, 3), F(3)),
          S(F(2, 1, 3), F(4, 1))]
BIN_POS = [S(F(3, 4), F(3, 4, domain="positive")), S(F(3, 4), F(4, domain="positive")),
           S(F(), F(domain="positive")), S(F(2, 3), 1.5)]


def _method(name: str, samples: list, **kw) -> None:
    row(f"Tensor.{name}", lambda m, x, *a, n=name, **k: getattr(x, n)(*a, **k), samples, **kw)


def _function(name: str, samples: list, **kw) -> None:
    row(f"dg.{name}", lambda m, x, *a, n=name, **k: getattr(m, n)(x, *a, **k), samples, **kw)


def _both(name: str, samples: list, **kw) -> None:
    _method(name, samples, **kw)
    _function(name, samples[:3], **kw)


def _twin(name: str, samples: list, **kw) -> None:
    """``Tensor.name_`` on a clone: the values, the gradient through it, the version bumped."""
    def fn(m, x, *a, n=name, **k):
        y = x.clone()
        v = y._version
        out = getattr(y, n + "_")(*a, **k)
        assert out is y and y._version == v + 1, f"{n}_: not the same tensor, or no version bump"
        return out
    row(f"Tensor.{name}_", fn, samples, **kw)


# ---------------------------------------------------------------- arithmetic
for _n in ("add", "sub", "subtract"):
    _both(_n, BINARY + [S(F(3, 4), F(4), alpha=-2.0), S(I(3), I(3), alpha=2)],
          errors=[S(F(3), F(2, 4)), S(B(3), B(3)) if _n != "add" else S(F(3), F(2))])
    row(f"dg.{_n}.kw", lambda m, x, y, n=_n: getattr(m, n)(input=x, other=y, alpha=0.5),
        [S(F(3, 4), F(4))], torch_fn=lambda m, x, y, n=_n: getattr(m, n)(input=x, other=y, alpha=0.5))
row("dg.rsub", lambda m, x, y, **k: m.rsub(x, y, **k), BINARY[:4] + [S(F(3), F(3), alpha=3.0)])
for _n in ("mul", "multiply"):
    _both(_n, BINARY + [S(I(3, 4), I(4)), S(B(3), B(3)), S(I(3), 2.5)], errors=[S(F(3), F(2, 4))])
for _n in ("div", "divide"):
    _both(_n, BIN_POS + [S(I(3, 4), I(4, low=1)), S(F(3, 4), F(4, domain="positive"), rounding_mode="trunc"),
                         S(F(3, 4), F(4, domain="positive"), rounding_mode="floor"),
                         S(I(5, low=-9, high=9), I(5, low=1), rounding_mode="trunc"),
                         S(I(5, low=-9, high=9), I(5, low=1), rounding_mode="floor")],
          errors=[S(F(3), F(3), rounding_mode="round"), S(F(3), F(2, 4))])
_both("true_divide", BIN_POS + [S(I(3), I(3, low=1))])
for _n in ("neg", "negative"):
    _both(_n, EDGES + [S(I(3))], errors=[S(B(3))])
_both("positive", EDGES[:3] + [S(I(3))], errors=[S(B(3))])
row("Tensor.__pos__", lambda m, x: +x, EDGES[:3])
_both("square", EDGES + [S(I(3)), S(B(3))])
_both("reciprocal", POS + [S(I(3, low=1))])
_method("absolute", EDGES[:3] + [S(I(3, low=-3))])
_function("absolute", EDGES[:3])
# grad=False: torch's gradient of sgn is a ZeroTensor, which cannot be read as an array
_both("sgn", DISTINCT + [S(I(3, low=-3))], grad=False)
_both("signbit", EDGES + [S(I(3, low=-3))], grad=False)
for _n in ("deg2rad", "rad2deg"):
    _both(_n, EDGES + [S(I(3))])
_both("heaviside", [S(F(3, 4, grad=False), F(4, grad=False)), S(F(grad=False), F(grad=False)),
                    S(I(3, low=-1, high=2), I(3))], errors=[S(F(3), I(3))])
_both("clamp_min", [S(F(3, 4), 0.0), S(F(), -0.5), S(F(0, 2), 1.0), S(F(3, 4, domain="distinct"), F(4, domain="distinct"))])
_both("clamp_max", [S(F(3, 4), 0.0), S(F(), -0.5), S(F(0, 2), 1.0), S(F(3, 4, domain="distinct"), F(4, domain="distinct"))])
for _n in ("fmax", "fmin"):
    _both(_n, [S(F(3, 4, domain="distinct"), F(3, 4, domain="distinct")), S(F(3, 4), F(4)), S(F(), F()),
               S(I(3), I(3))])
    row(f"dg.{_n}.nan", lambda m, n=_n: getattr(m, n)(m.tensor([float("nan"), 1.0, float("nan")]),
                                                     m.tensor([2.0, float("nan"), float("nan")])), [S()])
for _n in ("maximum", "minimum"):
    _method(_n, [S(F(3, 4, domain="distinct"), F(3, 4, domain="distinct")), S(F(3, 4), F(4)), S(I(3), I(3)),
                 S(F(domain="distinct"), F(3, domain="distinct")), S(F(0, 3), F(3)), S(B(3), B(3)),
                 S(I(2, 3), F(3, domain="distinct"))], errors=[S(F(3), F(4))])
_both("xlogy", [S(F(3, 4), F(3, 4, domain="positive")), S(F(3, 4), F(4, domain="positive")),
                S(F(), F(domain="positive")), S(F(2, 3), 1.5)])
row("dg.xlogy.zero", lambda m: m.xlogy(m.tensor([0.0, 0.0, 1.0]), m.tensor([0.0, float("nan"), 0.0])), [S()])
# inputs in (0, 1) (torch's gradient is NaN outside it, ours finite where the value is NaN)
row("Tensor.logit", lambda m, x, *a: x.sigmoid().logit(*a), [S(F(3, 4)), S(F()), S(F(0, 3)), S(F(3, 4), 0.2)])
row("dg.logit", lambda m, x, *a: m.logit(m.sigmoid(x), *a), [S(F(3, 4)), S(F(3, 4), 0.3)])
_both("nan_to_num", EDGES[:3] + [S(F(3), nan=1.0, posinf=2.0, neginf=-2.0)])
row("dg.nan_to_num.inf", lambda m: m.nan_to_num(m.tensor([float("nan"), float("inf"), -float("inf"), 1.0])), [S()])
_method("fix", EDGES[:3] + [S(I(3))])
_function("fix", EDGES[:2])
for _n, _d in (("arccos", UNIT), ("arcsin", UNIT), ("arctan", EDGES), ("arctanh", UNIT),
               ("arcsinh", EDGES), ("arccosh", [S(F(3, 4, domain="positive") ), S(F(domain="positive"))])):
    _both(_n, _d[:3])
_function("arctan2", BINARY[:3])
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _method(_n, [S(I(3, 4), I(3, 4)), S(B(3), B(3)), S(I(3), 3)], errors=[S(F(3), F(3))])
_method("bitwise_not", [S(I(3, 4)), S(B(3))], errors=[S(F(3))])

# ---------------------------------------------------------------- multiply-adds and products
_both("addcmul", [S(F(3, 4), F(3, 4), F(4)), S(F(3, 4), F(4), F(3, 1), value=0.5), S(F(), F(), F()),
                  S(F(0, 3), F(3), F(3))], errors=[S(F(3), F(2, 4), F(3))])
_both("addcdiv", [S(F(3, 4), F(3, 4), F(4, domain="positive")),
                  S(F(3, 4), F(4), F(3, 1, domain="positive"), value=-2.0), S(F(), F(), F(domain="positive"))],
      errors=[S(F(3), I(3), I(3, low=1))])
_both("addmv", [S(F(2), F(2, 3), F(3)), S(F(), F(2, 3), F(3), beta=0.5, alpha=2.0), S(F(2), F(2, 0), F(0)),
                S(F(2), F(2, 3), F(3), beta=0)], errors=[S(F(2), F(2, 3), F(4))])
_both("addr", [S(F(2, 3), F(2), F(3)), S(F(3), F(2), F(3), beta=2.0, alpha=0.5), S(F(2, 3), F(2), F(3), beta=0)],
      errors=[S(F(2, 3), F(2, 1), F(3))])
_both("addbmm", [S(F(2, 4), F(3, 2, 5), F(3, 5, 4)), S(F(4), F(3, 2, 5), F(3, 5, 4), beta=0.5, alpha=2.0),
                 S(F(2, 4), F(0, 2, 5), F(0, 5, 4))], errors=[S(F(2, 4), F(3, 2, 5), F(3, 4, 4))])
_both("t", [S(F(3, 4)), S(F(3)), S(F()), S(F(0, 2))], errors=[S(F(2, 3, 4))])
_both("matmul", [S(F(3, 4), F(4, 5)), S(F(4), F(4)), S(F(2, 3, 4), F(4)), S(F(2, 1, 3, 4), F(5, 4, 2)),
                 S(F(0, 3), F(3, 2))], errors=[S(F(3, 4), F(3, 4)), S(F(), F(3))])
row("dg.matmul.kw", lambda m, x, y: m.matmul(input=x, other=y), [S(F(3, 4), F(4))])
for _n in ("ger", "inner", "vdot", "kron"):
    _both(_n, [S(F(3), F(4)) if _n in ("ger", "kron") else S(F(3), F(3)),
               S(F(2, 3), F(4, 3)) if _n == "inner" else S(F(2), F(2)),
               S(F(2, 3), F(2, 1)) if _n == "kron" else S(F(0), F(0))],
          errors=[S(F(3), F(2)) if _n in ("inner", "vdot") else S(F(2, 2), F(2))] if _n != "kron" else [])
_both("cross", [S(F(4, 3), F(4, 3)), S(F(3, 4), F(3, 4), 0), S(F(2, 3), F(1, 3), -1), S(F(3), F(3))],
      errors=[S(F(4, 2), F(4, 2)), S(F(3, 4), F(3, 4), 1)])
_both("dist", [S(F(3, 4), F(3, 4)), S(F(3, 4), F(4), 1), S(F(2, 3), F(3), 3.0), S(F(3), F(3), float("inf"))])

# ---------------------------------------------------------------- comparisons and tests
for _n in ("eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
           "greater_equal"):
    _both(_n, [S(F(3, 4, domain="ties"), F(3, 4, domain="ties")), S(F(3, 4, domain="ties"), 0.0),
               S(F(), F(3)), S(I(3), I(3)), S(F(0, 2), F(2))], grad=False, errors=[S(F(3), F(2))])
_both("equal", [S(F(3, 4, domain="ties"), F(3, 4, domain="ties")), S(F(3), F(2)), S(I(2), I(2))], grad=False)
row("dg.equal.same", lambda m: m.equal(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0])), [S()])
_both("allclose", [S(F(3, 4), F(3, 4)), S(F(3, 4), F(4)), S(F(), F())], grad=False,
      errors=[S(F(3), F(2))])
row("dg.allclose.near", lambda m, **k: m.allclose(m.tensor([1.0, float("nan")]),
                                                  m.tensor([1.0 + 1e-9, float("nan")]), **k),
    [S(), S(equal_nan=True), S(rtol=0.0, atol=0.0)])
for _n in ("is_floating_point", "is_complex", "is_signed"):
    _method(_n, [S(F(3)), S(I(3)), S(B(3))] if _n != "is_signed" else [S(F(3)), S(I(3)), S(B(3))])
for _n in ("is_floating_point", "is_complex"):
    _function(_n, [S(F(3)), S(I(3)), S(B(3))])
_both("is_nonzero", [S(F(1)), S(F()), S(B(1, 1))], errors=[S(F(2)), S(F(0))])
row("dg.is_tensor", lambda m, x: (m.is_tensor(x), m.is_tensor([1.0]), m.is_tensor(1.0)), [S(F(2))])
row("dg.numel", lambda m, x: m.numel(x), [S(F(3, 4)), S(F()), S(F(0, 3))])

# ---------------------------------------------------------------- shapes and views
_both("narrow", [S(F(4, 5), 0, 1, 2), S(F(4, 5), -1, -3, 2), S(F(4, 5), 1, 0, 0), S(F(4, 5), 1, 5, 0),
                 S(F(2, 3, 4), 2, 1, 3)], errors=[S(F(4, 5), 0, 3, 2), S(F(4, 5), 2, 0, 1), S(F(), 0, 0, 1)])
_both("select", [S(F(4, 5), 0, 1), S(F(4, 5), -1, -2), S(F(2, 3, 4), 1, 2)],
      errors=[S(F(4, 5), 0, 4), S(F(4, 5), 2, 0), S(F(), 0, 0)])
_both("tile", [S(F(2, 3), (2,)), S(F(2, 3), (2, 1, 2)), S(F(), (3,)), S(F(0, 2), (2, 2)), S(I(3), (2,))])
row("Tensor.tile.varargs", lambda m, x: x.tile(2, 1), [S(F(2, 3))])
for _n in ("swapaxes", "swapdims"):
    _both(_n, [S(F(2, 3, 4), 0, 2), S(F(2, 3), -1, 0), S(F(), 0, -1)], errors=[S(F(2, 3), 0, 2)])
_both("ravel", EDGES + [S(I(2, 3))])
row("Tensor.expand_as", lambda m, x, y: x.expand_as(y), [S(F(3, 1), F(2, 3, 4)), S(F(), F(2, 2))],
    errors=[S(F(3, 2), F(3, 4))])
row("Tensor.view_as", lambda m, x, y: x.view_as(y), [S(F(3, 4), F(2, 6)), S(F(1), F())],
    errors=[S(F(3, 4), F(5))])
row("Tensor.reshape_as", lambda m, x, y: x.reshape_as(y), [S(F(3, 4), F(12)), S(F(0, 2), F(2, 0))],
    errors=[S(F(3, 4), F(5))])
row("Tensor.type_as", lambda m, x, y: x.type_as(y), [S(F(3), I(2)), S(I(3), F(2)), S(F(3), F(1)), S(B(2), F(1))])
row("Tensor.sum_to_size", lambda m, x, *s: x.sum_to_size(*s),
    [S(F(2, 3, 4), 3, 1), S(F(2, 3, 4), (1, 3, 4)), S(F(3), 3), S(F(2, 3), 1, 1)],
    errors=[S(F(2, 3), 2, 2)])
row("Tensor.mH", lambda m, x: x.mH, [S(F(3, 4)), S(F(2, 3, 4))])
row("Tensor.adjoint", lambda m, x: x.adjoint(), [S(F(3, 4)), S(F(2, 3, 4))])


def _layout(m, x, op):
    v = {"T": lambda: x.t(), "slice": lambda: x[1:], "step": lambda: x[::2],
         "expand": lambda: x.expand(3, *x.shape), "plain": lambda: x}[op]()
    return (v.stride(), v.storage_offset(), v.is_contiguous(), v.nelement(), v.ndimension(),
            v.element_size(), v.itemsize, v.nbytes)


for _n in ("stride", "storage_offset", "is_contiguous", "nelement", "ndimension", "element_size",
           "itemsize", "nbytes"):
    row(f"Tensor.{_n}", lambda m, x, op: _layout(m, x, op),
        [S(F(3, 4), "plain"), S(F(3, 4), "T"), S(F(4, 2), "slice"), S(F(6), "step"), S(F(2), "expand"),
         S(I(3, 2), "plain"), S(F(), "plain")] if _n == "stride" else [S(F(3, 4), "T"), S(F(4, 2), "slice")],
        grad=False)
row("Tensor.stride.dim", lambda m, x, d: x.stride(d), [S(F(3, 4), 0), S(F(3, 4), -1)], errors=[S(F(3, 4), 2)])

# ---------------------------------------------------------------- new tensors, copies, the graph
for _n in ("new_zeros", "new_ones", "new_empty"):
    row(f"Tensor.{_n}", lambda m, x, *s, n=_n, **k: getattr(x, n)(*s, **k),
        [S(F(2), 2, 3), S(F(2), (3,)), S(I(2), (2, 2)), S(F(2), 2, dtype=None)] if _n != "new_empty"
        else [S(F(2), 2, 3), S(I(2), (2,))], compare="shape" if _n == "new_empty" else "values",
        errors=[S(F(2), -1)])
row("Tensor.new_full", lambda m, x, s, v: x.new_full(s, v), [S(F(2), (2, 3), 1.5), S(I(2), (2,), 7)])
row("Tensor.new_tensor", lambda m, x, d: x.new_tensor(d), [S(F(2), [1, 2]), S(I(2), [1.5, 2.5])])
row("Tensor.new_zeros.kw", lambda m, x: x.new_zeros(size=(2,), dtype=m.int64, requires_grad=False), [S(F(2))])
row("dg.clone", lambda m, x: m.clone(x), [S(F(3, 4)), S(F())])
row("dg.detach", lambda m, x: m.detach(x) * 2, [S(F(3))])
row("Tensor.detach_", lambda m, x: (x * 2).detach_(), [S(F(3))])
row("dg.as_tensor", lambda m, d, **k: m.as_tensor(d, **k), [S([1, 2]), S([1.5]), S([[True]]), S([1, 2], dtype=None)])
row("dg.asarray", lambda m, d, **k: m.asarray(d, **k), [S([1, 2]), S([1.5], copy=True), S([0.5], requires_grad=True)])
row("dg.as_tensor.tensor", lambda m, x: m.as_tensor(x), [S(F(3))])

# ---------------------------------------------------------------- reductions, counting, searching
_both("count_nonzero", [S(I(3, 4, high=3)), S(F(3, 4, domain="ties"), 0), S(F(3, 4, domain="ties"), (0, 1)),
                        S(F(0, 3)), S(B(3, 2), -1)], errors=[S(I(3), 1)])
for _n in ("nansum", "nanmean"):
    _both(_n, EDGES + [S(F(3, 4), 1), S(F(3, 4), (0, 1), True), S(F(2, 3), -1, keepdim=True)],
          errors=[S(F(3), 1)] + ([S(I(3, 4)), S(B(3), 0), S(I())] if _n == "nanmean" else []))
    row(f"dg.{_n}.nan", lambda m, n=_n: getattr(m, n)(m.tensor([[1.0, float("nan")], [float("nan"), float("nan")]]), 1),
        [S()])
row("Tensor.nansum.int", lambda m, x: x.nansum(), [S(I(3, 4))])
# torch checks nanmean's input before dtype=, and refuses a dtype= that is not floating point
row("Tensor.nanmean[dtype]", lambda m, x, d="float64": x.nanmean(dtype=getattr(m, d)), [S(F(3, 4), "float32")],
    errors=[S(I(3, 4)), S(B(3)), S(F(3), "int64")], rtol=1e-6, atol=1e-7)  # float32 sums in its own order
_both("aminmax", [S(F(3, 4, domain="distinct")), S(F(3, 4, domain="distinct"), dim=1),
                  S(F(3, 4, domain="distinct"), dim=-2, keepdim=True), S(F(domain="distinct")), S(I(3, 2))],
      errors=[S(F(0, 3)), S(F(0, 3), dim=0)])
for _n in ("var_mean", "std_mean"):
    _function(_n, [S(F(3, 4)), S(F(3, 4), 1), S(F(3, 4), (0, 1), keepdim=True), S(F(3, 4), 1, correction=0),
                   S(F(3, 4), 0, unbiased=False), S(F(5), False)],
              errors=[S(I(3, 4)), S(B(3, 4), 1), S(I(), correction=0)])
_both("diff", [S(F(5)), S(F(3, 4), 2, 0), S(F(3, 4), 1, -1, F(3, 1), F(3, 2)), S(F(3, 4), 5), S(I(4)),
               S(B(4)), S(F(0))], errors=[S(F())])
for _n in ("trapezoid", "trapz", "cumulative_trapezoid"):
    _function(_n, [S(F(5)), S(F(3, 4), dim=0), S(F(3, 4), dx=0.5), S(F(3, 4), F(4)), S(F(3, 4), F(3, 4), dim=1),
                   S(I(4))])
_both("bincount", [S(I(6)), S(I(6), minlength=8), S(I(0)), S(I(5), F(5, grad=False))],
      errors=[S(I(2, 3)), S(F(3))], grad=False)
_both("histc", [S(F(20, grad=False)), S(F(20, grad=False), 5, -1, 1), S(F(3, 4, grad=False), 4, 0, 0)],
      errors=[S(I(3)), S(F(3), -1)], grad=False)
row("dg.searchsorted", lambda m, s, v, **k: m.searchsorted(s.sort().values, v, **k),
    [S(F(6), F(3, 4)), S(F(6), F(5), right=True), S(F(6), F(5), side="right"), S(F(6), F(5), out_int32=True),
     S(F(2, 6), F(2, 3))], grad=False, errors=[S(F(2, 6), F(3, 3)), S(F(6), F(2), side="up")])
row("dg.bucketize", lambda m, v, b, **k: m.bucketize(v, b.sort().values, **k),
    [S(F(3, 4), F(6)), S(F(5), F(6), right=True), S(F(), F(3)), S(F(5), F(6), out_int32=True)],
    grad=False, errors=[S(F(3), F(2, 4))])
_both("argwhere", [S(I(3, 4, high=2)), S(F(3, domain="ties")), S(F())], grad=False)

# ---------------------------------------------------------------- indexing
_IDX = np.array([2, 0])
_both("index_fill", [S(F(3, 4), 0, I(2, high=3), 1.5), S(F(3, 4), -1, I(3, high=4), -2.0), S(F(3), 0, I(0), 1.0)],
      errors=[S(F(3, 4), 0, I(2, low=3, high=5), 1.0), S(F(3, 4), 2, I(1), 1.0)])
row("Tensor.index_copy", lambda m, x, d, s: x.index_copy(d, m.tensor(_IDX), s),
    [S(F(3, 4), 0, F(2, 4)), S(F(4, 3), 1, F(4, 2)), S(F(3, 4), -2, F(2, 4))], errors=[S(F(3, 4), 0, F(3, 4))])
row("dg.index_copy", lambda m, x, d, s: m.index_copy(x, d, m.tensor(_IDX), s), [S(F(3, 4), 0, F(2, 4))])
_both("take", [S(F(3, 4), I(5, high=12)), S(F(3, 4), I(2, 2, low=-12, high=12)), S(F(), I(2, high=1))],
      errors=[S(F(3, 4), I(2, low=12, high=13))])
row("Tensor.put", lambda m, x, s, acc: x.put(m.tensor(np.array([5, 1, 5])), s, acc),
    [S(F(3, 4), F(3), True), S(F(3, 4), F(3), False)], errors=[S(F(3, 4), F(2), False)])
row("dg.put", lambda m, x, s: m.put(x, m.tensor(np.array([0, -1])), s, accumulate=True), [S(F(3, 4), F(2))])

# ---------------------------------------------------------------- the in-place twins
for _n, _d in (("abs", EDGES), ("absolute", EDGES[:2]), ("neg", EDGES[:2]), ("negative", EDGES[:2]),
               ("sigmoid", EDGES), ("tanh", EDGES), ("relu", DISTINCT), ("sin", EDGES), ("cos", EDGES),
               ("tan", UNIT), ("sinh", EDGES[:2]), ("cosh", EDGES[:2]), ("exp2", EDGES[:2]),
               ("expm1", EDGES[:2]), ("sqrt", POS), ("rsqrt", POS), ("log", POS), ("log2", POS),
               ("log10", POS), ("log1p", POS), ("asin", UNIT), ("arcsin", UNIT[:2]), ("acos", UNIT),
               ("arccos", UNIT[:2]), ("atan", EDGES[:2]), ("arctan", EDGES[:2]), 
               ("erf", EDGES[:2]), ("erfc", EDGES[:2]), ("erfinv", UNIT[:2]), ("ceil", EDGES[:2]),
               ("floor", EDGES[:2]), ("trunc", EDGES[:2]), ("fix", EDGES[:2]), ("frac", EDGES[:2]),
               ("sign", DISTINCT[:2]), ("reciprocal", POS), ("square", EDGES),
               ("deg2rad", EDGES[:2]), ("rad2deg", EDGES[:2]),                ("nan_to_num", EDGES[:2])):
    _twin(_n, _d)
# torch has no derivative for these in-place twins (NotImplementedError), nor a readable one for sgn_
for _n, _d in (("acosh", [S(F(3, domain="positive"))]), ("arccosh", [S(F(3, domain="positive"))]),
               ("asinh", EDGES[:2]), ("arcsinh", EDGES[:2]), ("atanh", UNIT), ("arctanh", UNIT[:2]),
               ("sgn", DISTINCT[:2]), ("floor_divide", [S(F(3, 4), 1.5)])):
    _twin(_n, _d, grad=False)
_twin("round", [S(F(3, 4)), S(F(3, 4), decimals=1)])
_twin("exp", EDGES[:2])
for _n in ("clamp_min", "clamp_max"):
    _twin(_n, [S(F(3, 4), 0.0), S(F(3, 4, domain="distinct"), F(4, domain="distinct"))])
_twin("clip", [S(F(3, 4), -0.5, 0.5), S(F(3, 4), min=0.0)])
_twin("cumsum", [S(F(3, 4), 1), S(F(3, 4), dim=0)])
_twin("cumprod", [S(F(3, 4), 1)])
_twin("tril", [S(F(3, 4)), S(F(3, 4), 1)])
_twin("triu", [S(F(3, 4)), S(F(3, 4), -1)])
for _n in ("atan2", "arctan2", "hypot", "copysign", "subtract", "multiply", "xlogy"):
    _twin(_n, [S(F(3, 4), F(3, 4, domain="positive")), S(F(3, 4), F(4, domain="positive"))],
          errors=[S(F(3), F(2, 4))])
for _n in ("fmod", "remainder"):
    _twin(_n, [S(F(3, 4), 1.5), S(I(3, 4), 3)])
_twin("floor_divide", [S(I(3, 4), 3)])
_twin("true_divide", [S(F(3, 4), F(4, domain="positive"))], errors=[S(I(3), 2)])
for _n in ("divide", "div"):
    _twin(_n, [S(F(3, 4), F(4, domain="positive")), S(F(3, 4), 2.0, rounding_mode="floor"),
               S(I(3, 4), 2, rounding_mode="trunc")], errors=[S(I(3), 2)])
_twin("lerp", [S(F(3, 4), F(3, 4), 0.3), S(F(3, 4), F(4), F(3, 4))])
_twin("heaviside", [S(F(3, 4, grad=False), F(4, grad=False))])
_twin("addcmul", [S(F(3, 4), F(3, 4), F(4), value=0.5)])
_twin("addcdiv", [S(F(3, 4), F(3, 4), F(4, domain="positive"), value=-1.0)])
_twin("addmm", [S(F(2, 4), F(2, 3), F(3, 4), beta=0.5, alpha=2.0)])
_twin("addmv", [S(F(2), F(2, 3), F(3))])
_twin("addr", [S(F(2, 3), F(2), F(3))])
_twin("addbmm", [S(F(2, 4), F(3, 2, 5), F(3, 5, 4))])
_twin("baddbmm", [S(F(3, 2, 4), F(3, 2, 5), F(3, 5, 4))])
for _n in ("eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
           "greater_equal"):
    _twin(_n, [S(F(3, 4, domain="ties"), F(4, domain="ties")), S(I(3, 4), 2)], grad=False)
for _n in ("logical_and", "logical_or", "logical_xor"):
    _twin(_n, [S(F(3, 4, domain="ties"), F(4, domain="ties")), S(B(3, 4), B(4))], grad=False)
_twin("logical_not", [S(F(3, 4, domain="ties")), S(B(3))], grad=False)
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _twin(_n, [S(I(3, 4), I(4)), S(B(3), B(3))])
_twin("bitwise_not", [S(I(3, 4)), S(B(3))])
_twin("masked_fill", [S(F(3, 4), B(3, 4), 0.5), S(F(3, 4), B(4), -1.0)], errors=[S(F(3, 4), B(3), 0.0)])
_twin("index_fill", [S(F(3, 4), 1, I(2, high=4), 2.0)])
row("Tensor.index_copy_", lambda m, x, s: x.clone().index_copy_(0, m.tensor(_IDX), s), [S(F(3, 4), F(2, 4))])
row("Tensor.index_add_", lambda m, x, s, **k: x.clone().index_add_(0, m.tensor(np.array([2, 2])), s, **k),
    [S(F(3, 4), F(2, 4)), S(F(3, 4), F(2, 4), alpha=-0.5)])
_PERM = np.array([[2, 0, 1, 2], [0, 1, 0, 1]])  # no index repeated within a column: one writer each
row("Tensor.scatter_", lambda m, x, s: x.clone().scatter_(0, m.tensor(_PERM), s), [S(F(3, 4), F(2, 4))])
row("Tensor.scatter_.value", lambda m, x: x.clone().scatter_(1, m.tensor(_PERM[:, :2]), 1.5), [S(F(2, 4))])
_twin("scatter_add", [S(F(3, 4), 0, I(2, 4, high=3), F(2, 4))])
_twin("scatter_reduce", [S(F(3, 4, domain="distinct"), 0, I(2, 4, high=3), F(2, 4, domain="distinct"), "amax"),
                         S(F(3, 4), 0, I(2, 4, high=3), F(2, 4), "sum", include_self=False)])
row("Tensor.put_", lambda m, x, s: x.clone().put_(m.tensor(np.array([5, 1])), s, accumulate=True),
    [S(F(3, 4), F(2))])
# a result that cannot be cast back to the tensor's dtype: RuntimeError in both
row("Tensor.sqrt_.int", lambda m, x: x.sqrt_(), [S(F(2, domain="positive", grad=False))], errors=[S(I(3))])
# a leaf that requires grad written outside no_grad: RuntimeError in both
row("Tensor.relu_.leaf", lambda m, x: x.relu_(), [S(F(3, grad=False))], errors=[S(F(3))])
row("Tensor.sigmoid_.leaf", lambda m, x: x.sigmoid_(), [S(F(3, grad=False))], errors=[S(F(3))])
row("Tensor.logit_", lambda m, x, *a: (x.sigmoid() + 0.0).logit_(*a), [S(F(3, 4)), S(F(3, 4), 0.25)])

# ---------------------------------------------------------------- behaviour that matched before a row said so
row("Tensor.__getitem__.int_ellipsis_list", lambda m, x: x[0, ..., [0, 1]], [S(F(2, 3, 4)), S(F(2, 4))])
row("dg.sort.nan_descending", lambda m, **k: m.sort(m.tensor([1.0, float("nan"), 3.0, -1.0]), **k),
    [S(descending=True), S(descending=False)], grad=False)
row("dg.topk.nan", lambda m, **k: m.topk(m.tensor([1.0, float("nan"), 3.0, -1.0]), 2, **k),
    [S(), S(largest=False)], grad=False)
row("F.max_pool1d.ceil_mode_last_window", lambda m, x, **k: m.nn.functional.max_pool1d(x, 2, 2, 1, ceil_mode=True),
    [S(F(1, 1, 5, domain="distinct")), S(F(1, 1, 4, domain="distinct"))])
row("F.avg_pool2d.ceil_mode_last_window",
    lambda m, x: m.nn.functional.avg_pool2d(x, 2, 2, 1, ceil_mode=True), [S(F(1, 1, 5, 4))])

# ---------------------------------------------------------------- torch's axis= alias of dim=
for _n, _extra in (("cummax", ()), ("cummin", ()), ("cumprod", ()), ("all", ()), ("any", ()),
                   ("prod", ()), ("sort", ()), ("logcumsumexp", ()), ("nansum", ()),
                   ("count_nonzero", ())):
    row(f"Tensor.{_n}.axis", lambda m, x, n=_n: getattr(x, n)(axis=1), [S(F(3, 4, domain="distinct"))],
        grad=_n not in ("all", "any", "count_nonzero"))
    row(f"dg.{_n}.axis", lambda m, x, n=_n: getattr(m, n)(x, axis=-1), [S(F(3, 4, domain="distinct"))],
        grad=_n not in ("all", "any", "count_nonzero"))
row("dg.sum.input_kw", lambda m, x: m.sum(input=x, dim=0), [S(F(3, 4))])
row("dg.exp.input_kw", lambda m, x: m.exp(input=x), [S(F(3, 4))])
row("dg.lerp.input_kw", lambda m, x, y: m.lerp(input=x, end=y, weight=0.5), [S(F(3, 4), F(4))])
row("dg.mm.input_kw", lambda m, x, y: m.mm(input=x, mat2=y), [S(F(3, 4), F(4, 2))])
row("dg.full.factory", lambda m, v: m.full((2, 3), v, dtype=m.float64, device="cpu", layout=m.strided,
                                         requires_grad=False, pin_memory=False), [S(1.5)])
row("dg.zeros.factory", lambda m: m.zeros(2, 3, device=m.device("cpu"), layout=m.strided), [S()])
row("dg.eye.factory", lambda m: m.eye(3, 2, device="cpu", dtype=m.float32), [S()])
row("dg.arange.factory", lambda m: m.arange(5, device="cpu", layout=m.strided), [S()])
row("dg.zeros_like.factory", lambda m, x: m.zeros_like(x, device="cpu", memory_format=m.preserve_format),
    [S(F(2, 3))])
row("dg.empty.factory", lambda m: m.empty(2, 3, device="cpu", memory_format=m.contiguous_format), [S()],
    compare="shape")

# ---------------------------------------------------------------- logdet (inputs made positive definite inside)
def _spd(m, x):
    n = x.shape[-1]
    return x @ x.mT + m.eye(n, dtype=x.dtype)


row("Tensor.logdet", lambda m, x: _spd(m, x).logdet(), [S(F(3, 3)), S(F(2, 4, 4)), S(F(1, 1))])
row("dg.logdet", lambda m, x: m.logdet(_spd(m, x)), [S(F(3, 3)), S(F(0, 2, 2))],
    errors=[S(F(2, 3)), S(F(3))])
row("dg.logdet.sign", lambda m: m.logdet(m.tensor([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]],
                                                   [[2.0, 0.0], [0.0, 3.0]]])), [S()])
