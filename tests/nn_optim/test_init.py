"""``duograd.nn.init`` against its formulas (moments and bounds over 10^5 draws), torch's
``calculate_gain`` table and fan rule, exact ``eye_``/``dirac_``, ``orthogonal_``'s Q^T Q = I,
and the layers' default initialisation going through it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import nn
from duograd.nn import init

N = 100_000


def _gen(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _moments_ok(x: np.ndarray, mean: float, var: float) -> None:
    """Sample mean within 5 standard errors; sample variance within 5 standard errors of it
    (the variance of s^2 taken as 2 var^2 / n for a normal, 1.8 var^2 / n bounds the uniform's)."""
    n = x.size
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() - var) < 5 * math.sqrt(2 * var ** 2 / n), (x.var(), var)


def test_uniform_and_normal_moments_and_bounds():
    w = init.uniform_(dg.zeros(N), -3.0, 1.0, generator=_gen())
    x = w.detach().numpy()
    assert x.min() >= -3.0 and x.max() < 1.0
    _moments_ok(x, -1.0, 16 / 12)
    x = init.normal_(dg.zeros(N), 2.0, 0.5, generator=_gen()).detach().numpy()
    _moments_ok(x, 2.0, 0.25)


def test_trunc_normal_moments_and_bounds_both_samplers():
    from scipy import stats
    for mean, std, a, b in [(0.0, 1.0, -2.0, 2.0), (0.0, 1.0, 1.0, 3.0), (0.03, 0.02, -0.04, 0.04), (0.0, 1.0, -0.3, 0.3)]:
        x = init.trunc_normal_(dg.zeros(N), mean, std, a, b, generator=_gen()).detach().numpy()
        assert x.min() >= a and x.max() <= b
        d = stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
        _moments_ok(x, d.mean(), d.var())


def test_constant_ones_zeros_eye_dirac_exact():
    assert init.constant_(dg.zeros(2, 3), 0.5).tolist() == [[0.5] * 3] * 2
    assert init.ones_(dg.zeros(4)).tolist() == [1.0] * 4
    assert init.zeros_(dg.ones(4)).tolist() == [0.0] * 4
    np.testing.assert_array_equal(init.eye_(dg.ones(3, 5)).detach().numpy(), np.eye(3, 5))
    np.testing.assert_array_equal(init.eye_(dg.ones(4, 2)).detach().numpy(), np.eye(4, 2))


@pytest.mark.oracle
@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 4), 2), ((4, 4, 3, 3, 3), 2),
                                          ((2, 5, 5), 1)])
def test_dirac_matches_torch_exactly(torch, shape, groups):
    want = torch.nn.init.dirac_(torch.empty(shape, dtype=torch.float64), groups=groups).numpy()
    got = init.dirac_(dg.ones(shape), groups=groups).detach().numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.oracle
def test_calculate_gain_matches_torch_for_every_nonlinearity(torch):
    names = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]
    for name in names:
        assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name), name
    for param in [0, 0.2, 1, math.sqrt(5)]:
        assert init.calculate_gain("leaky_relu", param) == torch.nn.init.calculate_gain("leaky_relu", param)
    for bad in [("foo", None), ("leaky_relu", "x"), ("leaky_relu", True)]:
        with pytest.raises(ValueError) as want:
            torch.nn.init.calculate_gain(*bad)
        with pytest.raises(ValueError) as got:
            init.calculate_gain(*bad)
        assert str(got.value) == str(want.value)


@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(3, 5), (8, 3, 5), (4, 2, 3, 3), (2, 3, 1, 2, 2), (0, 3)])
def test_fans_match_torch(torch, shape):
    want = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(dg.zeros(shape)) == want


