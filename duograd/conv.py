"""Convolution and pooling on NCHW tensors: ``conv2d``, ``max_pool2d``, ``avg_pool2d``.

All three are compositions of primitives, so gradients of every order, forward mode
and capture come from the rules that already exist. Two primitives are new, and each
is the other's adjoint:

- ``im2col_p`` copies every kernel window of the (padded) input out, once, into one
  contiguous array of layout (N, C, kh, kw, OH, OW): for offset (i, j) of the kernel,
  the plane of input pixels that offset touches at every output position. It is a
  strided view (``sliding_window_view``) made contiguous, with no loop over pixels or
  over the batch.
- ``col2im_p`` adds such an array back onto an input-shaped array: kh * kw strided adds,
  one per kernel offset. It is ``im2col``'s transpose, and ``im2col`` is its transpose,
  so each one's VJP is the other and higher derivatives cost nothing more.

Then, with K = C * kh * kw and P = OH * OW:

- ``conv2d(x, w, b)`` = ``reshape(w, (O, K)) @ reshape(im2col(x), (N, K, P))`` + b: one
  BLAS contraction, already in NCHW order (no transpose of the output). Its VJPs are
  matmul's: the weight's is ``g @ cols^T`` summed over the batch (the correlation of the
  input with g), the input's is ``col2im(w^T @ g)`` (the transposed convolution). The
  JVP is matmul's bilinear one: conv is linear in x and in w separately.
- ``max_pool2d`` = ``max`` over the kernel axes of ``im2col(x, fill=lowest)``, so ties share
  the gradient exactly as ``max`` does.
- ``avg_pool2d`` = the sum over the kernel axes of ``im2col(x)`` divided by kh * kw
  (zero padding counts in the average, PyTorch's default ``count_include_pad=True``).

The public functions check their arguments first and raise a ValueError or TypeError
naming the operation and the shapes, before any primitive runs, so a bad call changes
nothing.

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
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .autograd import LINEAR, Primitive
from .ops import matmul_p, max_p, reshape_p, sum_p
from ._tensor import Tensor, _lift_all

Pair = tuple[int, int]


# ====================================================================== the two primitives

def _padded(x: np.ndarray, padding: Pair, fill: Any) -> np.ndarray:
    ph, pw = padding
    if not (ph or pw):
        return x
    n, c, h, w = x.shape
    xp = np.empty((n, c, h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    xp[...] = fill  # (np.pad costs more: it is Python around the same two writes)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    return xp


def _fill_value(fill: Any, dtype: np.dtype) -> Any:
    # NOTE: max-pool pads with the lowest finite number of the dtype rather than -inf:
    # the result is PyTorch's (every window holds at least one real pixel, since padding
    # is at most half the kernel), and no infinity ever sits in an array of the step.
    return np.finfo(dtype).min if fill == "lowest" else dtype.type(fill)


# NumPy copies and adds a strided array one innermost run at a time, and a run here is one
# row of OW output pixels. For small images (the digits' 8x8 and 4x4) those runs are a few
# elements long and the per-run cost dominates, so below this width both directions go
# through one flat index per window element instead: a gather (``take``) and its
# adjoint, a scatter-add (``np.bincount``). Both are a single C loop over every element.
_SHORT_RUN = 16


@functools.lru_cache(maxsize=128)
def _window_index(hp: int, wp: int, kernel: Pair, stride: Pair) -> np.ndarray:
    """Flat positions in an (hp, wp) plane of every window element, in (kh, kw, OH, OW) order."""
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    rows = np.arange(kh)[:, None, None, None] + sh * np.arange(oh)[None, None, :, None]
    cols = np.arange(kw)[None, :, None, None] + sw * np.arange(ow)[None, None, None, :]
    idx = (rows * wp + cols).ravel()
    idx.flags.writeable = False  # shared by every call with these shapes
    return idx


def _scatter_index(planes: int, hp: int, wp: int, kernel: Pair, stride: Pair) -> np.ndarray:
    """``_window_index`` repeated for each of ``planes`` (n, c) planes, offset to its plane;
    kept for the next call when it is small (a training step repeats its shapes)."""
    key = (planes, hp, wp, kernel, stride)
    idx = _SCATTER_CACHE.get(key)
    if idx is None:
        plane = _window_index(hp, wp, kernel, stride)
        idx = (np.arange(planes)[:, None] * (hp * wp) + plane).ravel()
        if idx.size <= 1 << 22:
            if len(_SCATTER_CACHE) >= 32:
                _SCATTER_CACHE.pop(next(iter(_SCATTER_CACHE)))
            idx.flags.writeable = False
            _SCATTER_CACHE[key] = idx
    return idx


_SCATTER_CACHE: dict[tuple, np.ndarray] = {}


def _im2col(x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, fill: Any) -> np.ndarray:
    kh, kw = kernel
    sh, sw = stride
    xp = _padded(x, padding, _fill_value(fill, x.dtype))
    n, c, hp, wp = xp.shape
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    if ow < _SHORT_RUN:
        # take, not x[..., idx]: fancy indexing lays its result out batch-innermost
        flat = xp.reshape(n * c, hp * wp).take(_window_index(hp, wp, kernel, stride), axis=1)
        return flat.reshape(n, c, kh, kw, oh, ow)
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]  # (N, C, OH, OW, kh, kw)
    return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3))          # (N, C, kh, kw, OH, OW)


def _col2im(cols: np.ndarray, shape: tuple[int, ...], stride: Pair, padding: Pair) -> np.ndarray:
    n, c, h, w = shape
    _, _, kh, kw, oh, ow = cols.shape
    sh, sw = stride
    ph, pw = padding
    hp, wp = h + 2 * ph, w + 2 * pw
    if ow < _SHORT_RUN:
        index = _scatter_index(n * c, hp, wp, (kh, kw), stride)
        xp = np.bincount(index, cols.ravel(), minlength=n * c * hp * wp)
        xp = xp.astype(cols.dtype, copy=False).reshape(n, c, hp, wp)
    else:
        xp = np.zeros((n, c, hp, wp), dtype=cols.dtype)
        for i in range(kh):      # one strided add per kernel offset, never a loop over pixels
            for j in range(kw):
                xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += cols[:, :, i, j]
    return xp[:, :, ph:ph + h, pw:pw + w] if ph or pw else xp


# im2col is affine in x (linear plus the constant fill), so its tangent is im2col of the
# tangent with a zero fill; its adjoint drops whatever landed on the padding.
im2col_p = Primitive(
    "im2col", _im2col,
    vjp=(lambda g, out, x, kernel, stride, padding, fill:
         col2im_p(g, shape=x.shape, stride=stride, padding=padding),),
    jvp=(lambda t, out, x, kernel, stride, padding, fill:
         im2col_p(t, kernel=kernel, stride=stride, padding=padding, fill=0),))
# col2im is linear, and im2col (zero fill) is its adjoint.
col2im_p = Primitive(
    "col2im", _col2im,
    vjp=(lambda g, out, cols, shape, stride, padding:
         im2col_p(g, kernel=cols.shape[2:4], stride=stride, padding=padding, fill=0),),
    jvp=LINEAR)


# ====================================================================== argument checks

def _pair(value: Any, name: str, op: str, minimum: int) -> Pair:
    """An int or a pair of ints, each at least ``minimum``, as a pair."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(items) != 2 or any(isinstance(v, bool) or not isinstance(v, (int, np.integer))
                              for v in items):
        raise TypeError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")
    if any(v < minimum for v in items):
        what = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{op}: {name} must be {what}, got {value!r}")
    return int(items[0]), int(items[1])


