"""The conv branch's own checks beyond the spec and conformance rows: col2im accumulates on
both of its paths (a planted overwrite on the wide path once survived the suite), the two
paths agree, every primitive of the family is the adjoint of its partner, and bad calls
change nothing."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import conv as C
from duograd import indexing as I
from duograd.nn import functional as F
from conv_reference import fold_loop, unfold_loop


@pytest.mark.parametrize("width", [C._SHORT_RUN - 4, C._SHORT_RUN + 4, 40])
def test_col2im_accumulates_overlapping_windows_on_both_paths(width):
    """fold of all-ones columns counts how many windows cover each pixel: 3x3 windows at
    stride 1 cover the middle pixels 9 times (an overwrite would give 1)."""
    h = 6
    outs = (h - 2, width - 2)
    cols = np.ones((1, 2, 3, 3) + outs)
    got = C.col2im_p(dg.tensor(cols), shape=(1, 2, h, width), stride=(1, 1), padding=((0, 0), (0, 0)),
                     dilation=(1, 1)).detach().numpy()
    assert got[0, 0, 2, 2] == 9 and got[0, 1, 3, width // 2] == 9
    np.testing.assert_array_equal(got, fold_loop(cols.reshape(1, 18, -1), (h, width), 3))


@pytest.mark.parametrize("kernel,stride,dilation,pad", [((3, 3), (1, 1), (1, 1), (1, 1)),
                                                        ((2, 3), (1, 2), (2, 1), (0, 2)),
                                                        ((3, 2), (2, 1), (1, 3), (1, 0))])
def test_im2col_and_col2im_are_adjoint_and_both_paths_agree(kernel, stride, dilation, pad):
    rng = np.random.default_rng(0)
    for width in (7, 37):  # below and above _SHORT_RUN output columns
        x = rng.standard_normal((2, 3, 6, width))
        cols = C.im2col_p(dg.tensor(x), kernel=kernel, stride=stride, padding=tuple((p, p) for p in pad),
                          dilation=dilation, fill=0).detach().numpy()
        np.testing.assert_allclose(cols.reshape(2, -1, int(np.prod(cols.shape[-2:]))),
                                   unfold_loop(x, kernel, dilation, pad, stride), rtol=0, atol=0)
        y = rng.standard_normal(cols.shape)
        back = C.col2im_p(dg.tensor(y), shape=x.shape, stride=stride, padding=tuple((p, p) for p in pad),
                          dilation=dilation).detach().numpy()
        assert np.isclose(np.sum(cols * y), np.sum(x * back), rtol=1e-12)


def test_gather_and_scatter_add_along_are_adjoint():
    # the pair max-pooling's rules use (one index per line, the fast path) and with repeats
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 4))
    for m in (1, 3):
        g = rng.standard_normal((2, 3, m, 4))
        index = dg.tensor(rng.integers(0, 5, (2, 3, m, 4)))
        taken = I.gather_p(dg.tensor(x), index, axis=2).detach().numpy()
        put = I.scatter_add_along_p(dg.tensor(g), index, axis=2, shape=x.shape).detach().numpy()
        assert np.isclose(np.sum(taken * g), np.sum(x * put), rtol=1e-12)


def test_conv_input_gradient_is_a_transposed_conv_and_weight_gradient_a_conv():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 4, 7, 20)), rng.standard_normal((6, 2, 3, 3))
    xt, wt = dg.tensor(x, requires_grad=True), dg.tensor(w, requires_grad=True)
    out = dg.conv2d(xt, wt, stride=(1, 2), padding=1, dilation=(2, 1), groups=2)
    g = rng.standard_normal(out.shape)
    out.backward(dg.tensor(g))
    gx = dg.conv_transpose2d(dg.tensor(g), dg.tensor(w), stride=(1, 2), padding=1, dilation=(2, 1), groups=2,
                             output_padding=(0, 1))
    np.testing.assert_allclose(xt.grad.detach().numpy(), gx.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda x, w: dg.conv2d(x, w[:, :2]),
    lambda x, w: dg.conv2d(x, w, groups=2),
    lambda x, w: dg.conv_transpose2d(x, w, stride=2, output_padding=2),
    lambda x, w: F.max_pool2d(x, 9),
    lambda x, w: F.pad(x, (9, 0), mode="reflect"),
    lambda x, w: F.fold(x, (3, 3), 2),
])
def test_a_bad_call_raises_a_shape_error_naming_the_op_and_changes_nothing(call):
    x = dg.tensor(np.ones((1, 3, 5, 5)), requires_grad=True)
    w = dg.tensor(np.ones((3, 3, 3, 3)), requires_grad=True)
    with pytest.raises((ValueError, RuntimeError)) as info:
        call(x, w)
    assert any(n in str(info.value) for n in ("conv", "pool", "pad", "fold"))
    assert x.grad is None and w.grad is None and x.detach().numpy().sum() == 75
