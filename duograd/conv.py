"""Convolution, pooling, padding, resampling and sliding windows on (N, C, *spatial) tensors,
with torch.nn.functional's meaning: ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``,
``max_pool1d/2d`` (and ``max_unpool1d/2d``), ``avg_pool1d/2d``, the adaptive pools, ``pad``,
``interpolate``, ``unfold`` and ``fold``.

Everything is a composition of a few primitives (their rows are in ``duograd/rows/conv.py``
and re-exported here), so gradients of every order, forward mode and capture come from
rules that already exist:

- ``im2col_p`` / ``col2im_p``: every kernel window of the (padded) input copied out into
  one contiguous array, and such an array added back; each is the other's adjoint
  (``duograd/rows/conv.py`` says how they are computed).
- ``indexing.gather_p`` / ``indexing.scatter_add_along_p`` (the one gather/scatter pair along
  an axis) pick one element along an axis at given indices and put it back: each is the
  other's adjoint. Max-pooling's VJP puts its gradient back with them, at the indices a
  selector (``window_argmax_p``) chose; max_unpool writes with ``indexing.scatter_along_p``.

Then, with K = C/groups * prod(kernel) and P = prod(out):

- ``conv(x, w, b)`` = ``reshape(w, (G, O/G, K)) @ reshape(im2col(x), (N, G, K, P))`` + b:
  one BLAS contraction. Its input-VJP is ``col2im(w^T @ g)``, a transposed convolution,
  its weight-VJP ``g @ cols^T``, a convolution of the input with g.
- ``conv_transpose(x, w, b)`` = ``col2im(w^T @ x)`` + b: the same two members of the
  family the other way round, so its VJPs are a convolution (input) and a correlation
  (weight).
- ``max_pool`` = ``window_max(im2col(x, fill=lowest))``, whose VJP puts g at the window's
  first maximum (``scatter_add_along`` at the selector ``window_argmax``), as torch does; ``avg_pool`` = the sum over the kernel
  axes of ``im2col(x)`` times a constant divisor.

The public functions check their arguments first and raise an error naming the operation
and the shapes, before any primitive runs, so a bad call changes nothing.

>>> import duograd as dg
>>> x = dg.ones((1, 1, 3, 3), requires_grad=True)
>>> y = dg.conv2d(x, dg.ones((1, 1, 2, 2)))
>>> y.detach().numpy()
array([[[[4., 4.],
         [4., 4.]]]])
>>> y.sum().backward()
>>> x.grad.numpy()[0, 0]
array([[1., 2., 1.],
       [2., 4., 2.],
       [1., 2., 1.]])
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from .indexing import as_index, scatter_along_p
from .ops import getitem_p, matmul_p, reshape_p, sum_p, transpose_p
from ._tensor import Tensor, _lift_all, tensor
# The rows, every one re-exported (rows/conv.py).
from .rows.conv import (  # noqa: F401
    im2col_p, col2im_p, window_argmax_p, window_max_p, window_position_p, pad_p,
    _SHORT_RUN, _out_len, _window_index)

Ints = tuple[int, ...]
Pads = tuple[tuple[int, int], ...]


class ConvShapeError(ValueError, RuntimeError):
    """A convolution, pooling or padding call whose shapes do not fit together. torch raises
    RuntimeError here; it is a ValueError too, as duograd's shape errors are."""


# ====================================================================== argument checks

def _ints(value: Any, n: int, name: str, op: str, minimum: int) -> Ints:
    """An int or a sequence of ``n`` ints, each at least ``minimum``, as an n-tuple."""
    if type(value) is int and value >= minimum:  # the common case, first
        return (value,) * n
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
    if len(items) == 1 and n > 1:
        items = items * n
    if len(items) != n or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in items):
        raise TypeError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value!r}")
    if any(v < minimum for v in items):
        what = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{op}: {name} must be {what}, got {value!r}")
    return tuple(int(v) for v in items)


def _pair(value: Any, name: str, op: str, minimum: int) -> tuple[int, int]:
    """An int or a pair of ints, each at least ``minimum``, as a pair (kept for the modules)."""
    return _ints(value, 2, name, op, minimum)  # type: ignore[return-value]


def _batched(x: Tensor, d: int, op: str, what: str = "input") -> bool:
    """Whether ``x`` has a batch axis: (N, C, *d) is batched, (C, *d) is not; else an error."""
    if x.ndim == d + 2:
        return True
    if x.ndim == d + 1:
        return False
    layout = "(N, C, " + ", ".join("LHW"[-d:] if d < 3 else "DHW") + ")" if d <= 3 else ""
    raise ConvShapeError(f"{op}: expected a {d + 1}-D or {d + 2}-D {what} {layout}, got shape {x.shape}")


def _lift(op: str, *xs: Any) -> tuple:
    if xs[-1] is None:
        return _lift_all(op, xs[:-1]) + (None,)
    present = [x for x in xs if x is not None]
    lifted = iter(_lift_all(op, tuple(present)))
    return tuple(None if x is None else next(lifted) for x in xs)


