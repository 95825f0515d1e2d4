"""The Module API of issue 28 against torch 2.13: ``parameters()`` an iterator, a
ModuleDict's entries as attributes, ``register_parameter``, ``get_submodule`` /
``get_parameter`` / ``get_buffer``, forward (pre-)hooks and full backward (pre-)hooks with
torch's arguments and results, ``half``, ``extra_repr`` and torch's ``repr``,
``state_dict(prefix=, keep_vars=)``, ``named_modules`` without duplicates."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn

pytestmark = pytest.mark.oracle


def pair(torch):
    net = nn.Sequential(nn.Linear(3, 4, rng=0), nn.Tanh(), nn.Linear(4, 2, rng=1))
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    net.load_state_dict(tnet.state_dict())
    return net, tnet


def test_parameters_is_an_iterator_as_torch(torch):
    net, tnet = pair(torch)
    it, tit = net.parameters(), tnet.parameters()
    assert iter(it) is it and iter(tit) is tit
    assert next(it).shape == tuple(next(tit).shape)
    assert len(list(net.parameters())) == len(list(tnet.parameters())) == 4


def test_module_dict_entries_are_attributes(torch):
    class GPT(nn.Module):
        def __init__(self):
            self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(5, 3, rng=0), ln_f=nn.LayerNorm(3)))

    m = GPT()
    assert m.transformer.wte is m.transformer["wte"]
    m.transformer.h = nn.ModuleList([nn.Identity()])
    assert "h" in m.transformer and list(m.transformer.keys()) == ["wte", "ln_f", "h"]
    t = torch.nn.ModuleDict(dict(wte=torch.nn.Embedding(5, 3), ln_f=torch.nn.LayerNorm(3)))
    assert list(m.transformer.state_dict()) == list(t.state_dict())
    with pytest.raises(AttributeError):
        m.transformer.nothing


def test_register_parameter_and_getters_as_torch(torch):
    net, tnet = pair(torch)
    for m in (net, tnet):
        m.register_parameter("extra", (nn if m is net else torch.nn).Parameter(
            (dg if m is net else torch).ones(2)))
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert net.get_submodule("2") is net[2] and tnet.get_submodule("2") is tnet[2]
    assert net.get_parameter("0.bias").shape == tuple(tnet.get_parameter("0.bias").shape)
    bn, tbn = nn.Sequential(nn.BatchNorm1d(3)), torch.nn.Sequential(torch.nn.BatchNorm1d(3))
    assert bn.get_buffer("0.running_var").shape == tuple(tbn.get_buffer("0.running_var").shape)
    for m in (net, tnet):
        with pytest.raises(AttributeError):
            m.get_submodule("7")
        with pytest.raises(AttributeError):
            m.get_parameter("0.nothing")
    with pytest.raises(KeyError):
        tnet.register_parameter("a.b", None)
    with pytest.raises(KeyError):
        net.register_parameter("a.b", None)


def test_forward_hooks_as_torch(torch):
    net, tnet = pair(torch)
    x = np.random.default_rng(0).standard_normal((5, 3))
    logs = {"dg": [], "torch": []}
    for m, key in ((net, "dg"), (tnet, "torch")):
        m[0].register_forward_pre_hook(lambda mod, args, key=key: logs[key].append(("pre", tuple(args[0].shape))))
        m[0].register_forward_hook(lambda mod, args, out, key=key: logs[key].append(("post", tuple(out.shape))))
        h = m[2].register_forward_hook(lambda mod, args, out: out * 2)
    y, ty = net(dg.tensor(x)), tnet(torch.tensor(x))
    assert logs["dg"] == logs["torch"]
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    h.remove()
    net[2]._hooks["forward"].clear()
    np.testing.assert_allclose(net(dg.tensor(x)).detach().numpy() * 2, y.detach().numpy(), rtol=1e-12)
    for m, lib in ((net, dg), (tnet, torch)):
        m[1].register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 0,), kwargs), with_kwargs=True)
    np.testing.assert_allclose(net(dg.tensor(x)).detach().numpy(), tnet(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)


def test_full_backward_hooks_as_torch(torch):
    net, tnet = pair(torch)
    x = np.random.default_rng(1).standard_normal((5, 3))
    seen = {"dg": [], "torch": []}
    for m, key in ((net, "dg"), (tnet, "torch")):
        m[1].register_full_backward_hook(
            lambda mod, gi, go, key=key: seen[key].append((gi[0].detach().numpy().copy(), go[0].detach().numpy().copy())))
        m[0].register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    net(xd).sum().backward()
    tnet(xt).sum().backward()
    (gi, go), = seen["dg"]
    (tgi, tgo), = seen["torch"]
    np.testing.assert_allclose(gi, tgi, rtol=1e-12)
    np.testing.assert_allclose(go, tgo, rtol=1e-12)
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(net[0].weight.grad.numpy(), tnet[0].weight.grad.numpy(), rtol=1e-12)


def test_backward_hook_replacing_grad_input_as_torch(torch):
    m, tm = nn.Tanh(), torch.nn.Tanh()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,))
    tm.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,))
    x = dg.tensor([0.5, -1.0], requires_grad=True)
    tx = torch.tensor([0.5, -1.0], requires_grad=True, dtype=torch.float64)
    (m(x * 2) ** 2).sum().backward()
    (tm(tx * 2) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_half_state_dict_options_and_repr_as_torch(torch):
    net, tnet = pair(torch)
    assert repr(net) == repr(tnet)
    assert net[0].extra_repr() == tnet[0].extra_repr()
    sd, tsd = net.state_dict(prefix="model."), tnet.state_dict(prefix="model.")
    assert list(sd) == list(tsd)
    kv = net.state_dict(keep_vars=True)
    assert kv["0.weight"] is net[0].weight
    assert tnet.state_dict(keep_vars=True)["0.weight"] is tnet[0].weight
    assert net.half()[0].weight.dtype == np.float16
    assert tnet.half()[0].weight.dtype == torch.float16

    class Custom(nn.Module):
        def extra_repr(self):
            return "k=3"
    assert repr(Custom()) == "Custom(k=3)"


def test_named_modules_lists_a_shared_module_once_as_torch(torch):
    lin, tlin = nn.Linear(2, 2, rng=0), torch.nn.Linear(2, 2)
    net, tnet = nn.Sequential(lin, lin), torch.nn.Sequential(tlin, tlin)
    assert [n for n, _ in net.named_modules()] == [n for n, _ in tnet.named_modules()]
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == \
        [n for n, _ in tnet.named_modules(remove_duplicate=False)]
    assert [n for n, _ in net.named_parameters(prefix="m")] == [n for n, _ in tnet.named_parameters(prefix="m")]


def test_zero_grad_and_load_state_dict_results_as_torch(torch):
    net, tnet = pair(torch)
    net(dg.ones((1, 3))).sum().backward()
    tnet(torch.ones(1, 3, dtype=torch.float64)).sum().backward()
    net.zero_grad(set_to_none=False)
    tnet.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in net.parameters())
    sd = {k: v for k, v in tnet.state_dict().items() if k != "2.bias"}
    sd["extra"] = torch.zeros(1)
    r, tr = net.load_state_dict(sd, strict=False), tnet.load_state_dict(sd, strict=False)
    assert r.missing_keys == tr.missing_keys and r.unexpected_keys == tr.unexpected_keys


def test_buffer_assigned_is_a_buffer_as_torch(torch):
    m, tm = nn.Module(), torch.nn.Module()
    m.w, tm.w = nn.Parameter(dg.ones(3)), torch.nn.Parameter(torch.ones(3))
    m.a, tm.a = nn.Buffer(dg.zeros(2)), torch.nn.Buffer(torch.zeros(2))
    m.b, tm.b = nn.Buffer(dg.ones(1), persistent=False), torch.nn.Buffer(torch.ones(1), persistent=False)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert m.b.persistent is False and m.a.persistent is True
