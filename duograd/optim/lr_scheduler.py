"""Learning-rate schedules with PyTorch's names and meaning.

A schedule remembers the optimizer's ``lr`` when it is built (the base lr) and, on
construction and after every ``step()``, sets ``optimizer.lr`` to the base lr times a
factor of the epoch count ``last_epoch`` (0 at construction, +1 per ``step()``). Call
``step()`` once per epoch, after ``optimizer.step()``, as in PyTorch.

Each lr is computed in closed form from the base lr, so it does not drift through
repeated multiplication; the sequences equal ``torch.optim.lr_scheduler``'s to round-off.
One difference from PyTorch: schedules do not chain (the lr is recomputed from the base
lr, so a change made to ``optimizer.lr`` by hand is overwritten at the next ``step``).
Each param group has its own base lr (its ``initial_lr``, recorded by the first schedule).

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

import bisect
import math
from typing import TYPE_CHECKING

from ..autograd import host

if TYPE_CHECKING:  # the package imports this module, so no import back at module level
    from typing import Any, Callable, Sequence  # (not at run time: torch's module names clash)

    from . import Optimizer

__all__ = ["LRScheduler", "StepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
           "LambdaLR", "OneCycleLR", "SequentialLR", "ReduceLROnPlateau",
           "MultiStepLR", "ConstantLR", "PolynomialLR", "MultiplicativeLR", "CyclicLR",
           "CosineAnnealingWarmRestarts", "ChainedScheduler"]


class LRScheduler:
    """Base class: subclasses define ``get_lr()``, the lr for epoch ``last_epoch``,
    computed from ``base_lr`` (the group's ``initial_lr``: its lr when the first schedule
    was built on the optimizer, as torch records it). With several param groups,
    ``get_lr`` is called once per group with ``base_lr`` set to that group's; it may also
    return a list (one lr per group).

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

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        from . import Optimizer  # loaded by now: this module is imported by the package

        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected a duograd optimizer, got "
                            f"{type(optimizer).__name__}")
        if last_epoch != -1:
            raise NotImplementedError(f"{type(self).__name__}: resuming with last_epoch is not "
                                      "supported; build the schedule and step it")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.base_lr = self.base_lrs[0]
        self.last_epoch = 0
        self._apply()

    def get_lr(self) -> Any:
        """The lr for the current ``last_epoch`` (of the group whose base is ``base_lr``)."""
        raise NotImplementedError

    def _lrs(self) -> list[float]:
        first = self.base_lrs[0]
        out = []
        for i, base in enumerate(self.base_lrs):
            self.base_lr, self._group = base, i
            lr = self.get_lr()
            if isinstance(lr, (list, tuple)):
                return list(lr)
            out.append(lr)
        self.base_lr, self._group = first, 0
        return out

    def _apply(self) -> None:
        for group, lr in zip(self.optimizer.param_groups, self._lrs()):
            group["lr"] = float(lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    @host  # a dg.compile replay calls it again
    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or go to ``epoch``) and set the optimizer's lr."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The lr last set, one per param group, as PyTorch returns them."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """The schedule's attributes except the optimizer (and functions), as torch."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


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


