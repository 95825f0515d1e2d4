"""The learned surname models as plain ``nn.Module``s, and their PyTorch twins.

- :class:`CharMLP`: Bengio et al. (2003): the embeddings of the previous ``context``
  characters, concatenated, through a hidden layer (LayerNorm, then tanh) to 27 logits.
- :class:`Transformer`: a small decoder-only transformer (nanoGPT's shape): token and
  learned position embeddings, pre-LayerNorm blocks of causal self-attention (our
  ``F.scaled_dot_product_attention(..., is_causal=True)``) and a GELU MLP, a final
  LayerNorm and a linear head.

:func:`torch_twin` builds the same model in PyTorch, with the same parameter names, and
loads the duograd model's weights into it through ``nn.utils.torch_state_dict`` (which
converts every Linear weight to torch's layout, whichever layout duograd uses).

>>> import numpy as np
>>> model = Transformer(vocab=27, context=16, width=16, heads=4, layers=1, rng=0)
>>> model(np.zeros((2, 16), dtype=np.int64)).shape
(2, 16, 27)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import duograd as dg
from duograd import nn
from duograd.nn import functional as F


def _normal(rng: np.random.Generator, shape: tuple[int, ...], std: float) -> np.ndarray:
    return rng.normal(0.0, std, shape)


class CharMLP(nn.Module):
    """P(next | previous ``context`` characters): embed, concatenate, LayerNorm + tanh
    hidden layer, linear read-out.

    >>> m = CharMLP(vocab=27, context=3, embed=10, hidden=32, rng=0)
    >>> m(np.zeros((5, 3), dtype=np.int64)).shape
    (5, 27)
    """

    def __init__(self, vocab: int = 27, context: int = 4, embed: int = 16, hidden: int = 192,
                 rng: Any = None) -> None:
        if int(context) < 1:
            raise ValueError(f"CharMLP: context must be a positive number of characters, "
                             f"got {context}")
        gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        self.vocab, self.context, self.embed_dim = int(vocab), int(context), int(embed)
        self.hidden_dim = int(hidden)
        self.emb = nn.Embedding(vocab, embed, _weight=_normal(gen, (vocab, embed), 1.0))
        self.hidden = nn.Linear(context * embed, hidden, rng=gen)
        self.norm = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, vocab, rng=gen)

    def forward(self, idx: Any) -> dg.Tensor:
        if len(idx.shape) != 2 or idx.shape[1] != self.context:
            raise ValueError(f"CharMLP: expected (N, {self.context}) character indices, got "
                             f"shape {tuple(idx.shape)}")
        e = self.emb(idx)                                   # (N, context, embed)
        h = self.hidden(e.reshape(e.shape[0], self.context * self.embed_dim))
        return self.out(dg.tanh(self.norm(h)))


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention: one Linear makes queries, keys and values, the
    heads attend through ``F.scaled_dot_product_attention(is_causal=True)``, one Linear
    mixes them back."""

    def __init__(self, width: int, heads: int, rng: Any) -> None:
        if width % heads:
            raise ValueError(f"CausalSelfAttention: width {width} is not a multiple of "
                             f"heads {heads}")
        self.width, self.heads = int(width), int(heads)
        self.qkv = nn.Linear(width, 3 * width, rng=rng)
        self.proj = nn.Linear(width, width, rng=rng)

    def forward(self, x: dg.Tensor) -> dg.Tensor:
        B, T, C = x.shape
        H = self.heads
        q, k, v = self.qkv(x).split(C, dim=-1)                         # (B, T, C) each
        q, k, v = (t.reshape(B, T, H, C // H).movedim(2, 1) for t in (q, k, v))  # (B, H, T, C/H)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)    # (B, H, T, C/H)
        return self.proj(y.movedim(1, 2).reshape(B, T, C))


class Block(nn.Module):
    """A pre-LayerNorm transformer block: ``x + attn(ln1(x))``, then ``x + mlp(ln2(x))``."""

    def __init__(self, width: int, heads: int, rng: Any) -> None:
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, rng)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width, rng=rng)
        self.act = nn.GELU()
        self.fc_out = nn.Linear(4 * width, width, rng=rng)

    def forward(self, x: dg.Tensor) -> dg.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.fc_out(self.act(self.fc(self.ln2(x))))


