"""The operations that are never differentiated: comparisons, argmax, argmin.

Every row of specs.SELECTOR_SPECS is checked four ways: its values and dtype against
NumPy (exactly: bool for a comparison, int64 for argmax/argmin), that its result has
no history even when every input requires grad, against PyTorch (marked ``oracle``),
and the replay of tests/compiled/test_tensor_replay.py (recorded on inputs A, replayed on B,
bit for bit), alone and used as a selector inside a differentiated step.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
import pytest

import duograd as dg
from specs import COMPARISONS, SELECTOR_SPECS, make_inputs
from test_tensor_replay import assert_replays

each_spec = pytest.mark.parametrize("spec", SELECTOR_SPECS, ids=attrgetter("name"))


@each_spec
def test_forward_matches_numpy_exactly(spec):
    arrays = make_inputs(spec)
    out = spec.fn(*[dg.tensor(a) for a in arrays])
    want = np.asarray(spec.ref(*arrays))
    assert isinstance(out, dg.Tensor)
    assert out.shape == want.shape and out.dtype == want.dtype
    assert out.dtype == (np.int64 if spec.name.startswith("arg") else np.bool_)
    np.testing.assert_array_equal(out.numpy(), want)


def test_comparisons_see_ties():
    """The INTEGER domain gives == and != something to find: both outcomes occur."""
    for spec in SELECTOR_SPECS:
        if spec.name.startswith(("==", "!=")):
            out = spec.fn(*[dg.tensor(a) for a in make_inputs(spec)]).numpy()
            assert out.any() and not out.all(), spec.name


@each_spec
def test_result_has_no_history(spec):
    xs = [dg.tensor(a, requires_grad=True) for a in make_inputs(spec)]
    out = spec.fn(*xs)
    assert not out.requires_grad
    assert out.grad_fn is None and out._node is None and out.grad is None
    # and it stops nothing: a product with it still differentiates the other factor
    if out.dtype == np.bool_:
        (g,) = dg.grad((xs[0] * out).sum(), xs[0])
        np.testing.assert_array_equal(g.numpy(), _sum_to(out.numpy().astype(np.float64), xs[0].shape))


def _sum_to(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` created."""
    a = a.sum(axis=tuple(range(a.ndim - len(shape))))
    return a.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


@pytest.mark.parametrize("sym", list(COMPARISONS))
def test_comparison_with_a_numpy_array_on_either_side(sym):
    cmp, np_cmp = COMPARISONS[sym]
    rng = np.random.default_rng(1)
    a, x = rng.integers(-1, 2, (3, 4)).astype(float), rng.integers(-1, 2, (4,)).astype(float)
    t = dg.tensor(x, requires_grad=True)
    for out, want in ((cmp(t, a), np_cmp(x, a)), (cmp(a, t), np_cmp(a, x))):
        assert isinstance(out, dg.Tensor) and out.dtype == np.bool_ and not out.requires_grad
        np.testing.assert_array_equal(out.numpy(), want)


def test_tensors_hash_by_identity():
    """== is elementwise, so a Tensor's hash is its identity: sets and dict keys still work."""
    x, y = dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.0])
    assert len({x, y}) == 2 and {x: 1}[x] == 1
    assert (x == None) is False and (x != "a") is True  # noqa: E711 -- not elementwise


@pytest.mark.oracle
@each_spec
def test_matches_torch(torch, spec):
    arrays = make_inputs(spec)
    out = spec.fn(*[dg.tensor(a) for a in arrays])
    t_out = spec.torch_fn(torch, *[torch.from_numpy(a) for a in arrays])
    assert out.shape == tuple(t_out.shape)
    assert out.dtype == np.dtype(str(t_out.dtype).removeprefix("torch."))
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())


@each_spec
def test_replays_bit_for_bit(spec):
    """Recorded on A, replayed on B: the selector is a primitive call like any other."""
    def step(*xs):
        out = spec.fn(*xs)
        # assert_replays measures a difference by subtracting, which bool arrays refuse;
        # 0/1 as float64 (a recorded cast) compares the same bits.
        return [out.astype(np.float64) if out.dtype == np.bool_ else out]
    a, b = make_inputs(spec, seed=0), make_inputs(spec, seed=1)
    assert assert_replays(step, a, b) > 0


@pytest.mark.parametrize("spec", [s for s in SELECTOR_SPECS if not s.name.startswith("arg")],
                         ids=attrgetter("name"))
def test_replays_as_a_selector_in_a_differentiated_step(spec):
    """where(x op y, x * y, x + y): the mask decides the values and the gradients."""
    def step(*xs):
        out = dg.where(spec.fn(*xs), xs[0] * 2.0, xs[0] * xs[0]).sum()
        out.backward()
        return [out, xs[0].grad]
    a, b = make_inputs(spec, seed=0), make_inputs(spec, seed=1)
    assert assert_replays(step, a, b) > 0
