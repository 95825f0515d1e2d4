"""Convolution and pooling written the slow, obvious way: a Python loop over every output
pixel, each one a sum or a max over its window. The independent truth that the spec rows
(``tests/specs.py``) and tests/ops/test_conv.py check ``dg.conv2d``, ``dg.max_pool2d`` and
``dg.avg_pool2d`` against; it shares no code with duograd.

>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> conv2d_loop(x, np.ones((1, 1, 2, 2)), stride=2)[0, 0]
array([[10., 18.],
       [42., 50.]])
>>> max_pool2d_loop(x, 2)[0, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np


def pair(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _pad(x: np.ndarray, padding: Any, fill: float) -> np.ndarray:
    ph, pw = pair(padding)
    n, c, h, w = x.shape
    xp = np.full((n, c, h + 2 * ph, w + 2 * pw), fill, dtype=np.float64)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    return xp


def conv2d_loop(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: Any = 1,
                padding: Any = 0) -> np.ndarray:
    """out[n, o, i, j] = b[o] + sum over c, di, dj of xpad[n, c, i*sh + di, j*sw + dj] w[o, c, di, dj]."""
    (sh, sw), xp = pair(stride), _pad(x, padding, 0.0)
    n, _, hp, wp = xp.shape
    o, _, kh, kw = w.shape
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for a in range(n):
        for f in range(o):
            for i in range(oh):
                for j in range(ow):
                    out[a, f, i, j] = np.sum(xp[a, :, i * sh:i * sh + kh, j * sw:j * sw + kw] * w[f])
                    if b is not None:
                        out[a, f, i, j] += b[f]
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def _pool_loop(x: np.ndarray, kernel: Any, stride: Any, padding: Any, fill: float, reduce) -> np.ndarray:
    (kh, kw) = pair(kernel)
    (sh, sw) = pair(kernel if stride is None else stride)
    xp = _pad(x, padding, fill)
    n, c, hp, wp = xp.shape
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for a in range(n):
        for f in range(c):
            for i in range(oh):
                for j in range(ow):
                    out[a, f, i, j] = reduce(xp[a, f, i * sh:i * sh + kh, j * sw:j * sw + kw])
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def max_pool2d_loop(x: np.ndarray, kernel: Any, stride: Any = None, padding: Any = 0) -> np.ndarray:
    """The largest value of each window; padding is -inf, so it never wins."""
    return _pool_loop(x, kernel, stride, padding, -np.inf, np.max)


def avg_pool2d_loop(x: np.ndarray, kernel: Any, stride: Any = None, padding: Any = 0) -> np.ndarray:
    """The mean of each window, padding zeros included (PyTorch's count_include_pad=True)."""
    return _pool_loop(x, kernel, stride, padding, 0.0, np.mean)


# ---------------------------------------------------------------- the N-d family (conv branch)
# Written from the definitions in torch's documentation, one output element at a time.

def _tup(v: Any, d: int) -> tuple[int, ...]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


def conv_nd_loop(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> np.ndarray:
    """out[n, o, *i] = b[o] + sum over c in o's group and kernel offsets k of
    xpad[n, c, *(i * s + k * dl)] * w[o, c - group start, *k]; padding is (lo, hi) pairs or ints."""
    d = x.ndim - 2
    s, dl = _tup(stride, d), _tup(dilation, d)
    pads = [p if isinstance(p, tuple) else (p, p) for p in (padding if isinstance(padding, list) else _tup(padding, d))]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    o, cg = w.shape[:2]
    ks = w.shape[2:]
    outs = [(xp.shape[2 + a] - (ks[a] - 1) * dl[a] - 1) // s[a] + 1 for a in range(d)]
    out = np.zeros((x.shape[0], o, *outs))
    og = o // groups
    for n in range(x.shape[0]):
        for f in range(o):
            g0 = (f // og) * cg
            for i in np.ndindex(*outs):
                acc = 0.0 if b is None else b[f]
                for k in np.ndindex(*ks):
                    at = tuple(i[a] * s[a] + k[a] * dl[a] for a in range(d))
                    acc += np.dot(xp[(n, slice(g0, g0 + cg)) + at], w[(f, slice(None)) + k])
                out[(n, f) + i] = acc
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def conv_transpose_nd_loop(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: Any = 1,
                           padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                           dilation: Any = 1) -> np.ndarray:
    """Each input element x[n, c, *i] adds x * w[c, o, *k] at output position i * s + k * dl - p."""
    d = x.ndim - 2
    s, p, op, dl = _tup(stride, d), _tup(padding, d), _tup(output_padding, d), _tup(dilation, d)
    ci, og = w.shape[:2]
    ks = w.shape[2:]
    outs = [(x.shape[2 + a] - 1) * s[a] - 2 * p[a] + (ks[a] - 1) * dl[a] + op[a] + 1 for a in range(d)]
    out = np.zeros((x.shape[0], og * groups, *outs))
    cig = ci // groups
    for n in range(x.shape[0]):
        for c in range(ci):
            g = c // cig
            for i in np.ndindex(*x.shape[2:]):
                for k in np.ndindex(*ks):
                    at = tuple(i[a] * s[a] + k[a] * dl[a] - p[a] for a in range(d))
                    if all(0 <= at[a] < outs[a] for a in range(d)):
                        out[(n, slice(g * og, (g + 1) * og)) + at] += x[(n, c) + i] * w[(c, slice(None)) + k]
    if b is not None:
        out += b.reshape((-1,) + (1,) * d)
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def pool_nd_loop(x: np.ndarray, kernel: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 ceil_mode: bool = False, kind: str = "max", count_include_pad: bool = True,
                 divisor_override: Any = None) -> np.ndarray:
    """torch's pooling by its definition: window i covers positions i * s - p + k * dl, clipped
    to the input (max) or to the padded input (the avg divisor with count_include_pad)."""
    d = x.ndim - 2
    k, p, dl = _tup(kernel, d), _tup(padding, d), _tup(dilation, d)
    s = k if stride is None else _tup(stride, d)
    outs = []
    for a in range(d):
        num = x.shape[2 + a] + 2 * p[a] - dl[a] * (k[a] - 1) - 1
        o = (-(-num // s[a]) if ceil_mode else num // s[a]) + 1
        if ceil_mode and (o - 1) * s[a] >= x.shape[2 + a] + p[a]:
            o -= 1
        outs.append(o)
    out = np.zeros(x.shape[:2] + tuple(outs))
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in np.ndindex(*outs):
                vals, padded_count = [], 1
                for a in range(d):
                    start = i[a] * s[a] - p[a]
                    padded_count *= min(start + k[a], x.shape[2 + a] + p[a]) - start
                for kk in np.ndindex(*k):
                    at = tuple(i[a] * s[a] - p[a] + kk[a] * dl[a] for a in range(d))
                    if all(0 <= at[a] < x.shape[2 + a] for a in range(d)):
                        vals.append(x[(n, c) + at])
                if kind == "max":
                    out[(n, c) + i] = max(vals)
                else:
                    div = divisor_override or (padded_count if count_include_pad else len(vals))
                    out[(n, c) + i] = sum(vals) / div
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def adaptive_pool_nd_loop(x: np.ndarray, output_size: Any, kind: str = "avg") -> np.ndarray:
    """Window i along an axis of size n (out size o) is [floor(i n / o), ceil((i + 1) n / o))."""
    d = x.ndim - 2
    outs = _tup(output_size, d)
    out = np.zeros(x.shape[:2] + tuple(outs))
    for i in np.ndindex(*outs):
        sl = tuple(slice(int(np.floor(i[a] * x.shape[2 + a] / outs[a])),
                         int(np.ceil((i[a] + 1) * x.shape[2 + a] / outs[a]))) for a in range(d))
        win = x[(slice(None), slice(None)) + sl].reshape(x.shape[:2] + (-1,))
        out[(slice(None), slice(None)) + i] = win.max(-1) if kind == "max" else win.mean(-1)
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def pad_loop(x: np.ndarray, pad: tuple, mode: str = "constant", value: float = 0.0) -> np.ndarray:
    """torch's F.pad through np.pad (reflect = 'reflect', replicate = 'edge', circular = 'wrap')."""
    widths = [(0, 0)] * x.ndim
    for j in range(len(pad) // 2):
        widths[x.ndim - 1 - j] = (pad[2 * j], pad[2 * j + 1])
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, widths, mode=np_mode, **kw)


def interpolate_loop(x: np.ndarray, size: tuple, mode: str = "nearest", align_corners: bool = False) -> np.ndarray:
    """Each output element from the source coordinate torch's documentation defines (size given)."""
    d = x.ndim - 2
    ins = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(size))
    for i in np.ndindex(*size):
        if mode == "nearest":
            src = tuple(min(int(np.floor(i[a] * ins[a] / size[a])), ins[a] - 1) for a in range(d))
            out[(slice(None), slice(None)) + i] = x[(slice(None), slice(None)) + src]
            continue
        corners = []
        for a in range(d):
            if align_corners:
                c = i[a] * (ins[a] - 1) / (size[a] - 1) if size[a] > 1 else 0.0
            else:
                c = max((i[a] + 0.5) * ins[a] / size[a] - 0.5, 0.0)
            lo = min(int(np.floor(c)), ins[a] - 1)
            corners.append(((lo, 1 - (c - lo)), (min(lo + 1, ins[a] - 1), c - lo)))
        for pick in np.ndindex(*(2,) * d):
            weight = np.prod([corners[a][pick[a]][1] for a in range(d)])
            at = tuple(corners[a][pick[a]][0] for a in range(d))
            out[(slice(None), slice(None)) + i] += weight * x[(slice(None), slice(None)) + at]
    return out.astype(x.dtype)  # (summed in float64, given in the input's dtype, as torch)


def unfold_loop(x: np.ndarray, kernel: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> np.ndarray:
    """Column (c, *k) of block l holds xpad[c, *(l * s + k * dl)], blocks in row-major order."""
    k, dl, p, s = _tup(kernel, 2), _tup(dilation, 2), _tup(padding, 2), _tup(stride, 2)
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    outs = [(xp.shape[2 + a] - (k[a] - 1) * dl[a] - 1) // s[a] + 1 for a in range(2)]
    cols = np.zeros((x.shape[0], x.shape[1] * k[0] * k[1], outs[0] * outs[1]))
    for col, i in enumerate(np.ndindex(*outs)):
        for c in range(x.shape[1]):
            for j, kk in enumerate(np.ndindex(*k)):
                cols[:, c * k[0] * k[1] + j, col] = xp[:, c, i[0] * s[0] + kk[0] * dl[0], i[1] * s[1] + kk[1] * dl[1]]
    return cols.astype(x.dtype)


def fold_loop(cols: np.ndarray, output_size: Any, kernel: Any, dilation: Any = 1, padding: Any = 0,
              stride: Any = 1) -> np.ndarray:
    """The adjoint of unfold_loop: each column entry added back at its position, padding dropped."""
    k, dl, p, s = _tup(kernel, 2), _tup(dilation, 2), _tup(padding, 2), _tup(stride, 2)
    size = _tup(output_size, 2)
    c = cols.shape[1] // (k[0] * k[1])
    xp = np.zeros((cols.shape[0], c, size[0] + 2 * p[0], size[1] + 2 * p[1]))
    outs = [(xp.shape[2 + a] - (k[a] - 1) * dl[a] - 1) // s[a] + 1 for a in range(2)]
    for col, i in enumerate(np.ndindex(*outs)):
        for ch in range(c):
            for j, kk in enumerate(np.ndindex(*k)):
                xp[:, ch, i[0] * s[0] + kk[0] * dl[0], i[1] * s[1] + kk[1] * dl[1]] += cols[:, ch * k[0] * k[1] + j, col]
    return xp[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]].astype(cols.dtype)
