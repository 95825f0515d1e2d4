"""Rows for the shapes branch: reductions, scans and sorting (duograd/reductions.py), shape and
indexing (duograd/indexing.py) and creation (duograd/creation.py).

Samples reach the edges: 0-d, empty, broadcast, negative dims, ties for the sorting ops
(torch's stable order), zeros for prod/cumprod, int64 index tensors and bool masks; the error
samples are torch's misuse cases (an index out of range, a dim out of range).
"""

from __future__ import annotations

from opinfo import B, F, I, S, row

# ---------------------------------------------------------------- helpers


def both(name: str, samples, errors=(), method: bool = True, fn_name: str | None = None, **kw) -> None:
    """A row for ``dg.name`` (called as ``lib.name(x, ...)``) and one for ``Tensor.name``."""
    f = fn_name or name
    row(f"dg.{name}", lambda m, *a, _f=f, **k: getattr(m, _f)(*a, **k), samples, errors=errors, **kw)
    if method:
        row(f"Tensor.{name}", lambda m, x, *a, _f=f, **k: getattr(x, _f)(*a, **k), samples,
            errors=errors, **kw)


def Z(*shape: int, grad: bool = True):
    """A float argument holding zeros among its values ({-1, 0, 1}): prod and cumprod at 0."""
    return F(*shape, domain="ties", grad=grad)


D = dict(domain="distinct")

# ---------------------------------------------------------------- reductions and scans

both("prod", [S(F(3, 4)), S(F(3, 4), 1), S(F(3, 4), -1, keepdim=True), S(F()), S(F(0, 3), 0),
              S(F(0, 3)), S(Z(4, 5), 1), S(Z(6)), S(F(), 0),
              S(F(2, 3, 4), dim=0), S(Z(3, 4), 0, True)],
     errors=[S(F(3), 1), S(F(2, 3), -3)])
both("all", [S(F(3, 4)), S(Z(3, 4), 1), S(B(3, 4), 0, keepdim=True), S(F()), S(F(0, 3), 1),
             S(Z(2, 3, 4), (0, 2))], errors=[S(F(3), 2)])
both("any", [S(Z(3, 4)), S(Z(3, 4), -1), S(B(3, 4), 1, True), S(F()), S(F(0, 3)),
             S(Z(2, 3, 4), dim=(1,))], errors=[S(F(3), 1)])
both("cumprod", [S(F(3, 4), 1), S(F(3, 4), -2), S(F(), 0), S(F(0, 3), 0), S(Z(3, 5), 1),
                 S(Z(7), 0), S(F(2, 3, 4), dim=2)], errors=[S(F(3), 1)])
both("logcumsumexp", [S(F(3, 4), 1), S(F(3, 4), 0), S(F(), 0), S(F(0, 3), 1), S(F(2, 3, 4), -1)],
     errors=[S(F(3), 2)])
for _n in ("cummax", "cummin"):
    both(_n, [S(F(3, 4, **D), 1), S(F(3, 4), -2), S(F(), 0), S(F(0, 3), 0),
              S(F(4, 7, domain="ties"), 1, label="ties")], errors=[S(F(3), 1)])
both("sort", [S(F(3, 4)), S(F(3, 4), 0), S(F(3, 4), descending=True), S(F()),
              S(F(0, 3)), S(F(4, 7, domain="ties"), label="ties"),
              S(F(4, 7, domain="ties"), 0, True, label="ties_descending"),
              S(F(2, 3, 4), dim=-2, stable=True)], errors=[S(F(3), 1)])
both("argsort", [S(F(3, 4)), S(F(3, 4), 0), S(F(3, 4), descending=True), S(F()), S(F(0, 2)),
                 S(F(4, 7, domain="ties"), label="ties"),
                 S(F(4, 7, domain="ties"), dim=-1, descending=True, label="ties_descending")],
     errors=[S(F(3), dim=1)])
both("topk", [S(F(3, 5, **D), 2), S(F(3, 5, **D), 3, 0), S(F(3, 5, **D), 2, largest=False),
              S(F(**D), 1), S(F(3, 0), 0), S(F(6, **D), 6), S(F(2, 5, **D), 1, dim=-1)],
     errors=[S(F(3), 4), S(F(3), 1, 1)])
both("kthvalue", [S(F(3, 5, **D), 2), S(F(3, 5, **D), 1, 0), S(F(3, 5, **D), 3, keepdim=True),
                  S(F(**D), 1), S(F(2, 5, **D), 5, -1)], errors=[S(F(3), 4), S(F(3), 1, 1)])
both("median", [S(F(3, 5, **D)), S(F(3, 4, **D)), S(F(3, 5, **D), 1), S(F(3, 4, **D), 0, True),
                S(F(**D)), S(F(**D), 0), S(F(2, 0))], errors=[S(F(3), 1)])
