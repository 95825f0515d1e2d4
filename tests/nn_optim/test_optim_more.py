"""The optimizers and schedules of the layers branch against torch 2.13: Adagrad, Adamax,
NAdam, SGD(dampening, maximize), maximize on Adam/AdamW, per-group options, optimizer
state dicts (ours and torch's), zero_grad(set_to_none), and the schedules LambdaLR,
OneCycleLR, SequentialLR (a warm-up then a cosine), ReduceLROnPlateau, CosineAnnealingLR
and LinearLR: every parameter torch-identical to 1e-12 over 30 steps."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from duograd.nn import functional as F
from duograd.optim import lr_scheduler

pytestmark = pytest.mark.oracle

TOL = 1e-12
STEPS = 30


@pytest.fixture(autouse=True)
def _f64(torch, one_torch_thread):
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # torch's optimizer scalars (NAdam's mu_product) in float64
    yield
    torch.set_default_dtype(before)


def models(torch):
    """A small net in both libraries with identical weights (loaded through state dicts)."""
    tnet = torch.nn.Sequential(torch.nn.LayerNorm(3), torch.nn.Linear(3, 6), torch.nn.Tanh(),
                               torch.nn.Linear(6, 3))
    net = nn.Sequential(nn.LayerNorm(3), nn.Linear(3, 6, rng=0), nn.Tanh(), nn.Linear(6, 3, rng=1))
    with torch.no_grad():
        tnet[0].weight.uniform_(0.5, 1.5)
    nn.utils.load_torch_state_dict(net, tnet.state_dict())
    return net, tnet


def params_of(net, groups):
    if not groups:
        return net.parameters()
    ps = list(net.parameters())
    return [{"params": ps[:2], **groups[0]}, {"params": ps[2:]}]


def tparams_of(tnet, groups):
    if not groups:
        return tnet.parameters()
    ps = list(tnet.parameters())
    return [{"params": ps[:2], **groups[0]}, {"params": ps[2:]}]


def worst_difference(net, tnet) -> float:
    ours = nn.utils.torch_state_dict(net, numpy=True)
    return max(float(np.max(np.abs(ours[k] - v.detach().numpy()))) for k, v in tnet.state_dict().items())


def train_both(torch, cls, kw, groups=None, schedule=None, steps=STEPS, plateau=False):
    net, tnet = models(torch)
    opt = getattr(optim, cls)(params_of(net, groups), **kw)
    topt = getattr(torch.optim, cls)(tparams_of(tnet, groups), **kw)
    sched = tsched = None
    if schedule is not None:
        sched, tsched = schedule(lr_scheduler, opt), schedule(torch.optim.lr_scheduler, topt)
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((16, 3)), rng.integers(0, 3, 16)
    worst, lrs = 0.0, []
    start = nn.utils.torch_state_dict(net, numpy=True)
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(net(dg.tensor(x)), t)
        loss.backward()
        opt.step()
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor(t))
        tloss.backward()
        topt.step()
        if sched is not None:
            metric = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95][step % 6] if plateau else None
            (sched.step(metric), tsched.step(metric)) if plateau else (sched.step(), tsched.step())
            lrs.append([g["lr"] for g in opt.param_groups])
            np.testing.assert_allclose(lrs[-1], [g["lr"] for g in topt.param_groups], rtol=1e-13,
                                       atol=0, err_msg=f"lr after step {step}")
            assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-13)
        worst = max(worst, worst_difference(net, tnet))
    moved = max(float(np.max(np.abs(v - start[k]))) for k, v in nn.utils.torch_state_dict(net, numpy=True).items())
    return worst, moved, opt, topt


CASES = {
    "adagrad": ("Adagrad", dict(lr=0.1)),
    "adagrad_all": ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.02,
                                    initial_accumulator_value=0.1, eps=1e-8)),
    "adagrad_maximize": ("Adagrad", dict(lr=0.05, maximize=True)),
    "adamax": ("Adamax", dict(lr=0.02)),
    "adamax_all": ("Adamax", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    "nadam": ("NAdam", dict(lr=0.01)),
    "nadam_all": ("NAdam", dict(lr=0.01, betas=(0.85, 0.995), weight_decay=0.05,
                                momentum_decay=0.01)),
    "nadam_decoupled": ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    "sgd_dampening": ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3)),
    "sgd_maximize": ("SGD", dict(lr=0.01, momentum=0.5, weight_decay=0.01, maximize=True)),
    "adam_maximize": ("Adam", dict(lr=0.01, maximize=True)),
    "adamw_maximize": ("AdamW", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    "rmsprop_maximize": ("RMSprop", dict(lr=0.001, momentum=0.5, centered=True, maximize=True)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_optimizer_matches_torch_over_30_steps(torch, name):
    cls, kw = CASES[name]
    worst, moved, _, _ = train_both(torch, cls, kw)
    assert moved > 1e-3
    assert worst <= TOL, f"{name}: largest parameter difference {worst:.3g}"


@pytest.mark.parametrize("cls,kw,group", [
    ("SGD", dict(lr=0.05, momentum=0.9), dict(lr=0.2, momentum=0.5, nesterov=True)),
    ("Adam", dict(lr=0.01), dict(lr=0.05, betas=(0.5, 0.9), weight_decay=0.1)),
    ("AdamW", dict(lr=0.01), dict(weight_decay=0.0)),
    ("RMSprop", dict(lr=0.005), dict(alpha=0.9, centered=True)),
    ("Adagrad", dict(lr=0.1), dict(lr_decay=0.1)),
    ("Adamax", dict(lr=0.02), dict(lr=0.001)),
    ("NAdam", dict(lr=0.01), dict(momentum_decay=0.1)),
])
def test_param_groups_with_their_own_options_match_torch(torch, cls, kw, group):
    worst, moved, opt, topt = train_both(torch, cls, kw, groups=[group])
    assert moved > 1e-3 and worst <= TOL
    for g, tg in zip(opt.param_groups, topt.param_groups):
        for k in g:
            if k != "params" and k in tg:
                assert g[k] == tg[k], f"{cls}: group option {k}"


@pytest.mark.parametrize("cls,kw", [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01)),
                                    ("AdamW", dict(lr=0.01)), ("RMSprop", dict(lr=0.005, momentum=0.3, centered=True)),
                                    ("Adagrad", dict(lr=0.1)), ("Adamax", dict(lr=0.02)),
                                    ("NAdam", dict(lr=0.01))])
def test_state_dict_structure_and_loading_torch_state_continues_identically(torch, cls, kw):
    """Train both 10 steps; load torch's optimizer state into a fresh duograd optimizer
    (and our own state into another); both continue on torch's trajectory."""
    net, tnet = models(torch)
    opt = getattr(optim, cls)(params_of(net, [dict(lr=kw["lr"] / 2)]), **kw)
    topt = getattr(torch.optim, cls)(tparams_of(tnet, [dict(lr=kw["lr"] / 2)]), **kw)
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((16, 3)), rng.integers(0, 3, 16)

    def one_step(o, to):
        o.zero_grad()
        F.cross_entropy(net(dg.tensor(x)), t).backward()
        o.step()
        to.zero_grad()
        torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor(t)).backward()
        to.step()

    for _ in range(10):
        one_step(opt, topt)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sorted(sd) == sorted(tsd) == ["param_groups", "state"]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for i in tsd["state"]:
        assert sorted(sd["state"][i]) == sorted(tsd["state"][i]), f"state keys of parameter {i}"
    for g, tg in zip(sd["param_groups"], tsd["param_groups"]):
        assert g["params"] == tg["params"]
        assert set(g) <= set(tg) | {"maximize"}
    from_torch = getattr(optim, cls)(params_of(net, [dict(lr=1.0)]), **dict(kw, lr=1.0))
    from_torch.load_state_dict(our_layout(tsd, from_torch))
    assert [g["lr"] for g in from_torch.param_groups] == [g["lr"] for g in topt.param_groups]
    for _ in range(10):
        one_step(from_torch, topt)
    assert worst_difference(net, tnet) <= TOL
    ours_again = getattr(optim, cls)(params_of(net, [dict(lr=1.0)]), **dict(kw, lr=1.0))
    ours_again.load_state_dict(from_torch.state_dict())
    for _ in range(5):
        one_step(ours_again, topt)
    assert worst_difference(net, tnet) <= TOL


