"""The Transformer family, as torch's: ``TransformerEncoderLayer``,
``TransformerDecoderLayer``, ``TransformerEncoder``, ``TransformerDecoder`` and
``Transformer``, with torch's arguments, submodule names (so a torch ``state_dict()``
loads by name: ``self_attn.in_proj_weight``, ``linear1.weight``, ``norm1.weight``,
``layers.0.…``), masks and default initialisation.

Each layer is a composition of modules that already exist (``MultiheadAttention``,
``Linear``, ``LayerNorm``, ``Dropout``): post-norm ``x = norm(x + block(x))`` or, with
``norm_first``, pre-norm ``x = x + block(norm(x))``, as torch writes them, so gradients and
second derivatives are the chain rule through those.

Masks follow ``MultiheadAttention``: bool masks are True where a position may NOT be
attended, float masks are added to the scores; ``is_causal`` is a hint that the given mask
is the causal one (``Transformer.generate_square_subsequent_mask``).

>>> import duograd as dg
>>> from duograd import nn
>>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
...                                    batch_first=True)
>>> enc = nn.TransformerEncoder(layer, num_layers=2)
>>> mask = nn.Transformer.generate_square_subsequent_mask(5)
>>> enc(dg.randn(3, 5, 8), mask=mask, is_causal=True).shape
(3, 5, 8)
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor, _as_tensor, get_default_dtype, tensor
from ._activations import gelu
from .attention import MultiheadAttention, _additive_mask, _check_device
from .containers import ModuleList
from .modules import Dropout, Linear, Module
from .normalization import LayerNorm
from ..random import as_rng

__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer"]


def _relu(x: Tensor) -> Tensor:
    return x.relu()


def _activation(activation: Any, name: str) -> Callable[[Tensor], Tensor]:
    """torch's ``_get_activation_fn``: "relu" or "gelu", else the callable itself."""
    if isinstance(activation, str):
        if activation == "relu":
            return _relu
        if activation == "gelu":
            return gelu
        raise RuntimeError(f"{name}: activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise TypeError(f"{name}: activation must be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__}")
    return activation


def _finish(module: Module, device: Any, dtype: Any, name: str) -> None:
    _check_device(device, name)
    if dtype is not None:
        module.to(dtype)


def _canonical(mask: Any, like: Tensor, name: str) -> Any:
    """A bool mask as an additive float one of ``like``'s dtype (torch's ``_canonical_mask``)."""
    return _additive_mask(mask, like.dtype, name)


def _sequence_length(x: Tensor, batch_first: bool) -> int:
    if x.ndim == 2:  # unbatched (S, E)
        return x.shape[0]
    return x.shape[1 if batch_first else 0]


def _detect_causal(mask: Any, is_causal: bool | None, size: int) -> bool:
    """torch's ``_detect_is_causal_mask``: ``is_causal`` if given; otherwise True when
    ``mask`` equals the square subsequent mask of ``size``."""
    if is_causal is not None:
        return bool(is_causal)
    if mask is None:
        return False
    arr = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    causal = np.triu(np.full((size, size), -np.inf), 1)
    return arr.shape == causal.shape and bool(np.all(arr == causal))