both("mode", [S(F(3, 5, **D)), S(F(4, 7, domain="ties"), label="ties"),
              S(F(4, 7, domain="ties"), 0, True, label="ties_dim0_keepdim"), S(F()),
              S(F(2, 3, 4, domain="ties"), dim=1)], errors=[S(F(3), 1), S(F(0))])
both("unique", [S(F(3, 4, domain="ties")), S(F(4, 7, domain="ties"), return_inverse=True),
                S(F(4, 7, domain="ties"), return_counts=True),
                S(F(6, domain="ties"), True, True, True), S(F()), S(F(0)),
                S(F(3, 4, domain="ties"), dim=1, return_counts=True)], grad=False)

# ---------------------------------------------------------------- joining and splitting

_JOIN = [S([F(2, 3), F(1, 3)]), S([F(2, 1), F(2, 3)], 1), S([F(2, 1), F(2, 3)], dim=-1),
         S([F(2, 3)]), S([F(0, 3), F(2, 3)]), S([F(0), F(2, 3)], label="legacy_empty_1d")]
_JOIN_ERR = [S([F(2, 3), F(3, 2)]), S([F(2, 3)], 2), S([F(), F()]), S([])]
for _n in ("cat", "concat"):
    row(f"dg.{_n}", lambda m, ts, *a, _n=_n, **k: getattr(m, _n)(ts, *a, **k), _JOIN, errors=_JOIN_ERR)
row("dg.concatenate", lambda m, ts, *a, **k: m.concatenate(ts, *a, **k),
    _JOIN[:4] + [S([F(2, 1), F(2, 3)], axis=1)] + _JOIN[4:] + [S([I(2, 3), I(1, 3)]), S([B(2), B(3)], 0)],
    errors=_JOIN_ERR)
row("dg.stack", lambda m, ts, *a, **k: m.stack(ts, *a, **k),
    [S([F(2, 3), F(2, 3)]), S([F(2, 3)] * 3, 1), S([F(2, 3)] * 2, dim=-1), S([F(), F()]),
     S([F(0, 2), F(0, 2)], 2), S([F(2, 3), F(2, 3)], axis=2)],
    errors=[S([F(2), F(3)]), S([F(2)], 3), S([])])
both("split", [S(F(5, 3), 2), S(F(5, 3), [1, 4]), S(F(5, 3), 1, 1), S(F(5, 3), [2, 1], dim=-1),
               S(F(0, 3), 2), S(F(4), 4)], errors=[S(F(3), 1, 2), S(F(3), [1, 1])])
both("chunk", [S(F(5, 3), 2), S(F(5, 3), 3, 1), S(F(6), 4), S(F(0, 3), 3), S(F(2, 3), 1, -1)],
     errors=[S(F(3), 0), S(F(3), 2, 1)])
both("unbind", [S(F(3, 4)), S(F(3, 4), 1), S(F(2, 3, 4), -1), S(F(0, 2), 1)],
     errors=[S(F(3), 1), S(F())])
both("unflatten", [S(F(2, 6), 1, (3, 2)), S(F(2, 6), -1, (-1, 3)), S(F(6), 0, (1, 6, 1)),
                   S(F(0, 4), 1, (2, 2))], errors=[S(F(6), 0, (4, -1)), S(F(6), 1, (2, 3))])
for _n in ("movedim", "moveaxis"):
    both(_n, [S(F(2, 3, 4), 0, -1), S(F(2, 3, 4), (0, 1), (2, 0)), S(F(2, 3, 4), -1, 0),
              S(F(), 0, 0), S(F(0, 2), 0, 1)], errors=[S(F(3), 0, 1), S(F(2, 3), (0, 1), (0,))])
both("flip", [S(F(3, 4), (0,)), S(F(3, 4), (0, 1)), S(F(2, 3, 4), [-1]), S(F(), (0,)),
              S(F(0, 3), (1,))], errors=[S(F(3), (1,))])
row("Tensor.flip.varargs", lambda m, x: x.flip(0, 1), [S(F(3, 4))])
both("roll", [S(F(3, 4), 1), S(F(3, 4), -2, 1), S(F(3, 4), (1, 2), (0, 1)), S(F(5), 7, 0),
              S(F(), 1), S(F(0, 3), 1, 0)], errors=[S(F(3), 1, 1)])

# ---------------------------------------------------------------- triangles and diagonals

for _n in ("tril", "triu"):
    both(_n, [S(F(3, 4)), S(F(3, 4), 1), S(F(3, 4), -1), S(F(2, 3, 3)), S(F(0, 3)),
              S(F(4, 3), diagonal=5)], errors=[S(F(3))])
both("diag", [S(F(3)), S(F(3), 1), S(F(3), -2), S(F(3, 4)), S(F(3, 4), 1), S(F(4, 3), -1),
              S(F(0))], errors=[S(F(2, 2, 2)), S(F())])
