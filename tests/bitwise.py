"""Bit-for-bit comparison, the check every dg.compile test makes against an eager twin."""

from __future__ import annotations

from typing import Any

import numpy as np

import duograd as dg


def as_numpy(v: Any) -> np.ndarray:
    """The values of a Tensor (without its graph) or of anything NumPy reads."""
    return v.detach().numpy() if isinstance(v, dg.Tensor) else np.asarray(v)


def same(a: Any, b: Any) -> None:
    """Assert that ``a`` and ``b`` hold the same bits: shape, dtype and every byte (so -0.0
    is not 0.0 and a nan matches only the same nan)."""
    a, b = as_numpy(a), as_numpy(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    assert a.tobytes() == b.tobytes(), (a, b)


def snapshot(model: Any, opt: Any) -> tuple:
    """Copies of what a training step changes: each parameter's values and ``.grad``, the
    optimizer's state (``state_dict()``'s arrays) and its groups' options."""
    params = [(p._data.copy(), None if p.grad is None else p.grad._data.copy())
              for p in model.parameters()]
    sd = opt.state_dict()
    state = {k: {n: as_numpy(v).copy() for n, v in s.items()} for k, s in sd["state"].items()}
    groups = [{k: v for k, v in g.items() if k != "params"} for g in sd["param_groups"]]
    return params, state, groups


def same_snapshot(a: tuple, b: tuple) -> None:
    """Assert that two ``snapshot``s hold the same bits (and the same Nones, keys, options)."""
    for (d1, g1), (d2, g2) in zip(a[0], b[0], strict=True):
        same(d1, d2)
        assert (g1 is None) == (g2 is None)
        if g1 is not None:
            same(g1, g2)
    assert a[1].keys() == b[1].keys()
    for k in a[1]:
        assert a[1][k].keys() == b[1][k].keys()
        for n in a[1][k]:
            same(a[1][k][n], b[1][k][n])
    assert a[2] == b[2]
