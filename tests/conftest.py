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


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch intra-op thread for a module of tiny tensors: threads only add
    spin-waiting (several times slower on a busy machine). Restored afterwards."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
