"""The schedules added for issue 28 against torch 2.13: MultiStepLR, ConstantLR,
PolynomialLR, MultiplicativeLR, CyclicLR (its three modes, a custom scale function, the
momentum and Adam's beta1 cycled), CosineAnnealingWarmRestarts (per epoch and with
fractional epochs) and ChainedScheduler: every group's lr equal to torch's (to 1e-13
relative) after each of 30 steps, and torch's error kinds for bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import optim
from duograd.optim import lr_scheduler

pytestmark = pytest.mark.oracle

STEPS = 30


def pair(torch, opt_name="SGD", **kw):
    """The same two-group optimizer in both libraries."""
    kw = kw or (dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.01))
    ours = getattr(optim, opt_name)([{"params": [dg.zeros(2, requires_grad=True)]},
                                     {"params": [dg.zeros(3, requires_grad=True)], "lr": 0.03}], **kw)
    theirs = getattr(torch.optim, opt_name)([{"params": [torch.zeros(2, requires_grad=True)]},
                                             {"params": [torch.zeros(3, requires_grad=True)], "lr": 0.03}],
                                            **kw)
    return ours, theirs


SCHEDULES = {
    "multistep": lambda S, o: S.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.5),
    "multistep_unsorted": lambda S, o: S.MultiStepLR(o, milestones=[12, 2]),
    "constant": lambda S, o: S.ConstantLR(o),
    "constant_half": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=7),
    "polynomial": lambda S, o: S.PolynomialLR(o),
    "polynomial_square": lambda S, o: S.PolynomialLR(o, total_iters=20, power=2.0),
    "multiplicative": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "multiplicative_per_group": lambda S, o: S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1 - e / 100]),
    "cyclic": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "cyclic_triangular2": lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                                  step_size_down=5, mode="triangular2"),
    "cyclic_exp_range": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                                mode="exp_range", gamma=0.97,
                                                base_momentum=0.7, max_momentum=0.95),
    "cyclic_scale_fn": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                               scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"),
    "cyclic_no_momentum": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                                  cycle_momentum=False),
    "warm_restarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5),
    "warm_restarts_mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
    "chained": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2),
                                                S.ExponentialLR(o, gamma=0.9)]),
    "chained_three": lambda S, o: S.ChainedScheduler([S.LinearLR(o, start_factor=0.2, total_iters=5),
                                                      S.MultiStepLR(o, milestones=[10, 20]),
                                                      S.PolynomialLR(o, total_iters=40)], optimizer=o),
}


def moments(opt):
    return [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_matches_torch(torch, name, opt_name):
    if name == "cyclic_no_momentum" and opt_name == "Adam":
        pytest.skip("(the same as SGD)")
    opt, topt = pair(torch, opt_name)
    sched, tsched = SCHEDULES[name](lr_scheduler, opt), SCHEDULES[name](torch.optim.lr_scheduler, topt)
    for step in range(STEPS + 1):
        np.testing.assert_allclose([g["lr"] for g in opt.param_groups],
                                   [g["lr"] for g in topt.param_groups], rtol=1e-13, atol=1e-17,
                                   err_msg=f"{name} after {step} steps")
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-13, abs=1e-17)
        assert moments(opt) == pytest.approx(moments(topt), rel=1e-13)
        opt.step()
        topt.step()
        sched.step()
        tsched.step()


@pytest.mark.parametrize("kw", [dict(T_0=4), dict(T_0=2, T_mult=3, eta_min=0.01)])
def test_warm_restarts_with_fractional_epochs_match_torch(torch, kw):
    opt, topt = pair(torch)
    s = lr_scheduler.CosineAnnealingWarmRestarts(opt, **kw)
    ts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(topt, **kw)
    for i in range(40):
        epoch = i / 3
        s.step(epoch)
        ts.step(epoch)
        np.testing.assert_allclose(s.get_last_lr(), ts.get_last_lr(), rtol=1e-13, atol=1e-17)
        assert s.last_epoch == ts.last_epoch


@pytest.mark.parametrize("make", [
    lambda S, o: S.ConstantLR(o, factor=1.5),
    lambda S, o: S.CyclicLR(o, base_lr=0.1, max_lr=1.0, mode="other"),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda S, o: S.MultiplicativeLR(o, [lambda e: 1.0] * 3),
    lambda S, o: S.ChainedScheduler([]),
])
def test_bad_arguments_raise_as_torch(torch, make):
    opt, topt = pair(torch)
    with pytest.raises(ValueError):
        make(torch.optim.lr_scheduler, topt)
    with pytest.raises(ValueError):
        make(lr_scheduler, opt)


def test_cyclic_momentum_needs_a_momentum_option(torch):
    topt = torch.optim.Adagrad([torch.zeros(1, requires_grad=True)])
    opt = optim.Adagrad([dg.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError):
        torch.optim.lr_scheduler.CyclicLR(topt, 0.1, 1.0)
    with pytest.raises(ValueError):
        lr_scheduler.CyclicLR(opt, 0.1, 1.0)
