"""PyTorch as the oracle for the modules and utilities a PyTorch user reaches for first
(issue 13, sections 1 and 2): ``train()``/``eval()``, ``Sigmoid``, ``Dropout``,
``MSELoss``, ``CrossEntropyLoss``, ``nn.utils.clip_grad_norm_`` and the PyTorch
state-dict conversion. Optimizer trajectories are in test_optim_oracle.py.

Expected values come from torch (or, for dropout's randomness, from the binomial
distribution), never from duograd itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg
from duograd import nn
from duograd.nn import utils

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread):
    """Tiny tensors: one torch thread (conftest.py)."""


# ---------------------------------------------------------------- train() / eval()


def test_train_eval_set_training_on_every_submodule_like_torch(torch):
    ours = nn.Sequential(nn.Linear(3, 4, rng=0), nn.Dropout(0.2, rng=0),
                         nn.Sequential(nn.Sigmoid(), nn.Linear(4, 2, rng=1)))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.2),
                                 torch.nn.Sequential(torch.nn.Sigmoid(), torch.nn.Linear(4, 2)))
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    for call in ("eval", "train", "eval"):
        assert getattr(ours, call)() is ours and getattr(theirs, call)() is theirs
        flags = [m.training for m in ours.modules()]
        assert flags == [m.training for m in theirs.modules()]
        assert flags == [call == "train"] * 6
    ours.train(False)
    theirs.train(False)
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    # a submodule switched alone leaves its parent as it was, in both
    ours[2].train()
    theirs[2].train()
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]


# ---------------------------------------------------------------- Sigmoid


def test_sigmoid_module_matches_torch(torch):
    z = np.linspace(-40.0, 40.0, 23).reshape(1, 23) * np.array([[1.0], [0.1]])
    x = dg.tensor(z, requires_grad=True)
    y = nn.Sigmoid()(x)
    w = np.random.default_rng(0).standard_normal(z.shape)
    (y * w).sum().backward()
    tx = torch.tensor(z, requires_grad=True)
    ty = torch.nn.Sigmoid()(tx)
    (ty * torch.from_numpy(w)).sum().backward()
    # NOTE: an absolute tolerance of a few ulps of 1.0: in the tails the engine's sigmoid
    # and its derivative out * (1 - out) are exact to about 1e-16 absolute, not relative.
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------- Dropout


def test_dropout_scale_matches_torch(torch):
    for p in (0.1, 0.3, 0.5, 0.7):
        ours = nn.Dropout(p, rng=1)(dg.ones(2000)).numpy()
        theirs = torch.nn.Dropout(p)(torch.ones(2000, dtype=torch.float64)).numpy()
        assert set(ours.tolist()) == set(theirs.tolist()) == {0.0, 1.0 / (1.0 - p)}


def test_dropout_is_the_identity_in_eval_mode_like_torch(torch):
    x = np.random.default_rng(0).standard_normal((5, 7))
    drop = nn.Dropout(0.5, rng=0).eval()
    t = dg.tensor(x, requires_grad=True)
    out = drop(t)
    np.testing.assert_array_equal(out.detach().numpy(), x)
    np.testing.assert_array_equal(out.detach().numpy(),
                                  torch.nn.Dropout(0.5).eval()(torch.from_numpy(x)).numpy())
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.ones_like(x))
    drop.train()
    assert (drop(dg.tensor(x)).numpy() == 0).any()


# ---------------------------------------------------------------- loss modules


def _loss_data(kind):
    rng = np.random.default_rng(5 if kind == "mse" else 6)
    if kind == "mse":
        return rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    return rng.standard_normal((8, 5)) * 3, rng.integers(0, 5, size=8)


# kind: (duograd module, torch module name, loss rtol, gradient rtol, gradient atol)
LOSS_MODULES = {"mse": (nn.MSELoss, "MSELoss", 1e-15, 1e-15, 1e-17),
                "cross_entropy": (nn.CrossEntropyLoss, "CrossEntropyLoss", 1e-14, 1e-13, 1e-16)}


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("kind", LOSS_MODULES)
def test_loss_module_matches_torch(torch, kind, reduction):
    ours, theirs, loss_rtol, rtol, atol = LOSS_MODULES[kind]
    x, y = _loss_data(kind)
    pred = dg.tensor(x, requires_grad=True)
    loss = ours(reduction=reduction)(pred, y)
    loss.backward()
    tp = torch.tensor(x, requires_grad=True)
    tloss = getattr(torch.nn, theirs)(reduction=reduction)(tp, torch.from_numpy(y))
    tloss.backward()
    assert loss.item() == pytest.approx(tloss.item(), rel=loss_rtol)
    np.testing.assert_allclose(pred.grad.numpy(), tp.grad.numpy(), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- clip_grad_norm_


def _grads(seed: int, scale: float):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) * scale for s in ((4, 3), (3,), (3, 2), (2,))]


@pytest.mark.parametrize("max_norm", [0.5, 1.0, 1e3])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_torch(torch, max_norm, norm_type):
    grads = _grads(0, 1.5)
    params = [dg.tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = dg.tensor(g)
    total = utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
    tparams = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for tp, g in zip(tparams, grads):
        tp.grad = torch.tensor(g)
    ttotal = torch.nn.utils.clip_grad_norm_(tparams, max_norm, norm_type=norm_type)
    assert type(total) is float
    assert total == pytest.approx(ttotal.item(), rel=1e-14)
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-14, atol=0)


def test_clip_grad_norm_returns_norm_before_clipping_and_skips_missing_grads(torch):
    a, b, c = (dg.tensor(np.zeros(2), requires_grad=True) for _ in range(3))
    a.grad, c.grad = dg.tensor([3.0, 0.0]), dg.tensor([0.0, 4.0])
    assert utils.clip_grad_norm_([a, b, c], 1.0) == 5.0
    assert b.grad is None
    # the clipped norm is max_norm, up to PyTorch's 1e-6 guard
    assert float(np.sqrt((a.grad.numpy() ** 2).sum() + (c.grad.numpy() ** 2).sum())) \
        == pytest.approx(1.0 / (1.0 + 2e-7), rel=1e-12)
    t = torch.zeros(2, requires_grad=True)
    assert utils.clip_grad_norm_(dg.tensor([0.0], requires_grad=True), 1.0) == \
        torch.nn.utils.clip_grad_norm_([t], 1.0).item() == 0.0


def test_clip_grad_norm_in_a_training_step_matches_torch(torch):
    """Gradients from a real backward, clipped, then an optimizer step: the same as torch."""
    from duograd import optim
    from duograd.nn import functional as F

    net = nn.MLP(3, [5, 3], rng=0)
    tnet = _torch_mlp(torch, [3, 5, 3])
    utils.load_torch_state_dict(net, tnet.state_dict())
    x = np.random.default_rng(1).standard_normal((6, 3)) * 4
    t = np.array([0, 1, 2, 0, 1, 2])
    F.cross_entropy(net(dg.tensor(x)), t).backward()
    total = utils.clip_grad_norm_(net.parameters(), 0.1)
    optim.SGD(net.parameters(), lr=0.5).step()
    torch.nn.functional.cross_entropy(tnet(torch.from_numpy(x)), torch.from_numpy(t)).backward()
    ttotal = torch.nn.utils.clip_grad_norm_(tnet.parameters(), 0.1)
    torch.optim.SGD(tnet.parameters(), lr=0.5).step()
    assert total > 0.1 and total == pytest.approx(ttotal.item(), rel=1e-14)
    for name, value in utils.torch_state_dict(net, numpy=True).items():
        np.testing.assert_allclose(value, tnet.state_dict()[name].numpy(), rtol=0, atol=1e-15)


# ---------------------------------------------------------------- PyTorch state dicts


def _torch_mlp(torch, sizes, activation="relu"):
    """A torch model whose state-dict names are nn.MLP's: layers.0.weight, ..."""
    act = {"relu": torch.relu, "tanh": torch.tanh}[activation]

    class TorchMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(
                torch.nn.Linear(a, b, dtype=torch.float64) for a, b in zip(sizes, sizes[1:]))

        def forward(self, x):
            for layer in self.layers[:-1]:
                x = act(layer(x))
            return self.layers[-1](x)

    torch.manual_seed(0)
    return TorchMLP()


