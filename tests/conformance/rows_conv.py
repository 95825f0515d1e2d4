"""Rows for convolution, pooling, padding, resampling and sliding blocks (the conv branch).

Samples reach the edges the issue names: wide outputs (width >= 16) with overlapping
windows (the strided-add path of col2im, reached by every input gradient), batch 0 and 1,
unbatched inputs, groups > 1, dilation > 1, padding "same"/"valid", ceil_mode, and the
errors torch raises for a channel mismatch and a kernel larger than the padded input.
"""

from __future__ import annotations

import conv_reference as ref
import duograd as dg
from duograd.nn import functional as nnF
from opinfo import DISTINCT, REAL, F, S, row, spec_row as _row


def _F(m):
    return m.nn.functional


def _f(name):
    return lambda m, *a, **k: getattr(_F(m), name)(*a, **k)


def _top(name):
    return lambda m, *a, **k: getattr(m, name)(*a, **k)


# ---------------------------------------------------------------- convolution
CONV1D = [
    S(F(2, 3, 7), F(4, 3, 3), F(4)),
    S(F(1, 2, 20), F(3, 2, 4), F(3), stride=1, padding=2, label="wide_overlapping"),
    S(F(2, 4, 9), F(6, 2, 3), None, stride=2, padding=1, dilation=2, groups=2, label="groups_dilation"),
    S(F(1, 2, 8), F(3, 2, 4), F(3), padding="same", dilation=2, label="same_even_kernel"),
    S(F(1, 2, 8), F(3, 2, 4), padding="valid"),
    S(F(0, 2, 6), F(3, 2, 3), F(3), label="batch0"),
    S(F(2, 6), F(3, 2, 3), F(3), label="unbatched"),
]
CONV_ERRORS_1D = [S(F(1, 3, 6), F(4, 2, 3), label="channel_mismatch"),
                  S(F(1, 2, 3), F(4, 2, 6), padding=1, label="kernel_larger_than_padded_input")]
CONV2D = [
    S(F(2, 3, 5, 6), F(4, 3, 3, 2), F(4)),
    S(F(1, 2, 5, 20), F(3, 2, 3, 3), F(3), padding=1, label="wide_overlapping"),
    S(F(1, 2, 6, 19), F(2, 2, 2, 3), F(2), stride=(1, 1), dilation=(1, 2), label="wide_dilated"),
    S(F(2, 4, 7, 6), F(6, 2, 3, 3), F(6), stride=(2, 1), padding=(1, 2), dilation=2, groups=2,
      label="groups_dilation_stride"),
    S(F(1, 3, 6, 5), F(3, 1, 3, 3), None, padding="same", groups=3, label="depthwise_same"),
    S(F(1, 2, 6, 5), F(2, 2, 2, 4), F(2), padding="same", label="same_even_kernel"),
    S(F(1, 2, 4, 4), F(2, 2, 3, 3), padding="valid"),
    S(F(0, 2, 5, 5), F(3, 2, 3, 3), F(3), label="batch0"),
    S(F(2, 5, 5), F(3, 2, 3, 3), F(3), label="unbatched"),
]
CONV_ERRORS_2D = [S(F(1, 3, 5, 5), F(4, 2, 3, 3), label="channel_mismatch"),
                  S(F(1, 2, 3, 3), F(4, 2, 6, 3), padding=1, label="kernel_larger_than_padded_input"),
                  S(F(1, 4, 5, 5), F(4, 2, 3, 3), groups=3, label="groups_do_not_divide")]
CONV3D = [
    S(F(2, 2, 4, 5, 3), F(3, 2, 2, 3, 2), F(3)),
    S(F(1, 4, 5, 4, 4), F(4, 2, 3, 2, 2), F(4), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1), groups=2),
    S(F(1, 2, 3, 3, 18), F(2, 2, 2, 2, 3), None, padding="same", label="wide_same"),
]
for prefix, get in (("dg", _top), ("F", _f)):
    row(f"{prefix}.conv1d", get("conv1d"), CONV1D, errors=CONV_ERRORS_1D)
    row(f"{prefix}.conv2d", get("conv2d"), CONV2D, errors=CONV_ERRORS_2D)
    row(f"{prefix}.conv3d", get("conv3d"), CONV3D,
        errors=[S(F(1, 3, 4, 4, 4), F(2, 2, 2, 2, 2), label="channel_mismatch")])

