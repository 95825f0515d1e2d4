"""The optimizers added for issue 28 against torch 2.13: Adadelta, RAdam, Rprop, ASGD,
Adafactor, Muon and LBFGS (with and without the strong-Wolfe line search), each over 30
steps on a small net from identical float64 weights, every parameter torch-identical to
1e-12 (Muon's Newton–Schulz runs in bfloat16 in both, bit for bit); their argument checks
raise torch's error kinds; SparseAdam is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from duograd.nn import functional as F

from test_optim_more import train_both

pytestmark = pytest.mark.oracle

TOL = 1e-12


@pytest.fixture(autouse=True)
def _f64(torch, one_torch_thread):
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


CASES = {
    "adadelta": ("Adadelta", dict()),
    "adadelta_all": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.05)),
    "adadelta_maximize": ("Adadelta", dict(lr=0.5, maximize=True)),
    "radam": ("RAdam", dict(lr=0.01)),
    "radam_all": ("RAdam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    "radam_decoupled": ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    "rprop": ("Rprop", dict(lr=0.01)),
    "rprop_all": ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05))),
    "rprop_maximize": ("Rprop", dict(lr=0.01, maximize=True)),
    "asgd": ("ASGD", dict(lr=0.05)),
    "asgd_all": ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=10, weight_decay=0.02)),
    "adafactor": ("Adafactor", dict(lr=0.01)),
    "adafactor_all": ("Adafactor", dict(lr=0.02, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5,
                                        weight_decay=0.05)),
    "adafactor_maximize": ("Adafactor", dict(lr=0.01, maximize=True)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_new_optimizer_matches_torch_over_30_steps(torch, name):
    cls, kw = CASES[name]
    worst, moved, opt, topt = train_both(torch, cls, kw)
    assert moved > 1e-3
    assert worst <= TOL, f"{name}: largest parameter difference {worst:.3g}"
    assert sorted(opt.state_dict()["state"][0]) == sorted(topt.state_dict()["state"][0])


@pytest.mark.parametrize("cls,kw,group", [
    ("Adadelta", dict(lr=1.0), dict(rho=0.5)),
    ("RAdam", dict(lr=0.01), dict(lr=0.03, betas=(0.5, 0.9))),
    ("Rprop", dict(lr=0.01), dict(lr=0.001)),
    ("ASGD", dict(lr=0.05), dict(t0=3)),
    ("Adafactor", dict(lr=0.01), dict(d=2.0)),
])
def test_new_optimizer_param_groups_match_torch(torch, cls, kw, group):
    worst, moved, _, _ = train_both(torch, cls, kw, groups=[group])
    assert moved > 1e-3 and worst <= TOL


def _matrices(torch):
    rng = np.random.default_rng(3)
    W1, W2 = rng.standard_normal((6, 3)), rng.standard_normal((3, 6))
    ours = [dg.tensor(W1, requires_grad=True), dg.tensor(W2, requires_grad=True)]
    theirs = [torch.tensor(W1, requires_grad=True), torch.tensor(W2, requires_grad=True)]
    x, t = rng.standard_normal((16, 3)), rng.integers(0, 3, 16)
    return ours, theirs, x, t


@pytest.mark.parametrize("kw", [dict(lr=0.02), dict(lr=0.02, nesterov=False, weight_decay=0.0),
                                dict(lr=0.01, adjust_lr_fn="match_rms_adamw", momentum=0.8)])
def test_muon_matches_torch_over_30_steps(torch, kw):
    ours, theirs, x, t = _matrices(torch)
    opt, topt = optim.Muon(ours, **kw), torch.optim.Muon(theirs, **kw)
    worst = 0.0
    for _ in range(30):
        opt.zero_grad()
        F.cross_entropy(dg.tensor(x) @ ours[0].T @ ours[1].T, t).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.functional.cross_entropy(torch.tensor(x) @ theirs[0].T @ theirs[1].T,
                                          torch.tensor(t)).backward()
        topt.step()
        worst = max(worst, *(float(np.max(np.abs(a.detach().numpy() - b.detach().numpy())))
                             for a, b in zip(ours, theirs)))
    assert worst <= TOL


LBFGS_CASES = [dict(max_iter=5), dict(line_search_fn="strong_wolfe", max_iter=5),
                dict(lr=0.5, max_iter=5, history_size=3),
                dict(line_search_fn="strong_wolfe", history_size=2, max_iter=7)]


@pytest.mark.parametrize("problem", ["logistic", "rosenbrock"])
@pytest.mark.parametrize("kw", LBFGS_CASES)
def test_lbfgs_matches_torch(torch, kw, problem):
    """Four steps of L-BFGS (up to 28 iterations) on a regularised logistic regression and
    on Rosenbrock's function: the same losses, evaluation counts and parameters."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 4)), rng.integers(0, 2, 20) * 2 - 1.0
    w0 = rng.standard_normal(4) * 0.1 if problem == "logistic" else np.array([-1.2, 1.0])
    w, tw = dg.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    if problem == "rosenbrock" and "line_search_fn" not in kw:
        kw = dict(kw, lr=0.02)
    opt, topt = optim.LBFGS([w], **kw), torch.optim.LBFGS([tw], **kw)

    def loss_of(lib, v):
        if problem == "rosenbrock":
            return (1 - v[0]) ** 2 + 100 * (v[1] - v[0] ** 2) ** 2
        z = -lib.tensor(y) * (lib.tensor(X) @ v)
        return lib.nn.functional.softplus(z).mean() + 0.1 * (v * v).sum()

    def closure():
        opt.zero_grad()
        loss = loss_of(dg, w)
        loss.backward()
        return loss

    def tclosure():
        topt.zero_grad()
        loss = loss_of(torch, tw)
        loss.backward()
        return loss

    for _ in range(4):
        a, b = opt.step(closure), topt.step(tclosure)
        assert a.item() == pytest.approx(b.item(), rel=1e-12, abs=1e-14)
        assert opt.state[w]["func_evals"] == topt.state[tw]["func_evals"]
        assert opt.state[w]["n_iter"] == topt.state[tw]["n_iter"]
        np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=0, atol=TOL)
    assert float(np.max(np.abs(w.detach().numpy() - w0))) > 1e-2


