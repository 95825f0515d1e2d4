"""Shared fixtures: the PyTorch oracle import and a seeded random generator."""

from __future__ import annotations

import numpy as np
import pytest

TORCH_MISSING = "PyTorch not installed: `pip install torch==2.13.0` (or `make test`) runs the oracle checks"


@pytest.fixture
def torch():
    """The PyTorch module, or a clean skip that says how to install it."""
    return pytest.importorskip("torch", reason=TORCH_MISSING)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