CT1D = [
    S(F(2, 3, 5), F(3, 2, 3), F(2)),
    S(F(1, 2, 9), F(2, 3, 4), F(3), stride=2, padding=1, output_padding=1, label="wide_overlapping"),
    S(F(1, 4, 6), F(4, 2, 3), None, stride=3, padding=2, output_padding=2, groups=2, dilation=2,
      label="groups_dilation"),
    S(F(3, 5), F(3, 2, 2), F(2), stride=2, label="unbatched"),
    S(F(0, 3, 4), F(3, 2, 3), label="batch0"),
]
CT2D = [
    S(F(2, 3, 4, 3), F(3, 2, 3, 2), F(2)),
    S(F(1, 2, 4, 9), F(2, 3, 3, 3), F(3), stride=2, padding=1, output_padding=1, label="wide_overlapping"),
    S(F(1, 4, 3, 4), F(4, 1, 3, 2), F(2), stride=(2, 1), padding=(1, 0), output_padding=(1, 0),
      groups=2, dilation=(1, 2), label="groups_dilation"),
    S(F(1, 2, 3, 3), F(2, 2, 2, 2), stride=1, dilation=3, output_padding=2, label="output_padding_below_dilation"),
    S(F(3, 3, 3), F(3, 2, 2, 2), F(2), stride=2, label="unbatched"),
]
for prefix, get in (("dg", _top), ("F", _f)):
    row(f"{prefix}.conv_transpose1d", get("conv_transpose1d"), CT1D,
        errors=[S(F(1, 2, 5), F(3, 2, 3), label="channel_mismatch"),
                S(F(1, 3, 5), F(3, 2, 3), stride=2, output_padding=2, label="output_padding_too_large")])
    row(f"{prefix}.conv_transpose2d", get("conv_transpose2d"), CT2D,
        errors=[S(F(1, 2, 5, 5), F(3, 2, 3, 3), label="channel_mismatch")])
    row(f"{prefix}.conv_transpose3d", get("conv_transpose3d"),
        [S(F(1, 2, 3, 2, 3), F(2, 2, 2, 2, 2), F(2), stride=(2, 1, 2), padding=(0, 1, 0))])

# ---------------------------------------------------------------- pooling
D = "distinct"  # no ties: the winner of a window is unambiguous (torch and duograd agree on ties too,
# the first maximum wins, but finite differences and the float32 run are cleaner without them)
MP1D = [
    S(F(2, 3, 9, domain=D), 3),
    S(F(1, 2, 21, domain=D), 3, 1, 1, label="wide_overlapping"),
    S(F(1, 2, 10, domain=D), 3, 2, 1, 2, True, label="dilation_ceil"),
    S(F(2, 11, domain=D), 2, ceil_mode=True, label="unbatched_ceil"),
    S(F(0, 2, 6, domain=D), 2, label="batch0"),
]
MP2D = [
    S(F(2, 3, 6, 6, domain=D), 2),
    S(F(1, 2, 5, 20, domain=D), 3, 1, 1, label="wide_overlapping"),
    S(F(1, 2, 7, 8, domain=D), (3, 2), (2, 1), (1, 1), (2, 1), True, label="dilation_ceil"),
    S(F(1, 2, 5, 7, domain=D), 2, ceil_mode=True, label="ceil"),
    S(F(2, 5, 5, domain=D), 3, 2, 1, label="unbatched"),
]
POOL_ERRORS_2D = [S(F(1, 2, 3, 3), 5, label="kernel_larger_than_padded_input"),
                  S(F(1, 2, 6, 6), 2, 2, 2, label="padding_over_half_the_kernel")]
