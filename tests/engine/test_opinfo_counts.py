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