@pytest.mark.oracle
def test_fan_and_dimension_errors_as_torch(torch):
    cases = [("xavier_uniform_", (5,), {}), ("xavier_normal_", (), {}), ("kaiming_uniform_", (5,), {}),
             ("kaiming_normal_", (5,), {}), ("orthogonal_", (5,), {}), ("eye_", (2, 2, 2), {}),
             ("dirac_", (3, 3), {}), ("dirac_", (3, 2, 3), {"groups": 2}), ("sparse_", (3, 3, 3), {"sparsity": 0.1}),
             ("kaiming_uniform_", (3, 4), {"mode": "fan_avg"})]
    for name, shape, kw in cases:
        with pytest.raises(ValueError):
            getattr(torch.nn.init, name)(torch.empty(shape), **kw)
        w = dg.ones(shape)
        with pytest.raises(ValueError):
            getattr(init, name)(w, **kw)
        assert (w == 1).all().item(), f"{name} changed the tensor before raising"
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(dg.zeros(4))


def test_xavier_moments_and_bounds():
    fan_in, fan_out = 250, 150
    w = init.xavier_uniform_(dg.zeros(fan_out, fan_in), gain=2.0, generator=_gen())
    a = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    x = w.detach().numpy().ravel()
    assert np.abs(x).max() <= a
    _moments_ok(x, 0.0, a * a / 3)
    w = init.xavier_normal_(dg.zeros(50, 25, 2, 40), generator=_gen())
    fi, fo = 25 * 80, 50 * 80
    _moments_ok(w.detach().numpy().ravel(), 0.0, 2 / (fi + fo))


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity,a", [("leaky_relu", 0), ("relu", 0), ("leaky_relu", math.sqrt(5)),
                                            ("tanh", 0), ("linear", 0)])
def test_kaiming_moments_and_bounds(mode, nonlinearity, a):
    shape = (400, 250)
    fan = 250 if mode == "fan_in" else 400
    gain = init.calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    x = init.kaiming_uniform_(dg.zeros(shape), a=a, mode=mode, nonlinearity=nonlinearity,
                              generator=_gen()).detach().numpy().ravel()
    assert np.abs(x).max() <= math.sqrt(3) * std * (1 + 1e-15)
    _moments_ok(x, 0.0, std ** 2)
    x = init.kaiming_normal_(dg.zeros(shape), a=a, mode=mode, nonlinearity=nonlinearity,
                             generator=_gen(1)).detach().numpy().ravel()
    _moments_ok(x, 0.0, std ** 2)


