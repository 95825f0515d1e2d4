"""The one row type keeps every sample the two old tables had.

``tests/opinfo_counts.json`` was written from main before OP_SPECS and the conformance rows
became one table of ``OpInfo`` entries (tests/opinfo.py): for each public name the number of
samples and error samples its conformance rows had, and every OpSpec name. Each name must
still have at least as many of each, and every spec name must still be a spec sample.
"""

from __future__ import annotations

import json
import os

import opinfo

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "opinfo_counts.json")) as _f:
    OLD = json.load(_f)


def _table() -> dict:
    opinfo.load_all()
    return opinfo.OPS_BY_NAME


def test_every_name_keeps_its_samples_and_error_samples() -> None:
    ops = _table()
    lost = []
    for name, (n_samples, n_errors) in OLD["rows"].items():
        info = ops.get(name)
        have = (0, 0) if info is None else (sum(not s.spec for s in info.samples), len(info.errors))
        if have[0] < n_samples or have[1] < n_errors:
            lost.append(f"{name}: {have} where main had ({n_samples}, {n_errors})")
    assert not lost, "\n".join(lost)


def test_every_spec_is_still_a_spec_sample() -> None:
    ops = _table()
    specs = {s.spec: s for info in ops.values() for s in info.samples if s.spec}
    differentiable = {n for n, s in specs.items() if s.setting("grad")}
    assert not set(OLD["op_specs"]) - differentiable
    assert not set(OLD["selector_specs"]) - (set(specs) - differentiable)


def test_one_entry_per_name_and_one_row_type() -> None:
    ops = _table()
    assert len(ops) == len(opinfo.OPS) == len({i.name for i in opinfo.OPS})
    assert all(type(i) is opinfo.OpInfo for i in opinfo.OPS)
    assert all(type(s) is opinfo.Sample and s.info is i for i in opinfo.OPS for s in i.samples + i.errors)


def test_the_totals_do_not_drop() -> None:
    ops = _table()
    old_samples = sum(n for n, _ in OLD["rows"].values()) + len(OLD["op_specs"]) + len(OLD["selector_specs"])
    old_errors = sum(e for _, e in OLD["rows"].values())
    assert sum(len(i.samples) for i in ops.values()) >= old_samples
    assert sum(len(i.errors) for i in ops.values()) >= old_errors


# The elementwise, reduction and shape families: each of these entries samples a 0-d and an
# empty input (as a sample or, where torch refuses it, as an error sample) and an integer or
# bool one; the ones with a dim argument also a negative dim.
EDGES = {
    "elementwise": ["Tensor.exp", "Tensor.log", "Tensor.sqrt", "Tensor.tanh", "Tensor.sigmoid",
                    "Tensor.sin", "Tensor.cos", "Tensor.abs", "Tensor.relu", "Tensor.__neg__",
                    "dg.exp", "dg.log", "dg.sqrt", "dg.relu", "Tensor.__mul__", "dg.maximum",
                    "dg.minimum", "Tensor.maximum", "Tensor.minimum", "dg.where", "Tensor.where",
                    "dg.clip"],
    "reduction": ["Tensor.sum", "dg.sum", "Tensor.cumsum", "dg.cumsum", "dg.amax", "dg.amin",
                  "Tensor.mean", "dg.mean", "Tensor.var", "dg.var", "Tensor.std", "dg.std",
                  "Tensor.logsumexp", "dg.logsumexp", "Tensor.softmax", "dg.softmax",
                  "F.log_softmax"],
    "shape": ["Tensor.reshape", "dg.reshape", "Tensor.transpose", "Tensor.permute",
              "Tensor.squeeze", "dg.squeeze", "Tensor.unsqueeze", "dg.unsqueeze", "dg.flatten",
              "Tensor.broadcast_to", "dg.broadcast_to", "dg.concatenate", "Tensor.__matmul__"],
}
NO_INT = {"Tensor.mean", "dg.mean", "Tensor.var", "dg.var", "Tensor.std", "dg.std", "Tensor.logsumexp",
          "dg.logsumexp", "Tensor.softmax", "dg.softmax", "F.log_softmax"}  # float-only in torch
NO_DIM = {"Tensor.broadcast_to", "dg.broadcast_to", "Tensor.__matmul__"}


def _flags(samples) -> set:
    found = set()
    for s in samples:
        arrays = s._arrays()
        if any(a.shape == () for a in arrays):
            found.add("0-d")
        if any(0 in a.shape or any(0 in v for v in s.args if isinstance(v, tuple)
                                   and all(isinstance(n, int) for n in v)) for a in arrays):
            found.add("empty")
        if any(a.kind != "float" for a in arrays):
            found.add("int/bool")
        if any(isinstance(v, int) and not isinstance(v, bool) and v < 0 for v in
               list(s.args) + list(s.kwargs.values()) + [n for v in s.args if isinstance(v, tuple) for n in v]):
            found.add("negative dim")
    return found


def test_the_core_families_sample_the_edges() -> None:
    ops = _table()
    lacking = []
    for family, names in EDGES.items():
        for name in names:
            info = ops[name]
            have = _flags(info.samples) | (_flags(info.errors) & {"0-d", "empty"})
            want = {"0-d", "empty"} | ({"int/bool"} if name not in NO_INT else set()) \
                | ({"negative dim"} if family != "elementwise" and name not in NO_DIM else set())
            if want - have:
                lacking.append(f"{family} {name}: no {sorted(want - have)} sample")
    assert not lacking, "\n".join(lacking)
