"""Rows for the shapes branch: reductions, scans and sorting (duograd/reductions.py), shape and
indexing (duograd/indexing.py) and creation (duograd/creation.py).

Samples reach the edges: 0-d, empty, broadcast, negative dims, ties for the sorting ops
(torch's stable order), zeros for prod/cumprod, int64 index tensors and bool masks; the error
samples are torch's misuse cases (an index out of range, a dim out of range).
"""

from __future__ import annotations

import numpy as np
import duograd as dg
from opinfo import (DISTINCT, INTEGER, REAL, B, F, I, S, row, selector_row as _selector,
                    spec_row as _row)

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


# ====================================================================== gradient-check variants (OP_SPECS)
# OP_SPECS rows for the shapes branch: reductions, scans and sorting (duograd/reductions.py),
# shape and indexing (duograd/indexing.py).
#
# Each row is the operation three times (duograd, a NumPy definition, torch), so gradcheck,
# gradgradcheck, the JVP checks, float32, the replay and the torch oracle all cover it. An op
# that returns several tensors is checked through one of them (a sort's values, a split's
# pieces joined back in another order). Index arrays are constants of the row (int64).
# (spec_row / selector_row: each joins the entry of its public name, opinfo.spec_entry_name)
R3 = (2, 3, 4)

# ---------------------------------------------------------------- shape
_row("reshape", lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6),
     lambda torch, x: x.reshape(4, 6), (R3,))
_row("reshape.tuple_with_minus_one", lambda x: x.reshape((-1, 2)), lambda x: x.reshape(-1, 2),
     lambda torch, x: x.reshape(-1, 2), (R3,))
_row("reshape.to_0d", lambda x: x.reshape(()), lambda x: x.reshape(()),
     lambda torch, x: x.reshape(()), ((1, 1),))
_row("transpose.numpy_no_axes", lambda x: np.transpose(x), lambda x: x.transpose(),
     lambda torch, x: x.permute(2, 1, 0), (R3,))
_row("transpose.dims", lambda x: x.transpose(0, 1), lambda x: x.swapaxes(0, 1),
     lambda torch, x: x.transpose(0, 1), (R3,))
_row("permute.axes_tuple", lambda x: x.permute((2, 0, 1)), lambda x: x.transpose(2, 0, 1),
     lambda torch, x: x.permute(2, 0, 1), (R3,))
_row("permute.negative_axes", lambda x: x.permute(-1, 0, -2), lambda x: x.transpose(-1, 0, -2),
     lambda torch, x: x.permute(-1, 0, -2), (R3,))
_row("T.matrix", lambda x: x.T, lambda x: x.T, lambda torch, x: x.T, ((3, 4),))
_row("T.rank3", lambda x: x.T, lambda x: x.T, lambda torch, x: x.permute(2, 1, 0), (R3,))
for src, dst in (((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), (2, 3)), ((2, 1, 3), (2, 4, 3))):
    _row(f"broadcast_to{src}->{dst}", lambda x, s=dst: x.broadcast_to(s),
         lambda x, s=dst: np.broadcast_to(x, s), lambda torch, x, s=dst: x.expand(*s), (src,))
for shape, axis in (((2, 1, 3), 1), ((2, 3, 1), -1), ((2, 1, 3, 1), None), ((1, 3, 1), (0, 2))):
    _row(f"squeeze(axis={axis})", lambda x, a=axis: x.squeeze(a), lambda x, a=axis: np.squeeze(x, a),
         (lambda torch, x, a=axis: x.squeeze() if a is None else x.squeeze(a)), (shape,))
for axis in (0, 1, -1, -3):
    _row(f"unsqueeze(axis={axis})", lambda x, a=axis: x.unsqueeze(a),
         lambda x, a=axis: np.expand_dims(x, a), lambda torch, x, a=axis: x.unsqueeze(a),
         ((2, 3),))
