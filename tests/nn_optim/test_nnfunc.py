"""The random functions of ``nn.functional`` added for issue 28, against torch 2.13 where
the draws differ by design (another generator): dropout, dropout1d/2d/3d, alpha_dropout,
feature_alpha_dropout, gumbel_softmax and rrelu in training. Checked: the identity when not
training or p = 0, the structure of the mask (whole channels), the scale of the kept values,
the statistics over many draws against torch's, the gradient (the mask times the scale),
and torch's error kinds."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd.nn import functional as F

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _seed(one_torch_thread):
    dg.manual_seed(0)


@pytest.mark.parametrize("name,shape,d", [("dropout", (40, 50), 0), ("dropout1d", (8, 30, 5), 1),
                                          ("dropout2d", (8, 30, 2, 3), 2),
                                          ("dropout3d", (4, 30, 2, 2, 2), 3)])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_masks_scale_and_statistics(torch, name, shape, d, p):
    x = dg.ones(shape, requires_grad=True)
    y = getattr(F, name)(x, p)
    ty = getattr(torch.nn.functional, name)(torch.ones(shape), p)
    v, tv = y.detach().numpy(), ty.numpy()
    assert set(np.unique(v)) <= {0.0, 1 / (1 - p)} and set(np.unique(tv)) <= {0.0, 1 / (1 - p)}
    if d:  # whole channels: constant over the last d axes
        axes = tuple(range(v.ndim - d, v.ndim))
        assert np.all(v.min(axis=axes) == v.max(axis=axes))
    kept, tkept = (v > 0).mean(), (tv > 0).mean()
    n = v.size if not d else int(np.prod(shape[:len(shape) - d]))
    assert abs(kept - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    assert abs(tkept - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), v)  # the gradient is the mask times the scale


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_identity_when_not_training_or_p_zero_and_zero_at_p_one(torch, name):
    shape = (2, 3, 4, 2, 2) if name == "dropout3d" else (2, 3, 4)
    x = dg.randn(*shape)
    tx = torch.tensor(x.numpy())
    for kw in (dict(training=False), dict(p=0.0, training=True)):
        y, ty = getattr(F, name)(x, **kw), getattr(torch.nn.functional, name)(tx, **kw)
        np.testing.assert_array_equal(y.numpy(), ty.numpy())
    y = getattr(F, name)(x, 1.0, True)
    ty = getattr(torch.nn.functional, name)(tx, 1.0, True)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d", "alpha_dropout"])
@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_bad_p_raises_as_torch(torch, name, p):
    shape = (2, 3, 4)
    with pytest.raises(ValueError):
        getattr(torch.nn.functional, name)(torch.ones(shape), p, True)
    with pytest.raises(ValueError):
        getattr(F, name)(dg.ones(shape), p, True)


def test_dropout1d_rejects_other_ranks_as_torch(torch):
    with pytest.raises(RuntimeError):
        torch.nn.functional.dropout1d(torch.ones(2, 3, 4, 5))
    with pytest.raises(RuntimeError):
        F.dropout1d(dg.ones((2, 3, 4, 5)))


@pytest.mark.parametrize("name,shape", [("alpha_dropout", (200, 100)), ("feature_alpha_dropout", (400, 50, 2))])
def test_alpha_dropout_keeps_selu_statistics_as_torch(torch, name, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    y = getattr(F, name)(dg.tensor(x), 0.3, True).numpy()
    ty = getattr(torch.nn.functional, name)(torch.tensor(x), 0.3, True).numpy()
    for v in (y, ty):
        assert abs(v.mean()) < 0.03 and abs(v.std() - 1) < 0.03
    # the two values a dropped element can take agree (the affine map is torch's)
    assert np.isclose(np.min(y), np.min(ty)) or np.intersect1d(np.round(y, 12), np.round(ty, 12)).size


def test_alpha_dropout_dropped_value_is_torchs(torch):
    x = np.zeros(10000)
    y, ty = F.alpha_dropout(dg.tensor(x), 0.4, True).numpy(), torch.nn.functional.alpha_dropout(
        torch.tensor(x), 0.4, True).numpy()
    np.testing.assert_allclose(np.unique(y), np.unique(ty), rtol=1e-14)


def test_gumbel_softmax_soft_and_hard(torch):
    logits = dg.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(axis=1), 1.0, rtol=1e-12)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and np.all(h.sum(axis=1) == 1)
    freq = h.mean(axis=0)
    np.testing.assert_allclose(freq, [0.7, 0.2, 0.1], atol=0.03)  # a sample of the categorical
    th = torch.nn.functional.gumbel_softmax(torch.log(torch.tensor([[0.7, 0.2, 0.1]] * 4000)), hard=True)
    np.testing.assert_allclose(th.numpy().mean(axis=0), [0.7, 0.2, 0.1], atol=0.03)


def test_gumbel_softmax_hard_gradient_is_the_soft_samples(torch):
    """Straight-through: hard = onehot - soft.detach() + soft, so d(hard)/d(logits) is the
    soft sample's Jacobian (checked through the soft sample drawn with the same noise)."""
    x = dg.tensor([[0.3, -0.2, 0.5]], requires_grad=True)
    dg.manual_seed(5)
    soft = F.gumbel_softmax(x, tau=0.7)
    w = dg.tensor([[1.0, 2.0, -1.0]])
    (g_soft,) = dg.grad((soft * w).sum(), [x])
    dg.manual_seed(5)
    hard = F.gumbel_softmax(x, tau=0.7, hard=True)
    (g_hard,) = dg.grad((hard * w).sum(), [x])
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), rtol=1e-12)
    assert hard.detach().numpy()[0, np.argmax(soft.detach().numpy())] == 1.0


def test_rrelu_training_slopes_lie_in_the_range(torch):
    x = -dg.ones(5000)
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    ty = torch.nn.functional.rrelu(-torch.ones(5000), 0.1, 0.3, training=True).numpy()
    for v in (y, ty):
        assert np.all((-v >= 0.1) & (-v <= 0.3)) and abs(-v.mean() - 0.2) < 0.01
    np.testing.assert_array_equal(F.rrelu(dg.ones(3), training=True).numpy(), np.ones(3))


def test_inplace_dropout_writes_the_input():
    x = dg.ones(1000) * 1.0
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x and set(np.unique(x.numpy())) == {0.0, 2.0}


def test_dropout2d_reads_a_3d_input_as_n_c_l_as_torch(torch):
    with pytest.warns(UserWarning):
        y = F.dropout2d(dg.ones((50, 40, 3)), 0.5).numpy()
    assert np.all(y.min(axis=2) == y.max(axis=2))
    assert not np.all(y.min(axis=(1, 2)) == y.max(axis=(1, 2)))  # (not whole samples)