class Transformer(nn.Module):
    """A decoder-only transformer over ``context`` characters: logits (B, T, vocab) for
    the character after each position, each position seeing only itself and earlier ones.

    >>> m = Transformer(vocab=27, context=8, width=8, heads=2, layers=1, rng=0)
    >>> sorted(m.state_dict())[:2]
    ['blocks.0.attn.proj.bias', 'blocks.0.attn.proj.weight']
    """

    def __init__(self, vocab: int = 27, context: int = 16, width: int = 64, heads: int = 4,
                 layers: int = 2, rng: Any = None) -> None:
        if int(context) < 1:
            raise ValueError(f"Transformer: context must be a positive number of characters, "
                             f"got {context}")
        gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        self.vocab, self.context, self.width = int(vocab), int(context), int(width)
        self.tok = nn.Embedding(vocab, width, _weight=_normal(gen, (vocab, width), 0.1))
        self.pos = nn.Embedding(context, width, _weight=_normal(gen, (context, width), 0.1))
        self.blocks = nn.ModuleList([Block(width, heads, gen) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, rng=gen)
        self._positions = np.arange(self.context, dtype=np.int64)

    def forward(self, idx: Any) -> dg.Tensor:
        T = idx.shape[-1]
        if T > self.context:
            raise ValueError(f"Transformer: input of {T} positions is longer than the "
                             f"context of {self.context}")
        x = self.tok(idx) + self.pos(self._positions[:T])
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


# ---------------------------------------------------------------- the PyTorch twins

def _torch_classes() -> dict[str, type]:
    """The same three models in PyTorch, with the same parameter names (built on demand:
    PyTorch is imported only when a twin is asked for)."""
    import torch
    from torch import nn as tnn
    from torch.nn import functional as TF

    class TCharMLP(tnn.Module):
        def __init__(self, vocab, context, embed, hidden):
            super().__init__()
            self.context, self.embed_dim = context, embed
            self.emb = tnn.Embedding(vocab, embed)
            self.hidden = tnn.Linear(context * embed, hidden)
            self.norm = tnn.LayerNorm(hidden)
            self.out = tnn.Linear(hidden, vocab)

        def forward(self, idx):
            e = self.emb(idx)
            return self.out(torch.tanh(self.norm(self.hidden(e.reshape(e.shape[0], -1)))))

    class TAttention(tnn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.qkv = tnn.Linear(width, 3 * width)
            self.proj = tnn.Linear(width, width)

        def forward(self, x):
            B, T, C = x.shape
            H = self.heads
            q, k, v = self.qkv(x).split(C, dim=-1)
            q, k, v = (t.reshape(B, T, H, C // H).movedim(2, 1) for t in (q, k, v))
            y = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.movedim(1, 2).reshape(B, T, C))

    class TBlock(tnn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.ln1 = tnn.LayerNorm(width)
            self.attn = TAttention(width, heads)
            self.ln2 = tnn.LayerNorm(width)
            self.fc = tnn.Linear(width, 4 * width)
            self.act = tnn.GELU()
            self.fc_out = tnn.Linear(4 * width, width)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.fc_out(self.act(self.fc(self.ln2(x))))

    class TTransformer(tnn.Module):
        def __init__(self, vocab, context, width, heads, layers):
            super().__init__()
            self.tok = tnn.Embedding(vocab, width)
            self.pos = tnn.Embedding(context, width)
            self.blocks = tnn.ModuleList([TBlock(width, heads) for _ in range(layers)])
            self.ln_f = tnn.LayerNorm(width)
            self.head = tnn.Linear(width, vocab)

        def forward(self, idx):
            T = idx.shape[-1]
            x = self.tok(idx) + self.pos(torch.arange(T))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return {"CharMLP": TCharMLP, "Transformer": TTransformer}


def torch_twin(model: nn.Module, dtype: Any = None) -> Any:
    """The PyTorch model of ``model``'s class and sizes holding ``model``'s weights
    (float64 unless ``dtype`` says otherwise): the independent implementation the stage
    and the tests compare against."""
    import torch

    classes = _torch_classes()
    if isinstance(model, CharMLP):
        twin = classes["CharMLP"](model.vocab, model.context, model.embed_dim,
                                  model.hidden_dim)
    elif isinstance(model, Transformer):
        twin = classes["Transformer"](model.vocab, model.context, model.width,
                                      model.blocks[0].attn.heads, len(model.blocks))
    else:
        raise TypeError(f"torch_twin: no PyTorch twin for {type(model).__name__}")
    dtype = torch.float64 if dtype is None else dtype
    twin = twin.to(dtype)
    state = {k: v.to(dtype) for k, v in nn.utils.torch_state_dict(model).items()}
    twin.load_state_dict(state)
    return twin
