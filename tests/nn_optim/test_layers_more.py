"""The nn module classes added for issue 28 against torch 2.13: each built with the same
arguments in both libraries, torch's weights loaded through ``state_dict`` (the keys must
be torch's), then the outputs, the input gradients and every parameter gradient compared
(float64, to 1e-10). Lazy modules: the inferred shapes and the class they become."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn

pytestmark = pytest.mark.oracle

R = np.random.default_rng(0)


def rnd(*shape, positive=False):
    a = R.standard_normal(shape)
    return np.abs(a) + 0.5 if positive else a


def pm1(*shape):
    return R.integers(0, 2, shape) * 2 - 1


X3, X4, X5 = rnd(2, 4, 6), rnd(2, 4, 6, 5), rnd(2, 4, 4, 5, 3)

# (class name, constructor args, constructor kwargs, inputs: arrays (float ones require grad))
CASES = [
    ("ZeroPad1d", (2,), {}, [X3]), ("ZeroPad2d", ((1, 2, 0, 3),), {}, [X4]),
    ("ZeroPad3d", (1,), {}, [X5]), ("ConstantPad1d", ((1, 2), 3.5), {}, [X3]),
    ("ConstantPad2d", (2, -1.0), {}, [X4]), ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 0.5), {}, [X5]),
    ("ReflectionPad1d", (3,), {}, [X3]), ("ReflectionPad2d", ((1, 2, 3, 0),), {}, [X4]),
    ("ReflectionPad3d", (1,), {}, [X5]), ("ReplicationPad1d", ((4, 1),), {}, [X3]),
    ("ReplicationPad2d", (2,), {}, [X4]), ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),), {}, [X5]),
    ("CircularPad1d", (2,), {}, [X3]), ("CircularPad2d", ((1, 2, 2, 1),), {}, [X4]),
    ("CircularPad3d", (1,), {}, [X5]),
    ("PixelShuffle", (2,), {}, [rnd(2, 8, 3, 2)]), ("PixelUnshuffle", (2,), {}, [rnd(2, 2, 4, 6)]),
    ("ChannelShuffle", (2,), {}, [rnd(2, 4, 3)]),
    ("UpsamplingNearest2d", (), dict(scale_factor=2), [X4]),
    ("UpsamplingBilinear2d", ((7, 9),), {}, [X4]),
    ("Upsample", (), dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=False), [X4]),
    ("Upsample", (), dict(size=(5, 7, 4), mode="trilinear", align_corners=True), [X5]),
    ("Unflatten", (1, (2, 3)), {}, [rnd(4, 6, 2)]),
    ("PairwiseDistance", (), dict(p=1.5), [rnd(5, 3), rnd(5, 3)]),
    ("Threshold", (0.1, -2.0), {}, [X3]), ("Softmax2d", (), {}, [X4]),
    ("Hardshrink", (0.3,), {}, [X3]), ("Softshrink", (), {}, [X3]), ("Tanhshrink", (), {}, [X3]),
    ("MarginRankingLoss", (), dict(margin=0.3), [rnd(6), rnd(6), pm1(6)]),
    ("HingeEmbeddingLoss", (), dict(margin=0.5, reduction="sum"), [rnd(3, 4), pm1(3, 4)]),
    ("SoftMarginLoss", (), {}, [rnd(3, 4), pm1(3, 4).astype(float)]),
    ("MultiLabelSoftMarginLoss", (), {}, [rnd(3, 4), R.integers(0, 2, (3, 4)).astype(float)]),
    ("MultiMarginLoss", (), dict(p=2, margin=0.7), [rnd(5, 4), R.integers(0, 4, 5)]),
    ("MultiLabelMarginLoss", (), {}, [rnd(2, 4), np.array([[3, 0, -1, 1], [1, 2, -1, 0]])]),
    ("CosineEmbeddingLoss", (), dict(margin=0.1), [rnd(5, 3), rnd(5, 3), pm1(5)]),
    ("TripletMarginLoss", (), dict(margin=2.0, swap=True), [rnd(4, 3), rnd(4, 3), rnd(4, 3)]),
    ("TripletMarginWithDistanceLoss", (), dict(margin=2.0), [rnd(4, 3), rnd(4, 3), rnd(4, 3)]),
    ("PoissonNLLLoss", (), dict(full=True), [rnd(3, 4), rnd(3, 4, positive=True)]),
    ("GaussianNLLLoss", (), dict(full=True), [rnd(4, 3), rnd(4, 3), rnd(4, 3, positive=True)]),
    ("InstanceNorm1d", (4,), {}, [X3]), ("InstanceNorm2d", (4,), dict(affine=True), [X4]),
    ("InstanceNorm3d", (4,), dict(affine=True, eps=0.01), [X5]),
    ("RMSNorm", ((6, 5),), {}, [X4]), ("RMSNorm", (5,), dict(eps=0.1), [X4]),
    ("LocalResponseNorm", (3,), dict(alpha=0.1), [X4]), ("CrossMapLRN2d", (3,), dict(alpha=0.1), [X4]),
    ("BatchNorm3d", (4,), {}, [X5]), ("SyncBatchNorm", (4,), {}, [X4]),
    ("LPPool1d", (2, 3), dict(stride=2), [np.abs(X3) + 0.1]), ("LPPool2d", (1.5, 2), {}, [np.abs(X4) + 0.1]),
    ("LPPool3d", (2, 2), {}, [np.abs(X5[:, :, :, :4, :2]) + 0.1]),
    ("AvgPool3d", (2,), dict(stride=1, padding=1), [X5]), ("MaxPool3d", (2,), dict(stride=1), [X5]),
    ("AdaptiveAvgPool3d", ((2, 3, 2),), {}, [X5]), ("AdaptiveMaxPool3d", (2,), {}, [X5]),
    ("Bilinear", (3, 2, 4), {}, [rnd(5, 3), rnd(5, 2)]),
    ("ConvTranspose3d", (4, 2, 2), dict(stride=2), [X5]),
    ("RReLU", (0.1, 0.3), {}, [X3]),
]


def _run(lib, name, args, kw, arrays, module=None):
    m = module if module is not None else getattr(lib.nn, name)(*args, **kw)
    if lib is not dg:
        m = m.double()
    m.eval() if name == "RReLU" else m.train()
    xs = [lib.tensor(a, requires_grad=a.dtype.kind == "f" and i == 0) if lib is dg
          else lib.tensor(a, requires_grad=a.dtype.kind == "f" and i == 0) for i, a in enumerate(arrays)]
    out = m(*xs)
    return m, xs, out


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_module_matches_torch_with_the_same_weights(torch, one_torch_thread, i):
    name, args, kw, arrays = CASES[i]
    tm = getattr(torch.nn, name)(*args, **kw).double()
    m = getattr(nn, name)(*args, **kw)
    assert list(m.state_dict()) == list(tm.state_dict()), "state-dict keys"
    with torch.no_grad():  # (not the defaults: the weights torch made, loaded into ours)
        for p in tm.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    m.load_state_dict(tm.state_dict())
    _, txs, tout = _run(torch, name, args, kw, arrays, tm)
    _, xs, out = _run(dg, name, args, kw, arrays, m)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    ct = R.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(ct))
    out.backward(dg.tensor(ct))
    if txs[0].grad is not None:
        np.testing.assert_allclose(xs[0].grad.numpy(), txs[0].grad.numpy(), rtol=1e-10, atol=1e-12)
    for (k, p), tp in zip(m.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    for k, v in tm.state_dict().items():  # running statistics moved alike
        np.testing.assert_allclose(m.state_dict()[k], v.numpy(), rtol=1e-12, atol=1e-14, err_msg=k)


def test_embedding_bag_module_matches_torch(torch):
    tm = torch.nn.EmbeddingBag(6, 3, mode="sum", padding_idx=2).double()
    m = nn.EmbeddingBag(6, 3, mode="sum", padding_idx=2)
    m.load_state_dict(tm.state_dict())
    idx, off = [1, 2, 4, 5, 0, 2], [0, 2, 2]
    w = R.standard_normal(6)
    out = m(dg.tensor(idx), dg.tensor(off), per_sample_weights=dg.tensor(w))
    tout = tm(torch.tensor(idx), torch.tensor(off), per_sample_weights=torch.tensor(w))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-12)


def test_ctc_loss_module_matches_torch(torch):
    lp = R.standard_normal((6, 2, 4))
    targets, il, tl = np.array([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2]
    x = dg.tensor(lp, requires_grad=True)
    tx = torch.tensor(lp, requires_grad=True)
    out = nn.CTCLoss(blank=0)(x.log_softmax(2), dg.tensor(targets), dg.tensor(il), dg.tensor(tl))
    tout = torch.nn.CTCLoss(blank=0)(tx.log_softmax(2), torch.tensor(targets), torch.tensor(il), torch.tensor(tl))
    assert out.item() == pytest.approx(tout.item(), rel=1e-12)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,real,shape", [
    ("LazyLinear", "Linear", (4, 5)), ("LazyConv1d", "Conv1d", (2, 3, 7)),
    ("LazyConv2d", "Conv2d", (2, 3, 5, 5)), ("LazyConv3d", "Conv3d", (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (2, 3, 7)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (2, 3, 5, 5)),
    ("LazyConvTranspose3d", "ConvTranspose3d", (1, 3, 2, 2, 2)),
    ("LazyBatchNorm1d", "BatchNorm1d", (4, 3)), ("LazyBatchNorm2d", "BatchNorm2d", (2, 3, 4, 4)),
    ("LazyBatchNorm3d", "BatchNorm3d", (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", "InstanceNorm1d", (2, 3, 5)),
    ("LazyInstanceNorm2d", "InstanceNorm2d", (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", "InstanceNorm3d", (2, 3, 2, 2, 2)),
])
def test_lazy_modules_infer_their_shapes_as_torch(torch, name, real, shape):
    args = (2,) if name == "LazyLinear" else (4, 2) if "Conv" in name else ()
    tm, m = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    x = R.standard_normal(shape)
    opt = dg.optim.SGD(list(m.parameters()), lr=0.1) if list(m.parameters()) else None
    tout = tm(torch.tensor(x, dtype=torch.float32))
    out = m(dg.tensor(x))
    assert type(tm).__name__ == real and type(m).__name__ == real
    assert out.shape == tuple(tout.shape)
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in tm.state_dict().items()}, (type(m), sorted(vars(m)))
    if opt is not None:  # an optimizer built before the first call holds the real parameters
        assert [p.shape for p in opt.param_groups[0]["params"]] == [p.shape for p in m.parameters()]
        m.load_state_dict({k: v.double() for k, v in tm.state_dict().items()})
        np.testing.assert_allclose(m(dg.tensor(x)).detach().numpy(),
                                   tm.double()(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_parameter_list_and_dict_as_torch(torch):
    pl, tpl = nn.ParameterList([dg.ones(2), dg.zeros(3)]), torch.nn.ParameterList([torch.ones(2), torch.zeros(3)])
    pl.append(dg.ones(1))
    tpl.append(torch.ones(1))
    assert list(pl.state_dict()) == list(tpl.state_dict())
    assert all(p.requires_grad for p in pl.parameters()) and len(pl) == len(tpl) == 3
    pd = nn.ParameterDict({"a": dg.ones(2), "b": nn.Parameter(dg.zeros(1))})
    tpd = torch.nn.ParameterDict({"a": torch.ones(2), "b": torch.nn.Parameter(torch.zeros(1))})
    assert list(pd.state_dict()) == list(tpd.state_dict()) and pd.a is pd["a"]
    holder, tholder = nn.Module(), torch.nn.Module()
    holder.ps, tholder.ps = pl, tpl
    assert [n for n, _ in holder.named_parameters()] == [n for n, _ in tholder.named_parameters()]


def test_data_parallel_wraps_one_module_as_torch(torch):
    tm = torch.nn.DataParallel(torch.nn.Linear(3, 2).double())
    m = nn.DataParallel(nn.Linear(3, 2))
    assert list(m.state_dict()) == list(tm.state_dict())
    m.load_state_dict(tm.state_dict())
    x = R.standard_normal((4, 3))
    np.testing.assert_allclose(m(dg.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("make", [lambda lib: lib.nn.ReflectionPad1d(5)(lib.ones(1, 1, 3)),
                                  lambda lib: lib.nn.Dropout2d(1.5),
                                  lambda lib: lib.nn.PixelShuffle(2)(lib.ones(1, 3, 2, 2)),
                                  lambda lib: lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 4, 5))])
def test_bad_arguments_raise_as_torch(torch, make):
    with pytest.raises(Exception) as e:
        make(torch)
    with pytest.raises(type(e.value)):
        make(dg)


def test_module_classes_without_weights_match_torch(torch):
    """The dropout modules (eval: the identity; train: torch's mask structure), MaxUnpool3d,
    NLLLoss2d and Container, against torch."""
    x = R.standard_normal((2, 4, 3, 3, 3))
    for name, shape in [("Dropout1d", (2, 4, 3)), ("Dropout2d", (2, 4, 3, 3)), ("Dropout3d", x.shape),
                        ("AlphaDropout", (2, 4)), ("FeatureAlphaDropout", (2, 4, 3))]:
        a = x.reshape(-1)[:int(np.prod(shape))].reshape(shape)
        m, tm = getattr(nn, name)(0.4).eval(), getattr(torch.nn, name)(0.4).eval()
        np.testing.assert_array_equal(m(dg.tensor(a)).numpy(), tm(torch.tensor(a)).numpy())
        assert repr(m) == repr(tm)
        assert m.train()(dg.tensor(a)).shape == tuple(tm.train()(torch.tensor(a)).shape)
    y, i = nn.MaxPool3d(2, return_indices=True)(dg.tensor(x))
    ty, ti = torch.nn.MaxPool3d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(nn.MaxUnpool3d(2)(y, i, output_size=(3, 3, 3)).numpy(),
                                  torch.nn.MaxUnpool3d(2)(ty, ti, output_size=(3, 3, 3)).numpy())
    logp = R.standard_normal((2, 3, 2, 2))
    t = R.integers(0, 3, (2, 2, 2))
    assert nn.NLLLoss2d()(dg.tensor(logp), dg.tensor(t)).item() == pytest.approx(
        torch.nn.NLLLoss2d()(torch.tensor(logp), torch.tensor(t)).item(), rel=1e-14)
    c = nn.Container(a=nn.Linear(2, 3, rng=0), b=nn.ReLU())
    tc = torch.nn.Container(a=torch.nn.Linear(2, 3), b=torch.nn.ReLU())
    assert list(c.state_dict()) == list(tc.state_dict())


def test_fractional_max_pool_and_linear_cross_entropy_modules_match_torch(torch):
    x = np.random.default_rng(2).permutation(np.linspace(-2, 2, 2 * 3 * 8 * 8)).reshape(2, 3, 8, 8)
    u = R.random((2, 3, 2))
    m = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5), return_indices=True, _random_samples=dg.tensor(u))
    tm = torch.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5), return_indices=True,
                                      _random_samples=torch.tensor(u))
    (y, i), (ty, ti) = m(dg.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    x3 = R.standard_normal((1, 2, 4, 4, 4))
    u3 = R.random((1, 2, 3))
    np.testing.assert_array_equal(
        nn.FractionalMaxPool3d(2, output_size=2, _random_samples=dg.tensor(u3))(dg.tensor(x3)).numpy(),
        torch.nn.FractionalMaxPool3d(2, output_size=2, _random_samples=torch.tensor(u3))(torch.tensor(x3)).numpy())
    for lib in (torch, dg):
        with pytest.raises(ValueError):
            lib.nn.FractionalMaxPool2d(2)
        with pytest.raises(ValueError):
            lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    tl = torch.nn.LinearCrossEntropyLoss(4, 3, bias=True, label_smoothing=0.1).double()
    ml = nn.LinearCrossEntropyLoss(4, 3, bias=True, label_smoothing=0.1)
    ml.load_state_dict(tl.state_dict())
    xx, t = R.standard_normal((6, 4)), R.integers(0, 3, 6)
    xd, xt = dg.tensor(xx, requires_grad=True), torch.tensor(xx, requires_grad=True)
    a, b = ml(xd, dg.tensor(t)), tl(xt, torch.tensor(t))
    assert a.item() == pytest.approx(b.item(), rel=1e-12)
    a.backward()
    b.backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ml.linear.weight.grad.numpy(), tl.linear.weight.grad.numpy(), rtol=1e-10)
    assert nn.LinearCrossEntropyOptions(acc_policy="compact").acc_policy == \
        torch.nn.LinearCrossEntropyOptions(acc_policy="compact").acc_policy


def test_adaptive_log_softmax_matches_torch(torch):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 7], div_value=2.0, head_bias=True).double()
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 7], div_value=2.0, head_bias=True)
    assert list(m.state_dict()) == list(tm.state_dict())
    m.load_state_dict(tm.state_dict())
    x, t = R.standard_normal((6, 8)), np.array([0, 4, 9, 2, 7, 5])
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = m(xd, dg.tensor(t)), tm(xt, torch.tensor(t))
    np.testing.assert_allclose(out.output.detach().numpy(), tout.output.detach().numpy(), rtol=1e-12)
    out.loss.backward()
    tout.loss.backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
    for (k, p), tp in zip(m.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=k)
    np.testing.assert_allclose(m.log_prob(dg.tensor(x)).detach().numpy(), tm.log_prob(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)
    np.testing.assert_array_equal(m.predict(dg.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy())
    for lib in (torch, dg):
        with pytest.raises(ValueError):
            lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[7, 3])
