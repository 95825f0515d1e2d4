"""Convolution and pooling: dg.conv2d, dg.max_pool2d, dg.avg_pool2d and their modules.

The spec rows in specs.py give every generic check (forward against the loop reference,
gradcheck, gradgradcheck, jvp, float32, torch, replay). This file adds:

- PyTorch as oracle over ``CONFIGS`` (at least 40): batch 1 and 3, channels 1 and 3,
  kernels 1, 2, 3, 5 and non-square ones, strides 1 and 2 (and mixed pairs), paddings
  0, 1, 2, non-square inputs, and kernels exactly the size of the padded input; values and
  gradients of all three ops, in float64;
- the same configurations against the NumPy loop reference (conv_reference.py);
- ties in max-pooling, the bad-input errors, the modules (initialisation, state_dict,
  PyTorch state dicts), a CNN's second derivative against torch, and a CNN training step
  replayed bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn
from duograd.nn import functional as F
from conv_reference import avg_pool2d_loop, conv2d_loop, max_pool2d_loop, pair
from test_tensor_replay import assert_replays

KERNELS = [1, 2, 3, 5, (1, 3), (3, 2), (5, 3), (2, 5)]
STRIDES = [1, 2, (2, 1), (1, 2)]
PADDINGS = [0, 1, 2, (1, 0), (0, 2)]
INPUTS = [(7, 6), (6, 9), (5, 5), (8, 5), (9, 7)]


def _configs() -> list[dict]:
    """(batch, channels, out_channels, input (H, W), kernel, stride, padding), cycled so that
    every value meets many others; then the kernels that exactly fill the padded input."""
    out = []
    for i in range(48):
        out.append(dict(batch=(1, 3)[(i // 2) % 2], channels=(1, 3)[i % 2], out_channels=(1, 2, 4)[i % 3],
                        hw=INPUTS[(i // 3) % 5], kernel=KERNELS[i % 8], stride=STRIDES[(i // 8) % 4],
                        padding=PADDINGS[i % 5]))
    for batch, channels, hw, kernel, stride, padding in (
            (1, 3, (3, 4), (5, 6), 1, 1), (3, 1, (5, 5), 5, 2, 0), (1, 1, (2, 3), (6, 7), (2, 1), 2),
            (3, 3, (4, 2), (4, 4), 1, (0, 1))):
        out.append(dict(batch=batch, channels=channels, out_channels=2, hw=hw, kernel=kernel,
                        stride=stride, padding=padding))
    return out


CONFIGS = _configs()


def _label(c: dict) -> str:
    return (f"N{c['batch']}C{c['channels']}O{c['out_channels']}-{c['hw'][0]}x{c['hw'][1]}-"
            f"k{pair(c['kernel'])}-s{pair(c['stride'])}-p{pair(c['padding'])}").replace(" ", "")


def _pool_padding(c: dict) -> tuple[int, int]:
    """PyTorch pools allow padding up to half the kernel: the config's, capped there."""
    return tuple(min(p, k // 2) for p, k in zip(pair(c["padding"]), pair(c["kernel"])))


def _arrays(c: dict, seed: int = 0):
    rng = np.random.default_rng(seed)
    kh, kw = pair(c["kernel"])
    x = rng.standard_normal((c["batch"], c["channels"]) + c["hw"])
    w = rng.standard_normal((c["out_channels"], c["channels"], kh, kw))
    b = rng.standard_normal(c["out_channels"])
    return x, w, b


def test_the_configurations_cover_what_the_issue_asks():
    assert len(CONFIGS) >= 40
    assert {c["batch"] for c in CONFIGS} == {1, 3} and {c["channels"] for c in CONFIGS} == {1, 3}
    kernels = {pair(c["kernel"]) for c in CONFIGS}
    assert {(1, 1), (2, 2), (3, 3), (5, 5)} <= kernels and any(kh != kw for kh, kw in kernels)
    assert {1, 2} <= {s for c in CONFIGS for s in pair(c["stride"])}
    assert {0, 1, 2} <= {p for c in CONFIGS for p in pair(c["padding"])}
    assert any(h != w for h, w in (c["hw"] for c in CONFIGS))
    exact = [c for c in CONFIGS if all(k == n + 2 * p for k, n, p in
                                       zip(pair(c["kernel"]), c["hw"], pair(c["padding"])))]
    assert exact  # a kernel exactly the size of the padded input: one output pixel


def _ours_and_torch(torch, c: dict, op: str):
    """Output and input gradients of ``op`` from duograd and from torch, same arrays and g."""
    x, w, b = _arrays(c)
    if op == "conv2d":
        arrays, kw = [x, w, b], dict(stride=c["stride"], padding=c["padding"])
        ours = lambda *t: dg.conv2d(*t, **kw)
        theirs = lambda *t: torch.nn.functional.conv2d(*t, **kw)
    else:
        arrays, args = [x], (c["kernel"], c["stride"], _pool_padding(c))
        ours = lambda t: getattr(dg, op)(t, *args)
        theirs = lambda t: getattr(torch.nn.functional, op)(t, *args)
    xs = [dg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, t_out = ours(*xs), theirs(*ts)
    g = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
    out.backward(g)
    t_out.backward(torch.from_numpy(g))
    return ([out.detach().numpy()] + [x.grad.detach().numpy() for x in xs],
            [t_out.detach().numpy()] + [t.grad.numpy() for t in ts])


def oracle_errors(torch) -> dict[str, float]:
    """The largest abs difference from torch per op over every configuration (values and
    gradients together), for the record: ``python -c "..."`` prints it."""
    worst = {}
    for op in ("conv2d", "max_pool2d", "avg_pool2d"):
        worst[op] = max(max(float(np.max(np.abs(a - b))) for a, b in zip(*_ours_and_torch(torch, c, op)))
                        for c in CONFIGS)
    return worst


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["conv2d", "max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("c", CONFIGS, ids=_label)
def test_matches_torch(torch, one_torch_thread, c, op):
    ours, theirs = _ours_and_torch(torch, c, op)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, (k, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=f"result {k}")


@pytest.mark.parametrize("c", CONFIGS, ids=_label)
def test_forward_matches_the_loop_reference(c):
    x, w, b = _arrays(c)
    np.testing.assert_allclose(dg.conv2d(x, w, b, c["stride"], c["padding"]).numpy(),
                               conv2d_loop(x, w, b, c["stride"], c["padding"]), rtol=1e-12, atol=1e-13)
    args = (c["kernel"], c["stride"], _pool_padding(c))
    np.testing.assert_allclose(dg.max_pool2d(x, *args).numpy(), max_pool2d_loop(x, *args), rtol=0, atol=0)
    np.testing.assert_allclose(dg.avg_pool2d(x, *args).numpy(), avg_pool2d_loop(x, *args),
                               rtol=1e-13, atol=1e-14)


# ---------------------------------------------------------------- max-pool ties

def test_max_pool_ties_give_the_gradient_to_the_first_maximum():
    """As torch's max_pool2d: a window's whole gradient goes to its first maximum in window
    (row-major) order, and an element that wins two overlapping windows gets from both."""
    x = dg.ones((1, 1, 2, 3), requires_grad=True)
    dg.max_pool2d(x, 2, stride=1).backward(np.array([[[[4.0, 8.0]]]]))
    np.testing.assert_allclose(x.grad.numpy()[0, 0], [[4.0, 8.0, 0.0], [0.0, 0.0, 0.0]])
    y = dg.tensor([[[[1.0, 5.0], [5.0, 2.0]]]], requires_grad=True)  # two of four tie
    dg.max_pool2d(y, 2).sum().backward()
    np.testing.assert_allclose(y.grad.numpy()[0, 0], [[0.0, 1.0], [0.0, 0.0]])


def test_max_pool_padding_never_wins_even_for_very_negative_input():
    x = np.full((1, 1, 3, 3), -1e300)
    out = dg.max_pool2d(x, 3, stride=1, padding=1)
    np.testing.assert_array_equal(out.numpy(), max_pool2d_loop(x, 3, 1, 1))


# ---------------------------------------------------------------- bad input

X = np.zeros((2, 3, 5, 5))
W = np.zeros((4, 3, 3, 3))


@pytest.mark.parametrize("call, kind, words", [
    (lambda: dg.conv2d(X, np.zeros((4, 2, 3, 3))), ValueError,
     ["conv2d", "3 channels", "(2, 3, 5, 5)", "expects 2", "(4, 2, 3, 3)"]),
    (lambda: dg.conv2d(X, np.zeros((4, 3, 8, 3))), ValueError,
     ["conv2d", "kernel (8, 3)", "larger than the padded input (5, 5)", "(2, 3, 5, 5)"]),
    (lambda: dg.conv2d(X, np.zeros((4, 3, 8, 3)), padding=1), ValueError,
     ["conv2d", "larger than the padded input (7, 7)"]),
    (lambda: dg.conv2d(X, W, stride=0), ValueError, ["conv2d", "stride must be positive", "0"]),
    (lambda: dg.conv2d(X, W, stride=(1, 0)), ValueError, ["conv2d", "stride"]),
    (lambda: dg.conv2d(X, W, padding=-1), ValueError, ["conv2d", "padding must be non-negative", "-1"]),
    (lambda: dg.conv2d(X[0, 0], W), ValueError, ["conv2d", "3-D or 4-D input", "(5, 5)"]),
    (lambda: dg.conv2d(X, W[0]), ValueError, ["conv2d", "4-D weight", "(3, 3, 3)"]),
    (lambda: dg.conv2d(X, W, np.zeros(3)), ValueError, ["conv2d", "bias", "(4,)", "(3,)"]),
    (lambda: dg.conv2d(X, W, stride=1.5), TypeError, ["conv2d", "stride", "1.5"]),
    (lambda: dg.conv2d(X, W, padding=(1, 1, 1)), TypeError, ["conv2d", "padding"]),
    (lambda: dg.max_pool2d(X[0, 0], 2), ValueError, ["max_pool2d", "3-D or 4-D input", "(5, 5)"]),
    (lambda: dg.max_pool2d(X, 6), ValueError, ["max_pool2d", "kernel (6, 6)", "(5, 5)"]),
    (lambda: dg.max_pool2d(X, 2, stride=0), ValueError, ["max_pool2d", "stride must be positive"]),
    (lambda: dg.max_pool2d(X, 2, padding=-1), ValueError, ["max_pool2d", "padding must be non-negative"]),
    (lambda: dg.max_pool2d(X, 2, padding=2), ValueError, ["max_pool2d", "at most half", "(2, 2)"]),
    (lambda: dg.avg_pool2d(X[0, 0], 2), ValueError, ["avg_pool2d", "3-D or 4-D input", "(5, 5)"]),
    (lambda: dg.avg_pool2d(X, (2, 7)), ValueError, ["avg_pool2d", "kernel (2, 7)", "(5, 5)"]),
    (lambda: dg.avg_pool2d(X, 0), ValueError, ["avg_pool2d", "kernel_size must be positive"]),
    (lambda: nn.Conv2d(3, 4, 3, stride=0), ValueError, ["Conv2d", "stride"]),
    (lambda: nn.Conv2d(0, 4, 3), ValueError, ["Conv2d", "in_channels"]),
    (lambda: nn.MaxPool2d(2, padding=-1), ValueError, ["MaxPool2d", "padding"]),
    (lambda: nn.Flatten()(np.zeros(3)), ValueError, ["Flatten", "(3,)"]),
    (lambda: nn.Conv2d(2, 4, 3, rng=0)(X), ValueError, ["conv2d", "3 channels", "expects 2"]),
])
def test_bad_input_names_the_op_and_the_shapes(call, kind, words):
    with pytest.raises(kind) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_a_failed_call_changes_nothing():
    conv = nn.Conv2d(3, 4, 3, rng=0)
    x = dg.tensor(np.ones((1, 3, 4, 4)), requires_grad=True)
    conv(x).sum().backward()
    before = [p.grad.numpy().copy() for p in conv.parameters()] + [x.grad.numpy().copy()]
    state = conv.state_dict()
    with pytest.raises(ValueError):
        conv(dg.tensor(np.ones((1, 2, 4, 4)), requires_grad=True)).sum().backward()
    with pytest.raises(ValueError):
        dg.conv2d(x, conv.weight, conv.bias, padding=-1)
    after = [p.grad.numpy() for p in conv.parameters()] + [x.grad.numpy()]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    for k, v in conv.state_dict().items():
        np.testing.assert_array_equal(v, state[k])


# ---------------------------------------------------------------- modules

def test_conv2d_default_initialisation_is_pytorchs():
    conv = nn.Conv2d(16, 32, (3, 2), rng=0)
    bound = 1 / np.sqrt(16 * 3 * 2)
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert w.shape == (32, 16, 3, 2) and b.shape == (32,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform on [-bound, bound]: mean 0, variance bound^2 / 3 (3,072 draws)
    assert abs(w.mean()) < 0.05 * bound and abs(w.var() / (bound ** 2 / 3) - 1) < 0.06
    assert np.abs(w).max() > 0.99 * bound
    same = nn.Conv2d(16, 32, (3, 2), rng=0)
    np.testing.assert_array_equal(same.weight.detach().numpy(), w)
    assert nn.Conv2d(3, 4, 3, bias=False, rng=0).bias is None
    assert [n for n, _ in nn.Conv2d(3, 4, 3, bias=False, rng=0).named_parameters()] == ["weight"]


def _cnn(rng=0):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, rng=rng), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 2, stride=(1, 2), padding=(1, 0), rng=rng), nn.ReLU(),
                         nn.AvgPool2d(2, stride=1), nn.Flatten(), nn.Linear(24, 3, rng=rng))


def _torch_cnn(torch):
    tn = torch.nn
    return tn.Sequential(tn.Conv2d(1, 4, 3, padding=1), tn.ReLU(), tn.MaxPool2d(2),
                         tn.Conv2d(4, 6, 2, stride=(1, 2), padding=(1, 0)), tn.ReLU(),
                         tn.AvgPool2d(2, stride=1), tn.Flatten(), tn.Linear(24, 3)).double()


def test_state_dict_round_trip():
    a, b = _cnn(rng=0), _cnn(rng=1)
    x = np.random.default_rng(2).standard_normal((2, 1, 8, 8))
    assert not np.array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    assert list(a.state_dict()) == ["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias"]
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


@pytest.mark.oracle
def test_torch_state_dict_gives_torch_outputs_and_gradients(torch, one_torch_thread):
    torch.manual_seed(0)
    tnet = _torch_cnn(torch)
    net = _cnn()
    nn.utils.load_torch_state_dict(net, tnet.state_dict())  # Conv2d weights load as they are
    np.testing.assert_array_equal(net[0].weight.detach().numpy(), tnet[0].weight.detach().numpy())
    x = np.random.default_rng(3).standard_normal((5, 1, 8, 8))
    y = np.array([0, 2, 1, 1, 0])
    loss = F.cross_entropy(net(x), y)
    t_loss = torch.nn.functional.cross_entropy(tnet(torch.from_numpy(x)), torch.from_numpy(y))
    np.testing.assert_allclose(net(x).detach().numpy(), tnet(torch.from_numpy(x)).detach().numpy(),
                               rtol=0, atol=1e-12)
    loss.backward()
    t_loss.backward()
    for (name, p), tp in zip(net.named_parameters(), tnet.parameters()):
        want = tp.grad.numpy()  # the same layouts, Linear's included
        np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-10, atol=1e-13, err_msg=name)
    back = _torch_cnn(torch)
    back.load_state_dict(nn.utils.torch_state_dict(net))
    for k, v in back.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), tnet.state_dict()[k].numpy())


