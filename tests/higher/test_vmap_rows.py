"""``func.vmap`` of every op row of ``tests/specs.py`` (OP_SPECS) against a Python loop.

For each row the batch of 3 examples is laid out along in_dim 0, 1 and -1 for every
argument, each argument in turn is shared (in_dim None) while the others are mapped, and
the row is vmapped twice (nested, a 2 x 3 batch). The truth is the row's own function on
one example at a time, stacked: bit for bit where the batched computation is the same
arithmetic, to 1e-12 where a batched product or sum adds in another order. A row that
takes the loop fallback must match too (its warning is silenced here and checked in
test_vmap.py).
"""

from __future__ import annotations

import warnings
from operator import attrgetter

import numpy as np
import pytest

import duograd as dg
from duograd import batching, func
from specs import OP_SPECS, make_inputs

B = 3


def _examples(spec, k):
    """``k`` independent draws of the row's inputs (one list of arrays per example)."""
    return [make_inputs(spec, seed=s) for s in range(k)]


def _np(t):
    return t.detach().numpy() if isinstance(t, dg.Tensor) else np.asarray(t)


def _one(spec, arrays):
    return _np(spec.fn(*[dg.tensor(a) for a in arrays]))


def _same(got, want, name):
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)
    return np.array_equal(got, want, equal_nan=True)


def _layouts(spec):
    """(in_dims, label) to try: every argument along 0, 1 and -1, then each shared."""
    n = spec.arity
    ranks = [len(s) for s in spec.shapes]
    out = [((0,) * n, "0"), ((-1,) * n, "-1")]
    if all(r >= 1 for r in ranks):
        out.append(((1,) * n, "1"))
    if n > 1:
        for i in range(n):
            out.append((tuple(None if j == i else 0 for j in range(n)), f"None@{i}"))
    return out


def _stacked(ex, dims, i):
    """Argument ``i`` of the examples laid out along ``dims[i]`` (None: example 0's)."""
    d = dims[i]
    if d is None:
        return ex[0][i]
    return np.stack([e[i] for e in ex], axis=d % (ex[0][i].ndim + 1))


# rows whose function reads a batched tensor's values (so vmap raises, as documented in
# docs/api.md's differences table): none may silently compute garbage
READS_VALUES: set[str] = set()

# rows that may differ in the last bits (held to 1e-12): a sum over several axes or a
# product's inner sum, whose NumPy summation order depends on the batched array's layout
MAY_ROUND = ("sum(", "mean(", "logsumexp(", "var(", "matmul.", "mv", "dot", "linear.", "einsum[",
             "conv", "vector_norm")


def _run(spec):
    ex = _examples(spec, B)
    inexact = []
    for dims, label in _layouts(spec):
        args = [dg.tensor(_stacked(ex, dims, i)) for i in range(spec.arity)]
        want = np.stack([_one(spec, [e[i] if dims[i] is not None else ex[0][i]
                                     for i in range(spec.arity)]) for e in ex])
        got = _np(func.vmap(spec.fn, in_dims=dims)(*args))
        if not _same(got, want, f"{spec.name} in_dims={label}"):
            inexact.append(label)
    # nested: a 2 x 3 batch, the outer vmap over dim 0, the inner over dim 0 of what is left
    ex2 = [_examples(spec, B)] + [[make_inputs(spec, seed=10 + s) for s in range(B)]]
    args = [dg.tensor(np.stack([np.stack([e[i] for e in row]) for row in ex2]))
            for i in range(spec.arity)]
    want = np.stack([np.stack([_one(spec, e) for e in row]) for row in ex2])
    got = _np(func.vmap(func.vmap(spec.fn))(*args))
    if not _same(got, want, f"{spec.name} nested"):
        inexact.append("nested")
    return inexact


@pytest.mark.parametrize("spec", OP_SPECS, ids=attrgetter("name"))
def test_vmap_of_the_row_matches_a_loop(spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            inexact = _run(spec)
        except batching.ValueAccessError:
            assert spec.name in READS_VALUES, f"{spec.name}: vmap read a batched value"
            return
    assert spec.name not in READS_VALUES
    assert not inexact or spec.name.startswith(MAY_ROUND), \
        f"{spec.name}: not bit for bit for in_dims {inexact}"


# ---------------------------------------------------------------- the conformance rows

def _conformance_rows():
    import opinfo
    opinfo.load_all()
    return opinfo


# rows whose function needs what a vmapped function cannot be: a backward of its own result
# (the rows' inputs do not require grad here), or a module built inside (a random init)
NOT_PER_EXAMPLE = {"Tensor.backward", "Tensor.grad", "Tensor.register_hook", "Tensor.retain_grad",
                   "nn.Linear"}


def test_vmap_of_every_conformance_row_matches_a_loop_or_refuses():
    """The samples of every conformance row (tests/conformance/rows_*.py) with its float
    arguments mapped (a batch of 3 along dim 0; the other arguments shared): the result
    equals the loop to 1e-12, or vmap refuses with ``ValueAccessError`` (a row whose code
    reads a batched tensor's values: an in-place write, a batched index, ...). Never a
    wrong value, never another error. (The rows whose loop itself cannot run, or whose
    result is not a Tensor, are skipped.)"""
    c = _conformance_rows()
    counts = {"match": 0, "refused": 0}
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # each row as written (one ``row(...)`` call; the spec samples are vmapped above)
        rows: dict = {}
        for r in c.OPS:
            for s in r.samples:
                if not s.spec:
                    rows.setdefault((r.name, s.origin), []).append(s)
        for (name, _), samples in rows.items():
            if samples[0].setting("compare") == "shape" or name in NOT_PER_EXAMPLE:
                continue
            for si, s in enumerate(samples[:4]):  # (the first four: a few seconds in all)
                mapped = [i for i, a in enumerate(s.args) if isinstance(a, c.Arg) and a.kind == "float"]
                if not mapped:
                    continue
                exs = [c.build_args(s, dg, c.seed_for(name, 100 + b), np.float64, False)[:2]
                       for b in range(B)]
                base, kw = exs[0]

                def f(*m, base=base, kw=kw, s=s, mapped=mapped):
                    args = list(base)
                    for i, v in zip(mapped, m):
                        args[i] = v
                    return s.call(dg, *args, **kw)
                try:
                    want = [f(*[ex[0][i] for i in mapped]) for ex in exs]
                    if not all(isinstance(w, dg.Tensor) for w in want):
                        continue
                    want = np.stack([_np(w) for w in want])
                except Exception:  # noqa: BLE001 - the row's error samples live elsewhere
                    continue
                stacked = [dg.tensor(np.stack([_np(ex[0][i]) for ex in exs])) for i in mapped]
                try:
                    got = _np(func.vmap(f)(*stacked))
                except batching.ValueAccessError:
                    counts["refused"] += 1
                    continue
                except Exception as e:  # noqa: BLE001 - reported below
                    wrong.append(f"{name}[{si}]: {type(e).__name__}: {e}"[:300])
                    continue
                if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(
                        got, want, rtol=1e-12, atol=1e-12, equal_nan=True):
                    wrong.append(f"{name}[{si}]: {got.shape} {got.dtype} against the loop's "
                                 f"{want.shape} {want.dtype}")
                    continue
                counts["match"] += 1
    assert not wrong, "\n".join(wrong)
    assert counts["match"] > 2000, counts
