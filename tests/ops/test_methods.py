"""The Tensor methods and torch functions of tensor_api.py and the in-place twins, beyond what
a conformance row compares: finite-difference gradients (first and second order) of the
composed names, ``out=``, ``detach_``, ``numpy(force=)``, the in-place twins' versions and
gradients against torch, and the signature normaliser's refusals.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg


def _x(*shape: int, seed: int = 0, low: float = -2.0, high: float = 2.0) -> dg.Tensor:
    return dg.tensor(np.random.default_rng(seed).uniform(low, high, shape), requires_grad=True)


# ---------------------------------------------------------------- gradients of the composed names

COMPOSED = {
    "addcmul": lambda x, y: dg.addcmul(x, y, x, value=0.5),
    "addcdiv": lambda x, y: dg.addcdiv(x, x, y * y + 1.0, value=-2.0),
    "sub_alpha": lambda x, y: dg.sub(x, y, alpha=3.0),
    "rsub": lambda x, y: dg.rsub(x, y, alpha=0.5),
    "square": lambda x, y: dg.square(x) * y,
    "reciprocal": lambda x, y: dg.reciprocal(x * x + 1.0),
    "xlogy": lambda x, y: dg.xlogy(x, y * y + 0.5),
    "logit": lambda x, y: dg.logit(dg.sigmoid(x)) * y,
    "cross": lambda x, y: dg.cross(x, y, dim=1),
    "dist": lambda x, y: dg.dist(x, y, 3.0),
    "narrow": lambda x, y: dg.narrow(x, 1, 1, 2) * dg.narrow(y, 1, 0, 2),
    "tile": lambda x, y: dg.tile(x, (2, 1)),
    "kron": lambda x, y: dg.kron(x, y),
    "inner": lambda x, y: dg.inner(x, y),
    "nansum": lambda x, y: dg.nansum(x * y, 1),
    "nanmean": lambda x, y: dg.nanmean(x * y, 0),
    "var_mean": lambda x, y: dg.stack(list(dg.var_mean(x * y, 1))),
    "aminmax": lambda x, y: dg.stack(list(dg.aminmax(x + y, dim=1))),
    "diff": lambda x, y: dg.diff(x, 2, 1, prepend=y),
    "trapezoid": lambda x, y: dg.trapezoid(x, dim=1) * dg.cumulative_trapezoid(y, dim=1).sum(),
    "fmax": lambda x, y: dg.fmax(x, y) + dg.fmin(x, y) * 2,
    "index_copy": lambda x, y: dg.index_copy(x, 0, dg.tensor([2, 0]), y[:2]),
    "put": lambda x, y: dg.put(x, dg.tensor([0, 5, 0]), y[0], accumulate=True),
    "sum_to_size": lambda x, y: (x * y).sum_to_size(1, 3),
    "addmv": lambda x, y: dg.addmv(x[0], y, x[1], beta=0.5, alpha=2.0),
}


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_composed_gradients_match_finite_differences(name: str) -> None:
    f = COMPOSED[name]
    x, y = _x(3, 3, seed=1), _x(3, 3, seed=2)
    assert dg.gradcheck(f, (x, y))
    assert dg.gradgradcheck(lambda a, b: f(a, b).sum(), (x, y))


def test_gradcheck_takes_one_tensor() -> None:
    assert dg.gradcheck(lambda x: dg.square(x).sum(), _x(3))


# ---------------------------------------------------------------- in-place twins against torch

TWINS = [("relu_", ()), ("sigmoid_", ()), ("tanh_", ()), ("abs_", ()), ("sin_", ()), ("square_", ()),
         ("clamp_min_", (0.1,)), ("lerp_", ("other", 0.25)), ("addcmul_", ("other", "other")),
         ("xlogy_", ("pos",)), ("masked_fill_", ("mask", 0.5)), ("mul_", ("other",))]


@pytest.mark.oracle
@pytest.mark.parametrize("name,args", TWINS)
def test_twins_values_versions_and_gradients_match_torch(torch, name: str, args: tuple) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    mask = rng.integers(0, 2, (3, 4)).astype(bool)

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        o = lib.tensor(b, requires_grad=True)
        given = {"other": o, "pos": o * o + 0.5, "mask": lib.tensor(mask)}
        y = x * 2.0
        v = y._version
        out = getattr(y, name)(*[given.get(p, p) if isinstance(p, str) else p for p in args])
        assert out is y and y._version == v + 1
        (y * lib.tensor(b)).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), None if o.grad is None else o.grad.numpy()

    for d, t in zip(run(dg), run(torch)):
        if t is None:
            assert d is None or not np.any(d)
        else:
            np.testing.assert_allclose(d, t, rtol=1e-12, atol=1e-12)


def test_twin_on_a_view_changes_the_base() -> None:
    with dg.no_grad():
        base = dg.tensor([[-1.0, 2.0], [3.0, -4.0]])
        base[0].relu_()
    np.testing.assert_array_equal(base.numpy(), [[0.0, 2.0], [3.0, -4.0]])


def test_twin_of_a_leaf_that_requires_grad_raises_and_changes_nothing() -> None:
    x = dg.tensor([-1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.sigmoid_()
    np.testing.assert_array_equal(x.detach().numpy(), [-1.0, 2.0])
    assert x._version == 0


# ---------------------------------------------------------------- out=, detach_, numpy(force=)

def test_out_writes_into_the_given_tensor() -> None:
    out = dg.zeros(3)
    res = dg.add(dg.ones(3), dg.ones(3), alpha=2, out=out)
    assert res is out
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0, 3.0])
    dg.exp(dg.zeros(3), out=out)
    np.testing.assert_array_equal(out.numpy(), [1.0, 1.0, 1.0])
    empty = dg.tensor([])
    dg.mul(dg.ones(2), 4.0, out=empty)  # an empty out is resized, as torch
    np.testing.assert_array_equal(empty.numpy(), [4.0, 4.0])


def test_out_refuses_a_result_that_requires_grad_and_a_wrong_shape() -> None:
    with pytest.raises(RuntimeError, match="out="):
        dg.add(dg.ones(2, requires_grad=True), 1.0, out=dg.zeros(2))
    with pytest.raises(RuntimeError, match="shape"):
        dg.add(dg.ones(2), 1.0, out=dg.zeros(3))


def test_detach_in_place_cuts_the_history() -> None:
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert y.detach_() is y and y.is_leaf and not y.requires_grad


def test_numpy_force_detaches() -> None:
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        x.numpy()
    np.testing.assert_array_equal(x.numpy(force=True), [1.0, 2.0])


# ---------------------------------------------------------------- the signature normaliser

def test_axis_and_dim_together_refused() -> None:
    with pytest.raises(TypeError, match="axis"):
        dg.cumprod(dg.ones(3), dim=0, axis=0)
    with pytest.raises(TypeError, match="axis"):
        dg.ones(3).cummax(dim=0, axis=0)


def test_factory_keywords_checked() -> None:
    with pytest.raises(AssertionError, match="not compiled with CUDA"):  # torch's CPU build
        dg.full((2,), 1.0, device="cuda")
    with pytest.raises(NotImplementedError, match="layout"):
        dg.zeros(2, layout="torch.sparse_coo")
    with pytest.raises(RuntimeError, match="pin_memory"):
        dg.ones(2, pin_memory=True)


@pytest.mark.oracle
def test_public_functions_accept_torchs_keywords(torch) -> None:
    a, b = np.ones((2, 3)), np.ones((3, 2))
    for lib in (dg, torch):
        x, y = lib.tensor(a), lib.tensor(b)
        got = [lib.matmul(input=x, other=y), lib.mm(input=x, mat2=y), lib.exp(input=x),
               lib.sum(input=x, dim=1), lib.clamp(input=x, min=0.5), lib.transpose(input=x, dim0=0, dim1=1),
               lib.cumprod(x, axis=1), lib.all(x, axis=0), lib.any(x, axis=0)]
        if lib is dg:
            mine = [g.numpy() for g in got]
        else:
            for d, t in zip(mine, got):
                np.testing.assert_array_equal(d, t.numpy())


def test_logdet_gradients_and_tangent_match_finite_differences() -> None:
    from duograd.func import jvp
    a = _x(3, 3, seed=4)

    def f(x):
        return dg.logdet(x @ x.mT + dg.eye(3))
    assert dg.gradcheck(f, a) and dg.gradgradcheck(f, a)
    t = np.random.default_rng(5).standard_normal((3, 3))
    _, tangent = jvp(f, (a.detach(),), (dg.tensor(t),))
    eps = 1e-6
    fd = (f(dg.tensor(a.detach().numpy() + eps * t)) - f(dg.tensor(a.detach().numpy() - eps * t))) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), rtol=1e-6)
