"""The same workloads written straight in NumPy, with every derivative worked out by hand.

No graph, no autodiff, no Python object per operation: only the array arithmetic a
NumPy engine cannot avoid. These are the floors that ``benchmarks/run.py`` divides
every engine's time by, so they are written the way a careful person would write
them by hand (in-place updates where they are free), but not tuned beyond that.

- ``chain_grad``: the per-op chain (the op mix is ``CHAIN_OPS``) and its backward.
- ``mlp_loss_and_grads``: a relu MLP, softmax cross-entropy, and the backward pass.
- ``Adam``: ``torch.optim.Adam``'s update, in NumPy.

Parameters are a flat list ``[W0, b0, W1, b1, ...]`` with ``W`` of shape (nout, nin),
the layout of ``duograd.nn.Linear`` and ``torch.nn.Linear`` (each layer is ``a @ W.T + b``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

# The per-op workload, cycled: (operation, constant). Every engine applies this same
# list. The cycle keeps values bounded (tanh caps them, exp of at most 1.1 follows),
# so a chain of any length stays finite.
CHAIN_OPS: tuple[tuple[str, float | None], ...] = (("mul", 0.9), ("tanh", None),
                                                   ("add", 0.1), ("exp", None))


def chain_forward(x: np.ndarray, n: int) -> np.ndarray:
    """Apply the first ``n`` operations of the cycled ``CHAIN_OPS`` to ``x``.

    >>> chain_forward(np.zeros(2), 4)   # exp(tanh(0 * 0.9) + 0.1)
    array([1.10517092, 1.10517092])
    """
    for k in range(n):
        op, c = CHAIN_OPS[k % len(CHAIN_OPS)]
        x = x * c if op == "mul" else np.tanh(x) if op == "tanh" else x + c if op == "add" else np.exp(x)
    return x


def chain_grad(x: np.ndarray, n: int) -> tuple[float, np.ndarray]:
    """``sum(chain_forward(x, n))`` and its gradient with respect to ``x``, by hand:
    the forward keeps what each derivative needs, the backward multiplies through.

    >>> value, g = chain_grad(np.zeros(1), 4)   # d/dx exp(tanh(0.9 x) + 0.1) at 0
    >>> bool(np.isclose(g[0], 0.9 * np.exp(0.1)))
    True
    """
    saved = []  # tanh and exp outputs; mul and add need nothing from the forward
    for k in range(n):
        op, c = CHAIN_OPS[k % len(CHAIN_OPS)]
        if op == "mul":
            x = x * c
        elif op == "tanh":
            x = np.tanh(x)
            saved.append(x)
        elif op == "add":
            x = x + c
        else:
            x = np.exp(x)
            saved.append(x)
    g = np.ones_like(x)
    for k in range(n - 1, -1, -1):
        op, c = CHAIN_OPS[k % len(CHAIN_OPS)]
        if op == "mul":
            g = g * c
        elif op == "tanh":
            out = saved.pop()
            g = g * (1.0 - out * out)
        elif op == "exp":
            g = g * saved.pop()
        # add: the gradient passes through unchanged
    return float(x.sum()), g


def mlp_forward(params: Sequence[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Logits of the relu MLP and the layer inputs the backward pass needs
    (``acts[i]`` is the input of layer ``i``; every hidden activation is a relu).

    >>> W, b = np.eye(2), np.zeros(2)
    >>> mlp_forward([W, b], np.ones((1, 2)))[0]
    array([[1., 1.]])
    """
    acts = [x]
    a = x
    n_layers = len(params) // 2
    for i in range(n_layers):
        z = a @ params[2 * i].T + params[2 * i + 1]
        if i < n_layers - 1:
            a = np.maximum(z, 0.0)
            acts.append(a)
        else:
            a = z
    return a, acts


