"""The functional core of multi-head attention: ``multi_head_attention_forward`` (in
``nn.functional``, as torch's) and the batch-first computation ``MultiheadAttention`` runs.
It lives apart from ``attention.py`` so that ``functional`` can import it without
importing ``Module`` (a cycle).

>>> import duograd as dg
>>> x = dg.ones((3, 2, 4))
>>> out, w = multi_head_attention_forward(x, x, x, 4, 2, dg.ones((12, 4)), None, None, None,
...                                       False, 0.0, dg.ones((4, 4)), None)
>>> out.shape
(3, 2, 4)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops import _mT as _swap_last, concatenate, linear_p, softmax, transpose_p
from .._tensor import Tensor, _as_tensor, _derive, _draw, _wrap
from ..random import as_rng

__all__ = ["multi_head_attention_forward"]

def _keep_mask(rng: np.random.Generator, p: float, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    keep = rng.random(shape) >= p
    return keep.astype(dtype) * np.dtype(dtype).type(1.0 / (1.0 - p))


def _dropout(x: Tensor, p: float, rng: np.random.Generator) -> Tensor:
    """Dropout on the attention weights (drawn through ``_draw``, so a replay draws anew)."""
    if p <= 0.0:
        return x
    if p >= 1.0:
        return x * np.zeros(x.shape, x.dtype)
    return x * _draw(_keep_mask, rng, p, x.shape, x.dtype)


def _bool_additive(mask: np.ndarray, dtype: Any) -> np.ndarray:
    """A bool mask (True: may NOT attend) as an additive one: -inf where True, else 0."""
    return np.where(mask, -np.inf, 0.0).astype(dtype)


def _additive_mask(mask: Any, dtype: Any, name: str) -> Any:
    """A ``MultiheadAttention`` mask as an additive one (torch's ``_canonical_mask``): a
    bool mask (True: may NOT attend) becomes -inf/0 of ``dtype``; a float mask (array or
    Tensor, which may carry a gradient) is added as it is; None stays None."""
    if mask is None:
        return None
    if isinstance(mask, Tensor):
        kind = np.dtype(mask.dtype).kind
        if kind == "f":
            return mask if mask.dtype == dtype else mask.to(dtype)
        if kind == "b":  # (derived from the mask: a dg.compile replay derives it from each call's)
            return _wrap(_derive(_bool_additive, mask, dtype=dtype))
        arr = mask._data
    else:
        arr = np.asarray(mask)
    if arr.dtype == np.bool_:
        return _bool_additive(arr, dtype)
    if arr.dtype.kind != "f":
        raise AssertionError(f"MultiheadAttention: only bool and floating types of {name} are "
                             f"supported, got {arr.dtype}")
    return arr.astype(dtype, copy=False)


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t.shape)


def _pad_last(mask: Any) -> Any:
    """A mask with one more (allowed, 0) key at the end: for ``bias_k`` and zero attention."""
    if isinstance(mask, Tensor):
        zeros = np.zeros(mask.shape[:-1] + (1,), mask.dtype)
        return concatenate([mask, zeros], axis=-1)
    return np.concatenate([mask, np.zeros(mask.shape[:-1] + (1,), mask.dtype)], axis=-1)


def _attention(q: Tensor, k: Tensor, v: Tensor, num_heads: int, proj: tuple,
               bias_k: Any, bias_v: Any, add_zero_attn: bool, dropout_p: float, rng: Any,
               out_proj_weight: Any, out_proj_bias: Any, key_padding_mask: Any,
               need_weights: bool, attn_mask: Any, average_attn_weights: bool,
               is_causal: bool, name: str) -> tuple[Tensor, Any]:
    """The batch-first core: q (N, L, E), k (N, S, kdim), v (N, S, vdim); ``proj`` is
    ``(in_proj_weight, None, None, in_proj_bias)`` (packed) or ``(q_w, k_w, v_w, bias)``.
    Masks are additive already. Returns ((N, L, E), weights (N, H, L, S) or None)."""
    n, L, e = q.shape
    S = k.shape[1]
    h = num_heads
    d = e // h
    w, wk, wv, b = proj
    if wk is None:  # packed (3E, E)
        if q is k and k is v and bias_k is None:  # self-attention: one product for all three
            qkv = linear_p(q, w)
            if b is not None:
                qkv = qkv + b
            qkv = transpose_p(qkv.reshape(n, L, 3, h, d), axes=(2, 0, 3, 1, 4))  # (3, N, H, L, d)
            qh, kh, vh = qkv[0], qkv[1], qkv[2]
        else:
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
            bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
            qh = kh = vh = None
    else:
        wq = w
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        qh = kh = vh = None
    if qh is None:
        def lin(x: Tensor, wt: Tensor, bt: Any) -> Tensor:
            y = linear_p(x, wt)
            return y if bt is None else y + bt
        qp, kp, vp = lin(q, wq, bq), lin(k, wk, bk), lin(v, wv, bv)
        if bias_k is not None:  # one more key and value, the learnt biases, for every batch
            kp = concatenate([kp, bias_k.reshape(1, 1, e).expand(n, 1, e)], axis=1)
            vp = concatenate([vp, bias_v.reshape(1, 1, e).expand(n, 1, e)], axis=1)
        S = kp.shape[1]
        qh = transpose_p(qp.reshape(n, L, h, d), axes=(0, 2, 1, 3))
        kh = transpose_p(kp.reshape(n, S, h, d), axes=(0, 2, 1, 3))
        vh = transpose_p(vp.reshape(n, S, h, d), axes=(0, 2, 1, 3))
    if bias_k is not None and attn_mask is not None:
        attn_mask = _pad_last(attn_mask)
    if bias_k is not None and key_padding_mask is not None:
        key_padding_mask = _pad_last(key_padding_mask)
    if add_zero_attn:  # one more key and value of zeros
        zeros = np.zeros((n, h, 1, d), qh.dtype)
        kh, vh = concatenate([kh, zeros], axis=2), concatenate([vh, zeros], axis=2)
        S += 1
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    mask: Any = None  # additive, broadcastable to (N, H, L, S)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if _shape(attn_mask) != (L, S):
                raise RuntimeError(f"{name}: the shape of the 2D attn_mask is "
                                   f"{_shape(attn_mask)}, but should be {(L, S)}.")
            mask = attn_mask
        elif attn_mask.ndim == 3:
            if _shape(attn_mask) != (n * h, L, S):
                raise RuntimeError(f"{name}: the shape of the 3D attn_mask is "
                                   f"{_shape(attn_mask)}, but should be {(n * h, L, S)}.")
            mask = attn_mask.reshape(n, h, L, S)
        else:
            raise RuntimeError(f"{name}: attn_mask's dimension {attn_mask.ndim} is not supported")
    if key_padding_mask is not None:
        if _shape(key_padding_mask) != (n, S):
            raise AssertionError(f"{name}: expecting key_padding_mask shape of {(n, S)}, but "
                                 f"got {_shape(key_padding_mask)}")
        kpm = key_padding_mask.reshape(n, 1, 1, S)
        mask = kpm if mask is None else kpm + mask
    if is_causal and key_padding_mask is None and not need_weights:
        # torch hands its SDPA is_causal=True here: the mask is the causal one, whatever
        # attn_mask held (it is only a hint).
        mask = np.where(np.tril(np.ones((L, S), dtype=bool)), 0.0, -np.inf).astype(qh.dtype)
    scores = (qh * (1.0 / math.sqrt(d))) @ _swap_last(kh)
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
    dropped = _dropout(weights, dropout_p, rng)
    out = transpose_p(dropped @ vh, axes=(0, 2, 1, 3)).reshape(n, L, e)
    out = linear_p(out, out_proj_weight)
    if out_proj_bias is not None:
        out = out + out_proj_bias
    if not need_weights:
        return out, None
    return out, (weights.mean(dim=1) if average_attn_weights else weights)


def _check_inputs(q: Tensor, k: Tensor, v: Tensor, kpm: Any, attn_mask: Any, num_heads: int,
                  name: str) -> bool:
    """torch's ``_mha_shape_check``: True for batched (3-D) inputs, False for unbatched."""
    if q.ndim == 3:
        if k.ndim != 3 or v.ndim != 3:
            raise AssertionError(f"{name}: for batched (3-D) query, expected key and value to be "
                                 f"3-D but found {k.ndim}-D and {v.ndim}-D tensors respectively")
        if kpm is not None and kpm.ndim != 2:
            raise AssertionError(f"{name}: for batched (3-D) query, expected key_padding_mask to "
                                 f"be None or 2-D but found {kpm.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"{name}: for batched (3-D) query, expected attn_mask to be "
                                 f"None, 2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if q.ndim == 2:
        if k.ndim != 2 or v.ndim != 2:
            raise AssertionError(f"{name}: for unbatched (2-D) query, expected key and value to "
                                 f"be 2-D but found {k.ndim}-D and {v.ndim}-D tensors respectively")
        if kpm is not None and kpm.ndim != 1:
            raise AssertionError(f"{name}: for unbatched (2-D) query, expected key_padding_mask "
                                 f"to be None or 1-D but found {kpm.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"{name}: for unbatched (2-D) query, expected attn_mask to "
                                     f"be None, 2-D or 3-D but found {attn_mask.ndim}-D tensor")
            if attn_mask.ndim == 3 and _shape(attn_mask) != (num_heads, q.shape[0], k.shape[0]):
                raise AssertionError(f"{name}: expected attn_mask of shape "
                                     f"{(num_heads, q.shape[0], k.shape[0])}, got {_shape(attn_mask)}")
        return False
    raise AssertionError(f"{name}: query should be unbatched 2-D or batched 3-D tensor but "
                         f"received {q.ndim}-D query tensor")


def _run(query: Any, key: Any, value: Any, batch_first: bool, embed_dim: int, num_heads: int,
         proj: tuple, bias_k: Any, bias_v: Any, add_zero_attn: bool, dropout_p: float,
         rng: Any, out_w: Any, out_b: Any, key_padding_mask: Any, need_weights: bool,
         attn_mask: Any, average_attn_weights: bool, is_causal: bool,
         name: str) -> tuple[Tensor, Any]:
    """Layout (batch first or not, unbatched), mask canonicalisation and checks, then the core."""
    q, k, v = _as_tensor(query), _as_tensor(key), _as_tensor(value)
    batched = _check_inputs(q, k, v, key_padding_mask, attn_mask, num_heads, name)
    kpm = _additive_mask(key_padding_mask, q.dtype, "key_padding_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{name}: Need attn_mask if specifying the is_causal hint. You may use "
                           "the Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    am = _additive_mask(attn_mask, q.dtype, "attn_mask")
    if kpm is not None:
        is_causal = False  # the merged mask is no longer the causal one
    if q.shape[-1] != embed_dim:
        raise AssertionError(f"{name}: was expecting embedding dimension of {embed_dim}, but got "
                             f"{q.shape[-1]} (query of shape {q.shape})")
    if proj[1] is None and k.shape != v.shape:
        raise AssertionError(f"{name}: key shape {k.shape} does not match value shape {v.shape}")
    if proj[1] is not None and k.shape[:-1] != v.shape[:-1]:
        raise AssertionError(f"{name}: key's sequence and batch dims {k.shape[:-1]} do not match "
                             f"value's {v.shape[:-1]}")
    same_kv, same_qk = k is v, q is k
    if not batched:
        q, k, v = (t.reshape((1,) + t.shape) for t in (q, k, v))
        if kpm is not None:
            kpm = kpm.reshape((1,) + tuple(kpm.shape))
    elif not batch_first:  # (L, N, E) -> (N, L, E)
        q = transpose_p(q, axes=(1, 0, 2))
        k = q if same_qk else transpose_p(k, axes=(1, 0, 2))
        v = k if same_kv else transpose_p(v, axes=(1, 0, 2))
    if same_qk:
        k = q
    if same_kv:
        v = k
    if k.shape[0] != q.shape[0]:
        raise AssertionError(f"{name}: query batch {q.shape[0]} and key batch {k.shape[0]} differ")
    out, weights = _attention(q, k, v, num_heads, proj, bias_k, bias_v, add_zero_attn, dropout_p,
                              rng, out_w, out_b, kpm, need_weights, am, average_attn_weights,
                              is_causal, name)
    if not batched:
        out = out.reshape(out.shape[1:])
        if weights is not None:
            weights = weights.reshape(weights.shape[1:])
    elif not batch_first:
        out = transpose_p(out, axes=(1, 0, 2))
    return out, weights


def multi_head_attention_forward(query: Any, key: Any, value: Any, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Any, in_proj_bias: Any,
                                 bias_k: Any, bias_v: Any, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Any, out_proj_bias: Any, training: bool = True,
                                 key_padding_mask: Any = None, need_weights: bool = True,
                                 attn_mask: Any = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Any = None, k_proj_weight: Any = None,
                                 v_proj_weight: Any = None, static_k: Any = None,
                                 static_v: Any = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Any]:
    """Multi-head attention of (L, N, E) ``query`` over (S, N, kdim) ``key`` and (S, N,
    vdim) ``value`` (or unbatched (L, E), (S, kdim), (S, vdim)), as
    ``torch.nn.functional.multi_head_attention_forward``: the function under
    ``nn.MultiheadAttention``, with its parameters passed explicitly. Returns
    ``(output, weights)``; weights (N, L, S) averaged over heads, (N, H, L, S) with
    ``average_attn_weights=False``, None with ``need_weights=False``.

    >>> import duograd as dg
    >>> from duograd.nn import functional as F
    >>> x = dg.ones((3, 2, 4))
    >>> out, w = F.multi_head_attention_forward(x, x, x, 4, 2, dg.ones((12, 4)), None, None,
    ...                                         None, False, 0.0, dg.ones((4, 4)), None)
    >>> out.shape, w.shape
    ((3, 2, 4), (2, 3, 3))
    """
    name = "multi_head_attention_forward"
    if static_k is not None or static_v is not None:
        raise NotImplementedError(f"{name}: static_k and static_v are not supported")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError(f"{name}: bias_k and bias_v must both be given or both be None")
    if embed_dim_to_check % num_heads:
        raise AssertionError(f"{name}: embed_dim {embed_dim_to_check} not divisible by "
                             f"num_heads {num_heads}")
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError(f"{name}: use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        proj = (_as_tensor(q_proj_weight), _as_tensor(k_proj_weight), _as_tensor(v_proj_weight),
                None if in_proj_bias is None else _as_tensor(in_proj_bias))
    else:
        if in_proj_weight is None:
            raise AssertionError(f"{name}: use_separate_proj_weight is False but in_proj_weight "
                                 "is None")
        proj = (_as_tensor(in_proj_weight), None, None,
                None if in_proj_bias is None else _as_tensor(in_proj_bias))
    return _run(query, key, value, False, int(embed_dim_to_check), int(num_heads), proj,
                bias_k, bias_v, bool(add_zero_attn), float(dropout_p) if training else 0.0,
                as_rng(None), _as_tensor(out_proj_weight),  # (dropout: the default generator, as torch's)
                None if out_proj_bias is None else _as_tensor(out_proj_bias), key_padding_mask,
                need_weights, attn_mask, average_attn_weights, is_causal, name)


def _check_device(device: Any, name: str) -> None:
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"{name}: only the cpu device exists, got {device!r}")
