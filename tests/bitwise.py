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
