"""Learning-rate schedules with PyTorch's names and meaning.

A schedule remembers the optimizer's ``lr`` when it is built (the base lr) and, on
construction and after every ``step()``, sets ``optimizer.lr`` to the base lr times a
factor of the epoch count ``last_epoch`` (0 at construction, +1 per ``step()``). Call
``step()`` once per epoch, after ``optimizer.step()``, as in PyTorch.

Each lr is computed in closed form from the base lr, so it does not drift through
repeated multiplication; the sequences equal ``torch.optim.lr_scheduler``'s to round-off.
One difference from PyTorch: schedules do not chain (the lr is recomputed from the base
lr, so a change made to ``optimizer.lr`` by hand is overwritten at the next ``step``).

>>> from duograd import nn, optim
>>> from duograd.optim import lr_scheduler
>>> opt = optim.SGD(nn.Linear(2, 1, rng=0).parameters(), lr=1.0)
>>> sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(5):
...     opt.step()
...     sched.step()
...     lrs.append(opt.lr)
>>> lrs
[1.0, 0.5, 0.5, 0.25, 0.25]
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..autograd import host

if TYPE_CHECKING:  # the package imports this module, so no import back at module level
    from . import Optimizer

__all__ = ["LRScheduler", "StepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR"]


class LRScheduler:
    """Base class: subclasses define ``get_lr()``, the lr for epoch ``last_epoch``,
    computed from ``base_lr`` (the optimizer's lr when the schedule was built).

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import LRScheduler
    >>> class Halving(LRScheduler):
    ...     def get_lr(self):
    ...         return self.base_lr / 2 ** self.last_epoch
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = Halving(opt)
    >>> s.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer) -> None:
        from . import Optimizer  # loaded by now: this module is imported by the package

        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected a duograd optimizer, got "
                            f"{type(optimizer).__name__}")
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.last_epoch = 0
        self._apply()

    def get_lr(self) -> float:
        """The lr for the current ``last_epoch``."""
        raise NotImplementedError

    def _apply(self) -> None:
        self.optimizer.lr = self.get_lr()
        self._last_lr = [self.optimizer.lr]

    @host  # a dg.compile replay calls it again
    def step(self) -> None:
        """Advance one epoch and set the optimizer's lr."""
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The lr last set, in a one-element list as PyTorch returns one per param group."""
        return list(self._last_lr)


class StepLR(LRScheduler):
    """``base_lr * gamma ** (epoch // step_size)``: decay by ``gamma`` every ``step_size`` epochs.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import StepLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=0.1)
    >>> s = StepLR(opt, step_size=1, gamma=0.5)
    >>> s.step(); s.get_last_lr()
    [0.05]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        if not isinstance(step_size, int) or isinstance(step_size, bool) or step_size < 1:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        if not gamma >= 0:
            raise ValueError(f"StepLR: gamma must be >= 0, got {gamma!r}")
        self.step_size, self.gamma = step_size, float(gamma)
        super().__init__(optimizer)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class ExponentialLR(LRScheduler):
    """``base_lr * gamma ** epoch``.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import ExponentialLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = ExponentialLR(opt, gamma=0.5)
    >>> s.step(); s.step(); opt.lr
    0.25
    """

    def __init__(self, optimizer: Optimizer, gamma: float) -> None:
        if not gamma >= 0:
            raise ValueError(f"ExponentialLR: gamma must be >= 0, got {gamma!r}")
        self.gamma = float(gamma)
        super().__init__(optimizer)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** self.last_epoch


class CosineAnnealingLR(LRScheduler):
    """``eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``: half a cosine
    from the base lr down to ``eta_min`` over ``T_max`` epochs (and, past ``T_max``, back up
    again, as in PyTorch: the formula is periodic).

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import CosineAnnealingLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = CosineAnnealingLR(opt, T_max=2)
    >>> s.step(); round(opt.lr, 12)
    0.5
    >>> s.step(); round(opt.lr, 12)
    0.0
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:
        if not isinstance(T_max, int) or isinstance(T_max, bool) or T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive int, got {T_max!r}")
        if not eta_min >= 0:
            raise ValueError(f"CosineAnnealingLR: eta_min must be >= 0, got {eta_min!r}")
        self.T_max, self.eta_min = T_max, float(eta_min)
        super().__init__(optimizer)

    def get_lr(self) -> float:
        cos = math.cos(math.pi * self.last_epoch / self.T_max)
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + cos) / 2


class LinearLR(LRScheduler):
    """``base_lr * factor`` with the factor moving linearly from ``start_factor`` (applied
    at construction, as in PyTorch) to ``end_factor`` over ``total_iters`` epochs, then held.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import LinearLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> opt.lr
    0.5
    >>> s.step(); opt.lr
    0.75
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor!r}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor!r}")
        if not isinstance(total_iters, int) or isinstance(total_iters, bool) or total_iters < 1:
            raise ValueError(f"LinearLR: total_iters must be a positive int, got {total_iters!r}")
        self.start_factor, self.end_factor = float(start_factor), float(end_factor)
        self.total_iters = total_iters
        super().__init__(optimizer)

    def get_lr(self) -> float:
        frac = min(self.last_epoch, self.total_iters) / self.total_iters
        return self.base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)
