"""Optimizer checkpoints in torch's layout: a run saved with ``dg.save`` and resumed with
``dg.load`` continues bit for bit as the uninterrupted run; a duograd checkpoint resumes
in torch and a torch checkpoint in duograd, each giving the other's next steps; and a
torch checkpoint passed through duograd's optimizer and file resumes torch's run bit for
bit (duograd's layout loses nothing torch needs).

The gradients are a fixed NumPy function of the parameters, the same bits in both
libraries, so the optimizers' arithmetic is all that is compared."""

from __future__ import annotations

import io

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim

CASES = {
    "SGD": ("SGD", dict(lr=0.1)),
    "SGD nesterov": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "SGD dampening": ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.25, maximize=True)),
    "Adam": ("Adam", dict(lr=0.05, weight_decay=0.01)),
    "AdamW": ("AdamW", dict(lr=0.05, betas=(0.8, 0.99))),
    "RMSprop": ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    "Adagrad": ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    "Adamax": ("Adamax", dict(lr=0.05, weight_decay=0.01)),
    "NAdam": ("NAdam", dict(lr=0.05)),
    "NAdam decoupled": ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
}
START = [np.linspace(-1.0, 1.5, 6).reshape(2, 3), np.array([0.3, -0.7]), np.array(0.25)]
N = 4  # steps before and after the checkpoint


def grad_of(x: np.ndarray) -> np.ndarray:
    return np.sin(3.0 * x) + 0.1 * x


