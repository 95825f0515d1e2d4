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
    return out


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
    return out


def max_pool2d_loop(x: np.ndarray, kernel: Any, stride: Any = None, padding: Any = 0) -> np.ndarray:
    """The largest value of each window; padding is -inf, so it never wins."""
    return _pool_loop(x, kernel, stride, padding, -np.inf, np.max)


def avg_pool2d_loop(x: np.ndarray, kernel: Any, stride: Any = None, padding: Any = 0) -> np.ndarray:
    """The mean of each window, padding zeros included (PyTorch's count_include_pad=True)."""
    return _pool_loop(x, kernel, stride, padding, 0.0, np.mean)
