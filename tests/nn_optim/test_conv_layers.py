"""The conv branch's layers against torch.nn: each built with the same arguments, loaded from
the torch layer's ``state_dict()``, gives torch's outputs, input gradients and parameter
gradients to 1e-12 in float64; parameter names and shapes (the state-dict keys) are torch's;
the default initialisation has torch's bounds."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn

pytestmark = pytest.mark.oracle

# (class name, constructor args, kwargs, input shape)
PARAM_LAYERS = [
    ("Conv1d", (3, 4, 3), {}, (2, 3, 9)),
    ("Conv1d", (4, 6, 4), {"stride": 1, "padding": "same", "dilation": 2, "groups": 2}, (2, 4, 20)),
    ("Conv1d", (2, 4, 3), {"padding": 2, "padding_mode": "reflect"}, (1, 2, 8)),
    ("Conv1d", (2, 4, 3), {"padding": 1, "padding_mode": "circular", "bias": False}, (1, 2, 8)),
    ("Conv2d", (3, 4, 3), {"padding": 1}, (2, 3, 6, 18)),
    ("Conv2d", (4, 4, (3, 2)), {"stride": (2, 1), "dilation": (1, 2), "groups": 4, "padding": (1, 0)}, (2, 4, 7, 8)),
    ("Conv2d", (2, 3, 4), {"padding": "same"}, (1, 2, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "replicate"}, (1, 2, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": (1, 2), "padding_mode": "reflect"}, (2, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": "valid", "bias": False}, (1, 2, 5, 6)),
    ("Conv3d", (2, 4, 2), {"padding": 1, "groups": 2}, (1, 2, 3, 4, 4)),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 3, 9)),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, (2, 4, 4, 9)),
    ("ConvTranspose2d", (2, 3, (2, 3)), {"dilation": 2, "bias": False}, (1, 2, 3, 3)),
]


def _pair(torch, name, args, kwargs):
    tl = getattr(torch.nn, name)(*args, **kwargs).double()
    dl = getattr(nn, name)(*args, **kwargs, rng=0)
    return tl, dl


@pytest.mark.parametrize("name,args,kwargs,shape", PARAM_LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_rest) in enumerate(PARAM_LAYERS)])
def test_layer_loaded_from_torch_gives_torch_outputs_and_gradients(torch, name, args, kwargs, shape):
    tl, dl = _pair(torch, name, args, kwargs)
    sd = tl.state_dict()
    assert list(dl.state_dict()) == list(sd), "state_dict keys"
    for k, v in sd.items():
        assert dl.state_dict()[k].shape == tuple(v.shape), k
    dl.load_state_dict({k: v.detach().numpy() for k, v in sd.items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    dx = dg.tensor(x, requires_grad=True)
    tout, dout = tl(tx), dl(dx)
    np.testing.assert_allclose(dout.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(g))
    dout.backward(dg.tensor(g))
    np.testing.assert_allclose(dx.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12, atol=1e-12)
    tparams = dict(tl.named_parameters())
    for k, p in dl.named_parameters():
        np.testing.assert_allclose(p.grad.detach().numpy(), tparams[k].grad.detach().numpy(), rtol=1e-12, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("name,args,kwargs,shape", PARAM_LAYERS[:1] + PARAM_LAYERS[5:6] + PARAM_LAYERS[12:13],
                         ids=["Conv1d", "Conv2d-groups", "ConvTranspose2d-groups"])
def test_default_initialisation_has_torchs_bounds(torch, name, args, kwargs, shape):
    tl, dl = _pair(torch, name, args, kwargs)
    fan_in = tl.weight.shape[1] * int(np.prod(tl.weight.shape[2:]))
    bound = 1 / np.sqrt(fan_in)
    big = getattr(nn, name)(*args, **kwargs, rng=1)
    for p in (dl.weight, dl.bias, big.weight):
        assert np.abs(p.detach().numpy()).max() <= bound
    # torch's own draw, to the same bound: the two layers use the same law
    assert np.abs(tl.weight.detach().numpy()).max() <= bound
    assert dl.weight.dtype == np.float64


# (class name, constructor args, kwargs, input shape, domain)
FREE_LAYERS = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}, (2, 3, 20)),
    ("MaxPool2d", (3,), {"stride": 1, "padding": 1}, (2, 2, 5, 18)),
    ("MaxPool2d", ((2, 3),), {"stride": 2, "ceil_mode": True, "dilation": (2, 1)}, (1, 2, 7, 9)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}, (2, 3, 10)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (1, 2, 6, 7)),
    ("AvgPool2d", (2,), {"divisor_override": 3}, (1, 2, 6, 18)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, 5),), {}, (2, 3, 7, 9)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", ((3, None),), {}, (2, 3, 7, 9)),
    ("Upsample", (), {"scale_factor": 2}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 17), "mode": "bilinear"}, (1, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bilinear", "align_corners": True}, (1, 2, 3, 4)),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": (1, 2)}, (2, 3, 5, 7)),
    ("Fold", ((4, 5), 2), {}, (2, 8, 12)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", FREE_LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_rest) in enumerate(FREE_LAYERS)])
def test_parameterless_layer_matches_torch(torch, name, args, kwargs, shape):
    tl, dl = getattr(torch.nn, name)(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
    rng = np.random.default_rng(1)
    x = rng.permutation(np.linspace(-2, 2, int(np.prod(shape)))).reshape(shape)  # no ties
    tx, dx = torch.tensor(x, requires_grad=True), dg.tensor(x, requires_grad=True)
    tout, dout = tl(tx), dl(dx)
    np.testing.assert_allclose(dout.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(g))
    dout.backward(dg.tensor(g))
    np.testing.assert_allclose(dx.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_max_pool_and_unpool_layers_with_indices_match_torch(torch):
    x = np.random.default_rng(2).permutation(np.linspace(-2, 2, 2 * 3 * 6 * 20)).reshape(2, 3, 6, 20)
    tx, dx = torch.tensor(x, requires_grad=True), dg.tensor(x, requires_grad=True)
    ty, ti = torch.nn.MaxPool2d(2, return_indices=True)(tx)
    dy, di = nn.MaxPool2d(2, return_indices=True)(dx)
    np.testing.assert_array_equal(di.detach().numpy(), ti.detach().numpy())
    tz, dz = torch.nn.MaxUnpool2d(2)(ty, ti), nn.MaxUnpool2d(2)(dy, di)
    np.testing.assert_array_equal(dz.detach().numpy(), tz.detach().numpy())
    (tz * tz).sum().backward()
    (dz * dz).sum().backward()
    np.testing.assert_allclose(dx.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12, atol=1e-12)
    t1, i1 = torch.nn.MaxPool1d(3, 2, return_indices=True)(tx[:, :, 0])
    d1, j1 = nn.MaxPool1d(3, 2, return_indices=True)(dx[:, :, 0])
    np.testing.assert_array_equal(j1.detach().numpy(), i1.detach().numpy())
    np.testing.assert_array_equal(nn.MaxUnpool1d(3, 2)(d1, j1).detach().numpy(),
                                  torch.nn.MaxUnpool1d(3, 2)(t1, i1).detach().numpy())


def test_a_cnn_with_the_new_layers_loads_torch_weights_and_matches_second_order(torch):
    """Conv1d-free 2-D net using groups, dilation, a transposed conv, adaptive pooling and
    upsampling: outputs, gradients and a gradient penalty's gradient match torch."""
    def build(lib, **kw):
        m = lib.nn
        return m.Sequential(m.Conv2d(2, 4, 3, padding="same", **kw), m.Tanh(), m.MaxPool2d(2, ceil_mode=True),
                            m.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2, **kw), m.Tanh(),
                            m.ConvTranspose2d(4, 2, 2, stride=2, **kw), m.Upsample(scale_factor=2, mode="bilinear"),
                            m.AdaptiveAvgPool2d((3, 4)), m.Flatten())
    tnet = build(torch).double()
    dnet = build(dg, rng=0)
    dnet.load_state_dict({k: v.detach().numpy() for k, v in tnet.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((2, 2, 7, 9))
    tx, dx = torch.tensor(x, requires_grad=True), dg.tensor(x, requires_grad=True)
    (tgx,) = torch.autograd.grad(tnet(tx).pow(2).sum(), tx, create_graph=True)
    (dgx,) = dg.grad(dnet(dx).pow(2).sum() if hasattr(dg.Tensor, "pow") else (dnet(dx) ** 2).sum(), dx,
                     create_graph=True)
    np.testing.assert_allclose(dgx.detach().numpy(), tgx.detach().numpy(), rtol=1e-10, atol=1e-12)
    (tgx * tgx).sum().backward()
    ((dgx * dgx).sum()).backward()
    tparams = dict(tnet.named_parameters())
    for k, p in dnet.named_parameters():
        np.testing.assert_allclose(p.grad.detach().numpy(), tparams[k].grad.detach().numpy(), rtol=1e-9, atol=1e-11, err_msg=k)