@pytest.mark.oracle
def test_pool_and_flatten_modules_match_torch(torch):
    x = np.random.default_rng(4).standard_normal((2, 3, 7, 6))
    tx = torch.from_numpy(x)
    for ours, theirs in ((nn.MaxPool2d(3, stride=2, padding=1), torch.nn.MaxPool2d(3, stride=2, padding=1)),
                         (nn.AvgPool2d((2, 3)), torch.nn.AvgPool2d((2, 3))),
                         (nn.Flatten(), torch.nn.Flatten())):
        np.testing.assert_allclose(ours(x).numpy(), theirs(tx).numpy(), rtol=1e-14, atol=0)


@pytest.mark.oracle
def test_gradient_penalty_through_a_cnn_matches_torch(torch, one_torch_thread):
    """Second order through conv, max-pool and avg-pool: the gradient norm of the loss with
    respect to the input, differentiated with respect to the weights."""
    torch.manual_seed(1)
    tnet = _torch_cnn(torch)
    net = _cnn()
    nn.utils.load_torch_state_dict(net, tnet.state_dict())
    x = np.random.default_rng(5).standard_normal((3, 1, 8, 8))
    xt = dg.tensor(x, requires_grad=True)
    (gx,) = dg.grad(net(xt).tanh().sum(), xt, create_graph=True)
    (gx * gx).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    (tgx,) = torch.autograd.grad(tnet(tx).tanh().sum(), tx, create_graph=True)
    (tgx * tgx).sum().backward()
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-11, atol=1e-13)
    for (name, p), tp in zip(net.named_parameters(), tnet.parameters()):
        want = tp.grad.numpy()  # the same layouts, Linear's included
        np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-9, atol=1e-12, err_msg=name)


def test_cnn_training_step_replays_bit_for_bit():
    """Forward, cross-entropy, backward into every parameter's .grad, through both pools."""
    y = np.array([0, 2, 1])

    def step(x, *params):
        net = _cnn()
        it = iter(params)
        for m in net:  # the model runs on the step's leaves
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                m.weight, m.bias = next(it), next(it)
        h = net(x)
        loss = F.cross_entropy(h, y)
        loss.backward()
        return [loss, *[p.grad for p in params]]

    def arrays(seed):
        return [np.random.default_rng(seed).standard_normal((3, 1, 8, 8))] + \
            [p.detach().numpy().copy() for p in _cnn(rng=seed).parameters()]
    assert assert_replays(step, arrays(0), arrays(1)) > 30