def test_lbfgs_refuses_groups_and_other_line_searches(torch):
    a, b = dg.zeros(1, requires_grad=True), dg.zeros(1, requires_grad=True)
    with pytest.raises(ValueError):
        torch.optim.LBFGS([{"params": [torch.zeros(1, requires_grad=True)]},
                           {"params": [torch.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((a - 1.0) ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError):
        opt.step(closure)


@pytest.mark.parametrize("cls,kw", [
    ("Adadelta", dict(lr=-1.0)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1.0)),
    ("RAdam", dict(betas=(1.0, 0.9))), ("RAdam", dict(eps=-1.0)),
    ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(lr=-0.1)),
    ("ASGD", dict(weight_decay=-1.0)),
    ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(d=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Muon", dict(momentum=-1.0)), ("Muon", dict(adjust_lr_fn="other")),
])
def test_argument_checks_raise_as_torch(torch, cls, kw):
    shape = (2, 2)
    with pytest.raises(ValueError):
        getattr(torch.optim, cls)([torch.zeros(shape, requires_grad=True)], **kw)
    with pytest.raises(ValueError):
        getattr(optim, cls)([dg.zeros(shape, requires_grad=True)], **kw)


def test_muon_refuses_non_matrices_as_torch(torch):
    with pytest.raises(ValueError):
        torch.optim.Muon([torch.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError):
        optim.Muon([dg.zeros(3, requires_grad=True)])


def test_step_with_closure_returns_its_loss():
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.RAdam([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    assert opt.step(closure).item() == 5.0
    assert w.detach().numpy() == pytest.approx([0.8, 1.6])  # (the momentum-only first step: lr * g)


def test_sparse_adam_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="SparseAdam"):
        optim.SparseAdam([dg.zeros(1, requires_grad=True)])


def test_state_dict_round_trip_continues_identically(torch):
    w = nn.Linear(3, 2, rng=0)
    opt = optim.Adadelta(w.parameters(), lr=0.5)
    for _ in range(3):
        w.zero_grad()
        w(dg.ones((1, 3))).sum().backward()
        opt.step()
    opt2 = optim.Adadelta(w.parameters(), lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.lr == 0.5
    p0 = opt.param_groups[0]["params"][0]
    np.testing.assert_array_equal(opt2.state[p0]["acc_delta"], opt.state[p0]["acc_delta"])
