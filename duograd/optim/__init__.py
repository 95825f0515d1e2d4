"""Optimizers with ``torch.optim``'s update formulas: ``SGD`` (momentum, Nesterov,
weight decay), ``Adam`` (with PyTorch's L2 ``weight_decay``), ``AdamW`` (decoupled weight
decay) and ``RMSprop``. Each formula is written in the order of operations PyTorch's
CPU kernels use, so float64 trajectories agree with ``torch.optim`` to round-off. Learning-rate schedules live in ``duograd.optim.lr_scheduler``.

Updates are plain NumPy on ``.data`` and nothing is recorded. The new values are written
into the parameter's own array, as ``torch.optim`` steps in place: a parameter made with
``dg.from_numpy`` shows each step in the array it shares. Gradients are never changed.

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

from ..autograd import bump, host
from .._tensor import Tensor  # a public name; not `from .. import` (an import cycle)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]



def _write(p: Tensor, base: np.ndarray, step: np.ndarray) -> None:
    """``p``'s values become ``base - step``, computed straight into ``p``'s own array (no
    temporary; a read-only array is replaced instead). Its version goes up, as torch.optim's
    in-place step bumps it (a graph that saved ``p`` before the step raises on backward)."""
    data = p._data
    if data.flags.writeable:
        np.subtract(base, step, out=data)
    else:
        p.data = base - step
    bump(p)

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

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        if "step" in cls.__dict__:  # a dg.compile replay calls step() itself (autograd.host)
            cls.step = host(cls.__dict__["step"])

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
            grad = p._grad  # (the fields, not the properties: this runs every step)
            if grad is not None:
                g = grad._data
                if g.shape != p._data.shape:
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
            _write(p, p.data, lr * d)


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``torch.lerp`` into ``start``, in place, with its two formulas (the one chosen by
    the weight keeps round-off small)."""
    if abs(weight) < 0.5:
        d = end - start
        d *= weight
        start += d
    else:
        d = end - start
        d *= 1 - weight
        np.subtract(end, d, out=start)


class Adam(Optimizer):
    """Adam, with ``torch.optim.Adam``'s formulas. At step t of a parameter:

    ``g = g + weight_decay * p`` (PyTorch's L2 form: the decay passes through the moments;
    see ``AdamW`` for the decoupled form), ``m = lerp(m, g, 1 - b1)``,
    ``v = b2 * v + (1 - b2) * g * g``, ``step_size = lr / (1 - b1**t)``,
    ``denom = sqrt(v) / sqrt(1 - b2**t) + eps``, ``p = p - step_size * m / denom``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0, -3.0], requires_grad=True)
    >>> opt = optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.data.round(6)      # the first step moves each coordinate by about lr
    array([ 0.9, -2.9])
    """

    _decoupled = False  # AdamW: decay the parameter itself, not the gradient

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, lr)
        name = type(self).__name__
        b1, b2 = betas
        self.betas = (_check(name, "beta1", b1, 0.0, 1.0), _check(name, "beta2", b2, 0.0, 1.0))
        self.eps = _check(name, "eps", eps, 0.0)
        self.weight_decay = _check(name, "weight_decay", weight_decay, 0.0)
        n = len(self.params)
        self._t = [0] * n
        self._m: list[np.ndarray | None] = [None] * n
        self._v: list[np.ndarray | None] = [None] * n

    def step(self) -> None:
        lr, (b1, b2), eps, wd = self.lr, self.betas, self.eps, self.weight_decay
        for i, p, g in self._grads():
            if self._m[i] is None:
                self._m[i] = np.zeros_like(p.data)
                self._v[i] = np.zeros_like(p.data)
            t = self._t[i] = self._t[i] + 1
            param = p._data
            if wd != 0.0:
                if self._decoupled:
                    param = param * (1 - lr * wd)
                else:
                    g = g + wd * param
            # m and v are this optimizer's own arrays (never shared), so they are updated
            # in place (fewer temporaries per step), and so is the parameter. Each
            # product is grouped as PyTorch's kernels group it (lerp: m + w * (g - m);
            # addcmul: v + ((1 - b2) * g) * g; addcdiv: p - (step_size * m) / denom), so
            # the float64 round-off is the same.
            m, v = self._m[i], self._v[i]
            _lerp_(m, g, 1 - b1)
            v *= b2
            sq = g * (1 - b2)
            sq *= g
            v += sq
            denom = np.sqrt(v)
            denom /= (1 - b2 ** t) ** 0.5
            denom += eps
            step = m * (lr / (1 - b1 ** t))
            step /= denom
            _write(p, param, step)


