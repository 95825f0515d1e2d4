"""Rows for the transformer branch: ``F.multi_head_attention_forward`` (the modules, the
Transformer family and MultiheadAttention's new arguments, are compared with torch by the
tests named in coverage_map.COVERED_BY)."""

from __future__ import annotations

from opinfo import B, F, S, row


def _mha(m, q, k, v, w_in, b_in, w_out, b_out, bias_kv=None, zero_attn=False, **kw):
    bk, bv = (None, None) if bias_kv is None else bias_kv
    heads = kw.pop("heads", 2)
    return m.nn.functional.multi_head_attention_forward(
        q, k, v, q.shape[-1], heads, w_in, b_in, bk, bv, zero_attn, 0.0, w_out, b_out, **kw)


def _mha_separate(m, q, k, v, wq, wk, wv, b_in, w_out, b_out, **kw):
    return m.nn.functional.multi_head_attention_forward(
        q, k, v, q.shape[-1], 2, None, b_in, None, None, False, 0.0, w_out, b_out,
        use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk, v_proj_weight=wv, **kw)


_W = (F(12, 4), F(12), F(4, 4), F(4))
row("F.multi_head_attention_forward", _mha,
    [S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), *_W),
     S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), *_W, average_attn_weights=False, label="per head"),
     S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), *_W, need_weights=False, label="no weights"),
     S(F(3, 4), F(5, 4), F(5, 4), *_W, label="unbatched"),
     S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), *_W, attn_mask=F(3, 5, grad=False),
       key_padding_mask=B(2, 5), label="masks"),
     S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), *_W, zero_attn=True, label="add_zero_attn"),
     S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), F(12, 4), None, F(4, 4), None, heads=4,
       label="no biases, 4 heads")],
    errors=[S(F(3, 2, 4), F(5, 2, 4), F(5, 2, 4), *_W, attn_mask=F(3, 4, grad=False))])
row("F.multi_head_attention_forward (kdim, vdim)", _mha_separate,
    [S(F(3, 2, 4), F(5, 2, 3), F(5, 2, 6), F(4, 4), F(4, 3), F(4, 6), F(12), F(4, 4), F(4))])

