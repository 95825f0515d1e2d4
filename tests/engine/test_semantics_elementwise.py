"""Semantics of the elementwise family, the activations and linear algebra that the op table
and the conformance table do not reach: large inputs where a naive formula overflows, the
gradients torch has none for, second derivatives of einsum against torch, modules' state.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg
from duograd import nn
from duograd.nn import functional as F


def _grad(f, x):
    x = dg.tensor(x, requires_grad=True)
    (g,) = dg.grad(f(x).sum(), x)
    return g.numpy()


def test_activations_stay_finite_for_large_inputs():
    """The branches a where() discards never overflow, so no nan leaks into the gradient."""
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    for f in (F.elu, F.selu, F.celu, F.silu, F.mish, F.logsigmoid, F.softplus, F.gelu,
              lambda t: F.gelu(t, approximate="tanh"), lambda t: F.softplus(t, beta=3.0, threshold=5.0)):
        g = _grad(f, x)
        assert np.all(np.isfinite(g)), f
    np.testing.assert_allclose(F.logsigmoid(dg.tensor([-1000.0])).numpy(), [-1000.0])


def test_remainder_by_a_tensor_differentiates_the_divisor():
    """torch has no derivative for number % tensor; here d(c % y)/dy = -floor(c / y),
    checked against central differences."""
    y = np.array([0.7, 1.9, -0.45])
    g = _grad(lambda t: 1.3 % t, y)
    h = 1e-6
    fd = (np.remainder(1.3, y + h) - np.remainder(1.3, y - h)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    np.testing.assert_array_equal(g, -np.floor(1.3 / y))


def test_floor_divide_has_no_history():
    x = dg.tensor([5.0, -3.0, 2.5], requires_grad=True)
    out = x // 2.0
    np.testing.assert_array_equal(out.numpy(), [2.0, -2.0, 1.0])
    assert not out.requires_grad
    np.testing.assert_array_equal((7.0 // dg.tensor([2.0, -2.0])).numpy(), [3.0, -4.0])


def test_rounding_keeps_a_zero_gradient_through_second_order():
    x = dg.tensor([0.3, 1.5, -2.5], requires_grad=True)
    for f in (dg.floor, dg.ceil, dg.trunc, dg.sign, lambda t: dg.round(t, decimals=1)):
        (g,) = dg.grad(f(x).sum(), x, create_graph=True)
        np.testing.assert_array_equal(g.numpy(), 0.0)


def test_round_halves_to_even_like_torch(torch):
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.25, 0.35])
    np.testing.assert_array_equal(dg.round(dg.tensor(v)).numpy(), torch.round(torch.tensor(v)).numpy())
    np.testing.assert_array_equal(dg.round(dg.tensor(v), decimals=1).numpy(),
                                  torch.round(torch.tensor(v), decimals=1).numpy())


def test_norms_at_zero_have_torch_gradients(torch):
    for ord_ in (2, 3, 1.5, 1, math.inf):
        x = dg.tensor(np.zeros(4), requires_grad=True)
        t = torch.zeros(4, dtype=torch.float64, requires_grad=True)
        dg.linalg.vector_norm(x, ord_).backward()
        torch.linalg.vector_norm(t, ord_).backward()
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy(), err_msg=str(ord_))


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("iij->j", [(2, 2, 3)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij->", [(3, 4)]), ("bi,bi->b", [(1, 3), (4, 3)]),
])
def test_einsum_second_derivative_matches_torch(torch, eq, shapes):
    """grad of <grad, w> through the einsum VJP (itself an einsum): torch agrees."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [dg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = dg.einsum(eq, *xs)
    t_out = torch.einsum(eq, *ts)
    u = rng.standard_normal(out.shape)
    gs = dg.grad(out, xs, grad_outputs=dg.tensor(u), create_graph=True)
    t_gs = torch.autograd.grad(t_out, ts, grad_outputs=torch.from_numpy(u), create_graph=True)
    ws = [rng.standard_normal(a.shape) for a in arrays]
    live = [(g, w) for g, w in zip(gs, ws) if g.requires_grad]
    t_live = [(g, w) for g, w in zip(t_gs, ws) if g.requires_grad]
    second, t_second = [None] * len(xs), [None] * len(ts)
    if live:  # a linear einsum (one operand) has a constant gradient: nothing to differentiate
        second = dg.grad(sum((g * w).sum() for g, w in live), xs, allow_unused=True)
    if t_live:
        t_second = torch.autograd.grad(sum((g * torch.from_numpy(w)).sum() for g, w in t_live), ts,
                                       allow_unused=True)
    for s, ts_ in zip(second, t_second):
        a = np.zeros(()) if s is None else s.numpy()
        b = np.zeros(()) if ts_ is None else ts_.numpy()
        np.testing.assert_allclose(a + 0 * b, b + 0 * a, rtol=1e-12, atol=1e-12)