def _four_d(x: Tensor, op: str, what: str = "input", layout: str = "(N, C, H, W)") -> None:
    if x.ndim != 4:
        raise ValueError(f"{op}: expected a 4-D {what} {layout}, got shape {x.shape}")


def _out_size(x: Tensor, kernel: Pair, stride: Pair, padding: Pair, op: str,
              extra: str = "") -> Pair:
    h, w = x.shape[2] + 2 * padding[0], x.shape[3] + 2 * padding[1]
    if kernel[0] > h or kernel[1] > w:
        raise ValueError(f"{op}: the kernel {kernel} is larger than the padded input "
                         f"{(h, w)} (input shape {x.shape}, padding {padding}{extra})")
    return (h - kernel[0]) // stride[0] + 1, (w - kernel[1]) // stride[1] + 1


# ====================================================================== the public functions

def conv2d(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0) -> Tensor:
    """2-D convolution (cross-correlation, as ``torch.nn.functional.conv2d``) of an NCHW
    input with an OIHW weight, plus an optional bias of shape (O,).

    ``stride`` and ``padding`` are an int or a pair (height, width); padding adds zeros.
    The output has shape (N, O, OH, OW) with OH = (H + 2 ph - kh) // sh + 1.

    >>> import duograd as dg
    >>> x = dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> w = dg.tensor([[[[1.0, 0.0], [0.0, -1.0]]]])
    >>> dg.conv2d(x, w, stride=2).numpy()
    array([[[[-5., -5.],
             [-5., -5.]]]])
    >>> dg.conv2d(x, w, padding=1).shape
    (1, 1, 5, 5)
    """
    x, weight = _lift_all("conv2d", (x, weight))
    _four_d(x, "conv2d")
    _four_d(weight, "conv2d", "weight", "(out_channels, in_channels, kh, kw)")
    stride = _pair(stride, "stride", "conv2d", 1)
    padding = _pair(padding, "padding", "conv2d", 0)
    n, c = x.shape[:2]
    o, ci, kh, kw = weight.shape
    if c != ci:
        raise ValueError(f"conv2d: the input has {c} channels (shape {x.shape}) but the weight "
                         f"expects {ci} (weight shape {weight.shape})")
    if bias is not None:
        (bias,) = _lift_all("conv2d", (bias,))
        if bias.shape != (o,):
            raise ValueError(f"conv2d: the bias must have shape ({o},), one value per output "
                             f"channel of the weight {weight.shape}, got shape {bias.shape}")
    if kh == 0 or kw == 0:
        raise ValueError(f"conv2d: the weight {weight.shape} has an empty kernel")
    oh, ow = _out_size(x, (kh, kw), stride, padding, "conv2d", f", weight shape {weight.shape}")
    k = c * kh * kw
    cols = im2col_p(x, kernel=(kh, kw), stride=stride, padding=padding, fill=0)
    out = matmul_p(reshape_p(weight, shape=(o, k)), reshape_p(cols, shape=(n, k, oh * ow)))
    out = reshape_p(out, shape=(n, o, oh, ow))
    return out if bias is None else out + reshape_p(bias, shape=(o, 1, 1))


