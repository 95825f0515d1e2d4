"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward`` (also in
``nn.functional``) and ``MultiheadAttention``, with torch's arguments, mask conventions and
parameter layout.

All are compositions of primitives (linear maps, an additive mask, softmax, matmul), so
the gradients, and second derivatives, are the chain rule. A masked score is -inf before
the softmax, so its weight is exactly 0 and a masked position never changes an output:
the causal mask is exact, not approximate.

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

from .._tensor import Tensor, tensor
from ._mha import _additive_mask, _check_device, _run, multi_head_attention_forward  # noqa: F401
from .functional import scaled_dot_product_attention
from ..random import as_rng
from . import init
from .modules import Linear, Module

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"]


def _xavier_uniform(gen: np.random.Generator, shape: tuple[int, int]) -> Tensor:
    """A new parameter of ``shape``, Xavier-uniform (``nn.init``, as torch's default)."""
    return init.xavier_uniform_(tensor(np.empty(shape), requires_grad=True), generator=gen)


class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention``, with its parameters:
    ``in_proj_weight`` (3E, E), Xavier-uniform (or, when ``kdim`` or ``vdim`` differ from
    ``embed_dim``, ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim), ``v_proj_weight``
    (E, vdim)); ``in_proj_bias`` (3E,), zeros; ``bias_k``, ``bias_v`` (1, 1, E),
    Xavier-normal, with ``add_bias_kv``; ``out_proj``, an ``nn.Linear(E, E)`` with a zero
    bias. A torch model's ``state_dict()`` loads into it by name.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(output, weights)``: inputs (L, N, E), or (N, L, E) with ``batch_first``, or
    unbatched (L, E); ``weights`` (N, L, S) averaged over heads, (N, H, L, S) with
    ``average_attn_weights=False``, None with ``need_weights=False``. Bool masks are True
    where attention is NOT allowed; ``attn_mask`` is (L, S) or (N * H, L, S);
    ``is_causal`` is a hint that ``attn_mask`` is the causal mask (it needs one, as
    torch's); ``add_zero_attn`` appends a key and value of zeros; ``dropout`` acts on the
    attention weights in training mode.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True, rng=0)
    >>> [k for k in mha.state_dict()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    >>> out, w = mha(dg.ones((3, 5, 8)), dg.ones((3, 5, 8)), dg.ones((3, 5, 8)))
    >>> out.shape, w.shape
    ((3, 5, 8), (3, 5, 5))
    >>> list(nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True).state_dict())
    ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'bias_k', 'bias_v', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None, rng: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be positive, "
                             f"got {embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise AssertionError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible "
                                 f"by num_heads {num_heads}")
        _check_device(device, "MultiheadAttention")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.kdim = self.embed_dim if kdim is None else int(kdim)
        self.vdim = self.embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.head_dim = self.embed_dim // self.num_heads
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.add_zero_attn = bool(add_zero_attn)
        gen = as_rng(rng)
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _xavier_uniform(gen, (3 * e, e))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = _xavier_uniform(gen, (e, e))
            self.k_proj_weight = _xavier_uniform(gen, (e, self.kdim))
            self.v_proj_weight = _xavier_uniform(gen, (e, self.vdim))
            self.in_proj_weight = None
        self.in_proj_bias = tensor(np.zeros(3 * e), requires_grad=True) if bias else None
        if add_bias_kv:  # xavier_normal_ on (1, 1, E): fan_in = fan_out = E
            std = math.sqrt(1.0 / e)
            self.bias_k = tensor(gen.normal(0.0, std, (1, 1, e)), requires_grad=True)
            self.bias_v = tensor(gen.normal(0.0, std, (1, 1, e)), requires_grad=True)
        else:
            self.bias_k = self.bias_v = None
        self.out_proj = Linear(e, e, bias=bias, rng=gen)
        if bias:
            self.out_proj.bias._data[...] = 0.0
        self._rng = gen
        if dtype is not None:
            self.to(dtype)

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple[Tensor, Any]:
        if self._qkv_same_embed_dim:
            proj = (self.in_proj_weight, None, None, self.in_proj_bias)
        else:
            proj = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight, self.in_proj_bias)
        return _run(query, key, value, self.batch_first, self.embed_dim, self.num_heads, proj,
                    self.bias_k, self.bias_v, self.add_zero_attn,
                    self.dropout if self.training else 0.0, self._rng, self.out_proj.weight,
                    self.out_proj.bias, key_padding_mask, need_weights, attn_mask,
                    average_attn_weights, is_causal, "MultiheadAttention")

    def _extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"

