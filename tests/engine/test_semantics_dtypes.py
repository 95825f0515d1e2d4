"""The rows of issue 18's "Where we stand" table that belong to dtypes, casts, indexing and
``numpy()``: each failed before real dtypes and gives torch's answer now. Where torch is
installed, the answer is checked against torch itself; the values are also spelled out."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg


def test_tensor_with_an_integer_dtype_is_int64() -> None:
    t = dg.tensor([1, 2], dtype=np.int64)
    assert t.dtype == np.int64 and t.dtype == dg.int64
    assert dg.tensor([1, 2]).dtype == dg.int64          # Python ints infer int64, as torch
    assert dg.tensor([True]).dtype == dg.bool
    assert dg.tensor([1.5]).dtype == np.float64         # the default float dtype


def test_asarray_gives_the_values() -> None:
    t = dg.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert a.dtype == np.float64 and a.shape == (2, 2)
    np.testing.assert_array_equal(a, [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="detach"):
        np.asarray(dg.tensor([1.0], requires_grad=True))


def test_bool_tensor_masks_rows() -> None:
    w = dg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    picked = w[dg.tensor([True, False, True])]
    np.testing.assert_array_equal(picked.numpy(), [[1.0, 2.0], [5.0, 6.0]])


def test_advanced_index_after_an_int_is_placed_as_torch() -> None:
    z = dg.zeros(2, 3, 4)
    assert z[0, :, [0, 1]].shape == (3, 2)
    assert np.zeros((2, 3, 4))[0, :, [0, 1]].shape == (2, 3)   # NumPy's rule, which we do not follow


def test_advanced_index_placement_matches_torch(torch) -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    for idx in [(0, slice(None), [0, 1]), ([0, 1], 0, [0, 1]), (slice(None), 0, [1, 2]),
                ([0, 1], slice(None), 0), (0, [0, 1], None, [1, 2]), (Ellipsis, 0, [1, 2])]:
        want = torch.from_numpy(x)[idx].numpy()
        got = dg.tensor(x)[idx].numpy()
        assert got.shape == want.shape, idx
        np.testing.assert_array_equal(got, want)


def test_from_numpy_of_an_int_array_shares_memory() -> None:
    a = np.arange(3)
    t = dg.from_numpy(a)
    assert t.dtype == dg.int64
    a[0] = 7
    assert t.tolist() == [7, 1, 2]


def test_long_and_to() -> None:
    x = dg.tensor([1.7, -2.2], requires_grad=True)
    y = x.long()
    assert y.dtype == dg.int64 and y.tolist() == [1, -2] and not y.requires_grad
    f = x.to(dg.float32)
    assert f.dtype == np.float32 and f.requires_grad
    f.sum().backward()
    assert x.grad.dtype == np.float64
    assert x.to("cpu") is x and x.to("cpu", dg.float64) is x
    assert dg.tensor([1, 2]).to(dg.float64).dtype == np.float64
    with pytest.raises(AssertionError):  # torch's class: "Torch not compiled with CUDA enabled"
        x.to("cuda")


def test_requires_grad_on_an_integer_tensor_raises() -> None:
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        dg.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        dg.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        dg.arange(3, requires_grad=True)


def test_numpy_of_a_tensor_that_requires_grad_raises() -> None:
    x = dg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


_KINDS = ["bool", "int32", "int64", "float32", "float64"]


def test_promotion_table_against_torch(torch) -> None:
    """Every pair of dtypes, dimensioned with dimensioned, with 0-d and with Python numbers
    (torch with float64 as its default dtype, duograd's)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        _promotion_table(torch)
    finally:
        torch.set_default_dtype(before)


def _promotion_table(torch) -> None:
    for a in _KINDS:
        for b in _KINDS:
            for sa, sb in [((3,), (3,)), ((3,), ()), ((), (3,))]:
                x = np.ones(sa, dtype=a)
                y = np.ones(sb, dtype=b)
                for op in ("add", "mul", "truediv"):
                    fn = {"add": lambda p, q: p + q, "mul": lambda p, q: p * q,
                          "truediv": lambda p, q: p / q}[op]
                    want = fn(torch.from_numpy(x), torch.from_numpy(y)).dtype
                    got = fn(dg.tensor(x), dg.tensor(y)).dtype
                    assert str(want) == f"torch.{got.name}", (a, sa, b, sb, op)
        for num in (2, 2.5, True):
            x = np.ones(3, dtype=a)
            want = (torch.from_numpy(x) * num).dtype
            got = (dg.tensor(x) * num).dtype
            assert str(want) == f"torch.{got.name}", (a, num)


def test_float32_stays_float32_forward_and_backward() -> None:
    x = dg.randn(4, 3, dtype=dg.float32, requires_grad=True)
    W = dg.randn(3, 2, dtype=dg.float32, requires_grad=True)
    loss = ((x @ W) * 2.0 + dg.tensor(1.0) - 1).relu().sum() / 3
    assert loss.dtype == np.float32
    loss.backward()
    assert x.grad.dtype == np.float32 and W.grad.dtype == np.float32


def test_integer_division_gives_the_default_float_dtype() -> None:
    assert (dg.tensor([1, 2]) / dg.tensor([2, 2])).tolist() == [0.5, 1.0]
    dg.set_default_dtype(dg.float32)
    try:
        assert (dg.tensor([1, 2]) / 2).dtype == np.float32
        assert dg.tensor([1.5]).dtype == np.float32 and dg.zeros(2).dtype == np.float32
    finally:
        dg.set_default_dtype(dg.float64)
    with pytest.raises(TypeError):
        dg.set_default_dtype(dg.int64)


def test_comparisons_and_argmax_dtypes() -> None:
    x = dg.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert (x > 2).dtype == dg.bool and (x == x).dtype == dg.bool
    assert x.argmax().dtype == dg.int64 and x.argmax(dim=1).tolist() == [1, 0]


def test_float_index_raises_index_error() -> None:
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        dg.zeros(3)[dg.tensor([0.0])]


def test_creation_dtypes_and_device() -> None:
    assert dg.arange(3).dtype == dg.int64 and dg.arange(3.0).dtype == dg.float64
    assert dg.linspace(0, 1, 3, dtype=dg.float32).dtype == dg.float32
    assert dg.zeros(2, dtype=dg.int32).dtype == dg.int32
    assert dg.ones_like(dg.tensor([1, 2])).dtype == dg.int64
    assert dg.zeros(2, device="cpu").device == dg.device("cpu")
    assert dg.zeros(2, device=dg.device("cpu")).shape == (2,)
    with pytest.raises(AssertionError, match="not compiled with CUDA"):  # torch's CPU build
        dg.zeros(2, device="cuda")
    assert (dg.long, dg.int, dg.float, dg.double) == (np.int64, np.int32, np.float32, np.float64)


def test_random_functions() -> None:
    dg.manual_seed(0)
    a = dg.rand(3)
    dg.manual_seed(0)
    assert dg.rand(3).tolist() == a.tolist()
    g = np.random.default_rng(1)
    r = dg.randint(2, 5, (1000,), generator=g)
    assert r.dtype == dg.int64 and r.min().item() == 2 and r.max().item() == 4
    assert sorted(dg.randperm(5).tolist()) == [0, 1, 2, 3, 4]
    n = dg.normal(3.0, 0.5, (20000,), generator=g)
    assert abs(n.mean().item() - 3.0) < 0.02 and abs(n.numpy().std() - 0.5) < 0.02
    assert dg.randn(2, rng=0).tolist() == dg.randn(2, rng=0).tolist()   # rng= kept
    assert dg.randn_like(dg.zeros(2, dtype=dg.float32)).dtype == dg.float32
    u = dg.rand(10000, generator=g)
    assert 0 <= u.min().item() and u.max().item() < 1 and abs(u.mean().item() - 0.5) < 0.02