def softmax_cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient ``(softmax(logits) - onehot) / N``.

    >>> loss, g = softmax_cross_entropy(np.zeros((2, 2)), np.array([0, 1]))
    >>> round(loss, 6), g.tolist()
    (0.693147, [[-0.25, 0.25], [0.25, -0.25]])
    """
    n = logits.shape[0]
    shift = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shift)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = float(np.log(s[:, 0]).sum() - shift[rows, targets].sum()) / n
    g = e / s
    g[rows, targets] -= 1.0
    g /= n
    return loss, g


def mlp_loss_and_grads(params: Sequence[np.ndarray], x: np.ndarray,
                       targets: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """Cross-entropy of the relu MLP on ``(x, targets)`` and its gradient for every
    parameter, in the order of ``params``.

    The backward, layer by layer from the top: dW = g^T a_in (W is (out, in)), db = sum
    of g over the batch, and g for the layer below is (g W) masked where the relu was off.
    NOTE: the mask is ``a > 0``, so relu'(0) = 0 as in duograd and PyTorch.

    >>> rng = np.random.default_rng(0)
    >>> params = [rng.normal(size=(4, 3)), np.zeros(4), rng.normal(size=(2, 4)), np.zeros(2)]
    >>> loss, grads = mlp_loss_and_grads(params, rng.normal(size=(5, 3)), np.array([0, 1, 0, 1, 1]))
    >>> [g.shape for g in grads]
    [(4, 3), (4,), (2, 4), (2,)]
    """
    logits, acts = mlp_forward(params, x)
    loss, g = softmax_cross_entropy(logits, targets)
    grads: list[np.ndarray] = [None] * len(params)  # type: ignore[list-item]
    for i in range(len(params) // 2 - 1, -1, -1):
        a_in = acts[i]
        grads[2 * i] = g.T @ a_in
        grads[2 * i + 1] = g.sum(axis=0)
        if i > 0:
            g = (g @ params[2 * i]) * (a_in > 0)
    return loss, grads


class Adam:
    """``torch.optim.Adam`` (no weight decay, no amsgrad) on NumPy arrays, updated in place.

    m <- m + (1 - b1) (g - m)  (torch's lerp),  v <- b2 v + (1 - b2) g^2,
    p <- p - (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)

    >>> p = [np.array([1.0])]
    >>> opt = Adam(p, lr=0.1)
    >>> opt.step([np.array([2.0])])
    >>> p[0].round(6)        # the first step moves every weight by about lr
    array([0.9])
    """

    def __init__(self, params: Sequence[np.ndarray], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def step(self, grads: Sequence[np.ndarray]) -> None:
        self.t += 1
        b1, b2 = self.betas
        step_size = self.lr / (1 - b1 ** self.t)
        root_bc2 = np.sqrt(1 - b2 ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m += (1 - b1) * (g - m)
            v *= b2
            v += (1 - b2) * (g * g)
            denom = np.sqrt(v)
            denom /= root_bc2
            denom += self.eps
            p -= step_size * (m / denom)


def train_step(params: list[np.ndarray], opt: Adam | None, x: np.ndarray,
               targets: np.ndarray) -> float:
    """One full step: forward, cross-entropy, backward, and an Adam update when ``opt``
    is given (the BLAS-bound workload has none). Returns the loss.

    >>> rng = np.random.default_rng(0)
    >>> params = [rng.normal(size=(3, 2)), np.zeros(3), rng.normal(size=(2, 3)), np.zeros(2)]
    >>> loss = train_step(params, Adam(params), rng.normal(size=(4, 2)), np.array([0, 1, 1, 0]))
    >>> loss > 0
    True
    """
    loss, grads = mlp_loss_and_grads(params, x, targets)
    if opt is not None:
        opt.step(grads)
    return loss


def mlp_hvp(params: Sequence[np.ndarray], x: np.ndarray, targets: np.ndarray,
            vs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The Hessian of ``mlp_loss_and_grads``'s loss times the direction ``vs``, by hand:
    Pearlmutter's R-operator, the derivative along ``vs`` of every quantity of the forward
    and backward pass (R{z} = R{a} W^T + a V^T + v_b, R{softmax}/N = p (R{z} - <p, R{z}>) / N,
    the relu mask constant, R{dW} = g^T R{a} + R{g}^T a).

    >>> rng = np.random.default_rng(0)
    >>> ps = [rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(2, 4)), rng.normal(size=2)]
    >>> vs = [rng.normal(size=p.shape) for p in ps]
    >>> x, t = rng.normal(size=(5, 3)), np.array([0, 1, 0, 1, 1])
    >>> eps = 1e-6
    >>> plus = mlp_loss_and_grads([p + eps * v for p, v in zip(ps, vs)], x, t)[1]
    >>> minus = mlp_loss_and_grads([p - eps * v for p, v in zip(ps, vs)], x, t)[1]
    >>> fd = [(a - b) / (2 * eps) for a, b in zip(plus, minus)]
    >>> all(np.allclose(h, f, atol=1e-6) for h, f in zip(mlp_hvp(ps, x, t, vs), fd))
    True
    """
    n_layers = len(params) // 2
    acts, racts, masks = [x], [np.zeros_like(x)], []
    a, ra = x, np.zeros_like(x)
    for i in range(n_layers):
        W, V = params[2 * i], vs[2 * i]
        z = a @ W.T + params[2 * i + 1]
        rz = ra @ W.T + a @ V.T + vs[2 * i + 1]
        if i < n_layers - 1:
            mask = z > 0
            masks.append(mask)
            a, ra = z * mask, rz * mask
            acts.append(a)
            racts.append(ra)
        else:
            a, ra = z, rz
    n = x.shape[0]
    shift = a - a.max(axis=1, keepdims=True)
    p = np.exp(shift)
    p /= p.sum(axis=1, keepdims=True)
    g = p.copy()
    g[np.arange(n), targets] -= 1.0
    g /= n
    rg = p * (ra - (p * ra).sum(axis=1, keepdims=True)) / n
    out: list[np.ndarray] = [None] * len(params)  # type: ignore[list-item]
    for i in range(n_layers - 1, -1, -1):
        a_in, ra_in = acts[i], racts[i]
        out[2 * i] = g.T @ ra_in + rg.T @ a_in
        out[2 * i + 1] = rg.sum(axis=0)
        if i > 0:
            W, V = params[2 * i], vs[2 * i]
            mask = masks[i - 1]
            g, rg = (g @ W) * mask, (rg @ W + g @ V) * mask
    return out


def conv2d_layer_grads(x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray,
                       padding: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A stride-1 convolution layer's forward and backward, by hand: ``(out, gx, gw, gb)``
    for input ``x`` (N, C, H, W), weight ``w`` (O, C, kh, kw), bias ``b`` (O,) and output
    cotangent ``g``.

    One contiguous im2col copy (C*kh*kw rows per image, OH*OW columns, so the output comes
    out in NCHW order), three GEMMs (the output, the weight's gradient, the columns'
    gradient) and col2im as kh*kw strided adds.

    >>> out, gx, gw, gb = conv2d_layer_grads(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)),
    ...                                      np.zeros(1), np.ones((1, 1, 2, 2)), padding=0)
    >>> out[0, 0], gw[0, 0], gx[0, 0]
    (array([[4., 4.],
           [4., 4.]]), array([[4., 4.],
           [4., 4.]]), array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]]))
    """
    from numpy.lib.stride_tricks import sliding_window_view

    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    p = padding
    xp = np.zeros((n, c, h + 2 * p, wd + 2 * p))
    xp[:, :, p:p + h, p:p + wd] = x
    oh, ow = h + 2 * p - kh + 1, wd + 2 * p - kw + 1
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3)).transpose(0, 1, 4, 5, 2, 3)
    cols = np.ascontiguousarray(win).reshape(n, c * kh * kw, oh * ow)
    w2 = w.reshape(o, c * kh * kw)
    out = np.matmul(w2, cols).reshape(n, o, oh, ow)
    out += b[:, None, None]
    g2 = g.reshape(n, o, oh * ow)
    gb = g.sum(axis=(0, 2, 3))
    gw = np.matmul(g2, cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    gcols = np.matmul(w2.T, g2).reshape(n, c, kh, kw, oh, ow)
    gxp = np.zeros_like(xp)
    for i in range(kh):
        for j in range(kw):
            gxp[:, :, i:i + oh, j:j + ow] += gcols[:, :, i, j]
    return out, gxp[:, :, p:p + h, p:p + wd], gw, gb