_row("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), lambda torch, x: x.flatten(), (R3,))


# ---------------------------------------------------------------- indexing
def _torch_index(torch, index: object) -> object:
    """The same index for torch: NumPy arrays become torch tensors."""
    parts = index if isinstance(index, tuple) else (index,)
    conv = tuple(torch.from_numpy(np.asarray(p)) if isinstance(p, (np.ndarray, list)) else p
                 for p in parts)
    return conv if isinstance(index, tuple) else conv[0]


_MASK_34 = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
INDICES = [
    # (label, shape, index)
    ("int", R3, 1),
    ("negative_int", R3, -1),
    ("int_pair", R3, (1, 2)),
    ("every_axis_int", R3, (1, 2, 3)),
    ("slice", R3, slice(0, 1)),
    ("slices_with_steps", R3, (slice(None), slice(None, None, 2), slice(1, None))),
    ("None", R3, (None, 1)),
    ("Ellipsis", R3, (Ellipsis, 1)),
    ("Ellipsis_None_slice", R3, (Ellipsis, None, slice(1, 3))),
    ("int_array_repeats", (3, 4), np.array([0, 2, 0, 0])),
    ("list_repeats", (3, 4), [1, 1]),
    ("int_array_2d", (3, 4), np.array([[0, 1], [1, 0], [2, 2]])),
    ("negative_int_array", (3, 4), np.array([-1, 0, -1])),
    ("paired_int_arrays", (3, 4), (np.array([0, 1, 1, 1]), np.array([2, 2, 0, 2]))),
    ("bool_mask_full", (3, 4), _MASK_34),
    ("bool_mask_leading", R3, np.array([True, False])),
    ("mixed_slice_int_array", (3, 4), (slice(1, None), np.array([0, 2, 2]))),
    ("mixed_arrays_split_by_slice", R3, (np.array([0, 1]), slice(None), np.array([3, 3]))),
    ("mixed_Ellipsis_bool", R3, (Ellipsis, np.array([True, False, True, True]))),
]
for label, shape, index in INDICES:
    _row(f"getitem.{label}", lambda x, i=index: x[i], lambda x, i=index: x[i],
         lambda torch, x, i=index: x[_torch_index(torch, i)], (shape,))
# torch selects with the int first, so the array's axis stays in place: shape (2, 3).
# (NumPy counts the int as an advanced index separated from the array by a slice and would
# put that axis first: (3, 2).) The NumPy reference spells torch's order out.
_row("getitem.mixed_int_slice_array", lambda x: x[1, :2, np.array([0, 0, 3])],
     lambda x: x[1][:2, np.array([0, 0, 3])],
     lambda torch, x: x[1, :2, torch.tensor([0, 0, 3])], (R3,))
_row("getitem.negative_step", lambda x: x[::-1, 1:], lambda x: x[::-1, 1:],
     # torch has no negative steps; flipping is the same selection
     lambda torch, x: x.flip(0)[:, 1:], ((3, 4),))

# ---------------------------------------------------------------- joining
for shapes, axis in ((((2, 3), (1, 3), (3, 3)), 0), (((2, 1), (2, 3)), -1), (((2, 1, 4), (2, 3, 4)), 1)):
    _row(f"concatenate(axis={axis}){shapes}", lambda *xs, a=axis: dg.concatenate(xs, axis=a),
         lambda *xs, a=axis: np.concatenate(xs, axis=a),
         lambda torch, *xs, a=axis: torch.cat(xs, dim=a), shapes)
for n, axis in ((2, 0), (3, 1), (2, -1), (2, -2)):
    _row(f"stack(axis={axis})x{n}", lambda *xs, a=axis: dg.stack(xs, axis=a),
         lambda *xs, a=axis: np.stack(xs, axis=a),
         lambda torch, *xs, a=axis: torch.stack(xs, dim=a), ((2, 3),) * n)

# ---------------------------------------------------------------- matmul
MATMULS = [
    ("vec@vec", (3,), (3,)),
    ("vec@mat", (3,), (3, 4)),
    ("mat@vec", (2, 3), (3,)),
    ("vec@batched", (3,), (2, 3, 4)),
    ("batched@vec", (2, 2, 3), (3,)),
    ("mat@mat", (2, 3), (3, 4)),
    ("batched@batched", (2, 2, 3), (2, 3, 4)),
    ("mat@batched", (2, 3), (2, 3, 4)),
    ("batched@mat", (2, 2, 3), (3, 4)),
    ("broadcast_batch_dims", (2, 1, 2, 3), (3, 3, 2)),
]
for label, sx, sy in MATMULS:
    _row(f"matmul.{label}", lambda x, y: x @ y, np.matmul, lambda torch, x, y: x @ y, (sx, sy))
_row("matmul.function", lambda x, y: dg.matmul(x, y), np.matmul, lambda torch, x, y: torch.matmul(x, y),
     ((2, 3), (3, 2)))



def _t(torch, a):
    return torch.from_numpy(np.asarray(a))

# ---------------------------------------------------------------- reductions and scans

_row("prod(dim=None)", lambda x: x.prod(), np.prod, lambda torch, x: x.prod(), ((3, 4),))
_row("prod(dim=1)", lambda x: x.prod(1), lambda x: np.prod(x, 1), lambda torch, x: x.prod(1), (R3,))
_row("prod(dim=0, keepdim=True)", lambda x: dg.prod(x, 0, True), lambda x: np.prod(x, 0, keepdims=True),
     lambda torch, x: torch.prod(x, 0, True), (R3,))
# {-1, 0, 1} inputs: rows with one zero and with several (the gradient without division).
_row("prod.with_zeros", lambda x: x.prod(-1), lambda x: np.prod(x, -1), lambda torch, x: x.prod(-1),
     ((6, 5),), (INTEGER,))
_row("prod.of_0d", lambda x: x.prod(), lambda x: x, lambda torch, x: x.prod(), ((),))
_row("cumprod(dim=1)", lambda x: x.cumprod(1), lambda x: np.cumprod(x, 1),
     lambda torch, x: x.cumprod(1), (R3,))
_row("cumprod(dim=-3)", lambda x: dg.cumprod(x, -3), lambda x: np.cumprod(x, 0),
     lambda torch, x: torch.cumprod(x, -3), (R3,))
_row("cumprod.with_zeros", lambda x: x.cumprod(-1), lambda x: np.cumprod(x, -1),
     lambda torch, x: x.cumprod(-1), ((5, 5),), (INTEGER,))
# torch's own logcumsumexp gives nan in its double backward (which torch.autograd.functional.jvp
# uses), so the oracle is its definition in torch; the conformance row calls it directly.
_row("logcumsumexp(dim=1)", lambda x: x.logcumsumexp(1), lambda x: np.log(np.cumsum(np.exp(x), 1)),
     lambda torch, x: x.exp().cumsum(1).log(), (R3,))
_row("logcumsumexp(dim=0)", lambda x: dg.logcumsumexp(x, 0),
     lambda x: np.log(np.cumsum(np.exp(x), 0)), lambda torch, x: x.exp().cumsum(0).log(), ((4, 3),))

def _np_cum(x, axis, fn):
    return fn.accumulate(x, axis=axis)

_row("cummax.values", lambda x: x.cummax(1).values, lambda x: _np_cum(x, 1, np.maximum),
     lambda torch, x: x.cummax(1).values, (R3,), (DISTINCT,))
_row("cummin.values", lambda x: dg.cummin(x, -1).values, lambda x: _np_cum(x, -1, np.minimum),
     lambda torch, x: torch.cummin(x, -1).values, (R3,), (DISTINCT,))
_row("sort.values", lambda x: x.sort().values, lambda x: np.sort(x, -1),
     lambda torch, x: x.sort().values, (R3,), (DISTINCT,))
_row("sort.descending_dim0", lambda x: dg.sort(x, 0, descending=True).values,
     lambda x: -np.sort(-x, 0), lambda torch, x: torch.sort(x, 0, descending=True).values, (R3,),
     (DISTINCT,))
_row("topk.values", lambda x: x.topk(2).values, lambda x: -np.sort(-x, -1)[..., :2],
     lambda torch, x: x.topk(2).values, (R3,), (DISTINCT,))
_row("topk.smallest_dim1", lambda x: dg.topk(x, 2, 1, largest=False).values,
     lambda x: np.sort(x, 1)[:, :2], lambda torch, x: torch.topk(x, 2, 1, largest=False).values,
     (R3,), (DISTINCT,))
_row("kthvalue.values", lambda x: x.kthvalue(2, 1).values, lambda x: np.sort(x, 1)[:, 1],
     lambda torch, x: x.kthvalue(2, 1).values, (R3,), (DISTINCT,))
_row("median.all", lambda x: x.median(), lambda x: np.sort(x.ravel())[(x.size - 1) // 2],
     lambda torch, x: x.median(), ((3, 4),), (DISTINCT,))
_row("median(dim=-1, keepdim=True).values", lambda x: x.median(-1, True).values,
     lambda x: np.sort(x, -1)[..., 1:2], lambda torch, x: x.median(-1, True).values, (R3,), (DISTINCT,))
_row("mode.values", lambda x: x.mode(0).values, lambda x: np.min(x, 0),
     lambda torch, x: x.mode(0).values, (R3,), (DISTINCT,))

# ---------------------------------------------------------------- joining and splitting

_row("cat(dim=1)", lambda x, y: dg.cat([x, y], dim=1), lambda x, y: np.concatenate([x, y], 1),
     lambda torch, x, y: torch.cat([x, y], dim=1), ((2, 1, 4), R3))
_row("stack(dim=-1)", lambda x, y: dg.stack([x, y], dim=-1), lambda x, y: np.stack([x, y], -1),
     lambda torch, x, y: torch.stack([x, y], dim=-1), ((3, 4), (3, 4)))
_row("split.sections_reversed", lambda x: dg.cat(x.split([1, 3], 2)[::-1], 2),
     lambda x: np.concatenate([x[..., 1:], x[..., :1]], 2),
     lambda torch, x: torch.cat(x.split([1, 3], 2)[::-1], 2), (R3,))
_row("chunk.last", lambda x: dg.chunk(x, 2, 1)[1], lambda x: x[:, 2:],
     lambda torch, x: torch.chunk(x, 2, 1)[1], (R3,))
_row("unbind.restacked", lambda x: dg.stack(x.unbind(1)[::-1], 0), lambda x: np.moveaxis(x[:, ::-1], 1, 0),
     lambda torch, x: torch.stack(x.unbind(1)[::-1], 0), (R3,))
_row("unflatten", lambda x: x.unflatten(-1, (2, -1)), lambda x: x.reshape(2, 3, 2, 2),
     lambda torch, x: x.unflatten(-1, (2, -1)), (R3,))
_row("movedim", lambda x: x.movedim((0, 1), (2, 0)), lambda x: np.moveaxis(x, (0, 1), (2, 0)),
     lambda torch, x: x.movedim((0, 1), (2, 0)), (R3,))
_row("flip(0, 2)", lambda x: x.flip(0, 2), lambda x: x[::-1, :, ::-1],
     lambda torch, x: x.flip(0, 2), (R3,))
_row("roll(shifts=(1, -2), dims=(0, 2))", lambda x: x.roll((1, -2), (0, 2)),
     lambda x: np.roll(x, (1, -2), (0, 2)), lambda torch, x: x.roll((1, -2), (0, 2)), (R3,))
_row("roll.flat", lambda x: dg.roll(x, 5), lambda x: np.roll(x, 5), lambda torch, x: torch.roll(x, 5),
     ((3, 4),))

# ---------------------------------------------------------------- triangles and diagonals

_row("tril(-1)", lambda x: x.tril(-1), lambda x: np.tril(x, -1), lambda torch, x: x.tril(-1), (R3,))
_row("triu(1)", lambda x: dg.triu(x, 1), lambda x: np.triu(x, 1), lambda torch, x: torch.triu(x, 1),
     ((4, 3),))
_row("diag.of_vector", lambda x: x.diag(1), lambda x: np.diag(x, 1), lambda torch, x: x.diag(1), ((3,),))
_row("diag.of_matrix", lambda x: dg.diag(x, -1), lambda x: np.diag(x, -1),
     lambda torch, x: torch.diag(x, -1), ((3, 4),))
_row("diagonal(offset=1, dim1=2, dim2=0)", lambda x: x.diagonal(1, 2, 0),
     lambda x: np.diagonal(x, 1, 2, 0), lambda torch, x: x.diagonal(1, 2, 0), (R3,))
_row("diag_embed", lambda x: x.diag_embed(-1, 0, 2),
     lambda x: _np_diag_embed(x), lambda torch, x: x.diag_embed(-1, 0, 2), ((2, 3),))
_row("trace", lambda x: x.trace(), np.trace, lambda torch, x: x.trace(), ((3, 4),))

def _np_diag_embed(x):
    # diag_embed(x, offset=-1, dim1=0, dim2=2) for a (2, 3) x: out[i, b, j] = x[b, j] where i = j + 1
    out = np.zeros((4, 2, 4), x.dtype)
    for b in range(2):
        for j in range(3):
            out[j + 1, b, j] = x[b, j]
    return out

# ---------------------------------------------------------------- gather and scatter

IDX_G = np.array([[0, 3], [2, 2], [1, 0]])                     # (3, 2), along dim 1 of (3, 4)
IDX_U = np.array([[0, 3], [2, 1], [1, 0]])                     # unique in each row
IDX_S = np.array([[0, 3, 3, 1], [2, 2, 0, 2], [1, 0, 1, 1]])   # (3, 4), repeats

def _np_gather(x, idx, axis):
    return np.take_along_axis(x[tuple(slice(0, n) for n in idx.shape[:axis])], idx, axis)

def _np_scatter_reduce(x, idx, src, fn, include_self, mean=False):
    out = x.copy()
    seen: dict = {}
    for i in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            seen.setdefault((i, idx[i, j]), []).append(src[i, j])
    for (i, k), vals in seen.items():
        vals = ([x[i, k]] if include_self else []) + vals
        out[i, k] = np.mean(vals) if mean else fn(vals)
    return out

_row("gather(dim=1)", lambda x: x.gather(1, IDX_G), lambda x: np.take_along_axis(x, IDX_G, 1),
     lambda torch, x: x.gather(1, _t(torch, IDX_G)), ((3, 4),))
_row("gather.index_smaller", lambda x: dg.gather(x, 0, IDX_G[:2]),
     lambda x: x[IDX_G[:2], np.arange(2)[None, :]],
     lambda torch, x: torch.gather(x, 0, _t(torch, IDX_G[:2])), ((4, 3),))
_row("scatter_add", lambda x, s: x.scatter_add(1, IDX_S, s),
     lambda x, s: _np_scatter_reduce(x, IDX_S, s, np.sum, True),
     lambda torch, x, s: x.scatter_add(1, _t(torch, IDX_S), s), ((3, 4), (3, 4)))
_row("scatter", lambda x, s: dg.scatter(x, 1, IDX_U, s),
     lambda x, s: _np_scatter_reduce(x, IDX_U, s, lambda v: v[-1], False),
     lambda torch, x, s: torch.scatter(x, 1, _t(torch, IDX_U), s), ((3, 4), (3, 2)))
for _red, _fn in (("sum", np.sum), ("prod", np.prod), ("mean", None), ("amax", np.max), ("amin", np.min)):
    for _inc in (True, False):
        _row(f"scatter_reduce.{_red}" + ("" if _inc else ".exclude_self"),
             lambda x, s, r=_red, i=_inc: x.scatter_reduce(1, IDX_S, s, r, include_self=i),
             lambda x, s, f=_fn, r=_red, i=_inc: _np_scatter_reduce(x, IDX_S, s, f, i, mean=r == "mean"),
             lambda torch, x, s, r=_red, i=_inc: x.scatter_reduce(1, _t(torch, IDX_S), s, r, include_self=i),
             ((3, 4), (3, 4)), (DISTINCT, DISTINCT) if _red in ("amax", "amin") else (REAL, REAL))
_row("index_select", lambda x: x.index_select(2, np.array([3, 0, 3])), lambda x: x[:, :, [3, 0, 3]],
     lambda torch, x: x.index_select(2, _t(torch, [3, 0, 3])), (R3,))
_row("index_add", lambda x, s: dg.index_add(x, 0, np.array([2, 0, 2]), s, alpha=1.5),
     lambda x, s: x + 1.5 * np.stack([s[1], np.zeros(4, s.dtype), s[0] + s[2]]),
     lambda torch, x, s: torch.index_add(x, 0, _t(torch, [2, 0, 2]), s, alpha=1.5), ((3, 4), (3, 4)))
_row("take_along_dim.broadcast", lambda x: x.take_along_dim(IDX_G[:, None, :], 2),
     lambda x: np.take_along_axis(x, np.broadcast_to(IDX_G[:, None, :], (3, 2, 2)), 2),
     lambda torch, x: x.take_along_dim(_t(torch, IDX_G[:, None, :]), 2), ((3, 2, 4),))
_row("take_along_dim.flat", lambda x: dg.take_along_dim(x, np.array([11, 0, 5])),
     lambda x: x.ravel()[[11, 0, 5]], lambda torch, x: torch.take_along_dim(x, _t(torch, [11, 0, 5])),
     ((3, 4),))

# ---------------------------------------------------------------- masks and selection

MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
_row("masked_fill.number", lambda x: x.masked_fill(MASK, 0.5), lambda x: np.where(MASK, 0.5, x),
     lambda torch, x: x.masked_fill(_t(torch, MASK), 0.5), ((3, 4),))
_row("masked_fill.0d_value", lambda x, v: dg.masked_fill(x, MASK[0], v), lambda x, v: np.where(MASK[0], v, x),
     lambda torch, x, v: torch.masked_fill(x, _t(torch, MASK[0]), v), ((3, 4), ()))
_row("masked_select", lambda x: x.masked_select(MASK[1]), lambda x: x[:, MASK[1]].ravel(),
     lambda torch, x: x.masked_select(_t(torch, MASK[1])), ((3, 4),))
_row("where.scalar_other", lambda x: dg.where(MASK, x, 0.0), lambda x: np.where(MASK, x, 0.0),
     lambda torch, x: torch.where(_t(torch, MASK), x, 0.0), ((3, 4),))
_row("repeat_interleave", lambda x: x.repeat_interleave(np.array([1, 0, 3]), 0),
     lambda x: np.repeat(x, [1, 0, 3], 0), lambda torch, x: x.repeat_interleave(_t(torch, [1, 0, 3]), 0),
     ((3, 4),))
_row("repeat_interleave.flat", lambda x: dg.repeat_interleave(x, 2), lambda x: np.repeat(x, 2),
     lambda torch, x: torch.repeat_interleave(x, 2), ((2, 3),))
_row("meshgrid.xy_product", lambda x, y: (lambda g: g[0] * g[1])(dg.meshgrid(x, y, indexing="xy")),
     lambda x, y: (lambda g: g[0] * g[1])(np.meshgrid(x, y, indexing="xy")),
     lambda torch, x, y: (lambda g: g[0] * g[1])(torch.meshgrid(x, y, indexing="xy")), ((3,), (4,)))
_row("unfold", lambda x: x.unfold(1, 3, 2), lambda x: np.stack([x[:, 0:3], x[:, 2:5], x[:, 4:7]], 1),
     lambda torch, x: x.unfold(1, 3, 2), ((2, 7),))
_row("unfold.middle_dim", lambda x: x.unfold(1, 2, 1),
     lambda x: np.moveaxis(np.stack([x[:, 0:2], x[:, 1:3]], 1), 2, -1),
     lambda torch, x: x.unfold(1, 2, 1), (R3,))

# ---------------------------------------------------------------- never differentiated
# Selectors: values against NumPy and torch exactly, no history, and the replay
# (test_tensor_selectors.py). INTEGER inputs hold ties: torch's stable order. (all/any
# reduce, which that file's bool checks do not expect; their rows are in the conformance table.)
_selector("argsort(dim=-1).ties", lambda x: x.argsort(), lambda x: np.argsort(x, -1, kind="stable"),
          lambda torch, x: x.argsort(stable=True), (R3,), (INTEGER,))
_selector("argsort(dim=0, descending=True).ties", lambda x: dg.argsort(x, 0, descending=True),
          lambda x: np.argsort(-x, 0, kind="stable"),
          lambda torch, x: torch.argsort(x, dim=0, descending=True, stable=True), (R3,), (INTEGER,))
