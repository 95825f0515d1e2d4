"""The convolution family's rows: ``im2col_p`` and ``col2im_p`` (each the other's adjoint),
the pooling selectors and ``window_max_p``, and constant padding ``pad_p``.

- ``im2col_p`` copies every kernel window of the (padded) input out, once, into one
  contiguous array of layout (N, C, *kernel, *out): for each offset of the kernel, the
  plane of input pixels it touches at every output position (a strided view made
  contiguous, or one flat gather for narrow outputs; never a loop over pixels).
- ``col2im_p`` adds such an array back onto an input-shaped array (one strided add per
  kernel offset, or one ``bincount``). It is ``im2col``'s transpose and ``im2col`` is its
  transpose, so each one's VJP is the other and higher derivatives cost nothing more.
- ``window_max_p`` puts its gradient back with ``rows.indexing``'s gather/scatter pair, at
  the first maximum the selector ``window_argmax_p`` finds.

The public functions (``conv2d``, the pools, ``pad``, ``interpolate``, ``fold``, ...) are
in ``duograd/conv.py``, the layer above; its docstring says how they compose these rows.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..autograd import LINEAR, Primitive
from .._tensor import Tensor
from .indexing import gather_p, scatter_add_along_p

Ints = tuple[int, ...]
Pads = tuple[tuple[int, int], ...]

# ====================================================================== the primitives

def _padded(x: np.ndarray, pads: Pads, fill: Any) -> np.ndarray:
    """``x`` with (lo, hi) added around each of its last len(pads) axes; a negative hi crops."""
    d = len(pads)
    if any(hi < 0 for _, hi in pads):
        x = x[(Ellipsis,) + tuple(slice(0, n + hi if hi < 0 else None)
                                  for n, (_, hi) in zip(x.shape[-d:], pads))]
        pads = tuple((lo, max(hi, 0)) for lo, hi in pads)
    if not any(lo or hi for lo, hi in pads):
        return x
    lead, spatial = x.shape[:-d], x.shape[-d:]
    xp = np.empty(lead + tuple(n + lo + hi for n, (lo, hi) in zip(spatial, pads)), dtype=x.dtype)
    xp[...] = fill  # (np.pad costs more: it is Python around the same two writes)
    xp[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(spatial, pads))] = x
    return xp


def _fill_value(fill: Any, dtype: np.dtype) -> Any:
    # NOTE: max-pool pads with the lowest finite number of the dtype rather than -inf:
    # every window holds at least one real pixel (torch's rules on padding and ceil_mode
    # make sure of it), and no infinity ever sits in an array of the step.
    return np.finfo(dtype).min if fill == "lowest" else dtype.type(fill)


# NumPy copies and adds a strided array one innermost run at a time, and a run here is one
# row of output pixels. For narrow outputs (the digits' 8x8 and 4x4) those runs are a few
# elements long and the per-run cost dominates, so below this width both directions go
# through one flat index per window element instead: a gather (``take``) and its adjoint,
# a scatter-add (``np.bincount``). Both are a single C loop over every element.
_SHORT_RUN = 16


def _out_len(n: int, k: int, s: int, d: int) -> int:
    return (n - (k - 1) * d - 1) // s + 1


@functools.lru_cache(maxsize=128)
def _window_index(padded: Ints, kernel: Ints, stride: Ints, dilation: Ints, outs: Ints) -> np.ndarray:
    """Flat positions in a ``padded`` plane of every element of the first ``outs`` windows,
    in (*kernel, *out) order."""
    d = len(padded)
    strides = [int(np.prod(padded[i + 1:])) for i in range(d)]
    idx = np.zeros((1,) * (2 * d), dtype=np.intp)
    for i in range(d):
        kshape, oshape = [1] * (2 * d), [1] * (2 * d)
        kshape[i], oshape[d + i] = kernel[i], outs[i]
        pos = (dilation[i] * np.arange(kernel[i]).reshape(kshape)
               + stride[i] * np.arange(outs[i]).reshape(oshape))
        idx = idx + pos * strides[i]
    idx = idx.ravel()
    idx.flags.writeable = False  # shared by every call with these shapes
    return idx


_SCATTER_CACHE: dict[tuple, np.ndarray] = {}


def _scatter_index(planes: int, padded: Ints, kernel: Ints, stride: Ints, dilation: Ints,
                   outs: Ints) -> np.ndarray:
    """``_window_index`` repeated for each of ``planes`` (n, c) planes, offset to its plane;
    kept for the next call when it is small (a training step repeats its shapes)."""
    key = (planes, padded, kernel, stride, dilation, outs)
    idx = _SCATTER_CACHE.get(key)
    if idx is None:
        plane = _window_index(padded, kernel, stride, dilation, outs)
        idx = (np.arange(planes)[:, None] * math.prod(padded) + plane).ravel()
        if idx.size <= 1 << 22:
            if len(_SCATTER_CACHE) >= 32:
                _SCATTER_CACHE.pop(next(iter(_SCATTER_CACHE)))
            idx.flags.writeable = False
            _SCATTER_CACHE[key] = idx
    return idx


def _im2col(x: np.ndarray, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
            fill: Any) -> np.ndarray:
    d = len(kernel)
    xp = _padded(x, padding, _fill_value(fill, x.dtype))
    n, c = xp.shape[:2]
    padded = xp.shape[2:]
    outs = tuple(_out_len(m, k, s, dl) for m, k, s, dl in zip(padded, kernel, stride, dilation))
    if outs[-1] < _SHORT_RUN:
        # take, not x[..., idx]: fancy indexing lays its result out batch-innermost
        flat = xp.reshape(n * c, math.prod(padded)).take(_window_index(padded, kernel, stride, dilation, outs), axis=1)
        return flat.reshape((n, c) + kernel + outs)
    spans = tuple((k - 1) * dl + 1 for k, dl in zip(kernel, dilation))
    win = sliding_window_view(xp, spans, axis=tuple(range(2, 2 + d)))  # (N, C, *positions, *spans)
    win = win[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)
              + tuple(slice(None, None, dl) for dl in dilation)]
    win = win[(slice(None),) * 2 + tuple(slice(0, o) for o in outs)]
    axes = (0, 1) + tuple(range(2 + d, 2 + 2 * d)) + tuple(range(2, 2 + d))
    return np.ascontiguousarray(win.transpose(axes))                  # (N, C, *kernel, *out)


def _col2im(cols: np.ndarray, shape: Ints, stride: Ints, padding: Pads, dilation: Ints) -> np.ndarray:
    """Add every window of ``cols`` back onto zeros of ``shape`` padded by ``padding``'s lo
    sides (and as far on the hi sides as the windows reach), then drop the padding."""
    d = len(stride)
    n, c = shape[:2]
    kernel, outs = tuple(cols.shape[2:2 + d]), tuple(cols.shape[2 + d:])
    padded = tuple(max(lo + m, (o - 1) * s + (k - 1) * dl + 1)
                   for m, (lo, _), o, s, k, dl in zip(shape[2:], padding, outs, stride, kernel, dilation))
    if outs[-1] < _SHORT_RUN:
        index = _scatter_index(n * c, padded, kernel, stride, dilation, outs)
        xp = np.bincount(index, cols.ravel(), minlength=n * c * math.prod(padded))
        xp = xp.astype(cols.dtype, copy=False).reshape((n, c) + padded)
    else:
        xp = np.zeros((n, c) + padded, dtype=cols.dtype)
        for offset in np.ndindex(*kernel):  # one strided add per kernel offset, never per pixel
            at = tuple(slice(i * dl, i * dl + s * (o - 1) + 1, s)
                       for i, dl, s, o in zip(offset, dilation, stride, outs))
            xp[(slice(None), slice(None)) + at] += cols[(slice(None), slice(None)) + offset]
    if all(lo == 0 and p == m for (lo, _), p, m in zip(padding, padded, shape[2:])):
        return xp
    return xp[(slice(None), slice(None)) + tuple(slice(lo, lo + m) for (lo, _), m in zip(padding, shape[2:]))]


def _col2im_vjp(g: Tensor, out: Tensor, cols: Tensor, shape: Ints, stride: Ints, padding: Pads,
                dilation: Ints) -> Tensor:
    d = len(stride)
    kernel, outs = cols.shape[2:2 + d], cols.shape[2 + d:]
    # pad (or crop) the hi side so that exactly ``outs`` windows fit, as in the forward
    pads = tuple((lo, (o - 1) * s + (k - 1) * dl + 1 - lo - m)
                 for (lo, _), o, s, k, dl, m in zip(padding, outs, stride, kernel, dilation, shape[2:]))
    return im2col_p(g, kernel=kernel, stride=stride, padding=pads, dilation=dilation, fill=0)


# im2col is affine in x (linear plus the constant fill), so its tangent is im2col of the
# tangent with a zero fill; its adjoint drops whatever landed on the padding.
im2col_p = Primitive(
    "im2col", _im2col,
    vjp=(lambda g, out, x, kernel, stride, padding, dilation, fill:
         col2im_p(g, shape=x.shape, stride=stride, padding=padding, dilation=dilation),),
    jvp=(lambda t, out, x, kernel, stride, padding, dilation, fill:
         im2col_p(t, kernel=kernel, stride=stride, padding=padding, dilation=dilation, fill=0),))
# col2im is linear, and im2col (zero fill) is its adjoint.
col2im_p = Primitive("col2im", _col2im, vjp=(_col2im_vjp,), jvp=LINEAR)


# The first maximum along ``axis``, kept as a length-1 axis (NaN wins, as in torch).
window_argmax_p = Primitive("window_argmax", lambda x, axis: np.argmax(x, axis=axis, keepdims=True),
                            differentiable=False)
# The largest element along ``axis`` (kept, length 1). NOTE: its whole gradient goes to the
# first maximum, the element torch's max_pool picks; the selector finds it in the rules only,
# so a forward pass without gradients is one reduction.
window_max_p = Primitive(
    "window_max", lambda x, axis: np.max(x, axis=axis, keepdims=True),
    vjp=(lambda g, out, x, axis: scatter_add_along_p(g, window_argmax_p(x, axis=axis), axis=axis,
                                                     shape=x.shape),),
    jvp=(lambda t, out, x, axis: gather_p(t, window_argmax_p(x, axis=axis), axis=axis),))
# Flat input positions (torch's ``return_indices``) of the window elements chosen by ``index``.
window_position_p = Primitive(
    "window_position", lambda index, table: np.take_along_axis(
        np.broadcast_to(table, index.shape[:-2] + table.shape), index.astype(np.intp), axis=-2)[..., 0, :],
    differentiable=False)


def _pad_forward(x: np.ndarray, pads: Pads, value: float) -> np.ndarray:
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape[-len(pads):], pads))
    x = x[(Ellipsis,) + crop]
    return _padded(x, tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads), x.dtype.type(value))


def _pad_vjp(g: Tensor, out: Tensor, x: Tensor, pads: Pads, value: float) -> Tensor:
    # the adjoint of padding is the slice that drops the padding (and zeros for what was cropped)
    inner = tuple((-lo, -hi) for lo, hi in pads)
    return pad_p(g, pads=inner, value=0.0)


# Constant padding of the last len(pads) axes, (lo, hi) each; negative numbers crop. Its
# adjoint is the same op with the signs flipped (crop what was padded, pad what was cropped).
pad_p = Primitive("pad", _pad_forward, vjp=(_pad_vjp,),
                  jvp=(lambda t, out, x, pads, value: pad_p(t, pads=pads, value=0.0),))
