"""``dg.compile`` replays that must read their values again, beyond the op table's samples
(tests/compiled/test_replay_every_sample.py): draws cast to a tensor's dtype, a reseed
inside ``fn``, indices computed from an argument, ``from_numpy`` of an array argument.
Each compares a replay on new values (or a new seed) with the eager call."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg


def _replay_and_eager(fn, first, then, seed=None):
    """``fn`` compiled and recorded on ``first()``, then replayed on ``then()``; and ``fn``
    run eagerly on ``then()`` (the generator seeded alike before both when ``seed``)."""
    fast = dg.compile(fn)
    fast(*first())
    if seed is not None:
        dg.manual_seed(seed)
    got = fast(*then())
    if seed is not None:
        dg.manual_seed(seed)
    want = fn(*then())
    return got, want


@pytest.mark.parametrize("fill", [
    lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.exponential_(),
    lambda t: t.random_(), lambda t: t.random_(3, 9), lambda t: t.geometric_(0.3),
    lambda t: t.cauchy_(), lambda t: t.log_normal_()],
    ids=["uniform_", "normal_", "exponential_", "random_", "random_(3, 9)", "geometric_",
         "cauchy_", "log_normal_"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_in_place_fill_is_drawn_again_in_the_tensors_dtype(fill, dtype):
    dt = getattr(dg, dtype)
    got, want = _replay_and_eager(lambda x: fill(x * 1), lambda: (dg.zeros(3, 4, dtype=dt),),
                                  lambda: (dg.ones(3, 4, dtype=dt),), seed=5)
    assert got.dtype == want.dtype == np.dtype(dtype)
    assert np.array_equal(got.numpy(), want.numpy())


def test_randperm_of_another_dtype_is_drawn_again():
    got, want = _replay_and_eager(lambda: dg.randperm(6, dtype=dg.float32), tuple, tuple, seed=2)
    assert got.dtype == np.float32 and np.array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("own", [False, True], ids=["dg.manual_seed", "Generator.manual_seed"])
def test_a_reseed_inside_fn_is_done_again_by_a_replay(own):
    g = dg.Generator() if own else None

    def fn(x):
        (g or dg.random.default_generator).manual_seed(11)
        return dg.rand(3, generator=g) + x
    fast = dg.compile(fn)
    fast(dg.zeros(3))
    (g or dg.random.default_generator).manual_seed(0)  # elsewhere: the replay reseeds
    got = fast(dg.zeros(3))
    want = fn(dg.zeros(3))
    assert np.array_equal(got.numpy(), want.numpy())
    assert (g or dg.random.default_generator).initial_seed() == 11


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_reads_its_index_again(accumulate):
    got, want = _replay_and_eager(
        lambda x, i: dg.put(x, i, dg.tensor([1.0, 2.0]), accumulate=accumulate),
        lambda: (dg.zeros(5), dg.tensor([0, -1])), lambda: (dg.zeros(5), dg.tensor([2, -2])))
    assert np.array_equal(got.numpy(), want.numpy())
    assert want.tolist() == [0.0, 0.0, 1.0, 2.0, 0.0]


def test_masked_scatter_records_again_when_the_mask_picks_another_number():
    fn = lambda x, m: dg.masked_scatter(x, m, dg.arange(1.0, 5.0))  # noqa: E731
    fast = dg.compile(fn)
    fast(dg.zeros(4), dg.tensor([True, False, False, False]))
    got = fast(dg.zeros(4), dg.tensor([False, True, True, True]))
    assert got.tolist() == fn(dg.zeros(4), dg.tensor([False, True, True, True])).tolist() \
        == [0.0, 1.0, 2.0, 3.0]
    assert fast.traces == 2


def test_poisson_announces_that_a_replay_draws_with_the_recorded_rates():
    fast = dg.compile(lambda lam: dg.poisson(lam))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fast(dg.ones(3))
    assert any("dg.compile" in str(w.message) and "poisson" in str(w.message) for w in caught)


def test_from_numpy_of_an_array_argument_shares_that_calls_array():
    def fn(a):
        t = dg.from_numpy(a)
        t.add_(1.0)
        return t * 2
    fast = dg.compile(fn)
    fast(np.zeros(2))
    b = np.full(2, 3.0)
    assert fast(b).tolist() == [8.0, 8.0] and b.tolist() == [4.0, 4.0]
    with pytest.raises(TypeError, match="from_numpy"):
        dg.from_numpy(dg.ones(2))  # eagerly a Tensor is refused