def _windows(op: str, x: Tensor, kernel: Ints, stride: Ints, pads: Pads, dilation: Ints,
             extra: str = "") -> Ints:
    """The number of windows along each spatial axis, or an error if the kernel does not fit."""
    d = len(kernel)
    sizes = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[-d:], pads))
    spans = tuple((k - 1) * dl + 1 for k, dl in zip(kernel, dilation))
    if any(sp > n for sp, n in zip(spans, sizes)):
        raise ConvShapeError(f"{op}: the kernel {kernel} (dilated to {spans}) is larger than the padded "
                             f"input {sizes} (input shape {x.shape}, padding {pads}{extra})")
    return tuple(_out_len(n, k, s, dl) for n, k, s, dl in zip(sizes, kernel, stride, dilation))


# ====================================================================== convolution

def _conv_padding(padding: Any, d: int, kernel: Ints, dilation: Ints, stride: Ints, op: str) -> Pads:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * d
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions "
                                 f"(stride {stride})")
            # torch puts the odd one of an even total on the hi side
            return tuple(((k - 1) * dl // 2, (k - 1) * dl - (k - 1) * dl // 2)
                         for k, dl in zip(kernel, dilation))
        raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple, got {padding!r}")
    return tuple((p, p) for p in _ints(padding, d, "padding", op, 0))


def _conv_arguments(d: int, op: str, x: Any, weight: Any, bias: Any, stride: Any, dilation: Any,
                    groups: Any, layout: str) -> tuple:
    """What a convolution and a transposed one check alike: operands as Tensors, a weight of
    ``d + 2`` dims (``layout`` names its first two), the batch dim (added when missing: the
    returned flag says whether it was there), stride, dilation and groups."""
    x, weight, bias = _lift(op, x, weight, bias)
    if weight.ndim != d + 2:
        raise ConvShapeError(f"{op}: expected a {d + 2}-D weight ({layout}, *kernel), got shape "
                             f"{weight.shape}")
    batched = _batched(x, d, op)
    if not batched:
        x = reshape_p(x, shape=(1,) + x.shape)
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    return (x, weight, bias, batched, _ints(stride, d, "stride", op, 1),
            _ints(dilation, d, "dilation", op, 1))


def _conv(d: int, op: str, x: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: Any) -> Tensor:
    x, weight, bias, batched, stride, dilation = _conv_arguments(
        d, op, x, weight, bias, stride, dilation, groups, "out_channels, in_channels/groups")
    kernel = tuple(weight.shape[2:])
    pads = _conv_padding(padding, d, kernel, dilation, stride, op)
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    if c != cg * groups or o % groups:
        raise ConvShapeError(f"{op}: the input has {c} channels (shape {x.shape}) but the weight "
                             f"expects {cg} x groups={groups} (weight shape {weight.shape})"
                             + (f"; out_channels {o} is not divisible by groups {groups}" if o % groups else ""))
    if bias is not None and bias.shape != (o,):
        raise ConvShapeError(f"{op}: the bias must have shape ({o},), one value per output channel "
                             f"of the weight {weight.shape}, got shape {bias.shape}")
    if 0 in kernel:
        raise ConvShapeError(f"{op}: the weight {weight.shape} has an empty kernel")
    outs = _windows(op, x, kernel, stride, pads, dilation, f", weight shape {weight.shape}")
    k, p = cg * math.prod(kernel), math.prod(outs)
    cols = im2col_p(x, kernel=kernel, stride=stride, padding=pads, dilation=dilation, fill=0)
    if groups == 1:
        out = matmul_p(reshape_p(weight, shape=(o, k)), reshape_p(cols, shape=(n, k, p)))
    else:
        out = matmul_p(reshape_p(weight, shape=(groups, o // groups, k)),
                       reshape_p(cols, shape=(n, groups, k, p)))
    out = reshape_p(out, shape=(n, o) + outs)
    if bias is not None:
        out = out + reshape_p(bias, shape=(o,) + (1,) * d)
    return out if batched else reshape_p(out, shape=out.shape[1:])


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation) of an (N, C, L) or (C, L) input with an
    (out_channels, C/groups, k) weight, as ``torch.nn.functional.conv1d``.

    >>> import duograd as dg
    >>> dg.conv1d(dg.tensor([[[1.0, 2.0, 3.0, 4.0]]]), dg.tensor([[[1.0, -1.0]]])).numpy()
    array([[[-1., -1., -1.]]])
    """
    return _conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as ``torch.nn.functional.conv2d``) of an NCHW
    (or CHW) input with an (O, C/groups, kh, kw) weight, plus an optional bias of shape (O,).

    ``stride``, ``padding`` and ``dilation`` are an int or a pair (height, width); padding
    adds zeros, or is "valid" (none) or "same" (the output keeps the input's size).

    >>> import duograd as dg
    >>> x = dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> w = dg.tensor([[[[1.0, 0.0], [0.0, -1.0]]]])
    >>> dg.conv2d(x, w, stride=2).numpy()
    array([[[[-5., -5.],
             [-5., -5.]]]])
    >>> dg.conv2d(x, w, padding=1).shape
    (1, 1, 5, 5)
    >>> dg.conv2d(x, w, padding="same").shape
    (1, 1, 4, 4)
    """
    return _conv(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution of an (N, C, D, H, W) or (C, D, H, W) input, as
    ``torch.nn.functional.conv3d``.

    >>> import duograd as dg
    >>> dg.conv3d(dg.ones((1, 2, 3, 3, 3)), dg.ones((4, 2, 2, 2, 2))).shape
    (1, 4, 2, 2, 2)
    """
    return _conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(d: int, op: str, x: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                    output_padding: Any, groups: Any, dilation: Any) -> Tensor:
    x, weight, bias, batched, stride, dilation = _conv_arguments(
        d, op, x, weight, bias, stride, dilation, groups, "in_channels, out_channels/groups")
    padding = _ints(padding, d, "padding", op, 0)
    output_padding = _ints(output_padding, d, "output_padding", op, 0)
    if any(op_ >= max(s, dl) for op_, s, dl in zip(output_padding, stride, dilation)):
        raise ConvShapeError(f"{op}: output_padding {output_padding} must be smaller than the stride "
                             f"{stride} or the dilation {dilation}")
    n, c = x.shape[:2]
    ci, og = weight.shape[:2]
    kernel = tuple(weight.shape[2:])
    if c != ci or ci % groups:
        raise ConvShapeError(f"{op}: the input has {c} channels (shape {x.shape}) but the weight "
                             f"expects {ci} (weight shape {weight.shape}, groups={groups})")
    o = og * groups
    if bias is not None and bias.shape != (o,):
        raise ConvShapeError(f"{op}: the bias must have shape ({o},), got shape {bias.shape}")
    ins = x.shape[2:]
    outs = tuple((i - 1) * s - 2 * p + (k - 1) * dl + op_ + 1
                 for i, s, p, k, dl, op_ in zip(ins, stride, padding, kernel, dilation, output_padding))
    if any(m <= 0 for m in outs) or 0 in ins:
        raise ConvShapeError(f"{op}: the output size {outs} is not positive (input shape {x.shape}, "
                             f"weight shape {weight.shape}, padding {padding})")
    cig, k, p = c // groups, og * math.prod(kernel), math.prod(ins)
    w = reshape_p(weight, shape=(groups, cig, k))
    cols = matmul_p(transpose_p(w, axes=(0, 2, 1)), reshape_p(x, shape=(n, groups, cig, p)))
    cols = reshape_p(cols, shape=(n, o) + kernel + ins)
    out = col2im_p(cols, shape=(n, o) + outs, stride=stride,
                   padding=tuple((pp, pp) for pp in padding), dilation=dilation)
    if bias is not None:
        out = out + reshape_p(bias, shape=(o,) + (1,) * d)
    return out if batched else reshape_p(out, shape=out.shape[1:])


def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transposed 1-D convolution (the adjoint of ``conv1d`` with respect to its input),
    as ``torch.nn.functional.conv_transpose1d``; the weight is (C_in, C_out/groups, k).

    >>> import duograd as dg
    >>> dg.conv_transpose1d(dg.tensor([[[1.0, 2.0]]]), dg.tensor([[[1.0, 1.0, 1.0]]]), stride=2).numpy()
    array([[[1., 1., 3., 2., 2.]]])
    """
    return _conv_transpose(1, "conv_transpose1d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transposed 2-D convolution, as ``torch.nn.functional.conv_transpose2d``; the
    weight is (C_in, C_out/groups, kh, kw).

    >>> import duograd as dg
    >>> dg.conv_transpose2d(dg.ones((1, 2, 3, 3)), dg.ones((2, 4, 2, 2)), stride=2).shape
    (1, 4, 6, 6)
    """
    return _conv_transpose(2, "conv_transpose2d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transposed 3-D convolution, as ``torch.nn.functional.conv_transpose3d``.

    >>> import duograd as dg
    >>> dg.conv_transpose3d(dg.ones((1, 2, 2, 2, 2)), dg.ones((2, 1, 2, 2, 2))).shape
    (1, 1, 3, 3, 3)
    """
    return _conv_transpose(3, "conv_transpose3d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# ====================================================================== pooling

def _pool_setup(d: int, op: str, x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool) -> tuple:
    """(x batched, was batched, kernel, stride, padding, dilation, pads with ceil_mode's extra, outs)."""
    (x,) = _lift_all(op, (x,))
    batched = _batched(x, d, op)
    if not batched:
        x = reshape_p(x, shape=(1,) + x.shape)
    kernel = _ints(kernel_size, d, "kernel_size", op, 1)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else _ints(stride, d, "stride", op, 1)
    padding = _ints(padding, d, "padding", op, 0)
    dilation = _ints(dilation, d, "dilation", op, 1)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise ConvShapeError(f"{op}: padding {padding} must be at most half the kernel size "
                             f"{kernel} (input shape {x.shape})")
    outs, pads = [], []
    for n, k, s, p, dl in zip(x.shape[2:], kernel, stride, padding, dilation):
        span = (k - 1) * dl + 1
        num = n + 2 * p - span
        if num < 0:
            sizes = tuple(m + 2 * q for m, q in zip(x.shape[2:], padding))
            raise ConvShapeError(f"{op}: the kernel {kernel} (dilation {dilation}) is larger than the "
                                 f"padded input {sizes} (input shape {x.shape}, padding {padding})")
        o = (-(-num // s) if ceil_mode else num // s) + 1
        if ceil_mode and (o - 1) * s >= n + p:  # the last window must start inside the input
            o -= 1
        outs.append(o)
        pads.append((p, max((o - 1) * s + span - n - p, p)))
    return x, batched, kernel, stride, padding, dilation, tuple(pads), tuple(outs)


def _unbatch(out: Tensor, batched: bool) -> Tensor:
    return out if batched else reshape_p(out, shape=out.shape[1:])


def _max_pool(d: int, op: str, x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, return_indices: bool) -> Any:
    x, batched, kernel, stride, padding, dilation, pads, outs = _pool_setup(
        d, op, x, kernel_size, stride, padding, dilation, ceil_mode)
    n, c = x.shape[:2]
    k, p = math.prod(kernel), math.prod(outs)
    cols = im2col_p(x, kernel=kernel, stride=stride, padding=pads, dilation=dilation, fill="lowest")
    cols = reshape_p(cols, shape=(n, c, k, p))
    # NOTE: the whole gradient of a window goes to its first maximum (in window order), the
    # element torch's max_pool picks; an element in two overlapping windows gets from each.
    out = _unbatch(reshape_p(window_max_p(cols, axis=2), shape=(n, c) + outs), batched)
    if not return_indices:
        return out
    index = window_argmax_p(cols, axis=2)
    table = _input_positions(x.shape[2:], kernel, stride, pads, dilation)
    where = reshape_p(window_position_p(index, table=table), shape=(n, c) + outs)
    return out, _unbatch(where, batched)


@functools.lru_cache(maxsize=64)
def _input_positions_cached(spatial: Ints, kernel: Ints, stride: Ints, pads: Pads, dilation: Ints) -> np.ndarray:
    padded = tuple(m + lo + hi for m, (lo, hi) in zip(spatial, pads))
    outs = tuple(_out_len(n, k, s, dl) for n, k, s, dl in zip(padded, kernel, stride, dilation))
    flat = _window_index(padded, kernel, stride, dilation, outs).reshape(math.prod(kernel), -1)
    coords = np.unravel_index(flat, padded)
    pos = np.zeros(flat.shape, dtype=np.int64)
    for ax, (lo, _) in enumerate(pads):
        pos = pos * spatial[ax] + (coords[ax] - lo)
    pos.flags.writeable = False
    return pos


def _input_positions(spatial: Ints, kernel: Ints, stride: Ints, pads: Pads, dilation: Ints) -> np.ndarray:
    """(K, P) table: the flat position in the unpadded input plane of each window element."""
    return _input_positions_cached(tuple(spatial), kernel, stride, pads, dilation)


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value of each window of an (N, C, L) or (C, L) input, as
    ``torch.nn.functional.max_pool1d`` (with ``return_indices``, also the flat input position
    of each maximum).

    >>> import duograd as dg
    >>> dg.max_pool1d(dg.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]]), 2, ceil_mode=True).numpy()
    array([[[3., 5., 4.]]])
    """
    return _max_pool(1, "max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value of each kernel window of an NCHW (or CHW) input, as
    ``torch.nn.functional.max_pool2d``; ``stride`` defaults to ``kernel_size``, and padding
    (at most half the kernel) never wins. A window's gradient goes to its first maximum.

    >>> import duograd as dg
    >>> x = dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    >>> y = dg.max_pool2d(x, 2)
    >>> y.detach().numpy()
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    >>> y.sum().backward()
    >>> x.grad.numpy()[0, 0]
    array([[0., 0., 0., 0.],
           [0., 1., 0., 1.],
           [0., 0., 0., 0.],
           [0., 1., 0., 1.]])
    >>> dg.max_pool2d(x, 2, return_indices=True)[1].numpy()
    array([[[[ 5,  7],
             [13, 15]]]])
    """
    return _max_pool(2, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _max_unpool(d: int, op: str, x: Any, indices: Any, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any) -> Tensor:
    x, indices = _lift(op, x, indices)
    batched = _batched(x, d, op)
    if indices.shape != x.shape:
        raise ConvShapeError(f"{op}: the indices have shape {indices.shape}, the input {x.shape}")
    if not batched:
        x, indices = reshape_p(x, shape=(1,) + x.shape), reshape_p(indices, shape=(1,) + x.shape)
    kernel = _ints(kernel_size, d, "kernel_size", op, 1)
    stride = kernel if stride is None else _ints(stride, d, "stride", op, 1)
    padding = _ints(padding, d, "padding", op, 0)
    n, c = x.shape[:2]
    if output_size is None:
        outs = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(x.shape[2:], stride, padding, kernel))
    else:
        wanted = tuple(int(v) for v in tuple(output_size)[-d:])
        for w_, i, s, p, k in zip(wanted, x.shape[2:], stride, padding, kernel):
            lo = (i - 1) * s - 2 * p + k
            if not lo - s < w_ < lo + s:
                raise ValueError(f"{op}: output_size {tuple(output_size)} must be within the stride "
                                 f"{stride} of the default {lo} (input shape {x.shape})")
        outs = wanted
    size = math.prod(outs)
    flat_x = reshape_p(x, shape=(n, c, -1))
    # NOTE: an index given twice (overlapping pooling windows) keeps the last value, as torch
    # does on CPU, and both get the gradient at that position (torch's backward, a gather).
    index = as_index(reshape_p(indices, shape=(n, c, -1)), op)  # int64 (a float index of whole numbers too)
    out = scatter_along_p(flat_x, index, axis=2, shape=(n, c, size))
    return _unbatch(reshape_p(out, shape=(n, c) + outs), batched)


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool1d(..., return_indices=True)``: each value put back at its
    index, zeros elsewhere, as ``torch.nn.functional.max_unpool1d``.

    >>> import duograd as dg
    >>> y, i = dg.max_pool1d(dg.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2, return_indices=True)
    >>> dg.nn.functional.max_unpool1d(y, i, 2).numpy()
    array([[[0., 3., 0., 5.]]])
    """
    return _max_unpool(1, "max_unpool1d", input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool2d(..., return_indices=True)``, as
    ``torch.nn.functional.max_unpool2d``.

    >>> import duograd as dg
    >>> x = dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> dg.nn.functional.max_unpool2d(*dg.max_pool2d(x, 2, return_indices=True), 2).numpy()[0, 0]
    array([[ 0.,  0.,  0.,  0.],
           [ 0.,  5.,  0.,  7.],
           [ 0.,  0.,  0.,  0.],
           [ 0., 13.,  0., 15.]])
    """
    return _max_unpool(2, "max_unpool2d", input, indices, kernel_size, stride, padding, output_size)


def _avg_pool(d: int, op: str, x: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: Any) -> Tensor:
    x, batched, kernel, stride, padding, _, pads, outs = _pool_setup(
        d, op, x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and (isinstance(divisor_override, bool) or divisor_override == 0):
        raise ValueError(f"{op}: divisor_override must be a non-zero int, got {divisor_override!r}")
    ones = (1,) * d
    cols = im2col_p(x, kernel=kernel, stride=stride, padding=pads, dilation=ones, fill=0)
    total = sum_p(cols, axis=tuple(range(2, 2 + d)), keepdims=False)
    if divisor_override is not None:
        return _unbatch(total * (1.0 / divisor_override), batched)
    counts = np.ones(outs)
    uniform = True
    for ax, (m, k, s, p, o) in enumerate(zip(x.shape[2:], kernel, stride, padding, outs)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, m + p)           # windows clipped to the padded input
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, m)  # and to the input itself
        size = (end - start).astype(np.float64)
        uniform = uniform and bool(np.all(size == k))
        counts = counts * size.reshape((-1,) + (1,) * (d - 1 - ax))
    if uniform:
        return _unbatch(total * (1.0 / math.prod(kernel)), batched)
    return _unbatch(total * tensor((1.0 / counts).astype(x.dtype)), batched)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of an (N, C, L) or (C, L) input, as
    ``torch.nn.functional.avg_pool1d``.

    >>> import duograd as dg
    >>> dg.avg_pool1d(dg.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2).numpy()
    array([[[2., 4.]]])
    """
    return _avg_pool(1, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Tensor:
    """The mean of each kernel window of an NCHW (or CHW) input, as
    ``torch.nn.functional.avg_pool2d``; ``stride`` defaults to ``kernel_size``; padding zeros
    count in the average unless ``count_include_pad=False``; ``divisor_override`` replaces
    the window's size.

    >>> import duograd as dg
    >>> dg.avg_pool2d(dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2).numpy()
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]])
    """
    return _avg_pool(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# ====================================================================== adaptive pooling

def _adaptive_bounds(n: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)   # floor(i n / o), ceil((i + 1) n / o)


def _output_size(output_size: Any, d: int, spatial: Ints, op: str) -> Ints:
    items = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * d
    if len(items) != d:
        raise ValueError(f"{op}: output_size must be an int or a tuple of {d}, got {output_size!r}")
    out = tuple(n if v is None else v for v, n in zip(items, spatial))
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 for v in out):
        raise ValueError(f"{op}: output_size must be non-negative ints, got {output_size!r}")
    return tuple(int(v) for v in out)


def _along(x: Tensor, matrix: np.ndarray, axis: int) -> Tensor:
    """Each line of ``x`` along ``axis`` replaced by ``matrix`` @ line (a constant matrix)."""
    m = tensor(matrix.astype(x.dtype))
    n = x.ndim
    if axis == n - 1:
        return matmul_p(x, transpose_p(m, axes=(1, 0)))
    perm = tuple(i for i in range(n) if i != axis) + (axis,)
    y = matmul_p(transpose_p(x, axes=perm), transpose_p(m, axes=(1, 0)))
    return transpose_p(y, axes=tuple(np.argsort(perm)))


def _adaptive_avg(d: int, op: str, x: Any, output_size: Any) -> Tensor:
    (x,) = _lift_all(op, (x,))
    _batched(x, d, op)
    if 0 in x.shape[-d:]:
        raise ConvShapeError(f"{op}: the input {x.shape} has an empty spatial axis")
    outs = _output_size(output_size, d, x.shape[-d:], op)
    for ax in range(d):
        n, o = x.shape[x.ndim - d + ax], outs[ax]
        start, end = _adaptive_bounds(n, o)
        cols = np.arange(n)
        a = ((cols >= start[:, None]) & (cols < end[:, None])) / (end - start)[:, None].astype(np.float64)
        x = _along(x, a, x.ndim - d + ax)   # separable: one averaging matrix per axis
    return x


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Tensor:
    """Means over ``output_size`` windows that tile an (N, C, L) or (C, L) input, as
    ``torch.nn.functional.adaptive_avg_pool1d``.

    >>> import duograd as dg
    >>> dg.adaptive_avg_pool1d(dg.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]]), 2).numpy()
    array([[[2., 4.]]])
    """
    return _adaptive_avg(1, "adaptive_avg_pool1d", input, output_size)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Tensor:
    """Means over an ``output_size`` grid of windows tiling an NCHW (or CHW) input, as
    ``torch.nn.functional.adaptive_avg_pool2d`` (None in ``output_size`` keeps that size).

    >>> import duograd as dg
    >>> dg.nn.functional.adaptive_avg_pool2d(dg.ones((2, 3, 7, 5)), (2, None)).shape
    (2, 3, 2, 5)
    """
    return _adaptive_avg(2, "adaptive_avg_pool2d", input, output_size)


def _adaptive_max(d: int, op: str, x: Any, output_size: Any, return_indices: bool) -> Any:
    (x,) = _lift_all(op, (x,))
    batched = _batched(x, d, op)
    if not batched:
        x = reshape_p(x, shape=(1,) + x.shape)
    if 0 in x.shape[2:]:
        raise ConvShapeError(f"{op}: the input {x.shape} has an empty spatial axis")
    spatial = x.shape[2:]
    outs = _output_size(output_size, d, spatial, op)
    n, c = x.shape[:2]
    # every window padded to the longest by repeating its first element (which a repeat
    # never displaces as the first maximum), gathered with one constant index
    positions = np.zeros((1,) * (2 * d), dtype=np.int64)
    for ax, (m, o) in enumerate(zip(spatial, outs)):
        start, end = _adaptive_bounds(m, o)
        kmax = int((end - start).max()) if o else 1
        offs = np.arange(kmax)
        idx = np.where(start[None, :] + offs[:, None] < end[None, :], start[None, :] + offs[:, None], start[None, :])
        shape = [1] * (2 * d)
        shape[ax], shape[d + ax] = kmax, o
        positions = positions * m + idx.reshape(shape)
    k, p = math.prod(positions.shape[:d]), math.prod(outs)
    table = positions.reshape(k, p)
    cols = getitem_p(reshape_p(x, shape=(n, c, -1)), index=(slice(None), slice(None), table), basic=False)
    out = _unbatch(reshape_p(window_max_p(cols, axis=2), shape=(n, c) + outs), batched)
    if not return_indices:
        return out
    index = window_argmax_p(cols, axis=2)
    where = reshape_p(window_position_p(index, table=table), shape=(n, c) + outs)
    return out, _unbatch(where, batched)


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Maxima over ``output_size`` windows tiling an (N, C, L) or (C, L) input, as
    ``torch.nn.functional.adaptive_max_pool1d``.

    >>> import duograd as dg
    >>> dg.nn.functional.adaptive_max_pool1d(dg.tensor([[[1.0, 5.0, 3.0, 4.0, 2.0]]]), 2).numpy()
    array([[[5., 4.]]])
    """
    return _adaptive_max(1, "adaptive_max_pool1d", input, output_size, return_indices)


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Maxima over an ``output_size`` grid of windows tiling an NCHW (or CHW) input, as
    ``torch.nn.functional.adaptive_max_pool2d``.

    >>> import duograd as dg
    >>> dg.nn.functional.adaptive_max_pool2d(dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 1).numpy()
    array([[[[15.]]]])
    """
    return _adaptive_max(2, "adaptive_max_pool2d", input, output_size, return_indices)


# ====================================================================== padding

def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: Any = None) -> Tensor:
    """``input`` padded as ``torch.nn.functional.pad``: ``pad`` is (left, right) for the last
    axis, then (top, bottom) for the one before, and so on. ``mode`` "constant" (``value``,
    0 by default; negative numbers crop), "reflect", "replicate" or "circular".

    >>> import duograd as dg
    >>> x = dg.tensor([[[1.0, 2.0, 3.0]]])
    >>> dg.nn.functional.pad(x, (2, 1), mode="reflect").numpy()
    array([[[3., 2., 1., 2., 3., 2.]]])
    >>> dg.nn.functional.pad(x, (1, 1), value=9.0).numpy()
    array([[[9., 1., 2., 3., 9.]]])
    """
    op = "pad"
    (x,) = _lift_all(op, (input,))
    pads_in = tuple(pad) if isinstance(pad, (tuple, list)) else None
    if pads_in is None or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in pads_in):
        raise TypeError(f"{op}: pad must be a tuple of ints, got {pad!r}")
    if len(pads_in) % 2:
        raise ConvShapeError(f"{op}: pad must have an even length, got {len(pads_in)} ({pad!r})")
    d = len(pads_in) // 2
    if d > x.ndim:
        raise ConvShapeError(f"{op}: pad {pad!r} pads {d} axes, but the input has only {x.ndim} "
                         f"(shape {x.shape})")
    pairs = tuple((int(pads_in[2 * (d - 1 - i)]), int(pads_in[2 * (d - 1 - i) + 1])) for i in range(d))
    if mode == "constant":
        fill = 0.0 if value is None else float(value)
        sizes = [n + lo + hi for n, (lo, hi) in zip(x.shape[x.ndim - d:], pairs)]
        if any(s < 0 for s in sizes):
            raise ConvShapeError(f"{op}: padding {pad!r} would give a negative size (input shape {x.shape})")
        return pad_p(x, pads=pairs, value=fill) if d else x
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"{op}: mode must be 'constant', 'reflect', 'replicate' or "
                                  f"'circular', got {mode!r}")
    if value not in (None, 0, 0.0):
        raise ValueError(f"{op}: padding mode {mode!r} does not take a value, got {value!r}")
    if not 1 <= d <= 3 or not (d + 1 <= x.ndim <= d + 2):
        raise NotImplementedError(f"{op}: mode {mode!r} pads the last 1, 2 or 3 axes of a 2-D to 5-D "
                                  f"input ({d + 1}-D or {d + 2}-D for {d} axes), got pad {pad!r} "
                                  f"and input shape {x.shape}")
    for axis, (lo, hi) in zip(range(x.ndim - d, x.ndim), pairs):
        n = x.shape[axis]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise ConvShapeError(f"{op}: reflect padding {(lo, hi)} must be smaller than the size {n} "
                                 f"of axis {axis} (input shape {x.shape})")
        if mode == "circular" and (lo > n or hi > n):
            raise ConvShapeError(f"{op}: circular padding {(lo, hi)} must be at most the size {n} "
                                 f"of axis {axis} (input shape {x.shape})")
        if mode == "replicate" and n == 0:
            raise ConvShapeError(f"{op}: cannot replicate-pad the empty axis {axis} of {x.shape}")
        j = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1)
            j = np.abs(j) % period if period else np.zeros_like(j)
            j = np.where(j >= n, period - j, j)
        elif mode == "replicate":
            j = np.clip(j, 0, n - 1)
        else:
            j = j % n
        # NOTE: a padded element is a copy of an input element, so its gradient adds to that element's.
        x = getitem_p(x, index=(slice(None),) * axis + (j,), basic=False)
    return x


# ====================================================================== interpolation

def _source_positions(n_in: int, n_out: int, scale: Any, mode: str, align_corners: bool) -> np.ndarray:
    dst = np.arange(n_out, dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        s = n_in / n_out if scale is None else 1.0 / scale
        src = np.floor((dst + (0.5 if mode == "nearest-exact" else 0.0)) * s)
        return np.minimum(src, n_in - 1).astype(np.int64)
    if align_corners:
        return dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    s = n_in / n_out if scale is None else 1.0 / scale
    return np.maximum((dst + 0.5) * s - 0.5, 0.0)


def _linear_matrix(n_in: int, n_out: int, scale: Any, align_corners: bool) -> np.ndarray:
    src = _source_positions(n_in, n_out, scale, "linear", align_corners)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    a = np.zeros((n_out, n_in))
    np.add.at(a, (np.arange(n_out), i0), 1.0 - lam)
    np.add.at(a, (np.arange(n_out), i1), lam)
    return a


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Any = None, recompute_scale_factor: Any = None,
                antialias: bool = False) -> Tensor:
    """Resampling of the spatial axes of an (N, C, *spatial) input, as
    ``torch.nn.functional.interpolate``: ``mode`` "nearest", "nearest-exact", "linear" (3-D
    input) or "bilinear" (4-D input), to ``size`` or by ``scale_factor``.

    >>> import duograd as dg
    >>> x = dg.tensor([[[1.0, 2.0]]])
    >>> dg.nn.functional.interpolate(x, scale_factor=2).numpy()
    array([[[1., 1., 2., 2.]]])
    >>> dg.nn.functional.interpolate(x, size=3, mode="linear", align_corners=True).numpy()
    array([[[1. , 1.5, 2. ]]])
    """
    op = "interpolate"
    (x,) = _lift_all(op, (input,))
    d = x.ndim - 2
    if d < 1:
        raise ValueError(f"{op}: expected an input with a batch, a channel and a spatial axis, "
                         f"got shape {x.shape}")
    linear = {"linear": 1, "bilinear": 2, "trilinear": 3}
    if mode not in ("nearest", "nearest-exact") and mode not in linear:
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported (nearest, nearest-exact, "
                                  f"linear, bilinear, trilinear)")
    if mode in linear and linear[mode] != d:
        raise NotImplementedError(f"{op}: mode {mode!r} expects a {linear[mode] + 2}-D input, got "
                                  f"shape {x.shape}")
    if align_corners is not None and mode not in linear:
        raise ValueError(f"{op}: align_corners only has an effect with the linear modes, got mode {mode!r}")
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not supported")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor")
    spatial = x.shape[2:]
    if size is not None:
        outs = tuple(size) if isinstance(size, (tuple, list)) else (size,) * d
        if len(outs) != d:
            raise ValueError(f"{op}: size {size!r} must have {d} entries for input shape {x.shape}")
        outs, scales = tuple(int(v) for v in outs), (None,) * d
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * d
        if len(scales) != d:
            raise ValueError(f"{op}: scale_factor {scale_factor!r} must have {d} entries for input shape {x.shape}")
        scales = tuple(float(s) for s in scales)
        outs = tuple(int(math.floor(n * s)) for n, s in zip(spatial, scales))
        if recompute_scale_factor:
            scales = (None,) * d
    if any(o <= 0 for o in outs) or 0 in spatial:
        raise ValueError(f"{op}: the output size {outs} must be positive (input shape {x.shape})")
    for ax in range(d):
        axis, n, o = 2 + ax, spatial[ax], outs[ax]
        if mode in linear:
            x = _along(x, _linear_matrix(n, o, scales[ax], bool(align_corners)), axis)
        else:
            src = _source_positions(n, o, scales[ax], mode, False)
            x = getitem_p(x, index=(slice(None),) * axis + (src,), basic=False)
    return x


# ====================================================================== sliding blocks

def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Every sliding block of an NCHW (or CHW) input as a column: (N, C * kh * kw, L), as
    ``torch.nn.functional.unfold`` (im2col).

    >>> import duograd as dg
    >>> dg.nn.functional.unfold(dg.ones((2, 3, 4, 5)), 2).shape
    (2, 12, 12)
    """
    op = "unfold"
    (x,) = _lift_all(op, (input,))
    batched = _batched(x, 2, op)
    if not batched:
        x = reshape_p(x, shape=(1,) + x.shape)
    kernel = _ints(kernel_size, 2, "kernel_size", op, 1)
    dilation = _ints(dilation, 2, "dilation", op, 1)
    padding = _ints(padding, 2, "padding", op, 0)
    stride = _ints(stride, 2, "stride", op, 1)
    pads = tuple((p, p) for p in padding)
    outs = _windows(op, x, kernel, stride, pads, dilation)
    n, c = x.shape[:2]
    cols = im2col_p(x, kernel=kernel, stride=stride, padding=pads, dilation=dilation, fill=0)
    return _unbatch(reshape_p(cols, shape=(n, c * math.prod(kernel), math.prod(outs))), batched)


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """The adjoint of ``unfold``: columns (N, C * kh * kw, L) summed back into an
    (N, C, *output_size) image, overlaps adding, as ``torch.nn.functional.fold`` (col2im).

    >>> import duograd as dg
    >>> dg.nn.functional.fold(dg.ones((1, 4, 4)), (3, 3), 2).numpy()[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    op = "fold"
    (x,) = _lift_all(op, (input,))
    if x.ndim not in (2, 3):
        raise ConvShapeError(f"{op}: expected a 2-D or 3-D input (N, C * kh * kw, L), got shape {x.shape}")
    batched = x.ndim == 3
    if not batched:
        x = reshape_p(x, shape=(1,) + x.shape)
    size = _ints(output_size, 2, "output_size", op, 1)
    kernel = _ints(kernel_size, 2, "kernel_size", op, 1)
    dilation = _ints(dilation, 2, "dilation", op, 1)
    padding = _ints(padding, 2, "padding", op, 0)
    stride = _ints(stride, 2, "stride", op, 1)
    k = math.prod(kernel)
    n, ck, length = x.shape
    outs = tuple(_out_len(m + 2 * p, kk, s, dl)
                 for m, p, kk, s, dl in zip(size, padding, kernel, stride, dilation))
    if ck % k or any(o <= 0 for o in outs) or math.prod(outs) != length:
        raise ConvShapeError(f"{op}: an input of shape {x.shape} does not fit output_size {size} with "
                             f"kernel {kernel}: it needs C * {k} rows and {math.prod(max(o, 0) for o in outs)} "
                             f"blocks")
    c = ck // k
    cols = reshape_p(x, shape=(n, c) + kernel + outs)
    out = col2im_p(cols, shape=(n, c) + size, stride=stride, padding=tuple((p, p) for p in padding),
                   dilation=dilation)
    return _unbatch(out, batched)


def _adaptive_max_pool1d_torch(input: Any, output_size: Any) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: the maxima and their indices, always both.

    >>> import duograd as dg
    >>> [t.numpy() for t in dg.adaptive_max_pool1d(dg.tensor([[[1.0, 5.0, 3.0, 4.0, 2.0]]]), 2)]
    [array([[[5., 4.]]]), array([[[1, 3]]])]
    """
    return _adaptive_max(1, "adaptive_max_pool1d", input, output_size, True)
