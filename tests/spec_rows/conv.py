"""OP_SPECS rows for convolution, pooling, padding, resampling and sliding blocks (the conv
branch): each checked by gradcheck, gradgradcheck, jvp, float32, replay and the torch oracle,
against the loop references of tests/conv_reference.py. Shapes stay small (gradgradcheck
differentiates every element twice); the rows marked ``wide`` have an output width of at least
16 with overlapping windows, the path where col2im adds with strided slices."""

from __future__ import annotations

import conv_reference as ref
import duograd as dg
from duograd.nn import functional as F
from specs import DISTINCT, REAL, _row

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
    _row(name, lambda x, f=fname, a=args, k=kw: getattr(F, f)(x, *a, **k),
         lambda x, a=args, k=ref_kw, kd=kind: ref.pool_nd_loop(x, *a, kind=kd, **k),
         lambda torch, x, f=fname, a=args, k=kw: getattr(torch.nn.functional, f)(x, *a, **k),
         (sx,), (DISTINCT if kind == "max" else REAL,))

for name, sx, out, kind in (("adaptive_avg_pool1d", (1, 2, 7), 3, "avg"),
                            ("adaptive_avg_pool2d", (1, 2, 5, 7), (3, 4), "avg"),
                            ("adaptive_avg_pool2d.wide", (1, 1, 2, 20), (1, 17), "avg"),
                            ("adaptive_max_pool1d", (1, 2, 7), 3, "max"),
                            ("adaptive_max_pool2d", (1, 2, 5, 7), (3, 4), "max")):
    fname = name.split(".")[0]
    _row(name, lambda x, f=fname, o=out: getattr(F, f)(x, o),
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
    _row(name, lambda x, p=pad, k=kw: F.pad(x, p, **k),
         (lambda x: ref.pad_loop(x[:, :-1, 1:], (0, 2, 1, 0))) if crop else
         (lambda x, p=pad, m=mode, v=value: ref.pad_loop(x, p, m, 0.0 if v is None else v)),
         lambda torch, x, p=pad, k=kw: torch.nn.functional.pad(x, p, **k), (sx,))

for name, sx, size, mode, ac in (("interpolate.nearest", (1, 2, 3, 4), (5, 7), "nearest", None),
                                 ("interpolate.bilinear", (1, 2, 3, 4), (5, 6), "bilinear", False),
                                 ("interpolate.bilinear_wide_corners", (1, 1, 2, 4), (3, 17), "bilinear", True),
                                 ("interpolate.linear", (2, 1, 5), (8,), "linear", False)):
    kw = {"size": size, "mode": mode} if ac is None else {"size": size, "mode": mode, "align_corners": ac}
    _row(name, lambda x, k=kw: F.interpolate(x, **k),
         lambda x, s=size, m=mode, a=ac: ref.interpolate_loop(x, s, "nearest" if m == "nearest" else "linear", bool(a)),
         lambda torch, x, k=kw: torch.nn.functional.interpolate(x, **k), (sx,))

for name, sx, args, kw in (("F.unfold", (1, 2, 4, 5), (2,), {"stride": (1, 2)}),
                           ("F.unfold.wide_dilated", (1, 1, 3, 19), ((2, 3),), {"dilation": (1, 1), "padding": (0, 1)})):
    _row(name, lambda x, a=args, k=kw: F.unfold(x, *a, **k), lambda x, a=args, k=kw: ref.unfold_loop(x, *a, **k),
         lambda torch, x, a=args, k=kw: torch.nn.functional.unfold(x, *a, **k), (sx,))
for name, sx, args, kw in (("fold", (1, 8, 4), ((3, 4), 2), {"stride": (1, 2)}),
                           ("fold.wide", (1, 6, 19), ((2, 19), (2, 3)), {"padding": (0, 1)})):
    _row(name, lambda x, a=args, k=kw: F.fold(x, *a, **k), lambda x, a=args, k=kw: ref.fold_loop(x, *a, **k),
         lambda torch, x, a=args, k=kw: torch.nn.functional.fold(x, *a, **k), (sx,))