class AdamW(Adam):
    """Adam with decoupled weight decay, with ``torch.optim.AdamW``'s formulas: each step
    first shrinks the parameter, ``p = p * (1 - lr * weight_decay)``, then takes Adam's
    step (above) with the undecayed gradient. Note the default ``weight_decay=0.01``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0, -3.0], requires_grad=True)
    >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = dg.tensor([0.0, 0.0])   # no gradient: only the decay acts
    >>> opt.step()
    >>> w.data                           # times 1 - 0.1 * 0.5
    array([ 0.95, -2.85])
    """

    _decoupled = True

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)


class RMSprop(Optimizer):
    """RMSprop, with ``torch.optim.RMSprop``'s formulas. At each step of a parameter:

    ``g = g + weight_decay * p``; ``s = alpha * s + (1 - alpha) * g * g``; with
    ``centered``, ``a = lerp(a, g, 1 - alpha)`` and ``avg = sqrt(s - a * a) + eps``, else
    ``avg = sqrt(s) + eps``; with ``momentum``, ``buf = momentum * buf + g / avg`` and
    ``p = p - lr * buf``, else ``p = p - lr * g / avg``. ``s``, ``a`` and ``buf`` start at 0.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.RMSprop([w], lr=0.01, alpha=0.99)
    >>> w.grad = dg.tensor([2.0])
    >>> opt.step()      # s = 0.01 * 4, so the step is 0.01 * 2 / (0.2 + 1e-8)
    >>> w.data.round(9)
    array([0.9])
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 0.01, alpha: float = 0.99,
                 eps: float = 1e-8, momentum: float = 0.0, weight_decay: float = 0.0,
                 centered: bool = False) -> None:
        super().__init__(params, lr)
        self.alpha = _check("RMSprop", "alpha", alpha, 0.0)
        self.eps = _check("RMSprop", "eps", eps, 0.0)
        self.momentum = _check("RMSprop", "momentum", momentum, 0.0)
        self.weight_decay = _check("RMSprop", "weight_decay", weight_decay, 0.0)
        self.centered = bool(centered)
        n = len(self.params)
        self._square_avg: list[np.ndarray | None] = [None] * n
        self._grad_avg: list[np.ndarray | None] = [None] * n
        self._buf: list[np.ndarray | None] = [None] * n

    def step(self) -> None:
        lr, alpha, eps, mu, wd = self.lr, self.alpha, self.eps, self.momentum, self.weight_decay
        for i, p, g in self._grads():
            if self._square_avg[i] is None:
                self._square_avg[i] = np.zeros_like(p.data)
                self._grad_avg[i] = np.zeros_like(p.data) if self.centered else None
                self._buf[i] = np.zeros_like(p.data) if mu > 0.0 else None
            if wd != 0.0:
                g = g + wd * p.data
            s = self._square_avg[i] = self._square_avg[i] * alpha + ((1 - alpha) * g) * g
            if self.centered:
                a = self._grad_avg[i]
                _lerp_(a, g, 1 - alpha)
                avg = np.sqrt(s - a * a) + eps
            else:
                avg = np.sqrt(s) + eps
            if mu > 0.0:
                buf = self._buf[i] = self._buf[i] * mu + g / avg
                _write(p, p.data, lr * buf)
            else:
                _write(p, p.data, (lr * g) / avg)


from . import lr_scheduler  # noqa: E402  (it refers to Optimizer)