both("diagonal", [S(F(3, 4)), S(F(3, 4), 1), S(F(2, 3, 4), 0, 1, 2), S(F(2, 3, 4), -1, -1, 0),
                  S(F(3, 4), offset=5), S(F(0, 3))], errors=[S(F(3, 3), 0, 0, 0), S(F(3, 3), 0, 0, 2)])
both("diag_embed", [S(F(3)), S(F(2, 3)), S(F(2, 3), 1), S(F(2, 3), -1, 0, 2), S(F(0)),
                    S(F(2, 3), offset=0, dim1=0, dim2=-1)], errors=[S(F(2), 0, 0, 0)])
both("trace", [S(F(3, 3)), S(F(3, 4)), S(F(0, 0))], errors=[S(F(3)), S(F(2, 2, 2))])

# ---------------------------------------------------------------- gather and scatter

both("gather", [S(F(3, 4), 1, I(3, 2, high=4)), S(F(3, 4), 0, I(2, 4, high=3)),
                S(F(3, 4), -1, I(2, 2, high=4), label="index_smaller"),
                S(F(3, 4), 1, I(3, 0)), S(F(), 0, I(high=1))],
     errors=[S(F(3, 4), 1, I(3, 5, low=-4, high=0), label="negative_index"),
             S(F(3, 4), 1, I(3, 2, low=4, high=5)), S(F(3, 4), 2, I(3, 2, high=3)),
             S(F(3, 4), 1, I(3, high=3))])
both("scatter_add", [S(F(3, 4), 1, I(3, 4, high=4), F(3, 4)), S(F(3, 4), 0, I(2, 4, high=3), F(2, 4)),
                     S(F(), 0, I(high=1), F()), S(F(3), 0, I(0), F(0))],
     errors=[S(F(3, 4), 1, I(3, 2, low=4, high=5), F(3, 2)), S(F(3, 4), 2, I(3, 2, high=3), F(3, 2))])
row("dg.scatter_add.src_larger", lambda m, *a: m.scatter_add(*a),
    [S(F(3, 4), 1, I(2, 2, high=4), F(3, 5))], grad=False,
    note="torch's own backward fails on a src larger than index; forward values only")
both("scatter", [S(F(3, 4), 1, I(3, 1, high=4), F(3, 1)),
                 S(F(2, 5), 1, I(2, 1, high=5), 2.5),
                 S(F(2, 5), 1, I(2, 1, high=5), value=-1.0),
                 S(F(), 0, I(high=1), F())],
     errors=[S(F(3, 4), 1, I(3, 1, low=4, high=5), F(3, 1))])
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        _dom = "distinct" if _red in ("amax", "amin") else "real"
        row(f"dg.scatter_reduce.{_red}" + ("" if _inc else ".exclude_self"),
            lambda m, x, d, i, s, _r=_red, _i=_inc: m.scatter_reduce(x, d, i, s, _r, include_self=_i),
            [S(F(3, 4, domain=_dom), 1, I(3, 6, high=4), F(3, 6, domain=_dom)),
             S(F(5, domain=_dom), 0, I(8, high=3), F(8, domain=_dom), label="repeats"),
             S(F(2, 3, domain=_dom), 0, I(2, 3, high=2), F(2, 3, domain=_dom))])
both("scatter_reduce", [S(F(5), 0, I(8, high=3), F(8), "sum"),
                        S(Z(5), 0, I(8, high=3), Z(8), "prod", label="prod_with_zeros"),
                        S(F(4, **D), 0, I(6, high=4), F(6, **D), "amax", include_self=False),
                        S(F(4, domain="ties"), 0, I(6, high=4), F(6, domain="ties"), "amin",
                          label="amin_ties"),
                        S(F(4), 0, I(6, high=4), F(6), "mean")],
     errors=[S(F(4), 0, I(6, high=4), F(6), "median"), S(F(4), 0, I(6, low=4, high=6), F(6), "sum")])
both("index_select", [S(F(3, 4), 0, I(5, high=3)), S(F(3, 4), -1, I(2, high=4)),
                      S(F(3, 4), 1, I(0)), S(F(), 0, I(1, high=1))],
     errors=[S(F(3), 0, I(2, low=3, high=4)), S(F(3, 4), 2, I(2, high=3))])
both("index_add", [S(F(5, 3), 0, I(4, high=5), F(4, 3)), S(F(3, 4), 1, I(6, high=4), F(3, 6)),
                   S(F(3, 4), 1, I(2, high=4), F(3, 2), alpha=2.5), S(F(3, 4), 0, I(0), F(0, 4))],
     errors=[S(F(3), 0, I(2, low=3, high=4), F(2))])
