"""The spec samples of the op table (tests/opinfo.py): OP_SPECS, SELECTOR_SPECS and the
declared families, all views of ``opinfo.OPS``, with the helpers that draw a spec's inputs.

One spec sample per operation of docs/api.md (and per interesting variant: each
reduction for every kind of ``axis`` with ``keepdims`` both ways, every kind of index,
every 1-D matmul case). A spec sample is a ``Sample`` of its op's one ``OpInfo`` entry in
``opinfo.OPS``, written with the entry's other samples in tests/conformance/rows_*.py,
that holds the operation three times over -- on duograd Tensors, on NumPy arrays (the
independent reference) and on torch tensors (the oracle) -- with the input shapes and the
domain its random inputs are drawn from (``opinfo.draw``).
The domains keep finite differences honest: logs and square roots see positive
numbers, and piecewise-linear ops (relu, abs, clip, max, maximum, ...) see inputs
well away from their kinks and ties.

- ``OP_SPECS``: the differentiable spec samples, in the order they are written; they feed
  gradcheck, gradgradcheck, the JVPs, float32, the replay, vmap and the torch oracle.
- ``SELECTOR_SPECS``: the spec samples that are never differentiated (comparisons, argmax,
  argmin): forward, "no history" and torch checks, and the replay, in test_tensor_selectors.py.
- ``BINARY_OPS``, ``AXIS_OPS``, ``COMPARISONS``: the family declarations that entries hold
  (``OpInfo.family``; written in tests/conformance/rows_families.py, which says which tests
  read them), by name.

The conformance driver (tests/conformance/test_conformance.py) runs the same samples against
torch in float64 and float32. docs/adding-an-op.md says which checks pick a sample up.

>>> spec = SPECS_BY_NAME["mul.broadcast"]
>>> [a.shape for a in make_inputs(spec)]
[(3, 4), (4,)]
>>> BINARY_OPS["mul"].partials(np.array([2.0]), np.array([3.0]), None)
(array([3.]), array([2.]))
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, Sequence

import numpy as np

import duograd as dg
import opinfo
from opinfo import (CLIP, DISTINCT, DOMAINS, INTEGER, NONZERO, POSITIVE, REAL, Arg, AxisOp,  # noqa: F401
                    BinaryOp, Sample, condition)

Shape = tuple[int, ...]


def make_inputs(spec: Sample, seed: int = 0, dtype: Any = np.float64) -> list[np.ndarray]:
    """Random inputs for ``spec`` from its domains; the same seed gives the same arrays.

    The generator is seeded from the spec's name and ``seed``, so every spec gets its
    own numbers and a test that wants a second draw passes another seed.

    >>> spec = SPECS_BY_NAME["log"]
    >>> bool((make_inputs(spec, seed=3)[0] > 0).all())
    True
    """
    rng = np.random.default_rng([zlib.crc32(spec.name.encode()), seed])
    return opinfo.draw(spec.args, rng, dtype, joint=True)


def draw(shapes: Sequence[Shape], domains: Sequence[str], rng: np.random.Generator,
         dtype: Any = np.float64) -> list[np.ndarray]:
    """One float array per shape, each from its domain (one of ``DOMAINS``), DISTINCT ones
    from one pool (``opinfo.draw`` with ``joint=True``).

    >>> a, b = draw([(2,), (3,)], [DISTINCT, DISTINCT], np.random.default_rng(0))
    >>> len(set(a) | set(b))
    5
    """
    return opinfo.draw([Arg(tuple(s), "float", d) for s, d in zip(shapes, domains)], rng, dtype,
                       joint=True)


def make_tensors(spec: Sample, seed: int = 0, dtype: Any = np.float64,
                 requires_grad: bool = True) -> list[dg.Tensor]:
    """``make_inputs`` wrapped as duograd leaves.

    >>> [t.requires_grad for t in make_tensors(SPECS_BY_NAME["add"])]
    [True, True]
    """
    return [dg.tensor(a, requires_grad=requires_grad) for a in make_inputs(spec, seed, dtype)]


# A variant with its own three functions (fn on Tensors, a NumPy ref, torch_fn), and one never
# differentiated (SELECTOR_SPECS): tests/opinfo.py's spec_row and selector_row. The rows files
# write them (tests/conformance/rows_*.py); these are the names the docs use.
_row = opinfo.spec_row
_selector = opinfo.selector_row

opinfo.load_all()  # the entries written with their conformance samples (rows_*.py) hold spec samples too
OP_SPECS: list[Sample] = opinfo.spec_samples(differentiable=True)
SELECTOR_SPECS: list[Sample] = opinfo.spec_samples(differentiable=False)
SPECS_BY_NAME: dict[str, Sample] = {s.name: s for s in OP_SPECS}
# The declared families (tests/conformance/rows_families.py), views of the entries that hold them.
BINARY_OPS: dict[str, BinaryOp] = opinfo.families(BinaryOp)
AXIS_OPS: dict[str, AxisOp] = opinfo.families(AxisOp)
COMPARISONS: dict[str, tuple[Callable, Callable]] = {  # symbol: (duograd and torch, NumPy)
    c.name: (c.fn, c.ref) for c in opinfo.families(opinfo.Comparison).values()}
assert len(SPECS_BY_NAME) == len(OP_SPECS), "spec names must be unique: " + str(sorted(n for n in SPECS_BY_NAME if sum(s.name == n for s in OP_SPECS) > 1))
assert len({s.name for s in SELECTOR_SPECS}) == len(SELECTOR_SPECS), "selector names must be unique"
