"""``Embedding``: a lookup table of vectors, with torch's ``weight`` (num_embeddings,
embedding_dim) drawn from N(0, 1) and ``padding_idx`` (a row of zeros that gets no
gradient), and its function ``embedding`` (also in ``nn.functional``).

The lookup is integer indexing of the weight, so its gradient is the index-add of the
output's gradient into the rows used (a row used twice gets both contributions).

>>> import duograd as dg
>>> from duograd import nn
>>> emb = nn.Embedding(10, 3, padding_idx=0, rng=0)
>>> emb(dg.tensor([[0, 4], [4, 9]])).shape
(2, 2, 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, tensor
from .functional import _padding_idx, embedding
from ..random import as_rng
from ..autograd import no_grad
from . import init
from .modules import Module

__all__ = ["Embedding", "embedding"]








class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, as
    ``torch.nn.Embedding``: ``weight`` drawn from N(0, 1) (``rng``: a NumPy Generator or
    a seed), its ``padding_idx`` row zeroed; ``_weight`` gives the table instead.

    >>> from duograd import nn
    >>> emb = nn.Embedding(5, 2, padding_idx=1, rng=0)
    >>> emb.weight.shape, emb.weight.detach().numpy()[1].tolist()
    ((5, 2), [0.0, 0.0])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight: Any = None,
                 _freeze: bool = False, rng: Any = None) -> None:
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: max_norm, scale_grad_by_freq and sparse are "
                                      "not supported")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = _padding_idx(padding_idx, self.num_embeddings)
        if _weight is None:
            self.weight = tensor(np.empty((self.num_embeddings, self.embedding_dim)),
                                 requires_grad=not _freeze)
            self._reset(as_rng(rng))
        else:
            w = np.array(_weight._data if isinstance(_weight, Tensor) else _weight, dtype=float)
            if w.shape != (self.num_embeddings, self.embedding_dim):
                raise AssertionError(f"Embedding: _weight of shape {w.shape} must have shape "
                                     f"({self.num_embeddings}, {self.embedding_dim})")
            self.weight = tensor(w, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Draw the weight again from N(0, 1) (the default generator), the padding row zero."""
        self._reset(None)

    def _reset(self, gen: Any) -> None:
        init.normal_(self.weight, generator=gen)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> "Embedding":
        """An Embedding holding ``embeddings`` (2-D), frozen by default.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> nn.Embedding.from_pretrained(dg.ones((3, 3))).weight.requires_grad
        False
        """
        arr = embeddings._data if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if arr.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {arr.shape}")
        return cls(arr.shape[0], arr.shape[1], padding_idx=padding_idx, _weight=arr, _freeze=freeze)

    def forward(self, input: Any) -> Tensor:
        return embedding(input, self.weight, self.padding_idx)

    def _extra_repr(self) -> str:
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
