"""Losses and normalisations, composed from the engine's primitive operations.

Nothing here has a hand-written backward: every gradient is the chain rule through
the primitives the forward pass used. ``cross_entropy`` in particular is a max-shifted
exp, sum and log, an integer-index pick and a mean, so the famous gradient
``(softmax(logits) - onehot(targets)) / N`` is something the engine has to *arrive at*;
the tests check that it does.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..ops import _log_softmax, _mT as _swap_last, getitem_p, log_softmax, matmul_p, maximum, softmax, softplus_p, transpose_p, where
from .._tensor import Tensor, _as_tensor, _derive, _wrap, tensor
from ..shapes import dim_index
from ..autograd import no_grad as _no_grad
from ..random import as_rng

__all__ = ["softmax", "log_softmax", "cross_entropy", "mse_loss", "hinge_loss",
           # layers branch: losses and normalisations
           "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss",
           "smooth_l1_loss", "huber_loss", "kl_div", "cosine_similarity", "normalize", "one_hot",
           "embedding", "layer_norm", "batch_norm", "group_norm", "scaled_dot_product_attention"]

_REDUCTIONS = ("mean", "sum", "none")


def _values(x: Any) -> np.ndarray:
    """The plain array behind a Tensor, list or array (never differentiated)."""
    return np.asarray(x._data if isinstance(x, Tensor) else x)


def _reduce(x: Tensor, reduction: str, fn: str) -> Tensor:
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    if reduction == "none":
        return x
    raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _check_reduction(reduction: str, fn: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


class _TargetIndexError(IndexError, ValueError):
    """A class index out of range: torch raises IndexError; a ValueError too, as before."""


class _Targets(NamedTuple):
    """What the arrays derived from class targets depend on besides the targets' values,
    fixed by the loss call: the one keyword of each ``_derive`` below (a dg.compile replay
    binds it and recomputes the arrays from each call's targets)."""

    shape: tuple[int, ...]       # the targets' shape: the input's without the class dimension
    c: int                       # the number of classes
    ignore_index: int
    name: str                    # the loss, for errors
    ishape: tuple[int, ...]      # the input's shape, for errors
    dtype: np.dtype              # of the weights and scales: the log-probabilities' dtype
    mean: bool                   # reduction "mean": scales divided by the total weight


def _targets_of(layout: tuple[int, tuple[int, ...]], logp: Tensor, ignore_index: int,
                reduction: str, fn: str) -> _Targets:
    """The plan of a loss on log-probabilities ``logp`` of ``layout`` (``_class_layout``)."""
    c, tshape = layout
    return _Targets(tshape, c, ignore_index, fn, logp.shape, logp.dtype, reduction == "mean")


def _class_targets(targets: Any, t: _Targets) -> tuple[np.ndarray, bool]:
    """``targets`` as an int64 array of ``t.shape`` holding class indices in [0, c) or
    ``ignore_index``, or a clear error (whole-number floats are accepted); and whether
    every one of them is in [0, c) (the common case, known from the range check)."""
    arr, fn, c = _values(targets), t.name, t.c
    if arr.dtype.kind not in "iuf":  # (not bool, "b")
        raise ValueError(f"{fn}: targets must be integer class indices, got dtype "
                         f"{arr.dtype} with shape {arr.shape}")
    if arr.shape != t.shape:
        raise ValueError(f"{fn}: targets must have shape {t.shape} to match an input of shape "
                         f"{t.ishape} (the input is (C,), (N, C) or (N, C, d1, ...)), got shape "
                         f"{arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"{fn}: targets of shape {arr.shape} hold non-integer "
                         f"values; expected class indices in [0, {c})")
    arr = arr.astype(np.int64, copy=False)
    # One reduction checks both ends (this runs every step): read as unsigned, a negative
    # index is larger than any number of classes.
    if arr.size and arr.view(np.uint64).max() >= c:
        bad = ((arr < 0) | (arr >= c)) & (arr != t.ignore_index)
        if bad.any():
            first = int(arr[bad][0])  # a plain int reads "3", not "np.int64(3)"
            raise _TargetIndexError(f"{fn}: target {first} is out of range for an input with "
                                    f"{c} classes; expected class indices in [0, {c})")
        return arr, False
    return arr, True


def _safe_flat_index(targets: Any, t: _Targets) -> np.ndarray:
    """The targets flattened (a copy), with ignored positions pointing at class 0 (weighted 0)."""
    arr, inside = _class_targets(targets, t)
    arr = arr.reshape(-1)
    if inside and not 0 <= t.ignore_index < t.c:  # nothing to ignore (the default, -100)
        return arr.astype(np.intp)
    return np.where(arr == t.ignore_index, 0, arr).astype(np.intp)


def _kept(targets: Any, t: _Targets) -> np.ndarray:
    """Whether each flattened target counts (is not ``ignore_index``). (The targets are
    checked by ``_safe_flat_index``, which every caller derives first.)"""
    return _values(targets).reshape(-1).astype(np.int64, copy=False) != t.ignore_index


def _target_weights(targets: Any, t: _Targets) -> np.ndarray:
    """Each flattened target's weight without class weights: 1, or 0 where ignored."""
    return _kept(targets, t).astype(t.dtype)


def _target_scale(targets: Any, t: _Targets) -> np.ndarray:
    """Each flattened target's factor on its log-probability: ``-weight``, divided by the
    total weight for a mean (0 where ignored; all 0 when nothing counts)."""
    w = _target_weights(targets, t)
    if t.mean:
        # w holds 0s and 1s: a count is their sum, in any float dtype below 2**24 (float16
        # sums in float32), and much cheaper (this runs every step).
        total = w.dtype.type(np.count_nonzero(w)) if w.size < 1 << 24 else w.sum()
        if total != 0:
            return np.divide(w, -total, out=w)  # -(w / total), exactly: one pass, not two
    return np.negative(w, out=w)


def _mean_divisor(targets: Any, t: _Targets) -> np.ndarray:
    """The divisor of the weighted mean over the targets (a 0-d array): their total weight,
    or 1 when nothing counts (every target ignored, or an empty batch), where
    ``_mean_addend`` adds nan: torch's value is then 0/0 = nan while its gradient is 0,
    and ``s / 1 + nan`` gives both. Both are computed from the targets themselves, so that a
    dg.compile replay recomputes them."""
    total = _target_weights(targets, t).sum()
    return np.array(total if total != 0 else 1, dtype=t.dtype)


def _mean_addend(targets: Any, t: _Targets) -> np.ndarray:
    """0, or nan when nothing counts (see ``_mean_divisor``)."""
    counted = np.count_nonzero(_values(targets) != t.ignore_index)
    return np.array(0 if counted else np.nan, dtype=t.dtype)


def _weighted_mean(s: Tensor, target: Any, t: _Targets) -> Tensor:
    return s / _derive(_mean_divisor, target, t=t) + _derive(_mean_addend, target, t=t)


def _classes_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) as (N * d1 * ..., C); (N, C) and (C,) as (rows, C)."""
    if x.ndim == 2:
        return x
    if x.ndim >= 3:
        x = transpose_p(x, axes=(0,) + tuple(range(2, x.ndim)) + (1,))
    return x.reshape(-1, x.shape[-1])


def _class_layout(x: Tensor, fn: str) -> tuple[int, tuple[int, ...]]:
    """The number of classes and the target shape of an input (C,), (N, C) or (N, C, d...)."""
    shape = x._data.shape
    if not shape:
        raise ValueError(f"{fn}: input must have shape (C,), (N, C) or (N, C, d1, ...), "
                         f"got a 0-d tensor")
    if len(shape) == 1:
        return shape[0], ()
    return shape[1], (shape[0],) + shape[2:]


def _class_weights(weight: Any, c: int, dtype: Any, fn: str) -> Tensor | None:
    """The class weights as a Tensor of ``dtype`` (the log-probabilities'), never
    differentiated (as torch's), or None: a Tensor stays one, so that a dg.compile replay
    reads each call's weights."""
    if weight is None:
        return None
    w = weight.detach() if isinstance(weight, Tensor) else tensor(_values(weight))
    if w.shape != (c,):
        raise RuntimeError(f"{fn}: weight must have shape ({c},) (one per class), got "
                           f"shape {w.shape}")
    return w.to(dtype)


def _batched_weights(logp: Tensor, target: Tensor, t: _Targets,
                     weight: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """For targets batched by ``func.vmap`` (nothing may read their values): the one-hot
    rows of the flattened targets, whether each counts (not ``ignore_index``), and each
    one's weight (its class weight where counted, 0 where ignored), all of primitives."""
    tgt = target.reshape(-1)
    hot = (tgt.reshape(-1, 1) == tensor(np.arange(t.c), dtype=tgt.dtype)).to(logp.dtype)
    keep = (tgt != t.ignore_index).to(logp.dtype)
    w = keep if weight is None else keep * (hot * weight).sum(1)
    return hot, keep, w


def _nll_batched(logp: Tensor, target: Tensor, t: _Targets, weight: Tensor | None,
                 reduction: str) -> Tensor:
    """``_nll`` for targets batched by ``func.vmap``: the pick as a one-hot product."""
    flat = _classes_last(logp)
    hot, _, w = _batched_weights(logp, target, t, weight)
    terms = -(flat * hot).sum(1) * w
    if reduction == "none":
        return terms.reshape(t.shape)
    if reduction == "sum":
        return terms.sum()
    return _batched_mean(terms.sum(), w)


def _batched_mean(s: Tensor, w: Tensor) -> Tensor:
    """``s`` over the total weight, as ``_weighted_mean``: nan when nothing counts, with a
    zero gradient then (torch's), of primitives."""
    total = w.sum()
    none = total == 0
    return (s / where(none, tensor(1.0, dtype=total.dtype), total)
            + where(none, tensor(np.nan, dtype=total.dtype), tensor(0.0, dtype=total.dtype)))


def _is_batched(x: Any) -> bool:
    return type(x).__name__ == "BatchedTensor"  # duograd.batching's, inside func.vmap


def _counted_weights(target: Any, t: _Targets, weight: Tensor, idx: Any = None) -> Tensor:
    """Each flattened target's class weight, 0 where ignored (of primitives on the weights,
    indexed by arrays derived from the targets; ``idx``: ``_safe_flat_index``'s, if derived)."""
    if idx is None:
        idx = _derive(_safe_flat_index, target, t=t)
    return where(_derive(_kept, target, t=t), getitem_p(weight, index=(idx,), basic=False), 0.0)


def _nll(logp: Tensor, target: Any, t: _Targets, weight: Tensor | None, reduction: str) -> Tensor:
    if _is_batched(target):
        return _nll_batched(logp, target, t, weight, reduction)
    # Arrays derived from the targets (recomputed from the targets by a dg.compile replay):
    # the class picked in each row, and each pick's factor in the loss (wrapped here, so
    # that the arithmetic below takes the all-Tensor path).
    idx = _derive(_safe_flat_index, target, t=t)
    flat = _classes_last(logp)
    picked = getitem_p(flat, index=(np.arange(flat.shape[0]), idx), basic=False)  # flat[rows, idx]
    if weight is not None:  # the factors from the weights, of primitives
        w = _counted_weights(target, t, weight, idx)
        if reduction == "none":
            return (picked * -w).reshape(t.shape)
        if reduction == "sum":
            return matmul_p(picked, -w)
        total = w.sum()
        none = total == 0
        # -w / total, or -w when nothing counts (and nan added), as _target_scale
        scale = w / -where(none, tensor(1.0, dtype=total.dtype), total)
        return matmul_p(picked, scale) + where(none, tensor(np.nan, dtype=total.dtype),
                                               tensor(0.0, dtype=total.dtype))
    scale = _wrap(_derive(_target_scale, target, t=t))
    if reduction == "none":
        return (picked * scale).reshape(t.shape)
    loss = matmul_p(picked, scale)  # the weighted sum as one inner product (one primitive, not two)
    if reduction == "sum":
        return loss
    return loss + _wrap(_derive(_mean_addend, target, t=t))


def nll_loss(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of class ``target`` under log-probabilities ``input``,
    as ``torch.nn.functional.nll_loss``: input (C,), (N, C) or (N, C, d1, ...), target the
    input's shape without the class dimension. Each term is ``-weight[t] * input[t]``;
    targets equal to ``ignore_index`` count nothing; "mean" divides by the total weight of
    the counted targets (nan when none counts, as torch; its gradient is then 0).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> logp = dg.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> F.nll_loss(logp, [0, 1]).item()
    0.3
    >>> F.nll_loss(logp, [0, -100]).item()      # the second row is ignored
    0.5
    """
    _check_legacy(size_average, reduce, "nll_loss")
    _check_reduction(reduction, "nll_loss")
    input = _as_tensor(input)
    layout = _class_layout(input, "nll_loss")
    t = _targets_of(layout, input, int(ignore_index), reduction, "nll_loss")
    return _nll(input, target, t, _class_weights(weight, layout[0], input.dtype, "nll_loss"),
                reduction)


def _check_legacy(size_average: Any, reduce: Any, fn: str) -> None:
    if size_average is not None or reduce is not None:
        raise NotImplementedError(f"{fn}: size_average and reduce are deprecated in torch; "
                                  "use reduction='mean', 'sum' or 'none'")


def cross_entropy(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy, as ``torch.nn.functional.cross_entropy``: ``input`` holds
    logits (C,), (N, C) or (N, C, d1, ...) with the classes in dimension 1.

    ``target`` is either class indices (the input's shape without the class dimension:
    a Tensor, array or list; whole-number floats are accepted) with ``weight`` per class,
    ``ignore_index`` and "mean" as the weighted mean over counted targets (nan when all
    are ignored, as torch), or class probabilities of the input's own shape. With
    ``label_smoothing`` e, the target mixes ``1 - e`` of itself with e spread evenly over
    the classes. ``reduction`` is "mean", "sum" or "none". Built from primitives only:
    ``log_softmax``, an integer-index pick, a weighted sum.

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
    fn = "cross_entropy"
    _check_legacy(size_average, reduce, fn)
    _check_reduction(reduction, fn)
    ls = float(label_smoothing)
    if not 0.0 <= ls <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {ls}")
    input = _as_tensor(input)
    layout = c, tshape = _class_layout(input, fn)
    cdim = 0 if input.ndim == 1 else 1
    logp = _log_softmax(input, (cdim,))
    tshape_probs = _values(target).shape if not isinstance(target, Tensor) else target.shape
    if tuple(tshape_probs) == input.shape:  # class probabilities
        return _cross_entropy_probs(input, logp, target, weight, reduction, ls, c, cdim)
    t = _targets_of(layout, logp, int(ignore_index), reduction, fn)
    w = _class_weights(weight, c, logp.dtype, fn)
    nll = _nll(logp, target, t, w, reduction)
    if ls == 0.0:
        return nll
    flat = _classes_last(logp)
    if _is_batched(target):
        _, keep, counted = _batched_weights(logp, target, t, w)
        smooth = -(flat * w).sum(dim=1) if w is not None else -flat.sum(dim=1)
        smooth = smooth * keep
        smooth = (smooth.reshape(tshape) if reduction == "none" else smooth.sum()
                  if reduction == "sum" else _batched_mean(smooth.sum(), counted))
        return nll * (1 - ls) + smooth * (ls / c)
    keep = _derive(_target_weights, target, t=t)
    smooth = -(flat * w).sum(dim=1) if w is not None else -flat.sum(dim=1)
    smooth = smooth * keep
    if reduction == "none":
        smooth = smooth.reshape(tshape)
    elif reduction == "sum":
        smooth = smooth.sum()
    elif w is not None:
        smooth = _batched_mean(smooth.sum(), _counted_weights(target, t, w))
    else:
        smooth = _weighted_mean(smooth.sum(), target, t)
    return nll * (1 - ls) + smooth * (ls / c)


def _cross_entropy_probs(input: Tensor, logp: Tensor, target: Any, weight: Any,
                         reduction: str, ls: float, c: int, cdim: int) -> Tensor:
    fn = "cross_entropy"
    t = target if isinstance(target, Tensor) else tensor(_values(target), dtype=input.dtype)
    if np.dtype(t.dtype).kind != "f":
        raise RuntimeError(f"{fn}: probability targets of shape {t.shape} must be floats, "
                           f"got {t.dtype}")
    if ls > 0.0:
        t = t * (1 - ls) + ls / c
    w = _class_weights(weight, c, input.dtype, fn)
    prod = logp * t
    if w is not None:
        prod = prod * w.reshape((c,) + (1,) * (input.ndim - cdim - 1))
    if reduction == "none":
        return -prod.sum(dim=cdim)
    if reduction == "sum":
        return -prod.sum()
    rows = input.numel() // c if c else 0
    if rows == 0:
        return -prod.sum() + np.nan
    return -prod.sum() / rows

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


# ---------------------------------------------------------------- more losses (layers branch)


def _pair(input: Any, target: Any) -> tuple[Tensor, Tensor]:
    """Input and target as Tensors of the input's float dtype."""
    input = _as_tensor(input)
    target = target if isinstance(target, Tensor) else tensor(_values(target), dtype=input.dtype)
    return input, target


def _const(x: Any, like: Tensor) -> Any:
    """An optional weight as a Tensor (kept differentiable) or an array of ``like``'s dtype."""
    if x is None or isinstance(x, Tensor):
        return x
    return np.asarray(x, dtype=like.dtype)


def _binary_operands(fn: str, input: Any, target: Any, size_average: Any, reduce: Any,
                     reduction: str) -> tuple[Tensor, Tensor]:
    """The checks both binary cross-entropies make, then their input and target as Tensors
    of one shape."""
    _check_legacy(size_average, reduce, fn)
    _check_reduction(reduction, fn)
    input, target = _pair(input, target)
    if target.shape != input.shape:
        raise ValueError(f"{fn}: target of shape {target.shape} must have the input's shape "
                         f"{input.shape}")
    return input, target


def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``-weight * (target * log(input) + (1 - target) * log(1 - input))`` with each log
    clamped at -100, as ``torch.nn.functional.binary_cross_entropy``; ``input`` holds
    probabilities in [0, 1] and ``target`` has its shape.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.binary_cross_entropy(dg.tensor([0.5, 0.9]), [1.0, 1.0]).item(), 6)
    0.399254
    """
    fn = "binary_cross_entropy"
    input, target = _binary_operands(fn, input, target, size_average, reduce, reduction)
    # (checks derived from the values, so that a dg.compile replay checks each call's too)
    _derive(_probabilities, input, what="input")
    _derive(_probabilities, target, what="target")
    loss = -(target * maximum(input.log(), -100.0) + (1 - target) * maximum((1 - input).log(), -100.0))
    weight = _const(weight, input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, fn)


def _probabilities(a: np.ndarray, what: str) -> np.ndarray:
    """``a`` itself, or binary_cross_entropy's error when an element is outside [0, 1]."""
    if a.size and not ((a >= 0) & (a <= 1)).all():
        raise RuntimeError(f"binary_cross_entropy: all elements of the {what} (shape {a.shape}) "
                           "must be between 0 and 1")
    return a


def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None,
                                     size_average: Any = None, reduce: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits as
    ``(1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x)``, as torch does
    (``pos_weight`` scales the positive term, broadcast over the last dimension).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> round(F.binary_cross_entropy_with_logits(dg.tensor([0.0, 800.0]), [1.0, 1.0]).item(), 6)
    0.346574
    """
    fn = "binary_cross_entropy_with_logits"
    input, target = _binary_operands(fn, input, target, size_average, reduce, reduction)
    pos_weight = _const(pos_weight, input)
    soft = softplus_p(-input)
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * soft
    else:
        loss = (1 - target) * input + soft
    weight = _const(weight, input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, fn)


def _diff(input: Any, target: Any) -> Tensor:
    input, target = _pair(input, target)
    return input - target  # broadcast as torch does (torch also warns)


def l1_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """Mean (or sum, or none) of ``|input - target|``; the gradient at a zero difference is
    0, as torch's.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.l1_loss(dg.tensor([1.0, -2.0]), [0.0, 0.0]).item()
    1.5
    """
    _check_legacy(size_average, reduce, "l1_loss")
    _check_reduction(reduction, "l1_loss")
    return _reduce(_diff(input, target).abs(), reduction, "l1_loss")


def smooth_l1_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``d = input -
    target``); ``beta=0`` is ``l1_loss``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.smooth_l1_loss(dg.tensor([0.5, 3.0]), [0.0, 0.0], reduction="none").numpy()
    array([0.125, 2.5  ])
    """
    fn = "smooth_l1_loss"
    _check_legacy(size_average, reduce, fn)
    _check_reduction(reduction, fn)
    beta = float(beta)
    if beta < 0:
        raise RuntimeError(f"{fn}: beta must be >= 0, got {beta}")
    d = _diff(input, target)
    a = d.abs()
    if beta == 0.0:
        return _reduce(a, reduction, fn)
    # NOTE: at |d| == beta torch takes the linear branch (both have slope sign(d) there)
    loss = where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta)
    return _reduce(loss, reduction, fn)


def huber_loss(input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.huber_loss(dg.tensor([0.5, 3.0]), [0.0, 0.0], reduction="none", delta=2.0).numpy()
    array([0.125, 4.   ])
    """
    fn = "huber_loss"
    _check_reduction(reduction, fn)
    delta = float(delta)
    if not delta > 0:
        raise RuntimeError(f"{fn}: delta must be positive, got {delta}")
    d = _diff(input, target)
    a = d.abs()
    loss = where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    weight = _const(weight, loss)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, fn)


def kl_div(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise KL divergence with ``input`` the log-probabilities of the model:
    ``target * (log(target) - input)`` (0 where target is 0), or with ``log_target``
    ``exp(target) * (target - input)``. ``reduction``: "mean" (over every element, as
    torch; "batchmean" is the true KL), "batchmean" (sum / N), "sum" or "none".

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> logq = dg.tensor([[0.5, 0.5]]).log()
    >>> round(F.kl_div(logq, [[1.0, 0.0]], reduction="batchmean").item(), 6)   # log 2
    0.693147
    """
    fn = "kl_div"
    _check_legacy(size_average, reduce, fn)
    if reduction not in ("mean", "batchmean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'batchmean', 'sum' or 'none', "
                         f"got {reduction!r}")
    input, target = _pair(input, target)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        pos = target > 0
        safe = where(pos, target, 1.0)
        loss = where(pos, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, fn)


def _p_norm(x: Tensor, p: float, dim: int) -> Tensor:
    """The ``p``-norm of ``x`` along ``dim``, kept as a size-1 dimension."""
    if p == 2.0:
        return (x * x).sum(dim=dim, keepdim=True).sqrt()
    if p == 1.0:
        return x.abs().sum(dim=dim, keepdim=True)
    if p == float("inf"):
        return _amax(x.abs(), dim)
    return (x.abs() ** p).sum(dim=dim, keepdim=True) ** (1.0 / p)


def _amax(x: Tensor, dim: int) -> Tensor:
    from ..ops import max_p
    return max_p(x, axis=(dim % x.ndim,), keepdims=True)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Tensor:
    """``input / max(norm_p(input, dim), eps)``, as ``torch.nn.functional.normalize``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.normalize(dg.tensor([[3.0, 4.0]])).numpy()
    array([[0.6, 0.8]])
    """
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    input = _as_tensor(input)
    if input.ndim == 0:
        raise IndexError(f"normalize: dim {dim} is out of range for a 0-d tensor")
    return input / maximum(_p_norm(input, float(p), dim), float(eps))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast), each
    norm clamped below at ``eps``: ``sum((x1 / |x1|) * (x2 / |x2|), dim)``, torch's form.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.cosine_similarity(dg.tensor([[1.0, 0.0]]), dg.tensor([[1.0, 1.0]])).numpy().round(6)
    array([0.707107])
    """
    x1, x2 = _as_tensor(x1), _as_tensor(x2)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    dim_index(dim, len(shape), "cosine_similarity", shape)  # the broadcast shape's dims
    if x1.shape != shape:
        x1 = x1.broadcast_to(shape)
    if x2.shape != shape:
        x2 = x2.broadcast_to(shape)
    n1 = maximum(_p_norm(x1, 2.0, dim), float(eps))
    n2 = maximum(_p_norm(x2, 2.0, dim), float(eps))
    return ((x1 / n1) * (x2 / n2)).sum(dim=dim)


def _one_hot(arr: np.ndarray, num_classes: int) -> np.ndarray:
    if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
        raise RuntimeError("one_hot: the input must hold class indices (integers)")
    arr = arr.astype(np.int64)
    if num_classes == -1:
        if arr.size == 0:
            raise RuntimeError("one_hot: cannot infer the number of classes from an empty tensor")
        num_classes = int(arr.max()) + 1
    if arr.size and (arr.min() < 0 or arr.max() >= num_classes):
        raise RuntimeError(f"one_hot: class values must be in [0, {num_classes}), got "
                           f"[{int(arr.min())}, {int(arr.max())}]")
    return (arr[..., None] == np.arange(num_classes)).astype(np.int64)


def one_hot(tensor_: Any, num_classes: int = -1) -> Tensor:
    """Class indices as one-hot rows of ``num_classes`` (-1: the largest index + 1), an
    int64 Tensor with a new last dimension, as ``torch.nn.functional.one_hot``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.one_hot(dg.tensor([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    True
    """
    arr = _values(tensor_)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise RuntimeError(f"one_hot: expected class indices (int64), got dtype {arr.dtype}")
    return tensor(_derive(_one_hot, tensor_, num_classes=int(num_classes)))



# ---------------------------------------------------------------- sparse: the functions of its layers

def _lookup_indices(arr: np.ndarray, n: int) -> np.ndarray:
    """Indices into n rows as an intp array; IndexError (as torch) when out of range."""
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise RuntimeError(f"embedding: expected integer indices (int64 or int32), got "
                           f"dtype {arr.dtype}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise RuntimeError("embedding: expected integer indices, got non-integer values")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = int(arr[(arr < 0) | (arr >= n)].ravel()[0])
        raise IndexError(f"embedding: index {bad} is out of range for a weight of {n} rows")
    return arr.astype(np.intp)



def _padding_idx(padding_idx: int | None, n: int) -> int | None:
    if padding_idx is None:
        return None
    if not -n <= padding_idx < n:
        raise AssertionError(f"embedding: padding_idx {padding_idx} must be within "
                             f"num_embeddings {n}")
    return padding_idx % n



def embedding(input: Any, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of ``weight`` (num_embeddings, embedding_dim) picked by the integer
    ``input`` (any shape): the result has shape ``input.shape + (embedding_dim,)``. Rows
    picked at ``padding_idx`` get no gradient, as torch.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> w = dg.tensor([[0.0, 0.0], [1.0, 2.0]], requires_grad=True)
    >>> F.embedding(dg.tensor([1, 0, 1]), w, padding_idx=0).sum().backward()
    >>> w.grad.numpy()
    array([[0., 0.],
           [2., 2.]])
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are "
                                  "not supported")
    weight = _as_tensor(weight)
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), "
                           f"got shape {weight.shape}")
    n = weight.shape[0]
    idx = _derive(_lookup_indices, input if isinstance(input, Tensor) else np.asarray(input), n=n)
    pad = _padding_idx(padding_idx, n)
    if pad is not None and weight.requires_grad:
        # NOTE: torch's gradient skips the padding row: look it up from a detached copy
        rows = np.zeros((n, 1), dtype=bool)
        rows[pad] = True
        weight = where(rows, weight.detach(), weight)
    return weight[idx]


# ---------------------------------------------------------------- normalization: the functions of its layers

def _normalize(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(x - mean) / sqrt(var + eps)`` over ``dims`` (biased variance), with the mean and
    the biased variance (kept dimensions)."""
    mean = x.mean(dim=dims, keepdim=True)
    d = x - mean
    var = (d * d).mean(dim=dims, keepdim=True)
    return d / (var + eps).sqrt(), mean, var



def _opt(x: Any) -> Any:
    return None if x is None else _as_tensor(x)



def layer_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Any = None,
               bias: Any = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions (which must equal
    ``normalized_shape``), then scale by ``weight`` and shift by ``bias`` if given.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.layer_norm(dg.tensor([[1.0, 3.0]]), (2,)).numpy().round(4)
    array([[-1.,  1.]])
    """
    input = _as_tensor(input)
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) \
        else tuple(int(n) for n in normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or input.shape[input.ndim - k:] != shape:
        raise RuntimeError(f"layer_norm: normalized_shape {list(shape)} does not match the "
                           f"trailing dimensions of an input of shape {input.shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"layer_norm: {name} of shape {tuple(t.shape)} must have "
                               f"normalized_shape {shape}")
    out, _, _ = _normalize(input, tuple(range(input.ndim - k, input.ndim)), float(eps))
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out



def _channel_shape(x: Tensor) -> tuple[int, ...]:
    """(1, C, 1, ...) for broadcasting a per-channel vector against (N, C, ...)."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)



def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Any = None, bias: Any = None, training: bool = False,
               momentum: float | None = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation of (N, C, ...) over every dimension but C, as
    ``torch.nn.functional.batch_norm``: with ``training`` (or without running statistics)
    the batch's mean and biased variance are used, and the running statistics, when
    given, are moved in place towards the batch's mean and *unbiased* variance by
    ``momentum``; otherwise the running statistics normalise.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> rm, rv = dg.zeros(1), dg.ones(1)
    >>> F.batch_norm(dg.tensor([[1.0], [3.0]]), rm, rv, training=True).numpy().round(4)
    array([[-1.],
           [ 1.]])
    >>> rm.numpy(), rv.numpy()         # 0.9 * old + 0.1 * (mean 2, unbiased var 2)
    (array([0.2]), array([1.1]))
    """
    input = _as_tensor(input)
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input (N, C, ...), got shape {input.shape}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"batch_norm: {name} of shape {tuple(t.shape)} must have one "
                               f"value per channel, ({c},), for an input of shape {input.shape}")
    dims = (0,) + tuple(range(2, input.ndim))
    cshape = _channel_shape(input)
    if training or running_mean is None or running_var is None:
        n = input.numel() // c if c else 0
        if training and n <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when "
                             f"training, got input of shape {input.shape}")
        out, mean, var = _normalize(input, dims, float(eps))
        if training and running_mean is not None and running_var is not None:
            # (a 0-d Tensor momentum: BatchNorm's cumulative average, 1 / batches seen)
            m = 0.1 if momentum is None else momentum if isinstance(momentum, Tensor) else float(momentum)
            with _no_grad():  # in-place writes, so that a dg.compile replay redoes them
                unbiased = var.detach().reshape(c) * (n / (n - 1))
                for buf, new in ((running_mean, mean.detach().reshape(c)), (running_var, unbiased)):
                    buf.mul_(1 - m)
                    buf.add_(new.to(buf.dtype) * m)
    elif "BatchedTensor" in (type(running_mean).__name__, type(running_var).__name__):
        # running statistics batched by func.vmap (an ensemble's stacked buffers)
        rm = running_mean.detach().to(input.dtype).reshape(cshape)
        rv = running_var.detach().to(input.dtype).reshape(cshape)
        out = (input - rm) / (rv + input.dtype.type(eps)).sqrt()
    else:
        rm = running_mean._data.astype(input.dtype).reshape(cshape)
        rv = running_var._data.astype(input.dtype).reshape(cshape)
        out = (input - rm) / np.sqrt(rv + input.dtype.type(eps))
    if weight is not None:
        out = out * _as_tensor(weight).reshape(cshape)
    if bias is not None:
        out = out + _as_tensor(bias).reshape(cshape)
    return out



def group_norm(input: Tensor, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels in ``num_groups`` groups (over the group's channels
    and every spatial position), then scale and shift per channel.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> F.group_norm(dg.tensor([[[1.0], [3.0]]]), 1).numpy().round(4).ravel()
    array([-1.,  1.])
    """
    input = _as_tensor(input)
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected an input (N, C, ...), got shape {input.shape}")
    n, c = input.shape[:2]
    if num_groups < 1 or c % num_groups:
        raise RuntimeError(f"group_norm: num_channels {c} must be divisible by num_groups "
                           f"{num_groups}")
    grouped = input.reshape(n, num_groups, -1)
    out, _, _ = _normalize(grouped, (2,), float(eps))
    out = out.reshape(input.shape)
    cshape = _channel_shape(input)
    if weight is not None:
        out = out * _as_tensor(weight).reshape(cshape)
    if bias is not None:
        out = out + _as_tensor(bias).reshape(cshape)
    return out


# ---------------------------------------------------------------- attention: the functions of its layers

def _additive(mask: np.ndarray, dtype: Any, allowed_when_true: bool) -> np.ndarray:
    """A bool mask as an additive float one (0 or -inf); another mask cast to ``dtype``."""
    arr = np.asarray(mask)
    if arr.dtype == np.bool_:
        blocked = ~arr if allowed_when_true else arr
        return np.where(blocked, -np.inf, 0.0).astype(dtype)
    return arr.astype(dtype)


def _float_mask(mask: Any, dtype: Any, allowed_when_true: bool) -> np.ndarray | Tensor:
    """A bool mask as an additive float mask (0 or -inf); a float mask as it is. A Tensor's
    is derived from it (a dg.compile replay derives it from each call's mask)."""
    if isinstance(mask, Tensor):
        if np.dtype(mask.dtype).kind == "f":
            return mask
        return _wrap(_derive(_additive, mask, dtype=dtype, allowed_when_true=allowed_when_true))
    return _additive(mask, dtype, allowed_when_true)



def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dimensions
    (query (..., L, E), key (..., S, E), value (..., S, Ev), leading dimensions broadcast),
    as ``torch.nn.functional.scaled_dot_product_attention``.

    ``scale`` defaults to ``1 / sqrt(E)``. ``attn_mask``: bool (True: may attend) or float
    (added to the scores), broadcastable to (..., L, S). ``is_causal``: query i attends to
    keys 0..i only (with no ``attn_mask``). ``dropout_p``: dropout on the attention
    weights (always applied, as torch's function does; pass 0.0 in evaluation).
    ``enable_gqa``: key and value (..., Hkv, S, E) with fewer heads than the query's Hq
    (a divisor of it) are repeated head by head to Hq (grouped-query attention).

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> v = dg.tensor([[[1.0], [3.0]]])
    >>> F.scaled_dot_product_attention(dg.zeros((1, 2, 1)), dg.zeros((1, 2, 1)), v,
    ...                                is_causal=True).numpy().ravel()
    array([1., 2.])
    """
    fn = "scaled_dot_product_attention"
    q, k, v = _as_tensor(query), _as_tensor(key), _as_tensor(value)
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or q.shape[-1] != k.shape[-1] \
            or k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"{fn}: expected query (..., L, E), key (..., S, E) and value "
                           f"(..., S, Ev), got shapes {q.shape}, {k.shape}, {v.shape}")
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and v.ndim >= 3:
        # grouped-query attention: each key/value head serves Hq / Hkv query heads in a row
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(f"{fn}: with enable_gqa the query's number of heads {hq} must "
                               f"be a multiple of key's {hk} and value's {hv}")
        if hk != hq:
            k = k.repeat_interleave(hq // hk, dim=-3)
        if hv != hq:
            v = v.repeat_interleave(hq // hv, dim=-3)
    L, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = (q @ _swap_last(k)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(f"{fn}: _scaled_dot_product_attention: Explicit attn_mask "
                               "should not be set when is_causal=True")
        attn_mask = np.tril(np.ones((L, S), dtype=bool))
    if attn_mask is not None:
        scores = scores + _float_mask(attn_mask, q.dtype, allowed_when_true=True)
    weights = softmax(scores, axis=-1)
    weights = _dropout(weights, float(dropout_p), as_rng(None))  # (the default generator, as torch's)
    return weights @ v

# Activations (branch elementwise): defined in _activations.py (their modules: activation.py).
from ._activations import (FUNCTIONS as _ACTIVATIONS, celu, elu, gelu, glu, hardsigmoid,  # noqa: E402, F401
                           hardswish, hardtanh, leaky_relu, logsigmoid, mish, prelu, relu, relu6,
                           selu, silu, softmin, softplus, softsign)  # (re-exported through __all__)

__all__ += _ACTIVATIONS
# ---------------------------------------------------------------- convolution and pooling (conv branch)
from ..conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,  # noqa: E402
                    adaptive_max_pool2d, avg_pool1d, avg_pool2d, conv1d, conv2d, conv3d,
                    conv_transpose1d, conv_transpose2d, conv_transpose3d, fold, interpolate,
                    max_pool1d, max_pool2d, max_unpool1d, max_unpool2d, pad, unfold)

__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
            "max_pool1d", "max_pool2d", "max_unpool1d", "max_unpool2d", "avg_pool1d", "avg_pool2d",
            "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
            "pad", "interpolate", "unfold", "fold"]
# ---------------------------------------------------------------- the rest of torch's functional (issue 28)
from ._functional_more import *  # noqa: E402,F401,F403
from ._functional_more import __all__ as _MORE  # noqa: E402

__all__ += _MORE

# ---------------------------------------------------------------- multi-head attention (transformer branch)
from ._mha import _dropout, multi_head_attention_forward  # noqa: E402

__all__ += ["multi_head_attention_forward"]
