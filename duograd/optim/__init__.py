"""Optimizers with ``torch.optim``'s update formulas: ``SGD`` (momentum, Nesterov,
weight decay) and ``Adam``. Learning-rate schedules live in ``duograd.optim.lr_scheduler``.

Updates are plain NumPy on ``.data``, nothing is recorded, and every new value is a
new array assigned with ``p.data = ...``: no array is ever changed in place, because a
gradient or a data array may be shared with another tensor.

>>> import duograd as dg
>>> from duograd import optim
>>> w = dg.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.data
array([ 0.8, -1.6])
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "lr_scheduler"]


class Optimizer:
    """What every optimizer shares: the parameter list, ``lr``, ``zero_grad``.

    ``lr`` is read afresh by every ``step``, so a schedule (or you) can change it
    between steps. Parameters whose ``.grad`` is None are skipped by ``step``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.5)
    >>> w.grad = dg.tensor([2.0])
    >>> opt.lr = 0.25          # takes effect at the next step
    >>> opt.step(); opt.zero_grad()
    >>> w.data, w.grad
    (array([0.5]), None)
    """

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(f"{name}: params must be an iterable of Tensors (e.g. "
                            "model.parameters()), not a single Tensor")
        self.params: list[Tensor] = list(params)
        if not self.params:
            raise ValueError(f"{name}: got an empty parameter list")
        seen: set[int] = set()
        for i, p in enumerate(self.params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: parameter {i} is a {type(p).__name__}, not a Tensor")
            if id(p) in seen:
                raise ValueError(f"{name}: parameter {i} (shape {p.shape}) appears twice; "
                                 "it would be updated twice per step")
            seen.add(id(p))
        self.lr = lr

    @property
    def lr(self) -> float:
        """The learning rate the next ``step`` uses (non-negative)."""
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        value = float(value)
        if not value >= 0.0:  # also rejects nan
            raise ValueError(f"{type(self).__name__}: invalid learning rate {value} (must be >= 0)")
        self._lr = value

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to None."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grads(self) -> list[tuple[int, Tensor, np.ndarray]]:
        """(index, parameter, gradient array) for each parameter that has a gradient.

        Every gradient's shape is checked before any parameter moves, so a bad one
        leaves all parameters and optimizer state as they were."""
        out = []
        for i, p in enumerate(self.params):
            if p.grad is not None:
                g = p.grad.data
                if g.shape != p.shape:
                    raise ValueError(f"{type(self).__name__}.step: parameter {i} has shape "
                                     f"{p.shape} but its .grad has shape {g.shape}")
                out.append((i, p, g))
        return out


def _check(name: str, label: str, value: float, lo: float, hi: float | None = None) -> float:
    value = float(value)
    ok = value >= lo and (hi is None or value < hi)
    if not ok:
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi})"
        raise ValueError(f"{name}: invalid {label} {value} (must be {rng})")
    return value


class SGD(Optimizer):
    """Stochastic gradient descent, with ``torch.optim.SGD``'s formulas (no dampening):

    ``d = g + weight_decay * p``; ``buf = d`` on a parameter's first step, afterwards
    ``buf = momentum * buf + d``; the step direction is ``d + momentum * buf`` with
    ``nesterov``, else ``buf`` (or ``d`` when ``momentum`` is 0); ``p = p - lr * direction``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w.data.round(6)      # 1 - 0.2 = 0.8, then 0.8 - 0.1 * (0.9 * 2 + 1.6)
    array([0.46])
    """

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0.0,
                 nesterov: bool = False, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr)
        self.momentum = _check("SGD", "momentum", momentum, 0.0)
        self.weight_decay = _check("SGD", "weight_decay", weight_decay, 0.0)
        if nesterov and self.momentum <= 0.0:
            raise ValueError("SGD: Nesterov momentum requires momentum > 0")
        self.nesterov = bool(nesterov)
        self._buf: list[np.ndarray | None] = [None] * len(self.params)

    def step(self) -> None:
        lr, mu, wd = self.lr, self.momentum, self.weight_decay
        for i, p, g in self._grads():
            d = g + wd * p.data if wd != 0.0 else g
            if mu != 0.0:
                buf = self._buf[i]
                buf = d.copy() if buf is None else mu * buf + d
                self._buf[i] = buf
                d = d + mu * buf if self.nesterov else buf
            p.data = p.data - lr * d


class Adam(Optimizer):
    """Adam, with ``torch.optim.Adam``'s formulas. At step t of a parameter:

    ``m = m + (1 - b1) * (g - m)`` (torch's lerp), ``v = b2 * v + (1 - b2) * g * g``,
    ``step_size = lr / (1 - b1**t)``, ``denom = sqrt(v) / sqrt(1 - b2**t) + eps``,
    ``p = p - step_size * m / denom``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0, -3.0], requires_grad=True)
    >>> opt = optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.data.round(6)      # the first step moves each coordinate by about lr
    array([ 0.9, -2.9])
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        super().__init__(params, lr)
        b1, b2 = betas
        self.betas = (_check("Adam", "beta1", b1, 0.0, 1.0), _check("Adam", "beta2", b2, 0.0, 1.0))
        self.eps = _check("Adam", "eps", eps, 0.0)
        n = len(self.params)
        self._t = [0] * n
        self._m: list[np.ndarray | None] = [None] * n
        self._v: list[np.ndarray | None] = [None] * n

    def step(self) -> None:
        lr, (b1, b2), eps = self.lr, self.betas, self.eps
        for i, p, g in self._grads():
            m, v = self._m[i], self._v[i]
            if m is None:
                m = self._m[i] = np.zeros_like(p.data)
                v = self._v[i] = np.zeros_like(p.data)
            t = self._t[i] = self._t[i] + 1
            # m and v are this optimizer's own arrays, so they are updated in place (the
            # same arithmetic as the formulas above); the parameter gets a new array.
            m += (1 - b1) * (g - m)
            v *= b2
            v += (1 - b2) * (g * g)
            denom = np.sqrt(v)
            denom /= (1 - b2 ** t) ** 0.5
            denom += eps
            denom = np.divide(m, denom, out=denom)
            denom *= lr / (1 - b1 ** t)
            p.data = p.data - denom


from . import lr_scheduler  # noqa: E402  (it refers to Optimizer)
