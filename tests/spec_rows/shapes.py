"""OP_SPECS rows for the shapes branch: reductions, scans and sorting (duograd/reductions.py),
shape and indexing (duograd/indexing.py).

Each row is the operation three times (duograd, a NumPy definition, torch), so gradcheck,
gradgradcheck, the JVP checks, float32, the replay and the torch oracle all cover it. An op
that returns several tensors is checked through one of them (a sort's values, a split's
pieces joined back in another order). Index arrays are constants of the row (int64).
"""

from __future__ import annotations

import numpy as np

import duograd as dg
from specs import DISTINCT, INTEGER, POSITIVE, REAL, _row, _selector  # noqa: F401

R3 = (2, 3, 4)


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
    out = np.zeros((4, 2, 4))
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
     lambda x, s: x + 1.5 * np.stack([s[1], np.zeros(4), s[0] + s[2]]),
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
