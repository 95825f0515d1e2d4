"""Losses and normalisations, composed from the engine's primitive operations.

Nothing here has a hand-written backward: every gradient is the chain rule through
the primitives the forward pass used. ``cross_entropy`` in particular is a max-shifted
exp, sum and log, an integer-index pick and a mean, so the famous gradient
``(softmax(logits) - onehot(targets)) / N`` is something the engine has to *arrive at*;
the tests check that it does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import log_softmax, softmax
from .._tensor import Tensor, _as_tensor, _derive

__all__ = ["softmax", "log_softmax", "cross_entropy", "mse_loss", "hinge_loss"]

_REDUCTIONS = ("mean", "sum")


def _values(x: Any) -> np.ndarray:
    """The plain array behind a Tensor, list or array (never differentiated)."""
    return np.asarray(x.data if isinstance(x, Tensor) else x)


def _reduce(x: Tensor, reduction: str, fn: str) -> Tensor:
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    raise ValueError(f"{fn}: reduction must be 'mean' or 'sum', got {reduction!r}")


def _check_reduction(reduction: str, fn: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean' or 'sum', got {reduction!r}")


def _class_indices(targets: Any, n: int, c: int) -> np.ndarray:
    """``targets`` as an intp array of n class indices in [0, c), or a ValueError."""
    arr = _values(targets)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise ValueError(f"cross_entropy: targets must be integer class indices, got dtype "
                         f"{arr.dtype} with shape {arr.shape}")
    if arr.shape != (n,):
        raise ValueError(f"cross_entropy: targets must have shape ({n},) to match logits of "
                         f"shape ({n}, {c}), got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"cross_entropy: targets of shape {arr.shape} hold non-integer "
                         f"values; expected class indices in [0, {c})")
    if n and (arr.min() < 0 or arr.max() >= c):  # two reductions: this runs every step
        bad = (arr < 0) | (arr >= c)
        first = int(arr[bad][0])  # whole numbers by now; a plain int reads "3", not "np.int64(3)"
        raise ValueError(f"cross_entropy: target {first} is out of range for logits "
                         f"of shape ({n}, {c}); expected class indices in [0, {c})")
    return arr.astype(np.intp, copy=False)


def cross_entropy(logits: Tensor, targets: Any, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy of ``logits`` (N, C) against integer class ``targets`` (N,).

    ``targets`` may be a NumPy array, a list or a Tensor (whole-number floats are
    accepted). ``reduction`` is "mean" (the average over the N rows) or "sum". The
    loss is built from primitives only: ``log_softmax`` above, then each row's target
    picked by integer indexing, then the mean (or sum), negated.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> logits = dg.tensor([[2.0, 0.0], [0.0, 2.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, [0, 0])
    >>> round(loss.item(), 6)
    1.126928
    >>> loss.backward()
    >>> logits.grad.numpy().round(4)     # (softmax - onehot) / N
    array([[-0.0596,  0.0596],
           [-0.4404,  0.4404]])
    """
    _check_reduction(reduction, "cross_entropy")
    logits = _as_tensor(logits)
    if logits.ndim != 2:
        raise ValueError(f"cross_entropy: logits must have shape (N, C), got shape {logits.shape}")
    n, c = logits.shape
    if n == 0 or c == 0:
        raise ValueError(f"cross_entropy: logits of shape {logits.shape} are empty")
    idx = _derive(_class_indices, targets, n=n, c=c)  # recomputed from the targets by a dg.compile replay
    logp = log_softmax(logits, axis=-1)
    picked = logp[np.arange(n), idx]
    return -_reduce(picked, reduction, "cross_entropy")


def mse_loss(pred: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Mean (or sum) of squared differences; ``pred`` and ``target`` must have one shape
    (no silent broadcasting of an (N, 1) prediction against an (N,) target).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.mse_loss(dg.tensor([1.0, 2.0]), [0.0, 0.0]).item()
    2.5
    """
    _check_reduction(reduction, "mse_loss")
    pred = _as_tensor(pred)
    target_shape = target.shape if isinstance(target, Tensor) else np.shape(target)
    if tuple(target_shape) != pred.shape:
        raise ValueError(f"mse_loss: pred has shape {pred.shape} but target has shape "
                         f"{tuple(target_shape)}; they must match")
    d = pred - target
    return _reduce(d * d, reduction, "mse_loss")


def hinge_loss(scores: Tensor, labels: Any, reduction: str = "mean") -> Tensor:
    """Mean (or sum) of ``relu(1 - label * score)`` with labels of +1 or -1.

    ``labels`` must have the shape of ``scores``; a column of scores (N, 1), as a
    one-output model gives, is also accepted against N labels.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.hinge_loss(dg.tensor([2.0, 0.5, -1.0]), [1, 1, 1]).item()
    0.8333333333333334
    """
    _check_reduction(reduction, "hinge_loss")
    scores = _as_tensor(scores)
    lab = _values(labels)
    if lab.dtype.kind not in "iuf" or lab.dtype == np.bool_:
        raise ValueError(f"hinge_loss: labels must be numbers +1 or -1, got dtype {lab.dtype}")
    if lab.shape != scores.shape:
        if scores.shape == lab.shape + (1,):
            scores = scores.reshape(lab.shape)
        else:
            raise ValueError(f"hinge_loss: scores have shape {scores.shape} but labels have "
                             f"shape {lab.shape}")
    if not np.all((lab == 1) | (lab == -1)):
        bad = lab[(lab != 1) & (lab != -1)][0]
        raise ValueError(f"hinge_loss: labels must be +1 or -1, got {bad!r} "
                         f"(labels of shape {lab.shape})")
    margin = 1 - scores * lab.astype(scores.dtype)
    return _reduce(margin.relu(), reduction, "hinge_loss")


# ---------------------------------------------------------------- convolution and pooling (conv branch)
from ..conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,  # noqa: E402
                    adaptive_max_pool2d, avg_pool1d, avg_pool2d, conv1d, conv2d, conv3d,
                    conv_transpose1d, conv_transpose2d, conv_transpose3d, fold, interpolate,
                    max_pool1d, max_pool2d, max_unpool1d, max_unpool2d, pad, unfold)

__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
            "max_pool1d", "max_pool2d", "max_unpool1d", "max_unpool2d", "avg_pool1d", "avg_pool2d",
            "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
            "pad", "interpolate", "unfold", "fold"]
