"""``duograd.distributions`` against torch 2.13 (float64, fixed values, to 1e-12): densities,
entropies, moments, cdf/icdf, shapes and expand, KL divergences, argument validation; rsample
gradients against torch's for the same noise; sample moments within 5 standard errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import distributions as D
from duograd.distributions import constraints
from duograd.distributions import transforms as T

TOL = dict(rtol=1e-12, atol=1e-12)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _close(got, want, **kw):
    np.testing.assert_allclose(_np(got), want.detach().numpy(), **(kw or TOL))


# name -> (parameters as nested lists, values to evaluate at, methods torch has)
A = [[0.5, 2.0, 3.5], [1.2, 0.7, 4.0]]
B = [[1.5, 0.4, 2.5], [0.9, 3.0, 1.1]]
SPECS = {
    "Normal": (dict(loc=[[0.3, -1.0, 2.0]], scale=A), [[0.1, -2.0, 3.0], [1.0, 0.0, -1.0]], True),
    "Uniform": (dict(low=[[-1.0, 0.0, 2.0]], high=[[1.0, 0.5, 5.0]]), [[0.2, 0.25, 4.0], [-0.5, 0.1, 2.5]], True),
    "Exponential": (dict(rate=A), [[0.1, 2.0, 0.3], [1.0, 0.5, 0.01]], True),
    "Laplace": (dict(loc=[[0.3, -1.0, 2.0]], scale=A), [[0.1, -2.0, 3.0], [1.0, 0.0, -1.0]], True),
    "Gamma": (dict(concentration=A, rate=B), [[0.1, 2.0, 0.3], [1.0, 0.5, 3.0]], "cdf"),
    "Beta": (dict(concentration1=A, concentration0=B), [[0.1, 0.9, 0.3], [0.5, 0.25, 0.7]], False),
}


def _pair(torch, name, params):
    d = getattr(D, name)(**{k: dg.tensor(v) for k, v in params.items()})
    t = getattr(torch.distributions, name)(**{k: torch.tensor(v, dtype=torch.float64) for k, v in params.items()})
    return d, t


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(SPECS))
def test_univariate_matches_torch(torch, name):
    params, values, cdf = SPECS[name]
    d, t = _pair(torch, name, params)
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    v, tv = dg.tensor(values), torch.tensor(values, dtype=torch.float64)
    _close(d.log_prob(v), t.log_prob(tv))
    _close(d.entropy(), t.entropy())
    for attr in ["mean", "variance", "stddev", "mode"]:
        _close(getattr(d, attr), getattr(t, attr), rtol=1e-12, atol=1e-12, equal_nan=True)
    if cdf:
        _close(d.cdf(v), t.cdf(tv))
    if cdf is True:
        q = dg.tensor([[0.1, 0.5, 0.9], [0.3, 0.7, 0.01]])
        _close(d.icdf(q), t.icdf(torch.tensor(_np(q))))
    e, te = d.expand((4, 2, 3)), t.expand((4, 2, 3))
    assert e.batch_shape == tuple(te.batch_shape)
    _close(e.log_prob(v), te.log_prob(tv))
    assert d.sample((5,)).shape == tuple(t.sample((5,)).shape)
    assert d.support.__class__.__name__ == t.support.__class__.__name__


@pytest.mark.oracle
def test_gamma_cdf_and_log_prob_gradients_match_torch(torch):
    a = dg.tensor([0.5, 2.0, 3.5], requires_grad=True)
    b = dg.tensor([1.5, 0.4, 2.5], requires_grad=True)
    ta = torch.tensor(_np(a), requires_grad=True)
    tb = torch.tensor(_np(b), requires_grad=True)
    x = [0.3, 1.2, 2.0]
    D.Gamma(a, b).log_prob(dg.tensor(x)).sum().backward()
    torch.distributions.Gamma(ta, tb).log_prob(torch.tensor(x, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(_np(a.grad), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(b.grad), tb.grad.numpy(), rtol=1e-12)


P = [[0.2, 0.3, 0.5], [0.05, 0.9, 0.05]]


@pytest.mark.oracle
@pytest.mark.parametrize("form", ["probs", "logits"])
def test_discrete_match_torch(torch, form):
    logits = np.log(P) + 0.7
    arg = P if form == "probs" else logits.tolist()
    for name, values in [("Categorical", [[2, 0], [1, 1]]), ("OneHotCategorical", np.eye(3)[[2, 1]].tolist())]:
        d = getattr(D, name)(**{form: dg.tensor(arg)})
        t = getattr(torch.distributions, name)(**{form: torch.tensor(arg, dtype=torch.float64)})
        assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
        vd = dg.tensor(values) if name == "OneHotCategorical" else dg.tensor(values)
        vt = torch.tensor(values, dtype=torch.float64 if name == "OneHotCategorical" else torch.int64)
        _close(d.log_prob(vd), t.log_prob(vt))
        _close(d.entropy(), t.entropy())
        _close(d.probs, t.probs)
        _close(d.logits, t.logits)
        for attr in ["mean", "variance", "mode"]:
            np.testing.assert_allclose(_np(getattr(d, attr)), getattr(t, attr).numpy(), **TOL, equal_nan=True)
        assert d.sample((4,)).shape == tuple(t.sample((4,)).shape)
        assert d.sample().dtype == t.sample().numpy().dtype
        np.testing.assert_array_equal(_np(d.enumerate_support()), t.enumerate_support().numpy())
        assert d.expand((5, 2)).batch_shape == tuple(t.expand((5, 2)).batch_shape)
    pb = [0.0, 0.2, 0.5, 1.0] if form == "probs" else [-3.0, 0.0, 1.5, 4.0]
    d, t = D.Bernoulli(**{form: dg.tensor(pb)}), torch.distributions.Bernoulli(**{form: torch.tensor(pb, dtype=torch.float64)})
    v = [1.0, 0.0, 1.0, 1.0]
    _close(d.log_prob(dg.tensor(v)), t.log_prob(torch.tensor(v, dtype=torch.float64)))
    _close(d.entropy(), t.entropy())
    for attr in ["mean", "variance", "mode", "probs", "logits"]:
        np.testing.assert_allclose(_np(getattr(d, attr)), getattr(t, attr).numpy(), **TOL, equal_nan=True)
    np.testing.assert_array_equal(_np(d.enumerate_support()), t.enumerate_support().numpy())


@pytest.mark.oracle
def test_dirichlet_matches_torch(torch):
    c = [[0.5, 2.0, 3.5], [1.2, 0.7, 0.4]]
    d, t = D.Dirichlet(dg.tensor(c)), torch.distributions.Dirichlet(torch.tensor(c, dtype=torch.float64))
    v = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]
    _close(d.log_prob(dg.tensor(v)), t.log_prob(torch.tensor(v, dtype=torch.float64)))
    _close(d.entropy(), t.entropy())
    for attr in ["mean", "variance", "mode"]:
        _close(getattr(d, attr), getattr(t, attr))
    assert d.event_shape == (3,) and d.batch_shape == (2,)


@pytest.mark.oracle
@pytest.mark.parametrize("form", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_torch_with_gradients(torch, form):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((2, 3, 3))
    cov = m @ np.swapaxes(m, -1, -2) + 0.5 * np.eye(3)
    mat = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
           "scale_tril": np.linalg.cholesky(cov)}[form]
    loc = rng.standard_normal(3)
    x = rng.standard_normal((4, 2, 3))
    dm, tm = dg.tensor(mat, requires_grad=True), torch.tensor(mat, requires_grad=True)
    dl, tl = dg.tensor(loc, requires_grad=True), torch.tensor(loc, requires_grad=True)
    d = D.MultivariateNormal(dl, **{form: dm})
    t = torch.distributions.MultivariateNormal(tl, **{form: tm})
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    lp, tlp = d.log_prob(dg.tensor(x)), t.log_prob(torch.tensor(x))
    _close(lp, tlp, rtol=1e-11, atol=1e-11)
    _close(d.entropy(), t.entropy(), rtol=1e-11, atol=1e-11)
    for attr in ["mean", "variance", "covariance_matrix", "precision_matrix", "scale_tril"]:
        _close(getattr(d, attr), getattr(t, attr), rtol=1e-10, atol=1e-10)
    (lp.sum() + d.entropy().sum()).backward()
    (tlp.sum() + t.entropy().sum()).backward()
    np.testing.assert_allclose(_np(dl.grad), tl.grad.numpy(), rtol=1e-9, atol=1e-10)
    # torch's gradient w.r.t. a symmetric matrix is not symmetrised: compare its symmetric part
    sym = lambda g: 0.5 * (g + np.swapaxes(g, -1, -2))  # noqa: E731
    g, tg = _np(dm.grad), tm.grad.numpy()
    if form == "scale_tril":
        np.testing.assert_allclose(g, tg, rtol=1e-9, atol=1e-10)
    else:
        np.testing.assert_allclose(sym(g), sym(tg), rtol=1e-9, atol=1e-10)


@pytest.mark.oracle
def test_independent_and_transformed_match_torch(torch):
    loc, scale = [[0.3, -1.0, 2.0]], A
    d = D.Independent(D.Normal(dg.tensor(loc), dg.tensor(scale)), 1)
    t = torch.distributions.Independent(torch.distributions.Normal(torch.tensor(loc, dtype=torch.float64),
                                                                   torch.tensor(scale, dtype=torch.float64)), 1)
    x = [[0.1, -2.0, 3.0], [1.0, 0.0, -1.0]]
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    _close(d.log_prob(dg.tensor(x)), t.log_prob(torch.tensor(x, dtype=torch.float64)))
    _close(d.entropy(), t.entropy())
    TT = torch.distributions.transforms
    cases = [
        ([T.ExpTransform()], [TT.ExpTransform()], [[0.5, 1.5, 3.0]]),
        ([T.AffineTransform(1.0, -2.0)], [TT.AffineTransform(1.0, -2.0)], [[0.5, -1.5, 3.0]]),
        ([T.SigmoidTransform()], [TT.SigmoidTransform()], [[0.2, 0.5, 0.9]]),
        ([T.TanhTransform()], [TT.TanhTransform()], [[0.2, -0.5, 0.9]]),
        ([T.AffineTransform(0.5, 3.0), T.ExpTransform()], [TT.AffineTransform(0.5, 3.0), TT.ExpTransform()],
         [[0.5, 1.5, 3.0]]),
        ([T.ComposeTransform([T.TanhTransform(), T.AffineTransform(2.0, 0.5)])],
         [TT.ComposeTransform([TT.TanhTransform(), TT.AffineTransform(2.0, 0.5)])], [[2.1, 1.7, 2.3]]),
    ]
    base_d = D.Normal(dg.tensor(loc), dg.tensor(scale))
    base_t = torch.distributions.Normal(torch.tensor(loc, dtype=torch.float64), torch.tensor(scale, dtype=torch.float64))
    for ds, ts, v in cases:
        d, t = D.TransformedDistribution(base_d, ds), torch.distributions.TransformedDistribution(base_t, ts)
        assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
        _close(d.log_prob(dg.tensor(v)), t.log_prob(torch.tensor(v, dtype=torch.float64)))
        _close(d.cdf(dg.tensor(v)), t.cdf(torch.tensor(v, dtype=torch.float64)))
        q = [[0.1, 0.5, 0.8]]
        _close(d.icdf(dg.tensor(q)), t.icdf(torch.tensor(q, dtype=torch.float64)))
    # an event-level affine map: one event of 3
    d = D.TransformedDistribution(base_d, [T.AffineTransform(dg.tensor([1.0, 2.0, 3.0]), dg.tensor([0.5, -1.0, 2.0]), event_dim=1)])
    t = torch.distributions.TransformedDistribution(base_t, [TT.AffineTransform(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64), event_dim=1)])
    assert d.event_shape == tuple(t.event_shape) == (3,)
    _close(d.log_prob(dg.tensor(x)), t.log_prob(torch.tensor(x, dtype=torch.float64)))


def _kl_pairs(torch):
    def both(name, **params):
        return _pair(torch, name, params)

    a, b = [0.5, 2.0, 3.5], [1.5, 0.4, 2.5]
    N1, N2 = both("Normal", loc=[0.3, -1.0, 2.0], scale=a), both("Normal", loc=[1.0, 0.5, -0.5], scale=b)
    U1, U2 = both("Uniform", low=[0.1, 0.2, 0.3], high=[0.6, 0.9, 0.5]), both("Uniform", low=[0.0, -1.0, 0.3], high=[1.0, 2.0, 0.7])
    E1, E2 = both("Exponential", rate=a), both("Exponential", rate=b)
    L1, L2 = both("Laplace", loc=[0.3, -1.0, 2.0], scale=a), both("Laplace", loc=[1.0, 0.5, -0.5], scale=b)
    G1, G2 = both("Gamma", concentration=a, rate=b), both("Gamma", concentration=b, rate=a)
    B1, B2 = both("Beta", concentration1=a, concentration0=b), both("Beta", concentration1=b, concentration0=a)
    Be1, Be2 = both("Bernoulli", probs=[0.2, 0.5, 0.9]), both("Bernoulli", probs=[0.6, 0.1, 0.5])
    C1, C2 = both("Categorical", probs=P), both("Categorical", probs=[[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])
    O1, O2 = both("OneHotCategorical", probs=P), both("OneHotCategorical", probs=[[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])
    Di1, Di2 = both("Dirichlet", concentration=[a, b]), both("Dirichlet", concentration=[b, a])
    rng = np.random.default_rng(1)
    m = rng.standard_normal((2, 3, 3))
    cov1 = m @ np.swapaxes(m, -1, -2) + np.eye(3)
    cov2 = np.eye(3) * 2 + 0.3
    M1 = (D.MultivariateNormal(dg.tensor([0.1, 0.2, 0.3]), dg.tensor(cov1)),
          torch.distributions.MultivariateNormal(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64), torch.tensor(cov1)))
    M2 = (D.MultivariateNormal(dg.tensor([-0.4, 0.0, 1.0]), scale_tril=dg.tensor(np.linalg.cholesky(cov2))),
          torch.distributions.MultivariateNormal(torch.tensor([-0.4, 0.0, 1.0], dtype=torch.float64),
                                                 scale_tril=torch.tensor(np.linalg.cholesky(cov2))))
    I1 = (D.Independent(N1[0], 1), torch.distributions.Independent(N1[1], 1))
    I2 = (D.Independent(N2[0], 1), torch.distributions.Independent(N2[1], 1))
    T1 = (D.TransformedDistribution(N1[0], [T.ExpTransform()]),
          torch.distributions.TransformedDistribution(N1[1], [torch.distributions.transforms.ExpTransform()]))
    T2 = (D.TransformedDistribution(N2[0], [T.ExpTransform()]),
          torch.distributions.TransformedDistribution(N2[1], [torch.distributions.transforms.ExpTransform()]))
    same = [(N1, N2), (U1, U2), (E1, E2), (L1, L2), (G1, G2), (B1, B2), (Be1, Be2), (C1, C2), (O1, O2),
            (Di1, Di2), (M1, M2), (M2, M1), (I1, I2), (U2, U1)]
    cross = [(B1, E1), (B1, G1), (B1, N1), (B1, U2), (B1, U1), (E1, G1), (E1, N1), (G1, E1), (G1, N1), (L1, N1),
             (N1, L1), (U1, B1), (U2, B1), (U1, E1), (U2, E1), (U1, G1), (U1, N1), (E1, B1), (E1, U1), (G1, B1),
             (G1, U1), (L1, B1), (L1, E1), (L1, G1), (L1, U1), (N1, B1), (N1, E1), (N1, G1), (N1, U1)]
    return same + cross, (T1, T2)


@pytest.mark.oracle
def test_kl_divergence_matches_torch_for_every_registered_pair(torch):
    pairs, (T1, T2) = _kl_pairs(torch)
    for (dp, tp), (dq, tq) in pairs + [(T1, T2)]:
        got = D.kl_divergence(dp, dq)
        want = torch.distributions.kl_divergence(tp, tq)
        assert got.shape == tuple(want.shape), (type(dp).__name__, type(dq).__name__)
        np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"{type(dp).__name__} || {type(dq).__name__}")


@pytest.mark.oracle
def test_kl_gradients_match_torch(torch):
    a = dg.tensor([0.5, 2.0, 3.5], requires_grad=True)
    ta = torch.tensor(_np(a), requires_grad=True)
    D.kl_divergence(D.Gamma(a, 1.5), D.Normal(0.3, a)).sum().backward()
    torch.distributions.kl_divergence(torch.distributions.Gamma(ta, 1.5), torch.distributions.Normal(0.3, ta)).sum().backward()
    # the gradient needs the trigamma function: torch's is accurate to about 4e-10, scipy's
    # (used here) to 1e-15, so 1e-8 is the agreement to expect
    np.testing.assert_allclose(_np(a.grad), ta.grad.numpy(), rtol=1e-8)
    b = dg.tensor([0.5, 2.0, 3.5], requires_grad=True)
    tb = torch.tensor(_np(b), requires_grad=True)
    D.kl_divergence(D.Normal(b, 1.5), D.Laplace(0.3, b)).sum().backward()
    torch.distributions.kl_divergence(torch.distributions.Normal(tb, 1.5), torch.distributions.Laplace(0.3, tb)).sum().backward()
    np.testing.assert_allclose(_np(b.grad), tb.grad.numpy(), rtol=1e-12)


def test_kl_unregistered_pair_raises_and_register_kl_dispatches_to_subclasses():
    with pytest.raises(NotImplementedError, match="Bernoulli and q type Normal"):
        D.kl_divergence(D.Bernoulli(0.5), D.Normal(0.0, 1.0))

    class MyNormal(D.Normal):
        pass

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.5

    @D.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return p.loc * 0 + 42.0

    assert D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.5
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# ---------------------------------------------------------------- rsample gradients

@pytest.mark.oracle
def test_location_scale_rsample_gradients_match_torch_for_the_same_noise(torch):
    """With the noise fixed, x = f(params, eps); the gradient of sum(x^2) is torch's for the
    same eps (torch's rsample is the same formula: we pass the recovered eps to torch)."""
    dg.manual_seed(0)
    loc, scale = dg.tensor([0.3, -1.0], requires_grad=True), dg.tensor([0.5, 2.0], requires_grad=True)
    x = D.Normal(loc, scale).rsample((1000,))
    (x ** 2).sum().backward()
    eps = (_np(x) - _np(loc)) / _np(scale)
    tl, ts = torch.tensor(_np(loc), requires_grad=True), torch.tensor(_np(scale), requires_grad=True)
    ((tl + torch.tensor(eps) * ts) ** 2).sum().backward()
    np.testing.assert_allclose(_np(loc.grad), tl.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(scale.grad), ts.grad.numpy(), rtol=1e-12)
    # torch's own rsample with its noise replaced by ours: monkeypatch its draw
    torch.manual_seed(0)
    for name, params, noise in [("Exponential", dict(rate=[0.5, 2.0]), "exponential_"),
                                ("Laplace", dict(loc=[0.3, -1.0], scale=[0.5, 2.0]), "uniform_")]:
        dparams = {k: dg.tensor(v, requires_grad=True) for k, v in params.items()}
        tparams = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
        dg.manual_seed(3)
        x = getattr(D, name)(**dparams).rsample((500,))
        (x ** 3).sum().backward()
        # rebuild the same x in torch by its formula and this x's noise
        if name == "Exponential":
            e = _np(x) * _np(dparams["rate"])
            tx = torch.tensor(e) / tparams["rate"]
        else:
            loc, sc = _np(dparams["loc"]), _np(dparams["scale"])
            m = (_np(x) - loc) / sc  # = -sign(u) log1p(-|u|)
            tx = tparams["loc"] + tparams["scale"] * torch.tensor(m)
        np.testing.assert_allclose(tx.detach().numpy(), _np(x), rtol=1e-12, atol=1e-12)
        (tx ** 3).sum().backward()
        for k in params:
            np.testing.assert_allclose(_np(dparams[k].grad), tparams[k].grad.numpy(), rtol=1e-10)


@pytest.mark.oracle
def test_gamma_rsample_gradient_is_torchs_implicit_reparameterisation(torch):
    dg.manual_seed(1)
    alpha = dg.tensor([0.3, 1.0, 2.5, 10.0, 40.0], requires_grad=True)
    rate = dg.tensor([1.0, 2.0, 0.5, 1.0, 3.0], requires_grad=True)
    z = D.Gamma(alpha, rate).rsample((200,))
    z.sum().backward()
    zs = _np(z) * _np(rate)  # the standard gamma draws
    want = torch._standard_gamma_grad(torch.tensor(np.broadcast_to(_np(alpha), zs.shape).copy()), torch.tensor(zs))
    want = (want.numpy() / _np(rate)).sum(0)
    # torch's _standard_gamma_grad is an approximation good to about 6e-5 (against mpmath);
    # duograd's implicit derivative is good to about 1e-11 (next test)
    np.testing.assert_allclose(_np(alpha.grad), want, rtol=2e-4)
    np.testing.assert_allclose(_np(rate.grad), (-_np(z) / _np(rate)).sum(0), rtol=1e-12)


def test_gamma_implicit_derivative_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    from duograd.distributions._ops import _gamma_dz_dalpha
    mpmath.mp.dps = 30
    for z, a in [(0.05, 0.3), (1.3, 1.0), (4.0, 2.5), (9.0, 10.0), (45.0, 40.0), (1e-3, 0.3), (0.2, 5.0)]:
        za, aa = mpmath.mpf(z), mpmath.mpf(a)
        dF = mpmath.diff(lambda al: mpmath.gammainc(al, 0, za, regularized=True), aa)
        ref = float(-dF / (za ** (aa - 1) * mpmath.e ** (-za) / mpmath.gamma(aa)))
        assert abs(_gamma_dz_dalpha(np.array(z), np.array(a)) - ref) < 1e-9 * abs(ref), (z, a)


def test_dirichlet_implicit_derivative_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    from duograd.distributions._ops import _dirichlet_d
    mpmath.mp.dps = 30
    for x, a, b in [(0.3, 2.0, 4.0), (0.5, 3.5, 2.5), (0.3, 0.4, 1.9), (0.01, 0.3, 5.0), (0.97, 8.0, 0.5)]:
        xi, ai, bi = map(mpmath.mpf, (x, a, b))
        dI = mpmath.diff(lambda al: mpmath.betainc(al, bi, 0, xi, regularized=True), ai)
        pdf = xi ** (ai - 1) * (1 - xi) ** (bi - 1) / mpmath.beta(ai, bi)
        ref = float(-dI / pdf / (1 - xi))
        assert abs(_dirichlet_d(np.array([x, 1 - x]), np.array([a, b]))[0] - ref) < 1e-9 * abs(ref)


@pytest.mark.oracle
def test_beta_and_dirichlet_rsample_gradients_are_torchs_for_the_same_sample(torch):
    """torch's Dirichlet backward is D(x, alpha) * (g - sum(x g)) with D = torch._dirichlet_grad;
    for the same sample x duograd's gradient is that (D computed more accurately: 1e-12
    against mpmath above, torch's up to about 1e-4 in a sum of them)."""
    dg.manual_seed(2)
    c = dg.tensor([[0.5, 2.0, 3.5], [1.2, 0.7, 0.4]], requires_grad=True)
    w = np.array([0.3, -1.0, 2.0])
    x = D.Dirichlet(c).rsample((100,))
    (x * dg.tensor(w)).pow(2).sum().backward()
    xs = torch.tensor(_np(x))
    tc = torch.tensor(_np(c)).expand(xs.shape)
    d = torch._dirichlet_grad(xs, tc, tc.sum(-1, keepdim=True).expand(xs.shape))
    g = 2 * xs * torch.tensor(w) ** 2
    want = (d * (g - (xs * g).sum(-1, keepdim=True))).sum(0).numpy()
    np.testing.assert_allclose(_np(c.grad), want, rtol=5e-4)  # torch's D: up to 1e-4 off
    a, b = dg.tensor([0.5, 3.0], requires_grad=True), dg.tensor([1.5, 0.8], requires_grad=True)
    x = D.Beta(a, b).rsample((100,))
    (x ** 3).sum().backward()
    x0 = torch.tensor(_np(x))
    xs = torch.stack([x0, 1 - x0], -1)
    ab = torch.stack([torch.tensor(_np(a)), torch.tensor(_np(b))], -1).expand(xs.shape)
    d = torch._dirichlet_grad(xs, ab, ab.sum(-1, keepdim=True).expand(xs.shape))
    g = torch.stack([3 * x0 ** 2, torch.zeros_like(x0)], -1)
    want = (d * (g - (xs * g).sum(-1, keepdim=True))).sum(0).numpy()
    np.testing.assert_allclose(_np(a.grad), want[:, 0], rtol=5e-4)
    np.testing.assert_allclose(_np(b.grad), want[:, 1], rtol=5e-4)


def test_beta_and_dirichlet_rsample_gradients_are_unbiased():
    """The mean of d x / d a over many draws is d E[x] / d a (b / (a + b)^2 for a Beta)."""
    dg.manual_seed(2)
    a, b = dg.tensor(2.0, requires_grad=True), dg.tensor(3.0, requires_grad=True)
    n = 40_000
    D.Beta(a, b).rsample((n,)).sum().backward()
    assert abs(a.grad.item() / n - 3.0 / 25.0) < 2e-3 and abs(b.grad.item() / n + 2.0 / 25.0) < 2e-3
    c = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    D.Dirichlet(c).rsample((n,))[:, 0].sum().backward()
    np.testing.assert_allclose(_np(c.grad) / n, np.array([5.0, -1.0, -1.0]) / 36.0, atol=2e-3)


def test_rsample_gradients_pass_gradcheck_for_fixed_noise():
    for name, params in [("Normal", (0.3, 1.5)), ("Laplace", (0.3, 1.5)), ("Exponential", (1.5,)),
                         ("Uniform", (0.3, 1.5))]:
        ts = tuple(dg.tensor([p, p + 0.1], requires_grad=True) for p in params)

        def f(*ps, name=name):
            dg.manual_seed(7)
            return getattr(D, name)(*ps, validate_args=False).rsample((3,))

        assert dg.gradcheck(f, ts)
    L = dg.tensor([[1.0, 0.0], [0.3, 0.8]], requires_grad=True)
    mu = dg.tensor([0.1, -0.2], requires_grad=True)

    def g(mu, L):
        dg.manual_seed(5)
        return D.MultivariateNormal(mu, scale_tril=L, validate_args=False).rsample((4,))

    assert dg.gradcheck(g, (mu, L))
    cov = dg.tensor([[2.0, 0.3], [0.3, 1.0]], requires_grad=True)

    def h(cov):
        sym = 0.5 * (cov + cov.T)
        return D.MultivariateNormal(dg.zeros(2), covariance_matrix=sym, validate_args=False).log_prob(dg.tensor([0.3, -0.4]))

    assert dg.gradcheck(h, (cov,))


# ---------------------------------------------------------------- sample moments

def _moments(x, mean, var, axis=0):
    n = x.shape[axis]
    assert np.all(np.abs(x.mean(axis) - mean) < 5 * np.sqrt(var / n)), (x.mean(axis), mean)


@pytest.mark.parametrize("d", [
    D.Normal(dg.tensor([0.3, -1.0]), dg.tensor([0.5, 2.0])), D.Uniform(dg.tensor([-1.0, 0.0]), dg.tensor([1.0, 0.5])),
    D.Exponential(dg.tensor([0.5, 2.0])), D.Laplace(dg.tensor([0.3, -1.0]), dg.tensor([0.5, 2.0])),
    D.Gamma(dg.tensor([0.5, 3.0]), dg.tensor([1.5, 0.4])), D.Beta(dg.tensor([0.5, 3.0]), dg.tensor([1.5, 0.4])),
    D.Bernoulli(dg.tensor([0.1, 0.7])), D.Dirichlet(dg.tensor([[0.5, 1.0, 3.0]])),
    D.OneHotCategorical(dg.tensor([0.2, 0.3, 0.5])),
    D.MultivariateNormal(dg.tensor([0.1, -0.2]), dg.tensor([[2.0, 0.3], [0.3, 1.0]])),
], ids=lambda d: type(d).__name__)
def test_sample_means_within_5_standard_errors(d):
    dg.manual_seed(0)
    x = _np(d.sample((20_000,)))
    _moments(x, _np(d.mean), _np(d.variance))
    assert x.shape[1:] == tuple(d.batch_shape) + tuple(d.event_shape)


def test_categorical_sample_frequencies_and_variance_of_normal():
    dg.manual_seed(0)
    p = np.array([0.1, 0.2, 0.7])
    x = _np(D.Categorical(dg.tensor(p)).sample((30_000,)))
    freq = np.bincount(x, minlength=3) / x.size
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / x.size))
    y = _np(D.Normal(1.0, 2.0).sample((50_000,)))
    assert abs(y.var() - 4.0) < 5 * math.sqrt(2 * 16 / y.size)


