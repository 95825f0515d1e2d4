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

from ..ops import where
from .._tensor import Tensor, _as_tensor, _derive, tensor
from .modules import Module, _as_rng

__all__ = ["Embedding", "embedding"]


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


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, as
    ``torch.nn.Embedding``: ``weight`` drawn from N(0, 1) (``rng``: a NumPy Generator or
    a seed), its ``padding_idx`` row zeroed; ``_weight`` gives the table instead.

    >>> from duograd import nn
    >>> emb = nn.Embedding(5, 2, padding_idx=1, rng=0)
    >>> emb.weight.shape, emb.weight.numpy()[1].tolist()
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
            w = _as_rng(rng).standard_normal((self.num_embeddings, self.embedding_dim))
            if self.padding_idx is not None:
                w[self.padding_idx] = 0.0
        else:
            w = np.array(_weight.data if isinstance(_weight, Tensor) else _weight, dtype=float)
            if w.shape != (self.num_embeddings, self.embedding_dim):
                raise AssertionError(f"Embedding: _weight of shape {w.shape} must have shape "
                                     f"({self.num_embeddings}, {self.embedding_dim})")
        self.weight = tensor(w, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> "Embedding":
        """An Embedding holding ``embeddings`` (2-D), frozen by default.

        >>> import duograd as dg
        >>> from duograd import nn
        >>> nn.Embedding.from_pretrained(dg.ones((3, 3))).weight.requires_grad
        False
        """
        arr = embeddings.data if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if arr.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {arr.shape}")
        return cls(arr.shape[0], arr.shape[1], padding_idx=padding_idx, _weight=arr, _freeze=freeze)

    def forward(self, input: Any) -> Tensor:
        return embedding(input, self.weight, self.padding_idx)

    def _extra_repr(self) -> str:
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