def _clones(layer: Module, n: int) -> ModuleList:
    """``n`` deep copies of ``layer`` (torch's ``_get_clones``), equal weights. Random
    generators are shared, not copied, so the clones' dropout draws from one stream (as
    torch's global generator) rather than repeating one another's masks."""
    shared: dict[int, Any] = {}
    tensors: list[Tensor] = []
    for m in layer.modules():
        for value in vars(m).values():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(item, np.random.Generator):
                    shared[id(item)] = item
                elif isinstance(item, Tensor):
                    tensors.append(item)
    clones = []
    for _ in range(int(n)):
        memo = dict(shared)
        for t in tensors:  # Tensors copy by value (their data, requires_grad, class)
            fresh = tensor(t._data.copy(), requires_grad=t.requires_grad)
            if type(t) is not Tensor:
                fresh.__class__ = type(t)
            memo[id(t)] = fresh
        clones.append(copy.deepcopy(layer, memo))
    return ModuleList(clones)


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and a
    ``LayerNorm`` (after, or before with ``norm_first``), as
    ``torch.nn.TransformerEncoderLayer``: submodules ``self_attn``, ``linear1``,
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``.

    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``: ``src``
    (S, N, E), (N, S, E) with ``batch_first``, or unbatched (S, E). ``activation`` is
    "relu", "gelu" or a callable (a module such as ``nn.GELU()`` too).

    >>> import duograd as dg
    >>> from duograd import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> [k for k in layer.state_dict()][:4]
    ['self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', 'self_attn.out_proj.bias']
    >>> layer(dg.randn(2, 5, 8)).shape
    (2, 5, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None, rng: Any = None) -> None:
        gen = as_rng(rng)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, rng=gen)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, rng=gen)
        self.dropout = Dropout(dropout, rng=gen)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, rng=gen)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout, rng=gen)
        self.dropout2 = Dropout(dropout, rng=gen)
        self.activation = _activation(activation, "TransformerEncoderLayer")
        _finish(self, device, dtype, "TransformerEncoderLayer")

    def forward(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        x = _as_tensor(src)
        if x.ndim not in (2, 3):
            raise AssertionError(f"TransformerEncoderLayer: expected src of 2 or 3 dimensions, "
                                 f"got shape {x.shape}")
        kpm = _canonical(src_key_padding_mask, x, "src_key_padding_mask")
        mask = _canonical(src_mask, x, "src_mask")
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), mask, kpm, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, mask, kpm, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, mask: Any, kpm: Any, is_causal: bool) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                             is_causal=is_causal)[0]
        return self.dropout1(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over ``memory``, then a feed-forward block, each with a
    residual connection and a ``LayerNorm`` (after, or before with ``norm_first``), as
    ``torch.nn.TransformerDecoderLayer``: submodules ``self_attn``, ``multihead_attn``,
    ``linear1``, ``dropout``, ``linear2``, ``norm1``-``norm3``, ``dropout1``-``dropout3``.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(dg.randn(2, 5, 8), dg.randn(2, 7, 8)).shape
    (2, 5, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None, rng: Any = None) -> None:
        gen = as_rng(rng)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, rng=gen)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, rng=gen)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, rng=gen)
        self.dropout = Dropout(dropout, rng=gen)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, rng=gen)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout, rng=gen)
        self.dropout2 = Dropout(dropout, rng=gen)
        self.dropout3 = Dropout(dropout, rng=gen)
        self.activation = _activation(activation, "TransformerDecoderLayer")
        _finish(self, device, dtype, "TransformerDecoderLayer")

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x, mem = _as_tensor(tgt), _as_tensor(memory)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), mem, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, mem, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, mask: Any, kpm: Any, is_causal: bool) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                             is_causal=is_causal)[0]
        return self.dropout1(out)

    def _mha_block(self, x: Tensor, mem: Tensor, mask: Any, kpm: Any, is_causal: bool) -> Tensor:
        out = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm,
                                  need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies, equal initial weights, as
    torch's), applied in turn, then ``norm`` if given; submodules ``layers.0``, ``layers.1``,
    ..., ``norm``. ``enable_nested_tensor`` and ``mask_check`` are accepted (duograd has
    no nested tensors: padded positions are computed, not skipped).

    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)``; with
    ``is_causal`` None it is True exactly when ``mask`` is the square subsequent mask.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), num_layers=2,
    ...                             norm=nn.LayerNorm(8))
    >>> [k for k in enc.state_dict()][-2:]
    ['norm.weight', 'norm.bias']
    >>> enc(dg.randn(5, 3, 8)).shape
    (5, 3, 8)
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module, got "
                            f"{type(encoder_layer).__name__}")
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm
        self.enable_nested_tensor = bool(enable_nested_tensor)
        self.mask_check = bool(mask_check)

    def forward(self, src: Any, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        out = _as_tensor(src)
        kpm = _canonical(src_key_padding_mask, out, "src_key_padding_mask")
        mask = _canonical(mask, out, "mask")
        first = self.layers[0] if len(self.layers) else None
        batch_first = bool(getattr(getattr(first, "self_attn", None), "batch_first", False))
        causal = _detect_causal(mask, is_causal, _sequence_length(out, batch_first))
        for layer in self.layers:
            out = layer(out, src_mask=mask, is_causal=causal, src_key_padding_mask=kpm)
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn over ``memory``, then
    ``norm`` if given, as ``torch.nn.TransformerDecoder``.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False)``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), num_layers=2)
    >>> dec(dg.randn(5, 3, 8), dg.randn(6, 3, 8)).shape
    (5, 3, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        if not isinstance(decoder_layer, Module):
            raise TypeError(f"TransformerDecoder: decoder_layer must be a Module, got "
                            f"{type(decoder_layer).__name__}")
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        out = _as_tensor(tgt)
        first = self.layers[0] if len(self.layers) else None
        batch_first = bool(getattr(getattr(first, "self_attn", None), "batch_first", False))
        causal = _detect_causal(tgt_mask, tgt_is_causal, _sequence_length(out, batch_first))
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=causal, memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """An encoder-decoder transformer, as ``torch.nn.Transformer``: ``encoder`` (a
    ``TransformerEncoder`` of ``num_encoder_layers`` layers and a final ``LayerNorm``) and
    ``decoder`` (likewise), or ``custom_encoder``/``custom_decoder``. Every parameter
    with more than one dimension is re-drawn Xavier-uniform, as torch's
    ``_reset_parameters``.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)`` returns the
    decoder's output, shaped as ``tgt``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                        dim_feedforward=16, batch_first=True)
    >>> tgt_mask = nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(dg.randn(2, 6, 8), dg.randn(2, 4, 8), tgt_mask=tgt_mask).shape
    (2, 4, 8)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Any = None, custom_decoder: Any = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False,
                 bias: bool = True, device: Any = None, dtype: Any = None, rng: Any = None) -> None:
        gen = as_rng(rng)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, rng=gen)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, rng=gen)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for _, p in self.named_parameters():  # torch's _reset_parameters: xavier_uniform_
            if p.ndim > 1:
                receptive = int(np.prod(p.shape[2:]))  # 1 for a matrix
                bound = float(np.sqrt(6.0 / ((p.shape[0] + p.shape[1]) * receptive)))
                p._data[...] = gen.uniform(-bound, bound, p.shape)
        self.d_model, self.nhead, self.batch_first = int(d_model), int(nhead), bool(batch_first)
        _finish(self, device, dtype, "Transformer")

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        src, tgt = _as_tensor(src), _as_tensor(tgt)
        batched = src.ndim == 3
        axis = 0 if self.batch_first else 1
        if batched and (tgt.ndim != 3 or src.shape[axis] != tgt.shape[axis]):
            raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal, "
                               f"got shapes {src.shape} and {tgt.shape}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal to "
                               f"d_model ({self.d_model}), got shapes {src.shape} and {tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The (sz, sz) causal mask: 0 on and below the diagonal, -inf above it (a float
        mask, of the default dtype unless ``dtype`` is given).

        >>> from duograd import nn
        >>> nn.Transformer.generate_square_subsequent_mask(3).numpy()
        array([[  0., -inf, -inf],
               [  0.,   0., -inf],
               [  0.,   0.,   0.]])
        """
        _check_device(device, "generate_square_subsequent_mask")
        mask = np.triu(np.full((int(sz), int(sz)), -np.inf), 1)
        return tensor(mask, dtype=get_default_dtype() if dtype is None else dtype)