def _torch_sequential(torch):
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(4, 4, dtype=torch.float64), torch.nn.Tanh(),
                               torch.nn.Linear(4, 4, dtype=torch.float64), torch.nn.Sigmoid(),
                               torch.nn.Linear(4, 4, dtype=torch.float64))


def _our_sequential(rng=None):
    return nn.Sequential(nn.Linear(4, 4, rng=rng), nn.Tanh(), nn.Linear(4, 4, rng=rng),
                         nn.Sigmoid(), nn.Linear(4, 4, rng=rng))


X = np.random.default_rng(9).standard_normal((11, 4))


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_load_torch_state_dict_into_mlp_gives_torch_outputs(torch, activation):
    tnet = _torch_mlp(torch, [4, 8, 8, 3], activation)
    net = nn.MLP(4, [8, 8, 3], activation=activation, rng=123)
    utils.load_torch_state_dict(net, tnet.state_dict())
    expected = tnet(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(net(dg.tensor(X)).detach().numpy(), expected, rtol=1e-12, atol=1e-12)


def test_square_weights_round_trip_through_torch(torch):
    """Square weights are the silent-transposition case: they load either way, and only
    the right layout gives torch's outputs. Both loaders take torch's layout as it is."""
    tnet = _torch_sequential(torch)
    net = _our_sequential(rng=0)
    utils.load_torch_state_dict(net, tnet.state_dict())
    expected = tnet(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(net(dg.tensor(X)).detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    # Module.load_state_dict takes the torch state_dict directly, with the same result
    direct = _our_sequential(rng=0)
    direct.load_state_dict(tnet.state_dict())
    np.testing.assert_allclose(direct(dg.tensor(X)).detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    # the weights transposed (the old (in, out) layout, the mistake) give other outputs
    wrong = _our_sequential(rng=0)
    wrong.load_state_dict({k: v.numpy().T if v.ndim == 2 else v.numpy()
                           for k, v in tnet.state_dict().items()})
    assert np.max(np.abs(wrong(dg.tensor(X)).detach().numpy() - expected)) > 1e-3
    # and back: duograd -> torch_state_dict -> a fresh torch model, bit for bit
    net2 = _our_sequential(rng=5)
    back = _torch_sequential(torch)
    back.load_state_dict(utils.torch_state_dict(net2))
    np.testing.assert_allclose(back(torch.from_numpy(X)).detach().numpy(),
                               net2(dg.tensor(X)).detach().numpy(), rtol=1e-12, atol=1e-12)
    for name, value in back.state_dict().items():
        assert value.dtype == torch.float64
        np.testing.assert_array_equal(value.numpy(), utils.torch_state_dict(net2)[name].numpy())


def test_torch_state_dict_is_a_copy_in_torch_layout(torch):
    net = nn.MLP(3, [5, 2], rng=0)
    sd = utils.torch_state_dict(net)
    assert list(sd) == list(net.state_dict())
    assert all(isinstance(v, torch.Tensor) for v in sd.values())
    assert tuple(sd["layers.0.weight"].shape) == (5, 3)
    np.testing.assert_array_equal(sd["layers.0.weight"].numpy(), net.layers[0].weight.data)
    sd["layers.0.weight"][0, 0] = 1e6
    sd["layers.0.bias"][0] = 1e6
    assert np.abs(net.layers[0].weight.data).max() < 1 and np.abs(net.layers[0].bias.data).max() < 1
    # loading does not alias the torch tensors either
    tnet = _torch_mlp(torch, [3, 5, 2])
    utils.load_torch_state_dict(net, tnet.state_dict())
    with torch.no_grad():
        tnet.layers[0].bias.fill_(7.0)
    assert (net.layers[0].bias.data != 7.0).all()


def test_load_torch_state_dict_accepts_arrays_and_casts_to_the_parameter_dtype(torch):
    tnet = _torch_mlp(torch, [3, 4, 2])
    arrays = {k: v.numpy().astype(np.float32) for k, v in tnet.state_dict().items()}
    net = nn.MLP(3, [4, 2], rng=0)
    utils.load_torch_state_dict(net, arrays)
    assert all(p.dtype == np.float64 for p in net.parameters())
    np.testing.assert_array_equal(net.layers[1].weight.data, arrays["layers.1.weight"])


def _expect_nothing_loaded(net, state, *fragments):
    before = {k: v.copy() for k, v in net.state_dict().items()}
    with pytest.raises(ValueError) as e:
        utils.load_torch_state_dict(net, state)
    message = str(e.value)
    assert "nothing was loaded" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v, before[k])
    return message


def test_load_torch_state_dict_mismatches_name_the_key_and_shapes_and_load_nothing(torch):
    net = nn.MLP(4, [8, 3], rng=0)
    good = _torch_mlp(torch, [4, 8, 3]).state_dict()

    missing = {k: v for k, v in good.items() if k != "layers.1.bias"}
    _expect_nothing_loaded(net, missing, "missing key 'layers.1.bias'", "(3,)")

    extra = dict(good, **{"layers.2.weight": torch.zeros(3, 3)})
    _expect_nothing_loaded(net, extra, "unexpected key 'layers.2.weight'", "(3, 3)")

    # a weight in the old (in, out) layout: (out, in) is expected
    transposed = dict(good, **{"layers.0.weight": good["layers.0.weight"].T})
    _expect_nothing_loaded(net, transposed, "'layers.0.weight'", "(4, 8)", "(8, 4)")

    # a wrong architecture: every problem is listed
    other = _torch_mlp(torch, [4, 6, 3]).state_dict()
    msg = _expect_nothing_loaded(net, other, "'layers.0.weight'", "'layers.0.bias'",
                                 "'layers.1.weight'")
    assert "(6, 4)" in msg and "(8, 4)" in msg

    # torch.nn.Sequential names ('0.weight') are not nn.MLP's ('layers.0.weight')
    seq = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    _expect_nothing_loaded(net, seq.state_dict(), "missing key 'layers.0.weight'",
                           "unexpected key '0.weight'")


def test_linear_without_bias_and_nested_modules_convert(torch):
    class Net(nn.Module):
        def __init__(self):
            self.body = nn.Sequential(nn.Linear(3, 3, bias=False, rng=0), nn.ReLU())
            self.head = nn.Linear(3, 2, rng=1)

        def forward(self, x):
            return self.head(self.body(x))

    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(3, 3, bias=False, dtype=torch.float64),
                                            torch.nn.ReLU())
            self.head = torch.nn.Linear(3, 2, dtype=torch.float64)

        def forward(self, x):
            return self.head(self.body(x))

    torch.manual_seed(3)
    tnet, net = TorchNet(), Net()
    assert list(utils.torch_state_dict(net)) == list(tnet.state_dict())
    utils.load_torch_state_dict(net, tnet.state_dict())
    np.testing.assert_allclose(net(dg.tensor(X[:, :3])).detach().numpy(),
                               tnet(torch.from_numpy(X[:, :3])).detach().numpy(),
                               rtol=1e-12, atol=1e-12)
