"""Random numbers as objects: ``dg.Generator`` and the default generator's state, and the
draws added with it (``multinomial``, ``bernoulli``, ``poisson``, the in-place fills),
checked against their formulas (sample moments within 5 standard errors, seeded), against
torch for the API (defaults, errors), and for reproducibility (a state round trip gives the
same draws)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg

N = 20000


def _gen(seed: int = 0) -> dg.Generator:
    return dg.Generator().manual_seed(seed)


def _within(sample_mean: float, mean: float, var: float, n: int, what: str) -> None:
    se = math.sqrt(var / n)
    assert abs(sample_mean - mean) <= 5 * se, f"{what}: mean {sample_mean} vs {mean} (se {se})"


# ---------------------------------------------------------------- the Generator object

def test_generator_state_round_trip_reproduces_draws() -> None:
    g = _gen(123)
    dg.rand(5, generator=g)
    state = g.get_state()
    a = (dg.rand(4, generator=g).tolist(), dg.randn(3, generator=g).tolist(),
         dg.randint(0, 10, (6,), generator=g).tolist(), dg.randperm(7, generator=g).tolist(),
         dg.multinomial(dg.tensor([0.2, 0.8]), 5, True, generator=g).tolist())
    g.set_state(state)
    b = (dg.rand(4, generator=g).tolist(), dg.randn(3, generator=g).tolist(),
         dg.randint(0, 10, (6,), generator=g).tolist(), dg.randperm(7, generator=g).tolist(),
         dg.multinomial(dg.tensor([0.2, 0.8]), 5, True, generator=g).tolist())
    assert a == b
    # a state moves to another generator, seed included
    h = dg.Generator().set_state(state)
    assert h.initial_seed() == 123 and dg.rand(4, generator=h).tolist() == a[0]


def test_manual_seed_seed_and_initial_seed() -> None:
    g = dg.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    x = dg.rand(3, generator=g).tolist()
    assert dg.rand(3, generator=g.manual_seed(5)).tolist() == x
    s = g.seed()
    assert g.initial_seed() == s and isinstance(s, int)
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1  # wraps, as torch
    assert str(g.device) == "cpu"


@pytest.mark.oracle
def test_generator_api_as_torch(torch) -> None:
    assert dg.Generator().initial_seed() == torch.Generator().initial_seed()
    assert torch.Generator().manual_seed(-1).initial_seed() == dg.Generator().manual_seed(-1).initial_seed()
    for bad in (1.5, "3"):
        with pytest.raises((RuntimeError, TypeError)):
            torch.Generator().manual_seed(bad)
        with pytest.raises((RuntimeError, TypeError)):
            dg.Generator().manual_seed(bad)
    with pytest.raises(TypeError):
        torch.Generator().set_state(torch.zeros(3))
    with pytest.raises(TypeError):
        dg.Generator().set_state(dg.zeros(3))
    with pytest.raises(RuntimeError):
        dg.Generator().set_state(dg.zeros(3, dtype=np.uint8))
    assert type(torch.manual_seed(0)) is torch.Generator
    assert type(dg.manual_seed(0)) is dg.Generator


def test_default_generator_state_and_manual_seed_in_place() -> None:
    inner = dg.random.as_rng()
    g = dg.manual_seed(11)
    assert g is dg.random.default_generator and dg.initial_seed() == 11
    assert dg.random.as_rng() is inner  # reseeded in place: holders of the NumPy generator see it
    state = dg.get_rng_state()
    a = dg.randn(4).tolist()
    dg.set_rng_state(state)
    assert dg.randn(4).tolist() == a
    assert dg.seed() == dg.initial_seed()
    # the same values for a seed as before generators were objects: NumPy's default_rng(seed)
    dg.manual_seed(3)
    assert dg.rand(3).tolist() == np.random.default_rng(3).random(3).tolist()


def test_as_rng_takes_both_kinds_of_generator() -> None:
    g, npg = dg.Generator(), np.random.default_rng(0)
    assert dg.random.as_rng(generator=g) is g._rng
    assert dg.random.as_rng(generator=npg) is npg
    assert dg.random.as_rng(rng=g) is g._rng
    with pytest.raises(TypeError, match="generator"):
        dg.random.as_rng(generator=3)


def test_every_random_function_takes_a_generator() -> None:
    def draws(g):
        t = dg.zeros(3)
        return [dg.rand(2, generator=g), dg.randn(2, generator=g), dg.randint(5, (2,), generator=g),
                dg.randperm(4, generator=g), dg.normal(0.0, 1.0, (2,), generator=g),
                dg.normal(dg.zeros(2), dg.ones(2), generator=g), dg.rand_like(t, generator=g),
                dg.randn_like(t, generator=g), dg.multinomial(dg.ones(3), 2, generator=g),
                dg.bernoulli(dg.full((3,), 0.5), generator=g), dg.poisson(dg.ones(3), generator=g),
                dg.zeros(3).uniform_(generator=g), dg.zeros(3).normal_(generator=g),
                dg.zeros(3).random_(generator=g), dg.zeros(3).exponential_(generator=g),
                dg.zeros(3).geometric_(0.5, generator=g), dg.zeros(3).cauchy_(generator=g),
                dg.zeros(3).log_normal_(generator=g), dg.zeros(3).bernoulli_(generator=g)]
    a = [x.tolist() for x in draws(_gen(9))]
    b = [x.tolist() for x in draws(_gen(9))]
    assert a == b
    c = [x.tolist() for x in draws(_gen(10))]
    assert a != c


# ---------------------------------------------------------------- multinomial

def test_multinomial_with_replacement_frequencies() -> None:
    p = np.array([0.1, 0.0, 0.6, 0.3])
    idx = dg.multinomial(dg.tensor(p * 7), N, True, generator=_gen(1)).numpy()
    assert idx.dtype == np.int64 and idx.shape == (N,)
    assert not np.any(idx == 1)  # a category of weight 0 is never drawn
    for k, pk in enumerate(p):
        _within(np.mean(idx == k), pk, pk * (1 - pk), N, f"category {k}")


def test_multinomial_without_replacement_never_repeats_and_first_draw_follows_p() -> None:
    p = np.array([0.5, 0.25, 0.125, 0.125])
    rows = dg.multinomial(dg.tensor(np.tile(p, (4000, 1))), 3, generator=_gen(2)).numpy()
    assert rows.shape == (4000, 3)
    assert all(len(set(r)) == 3 for r in rows.tolist())
    for k, pk in enumerate(p):
        _within(np.mean(rows[:, 0] == k), pk, pk * (1 - pk), len(rows), f"first draw {k}")
    # the second draw, given the first: P(second = 1 | first = 0) = 0.25 / 0.5
    first0 = rows[rows[:, 0] == 0]
    _within(np.mean(first0[:, 1] == 1), 0.5, 0.25, len(first0), "second draw given the first")
    # all of them drawn: a permutation
    full = dg.multinomial(dg.tensor(p), 4, generator=_gen(3)).tolist()
    assert sorted(full) == [0, 1, 2, 3]


@pytest.mark.oracle
@pytest.mark.parametrize("case", [
    ([0.2, 0.3, 0.5], 4, False), ([0.2, 0.3, 0.5], 0, False), ([1.0, -1.0], 1, True),
    ([0.0, 0.0], 1, True), ([1.0, float("nan")], 1, True), ([1.0, float("inf")], 1, True),
    ([[1.0, 1.0], [0.0, 0.0]], 1, True), (1.0, 1, True), ([[[1.0]]], 1, True)])
def test_multinomial_errors_as_torch(torch, case) -> None:
    p, n, repl = case
    with pytest.raises(RuntimeError) as te:
        torch.multinomial(torch.tensor(p, dtype=torch.float64), n, repl)
    with pytest.raises(RuntimeError) as de:
        dg.multinomial(dg.tensor(p), n, repl)
    # the same reason, in torch's words
    key = str(te.value).split("(")[0].strip()[:30]
    assert key in str(de.value), (str(te.value), str(de.value))
    with pytest.raises(RuntimeError, match="floating-point"):
        dg.multinomial(dg.tensor([1, 2]), 1)


@pytest.mark.oracle
def test_multinomial_shapes_as_torch(torch) -> None:
    for shape, n, repl in [((3,), 2, False), ((2, 3), 3, False), ((2, 3), 7, True), ((0, 3), 2, False),
                           ((0, 3), 2, True)]:
        t = torch.multinomial(torch.ones(shape, dtype=torch.float64), n, repl)
        d = dg.multinomial(dg.ones(shape), n, repl)
        assert tuple(t.shape) == d.shape and str(t.dtype) == f"torch.{d.dtype}"


# ---------------------------------------------------------------- bernoulli, poisson, normal

def test_bernoulli_moments_and_dtype() -> None:
    p = 0.3
    x = dg.bernoulli(dg.full((N,), p), generator=_gen(4))
    assert x.dtype == np.float64 and set(np.unique(x.numpy())) <= {0.0, 1.0}
    _within(x.numpy().mean(), p, p * (1 - p), N, "bernoulli(p)")
    y = dg.bernoulli(dg.zeros(N, dtype=dg.float32), 0.8, generator=_gen(5))
    assert y.dtype == np.float32
    _within(y.numpy().mean(), 0.8, 0.16, N, "bernoulli(input, p)")
    z = dg.zeros(N).bernoulli_(dg.tensor([0.1, 0.9]).repeat(N // 2), generator=_gen(6)).numpy()
    _within(z[0::2].mean(), 0.1, 0.09, N // 2, "bernoulli_(p tensor), even")
    _within(z[1::2].mean(), 0.9, 0.09, N // 2, "bernoulli_(p tensor), odd")
    assert dg.bernoulli(dg.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]


def test_poisson_moments() -> None:
    for lam in (0.5, 4.0, 30.0):
        x = dg.poisson(dg.full((N,), lam), generator=_gen(7)).numpy()
        assert x.dtype == np.float64 and np.all(x == np.round(x))
        _within(x.mean(), lam, lam, N, f"poisson({lam}) mean")
        # the variance of a Poisson sample variance: lam + 2 lam^2 (n/(n-1)) ~ lam + 2 lam^2
        _within(x.var(ddof=1), lam, lam + 2 * lam ** 2, N, f"poisson({lam}) variance")


def test_normal_tensor_forms_broadcast_and_moments() -> None:
    mean = dg.tensor([[-1.0], [2.0]])
    std = dg.tensor([0.5, 1.0, 2.0])
    x = dg.normal(mean, std, generator=_gen(8))
    assert x.shape == (2, 3)
    big = dg.normal(dg.full((N,), 3.0), 2.0, generator=_gen(9)).numpy()
    _within(big.mean(), 3.0, 4.0, N, "normal(tensor mean, std)")
    big = dg.normal(1.0, dg.full((N,), 0.5), generator=_gen(10)).numpy()
    _within(big.mean(), 1.0, 0.25, N, "normal(mean, tensor std)")
    _within(big.var(ddof=1), 0.25, 2 * 0.25 ** 2, N, "normal variance")


@pytest.mark.oracle
def test_bernoulli_poisson_normal_dtypes_and_errors_as_torch(torch) -> None:
    for kind in ("float32", "float64"):
        tp, dp = torch.full((3,), 0.5, dtype=getattr(torch, kind)), dg.full((3,), 0.5, dtype=getattr(dg, kind))
        assert str(torch.bernoulli(tp).dtype) == f"torch.{dg.bernoulli(dp).dtype}"
        assert str(torch.poisson(tp).dtype) == f"torch.{dg.poisson(dp).dtype}"
        assert str(torch.normal(tp, 1.0).dtype) == f"torch.{dg.normal(dp, 1.0).dtype}"
    cases = [(lambda m: m.bernoulli(m.tensor([0.5, 1.5])), RuntimeError),
             (lambda m: m.bernoulli(m.tensor([0.5, 0.2]), 1.3), RuntimeError),
             (lambda m: m.bernoulli(m.tensor([1, 0])), NotImplementedError),
             (lambda m: m.poisson(m.tensor([-1.0, 2.0])), RuntimeError),
             (lambda m: m.poisson(m.tensor([1, 2])), NotImplementedError),
             (lambda m: m.normal(m.zeros(2), -1.0), RuntimeError),
             (lambda m: m.normal(1.0, -2.0, (2, 3)), RuntimeError)]
    for fn, cls in cases:
        with pytest.raises(cls):
            fn(torch)
        with pytest.raises(cls):
            fn(dg)


# ---------------------------------------------------------------- the in-place fills

def test_in_place_fills_moments() -> None:
    x = dg.zeros(N).exponential_(2.0, generator=_gen(11)).numpy()
    _within(x.mean(), 0.5, 0.25, N, "exponential_(2)")
    x = dg.zeros(N).geometric_(0.25, generator=_gen(12)).numpy()
    assert x.min() >= 1 and np.all(x == np.round(x))
    _within(x.mean(), 4.0, (1 - 0.25) / 0.25 ** 2, N, "geometric_(0.25)")
    mu, s = 0.5, 0.4
    x = dg.zeros(N).log_normal_(mu, s, generator=_gen(13)).numpy()
    m = math.exp(mu + s * s / 2)
    _within(x.mean(), m, (math.exp(s * s) - 1) * m * m, N, "log_normal_")
    x = dg.zeros(N).cauchy_(1.0, 2.0, generator=_gen(14)).numpy()
    # the sample median of a Cauchy: variance (pi sigma)^2 / (4 n)
    _within(float(np.median(x)), 1.0, (math.pi * 2.0) ** 2 / 4, N, "cauchy_ median")
    x = dg.zeros(N, dtype=dg.int64).random_(-3, 7, generator=_gen(15)).numpy()
    assert x.min() == -3 and x.max() == 6
    _within(x.mean(), 1.5, (10 ** 2 - 1) / 12, N, "random_(-3, 7)")
    x = dg.zeros(N).random_(generator=_gen(16)).numpy()
    assert x.min() >= 0 and x.max() <= 2 ** 53 and np.all(x == np.round(x))
    x = dg.zeros(N, dtype=dg.float32).random_(generator=_gen(16)).numpy()
    assert x.max() <= 2 ** 24


def test_in_place_fills_keep_identity_bump_version_and_refuse_leaves() -> None:
    t = dg.zeros(4)
    before = t._version
    assert t.exponential_() is t and t._version == before + 1
    w = dg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.random_()
    with dg.no_grad():
        w.bernoulli_(0.5)
    assert w.is_leaf and w.requires_grad


@pytest.mark.oracle
def test_random_bounds_as_torch(torch) -> None:
    for dt in ("int64", "int32", "bool"):
        tt = torch.zeros(2000, dtype=getattr(torch, dt)).random_()
        dd = dg.zeros(2000, dtype=getattr(dg, dt)).random_()
        assert str(tt.dtype) == f"torch.{dd.dtype}"
        assert dd.numpy().min() >= 0
        assert int(dd.numpy().max()) <= int(torch.iinfo(getattr(torch, dt)).max if dt != "bool" else 1)
    with pytest.raises(RuntimeError):
        torch.ones(3, dtype=torch.int32).random_(0, 2 ** 40)
    with pytest.raises(RuntimeError):
        dg.ones(3, dtype=dg.int32).random_(0, 2 ** 40)


def test_compiled_draws_follow_each_call_and_match_eager() -> None:
    """Under dg.compile a draw is made anew on every replay, for that call's weights (the
    draw does not depend on them; what does is computed with primitives)."""
    def f(p):
        t = dg.tensor(p)
        return (dg.multinomial(t, 3, True), dg.multinomial(t + 0.5, 2), dg.bernoulli(t),
                dg.normal(t * 100, 0.01))
    calls = [np.array(p) for p in ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])]
    runs = []
    for compiled in (False, True):
        dg.manual_seed(21)
        run = dg.compile(f) if compiled else f
        runs.append([[x.tolist() for x in run(p)] for p in calls])
        if compiled:
            assert run.traces == 1
    assert runs[0] == runs[1]
    assert [r[0] for r in runs[1]] == [[0, 0, 0], [2, 2, 2], [1, 1, 1], [2, 2, 2]]
    assert runs[1][1][1] != runs[1][3][1] or runs[1][1][3] != runs[1][3][3]  # drawn anew