for prefix, get in (("dg", _top), ("F", _f)):
    row(f"{prefix}.max_pool1d", get("max_pool1d"), MP1D,
        errors=[S(F(1, 2, 3), 5, label="kernel_larger_than_padded_input")])
    row(f"{prefix}.max_pool2d", get("max_pool2d"), MP2D, errors=POOL_ERRORS_2D)
row("F.max_pool1d.return_indices", lambda m, x, *a, **k: _F(m).max_pool1d(x, *a, return_indices=True, **k),
    MP1D[:4])
row("F.max_pool2d.return_indices", lambda m, x, *a, **k: _F(m).max_pool2d(x, *a, return_indices=True, **k),
    MP2D)


def _unpool(d):
    def fn(m, x, k, s=None, p=0, **kw):
        F_ = _F(m)
        y, i = getattr(F_, f"max_pool{d}d")(x, k, s, p, return_indices=True)
        return getattr(F_, f"max_unpool{d}d")(y, i, k, s, p, **kw)
    return fn


row("F.max_unpool1d", _unpool(1), [S(F(2, 3, 8, domain=D), 2), S(F(1, 2, 9, domain=D), 3, 3, 1),
                                   S(F(1, 2, 9, domain=D), 3, 2, label="overlapping_windows_repeat_indices"),
                                   S(F(1, 2, 9, domain=D), 2, output_size=(9,))])
row("F.max_unpool2d", _unpool(2), [S(F(2, 2, 6, 6, domain=D), 2), S(F(1, 2, 6, 34, domain=D), 2, label="wide"),
                                   S(F(1, 1, 6, 6, domain=D), 2, 2, 1, label="padded"),
                                   S(F(3, 5, 4, domain=D), 2, output_size=(5, 5), label="unbatched")])

AP1D = [
    S(F(2, 3, 9), 3),
    S(F(1, 2, 21), 3, 1, 1, label="wide_overlapping"),
    S(F(1, 2, 10), 3, 2, 1, True, False, label="ceil_no_pad_count"),
    S(F(2, 11), 4, 3, 2, True, label="unbatched_ceil"),
    S(F(0, 2, 6), 2, label="batch0"),
]
AP2D = [
    S(F(2, 3, 6, 6), 2),
    S(F(1, 2, 5, 20), 3, 1, 1, label="wide_overlapping"),
    S(F(1, 2, 7, 8), (3, 2), (2, 1), 1, True, False, label="ceil_no_pad_count"),
    S(F(1, 2, 7, 8), 3, 2, 1, True, True, label="ceil_pad_count"),
    S(F(1, 2, 5, 6), 3, 2, 1, divisor_override=4, label="divisor_override"),
    S(F(2, 5, 5), 3, 2, 1, label="unbatched"),
]
for prefix, get in (("dg", _top), ("F", _f)):
    row(f"{prefix}.avg_pool1d", get("avg_pool1d"), AP1D,
        errors=[S(F(1, 2, 3), 5, label="kernel_larger_than_padded_input")])
row("dg.avg_pool2d", _top("avg_pool2d"), AP2D, errors=POOL_ERRORS_2D,
    torch_fn=_f("avg_pool2d"))  # torch has no top-level avg_pool2d: dg's is F's
row("F.avg_pool2d", _f("avg_pool2d"), AP2D, errors=POOL_ERRORS_2D)

# adaptive: windows of unequal sizes that overlap (7 -> 3, 5 -> 4), wide outputs, None sizes
ADA1 = [S(F(2, 3, 7), 3), S(F(1, 2, 40), 17, label="wide"), S(F(2, 5), 5, label="unbatched"),
        S(F(1, 2, 3), 5, label="upsampling")]
ADA2 = [S(F(2, 3, 7, 5), (3, 4)), S(F(1, 2, 5, 40), (2, 17), label="wide"), S(F(2, 6, 6), 4, label="unbatched"),
        S(F(1, 2, 7, 5), (None, 2), label="None_size"), S(F(1, 1, 3, 2), (4, 5), label="upsampling")]