def our_layout(tsd, opt):
    """torch's optimizer state, with Linear-weight state transposed while duograd's
    nn.Linear is still (in, out) (before the `signatures` branch); unchanged after."""
    params = opt.params
    state = {}
    for i, st in tsd["state"].items():
        shape = params[i].shape
        state[i] = {k: (v.detach().numpy().T if hasattr(v, "dim") and v.dim() == 2 and tuple(v.shape) != shape
                        else v) for k, v in st.items()}
    return {"state": state, "param_groups": tsd["param_groups"]}


def test_load_state_dict_rejects_other_groups_as_torch(torch):
    w = dg.zeros(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    other = optim.SGD([{"params": [dg.zeros(1, requires_grad=True)]},
                       {"params": [dg.zeros(1, requires_grad=True)]}], lr=0.1)
    tw = torch.zeros(2, requires_grad=True)
    tother = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)]},
                              {"params": [torch.zeros(1, requires_grad=True)]}], lr=0.1)
    with pytest.raises(ValueError):
        torch.optim.SGD([tw], lr=0.1).load_state_dict(tother.state_dict())
    with pytest.raises(ValueError):
        opt.load_state_dict(other.state_dict())


def test_zero_grad_set_to_none_as_torch(torch):
    w, tw = dg.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    opt, topt = optim.SGD([w], lr=0.1), torch.optim.SGD([tw], lr=0.1)
    (w * w).sum().backward()
    (tw * tw).sum().backward()
    opt.zero_grad(set_to_none=False)
    topt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())
    opt.zero_grad()
    topt.zero_grad()
    assert w.grad is None and tw.grad is None