@pytest.mark.parametrize("shape", [(6, 6), (3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    w = init.orthogonal_(dg.zeros(shape), gain=1.0, generator=_gen()).detach().numpy()
    q = w.reshape(shape[0], -1)
    small = min(q.shape)
    gram = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(small), rtol=0, atol=1e-12)
    w = init.orthogonal_(dg.zeros(5, 5), gain=3.0, generator=_gen()).detach().numpy()
    np.testing.assert_allclose(w.T @ w, 9 * np.eye(5), rtol=0, atol=1e-12)


def test_orthogonal_is_haar_distributed_first_entry_moments():
    # under the Haar measure on O(n) an entry has mean 0 and variance 1/n
    # (x^2 is Beta(1/2, 3/2) for n = 4: its standard deviation is 1/4)
    n, reps = 4, 4000
    g = _gen()
    x = np.array([init.orthogonal_(dg.zeros(n, n), generator=g).detach().numpy()[0, 0] for _ in range(reps)])
    assert abs(x.mean()) < 5 * math.sqrt(1 / n / reps)
    assert abs((x ** 2).mean() - 1 / n) < 5 * 0.25 / math.sqrt(reps)


def test_sparse_zeros_per_column_and_moments():
    rows, cols, sparsity, std = 100, 1000, 0.25, 0.3
    w = init.sparse_(dg.zeros(rows, cols), sparsity, std=std, generator=_gen()).detach().numpy()
    assert ((w == 0).sum(axis=0) == math.ceil(sparsity * rows)).all()
    _moments_ok(w[w != 0], 0.0, std ** 2)


def test_in_place_under_no_grad_returns_the_tensor_and_keeps_a_leaf():
    p = dg.zeros(3, 4, requires_grad=True)
    for fn in [init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.trunc_normal_, init.zeros_, init.eye_]:
        v = p._version
        assert fn(p) is p
        assert p.is_leaf and p.requires_grad and p._version == v + 1


def test_generator_reproduces_and_default_generator_is_used():
    a = init.normal_(dg.zeros(5), generator=_gen(3)).tolist()
    assert init.normal_(dg.zeros(5), generator=_gen(3)).tolist() == a
    dg.manual_seed(11)
    b = init.uniform_(dg.zeros(5)).tolist()
    dg.manual_seed(11)
    assert init.uniform_(dg.zeros(5)).tolist() == b


def test_float32_tensor_keeps_its_dtype():
    w = dg.zeros(3, 3, dtype=dg.float32)
    assert init.kaiming_uniform_(w, generator=_gen()).dtype == np.float32
    assert init.orthogonal_(w, generator=_gen()).dtype == np.float32


def test_integer_tensor_and_non_tensor_raise_and_change_nothing():
    w = dg.zeros(3, dtype=dg.int64)
    with pytest.raises(RuntimeError, match="normal_"):
        init.normal_(w)
    assert w.tolist() == [0, 0, 0]
    with pytest.raises(TypeError, match="uniform_"):
        init.uniform_(np.zeros(3))


def test_deprecated_aliases_warn_and_work():
    with pytest.warns(FutureWarning, match="nn.init.normal_"):
        w = init.normal(dg.zeros(3), generator=_gen())
    assert w.shape == (3,)
    for name in ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                 "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]:
        assert callable(getattr(init, name))


def test_zero_element_kaiming_warns_as_torch():
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(dg.zeros(0, 3))


def test_compile_replay_draws_anew():
    w = dg.zeros(4, 4)

    def step():
        init.normal_(w, generator=None)
        return w * 1.0

    f = dg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = f().detach().numpy().copy()
        b = f().detach().numpy().copy()
        c = f().detach().numpy().copy()
    assert not np.array_equal(b, c) and not np.array_equal(a, b)
    np.testing.assert_array_equal(c, w.detach().numpy())


def test_layers_default_init_goes_through_init_with_torch_distributions():
    gen = _gen(5)
    lin = nn.Linear(6, 4, rng=5)
    k = 1 / math.sqrt(6)
    np.testing.assert_array_equal(lin.weight.detach().numpy(), gen.uniform(-k, k, (4, 6)))
    np.testing.assert_array_equal(lin.bias.detach().numpy(), gen.uniform(-k, k, 4))
    conv = nn.Conv2d(4, 6, 3, groups=2, rng=1)
    k = 1 / math.sqrt(2 * 9)
    gen = _gen(1)
    np.testing.assert_array_equal(conv.weight.detach().numpy(), gen.uniform(-k, k, (6, 2, 3, 3)))
    np.testing.assert_array_equal(conv.bias.detach().numpy(), gen.uniform(-k, k, 6))
    emb = nn.Embedding(5, 3, padding_idx=2, rng=0)
    want = _gen(0).standard_normal((5, 3))
    want[2] = 0
    np.testing.assert_array_equal(emb.weight.detach().numpy(), want)
    mha = nn.MultiheadAttention(4, 2, rng=0)
    k = math.sqrt(6 / (4 + 12))
    np.testing.assert_array_equal(mha.in_proj_weight.detach().numpy(), _gen(0).uniform(-k, k, (12, 4)))
    assert not mha.in_proj_bias.detach().numpy().any() and not mha.out_proj.bias.detach().numpy().any()
    assert nn.PReLU(3, init=0.1).weight.tolist() == [0.1] * 3
    ln = nn.LayerNorm(3)
    assert ln.weight.tolist() == [1.0] * 3 and ln.bias.tolist() == [0.0] * 3


def test_reset_parameters_redraws_from_the_default_generator():
    lin = nn.Linear(3, 2, rng=0)
    dg.manual_seed(4)
    lin.reset_parameters()
    k = 1 / math.sqrt(3)
    g = np.random.default_rng(4)
    np.testing.assert_array_equal(lin.weight.detach().numpy(), g.uniform(-k, k, (2, 3)))
    bn = nn.BatchNorm1d(2)
    with dg.no_grad():
        bn.weight.fill_(3.0)
    bn.reset_parameters()
    assert bn.weight.tolist() == [1.0, 1.0]