class LambdaLR(LRScheduler):
    """``base_lr * lr_lambda(epoch)`` (``lr_lambda`` may be a list, one per param group).

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import LambdaLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = LambdaLR(opt, lambda e: min(1.0, (e + 1) / 4))   # a linear warm-up
    >>> s.step(); opt.lr
    0.5
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        fns = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        if len(fns) != n:
            raise ValueError(f"LambdaLR: expected {n} lr_lambdas, but got {len(fns)}")
        self.lr_lambdas = fns
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambdas[self._group](self.last_epoch)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy, as ``torch.optim.lr_scheduler.OneCycleLR``: the lr rises from
    ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of ``total_steps``
    and anneals to ``initial_lr / final_div_factor`` (``three_phase``: back to the initial
    lr first); with ``cycle_momentum`` the momentum (or Adam's beta1) moves inversely
    between ``max_momentum`` and ``base_momentum``. Stepping past ``total_steps`` is a
    ValueError, as torch.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import OneCycleLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=0.1, momentum=0.9)
    >>> s = OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> round(opt.lr, 12)
    0.04
    >>> for _ in range(2): s.step()
    >>> round(opt.lr, 6), opt.param_groups[0]["momentum"] == 0.85   # at the peak
    (1.0, True)
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.85,
                 max_momentum: float | Sequence[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        groups = optimizer.param_groups
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: you must define either total_steps OR "
                                 "(epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"OneCycleLR: expected a positive total_steps, got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: expected pct_start in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.total_steps = int(total_steps)
        self._anneal = _anneal_cos if anneal_strategy == "cos" else _anneal_linear
        if three_phase:
            self._phases = [(float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [(float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        n = len(groups)
        per = lambda v, name: list(v) if isinstance(v, (list, tuple)) else [v] * n  # noqa: E731
        max_lrs = per(max_lr, "max_lr")
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("OneCycleLR: optimizer must support momentum or beta1 with "
                                 "cycle_momentum enabled")
            self._use_beta1 = "betas" in optimizer.defaults
        for group, mlr, bm, mm in zip(groups, max_lrs, per(base_momentum, ""), per(max_momentum, "")):
            group["initial_lr"] = mlr / div_factor
            group["max_lr"] = mlr
            group["min_lr"] = group["initial_lr"] / final_div_factor
            if self.cycle_momentum:
                group["max_momentum"], group["base_momentum"] = mm, bm
                self._set_momentum(group, mm)
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], m: float) -> None:
        if self._use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; the specified number of "
                             f"total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lo, hi, mlo, mhi) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lo], group[hi], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[mlo], group[mhi], pct))
                    break
                start = end
        return lrs


class SequentialLR(LRScheduler):
    """One schedule after another, switching at the ``milestones`` (epochs), as
    ``torch.optim.lr_scheduler.SequentialLR``: at a milestone the next schedule restarts
    from its epoch 0. A warm-up then a cosine decay:

    >>> from duograd import nn, optim
    >>> from duograd.optim import lr_scheduler as S
    >>> opt = optim.AdamW(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = S.SequentialLR(opt, [S.LinearLR(opt, 0.25, total_iters=3), S.CosineAnnealingLR(opt, T_max=4)],
    ...                    milestones=[3])
    >>> lrs = [opt.lr]
    >>> for _ in range(7):
    ...     s.step(); lrs.append(round(opt.lr, 4))
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("SequentialLR: expects at least one scheduler")
        for i, sch in enumerate(schedulers):
            if not isinstance(sch, LRScheduler) or isinstance(sch, ReduceLROnPlateau):
                raise TypeError(f"SequentialLR: scheduler {i} is a {type(sch).__name__}, not "
                                "a schedule of epochs")
            if sch.optimizer is not optimizer:
                raise ValueError(f"SequentialLR: scheduler {i} belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: expected {len(schedulers) - 1} milestones for "
                             f"{len(schedulers)} schedulers, got {len(milestones)}")
        self._schedulers, self._milestones = schedulers, [int(m) for m in milestones]
        self.optimizer = optimizer
        self.last_epoch = 0
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        first = schedulers[0]
        first.last_epoch = 0
        first._apply()
        self.base_lrs = list(first.base_lrs)
        self._last_lr = first.get_last_lr()

    @host  # a dg.compile replay calls it again
    def step(self, epoch: int | None = None) -> None:
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        sch = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sch.step(0)
        else:
            sch.step()
        self._last_lr = sch.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out


class ReduceLROnPlateau(LRScheduler):
    """Multiply every group's lr by ``factor`` when the metric passed to ``step(metric)``
    has not improved for more than ``patience`` epochs (then wait ``cooldown`` epochs),
    never below ``min_lr``, with torch's ``mode``, ``threshold`` and ``threshold_mode``.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import ReduceLROnPlateau
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = ReduceLROnPlateau(opt, patience=1)
    >>> for loss in [1.0, 1.0, 1.0, 1.0]:
    ...     s.step(loss)
    >>> opt.lr
    0.1
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | Sequence[float] = 0.0, eps: float = 1e-8) -> None:
        from . import Optimizer

        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"ReduceLROnPlateau: expected a duograd optimizer, got "
                            f"{type(optimizer).__name__}")
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau: factor should be < 1.0")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode {mode!r} is unknown")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold mode {threshold_mode!r} is unknown")
        n = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [float(min_lr)] * n
        if len(self.min_lrs) != n:
            raise ValueError(f"ReduceLROnPlateau: expected {n} min_lrs, got {len(self.min_lrs)}")
        self.optimizer, self.mode, self.factor, self.patience = optimizer, mode, float(factor), int(patience)
        self.threshold, self.threshold_mode = float(threshold), threshold_mode
        self.cooldown, self.eps = int(cooldown), float(eps)
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = self.last_epoch = 0
        self.base_lrs = [g["lr"] for g in optimizer.param_groups]
        self._last_lr = list(self.base_lrs)

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" else a > best + self.threshold

    @host  # a dg.compile replay calls it again
    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        current = float(metrics.item() if hasattr(metrics, "item") else metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(group["lr"])
                new = max(old * self.factor, floor)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


def _positive_int(name: str, label: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}: {label} must be a positive int, got {value!r}")
    return value


class MultiStepLR(LRScheduler):
    """``base_lr * gamma ** k``, ``k`` the number of ``milestones`` (epochs) reached so far
    (a milestone listed twice counts twice, as torch's).

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import MultiStepLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     s.step(); lrs.append(opt.lr)
    >>> lrs
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones, self.gamma = sorted(int(m) for m in milestones), float(gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** bisect.bisect_right(self.milestones, self.last_epoch)


class ConstantLR(LRScheduler):
    """``base_lr * factor`` for the first ``total_iters`` epochs, then ``base_lr``.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import ConstantLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=0.9)
    >>> s = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = [opt.lr]
    >>> for _ in range(3):
    ...     s.step(); lrs.append(opt.lr)
    >>> lrs
    [0.45, 0.45, 0.9, 0.9]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = float(factor), int(total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> float:
        return self.base_lr * (self.factor if self.last_epoch < self.total_iters else 1.0)


class PolynomialLR(LRScheduler):
    """``base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``: a polynomial
    decay to 0 over ``total_iters`` epochs.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import PolynomialLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = PolynomialLR(opt, total_iters=4, power=2.0)
    >>> s.step(); opt.lr
    0.5625
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = int(total_iters), float(power)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> float:
        return self.base_lr * (1.0 - min(self.last_epoch, self.total_iters) / self.total_iters) ** self.power


class MultiplicativeLR(LRScheduler):
    """Each ``step()`` multiplies the lr by ``lr_lambda(epoch)`` (a list: one function per
    group): ``base_lr * lr_lambda(1) * ... * lr_lambda(epoch)``.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import MultiplicativeLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = MultiplicativeLR(opt, lambda e: 0.5)
    >>> s.step(); s.step(); opt.lr
    0.25
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        fns = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        if len(fns) != n:
            raise ValueError(f"MultiplicativeLR: expected {n} lr_lambdas, but got {len(fns)}")
        self.lr_lambdas = fns
        self._at, self._lr = 0, [g.get("initial_lr", g["lr"]) for g in optimizer.param_groups]
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch < self._at:  # (a step back to an earlier epoch: from the base)
            self._at, self._lr = 0, list(self.base_lrs)
        while self._at < self.last_epoch:
            self._at += 1
            self._lr = [lr * f(self._at) for lr, f in zip(self._lr, self.lr_lambdas)]
        return list(self._lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class CyclicLR(LRScheduler):
    """The cyclical learning rate policy, as ``torch.optim.lr_scheduler.CyclicLR``: the lr
    goes from ``base_lr`` to ``max_lr`` over ``step_size_up`` steps and back over
    ``step_size_down`` (default: the same), the amplitude scaled per cycle ("triangular":
    1, "triangular2": halved each cycle) or per step ("exp_range": ``gamma ** step``), or by
    ``scale_fn`` of the cycle or of the step (``scale_mode``); with ``cycle_momentum`` the
    momentum (or Adam's beta1) moves inversely between ``max_momentum`` and
    ``base_momentum``. Step it after every batch.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import CyclicLR
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=9.0, momentum=0.9)
    >>> s = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = [opt.lr]
    >>> for _ in range(4):
    ...     s.step(); lrs.append(round(opt.lr, 6))
    >>> lrs
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | Sequence[float],
                 max_lr: float | Sequence[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float = 0.8,
                 max_momentum: float = 0.9, last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)

        def per(name: str, v: Any) -> list[float]:
            vs = list(v) if isinstance(v, (list, tuple)) else [v] * n
            if len(vs) != n:
                raise ValueError(f"CyclicLR: expected {n} values for {name}, got {len(vs)}")
            return [float(x) for x in vs]
        base_lrs = per("base_lr", base_lr)
        for lr, group in zip(base_lrs, optimizer.param_groups):
            group["lr"] = lr
        self.max_lrs = per("max_lr", max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("CyclicLR: mode is invalid and scale_fn is None")
        self.mode, self.gamma, self._custom = mode, float(gamma), scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("CyclicLR: optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self._use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = per("base_momentum", base_momentum)
            self.max_momentums = per("max_momentum", max_momentum)
            for mm, bm, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                self._set_momentum(group, mm)
                group["max_momentum"], group["base_momentum"] = mm, bm
        self._cycle_base = base_lrs
        super().__init__(optimizer, last_epoch)
        self.base_lrs = list(base_lrs)

    def _set_momentum(self, group: dict[str, Any], m: float) -> None:
        if self._use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) ``x``."""
        if self._custom is not None:
            return self._custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        e = self.last_epoch
        cycle = math.floor(1 + e / self.total_size)
        x = 1.0 + e / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else e)
        lrs = [b + (m - b) * factor * scale for b, m in zip(self._cycle_base, self.max_lrs)]
        if self.cycle_momentum:
            for group, bm, mm in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, mm - (mm - bm) * factor * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "_custom"}


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: a cosine from the base lr to ``eta_min`` over ``T_0`` epochs, restarting at
    the base lr, each period ``T_mult`` times the last. ``step(epoch)`` accepts a
    fractional epoch (a step per batch), as torch's.

    >>> from duograd import nn, optim
    >>> from duograd.optim.lr_scheduler import CosineAnnealingWarmRestarts
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     s.step(); lrs.append(round(opt.lr, 6))
    >>> lrs
    [0.5, 1.0, 0.5, 1.0]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or isinstance(T_0, bool) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or isinstance(T_mult, bool) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, float(eta_min)
        self.T_cur = 0.0
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> float:
        cos = math.cos(math.pi * self.T_cur / self.T_i)
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + cos) / 2

    @host  # a dg.compile replay calls it again
    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to (a possibly fractional) ``epoch``."""
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._apply()


class ChainedScheduler(LRScheduler):
    """Several schedules at once, as ``torch.optim.lr_scheduler.ChainedScheduler``:
    ``step()`` steps each, and the lr is the base lr times the product of their factors
    (each schedule's own lr over the base). This equals torch's chaining for the
    multiplicative schedules (``StepLR``, ``MultiStepLR``, ``ConstantLR``, ``LinearLR``,
    ``ExponentialLR``, ``PolynomialLR``, ``MultiplicativeLR``, ``LambdaLR`` first).

    >>> from duograd import nn, optim
    >>> from duograd.optim import lr_scheduler as S
    >>> opt = optim.SGD(nn.Linear(1, 1, rng=0).parameters(), lr=1.0)
    >>> s = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
    ...                         S.ExponentialLR(opt, gamma=0.9)])
    >>> lrs = [opt.lr]
    >>> for _ in range(3):
    ...     s.step(); lrs.append(round(opt.lr, 6))
    >>> lrs
    [0.5, 0.45, 0.81, 0.729]
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        for i, sch in enumerate(schedulers):
            if not isinstance(sch, LRScheduler) or isinstance(sch, ReduceLROnPlateau):
                raise TypeError(f"ChainedScheduler: scheduler {i} is a {type(sch).__name__}, "
                                "not a schedule of epochs")
            if sch.optimizer is not optimizer:
                raise ValueError(f"ChainedScheduler expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler {i} with another one")
        self._schedulers, self.optimizer = schedulers, optimizer
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = 0
        self._combine()

    def _combine(self) -> None:
        lrs = list(self.base_lrs)
        for sch in self._schedulers:
            for i, (lr, base) in enumerate(zip(sch._last_lr, sch.base_lrs)):
                lrs[i] = lrs[i] * (lr / base) if base != 0 else 0.0
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = float(lr)
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    @host  # a dg.compile replay calls it again
    def step(self, epoch: int | None = None) -> None:
        self.last_epoch += 1
        for sch in self._schedulers:
            sch.step()
        self._combine()

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out