def test_add_param_group_and_lr_attribute(torch):
    w, b = dg.ones(1, requires_grad=True), dg.ones(1, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 0.01})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    opt.lr = 0.5  # the first group's lr
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.01]
    with pytest.raises(ValueError, match="twice"):
        opt.add_param_group({"params": [w]})


SCHEDULES = {
    "lambda": lambda S, o: S.LambdaLR(o, lambda e: 0.95 ** e),
    "one_cycle": lambda S, o: S.OneCycleLR(o, max_lr=0.05, total_steps=STEPS),
    "one_cycle_linear_three_phase": lambda S, o: S.OneCycleLR(o, max_lr=[0.05, 0.02], total_steps=STEPS,
                                                              anneal_strategy="linear", three_phase=True),
    "warmup_cosine": lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                                     S.CosineAnnealingLR(o, T_max=STEPS - 5, eta_min=1e-4)],
                                                 milestones=[5]),
    "cosine": lambda S, o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "linear": lambda S, o: S.LinearLR(o, start_factor=0.5, end_factor=0.9, total_iters=12),
    "step": lambda S, o: S.StepLR(o, step_size=4, gamma=0.7),
    "exponential": lambda S, o: S.ExponentialLR(o, gamma=0.97),
}


@pytest.mark.parametrize("opt_name", ["SGD", "AdamW"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_matches_torch_over_30_steps(torch, name, opt_name):
    kw = dict(lr=0.02, momentum=0.9) if opt_name == "SGD" else dict(lr=0.01)
    worst, moved, opt, topt = train_both(torch, opt_name, kw, groups=[dict(lr=0.03)],
                                         schedule=SCHEDULES[name])
    assert moved > 1e-3 and worst <= TOL, f"{name}: largest parameter difference {worst:.3g}"
    if name.startswith("one_cycle"):
        key = "momentum" if opt_name == "SGD" else "betas"
        np.testing.assert_allclose(np.array([g[key] for g in opt.param_groups], dtype=float),
                                   np.array([g[key] for g in topt.param_groups], dtype=float), rtol=1e-13)


@pytest.mark.parametrize("kw", [dict(patience=1), dict(mode="max", factor=0.5, patience=0, cooldown=2),
                                dict(patience=1, threshold=0.1, threshold_mode="abs", min_lr=0.005)])
def test_reduce_lr_on_plateau_matches_torch(torch, kw):
    worst, moved, _, _ = train_both(torch, "SGD", dict(lr=0.05),
                                    schedule=lambda S, o: S.ReduceLROnPlateau(o, **kw), plateau=True)
    assert moved > 1e-3 and worst <= TOL


def test_one_cycle_past_total_steps_is_an_error_as_torch(torch):
    opt = optim.SGD([dg.ones(1, requires_grad=True)], lr=0.1)
    topt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)
    s = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    ts = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=1.0, total_steps=2)
    for _ in range(2):
        opt.step()
        topt.step()
        s.step()
        ts.step()
    with pytest.raises(ValueError):
        ts.step()
    with pytest.raises(ValueError):
        s.step()
