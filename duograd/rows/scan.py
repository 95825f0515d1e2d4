"""The recurrences of ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` over a whole sequence, as one
primitive each, with a hand-written VJP (back-propagation through time). The layers that
call them (torch's arguments, weights and packed sequences) are in ``duograd/nn/rnn.py``,
the layer above; ``duograd/nn/_scan.py`` re-exports the rows.

A layer computes the input projection of every time step as one matmul outside the
primitive (``x @ W_ih.T + b``, shape (T, B, G*H)); the primitive runs the recurrence in
NumPy, one fused gate matmul per step (all G gates at once), and returns ONE array that
holds, per step, the states and the activated gates the backward needs:

- ``rnn_scan_p(xp, h0, w_hh[, mask])``: (T, B, H), the hidden states;
- ``lstm_scan_p(xp, h0, c0, w_hh[, w_hr][, mask])``: (T, B, P + H + 4H): h (P = proj_size or
  H), c, then the gates i, f, g, o after their activations;
- ``gru_scan_p(xp, h0, w_hh[, b_hh][, mask])``: (T, B, 5H): h, then r, z, n and W_hn h + b_hn.

``mask`` (T, B, 1), 1 where a sequence is still running (packed sequences): where it is 0,
the states are carried over unchanged, so the last row holds each sequence's final state.

The VJP is written in Tensor algebra, so that a backward pass recorded with
``create_graph=True`` can be differentiated again (second order, ``dg.gradgradcheck``).
Its loop over time steps runs a couple of dozen primitive calls per step, on one step's
rows (temporaries of one step's size stay in cache); the weight gradients are one matmul
over all steps after it. The cotangents of the saved gate columns are part of the rule:
a second-order pass sends cotangents into them.

An LSTM layer's first-order backward (no ``create_graph``, no projection, no mask) is one
primitive instead, ``lstm_bwd_p``: the same arithmetic in NumPy, in the same order, with
one step's temporaries written in place, so that a backward (and a ``dg.compile``
recording of it) is a handful of kernels rather than a couple of dozen per time step.

NOTE: one node's rules are called one input at a time, but back-propagation through time
yields every input's cotangent at once, so the first rule called for a node computes them
all and keeps them for the node's other rules, keyed by the identity of this call's ``g``
and ``out`` (no array values are read; a recorded step contains the one computation).

>>> import duograd as dg
>>> xp, h0, w = dg.zeros((5, 2, 3)), dg.zeros((2, 3)), dg.zeros((3, 3))
>>> rnn_scan_p(xp, h0, w, nonlinearity="tanh", masked=False).shape
(5, 2, 3)
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _context
from ..autograd import Variadic
from .._tensor import Tensor
from .core import concatenate_p, greater_p, reshape_p, transpose_p

__all__ = ["rnn_scan_p", "lstm_scan_p", "gru_scan_p"]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # the same formula as rows.core.sigmoid_p, so that a cell and a layer agree to the last bit
    return 0.5 * np.tanh(0.5 * x) + 0.5


def _cat(ts: list, axis: int = -1) -> Tensor:
    return concatenate_p(*ts, axis=axis % ts[0].ndim)


def _t2(x: Tensor) -> Tensor:
    return transpose_p(x, axes=(1, 0))


def _flat(x: Tensor) -> Tensor:
    return reshape_p(x, shape=(-1, x.shape[-1]))


def _prev(first: Tensor, seq: Tensor) -> Tensor:
    """The state before each step: ``first`` then ``seq`` without its last step."""
    return _cat([reshape_p(first, shape=(1,) + first.shape), seq[:-1]], axis=0)


# ---------------------------------------------------------------- one computation per node

_MEMO: list[Any] = [None, None, None]  # [g, out, cotangents of every input]


def _all_at_once(grads: Callable[..., list]) -> Callable[..., Tensor]:
    def rule(i: int, g: Tensor, out: Tensor, *xs: Tensor, **kw: Any) -> Tensor:
        memo = _MEMO
        if memo[0] is not g or memo[1] is not out:
            memo[:] = [g, out, grads(g, out, *xs, **kw)]
        result = memo[2][i]
        if i == max(j for j, x in enumerate(xs) if x.requires_grad):
            memo[:] = [None, None, None]  # the node's last rule: let go of the arrays
        return result
    return rule


# ---------------------------------------------------------------- Elman RNN


def _rnn_fwd(xp: np.ndarray, h0: np.ndarray, w_hh: np.ndarray, *mask: np.ndarray,
             nonlinearity: str, masked: bool) -> np.ndarray:
    out = np.empty(xp.shape[:2] + (h0.shape[-1],), dtype=xp.dtype)
    h, wT = h0, w_hh.T
    for t in range(xp.shape[0]):
        pre = xp[t] + h @ wT
        new = np.tanh(pre) if nonlinearity == "tanh" else np.maximum(pre, pre.dtype.type(0))
        if masked:
            new = np.where(mask[0][t], new, h)
        out[t] = new
        h = new
    return out


def _rnn_grads(g: Tensor, out: Tensor, xp: Tensor, h0: Tensor, w_hh: Tensor, *mask: Tensor,
               nonlinearity: str, masked: bool) -> list:
    # NOTE: relu's derivative at 0 is 0, as torch (the result > 0)
    deriv = 1 - out * out if nonlinearity == "tanh" else greater_p(out, 0.0)
    if masked:
        m = mask[0]
        keep = 1 - m
    T = out.shape[0]
    dpres: list[Any] = [None] * T
    dh: Any = None
    for t in range(T - 1, -1, -1):
        dh = g[t] if dh is None else dh + g[t]
        if masked:
            mt = m[t]
            carry, dh = dh * keep[t], dh * mt
        dpre = dh * deriv[t]
        dpres[t] = dpre
        dh = dpre @ w_hh
        if masked:
            dh = dh + carry
    dxp = _cat([reshape_p(d, shape=(1,) + d.shape) for d in dpres], axis=0)
    dw = _t2(_flat(dxp)) @ _flat(_prev(h0, out))
    return [dxp, dh, dw, None]


rnn_scan_p = Variadic("rnn_scan", _rnn_fwd, vjp=(_all_at_once(_rnn_grads),))


# ---------------------------------------------------------------- LSTM


def _lstm_fwd(xp: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_hh: np.ndarray, *rest: np.ndarray,
              proj: bool, masked: bool) -> np.ndarray:
    T, B, G = xp.shape
    H, P = c0.shape[-1], h0.shape[-1]
    dt = xp.dtype
    out = np.empty((T, B, P + 5 * H), dtype=dt)
    w_hrT = rest[0].T if proj else None
    mask = rest[-1] if masked else None
    # the four activations in one tanh over (B, 4H): sigmoid(x) = 0.5 tanh(0.5 x) + 0.5 (the
    # formula of ops.sigmoid_p, bit for bit) on i, f, o; tanh(x) = 1 tanh(1 x) + 0 on g
    scale = np.full(G, 0.5, dtype=dt)
    scale[2 * H:3 * H] = 1
    shift = 0.5 * (scale != 1).astype(dt)
    pre = np.empty((B, G), dtype=dt)
    h, c, wT = h0, c0, w_hh.T
    for t in range(T):
        np.matmul(h, wT, out=pre)
        pre += xp[t]
        pre *= scale
        np.tanh(pre, out=pre)
        pre *= scale
        pre += shift
        row = out[t]
        row[:, P + H:] = pre
        i, f, gg, o = pre[:, :H], pre[:, H:2 * H], pre[:, 2 * H:3 * H], pre[:, 3 * H:]
        c_new = f * c
        c_new += i * gg
        h_new = np.tanh(c_new)
        h_new *= o
        if proj:
            h_new = h_new @ w_hrT
        if masked:
            c_new, h_new = np.where(mask[t], c_new, c), np.where(mask[t], h_new, h)
        row[:, :P] = h_new
        row[:, P:P + H] = c_new
        h, c = h_new, c_new
    return out


def _lstm_bwd(g: np.ndarray, out: np.ndarray, h0: np.ndarray, c0: np.ndarray,
              w_hh: np.ndarray) -> np.ndarray:
    """The first-order back-propagation through time of an LSTM layer without projection
    or mask, in NumPy: the arithmetic of :func:`_lstm_grads` (the same operations in the
    same order), one step's temporaries written in place. Returns one (T*B + B + H, 4H)
    array: the rows of dxp, then [dh0 | dc0 | 0 | 0], then dw_hh's values (4H x H) in
    C order."""
    T, B, _ = out.shape
    H = c0.shape[-1]
    P = h0.shape[-1]
    G = 4 * H
    dt = out.dtype
    packed = np.empty((T * B + B + H, G), dtype=dt)
    dxp = packed[:T * B].reshape(T, B, G)
    e = np.zeros(G, dtype=dt)
    e[2 * H:3 * H] = 1
    one = dt.type(1)
    dh: Any = None
    dc: Any = None
    tmp = np.empty((B, H), dtype=dt)
    d_act = np.empty((B, G), dtype=dt)
    for t in range(T - 1, -1, -1):
        row, g_row = out[t], g[t]
        gates = row[:, P + H:]
        i, f, gg, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
        tc = np.tanh(row[:, P:P + H])
        c_prev = out[t - 1, :, P:P + H] if t else c0
        g_h, g_c = g_row[:, :P], g_row[:, P:P + H]
        dh = g_h.copy() if dh is None else dh + g_h
        dc = g_c.copy() if dc is None else dc + g_c
        # dc = dc + dh * o * (1 - tc * tc)
        np.multiply(dh, o, out=tmp)
        sq = tc * tc
        np.subtract(one, sq, out=sq)
        tmp *= sq
        dc += tmp
        # dpre = (cat([dc * gg, dc * c_prev, dc * i, dh * tc]) + g_gates) * d_act
        d = dxp[t]
        np.multiply(dc, gg, out=d[:, :H])
        np.multiply(dc, c_prev, out=d[:, H:2 * H])
        np.multiply(dc, i, out=d[:, 2 * H:3 * H])
        np.multiply(dh, tc, out=d[:, 3 * H:])
        d += g_row[:, P + H:]
        np.subtract(one, gates, out=d_act)
        d_act *= gates + e
        d *= d_act
        dh = d @ w_hh
        dc *= f
    extra = packed[T * B:T * B + B]
    extra[:, :H], extra[:, H:2 * H], extra[:, 2 * H:] = dh, dc, 0
    prev = np.concatenate([h0.reshape((1,) + h0.shape), out[:-1, :, :P]], axis=0)
    np.matmul(dxp.reshape(-1, G).T, prev.reshape(-1, P), out=packed[T * B + B:].reshape(G, H))
    return packed


lstm_bwd_p = Variadic("lstm_scan_backward", _lstm_bwd, differentiable=False)


def _lstm_grads(g: Tensor, out: Tensor, xp: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor,
                *rest: Tensor, proj: bool, masked: bool) -> list:
    # Step by step, on views of one step's row: every temporary is one step's size and stays
    # in cache (whole-sequence temporaries cost more in memory traffic than they save in calls).
    H, P = c0.shape[-1], h0.shape[-1]
    if not (proj or masked or _context.grad_enabled):
        # first order (no create_graph): one primitive runs the whole loop in NumPy
        T, B = out.shape[0], out.shape[1]
        packed = lstm_bwd_p(g, out, h0, c0, w_hh)
        TB = T * B
        return [reshape_p(packed[:TB], shape=(T, B, 4 * H)), packed[TB:TB + B, :H],
                packed[TB:TB + B, H:2 * H], reshape_p(packed[TB + B:], shape=(4 * H, H)), None]
    w_hr = rest[0] if proj else None
    # d(activated gates)/d(pre-activations): sigmoid' = s (1 - s), tanh' = 1 - t^2 = (1 - t)(1 + t),
    # so all four at once are (1 - a) (a + e), e = 1 on the g gate's columns and 0 elsewhere
    e = np.zeros(4 * H, dtype=out.dtype)
    e[2 * H:3 * H] = 1
    if masked:
        m = rest[-1]
        keep = 1 - m
    T = out.shape[0]
    dpres: list[Any] = [None] * T
    dhs: list[Any] = [None] * T
    dh: Any = None
    dc: Any = None
    for t in range(T - 1, -1, -1):
        row, g_row = out[t], g[t]
        gates = row[:, P + H:]
        i, f, gg, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
        tc = row[:, P:P + H].tanh()
        c_prev = out[t - 1, :, P:P + H] if t else c0
        g_h, g_c = g_row[:, :P], g_row[:, P:P + H]
        dh = g_h if dh is None else dh + g_h
        dc = g_c if dc is None else dc + g_c
        if masked:
            mt, kt = m[t], keep[t]
            carry_h, carry_c = dh * kt, dc * kt
            dh, dc = dh * mt, dc * mt
        dhs[t] = dh
        dhh = dh @ w_hr if proj else dh          # of o * tanh(c_t), before the projection
        dc = dc + dhh * o * (1 - tc * tc)
        d_act = (1 - gates) * (gates + e)
        dpre = (_cat([dc * gg, dc * c_prev, dc * i, dhh * tc]) + g_row[:, P + H:]) * d_act
        dpres[t] = dpre
        dh = dpre @ w_hh
        dc = dc * f
        if masked:
            dh, dc = dh + carry_h, dc + carry_c
    dxp = _cat([reshape_p(d, shape=(1,) + d.shape) for d in dpres], axis=0)
    dw_hh = _t2(_flat(dxp)) @ _flat(_prev(h0, out[:, :, :P]))
    grads = [dxp, dh, dc, dw_hh]
    if proj:
        dh_all = _cat([reshape_p(d, shape=(1,) + d.shape) for d in dhs], axis=0)
        cs, o_all = out[:, :, P:P + H], out[:, :, P + 4 * H:]
        grads.append(_t2(_flat(dh_all)) @ _flat(o_all * cs.tanh()))
    grads.append(None)
    return grads


lstm_scan_p = Variadic("lstm_scan", _lstm_fwd, vjp=(_all_at_once(_lstm_grads),))


# ---------------------------------------------------------------- GRU


def _gru_fwd(xp: np.ndarray, h0: np.ndarray, w_hh: np.ndarray, *rest: np.ndarray, bias: bool,
             masked: bool) -> np.ndarray:
    T, B, _ = xp.shape
    H = h0.shape[-1]
    out = np.empty((T, B, 5 * H), dtype=xp.dtype)
    b_hh = rest[0] if bias else None
    mask = rest[-1] if masked else None
    h, wT = h0, w_hh.T
    half = xp.dtype.type(0.5)
    for t in range(T):
        hp = h @ wT
        if bias:
            hp += b_hh
        x = xp[t]
        rz = x[:, :2 * H] + hp[:, :2 * H]      # r and z in one sigmoid (ops.sigmoid_p's formula)
        rz *= half
        np.tanh(rz, out=rz)
        rz *= half
        rz += half
        r, z = rz[:, :H], rz[:, H:]
        n = r * hp[:, 2 * H:]
        n += x[:, 2 * H:]
        np.tanh(n, out=n)
        new = h - n                              # (1 - z) n + z h
        new *= z
        new += n
        if masked:
            new = np.where(mask[t], new, h)
        row = out[t]
        row[:, :H], row[:, H:2 * H], row[:, 2 * H:3 * H] = new, r, z
        row[:, 3 * H:4 * H], row[:, 4 * H:] = n, hp[:, 2 * H:]
        h = new
    return out


def _gru_grads(g: Tensor, out: Tensor, xp: Tensor, h0: Tensor, w_hh: Tensor, *rest: Tensor,
               bias: bool, masked: bool) -> list:
    # step by step on one step's rows, as _lstm_grads
    H = h0.shape[-1]
    if masked:
        m = rest[-1]
        keep = 1 - m
    T = out.shape[0]
    dxps: list[Any] = [None] * T
    dhps: list[Any] = [None] * T
    dh: Any = None
    for t in range(T - 1, -1, -1):
        row, g_row = out[t], g[t]
        r, z, n, hpn = (row[:, k * H:(k + 1) * H] for k in range(1, 5))
        g_h, g_r, g_z, g_n, g_hpn = (g_row[:, k * H:(k + 1) * H] for k in range(5))
        h_prev = out[t - 1, :, :H] if t else h0
        dh = g_h if dh is None else dh + g_h
        if masked:
            carry, dh = dh * keep[t], dh * m[t]
        dpn = (dh * (1 - z) + g_n) * (1 - n * n)
        dpr = (dpn * hpn + g_r) * (r * (1 - r))
        dpz = (dh * (h_prev - n) + g_z) * (z * (1 - z))
        dhp = _cat([dpr, dpz, dpn * r + g_hpn])
        dxps[t] = _cat([dpr, dpz, dpn])
        dhps[t] = dhp
        dh = dhp @ w_hh + dh * z
        if masked:
            dh = dh + carry
    stack = lambda ds: _cat([reshape_p(d, shape=(1,) + d.shape) for d in ds], axis=0)  # noqa: E731
    dhp_all = _flat(stack(dhps))
    grads = [stack(dxps), dh, _t2(dhp_all) @ _flat(_prev(h0, out[:, :, :H]))]
    if bias:
        grads.append(dhp_all.sum(0))
    grads.append(None)
    return grads


gru_scan_p = Variadic("gru_scan", _gru_fwd, vjp=(_all_at_once(_gru_grads),))
