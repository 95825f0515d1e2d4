"""Recurrent layers with torch.nn's arguments, parameter names, layout, gate order and
initialisation: the cells ``RNNCell``, ``LSTMCell``, ``GRUCell`` (one step, composed from
primitives) and the layers ``RNN`` (tanh or relu), ``LSTM`` (with ``proj_size``) and ``GRU``
over whole sequences, any number of layers, either direction, padded or packed.

Gate order, as torch: LSTM ``i, f, g, o``; GRU ``r, z, n``. Parameters are registered in
torch's order (per layer, per direction: ``weight_ih_l{k}``, ``weight_hh_l{k}``,
``bias_ih_l{k}``, ``bias_hh_l{k}``, then LSTM's ``weight_hr_l{k}``; ``_reverse`` for the
second direction), all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), so a
torch model's ``state_dict()`` loads into the same layer as it is.

A layer computes the input projection of all time steps as one matmul and runs the
recurrence as one primitive (``duograd/rows/scan.py``) with one fused gate matmul per step and
a hand-written back-propagation through time, differentiable again.

>>> import duograd as dg
>>> from duograd import nn
>>> lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(dg.ones((2, 5, 3)))
>>> out.shape, h.shape, c.shape
((2, 5, 4), (2, 2, 4), (2, 2, 4))
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..ops import concatenate_p, linear_p, reshape_p, transpose_p
from .._tensor import Tensor, tensor
from ..random import as_rng
from ..rows.scan import gru_scan_p, lstm_scan_p, rnn_scan_p
from .functional import _dropout
from .modules import Module, _input
from .utils.rnn import PackedSequence

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _size(n: Any, name: str, layer: str, least: int = 1) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < least:
        raise ValueError(f"{layer}: {name} must be an int of at least {least}, got {n!r}")
    return int(n)


def _check_device(device: Any, layer: str) -> None:
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"{layer}: only the cpu device exists, got {device!r}")


def _param(gen: np.random.Generator, bound: float, shape: tuple, dtype: Any) -> Tensor:
    data = gen.uniform(-bound, bound, shape)
    return tensor(data if dtype is None else data.astype(dtype), requires_grad=True)


def _stack(ts: list) -> Tensor:
    return concatenate_p(*[reshape_p(t, shape=(1,) + t.shape) for t in ts], axis=0)


def _cat_last(ts: list) -> Tensor:
    return ts[0] if len(ts) == 1 else concatenate_p(*ts, axis=ts[0].ndim - 1)


# ---------------------------------------------------------------- cells


class RNNCellBase(Module):
    """What the three cells share, as ``torch.nn.RNNCellBase``: ``weight_ih``
    (G*hidden, input), ``weight_hh`` (G*hidden, hidden), ``bias_ih``, ``bias_hh`` (G*hidden,)
    or None, all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    >>> from duograd import nn
    >>> [k for k in nn.GRUCell(2, 3).state_dict()]
    ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None, rng: Any = None) -> None:
        layer = type(self).__name__
        _check_device(device, layer)
        self.input_size = _size(input_size, "input_size", layer, 0)
        self.hidden_size = _size(hidden_size, "hidden_size", layer)
        self.bias = bool(bias)
        gen = as_rng(rng)
        bound = 1.0 / math.sqrt(self.hidden_size)
        g, h = num_chunks * self.hidden_size, self.hidden_size
        self.weight_ih = _param(gen, bound, (g, self.input_size), dtype)
        self.weight_hh = _param(gen, bound, (g, h), dtype)
        self.bias_ih = _param(gen, bound, (g,), dtype) if bias else None
        self.bias_hh = _param(gen, bound, (g,), dtype) if bias else None

    def _prepare(self, input: Any, hx: Any, n_states: int) -> tuple[Tensor, list, bool]:
        """(input as 2-D, the states as 2-D Tensors (zeros when hx is None), unbatched)."""
        layer = type(self).__name__
        x = _input(input)
        if x.ndim not in (1, 2):
            raise ValueError(f"{layer}: Expected input to be 1D or 2D, got {x.ndim}D instead")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"{layer}: input has inconsistent input_size: got {x.shape[-1]} "
                               f"expected {self.input_size} (input of shape {x.shape})")
        unbatched = x.ndim == 1
        if unbatched:
            x = reshape_p(x, shape=(1, x.shape[0]))
        shape = (x.shape[0], self.hidden_size)
        if hx is None:
            states = [tensor(np.zeros(shape, dtype=x.dtype)) for _ in range(n_states)]
        else:
            given = list(hx) if n_states > 1 else [hx]
            if len(given) != n_states:
                raise RuntimeError(f"{layer}: expected hx to hold {n_states} tensors, got {len(given)}")
            states = []
            for s in given:
                s = _input(s)
                if unbatched and s.ndim == 1:
                    s = reshape_p(s, shape=(1, s.shape[0]))
                if s.shape != shape:
                    raise RuntimeError(f"{layer}: hidden state of shape {s.shape} does not fit "
                                       f"the input of shape {tuple(input.shape)}: expected "
                                       f"{shape if not unbatched else shape[1:]}")
                states.append(s)
        return x, states, unbatched

    def _project(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        gi, gh = linear_p(x, self.weight_ih), linear_p(h, self.weight_hh)
        if self.bias:
            gi, gh = gi + self.bias_ih, gh + self.bias_hh
        return gi, gh

    def _extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """One step of an Elman RNN, as ``torch.nn.RNNCell``:
    ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, ``act`` tanh or relu. ``forward(input,
    hx=None)`` takes (N, input_size) or unbatched (input_size,), ``hx`` zeros by default,
    and returns h'.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.RNNCell(3, 2, nonlinearity="relu")(dg.ones((4, 3))).shape
    (4, 2)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None,
                 rng: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: Unknown nonlinearity: {nonlinearity!r} (tanh or relu)")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype, rng)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Any = None) -> Tensor:
        x, (h,), unbatched = self._prepare(input, hx, 1)
        gi, gh = self._project(x, h)
        pre = gi + gh
        out = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
        return reshape_p(out, shape=out.shape[1:]) if unbatched else out


class LSTMCell(RNNCellBase):
    """One step of an LSTM, as ``torch.nn.LSTMCell``, gates in torch's order i, f, g, o:
    ``c' = f c + i g``, ``h' = o tanh(c')``. ``forward(input, hx=None)`` takes
    (N, input_size) or unbatched (input_size,), ``hx = (h, c)`` zeros by default, and
    returns ``(h', c')``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> h, c = nn.LSTMCell(3, 2)(dg.ones((4, 3)))
    >>> h.shape, c.shape
    ((4, 2), (4, 2))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None, rng: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype, rng)

    def forward(self, input: Any, hx: Any = None) -> tuple[Tensor, Tensor]:
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        gi, gh = self._project(x, h)
        pre, H = gi + gh, self.hidden_size
        i, f = pre[:, :H].sigmoid(), pre[:, H:2 * H].sigmoid()
        g, o = pre[:, 2 * H:3 * H].tanh(), pre[:, 3 * H:].sigmoid()
        c_new = f * c + i * g
        h_new = o * c_new.tanh()
        if unbatched:
            return reshape_p(h_new, shape=(H,)), reshape_p(c_new, shape=(H,))
        return h_new, c_new


class GRUCell(RNNCellBase):
    """One step of a GRU, as ``torch.nn.GRUCell``, gates in torch's order r, z, n:
    ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``.
    ``forward(input, hx=None)`` takes (N, input_size) or unbatched (input_size,) and returns h'.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> nn.GRUCell(3, 2)(dg.ones(3)).shape
    (2,)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None, rng: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype, rng)

    def forward(self, input: Any, hx: Any = None) -> Tensor:
        x, (h,), unbatched = self._prepare(input, hx, 1)
        gi, gh = self._project(x, h)
        H = self.hidden_size
        r = (gi[:, :H] + gh[:, :H]).sigmoid()
        z = (gi[:, H:2 * H] + gh[:, H:2 * H]).sigmoid()
        n = (gi[:, 2 * H:] + r * gh[:, 2 * H:]).tanh()
        out = (1 - z) * n + z * h
        return reshape_p(out, shape=(H,)) if unbatched else out


# ---------------------------------------------------------------- layers over sequences


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share, as ``torch.nn.RNNBase``: the parameters of
    every layer and direction in torch's names and order, input and state conventions,
    dropout between layers, packed sequences. ``mode`` is ``'LSTM'``, ``'GRU'``,
    ``'RNN_TANH'`` or ``'RNN_RELU'``.

    >>> from duograd import nn
    >>> rnn = nn.RNNBase("GRU", 2, 3, bidirectional=True)
    >>> [k for k in rnn.state_dict()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None, rng: Any = None) -> None:
        layer = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        if mode not in _GATES:
            raise ValueError(f"{layer}: Unrecognized RNN mode: {mode!r}")
        _check_device(device, layer)
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:
            raise ValueError(f"{layer}: dropout should be a number in range [0, 1] representing "
                             f"the probability of an element being zeroed, got {dropout!r}")
        self.mode = mode
        self.input_size = _size(input_size, "input_size", layer, 0)
        self.hidden_size = _size(hidden_size, "hidden_size", layer)
        self.num_layers = _size(num_layers, "num_layers", layer)
        self.proj_size = _size(proj_size, "proj_size", layer, 0)
        if self.proj_size and mode != "LSTM":
            raise ValueError(f"{layer}: proj_size argument is only supported for LSTM, not RNN or GRU")
        if self.proj_size >= self.hidden_size:
            raise ValueError(f"{layer}: proj_size {self.proj_size} has to be smaller than "
                             f"hidden_size {self.hidden_size}")
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.dropout, self.bidirectional = float(dropout), bool(bidirectional)
        gen = as_rng(rng)
        self._rng = gen
        bound = 1.0 / math.sqrt(self.hidden_size)
        G, H = _GATES[mode] * self.hidden_size, self.hidden_size
        P = self.proj_size or H
        D = 2 if self.bidirectional else 1
        self._all_weights: list[list[str]] = []
        for k in range(self.num_layers):
            fan_in = self.input_size if k == 0 else P * D
            for d in range(D):
                sfx = f"_l{k}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (G, fan_in)), ("weight_hh", (G, P))]
                if bias:
                    shapes += [("bias_ih", (G,)), ("bias_hh", (G,))]
                if self.proj_size:
                    shapes.append(("weight_hr", (self.proj_size, H)))
                names = []
                for name, shape in shapes:
                    setattr(self, name + sfx, _param(gen, bound, shape, dtype))
                    names.append(name + sfx)
                self._all_weights.append(names)

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters per layer and direction, as torch's ``all_weights``.

        >>> from duograd import nn
        >>> [[w.shape for w in ws] for ws in nn.RNN(2, 3, bias=False).all_weights]
        [[(3, 2), (3, 3)]]
        """
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    @property
    def _flat_weights_names(self) -> list[str]:
        return [n for names in self._all_weights for n in names]

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, n) for n in self._flat_weights_names]

    def flatten_parameters(self) -> None:
        """Accepted for torch's code; the weights are used where they are (nothing to do).

        >>> from duograd import nn
        >>> nn.LSTM(2, 3).flatten_parameters()
        """

    def _states(self, hx: Any, batch: int, dtype: Any, unbatched: bool,
                order: Any) -> list[Tensor | None]:
        """The initial states, each (layers * directions, batch, size), in the batch order
        of the computation (``order``: the sorted indices of a packed input), or Nones."""
        layer = type(self).__name__
        D = 2 if self.bidirectional else 1
        H = self.hidden_size
        sizes = [self.proj_size or H] + ([H] if self.mode == "LSTM" else [])
        if hx is None:
            return [None] * len(sizes)
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError(f"{layer}: hx must be a tuple (h_0, c_0)")
            given = list(hx)
        else:
            if isinstance(hx, (tuple, list)):
                raise RuntimeError(f"{layer}: hx must be a Tensor, got a {type(hx).__name__}")
            given = [hx]
        states = []
        for s, size, name in zip(given, sizes, ("h_0", "c_0")):
            s = _input(s)
            want = (D * self.num_layers, size) if unbatched else (D * self.num_layers, batch, size)
            if s.shape != want:
                raise RuntimeError(f"{layer}: Expected hidden size {want} for {name}, got {s.shape}")
            if unbatched:
                s = reshape_p(s, shape=(want[0], 1, size))
            elif order is not None:
                s = s[:, order]
            states.append(s)
        return states

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        layer = type(self).__name__
        packed = isinstance(input, PackedSequence)
        mask = order = None
        if packed:
            bs = np.asarray(input.batch_sizes.detach().numpy() if isinstance(input.batch_sizes, Tensor)
                            else input.batch_sizes, dtype=np.int64)
            data = _input(input.data)
            T, B = len(bs), int(bs[0])
            valid = np.arange(B)[None, :] < bs[:, None]                      # (T, B)
            offsets = np.concatenate([[0], np.cumsum(bs)[:-1]])
            idx = np.where(valid, offsets[:, None] + np.arange(B)[None, :], data.shape[0])
            zero = tensor(np.zeros((1,) + data.shape[1:], dtype=data.dtype))
            x = concatenate_p(data, zero, axis=0)[idx]                       # (T, B, F)
            mask = tensor(valid[:, :, None].astype(data.dtype))
            lengths = valid.sum(0)
            if input.sorted_indices is not None:
                order = np.asarray(input.sorted_indices.detach().numpy()
                                   if isinstance(input.sorted_indices, Tensor) else input.sorted_indices)
            unbatched = False
        else:
            x = _input(input)
            if x.ndim not in (2, 3):
                raise ValueError(f"{layer}: Expected input to be 2D or 3D, got {x.ndim}D instead")
            unbatched = x.ndim == 2
            if unbatched:
                x = reshape_p(x, shape=(x.shape[0], 1, x.shape[1]))
            elif self.batch_first:
                x = transpose_p(x, axes=(1, 0, 2))
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"{layer}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")
        if x.shape[0] == 0:
            raise RuntimeError(f"{layer}: Expected sequence length to be larger than 0 in RNN (input "
                               f"of shape {x.shape})")
        T, B = x.shape[0], x.shape[1]
        states = self._states(hx, B, x.dtype, unbatched, order)
        D = 2 if self.bidirectional else 1
        rev = None
        if D == 2 and mask is not None:  # each sequence reversed within its own length
            t_ = np.arange(T)[:, None]
            rev = (np.where(t_ < lengths[None, :], lengths[None, :] - 1 - t_, t_), np.arange(B)[None, :])
        finals: list[list[Tensor]] = [[] for _ in self._state_sizes()]
        for k in range(self.num_layers):
            outs = []
            for d in range(D):
                j = k * D + d
                init = [s[j] for s in states] if states[0] is not None else None
                xin = x if d == 0 else (x[::-1] if rev is None else x[rev])
                seq, last = self._direction(xin, init, j, mask)
                outs.append(seq if d == 0 else (seq[::-1] if rev is None else seq[rev]))
                for f, s in zip(finals, last):
                    f.append(s)
            x = _cat_last(outs)
            if self.training and self.dropout > 0 and k < self.num_layers - 1:
                x = _dropout(x, self.dropout, self._rng)
        hs = [_stack(f) for f in finals]
        if packed:
            flat = reshape_p(x, shape=(T * B, x.shape[-1]))
            out: Any = PackedSequence(flat[np.flatnonzero(valid.reshape(-1))], input.batch_sizes,
                                      input.sorted_indices, input.unsorted_indices)
            if input.unsorted_indices is not None:
                inv = np.asarray(input.unsorted_indices.detach().numpy()
                                 if isinstance(input.unsorted_indices, Tensor) else input.unsorted_indices)
                hs = [h[:, inv] for h in hs]
        elif unbatched:
            out = reshape_p(x, shape=(T, x.shape[-1]))
            hs = [reshape_p(h, shape=(h.shape[0], h.shape[2])) for h in hs]
        else:
            out = transpose_p(x, axes=(1, 0, 2)) if self.batch_first else x
        return out, (tuple(hs) if self.mode == "LSTM" else hs[0])

    def _state_sizes(self) -> list[int]:
        H = self.hidden_size
        return [self.proj_size or H] + ([H] if self.mode == "LSTM" else [])

    def _direction(self, x: Tensor, init: Any, j: int, mask: Any) -> tuple[Tensor, list[Tensor]]:
        """One layer in one direction over time-major ``x``: (its hidden states (T, B, P),
        [its final states])."""
        names = self._all_weights[j]
        w = {n.split("_l")[0]: getattr(self, n) for n in names}
        T, B = x.shape[0], x.shape[1]
        H, P = self.hidden_size, self.proj_size or self.hidden_size
        dtype = x.dtype
        if init is None:
            init = [tensor(np.zeros((B, s), dtype=dtype)) for s in self._state_sizes()]
        # the input projection of every step as one 2-D matmul (NumPy's 3-D @ 2-D is slower)
        xp = reshape_p(linear_p(reshape_p(x, shape=(T * B, x.shape[2])), w["weight_ih"]),
                       shape=(T, B, -1))
        masked = mask is not None
        extra = [mask] if masked else []
        if self.mode == "GRU":
            if self.bias:
                xp = xp + w["bias_ih"]
            args = [xp, init[0], w["weight_hh"]] + ([w["bias_hh"]] if self.bias else []) + extra
            out = gru_scan_p(*args, bias=self.bias, masked=masked)
            seq = out[:, :, :H]
            return seq, [seq[T - 1]]
        if self.bias:
            xp = xp + (w["bias_ih"] + w["bias_hh"])
        if self.mode == "LSTM":
            proj = bool(self.proj_size)
            args = [xp, init[0], init[1], w["weight_hh"]] + ([w["weight_hr"]] if proj else []) + extra
            out = lstm_scan_p(*args, proj=proj, masked=masked)
            seq = out[:, :, :P]
            return seq, [seq[T - 1], out[T - 1, :, P:P + H]]
        out = rnn_scan_p(xp, init[0], w["weight_hh"], *extra,
                         nonlinearity="tanh" if self.mode == "RNN_TANH" else "relu", masked=masked)
        return out, [out[T - 1]]

    def _extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """A multi-layer Elman RNN, as ``torch.nn.RNN``: ``h_t = act(x_t W_ih^T + b_ih +
    h_{t-1} W_hh^T + b_hh)``, ``act`` tanh or relu (``nonlinearity``).

    ``forward(input, hx=None)``: input (L, N, input_size), (N, L, input_size) with
    ``batch_first``, unbatched (L, input_size), or a ``PackedSequence``; ``hx``
    (D * num_layers, N, hidden_size), zeros by default. Returns ``(output, h_n)``: output
    (L, N, D * hidden_size) (packed if the input was), ``h_n`` like ``hx``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> out, h = nn.RNN(3, 4, nonlinearity="relu", bidirectional=True)(dg.ones((5, 2, 3)))
    >>> out.shape, h.shape
    ((5, 2, 8), (2, 2, 4))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, rng: Any = None, proj_size: int = 0) -> None:
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, proj_size, device, dtype, rng)


class LSTM(RNNBase):
    """A multi-layer LSTM, as ``torch.nn.LSTM``, gates in torch's order i, f, g, o; with
    ``proj_size`` > 0 the hidden state is projected by ``weight_hr_l{k}`` (proj_size, hidden).

    ``forward(input, hx=None)``: input as ``RNN``'s; ``hx = (h_0, c_0)``, h_0
    (D * num_layers, N, proj_size or hidden_size), c_0 (D * num_layers, N, hidden_size),
    zeros by default. Returns ``(output, (h_n, c_n))``.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> out, (h, c) = nn.LSTM(3, 4, proj_size=2)(dg.ones((5, 3)))
    >>> out.shape, h.shape, c.shape
    ((5, 2), (1, 2), (1, 4))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None, rng: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype, rng)


class GRU(RNNBase):
    """A multi-layer GRU, as ``torch.nn.GRU``, gates in torch's order r, z, n:
    ``n_t = tanh(W_in x_t + b_in + r_t (W_hn h_{t-1} + b_hn))``, ``h_t = (1 - z_t) n_t + z_t h_{t-1}``.
    Inputs and results as ``RNN``'s.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> out, h = nn.GRU(3, 4, num_layers=2, batch_first=True)(dg.ones((2, 5, 3)))
    >>> out.shape, h.shape
    ((2, 5, 4), (2, 2, 4))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, rng: Any = None, proj_size: int = 0) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype, rng)