for prefix, get in (("dg", _top), ("F", _f)):
    row(f"{prefix}.adaptive_avg_pool1d", get("adaptive_avg_pool1d"), ADA1)
row("F.adaptive_avg_pool2d", _f("adaptive_avg_pool2d"), ADA2)
ADA1_D = [S(F(*s.args[0].shape, domain=D), *s.args[1:], label=s.label) for s in ADA1]
ADA2_D = [S(F(*s.args[0].shape, domain=D), *s.args[1:], label=s.label) for s in ADA2]
row("dg.adaptive_max_pool1d", _top("adaptive_max_pool1d"), ADA1_D)
row("F.adaptive_max_pool1d", _f("adaptive_max_pool1d"), ADA1_D)
row("F.adaptive_max_pool1d.return_indices",
    lambda m, x, o: _F(m).adaptive_max_pool1d(x, o, return_indices=True), ADA1_D)
row("F.adaptive_max_pool2d", _f("adaptive_max_pool2d"), ADA2_D)
row("F.adaptive_max_pool2d.return_indices",
    lambda m, x, o: _F(m).adaptive_max_pool2d(x, o, return_indices=True), ADA2_D)

# ---------------------------------------------------------------- padding
row("F.pad", _f("pad"), [
    S(F(2, 3), (1, 2)), S(F(2, 3, 4), (1, 0, 2, 1, 0, 3), value=1.5, label="three_axes_value"),
    S(F(2, 3, 4), (-1, 2, 1, -1), label="negative_crops"),
    S(F(), (), label="0d_no_pad"), S(F(0, 3), (1, 1), label="empty"),
    S(F(1, 2, 5), (2, 3), mode="reflect"), S(F(1, 2, 4, 5), (1, 3, 2, 0), mode="reflect"),
    S(F(2, 3, 3, 4), (0, 2, 1, 2), mode="reflect", label="reflect_unbatched3d"),
    S(F(1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2), mode="reflect"),
    S(F(1, 2, 5), (3, 4), mode="replicate"), S(F(1, 2, 4, 5), (2, 1, 0, 3), mode="replicate"),
    S(F(1, 1, 2, 3, 3), (1, 2, 2, 1, 1, 1), mode="replicate"),
    S(F(1, 2, 5), (3, 5), mode="circular"), S(F(1, 2, 4, 5), (2, 1, 4, 3), mode="circular"),
    S(F(1, 1, 3, 2, 3), (1, 0, 2, 1, 0, 3), mode="circular"),
], errors=[S(F(1, 2, 3), (3, 0), mode="reflect", label="reflect_pad_too_large"),
           S(F(2, 3), (1, 1, 1, 1, 1, 1), label="more_axes_than_input"),
           S(F(2, 3), (1,), label="odd_length")])