both("take_along_dim", [S(F(3, 4), I(3, 2, high=4), 1), S(F(3, 4), I(5, high=12)),
                        S(F(3, 4), I(2, 1, high=3), 0, label="broadcast"),
                        S(F(3, 1), I(3, 5, high=1), -1, label="broadcast_input")],
     errors=[S(F(3), I(2, low=3, high=4)), S(F(3, 4), I(3, 2, high=4), 2)])

# ---------------------------------------------------------------- masks and selection

both("masked_fill", [S(F(3, 4), B(3, 4), 0.5), S(F(3, 4), B(4), -1.0), S(F(3, 4), B(3, 1), F()),
                     S(F(), B(), 2.0), S(F(0, 3), B(3), 1.0),
                     S(F(3), B(2, 3), 1.0, label="mask_broadcasts_input")],
     errors=[S(F(3), B(2), 1.0)])
both("masked_select", [S(F(3, 4), B(3, 4)), S(F(3, 4), B(4)), S(F(4), B(3, 4)), S(F(), B()),
                       S(F(0, 3), B(3))], errors=[S(F(3), B(2))])
both("nonzero", [S(Z(3, 4)), S(Z(5)), S(Z()), S(F(0, 3)), S(B(2, 3)),
                 S(Z(3, 4), as_tuple=True), S(Z(), as_tuple=True)], grad=False)
row("dg.where", lambda m, c, *a: m.where(c, *a),
    [S(B(3, 4), F(3, 4), F(3, 4)), S(B(3, 4), F(4), 0.0, label="scalar_other"),
     S(B(3, 1), 1.5, F(4), label="scalar_input"), S(B(3), 1.0, 0.0, label="two_scalars"),
     S(B(), F(), F(2)), S(B(2, 3), label="one_argument"), S(Z(3, 4), label="one_argument_float"),
     S(B(0, 3), F(3), F(0, 1)), S(B(3, 4), I(4), I(3, 1))],
    errors=[S(B(2), F(3), F(3))])
row("Tensor.where", lambda m, x, c, y: x.where(c, y),
    [S(F(3, 4), B(3, 4), F(4)), S(F(3), B(3), 0.0), S(F(), B(2, 3), F(3)), S(F(0, 3), B(3), F(3)),
     S(I(3, 4), B(4), I(3, 1))], errors=[S(F(3), B(2), F(3))])
both("repeat_interleave", [S(F(3), 2), S(F(2, 3), 2, 1), S(F(2, 3), I(2, high=3), 0),
                           S(F(2, 3), 3, -1), S(F(), 3), S(F(0, 2), 2, 0)],
     errors=[S(F(2, 3), I(3, high=2), 0)])
row("dg.meshgrid", lambda m, *ts, **k: m.meshgrid(*ts, **k),
    [S(F(2), F(3), indexing="ij"), S(F(2), F(3), F(4), indexing="xy"), S(F(2), F(3), indexing="xy"),
     S(F(), F(3), indexing="ij"), S(F(0), F(2), indexing="ij")],
    errors=[S(F(2, 2), F(3), indexing="ij")])
row("Tensor.unfold", lambda m, x, *a: x.unfold(*a),
    [S(F(7), 0, 2, 1), S(F(7), 0, 3, 2), S(F(3, 8), 1, 4, 4), S(F(3, 8), -2, 2, 1), S(F(), 0, 1, 1),
     S(F(5, 2), 0, 5, 1)], errors=[S(F(3), 0, 4, 1), S(F(3), 1, 1, 1)])

# ---------------------------------------------------------------- creation

row("dg.eye", lambda m, *a: m.eye(*a), [S(3), S(2, 4), S(0)], errors=[S(-1)])
row("dg.full", lambda m, *a: m.full(*a), [S((2, 3), 1.5), S((2,), 7), S((2, 2), True), S((), 0.5),
                                          S((0, 3), 2.0)], errors=[S((2,), "a")])
row("dg.full_like", lambda m, x, v: m.full_like(x, v), [S(F(2, 3), 4.0), S(F(), 1), S(F(0), 2.0)])
row("dg.empty", lambda m, *a: m.zeros_like(m.empty(*a)), [S(2, 3), S((4,)), S(0)],
    note="torch leaves the values undefined; the row compares shape and dtype (values zeroed)")
row("dg.empty_like", lambda m, x: m.zeros_like(m.empty_like(x)), [S(F(2, 3)), S(F())],
    note="torch leaves the values undefined; the row compares shape and dtype (values zeroed)")
for _n in ("tril_indices", "triu_indices"):
    row(f"dg.{_n}", lambda m, *a, _n=_n, **k: getattr(m, _n)(*a, **k),
        [S(3, 3), S(4, 3, 1), S(3, 5, -1), S(0, 2), S(3, 3, offset=-5)])
