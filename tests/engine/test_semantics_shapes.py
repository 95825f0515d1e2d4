"""Semantics of the shapes branch that the op and conformance tables do not state on their own:
the gradients of prod and cumprod at zeros to second order (against torch), what an index
may be, which results carry history, and that errors name the operation."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg

ZEROS = np.array([[2.0, 0.0, 3.0, -1.5], [0.0, 1.5, 0.0, 2.0], [1.0, -2.0, 0.5, 3.0]])


def _second_order(fn, x: np.ndarray, lib):
    """The gradient of sum(fn(x) * c) and the gradient of the squared norm of that gradient."""
    c = np.random.default_rng(1).standard_normal(np.shape(fn(np.asarray(x), np)))
    if lib == "dg":
        t = dg.tensor(x, requires_grad=True)
        (g,) = dg.grad((fn(t, dg) * dg.tensor(c)).sum(), t, create_graph=True)
        (h,) = dg.grad((g * g).sum(), t)
        return g.detach().numpy(), h.detach().numpy()
    import torch
    t = torch.tensor(x, requires_grad=True)
    (g,) = torch.autograd.grad((fn(t, torch) * torch.from_numpy(c)).sum(), t, create_graph=True)
    (h,) = torch.autograd.grad((g * g).sum(), t)
    return g.detach().numpy(), h.numpy()


@pytest.mark.oracle
@pytest.mark.parametrize("name,fn", [
    ("prod_rows", lambda x, m: x.prod(1) if m is not np else np.prod(x, 1)),
    ("prod_all", lambda x, m: x.prod() if m is not np else np.prod(x)),
    ("cumprod_rows", lambda x, m: x.cumprod(1) if m is not np else np.cumprod(x, 1)),
    ("cumprod_cols", lambda x, m: x.cumprod(0) if m is not np else np.cumprod(x, 0)),
])
def test_prod_and_cumprod_at_zeros_match_torch_to_second_order(torch, name, fn):
    # Row 0 has one zero, row 1 two, row 2 none: every case of the division-free rules.
    g, h = _second_order(fn, ZEROS, "dg")
    tg, th = _second_order(fn, ZEROS, "torch")
    np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, th, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index", [
    dg.full((2, 1), 1),                      # an int64 Tensor
    np.array([[1], [1]]),                    # an integer array
    [[1], [1]],                              # a list
    dg.tensor([[1.0], [1.0]]),               # a whole-number float Tensor (until int dtypes land)
], ids=["int64_tensor", "int_array", "list", "whole_float_tensor"])
def test_an_index_may_be_any_integer_kind(index):
    x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = dg.gather(x, 1, index)
    assert out.detach().numpy().tolist() == [[2.0], [4.0]]
    out.sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_a_fractional_index_is_refused_naming_the_op():
    with pytest.raises(RuntimeError, match="index_select"):
        dg.index_select(dg.ones(3), 0, dg.tensor([0.5]))


def test_indices_are_int64_without_history_and_values_keep_it():
    x = dg.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    for res in (x.sort(), x.topk(2), x.kthvalue(1), x.median(1), x.mode(1), x.cummax(1), x.cummin(1)):
        assert res.values.requires_grad
        assert res.indices.dtype == np.int64 and not res.indices.requires_grad
    for out in (x.argsort(), x.unique(), dg.nonzero(x), x.all(), x.any()):
        assert not out.requires_grad
    assert x.all().dtype == np.bool_ and dg.unique(x, return_counts=True)[1].dtype == np.int64


def test_sort_gradient_goes_back_through_the_permutation():
    x = dg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    (x.sort(descending=True).values * dg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.numpy().tolist() == [1.0, 100.0, 10.0]


def test_errors_name_the_operation_and_shapes_and_change_nothing():
    x = dg.tensor([[1.0, 2.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"gather.*out of bounds"):
        dg.gather(x, 1, np.array([[5]]))
    with pytest.raises(IndexError, match=r"flip: dim 2 .*\(1, 2\)"):
        x.flip(2)
    with pytest.raises(RuntimeError, match=r"cat: .*\(1, 2\).*\(2, 1\)"):
        dg.cat([x, dg.ones((2, 1))])
    assert x.grad is None


def test_numpy_names_keep_working_beside_torch_names():
    a, b = dg.ones((2, 3)), dg.zeros((2, 3))
    assert dg.concatenate([a, b], axis=1).shape == dg.cat([a, b], dim=1).shape == (2, 6)
    assert dg.stack([a, b], axis=2).shape == dg.stack([a, b], dim=-1).shape == (2, 3, 2)
    assert np.concatenate([a, b]).shape == (4, 3)   # NumPy's own function on Tensors


@pytest.mark.oracle
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_at_zeros_matches_torch_to_second_order(torch, include_self):
    # position 0: x = 2 with sources 0 and 5 (a lone zero source); 1: x = 0 with source 0 (two
    # zeros when x counts); 2: no zero; 3: sources 0 and -1.
    x, src = np.array([2.0, 0.0, 3.0, 1.5]), np.array([0.0, 5.0, 0.0, 2.0, 0.0, -1.0])
    index, weight = np.array([0, 0, 1, 2, 3, 3]), np.array([1.0, 2.0, 3.0, 4.0])
    got = []
    for lib in (dg, torch):
        X = lib.tensor(x, requires_grad=True)
        S = lib.tensor(src, requires_grad=True)
        idx = torch.from_numpy(index) if lib is torch else index
        out = lib.scatter_reduce(X, 0, idx, S, "prod", include_self=include_self)
        grad = dg.grad if lib is dg else torch.autograd.grad
        gx, gs = grad((out * lib.tensor(weight)).sum(), [X, S], create_graph=True)
        hx, hs = grad((gx * gx).sum() + (gs * gs).sum(), [X, S])
        got.append([np.array(t.detach().numpy()) for t in (out, gx, gs, hx, hs)])
    for mine, theirs in zip(*got):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