# ---------------------------------------------------------------- interpolation
row("F.interpolate", _f("interpolate"), [
    S(F(2, 3, 5), scale_factor=2), S(F(1, 2, 7), size=4), S(F(1, 2, 3, 4), size=(5, 7)),
    S(F(1, 2, 3, 4), scale_factor=(2, 1.5)), S(F(1, 2, 5, 6), size=(3, 4), label="nearest_down"),
    S(F(1, 2, 4, 4), scale_factor=4.5, label="nearest_wide"),
    S(F(1, 2, 3, 4), size=(5, 7), mode="nearest-exact"),
    S(F(1, 2, 3, 4), size=(5, 18), mode="bilinear", align_corners=False, label="bilinear_wide"),
    S(F(1, 2, 3, 4), size=(5, 7), mode="bilinear", align_corners=True),
    S(F(2, 1, 4, 5), scale_factor=1.7, mode="bilinear", label="bilinear_scale"),
    S(F(2, 1, 4, 5), scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
    S(F(1, 2, 6, 6), size=(3, 2), mode="bilinear", align_corners=True, label="bilinear_down_corners"),
    S(F(1, 2, 6, 6), size=(1, 1), mode="bilinear", align_corners=True, label="bilinear_to_1x1"),
    S(F(2, 3, 5), size=8, mode="linear"), S(F(2, 3, 5), scale_factor=0.5, mode="linear", align_corners=True),
], errors=[S(F(1, 2, 3, 4), size=3, scale_factor=2, label="size_and_scale"),
           S(F(1, 2, 3), size=4, mode="bilinear", label="bilinear_on_3d")])

# ---------------------------------------------------------------- sliding blocks
row("F.unfold", _f("unfold"), [
    S(F(2, 3, 4, 5), 2), S(F(1, 2, 5, 20), 3, padding=1, label="wide_overlapping"),
    S(F(1, 2, 7, 8), (3, 2), dilation=(2, 1), padding=(1, 0), stride=(2, 3)),
    S(F(2, 4, 5), 2, stride=2, label="unbatched"),
], errors=[S(F(1, 2, 3, 3), 5, label="kernel_larger_than_padded_input")])
row("F.fold", _f("fold"), [
    S(F(2, 12, 12), (4, 5), 2), S(F(1, 18, 100), (5, 20), 3, padding=1, label="wide_overlapping"),
    S(F(1, 12, 9), (7, 8), (3, 2), dilation=(2, 1), padding=(1, 0), stride=(2, 3)),
    S(F(8, 4), (4, 5), 2, stride=2, label="unbatched"),
], errors=[S(F(1, 12, 11), (4, 5), 2, label="wrong_block_count")])

# ---------------------------------------------------------------- parameterless modules
# (the layers with parameters are compared in tests/nn_optim/test_conv_layers.py, loaded from
# a torch layer's state_dict: coverage_map.COVERED_BY)


def _module(name, *margs, **mkw):
    return lambda m, x: getattr(m.nn, name)(*margs, **mkw)(x)


row("nn.MaxPool1d", _module("MaxPool1d", 3, 2, 1, 2, ceil_mode=True), [F(2, 3, 20, domain=D), F(3, 9, domain=D)])
row("nn.MaxPool2d", _module("MaxPool2d", 3, 1, 1), [F(1, 2, 5, 18, domain=D), F(2, 4, 4, domain=D)])
row("nn.AvgPool1d", _module("AvgPool1d", 3, 2, 1, True, False), [F(2, 3, 20), F(3, 9)])
row("nn.AvgPool2d", _module("AvgPool2d", 3, 2, 1, True, True, 2), [F(1, 2, 5, 18), F(2, 4, 4)])
row("nn.AdaptiveAvgPool1d", _module("AdaptiveAvgPool1d", 4), [F(2, 3, 9), F(3, 2)])
row("nn.AdaptiveAvgPool2d", _module("AdaptiveAvgPool2d", (3, None)), [F(2, 3, 7, 5), F(3, 2, 20)])
row("nn.AdaptiveMaxPool1d", _module("AdaptiveMaxPool1d", 4), [F(2, 3, 9, domain=D)])
row("nn.AdaptiveMaxPool2d", _module("AdaptiveMaxPool2d", (3, 17), True), [F(1, 2, 7, 40, domain=D)])
row("nn.Upsample", _module("Upsample", scale_factor=2, mode="bilinear"), [F(1, 2, 3, 9), F(2, 1, 2, 2)])
row("nn.Unfold", _module("Unfold", 2, padding=1), [F(1, 2, 4, 17)])
row("nn.Fold", _module("Fold", (3, 18), 2), [F(2, 8, 34)])


def _unpool_module(d):
    def fn(m, x):
        y, i = getattr(m.nn, f"MaxPool{d}d")(2, return_indices=True)(x)
        return getattr(m.nn, f"MaxUnpool{d}d")(2)(y, i)
    return fn


row("nn.MaxUnpool1d", _unpool_module(1), [F(2, 3, 8, domain=D)])
row("nn.MaxUnpool2d", _unpool_module(2), [F(2, 3, 4, 34, domain=D)])


# ====================================================================== gradient-check variants (OP_SPECS)
# OP_SPECS rows for convolution, pooling, padding, resampling and sliding blocks (the conv
# branch): each checked by gradcheck, gradgradcheck, jvp, float32, replay and the torch oracle,
# against the loop references of tests/conv_reference.py. Shapes stay small (gradgradcheck
# differentiates every element twice); the rows marked ``wide`` have an output width of at least
# 16 with overlapping windows, the path where col2im adds with strided slices.
# (spec_row / selector_row: each joins the entry of its public name, opinfo.spec_entry_name)
# ---------------------------------------------------------------- convolution and pooling
# NCHW input, OIHW weight; the reference is a loop over output pixels (ref.py).
# Small shapes: gradgradcheck differentiates every input element twice.
CONVS = [
    # (label, x shape, w shape, bias, stride, padding)
    ("", (2, 2, 5, 4), (3, 2, 3, 2), True, 1, 0),
    ("stride_padding", (1, 2, 5, 6), (2, 2, 2, 3), True, (2, 1), (1, 2)),
    ("no_bias_1x1", (2, 3, 3, 4), (2, 3, 1, 1), False, 1, 0),
    ("kernel_is_padded_input", (1, 2, 3, 2), (2, 2, 5, 4), True, 1, 1),
]
for label, sx, sw, with_bias, stride, padding in CONVS:
    shapes = (sx, sw) + (((sw[0],),) if with_bias else ())
    _row("conv2d" + (f".{label}" if label else ""),
         lambda *a, s=stride, p=padding: dg.conv2d(*a, stride=s, padding=p),
         lambda *a, s=stride, p=padding: ref.conv2d_loop(*a, stride=s, padding=p),
         lambda torch, *a, s=stride, p=padding: torch.nn.functional.conv2d(*a, stride=s, padding=p),
         shapes)
POOLS = [
    # (label, x shape, kernel, stride, padding)
    ("", (2, 2, 4, 6), 2, None, 0),
    ("overlapping_padded", (1, 2, 5, 4), (3, 2), (2, 1), 1),
]
for label, sx, kernel, stride, padding in POOLS:
    for name, domain in (("max_pool2d", DISTINCT), ("avg_pool2d", REAL)):
        _row(name + (f".{label}" if label else ""),
             lambda x, f=getattr(dg, name), k=kernel, s=stride, p=padding: f(x, k, s, p),
             lambda x, f=getattr(ref, f"{name}_loop"), k=kernel, s=stride, p=padding:
             f(x, k, s, p),
             lambda torch, x, n=name, k=kernel, s=stride, p=padding:
             getattr(torch.nn.functional, n)(x, k, s, p),
             (sx,), (domain,))


CONV_ROWS = [
    # (name, x shape, w shape, bias, kwargs, reference padding)
    ("conv1d", (2, 2, 6), (3, 2, 3), True, {}, 0),
    ("conv1d.wide", (1, 1, 18), (2, 1, 3), True, {"padding": 1}, 1),
    ("conv1d.groups_dilation_stride", (1, 4, 9), (4, 2, 2), False,
     {"stride": 2, "dilation": 2, "groups": 2, "padding": 1}, 1),
    ("conv1d.same_even", (1, 2, 5), (2, 2, 4), True, {"padding": "same"}, [(1, 2)]),
    ("conv2d.wide", (1, 1, 3, 18), (2, 1, 2, 3), True, {"padding": (0, 1)}, (0, 1)),
    ("conv2d.groups_dilation", (1, 4, 5, 5), (4, 2, 2, 2), True,
     {"dilation": (2, 1), "groups": 2, "stride": (1, 2)}, 0),
    ("conv2d.same_dilated", (1, 2, 4, 4), (2, 2, 2, 3), False, {"padding": "same", "dilation": 2},
     [(1, 1), (2, 2)]),
    ("conv3d", (1, 2, 3, 3, 4), (2, 1, 2, 2, 2), True, {"padding": (0, 1, 0), "groups": 2}, (0, 1, 0)),
]
for name, sx, sw, with_bias, kw, ref_pad in CONV_ROWS:
    d = len(sx) - 2
    fname = f"conv{d}d"
    shapes = (sx, sw) + (((sw[0],),) if with_bias else ())
    ref_kw = {k: v for k, v in kw.items() if k != "padding"}
    _row(name, lambda *a, f=fname, k=kw: getattr(dg, f)(*a, **k),
         lambda *a, k=ref_kw, p=ref_pad: ref.conv_nd_loop(*a, padding=p, **k),
         lambda torch, *a, f=fname, k=kw: getattr(torch.nn.functional, f)(*a, **k), shapes)

CT_ROWS = [
    ("conv_transpose1d", (2, 2, 4), (2, 3, 3), True, {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose1d.wide_groups", (1, 2, 8), (2, 1, 3), True, {"stride": 2, "groups": 2}),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 2, 3), True, {"stride": (2, 1), "padding": (1, 0)}),
    ("conv_transpose2d.dilation_output_padding", (1, 2, 2, 3), (2, 1, 2, 2), False,
     {"dilation": 3, "output_padding": 2}),
    ("conv_transpose2d.wide", (1, 1, 2, 8), (1, 2, 2, 3), True, {"stride": (1, 2), "padding": (0, 1)}),
]
for name, sx, sw, with_bias, kw in CT_ROWS:
    d = len(sx) - 2
    fname = f"conv_transpose{d}d"
    shapes = (sx, sw) + (((sw[1] * kw.get("groups", 1),),) if with_bias else ())
    _row(name, lambda *a, f=fname, k=kw: getattr(dg, f)(*a, **k),
         lambda *a, k=kw: ref.conv_transpose_nd_loop(*a, **k),
         lambda torch, *a, f=fname, k=kw: getattr(torch.nn.functional, f)(*a, **k), shapes)

POOL_ROWS = [
    # (name, x shape, args (kernel, stride, padding), kwargs)
    ("max_pool1d.dilation_ceil", (1, 2, 9), (3, 2, 1), {"dilation": 2, "ceil_mode": True}),
    ("max_pool1d.wide", (1, 1, 19), (3, 1, 1), {}),
    ("max_pool2d.wide", (1, 1, 3, 19), ((2, 3), 1, (0, 1)), {}),
    ("max_pool2d.dilation_ceil", (1, 2, 6, 7), (2, 2, 1), {"dilation": (1, 2), "ceil_mode": True}),
    ("avg_pool1d.ceil_no_pad_count", (1, 2, 8), (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    ("avg_pool1d.wide", (1, 1, 19), (3, 1, 1), {}),
    ("avg_pool2d.wide", (1, 1, 3, 19), ((2, 3), 1, (0, 1)), {}),
    ("avg_pool2d.ceil_pad_count", (1, 2, 6, 7), (3, 2, 1), {"ceil_mode": True}),
    ("avg_pool2d.divisor_override", (1, 2, 5, 5), (2, 2, 1), {"divisor_override": 3}),
]
for name, sx, args, kw in POOL_ROWS:
    fname = name.split(".")[0]
    kind = fname[:3]
    ref_kw = {k: v for k, v in kw.items()}
    _row(name, lambda x, f=fname, a=args, k=kw: getattr(nnF, f)(x, *a, **k),
         lambda x, a=args, k=ref_kw, kd=kind: ref.pool_nd_loop(x, *a, kind=kd, **k),
         lambda torch, x, f=fname, a=args, k=kw: getattr(torch.nn.functional, f)(x, *a, **k),
         (sx,), (DISTINCT if kind == "max" else REAL,))

for name, sx, out, kind in (("adaptive_avg_pool1d", (1, 2, 7), 3, "avg"),
                            ("adaptive_avg_pool2d", (1, 2, 5, 7), (3, 4), "avg"),
                            ("adaptive_avg_pool2d.wide", (1, 1, 2, 20), (1, 17), "avg"),
                            ("adaptive_max_pool1d", (1, 2, 7), 3, "max"),
                            ("adaptive_max_pool2d", (1, 2, 5, 7), (3, 4), "max")):
    fname = name.split(".")[0]
    _row(name, lambda x, f=fname, o=out: getattr(nnF, f)(x, o),
         lambda x, o=out, k=kind: ref.adaptive_pool_nd_loop(x, o, k),
         lambda torch, x, f=fname, o=out: getattr(torch.nn.functional, f)(x, o),
         (sx,), (DISTINCT if kind == "max" else REAL,))

for name, sx, pad, mode, value in (("pad.constant", (2, 3, 4), (1, 2, 0, 1), "constant", 0.5),
                                   ("pad.constant_crop", (2, 3, 4), (-1, 2, 1, -1), "constant", 0.0),
                                   ("pad.reflect", (1, 2, 3, 4), (2, 1, 1, 2), "reflect", None),
                                   ("pad.replicate", (1, 2, 5), (3, 2), "replicate", None),
                                   ("pad.circular", (1, 2, 3, 4), (1, 3, 2, 1), "circular", None)):
    kw = {"mode": mode} if value is None else {"mode": mode, "value": value}
    crop = name.endswith("crop")  # (-1, 2, 1, -1): crop the first column and the last row, then pad
    _row(name, lambda x, p=pad, k=kw: nnF.pad(x, p, **k),
         (lambda x: ref.pad_loop(x[:, :-1, 1:], (0, 2, 1, 0))) if crop else
         (lambda x, p=pad, m=mode, v=value: ref.pad_loop(x, p, m, 0.0 if v is None else v)),
         lambda torch, x, p=pad, k=kw: torch.nn.functional.pad(x, p, **k), (sx,))

for name, sx, size, mode, ac in (("interpolate.nearest", (1, 2, 3, 4), (5, 7), "nearest", None),
                                 ("interpolate.bilinear", (1, 2, 3, 4), (5, 6), "bilinear", False),
                                 ("interpolate.bilinear_wide_corners", (1, 1, 2, 4), (3, 17), "bilinear", True),
                                 ("interpolate.linear", (2, 1, 5), (8,), "linear", False)):
    kw = {"size": size, "mode": mode} if ac is None else {"size": size, "mode": mode, "align_corners": ac}
    _row(name, lambda x, k=kw: nnF.interpolate(x, **k),
         lambda x, s=size, m=mode, a=ac: ref.interpolate_loop(x, s, "nearest" if m == "nearest" else "linear", bool(a)),
         lambda torch, x, k=kw: torch.nn.functional.interpolate(x, **k), (sx,))

for name, sx, args, kw in (("F.unfold", (1, 2, 4, 5), (2,), {"stride": (1, 2)}),
                           ("F.unfold.wide_dilated", (1, 1, 3, 19), ((2, 3),), {"dilation": (1, 1), "padding": (0, 1)})):
    _row(name, lambda x, a=args, k=kw: nnF.unfold(x, *a, **k), lambda x, a=args, k=kw: ref.unfold_loop(x, *a, **k),
         lambda torch, x, a=args, k=kw: torch.nn.functional.unfold(x, *a, **k), (sx,))
for name, sx, args, kw in (("fold", (1, 8, 4), ((3, 4), 2), {"stride": (1, 2)}),
                           ("fold.wide", (1, 6, 19), ((2, 19), (2, 3)), {"padding": (0, 1)})):
    _row(name, lambda x, a=args, k=kw: nnF.fold(x, *a, **k), lambda x, a=args, k=kw: ref.fold_loop(x, *a, **k),
         lambda torch, x, a=args, k=kw: torch.nn.functional.fold(x, *a, **k), (sx,))