def test_einsum_is_checked_against_finite_differences_with_jvp():
    x = dg.tensor(np.random.default_rng(1).standard_normal((3, 3, 2)), requires_grad=True)
    assert dg.gradcheck(lambda t: dg.einsum("iij->ji", t), (x,))
    assert dg.gradgradcheck(lambda t: dg.einsum("ij,jk->ik", t[0], t[1].T), (x,))


def test_prelu_module_learns_its_weight_and_appears_in_state_dict():
    m = nn.PReLU(3, init=0.1)
    assert [k for k, _ in m.named_parameters()] == ["weight"] if hasattr(m, "named_parameters") else True
    assert list(m.state_dict()) == ["weight"]
    x = dg.tensor(-np.ones((2, 3, 4)))
    m(x).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.numpy(), [-8.0, -8.0, -8.0])


def test_inplace_activations_say_so():
    with pytest.raises(NotImplementedError, match="inplace"):
        F.relu6(dg.ones(2), inplace=True)
    with pytest.raises(NotImplementedError, match="inplace"):
        nn.ELU(inplace=True)


def test_module_reprs_show_their_arguments():
    assert "negative_slope=0.2" in repr(nn.LeakyReLU(0.2))
    assert "approximate='tanh'" in repr(nn.GELU(approximate="tanh"))


def test_bitwise_ops_on_floats_name_the_op():
    with pytest.raises(NotImplementedError, match=r"bitwise_and.*\(3,\)"):
        dg.ones(3) & dg.ones(3)


def test_erf_keeps_float32():
    x = dg.tensor(np.array([0.1, -0.5], dtype=np.float32), requires_grad=True)
    y = dg.erfinv(dg.erf(x))
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), 1.0, rtol=1e-5)


def test_nuclear_and_spectral_norms_are_not_here():
    with pytest.raises(NotImplementedError, match="singular values"):
        dg.linalg.matrix_norm(dg.ones((2, 2)), "nuc")
    with pytest.raises(NotImplementedError, match="singular values"):
        dg.ones((2, 2)).norm(p="nuc")


def test_api_table_rows_of_this_family_name_real_methods():
    """The rows docs/api.md gained for these families list only methods a Tensor has."""
    import os
    import re
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "docs", "api.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    families = ("trigonometric, hyperbolic", "exponential, logarithmic, special", "rounding, remainders",
                "two inputs", "tests, logic (bool, no history)", "linear algebra", "activations")
    names: set[str] = set()
    for line in lines:
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip() in families:
            for code in re.findall(r"`([^`]*)`", cells[2]):
                names.update(re.findall(r"(?:^|\s|\.|/)([a-z_]\w*)(?=\(|\s|/|$)", code))
    names -= {"y", "end", "weight", "decimals", "rtol", "atol", "equal_nan", "p", "dim", "keepdim",
              "and", "or", "xor"}  # the tail of logical_not/and/or/xor
    names |= {f"logical_{n}" for n in ("not", "and", "or", "xor")}
    assert {"atan2", "erfinv", "fmod", "lerp", "isclose", "mm", "norm", "prelu"} <= names
    missing = sorted(n for n in names if not hasattr(dg.Tensor, n))
    assert not missing, missing
