"""Batches of sequences of different lengths, as ``torch.nn.utils.rnn``: padding them to
one length (``pad_sequence``, ``unpad_sequence``) and packing them (``PackedSequence``,
``pack_padded_sequence``, ``pad_packed_sequence``, ``pack_sequence``,
``unpack_sequence``), which the recurrent layers accept.

A packed sequence holds the steps of every sequence time step by time step, longest
sequence first: ``data`` (sum of the lengths, *), ``batch_sizes[t]`` the number of
sequences still running at step t. Every conversion is one gather (integer indexing) of
the input, so gradients flow through it as torch's do: a padding position gets none.

>>> import duograd as dg
>>> from duograd.nn.utils import rnn
>>> p = rnn.pack_sequence([dg.tensor([1.0, 2.0, 3.0]), dg.tensor([4.0])])
>>> p.data.numpy(), p.batch_sizes.numpy()
(array([1., 4., 2., 3.]), array([2, 1, 1]))
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from ...ops import concatenate_p, transpose_p
from ..._tensor import Tensor, tensor

__all__ = ["PackedSequence", "pad_sequence", "unpad_sequence", "pack_padded_sequence",
           "pad_packed_sequence", "pack_sequence", "unpack_sequence", "invert_permutation"]


def _ints(x: Any, name: str, op: str) -> np.ndarray:
    if isinstance(x, Tensor):
        arr = x.detach().numpy()
    elif hasattr(x, "detach") and hasattr(x, "numpy"):
        arr = x.detach().cpu().numpy()  # a torch tensor
    else:
        arr = np.asarray(x)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise RuntimeError(f"{op}: {name} must be a 1-D sequence of ints, got {arr.dtype} of "
                           f"shape {arr.shape}")
    return arr.astype(np.int64)


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else tensor(x)


def invert_permutation(permutation: Any) -> Tensor | None:
    """The inverse of a permutation of 0..n-1 (None stays None), as torch's helper.

    >>> from duograd.nn.utils.rnn import invert_permutation
    >>> invert_permutation([2, 0, 1]).numpy()
    array([1, 2, 0])
    """
    if permutation is None:
        return None
    p = _ints(permutation, "permutation", "invert_permutation")
    out = np.empty_like(p)
    out[p] = np.arange(p.size)
    return tensor(out)


_Fields = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_Fields):
    """A packed batch of sequences, as ``torch.nn.utils.rnn.PackedSequence``: a named
    tuple ``(data, batch_sizes, sorted_indices, unsorted_indices)``. ``batch_sizes`` is an
    int64 Tensor; ``sorted_indices`` orders the original batch by decreasing length and
    ``unsorted_indices`` undoes it (both None when the batch came sorted). Build one with
    ``pack_padded_sequence`` or ``pack_sequence`` rather than by hand.

    >>> import duograd as dg
    >>> from duograd.nn.utils.rnn import PackedSequence
    >>> p = PackedSequence(dg.ones((3, 2)), dg.tensor([2, 1]))
    >>> p.batch_sizes.tolist(), p.sorted_indices
    ([2, 1], None)
    """

    __slots__ = ()

    def __new__(cls, data: Any, batch_sizes: Any = None, sorted_indices: Any = None,
                unsorted_indices: Any = None) -> "PackedSequence":
        if batch_sizes is None:
            raise RuntimeError("PackedSequence: batch_sizes is required (build packed sequences "
                               "with pack_padded_sequence or pack_sequence)")
        bs = tensor(_ints(batch_sizes, "batch_sizes", "PackedSequence"))
        si = None if sorted_indices is None else tensor(_ints(sorted_indices, "sorted_indices",
                                                              "PackedSequence"))
        if unsorted_indices is None:
            ui = invert_permutation(si)
        else:
            ui = tensor(_ints(unsorted_indices, "unsorted_indices", "PackedSequence"))
        return super().__new__(cls, _as_tensor(data), bs, si, ui)

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """A PackedSequence with ``data.to(...)`` (a dtype, or the cpu device).

        >>> import duograd as dg
        >>> from duograd.nn.utils import rnn
        >>> rnn.pack_sequence([dg.ones(2)]).to(dg.float32).data.dtype == dg.float32
        True
        """
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes,
                                                         self.sorted_indices, self.unsorted_indices)

    def double(self) -> "PackedSequence":
        """``data`` as float64."""
        return self.to(np.float64)

    def float(self) -> "PackedSequence":
        """``data`` as float32."""
        return self.to(np.float32)

    def cpu(self) -> "PackedSequence":
        """Itself: every Tensor is on the cpu."""
        return self

    @property
    def is_cuda(self) -> bool:
        """False: there is only the cpu."""
        return False

    def is_pinned(self) -> bool:
        """False: there is no pinned memory."""
        return False


# ---------------------------------------------------------------- padding


def pad_sequence(sequences: Sequence[Any], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Pad tensors of shapes (L_i, *) to the longest L and stack them: (L, B, *), or
    (B, L, *) with ``batch_first``; ``padding_side`` ``'right'`` (after each sequence) or
    ``'left'``, as ``torch.nn.utils.rnn.pad_sequence``.

    >>> import duograd as dg
    >>> from duograd.nn.utils.rnn import pad_sequence
    >>> pad_sequence([dg.tensor([1.0, 2.0]), dg.tensor([3.0])], batch_first=True).numpy()
    array([[1., 2.],
           [3., 0.]])
    """
    op = "pad_sequence"
    if padding_side not in ("left", "right"):
        raise ValueError(f"{op}: padding_side must be 'left' or 'right', got {padding_side!r}")
    if isinstance(sequences, Tensor):
        sequences = [sequences[i] for i in range(sequences.shape[0])]
    seqs = [_as_tensor(s) for s in sequences]
    if not seqs:
        raise RuntimeError(f"{op}: received an empty list of sequences")
    if any(s.ndim == 0 for s in seqs) or len({s.shape[1:] for s in seqs}) != 1:
        raise RuntimeError(f"{op}: every sequence needs at least one dimension and the same "
                           f"trailing dimensions, got shapes {[s.shape for s in seqs]}")
    lengths = np.array([s.shape[0] for s in seqs], dtype=np.int64)
    L, B = int(lengths.max()), len(seqs)
    dtype = seqs[0].dtype
    pad = tensor(np.full((1,) + seqs[0].shape[1:], padding_value, dtype=dtype))
    flat = concatenate_p(*[s.to(dtype) if s.dtype != dtype else s for s in seqs], pad, axis=0)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    t = np.arange(L)[None, :]
    shift = (L - lengths)[:, None] if padding_side == "left" else np.zeros((B, 1), np.int64)
    pos = t - shift                                        # (B, L): the step of each sequence
    idx = np.where((pos >= 0) & (pos < lengths[:, None]), starts[:, None] + pos, flat.shape[0] - 1)
    return flat[idx if batch_first else idx.T]


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The sequences of a right-padded batch, each cut to its length, as
    ``torch.nn.utils.rnn.unpad_sequence``.

    >>> import duograd as dg
    >>> from duograd.nn.utils.rnn import unpad_sequence
    >>> [s.shape for s in unpad_sequence(dg.zeros((4, 2, 3)), [4, 1])]
    [(4, 3), (1, 3)]
    """
    x = _as_tensor(padded_sequences)
    lens = _ints(lengths, "lengths", "unpad_sequence")
    if not batch_first:
        x = transpose_p(x, axes=(1, 0) + tuple(range(2, x.ndim)))
    return [x[i, :int(n)] for i, n in enumerate(lens)]


# ---------------------------------------------------------------- packing


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *), or (B, T, *) with ``batch_first``, whose sequences
    have ``lengths`` (a list or a 1-D int tensor), as
    ``torch.nn.utils.rnn.pack_padded_sequence``. With ``enforce_sorted`` the lengths must
    decrease; otherwise the batch is sorted first (and ``sorted_indices`` records how).

    >>> import duograd as dg
    >>> from duograd.nn.utils.rnn import pack_padded_sequence
    >>> x = dg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    >>> p = pack_padded_sequence(x, [3, 2], batch_first=True)
    >>> p.data.numpy(), p.batch_sizes.tolist()
    (array([1., 4., 2., 5., 3.]), [2, 2, 1])
    """
    op = "pack_padded_sequence"
    x = _as_tensor(input)
    lens = _ints(lengths, "lengths", op)
    if x.ndim < 2:
        raise RuntimeError(f"{op}: the input needs a time and a batch dimension, got shape {x.shape}")
    T, B = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    if lens.size != B:
        raise RuntimeError(f"{op}: Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={B})")
    if lens.size and lens.min() <= 0:
        raise RuntimeError(f"{op}: Length of all samples has to be greater than 0, but found an "
                           f"element in 'lengths' that is <= 0 (lengths {lens.tolist()})")
    if lens.size and lens.max() > T:
        raise RuntimeError(f"{op}: a length {int(lens.max())} exceeds the {T} time steps of the "
                           f"input of shape {x.shape}")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(f"{op}: `lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this "
                               f"requirement if you do not need ONNX exportability (lengths "
                               f"{lens.tolist()})")
        order, sorted_indices = np.arange(B), None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = order
    slens = lens[order]
    bs = (slens[None, :] > np.arange(int(slens[0]))[:, None]).sum(1)      # (T',)
    t_idx = np.concatenate([np.full(n, t) for t, n in enumerate(bs)])
    b_idx = np.concatenate([order[:n] for n in bs])
    data = x[b_idx, t_idx] if batch_first else x[t_idx, b_idx]
    return PackedSequence(data, tensor(bs.astype(np.int64)), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """The padded batch of a packed one, in the original batch order, and the lengths
    (int64), as ``torch.nn.utils.rnn.pad_packed_sequence``; ``total_length`` pads to that
    many time steps.

    >>> import duograd as dg
    >>> from duograd.nn.utils import rnn
    >>> p = rnn.pack_sequence([dg.tensor([1.0]), dg.tensor([2.0, 3.0])], enforce_sorted=False)
    >>> x, lengths = rnn.pad_packed_sequence(p, batch_first=True, padding_value=-1.0)
    >>> x.numpy(), lengths.tolist()
    (array([[ 1., -1.],
           [ 2.,  3.]]), [1, 2])
    """
    op = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expected a PackedSequence, got {type(sequence).__name__}")
    data = sequence.data
    bs = _ints(sequence.batch_sizes, "batch_sizes", op)
    T, B = len(bs), int(bs[0])
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"{op}: Expected total_length to be at least the length of the "
                             f"longest sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {T}")
        T = int(total_length)
    unsorted = (np.arange(B) if sequence.unsorted_indices is None
                else _ints(sequence.unsorted_indices, "unsorted_indices", op))
    offsets = np.concatenate([[0], np.cumsum(bs)[:-1]])
    bs_t = np.concatenate([bs, np.zeros(T - len(bs), np.int64)])
    off_t = np.concatenate([offsets, np.zeros(T - len(bs), np.int64)])
    pos = unsorted[None, :]                                   # each column's sorted position
    n = data.shape[0]
    idx = np.where(pos < bs_t[:, None], off_t[:, None] + pos, n)    # (T, B)
    pad = tensor(np.full((1,) + data.shape[1:], padding_value, dtype=data.dtype))
    padded = concatenate_p(data, pad, axis=0)[idx.T if batch_first else idx]
    sorted_lengths = (bs[None, :] > np.arange(B)[:, None]).sum(1)     # by sorted position
    return padded, tensor(sorted_lengths[unsorted].astype(np.int64))


def pack_sequence(sequences: Sequence[Any], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (L_i, *), as ``torch.nn.utils.rnn.pack_sequence``: with
    ``enforce_sorted`` they must come longest first.

    >>> import duograd as dg
    >>> from duograd.nn.utils.rnn import pack_sequence
    >>> pack_sequence([dg.ones(1), dg.ones(3)], enforce_sorted=False).sorted_indices.tolist()
    [1, 0]
    """
    seqs = [_as_tensor(s) for s in sequences]
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of tensors a packed sequence holds, in the original order, as
    ``torch.nn.utils.rnn.unpack_sequence``.

    >>> import duograd as dg
    >>> from duograd.nn.utils import rnn
    >>> seqs = [dg.tensor([1.0]), dg.tensor([2.0, 3.0])]
    >>> [s.tolist() for s in rnn.unpack_sequence(rnn.pack_sequence(seqs, enforce_sorted=False))]
    [[1.0], [2.0, 3.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