@pytest.fixture
def torch64(torch):
    """torch with float64 as its default dtype, duograd's default: torch's optimizers then
    keep ``step`` and NAdam's ``mu_product`` in float64, as duograd does."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(before)


def dg_run(name, kw, params=None, sd=None, steps=N):
    params = params or [nn.Parameter(dg.tensor(a)) for a in START]
    opt = getattr(optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] / 2}], **kw)
    if sd is not None:
        opt.load_state_dict(sd)
    for _ in range(steps):
        for p in params:
            p.grad = dg.tensor(grad_of(p.detach().numpy()))
        opt.step()
    return params, opt


def torch_run(torch, name, kw, params=None, sd=None, steps=N):
    params = params or [torch.nn.Parameter(torch.tensor(a)) for a in START]
    opt = getattr(torch.optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] / 2}],
                                     **kw)
    if sd is not None:
        opt.load_state_dict(sd)
    for _ in range(steps):
        for p in params:
            p.grad = torch.tensor(grad_of(p.detach().numpy()))
        opt.step()
    return params, opt


def bits(ps) -> list[bytes]:
    return [p.detach().numpy().tobytes() for p in ps]


def checkpoint(save, params, opt) -> bytes:
    buf = io.BytesIO()
    save({"params": [p.detach() for p in params], "optim": opt.state_dict(), "epoch": N}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("case", CASES)
def test_a_resumed_run_continues_bit_for_bit(case):
    name, kw = CASES[case]
    want, _ = dg_run(name, kw, steps=2 * N)
    params, opt = dg_run(name, kw)
    ck = dg.load(io.BytesIO(checkpoint(dg.save, params, opt)))
    assert ck["epoch"] == N
    fresh = [nn.Parameter(dg.zeros(*a.shape)) for a in START]
    with dg.no_grad():
        for p, v in zip(fresh, ck["params"]):
            p.copy_(v)
    resumed, opt2 = dg_run(name, dict(kw, lr=99.0), fresh, ck["optim"])
    assert bits(resumed) == bits(want)
    assert [g["lr"] for g in opt2.param_groups] == [kw["lr"], kw["lr"] / 2]


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES)
def test_state_dict_has_torchs_layout(torch64, case):
    torch = torch64
    name, kw = CASES[case]
    _, opt = dg_run(name, kw)
    _, topt = torch_run(torch, name, kw)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert [list(g) for g in sd["param_groups"]] == [list(g) for g in tsd["param_groups"]]
    assert sd["param_groups"] == tsd["param_groups"]
    assert list(sd["state"]) == list(tsd["state"])
    for i, st in tsd["state"].items():
        assert list(sd["state"][i]) == list(st)
        for k, v in st.items():
            mine = sd["state"][i][k]
            assert isinstance(mine, dg.Tensor) and mine.shape == tuple(v.shape) and mine.dtype == np.float64
            np.testing.assert_allclose(mine.numpy(), v.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES)
def test_checkpoints_resume_across_the_two_libraries(torch64, case):
    torch = torch64
    name, kw = CASES[case]
    t_want, _ = torch_run(torch, name, kw, steps=2 * N)
    d_want, _ = dg_run(name, kw, steps=2 * N)
    # duograd -> torch: torch continues as duograd does (to round-off: the two libraries'
    # update kernels differ in the last bit, e.g. torch's fused add with alpha)
    params, opt = dg_run(name, kw)
    ck = torch.load(io.BytesIO(checkpoint(dg.save, params, opt)))
    assert all(type(v) is torch.Tensor for v in ck["params"])
    t_params = [torch.nn.Parameter(v.clone()) for v in ck["params"]]
    t_resumed, _ = torch_run(torch, name, kw, t_params, ck["optim"])
    for a, b in zip(t_resumed, d_want):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-15)
    # torch -> duograd: duograd continues as torch does
    tparams, topt = torch_run(torch, name, kw)
    buf = io.BytesIO()
    torch.save({"params": [p.detach() for p in tparams], "optim": topt.state_dict()}, buf)
    ck = dg.load(io.BytesIO(buf.getvalue()))
    d_params = [nn.Parameter(v) for v in ck["params"]]
    d_resumed, opt2 = dg_run(name, kw, d_params, ck["optim"])
    for a, b in zip(d_resumed, t_want):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-15)
    # torch -> duograd's optimizer and file -> torch: torch's own run, bit for bit
    fresh = [nn.Parameter(v) for v in ck["params"]]
    holder = getattr(optim, name)([{"params": fresh[:2]}, {"params": fresh[2:]}], **dict(kw, lr=1.0))
    holder.load_state_dict(ck["optim"])
    back = torch.load(io.BytesIO(checkpoint(dg.save, fresh, holder)))
    t_params = [torch.nn.Parameter(v.clone()) for v in back["params"]]
    t_again, _ = torch_run(torch, name, kw, t_params, back["optim"])
    assert bits(t_again) == bits(t_want)


@pytest.mark.oracle
def test_torch_options_duograd_lacks_are_refused(torch):
    w = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
    topt = torch.optim.Adam([w], lr=0.1, amsgrad=True)
    w.grad = torch.ones(2, dtype=torch.float64)
    topt.step()
    p = dg.ones(2, requires_grad=True)
    opt = optim.Adam([p], lr=0.5)
    with pytest.raises(ValueError, match="amsgrad=True"):
        opt.load_state_dict(topt.state_dict())
    assert opt.lr == 0.5 and opt.state == {}   # nothing changed
    # an AdamW checkpoint is not an Adam one (torch's Adam with decoupled_weight_decay=True is AdamW)
    wopt = optim.AdamW([p], lr=0.1)
    with pytest.raises(ValueError, match="decoupled_weight_decay"):
        optim.Adam([p]).load_state_dict(wopt.state_dict())


def test_a_compiled_step_resumes_from_a_checkpoint_bit_for_bit():
    x = np.random.default_rng(0).standard_normal((8, 3))

    def make():
        model = nn.Linear(3, 2)
        with dg.no_grad():
            model.weight.copy_(dg.tensor(START[0]))
            model.bias.copy_(dg.tensor(START[1]))
        opt = optim.Adam(model.parameters(), lr=0.05)

        def step(xb):
            opt.zero_grad()
            loss = (model(xb) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, opt, dg.compile(step)

    model, opt, fast = make()
    for _ in range(2 * N):
        fast(x)
    want = bits(model.parameters())
    model, opt, fast = make()
    for _ in range(N):
        fast(x)
    buf = io.BytesIO()
    dg.save({"model": model.state_dict(), "optim": opt.state_dict()}, buf)
    ck = dg.load(io.BytesIO(buf.getvalue()))
    model2, opt2, fast2 = make()
    model2.load_state_dict(ck["model"])
    opt2.load_state_dict(ck["optim"])
    for _ in range(N):
        fast2(x)
    assert bits(model2.parameters()) == want
