"""PyTorch's beginner path ("Learning PyTorch with Examples"), run with torch and with duograd.

Each program in examples/pytorch_path_*.py is written against torch. It runs twice: as
written, and with its ``import torch`` line replaced by ``import duograd as torch`` (the
only change). The data are deterministic (``linspace``), the starts fixed and Python's
``random`` seeded, so the two runs take the same path: their final coefficients agree to
round-off. torch computes in float32 where the programs ask for ``torch.float`` or leave
the default; duograd in float64 where its default applies (a documented difference), hence
the tolerance.

The programs that use RMSprop or Adam end with coefficients that orbit zero at the scale of
the learning rate (1e-3) where the answer is zero (the even powers), and which side of zero
they end on depends on the round-off of the dtype, so those runs also allow an absolute
difference of twice the learning rate.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from twins import run_example




def run(name: str, lib: str) -> dict:
    """Run examples/pytorch_path_<name>.py with torch or duograd; return its globals."""
    random.seed(12345)  # (the programs seed what they draw; this only isolates the test)
    return run_example(f"pytorch_path_{name}", lib, module="__main__")


PROGRAMS = ("tensors", "autograd", "function", "nn", "dynamic")
OPTIMIZED = {"nn"}  # programs whose coefficients orbit the optimum at the learning rate's scale


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_with_torch_and_with_duograd_alike(name: str) -> None:
    pytest.importorskip("torch")
    ref = run(name, "torch")
    expected = np.array(ref["coefficients"])
    assert np.all(np.isfinite(expected))
    got = run(name, "duograd")
    atol = 2e-3 if name in OPTIMIZED else 1e-5
    np.testing.assert_allclose(np.array(got["coefficients"]), expected, rtol=1e-3, atol=atol)
    if "final_loss" in ref:
        assert math.isclose(got["final_loss"], ref["final_loss"], rel_tol=1e-3)


def test_the_fit_approaches_the_least_squares_cubic() -> None:
    """An independent truth for the first program: gradient descent heads toward the
    closed-form least-squares cubic (the odd coefficients within 5%, the even ones ~0)."""
    pytest.importorskip("torch")
    x = np.linspace(-math.pi, math.pi, 2000)
    A = np.stack([x ** 0, x, x ** 2, x ** 3], axis=1)
    best = np.linalg.lstsq(A, np.sin(x), rcond=None)[0]
    got = np.array(run("tensors", "torch")["coefficients"])
    np.testing.assert_allclose(got[[1, 3]], best[[1, 3]], rtol=0.05)
    assert np.all(np.abs(got[[0, 2]]) < 1e-3)