def _pool_args(op: str, x: Any, kernel_size: Any, stride: Any, padding: Any
               ) -> tuple[Tensor, Pair, Pair, Pair, Pair]:
    (x,) = _lift_all(op, (x,))
    _four_d(x, op)
    kernel = _pair(kernel_size, "kernel_size", op, 1)
    stride = kernel if stride is None else _pair(stride, "stride", op, 1)
    padding = _pair(padding, "padding", op, 0)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel size "
                         f"{kernel} (input shape {x.shape})")
    return x, kernel, stride, padding, _out_size(x, kernel, stride, padding, op)


def max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """The largest value of each kernel window of an NCHW input, as
    ``torch.nn.functional.max_pool2d``; ``stride`` defaults to ``kernel_size``, and padding
    (at most half the kernel) never wins. Elements tied for a window's maximum share its
    gradient evenly, as with ``max``.

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
    """
    x, kernel, stride, padding, _ = _pool_args("max_pool2d", x, kernel_size, stride, padding)
    cols = im2col_p(x, kernel=kernel, stride=stride, padding=padding, fill="lowest")
    # NOTE: elements tied for a window's maximum share its gradient evenly, because this is
    # ``max`` over the window axes (as torch.amax does); torch's max_pool2d gives all of it
    # to one of them. An element in two overlapping windows gets its share from each.
    return max_p(cols, axis=(2, 3), keepdims=False)


def avg_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """The mean of each kernel window of an NCHW input, as
    ``torch.nn.functional.avg_pool2d``; ``stride`` defaults to ``kernel_size``, and padding
    zeros count in the average (PyTorch's default ``count_include_pad=True``).

    >>> import duograd as dg
    >>> dg.avg_pool2d(dg.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2).numpy()
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]])
    """
    x, kernel, stride, padding, _ = _pool_args("avg_pool2d", x, kernel_size, stride, padding)
    cols = im2col_p(x, kernel=kernel, stride=stride, padding=padding, fill=0)
    return sum_p(cols, axis=(2, 3), keepdims=False) * (1.0 / (kernel[0] * kernel[1]))
