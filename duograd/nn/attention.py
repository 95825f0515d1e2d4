"""Attention: ``scaled_dot_product_attention`` (also in ``nn.functional``) and
``MultiheadAttention``, with torch's arguments, mask conventions and parameter layout.

Both are compositions of primitives (matmul, an additive mask, softmax, matmul), so the
gradients, and second derivatives, are the chain rule. A masked score is -inf before the
softmax, so its weight is exactly 0 and a masked position never changes an output: the
causal mask is exact, not approximate.

Mask conventions, as torch: in ``scaled_dot_product_attention`` a bool ``attn_mask`` is
True where a query MAY attend; in ``MultiheadAttention`` bool masks (``attn_mask``,
``key_padding_mask``) are True where it may NOT. Float masks are added to the scores.

>>> import duograd as dg
>>> from duograd.nn import functional as F
>>> q = k = v = dg.randn(1, 4, 8)
>>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
(1, 4, 8)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops import softmax, transpose_p
from .._tensor import Tensor, _as_tensor, tensor
from .functional import _dropout, _float_mask, _swap_last, scaled_dot_product_attention
from ..random import as_rng
from . import init
from .modules import Linear, Module

__all__ = ["scaled_dot_product_attention", "MultiheadAttention"]













class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention``, with its parameters:
    ``in_proj_weight`` (3E, E), Xavier-uniform; ``in_proj_bias`` (3E,), zeros;
    ``out_proj``, an ``nn.Linear(E, E)`` with a zero bias. A torch model's
    ``state_dict()`` loads into it by name.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(output, weights)``: inputs (L, N, E), or (N, L, E) with ``batch_first``, or
    unbatched (L, E); ``weights`` (N, L, S) averaged over heads, (N, H, L, S) with
    ``average_attn_weights=False``, None with ``need_weights=False``. Bool masks are True
    where attention is NOT allowed; ``dropout`` acts on the attention weights in
    training mode.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True, rng=0)
    >>> [k for k in mha.state_dict()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    >>> out, w = mha(dg.ones((3, 5, 8)), dg.ones((3, 5, 8)), dg.ones((3, 5, 8)))
    >>> out.shape, w.shape
    ((3, 5, 8), (3, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None, rng: Any = None) -> None:
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are "
                                      "not supported")
        if (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("MultiheadAttention: kdim/vdim other than embed_dim are "
                                      "not supported")
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be positive, "
                             f"got {embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise AssertionError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible "
                                 f"by num_heads {num_heads}")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = self.embed_dim // self.num_heads
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        gen = as_rng(rng)
        e = self.embed_dim
        self.in_proj_weight = tensor(np.empty((3 * e, e)), requires_grad=True)
        init.xavier_uniform_(self.in_proj_weight, generator=gen)
        self.in_proj_bias = tensor(np.empty(3 * e), requires_grad=True) if bias else None
        self.out_proj = Linear(e, e, bias=bias, rng=gen)
        if bias:  # torch's _reset_parameters: both biases zero, the out projection's weight Linear's
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        self._rng = gen

    def _project(self, x: Tensor, i: int) -> Tensor:
        e = self.embed_dim
        out = x @ _swap_last(self.in_proj_weight[i * e:(i + 1) * e])
        return out if self.in_proj_bias is None else out + self.in_proj_bias[i * e:(i + 1) * e]

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple[Tensor, Any]:
        q, k, v = _as_tensor(query), _as_tensor(key), _as_tensor(value)
        name = "MultiheadAttention"
        unbatched = q.ndim == 2
        if unbatched:
            q, k, v = (t.reshape((1,) + t.shape) for t in (q, k, v))
            if key_padding_mask is not None:
                key_padding_mask = np.asarray(_plain(key_padding_mask))[None]
        elif not self.batch_first:  # (L, N, E) -> (N, L, E)
            q, k, v = (transpose_p(t, axes=(1, 0, 2)) for t in (q, k, v))
        if q.ndim != 3 or k.ndim != 3 or v.ndim != 3 or q.shape[-1] != self.embed_dim \
                or k.shape[:2] != v.shape[:2] or q.shape[0] != k.shape[0]:
            raise AssertionError(f"{name}: expected query, key, value of embed_dim "
                                 f"{self.embed_dim} with matching batch and source lengths, "
                                 f"got shapes {tuple(query.shape)}, {tuple(key.shape)}, "
                                 f"{tuple(value.shape)}")
        n, L, _ = q.shape
        S = k.shape[1]
        h, d = self.num_heads, self.head_dim
        heads = lambda t, length: transpose_p(t.reshape(n, length, h, d), axes=(0, 2, 1, 3))  # noqa: E731
        qh, kh, vh = heads(self._project(q, 0), L), heads(self._project(k, 1), S), heads(self._project(v, 2), S)
        mask: Any = None  # an additive float mask broadcastable to (N, H, L, S)
        if is_causal and attn_mask is None:
            attn_mask = ~np.tril(np.ones((L, S), dtype=bool))
        if attn_mask is not None:
            m = _float_mask(attn_mask, q.dtype, allowed_when_true=False)
            if m.ndim == 3:  # (N * H, L, S)
                m = m.reshape(n, h, L, S)
            mask = m
        if key_padding_mask is not None:
            kpm = _float_mask(key_padding_mask, q.dtype, allowed_when_true=False)
            if tuple(kpm.shape) != (n, S):
                raise AssertionError(f"{name}: key_padding_mask must have shape ({n}, {S}), "
                                     f"got {tuple(kpm.shape)}")
            kpm = kpm.reshape(n, 1, 1, S)
            mask = kpm if mask is None else mask + kpm
        scores = (qh * (1.0 / math.sqrt(d))) @ _swap_last(kh)
        if mask is not None:
            scores = scores + mask
        weights = softmax(scores, axis=-1)
        dropped = _dropout(weights, self.dropout, self._rng) if self.training else weights
        out = transpose_p(dropped @ vh, axes=(0, 2, 1, 3)).reshape(n, L, self.embed_dim)
        out = self.out_proj(out)
        if unbatched:
            out = out.reshape(L, self.embed_dim)
        elif not self.batch_first:
            out = transpose_p(out, axes=(1, 0, 2))
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if unbatched:
            weights = weights.reshape(weights.shape[1:])
        return out, weights

    def _extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"


def _plain(x: Any) -> Any:
    return x.data if isinstance(x, Tensor) else x
