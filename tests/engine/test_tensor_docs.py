"""docs/api.md and docs/adding-an-op.md name only what exists.

Every ``dg.name`` and every ``module.name`` of duograd that docs/api.md mentions must be
importable, every Tensor method of its operations table must be a Tensor attribute, and
every ops.py / specs.py name that the guide to adding an op relies on must exist.
"""

from __future__ import annotations

import importlib
import os
import re

import pytest

import duograd as dg
import specs

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "docs")


def read(name: str) -> str:
    with open(os.path.join(DOCS, name), encoding="utf-8") as f:
        return f.read()


API = read("api.md")
GUIDE = read("adding-an-op.md")


@pytest.mark.parametrize("name", sorted(set(re.findall(r"\bdg\.([A-Za-z_]\w*)", API))))
def test_every_dg_name_exists(name):
    assert hasattr(dg, name), f"docs/api.md names dg.{name}, which duograd does not have"


@pytest.mark.parametrize("dotted", sorted(set(re.findall(r"`(duograd(?:\.\w+)+)", API))))
def test_every_module_name_exists(dotted):
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return
    raise AssertionError(dotted)


def _table_methods() -> set[str]:
    """The method names in the 'Tensor methods and operators' column of the table."""
    names: set[str] = set()
    for line in API.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip() in ("arithmetic", "elementwise", "reductions",
                                                   "along one axis", "shape", "never differentiated"):
            for code in re.findall(r"`([^`]*)`", cells[2]):
                names.update(re.findall(r"(?:^|\s|\.)([a-z_]\w*)(?=\(|\s|$)", code))
    return names - {"axis", "keepdims", "lo", "hi", "ddof", "shape", "axes", "flag"}


def test_table_lists_real_tensor_methods():
    methods = _table_methods()
    assert {"softplus", "cumsum", "argmax", "logsumexp", "flatten"} <= methods
    missing = sorted(m for m in methods if not hasattr(dg.Tensor, m))
    assert not missing, f"docs/api.md lists Tensor methods that do not exist: {missing}"


@pytest.mark.parametrize("name", ["ELEMENTWISE", "LINEAR", "Primitive", "Variadic", "greater_p",
                                  "where_p", "sum_p", "softplus_p", "cumsum_p", "dim_index"])
def test_guide_names_exist_in_ops(name):
    from duograd import ops
    assert name in GUIDE and hasattr(ops, name)


@pytest.mark.parametrize("name", ["OP_SPECS", "BINARY_OPS", "AXIS_OPS", "SELECTOR_SPECS", "BinaryOp",
                                  "AxisOp", "_row", "REAL", "POSITIVE", "NONZERO", "DISTINCT", "CLIP"])
def test_guide_names_exist_in_specs(name):
    assert name in GUIDE and hasattr(specs, name)
