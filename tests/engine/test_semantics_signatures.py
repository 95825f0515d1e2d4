"""The rows of issue 18's "Where we stand" table in the signatures' scope: each gave an
answer different from torch (or an error where torch works) and now gives torch's, checked
against torch 2.13 itself where it can be and against closed forms otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn

X = np.arange(12.0).reshape(3, 4) * 0.5 - 2.0


def test_transpose_of_a_matrix_swaps_its_two_dims(torch) -> None:
    x = dg.tensor(X)
    out = x.transpose(0, 1)
    assert out.shape == (4, 3)
    np.testing.assert_array_equal(out.detach().numpy(), torch.tensor(X).transpose(0, 1).detach().numpy())
    np.testing.assert_array_equal(dg.transpose(x, 1, 0).detach().numpy(), X.T)
    # NumPy's own function keeps NumPy's meaning through the dispatch
    np.testing.assert_array_equal(np.transpose(dg.tensor(np.ones((2, 3, 4))), (1, 0, 2)).shape, (3, 2, 4))


def test_max_with_dim_unpacks_to_values_and_indices(torch) -> None:
    x = dg.tensor(np.array([[1.0, 5.0], [7.0, 2.0]]))
    v, i = x.max(dim=1)
    tv, ti = torch.tensor(x.detach().numpy()).max(dim=1)
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(i.detach().numpy(), ti.detach().numpy())
    r = x.min(1)
    assert type(r).__name__ == "min" and r._fields == ("values", "indices")
    assert float(x.max()) == 7.0  # no dim: the value alone


def test_var_divides_by_n_minus_one(torch) -> None:
    x = dg.tensor(X)
    np.testing.assert_allclose(x.var(0).detach().numpy(), torch.tensor(X).var(0).detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(x.var(0).detach().numpy(), X.var(axis=0, ddof=1), rtol=1e-14)
    np.testing.assert_allclose(x.std(1, correction=0).detach().numpy(), X.std(axis=1), rtol=1e-14)
    np.testing.assert_allclose(float(np.var(x)), X.var(), rtol=1e-14)  # NumPy's meaning: ddof=0


@pytest.mark.parametrize("y", [-2.0, -0.5, 0.0, 0.5, 1.0, 3.0])
def test_pow_gradients_at_a_zero_base_match_torch(torch, y: float) -> None:
    x, e = dg.tensor(0.0, requires_grad=True), dg.tensor(y, requires_grad=True)
    gx, gy = dg.grad(x ** e, (x, e))
    tx = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    te = torch.tensor(y, dtype=torch.float64, requires_grad=True)
    tgx, tgy = torch.autograd.grad(tx ** te, (tx, te))
    assert np.array_equal(gx.detach().numpy(), tgx.detach().numpy(), equal_nan=True), (y, float(gx), float(tgx))
    assert np.array_equal(gy.detach().numpy(), tgy.detach().numpy(), equal_nan=True), (y, float(gy), float(tgy))
    if y < 0:
        assert float(gy) == -np.inf


def test_linear_loaded_from_a_torch_state_dict_by_hand_gives_torchs_output(torch) -> None:
    n = 4
    torch.manual_seed(0)
    tl = torch.nn.Linear(n, n, dtype=torch.float64)
    layer = nn.Linear(n, n, rng=1)
    with dg.no_grad():
        layer.weight.data = tl.weight.detach().numpy().copy()   # by hand, no conversion
        layer.bias.data = tl.bias.detach().numpy().copy()
    x = np.random.default_rng(0).standard_normal((3, n))
    np.testing.assert_allclose(layer(dg.tensor(x)).detach().numpy(), tl(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-13, atol=1e-15)
    other = nn.Linear(in_features=n, out_features=n, rng=2)
    other.load_state_dict(tl.state_dict())                      # a torch state_dict directly
    np.testing.assert_array_equal(other.weight.detach().numpy(), tl.weight.detach().numpy())
    assert layer.weight.shape == (n, n) and nn.Linear(3, 2).weight.shape == (2, 3)


def test_linear_default_initialisation_is_torchs_distribution() -> None:
    layer = nn.Linear(400, 300, rng=0)
    bound = 1.0 / np.sqrt(400)
    w = layer.weight.detach().numpy()
    assert w.shape == (300, 400) and np.abs(w).max() <= bound and np.abs(layer.bias.detach().numpy()).max() <= bound
    # a uniform on [-b, b] has variance b^2 / 3 (120,000 draws: well within 2%)
    assert abs(w.var() / (bound ** 2 / 3) - 1) < 0.02


def test_squeeze_of_a_dim_whose_size_is_not_one_leaves_it(torch) -> None:
    x = dg.ones((1, 3))
    assert x.squeeze(1).shape == tuple(torch.ones(1, 3).squeeze(1).shape) == (1, 3)
    assert x.squeeze(0).shape == (3,)
    assert dg.ones((2, 1, 3, 1)).squeeze((1, 2)).shape == (2, 3, 1)


def test_dim_zero_and_minus_one_on_a_0d_tensor(torch) -> None:
    x = dg.tensor(2.5, requires_grad=True)
    for d in (0, -1):
        assert x.sum(d).shape == () and float(x.mean(d)) == 2.5
        assert x.softmax(d).shape == () and x.cumsum(d).shape == ()
        v, i = x.max(d)
        assert float(v) == 2.5 and i.item() == 0
    with pytest.raises(IndexError):
        x.sum(1)


def test_size_is_a_method(torch) -> None:
    x = dg.ones((2, 3))
    assert x.size() == (2, 3) and x.size(-1) == 3 and x.numel() == 6 and x.dim() == 2
    assert tuple(x.size()) == tuple(torch.ones(2, 3).size())
    with pytest.raises(IndexError):
        x.size(2)


def test_flatten_from_a_start_dim(torch) -> None:
    x = dg.ones((2, 3, 4))
    assert x.flatten(1).shape == tuple(torch.ones(2, 3, 4).flatten(1).shape) == (2, 12)
    assert dg.flatten(x, 0, 1).shape == (6, 4) and dg.tensor(1.0).flatten().shape == (1,)


def test_pow_clamp_clone_view_permute_numel(torch) -> None:
    t = torch.tensor(X, requires_grad=True)
    x = dg.tensor(X, requires_grad=True)
    outs = [x.pow(2), x.clamp(min=-1.0, max=1.5), x.clone(), x.view(4, 3), x.view(-1),
            x.permute(1, 0), x.clip(max=0.0)]
    touts = [t.pow(2), t.clamp(min=-1.0, max=1.5), t.clone(), t.view(4, 3), t.view(-1),
             t.permute(1, 0), t.clip(max=0.0)]
    for o, to in zip(outs, touts):
        np.testing.assert_array_equal(o.detach().numpy(), to.detach().numpy())
    sum(o.sum() for o in outs).backward()
    sum(o.sum() for o in touts).backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), t.grad.detach().numpy(), rtol=1e-14)
    assert x.numel() == t.numel() == 12
    c = x.clone()
    assert c.detach().numpy() is not x.detach().numpy() and not np.shares_memory(c.detach().numpy(), x.detach().numpy())


def test_shape_errors_are_both_value_and_runtime_errors() -> None:
    with pytest.raises(RuntimeError):
        dg.ones(3) + dg.ones(4)
    with pytest.raises(ValueError):
        dg.ones(3) + dg.ones(4)
    with pytest.raises(dg.ShapeError):
        dg.ones((3, 4)).view(5, 2)
    with pytest.raises(IndexError):
        dg.ones((3, 4)).transpose(0, 2)
    with pytest.raises(ValueError):   # API.md section 6: an axis out of range is a ValueError too
        dg.ones((3, 4)).sum(2)