def test_sample_has_no_history_and_rsample_has():
    loc = dg.tensor(0.0, requires_grad=True)
    assert not D.Normal(loc, 1.0).sample((2,)).requires_grad
    assert D.Normal(loc, 1.0).rsample((2,)).requires_grad
    with pytest.raises(NotImplementedError):
        D.Bernoulli(0.5).rsample()


def test_compile_replay_draws_new_noise():
    loc = dg.tensor([0.0, 0.0, 0.0])

    def step():
        return D.Normal(loc, 1.0).sample() * 1.0

    f = dg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b, c = (_np(f()).copy() for _ in range(3))
    assert not np.array_equal(a, b) and not np.array_equal(b, c)


def test_compile_replay_samples_from_the_new_parameters():
    """The noise is drawn independently of the parameters and mapped through operations, so
    a replay with other parameters samples from them (not from the recorded ones)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = dg.compile(lambda p: D.Bernoulli(probs=p, validate_args=False).sample() * 1.0)
        assert f(dg.zeros(5)).tolist() == [0.0] * 5 and f(dg.ones(5)).tolist() == [1.0] * 5
        f = dg.compile(lambda p: D.Categorical(probs=p, validate_args=False).sample() * 1)
        assert [f(dg.tensor(np.eye(3)[k])).item() for k in (0, 2, 1)] == [0, 2, 1]
        f = dg.compile(lambda a: D.Gamma(a, 1.0, validate_args=False).rsample((2000,)).mean(0))
        small, big = _np(f(dg.full((2,), 0.5))), _np(f(dg.full((2,), 50.0)))
        assert np.all(np.abs(small - 0.5) < 0.1) and np.all(np.abs(big - 50.0) < 1.0)
        f = dg.compile(lambda c: D.Dirichlet(c, validate_args=False).rsample((2000,)).mean(0))
        np.testing.assert_allclose(_np(f(dg.tensor([1.0, 1.0, 8.0]))), [0.1, 0.1, 0.8], atol=0.02)
        np.testing.assert_allclose(_np(f(dg.tensor([8.0, 1.0, 1.0]))), [0.8, 0.1, 0.1], atol=0.02)


# ---------------------------------------------------------------- validation

@pytest.mark.oracle
def test_invalid_parameters_raise_value_error_as_torch(torch):
    cases = [("Normal", (0.0, -1.0)), ("Normal", (float("nan"), 1.0)), ("Exponential", (0.0,)),
             ("Laplace", (0.0, 0.0)), ("Gamma", (-1.0, 1.0)), ("Gamma", (1.0, -1.0)), ("Beta", (1.0, 0.0)),
             ("Uniform", (1.0, 0.0)), ("Bernoulli", (1.5,)), ("Dirichlet", ([1.0, -1.0],)),
             ("Categorical", ([0.5, -0.1],))]
    for name, args in cases:
        targs = [torch.tensor(a, dtype=torch.float64) for a in args]
        with pytest.raises(ValueError) as want:
            getattr(torch.distributions, name)(*targs)
        with pytest.raises(ValueError) as got:
            getattr(D, name)(*[dg.tensor(a) for a in args])
        assert str(got.value).split(" of distribution")[0] == str(want.value).split(" of distribution")[0]
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical(probs=dg.tensor([0.5, 0.5]), logits=dg.tensor([0.0, 0.0]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(dg.zeros(2))
    with pytest.raises(ValueError):
        D.MultivariateNormal(dg.zeros(2), dg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0


@pytest.mark.oracle
def test_values_outside_the_support_raise_as_torch(torch):
    cases = [("Exponential", (1.0,), -1.0), ("Gamma", (1.0, 1.0), -0.5), ("Beta", (1.0, 2.0), 1.5),
             ("Uniform", (0.0, 1.0), 2.0), ("Bernoulli", (0.5,), 0.5), ("Normal", (0.0, 1.0), float("nan"))]
    for name, args, v in cases:
        with pytest.raises(ValueError) as want:
            getattr(torch.distributions, name)(*[torch.tensor(a, dtype=torch.float64) for a in args]).log_prob(
                torch.tensor(v, dtype=torch.float64))
        with pytest.raises(ValueError) as got:
            getattr(D, name)(*[dg.tensor(a) for a in args]).log_prob(dg.tensor(v))
        assert str(got.value).split(" to be within")[0] == str(want.value).split(" to be within")[0]
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        assert D.Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_constraints_check():
    assert constraints.positive.check(dg.tensor([1.0, 0.0])).tolist() == [True, False]
    assert constraints.unit_interval.check(dg.tensor([0.0, 1.0, 1.1])).tolist() == [True, True, False]
    assert constraints.integer_interval(0, 2).check(dg.tensor([0, 2, 3])).tolist() == [True, True, False]
    assert constraints.simplex.check(dg.tensor([[0.5, 0.5], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.lower_cholesky.check(dg.tensor([[1.0, 0.0], [2.0, 1.0]])).item()
    assert not constraints.lower_cholesky.check(dg.tensor([[1.0, 1.0], [2.0, 1.0]])).item()
    assert constraints.positive_definite.check(dg.tensor([[2.0, 0.5], [0.5, 1.0]])).item()
    assert constraints.is_dependent(constraints.dependent) and not constraints.is_dependent(constraints.real)
    assert repr(D.Uniform(0.0, 1.0).arg_constraints["low"]) == "LessThan(upper_bound=1.0)"
    assert repr(constraints.independent(constraints.real, 1)) == "IndependentConstraint(Real(), 1)"


@pytest.mark.oracle
def test_repr_and_shapes_as_torch(torch):
    assert repr(D.Normal(0.0, 1.0)) == repr(torch.distributions.Normal(0.0, 1.0))
    assert repr(D.Normal(dg.zeros(2), 1.0)).replace("dg.Size", "torch.Size") == \
        repr(torch.distributions.Normal(torch.zeros(2), 1.0))
    d = D.Independent(D.Normal(dg.zeros(4, 3), 1.0), 1).expand((2, 4))
    t = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(4, 3), 1.0), 1).expand((2, 4))
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    assert d.sample((5,)).shape == tuple(t.sample((5,)).shape)


@pytest.mark.oracle
@pytest.mark.parametrize("form", ["covariance_matrix", "scale_tril"])
def test_multivariate_normal_rsample_gradient_matches_torch_for_the_same_noise(torch, form):
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
    mat = cov if form == "covariance_matrix" else np.linalg.cholesky(cov)
    dm, tm = dg.tensor(mat, requires_grad=True), torch.tensor(mat, requires_grad=True)
    dl, tl = dg.tensor([0.1, -0.2, 0.3], requires_grad=True), torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64,
                                                                          requires_grad=True)
    dg.manual_seed(4)
    x = D.MultivariateNormal(dl, **{form: dm}).rsample((50,))
    (x ** 3).sum().backward()
    eps = np.linalg.solve(np.linalg.cholesky(cov), (_np(x) - _np(dl)).T).T  # the noise this draw used
    t = torch.distributions.MultivariateNormal(tl, **{form: tm})
    tx = tl + (t._unbroadcasted_scale_tril @ torch.tensor(eps).unsqueeze(-1)).squeeze(-1)  # torch's rsample formula
    np.testing.assert_allclose(tx.detach().numpy(), _np(x), rtol=1e-12, atol=1e-12)
    (tx ** 3).sum().backward()
    np.testing.assert_allclose(_np(dl.grad), tl.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(_np(dm.grad), tm.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.oracle
def test_discrete_log_prob_and_entropy_gradients_match_torch(torch):
    logits = [[0.2, -1.0, 0.5], [1.5, 0.0, -0.3]]
    for name, value in [("Categorical", [[2, 0], [1, 1]]), ("Bernoulli", [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])]:
        d_l = dg.tensor(logits, requires_grad=True)
        t_l = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
        d, t = getattr(D, name)(logits=d_l), getattr(torch.distributions, name)(logits=t_l)
        tv = torch.tensor(value, dtype=torch.int64 if name == "Categorical" else torch.float64)
        (d.log_prob(dg.tensor(value)).sum() + d.entropy().sum() + d.probs.pow(2).sum()).backward()
        (t.log_prob(tv).sum() + t.entropy().sum() + t.probs.pow(2).sum()).backward()
        np.testing.assert_allclose(_np(d_l.grad), t_l.grad.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.oracle
def test_expand_of_the_event_distributions_as_torch(torch):
    c = [0.5, 2.0, 3.5]
    d = D.Dirichlet(dg.tensor(c)).expand((4, 2))
    t = torch.distributions.Dirichlet(torch.tensor(c, dtype=torch.float64)).expand((4, 2))
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    _close(d.entropy(), t.entropy())
    d = D.Beta(dg.tensor(0.5), dg.tensor(2.0)).expand((3,))
    t = torch.distributions.Beta(torch.tensor(0.5, dtype=torch.float64), torch.tensor(2.0, dtype=torch.float64)).expand((3,))
    _close(d.log_prob(dg.tensor([0.1, 0.2, 0.9])), t.log_prob(torch.tensor([0.1, 0.2, 0.9], dtype=torch.float64)))
    assert d.rsample((2,)).shape == tuple(t.rsample((2,)).shape)
    cov = dg.eye(2) * 2.0
    d = D.MultivariateNormal(dg.zeros(2), cov).expand((3,))
    t = torch.distributions.MultivariateNormal(torch.zeros(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64) * 2).expand((3,))
    assert d.batch_shape == tuple(t.batch_shape)
    _close(d.log_prob(dg.zeros(3, 2)), t.log_prob(torch.zeros(3, 2, dtype=torch.float64)))
    _close(d.covariance_matrix, t.covariance_matrix)
