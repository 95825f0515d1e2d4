"""duograd.nn and duograd.optim: modules, state, losses, optimizer bookkeeping.

Every expected value is computed here with NumPy (or is a closed form), never read
back from the library under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from duograd.nn import functional as F
from duograd.optim import lr_scheduler


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def snapshot(model: nn.Module) -> dict[str, bytes]:
    return {k: v.tobytes() for k, v in model.state_dict().items()}


# ---------------------------------------------------------------- imports


def test_import_paths():
    import duograd.nn
    import duograd.optim
    from duograd.optim import lr_scheduler as ls

    assert duograd.nn.Linear is nn.Linear and duograd.optim.Adam is optim.Adam
    assert ls.StepLR is lr_scheduler.StepLR


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize("nin, nouts, expected", [
    (2, [64, 64, 2], 4482),
    (64, [64, 32, 10], 6570),
    (2, [16, 16, 1], 337),
])
def test_mlp_parameter_counts(nin, nouts, expected):
    assert n_params(nn.MLP(nin, nouts, rng=0)) == expected
    # the same count from the layer sizes, independently
    sizes = [nin] + nouts
    assert expected == sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def test_linear_without_bias():
    layer = nn.Linear(3, 4, bias=False, rng=0)
    assert layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    assert n_params(layer) == 12
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(layer(dg.tensor(x)).detach().numpy(), x @ layer.weight._data.T)


def test_state_dict_names_and_order():
    net = nn.MLP(2, [3, 4, 1], rng=0)
    sd = net.state_dict()
    assert list(sd) == ["layers.0.weight", "layers.0.bias", "layers.1.weight",
                        "layers.1.bias", "layers.2.weight", "layers.2.bias"]
    assert [v.shape for v in sd.values()] == [(3, 2), (3,), (4, 3), (4,), (1, 4), (1,)]  # torch's (out, in)
    # parameters() lists the same tensors in the same order
    assert [id(p) for p in net.parameters()] == [id(p) for _, p in net.named_parameters()]
    assert next(net.parameters()) is net.layers[0].weight


def test_sequential_names_follow_pytorch():
    net = nn.Sequential(nn.Linear(2, 4, rng=0), nn.ReLU(), nn.Linear(4, 1, rng=1))
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(net) == 3 and net[2].out_features == 1 and net[2].in_features == 4
    with pytest.raises(TypeError, match="Sequential"):
        nn.Sequential(nn.ReLU(), "relu")


def test_attribute_order_nesting_and_sharing():
    class Net(nn.Module):
        def __init__(self):
            self.head = nn.Linear(3, 2, rng=0)
            self.scale = dg.tensor(1.0, requires_grad=True)
            self.blocks = [nn.Linear(2, 2, rng=1), nn.Sequential(nn.Linear(2, 2, rng=2))]
            self.tied = self.head.weight          # shared: listed once, first name wins
            self._cache = dg.tensor(0.0)          # private: never a parameter

        def forward(self, x):
            return x

    names = [n for n, _ in Net().named_parameters()]
    assert names == ["head.weight", "head.bias", "scale", "blocks.0.weight", "blocks.0.bias",
                     "blocks.1.0.weight", "blocks.1.0.bias"]


def test_state_dict_holds_copies():
    layer = nn.Linear(2, 2, rng=0)
    sd = layer.state_dict()
    before = layer.weight._data.copy()
    sd["weight"][:] = 123.0
    np.testing.assert_array_equal(layer.weight._data, before)
    layer.weight.data = np.zeros((2, 2))
    np.testing.assert_array_equal(sd["weight"], np.full((2, 2), 123.0))


def test_zero_grad_sets_none():
    net = nn.MLP(3, [4, 2], rng=0)
    F.cross_entropy(net(dg.ones((5, 3))), [0, 1, 0, 1, 1]).backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    F.cross_entropy(net(dg.ones((5, 3))), [0, 1, 0, 1, 1]).backward()
    opt = optim.SGD(net.parameters(), lr=0.1)
    opt.zero_grad()
    assert all(p.grad is None for p in net.parameters())


# ---------------------------------------------------------------- initialisation


def test_linear_init_matches_pytorch_rule_and_draw_order():
    layer = nn.Linear(5, 3, rng=7)
    gen = np.random.default_rng(7)
    k = 1 / np.sqrt(5)
    np.testing.assert_array_equal(layer.weight._data, gen.uniform(-k, k, (3, 5)))  # (out, in)
    np.testing.assert_array_equal(layer.bias._data, gen.uniform(-k, k, 3))


def test_linear_init_bounds_and_spread():
    layer = nn.Linear(100, 400, rng=0)
    k = 0.1
    w = layer.weight._data
    assert np.all(np.abs(w) <= k) and np.all(np.abs(layer.bias._data) <= k)
    # uniform on [-k, k]: variance k^2 / 3 (40,000 draws: 2% is > 5 standard errors)
    assert abs(w.var() / (k * k / 3) - 1) < 0.02 and abs(w.mean()) < 0.005


def test_init_reproducible_from_int_and_generator():
    a, b = nn.MLP(4, [8, 3], rng=11), nn.MLP(4, [8, 3], rng=11)
    c = nn.MLP(4, [8, 3], rng=np.random.default_rng(11))
    assert snapshot(a) == snapshot(b) == snapshot(c)
    assert snapshot(a) != snapshot(nn.MLP(4, [8, 3], rng=12))


def test_mlp_layers_draw_in_order_from_one_rng():
    gen = np.random.default_rng(3)
    expected = [nn.Linear(4, 8, rng=gen), nn.Linear(8, 3, rng=gen)]
    net = nn.MLP(4, [8, 3], rng=3)
    for mine, ref in zip(net.layers, expected):
        np.testing.assert_array_equal(mine.weight._data, ref.weight._data)
        np.testing.assert_array_equal(mine.bias._data, ref.bias._data)


# ---------------------------------------------------------------- forward


@pytest.mark.parametrize("activation, fn", [("relu", lambda h: np.maximum(h, 0)), ("tanh", np.tanh)])
def test_mlp_forward_matches_numpy(activation, fn):
    net = nn.MLP(3, [5, 4, 2], activation=activation, rng=0)
    x = np.random.default_rng(1).standard_normal((6, 3))
    h = x
    for i, layer in enumerate(net.layers):
        h = h @ layer.weight._data.T + layer.bias._data
        if i < 2:
            h = fn(h)
    np.testing.assert_allclose(net(dg.tensor(x)).detach().numpy(), h, rtol=0, atol=1e-15)


def test_linear_shapes_1d_and_batched():
    layer = nn.Linear(3, 2, rng=0)
    W, b = layer.weight._data, layer.bias._data
    x1 = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(layer(x1).detach().numpy(), x1 @ W.T + b, atol=1e-15)
    x3 = np.random.default_rng(0).standard_normal((2, 4, 3))
    np.testing.assert_allclose(layer(dg.tensor(x3)).detach().numpy(), x3 @ W.T + b, atol=1e-15)


def test_activation_modules():
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(nn.ReLU()(dg.tensor(x)).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Tanh()(dg.tensor(x)).numpy(), np.tanh(x), atol=1e-16)


def test_linear_error_message():
    with pytest.raises(ValueError) as e:  # a ShapeError: torch's RuntimeError too
        nn.Linear(3, 2, rng=0)(dg.ones((5, 4)))
    assert isinstance(e.value, RuntimeError)
    assert str(e.value) == ("Linear: expected input with last dimension 3, got shape (5, 4) "
                            "(weight of shape (2, 3))")


@pytest.mark.parametrize("make", [
    lambda: nn.Linear(-1, 2), lambda: nn.Linear(2, -1), lambda: nn.Linear(2.5, 1),
    lambda: nn.MLP(2, []), lambda: nn.MLP(2, [3], activation="sigmoid"),
])
def test_bad_constructor_arguments(make):
    with pytest.raises(ValueError):
        make()


def test_module_without_forward():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1.0)


def test_layer_gradients_by_finite_differences():
    x = dg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    layer = nn.Linear(3, 5, rng=0)
    t = [0, 4, 2, 2]

    def f(W, b):
        return F.cross_entropy((x @ W.T + b).tanh(), t)

    assert dg.gradcheck(f, (dg.tensor(layer.weight._data, requires_grad=True),
                            dg.tensor(layer.bias._data, requires_grad=True)))


# ---------------------------------------------------------------- save / load


def test_save_load_round_trip_bit_for_bit(tmp_path):
    a, b = nn.MLP(2, [64, 64, 2], rng=0), nn.MLP(2, [64, 64, 2], rng=1)
    path = a.save(tmp_path / "model.npz")
    b.load(path)
    assert snapshot(a) == snapshot(b)
    x = dg.tensor(np.random.default_rng(2).standard_normal((10, 2)))
    assert a(x).detach().numpy().tobytes() == b(x).detach().numpy().tobytes()


def test_save_adds_suffix(tmp_path):
    path = nn.Linear(2, 2, rng=0).save(tmp_path / "weights")
    assert path.endswith("weights.npz") and (tmp_path / "weights.npz").exists()


def test_load_state_dict_accepts_a_model_of_other_values():
    a, b = nn.Linear(3, 2, rng=0), nn.Linear(3, 2, rng=5)
    b.load_state_dict(a.state_dict())
    assert snapshot(a) == snapshot(b)


def _assert_rejected(model, sd, *fragments):
    before = snapshot(model)
    with pytest.raises(ValueError) as e:
        model.load_state_dict(sd)
    for frag in fragments:
        assert frag in str(e.value)
    assert snapshot(model) == before


def test_load_shape_mismatch_names_parameter_and_shapes():
    model = nn.MLP(2, [3, 1], rng=0)
    sd = nn.MLP(2, [3, 1], rng=1).state_dict()
    sd["layers.1.weight"] = np.zeros((4, 1))
    # every other entry is valid, yet none may be loaded
    _assert_rejected(model, sd, "layers.1.weight", "(1, 3)", "(4, 1)")


def test_load_missing_key():
    model = nn.MLP(2, [3, 1], rng=0)
    sd = nn.MLP(2, [3, 1], rng=1).state_dict()
    del sd["layers.0.bias"]
    _assert_rejected(model, sd, "missing", "layers.0.bias", "(3,)")


def test_load_unexpected_key():
    model = nn.MLP(2, [3, 1], rng=0)
    sd = nn.MLP(2, [3, 1], rng=1).state_dict()
    sd["layers.2.weight"] = np.zeros((1, 1))
    _assert_rejected(model, sd, "unexpected", "layers.2.weight")


def test_load_file_of_another_architecture(tmp_path):
    path = nn.MLP(2, [4, 1], rng=1).save(tmp_path / "other.npz")
    model = nn.MLP(2, [3, 1], rng=0)
    before = snapshot(model)
    with pytest.raises(ValueError, match="layers.0.weight"):
        model.load(path)
    assert snapshot(model) == before


# ---------------------------------------------------------------- losses against closed forms


def test_mse_value_and_gradients():
    rng = np.random.default_rng(0)
    p, t = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    pred, target = dg.tensor(p, requires_grad=True), dg.tensor(t, requires_grad=True)
    loss = F.mse_loss(pred, target)
    loss.backward()
    np.testing.assert_allclose(loss.item(), np.mean((p - t) ** 2), rtol=1e-15)
    np.testing.assert_allclose(pred.grad.numpy(), 2 * (p - t) / p.size, atol=1e-16)  # p: an array
    np.testing.assert_allclose(target.grad.numpy(), -2 * (p - t) / p.size, atol=1e-16)


def test_mse_sum_reduction():
    p, t = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.0, 1.0])
    pred = dg.tensor(p, requires_grad=True)
    loss = F.mse_loss(pred, t, reduction="sum")
    loss.backward()
    assert loss.item() == pytest.approx(np.sum((p - t) ** 2), rel=1e-15)
    np.testing.assert_allclose(pred.grad.numpy(), 2 * (p - t), atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_hinge_value_and_gradient(reduction):
    s = np.array([2.0, 0.5, -1.0, -0.3, 1.5, 0.2])
    y = np.array([1, 1, 1, -1, -1, -1])
    scores = dg.tensor(s, requires_grad=True)
    loss = F.hinge_loss(scores, y, reduction=reduction)
    loss.backward()
    margins = np.maximum(0, 1 - y * s)
    active = (1 - y * s) > 0   # no score sits on the kink
    div = len(s) if reduction == "mean" else 1
    assert loss.item() == pytest.approx(margins.sum() / div, rel=1e-15)
    np.testing.assert_allclose(scores.grad.numpy(), -y * active / div, atol=1e-16)


def test_hinge_accepts_column_of_scores():
    s = np.array([[0.5], [-2.0], [0.1]])
    y = np.array([1.0, -1.0, -1.0])
    scores = dg.tensor(s, requires_grad=True)
    F.hinge_loss(scores, y).backward()
    assert scores.grad.shape == (3, 1)
    np.testing.assert_allclose(scores.grad.numpy()[:, 0], [-1 / 3, 0.0, 1 / 3], atol=1e-16)


def test_cross_entropy_target_forms_agree():
    z = np.random.default_rng(0).standard_normal((4, 3))
    t = [2, 0, 1, 2]
    ref = -np.mean(np.log(np.exp(z) / np.exp(z).sum(1, keepdims=True))[np.arange(4), t])
    for targets in (t, np.array(t), np.array(t, dtype=np.int32), dg.tensor(np.array(t, float))):
        assert F.cross_entropy(dg.tensor(z), targets).item() == pytest.approx(ref, rel=1e-14)


# ---------------------------------------------------------------- bad inputs


LOGITS = dg.tensor(np.zeros((4, 3)), requires_grad=True)


@pytest.mark.parametrize("logits, targets, fragment", [
    (LOGITS, [0, 1, 2, 3], "out of range"),
    (LOGITS, [0, -1, 2, 0], "out of range"),
    (LOGITS, [0.5, 1, 2, 0], "non-integer"),
    (LOGITS, np.array([0, 1, 2]), "shape (4,)"),
    (LOGITS, np.zeros((4, 1), dtype=int), "(4, 1)"),
    (LOGITS, np.array([True, False, True, True]), "dtype bool"),
    (LOGITS, dg.tensor([0.0, 1.0, np.nan, 2.0]), "non-integer"),
    (dg.tensor(np.zeros(3)), [0], "(N, C)"),
    (dg.tensor(np.zeros((2, 3, 4))), [0, 1], "(2, 3, 4)"),
])
def test_cross_entropy_bad_targets(logits, targets, fragment):
    with pytest.raises(ValueError) as e:
        F.cross_entropy(logits, targets)
    assert "cross_entropy" in str(e.value) and fragment in str(e.value)


@pytest.mark.parametrize("call", [
    lambda: F.cross_entropy(LOGITS, [0, 1, 2, 0], reduction="avg"),  # "none" is torch's, valid
    lambda: F.mse_loss(dg.ones(3), np.ones(3), reduction="avg"),
    lambda: F.hinge_loss(dg.ones(3), [1, 1, 1], reduction=None),
])
def test_bad_reduction(call):
    with pytest.raises(ValueError, match="reduction"):
        call()


def test_mse_shape_mismatch():
    with pytest.raises(ValueError, match=r"mse_loss.*\(4, 1\).*\(4,\)"):
        F.mse_loss(dg.ones((4, 1)), np.ones(4))


@pytest.mark.parametrize("labels, fragment", [
    ([1, 0, -1], "+1 or -1"), ([1, 2, -1], "+1 or -1"), ([1, -1], "shape"),
])
def test_hinge_bad_labels(labels, fragment):
    with pytest.raises(ValueError) as e:
        F.hinge_loss(dg.ones(3), labels)
    assert "hinge_loss" in str(e.value) and fragment in str(e.value)


# ---------------------------------------------------------------- optimizers


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: optim.Adam(ps, lr=0.1),
])
def test_optimizer_skips_parameter_without_grad(make):
    used = dg.tensor([1.0, 2.0], requires_grad=True)
    unused = dg.tensor([3.0, 4.0], requires_grad=True)
    opt = make([used, unused])
    (used * used).sum().backward()
    opt.step()
    np.testing.assert_array_equal(unused._data, [3.0, 4.0])
    assert not np.array_equal(used._data, [1.0, 2.0])
    # the skipped parameter's first real step is a first step (no state was built for it)
    opt.zero_grad()
    (unused * 1.0).sum().backward()   # gradient of ones
    opt.step()
    expected = 3.0 - 0.1 * 1.0 / (1.0 + 1e-8) if isinstance(opt, optim.Adam) else 3.0 - 0.1
    assert unused._data[0] == pytest.approx(expected, rel=1e-15)


def test_sgd_single_steps_closed_form():
    p0, g = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    w = dg.tensor(p0, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, weight_decay=0.01)
    w.grad = dg.tensor(g)
    opt.step()
    np.testing.assert_allclose(w._data, p0 - 0.1 * (g + 0.01 * p0), rtol=1e-15)
    opt.lr = 0.5                          # read afresh by the next step
    p1 = w._data.copy()
    opt.step()
    np.testing.assert_allclose(w._data, p1 - 0.5 * (g + 0.01 * p1), rtol=1e-15)


def test_adam_first_step_closed_form():
    g = np.array([0.3, -4.0, 1e-3])
    w = dg.tensor(np.zeros(3), requires_grad=True)
    opt = optim.Adam([w], lr=0.01)
    w.grad = dg.tensor(g)
    opt.step()
    # m = (1-b1) g, v = (1-b2) g^2: the bias corrections leave lr * g / (|g| + eps)
    np.testing.assert_allclose(w._data, -0.01 * g / (np.abs(g) + 1e-8), rtol=1e-14)


OPTIMIZERS = (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
              lambda ps: optim.Adam(ps, lr=0.1, weight_decay=0.1),
              lambda ps: optim.AdamW(ps, lr=0.1),
              lambda ps: optim.RMSprop(ps, lr=0.1, momentum=0.5))


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_optimizers_step_parameters_in_place_and_never_touch_gradients(make):
    """As torch.optim: the parameter's own array is updated (so a dg.from_numpy parameter
    shows the step in the array it shares); the gradient is left as it was."""
    array = np.array([1.0, 2.0])
    w = dg.from_numpy(array, requires_grad=True)
    twin = dg.tensor([1.0, 2.0], requires_grad=True)  # the same step on an owned copy
    opt, opt_twin = make([w]), make([twin])
    for _ in range(3):
        g = dg.tensor([0.5, -0.5])
        g_copy = g._data.copy()
        w.grad, twin.grad = g, dg.tensor([0.5, -0.5])
        opt.step()
        opt_twin.step()
        np.testing.assert_array_equal(g._data, g_copy)
        assert w._data is array
        np.testing.assert_array_equal(array, twin._data)
    assert not np.allclose(array, [1.0, 2.0])


@pytest.mark.parametrize("make, error", [
    (lambda w: optim.SGD([w], lr=-0.1), ValueError),
    (lambda w: optim.SGD([w], lr=0.1, momentum=-0.5), ValueError),
    (lambda w: optim.SGD([w], lr=0.1, nesterov=True), ValueError),
    (lambda w: optim.SGD([w], lr=0.1, weight_decay=-1.0), ValueError),
    (lambda w: optim.Adam([w], lr=-1e-3), ValueError),
    (lambda w: optim.Adam([w], betas=(1.0, 0.999)), ValueError),
    (lambda w: optim.Adam([w], betas=(0.9, -0.1)), ValueError),
    (lambda w: optim.Adam([w], eps=-1e-8), ValueError),
    (lambda w: optim.SGD([], lr=0.1), ValueError),
    (lambda w: optim.SGD([w, w], lr=0.1), ValueError),
    (lambda w: optim.SGD(w, lr=0.1), TypeError),
    (lambda w: optim.Adam([w, np.zeros(2)]), TypeError),
])
def test_optimizer_argument_validation(make, error):
    with pytest.raises(error):
        make(dg.tensor([1.0], requires_grad=True))


def test_setting_a_negative_lr_is_refused():
    opt = optim.SGD([dg.tensor([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        opt.lr = -1.0
    assert opt.lr == 0.1


# ---------------------------------------------------------------- schedules (closed forms)


def _lrs(make, n=6, lr=1.0):
    opt = optim.SGD([dg.tensor([0.0], requires_grad=True)], lr=lr)
    sched = make(opt)
    out = [opt.lr]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(opt.lr)
        assert sched.get_last_lr() == [opt.lr]
    return out


def test_schedules_closed_forms():
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.StepLR(o, 2, gamma=0.5)),
                               [1, 1, 0.5, 0.5, 0.25, 0.25, 0.125], rtol=1e-15)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.9)),
                               0.9 ** np.arange(7), rtol=1e-15)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, 4, eta_min=0.1)),
                               0.1 + 0.9 * (1 + np.cos(np.pi * np.arange(7) / 4)) / 2, atol=1e-15)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.LinearLR(o, 0.5, 1.0, 4)),
                               [0.5, 0.625, 0.75, 0.875, 1, 1, 1], rtol=1e-15)


@pytest.mark.parametrize("make", [
    lambda o: lr_scheduler.StepLR(o, 0), lambda o: lr_scheduler.ExponentialLR(o, -0.1),
    lambda o: lr_scheduler.CosineAnnealingLR(o, 0), lambda o: lr_scheduler.LinearLR(o, 0.0),
    lambda o: lr_scheduler.LinearLR(o, 0.5, 1.5), lambda o: lr_scheduler.StepLR("opt", 2),
])
def test_schedule_argument_validation(make):
    opt = optim.SGD([dg.tensor([0.0], requires_grad=True)], lr=1.0)
    with pytest.raises((ValueError, TypeError)):
        make(opt)


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1)], ids=["SGD", "Adam"])
def test_step_with_a_gradient_of_the_wrong_shape_changes_nothing(make):
    a = dg.tensor([1.0, 2.0], requires_grad=True)
    b = dg.tensor([[3.0, 4.0]], requires_grad=True)
    opt = make([a, b])
    a.grad, b.grad = dg.tensor([0.5, 0.5]), dg.tensor([1.0, 1.0])  # b's should be (1, 2)
    before = [a._data.copy(), b._data.copy()]
    with pytest.raises(ValueError, match=r"parameter 1 has shape \(1, 2\) but its \.grad has shape \(2,\)"):
        opt.step()
    np.testing.assert_array_equal(a._data, before[0])
    np.testing.assert_array_equal(b._data, before[1])
    b.grad = dg.tensor([[1.0, 1.0]])
    opt.step()  # the optimizer state was not advanced by the failed call
    fresh = make([dg.tensor(before[0], requires_grad=True), dg.tensor(before[1], requires_grad=True)])
    for p, g in zip(fresh.params, (a.grad, b.grad)):
        p.grad = g
    fresh.step()
    np.testing.assert_array_equal(a._data, fresh.params[0].data)
    np.testing.assert_array_equal(b._data, fresh.params[1].data)


# ---------------------------------------------------------------- issue 13: train/eval, Dropout, losses, nn.utils
# (the PyTorch comparisons of the same modules are in test_nn_oracle.py)


def test_mlp_submodules_follow_train_and_eval():
    net = nn.MLP(2, [4, 4, 2], rng=0)
    assert net.training and all(layer.training for layer in net.layers)
    net.eval()
    assert not net.training and not any(layer.training for layer in net.layers)
    assert [n for n, _ in net.named_modules()] == ["", "layers.0", "layers.1", "layers.2"]


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_keeps_1_minus_p_within_4_sigma_and_scales_by_1_over_1_minus_p(p):
    n = 100_000
    out = nn.Dropout(p, rng=0)(dg.ones(n)).numpy()
    kept = out != 0
    # binomial(n, 1 - p): mean n(1-p), standard deviation sqrt(n p (1-p))
    assert abs(kept.sum() - n * (1 - p)) <= 4 * math.sqrt(n * p * (1 - p))
    np.testing.assert_array_equal(out[kept], np.full(kept.sum(), 1.0 / (1.0 - p)))


def test_dropout_gradient_flows_only_through_kept_units():
    p = 0.4
    x = dg.tensor(np.random.default_rng(2).standard_normal((50, 40)), requires_grad=True)
    out = nn.Dropout(p, rng=3)(x)
    w = np.random.default_rng(4).standard_normal(x.shape)
    (out * w).sum().backward()
    kept = out.detach().numpy() != 0
    assert 0 < kept.mean() < 1
    # d(sum(w * mask * x))/dx = w * mask: zero where dropped, w / (1 - p) where kept
    np.testing.assert_array_equal(x.grad.numpy()[~kept], 0.0)
    np.testing.assert_allclose(x.grad.numpy()[kept], w[kept] / (1 - p), rtol=1e-15)
    np.testing.assert_allclose(out.detach().numpy()[kept], x.detach().numpy()[kept] / (1 - p), rtol=1e-15)


def test_dropout_edges_and_reproducibility():
    x = dg.tensor(np.arange(1.0, 7.0))
    assert (nn.Dropout(0.0, rng=0)(x).numpy() == x.numpy()).all()
    assert (nn.Dropout(1.0, rng=0)(x).numpy() == 0).all()
    a, b = nn.Dropout(0.5, rng=7), nn.Dropout(0.5, rng=7)
    np.testing.assert_array_equal(a(dg.ones(100)).numpy(), b(dg.ones(100)).numpy())
    assert nn.Dropout(0.5, rng=0)(dg.ones(3, dtype=np.float32)).dtype == np.float32
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="Dropout"):
            nn.Dropout(bad)
    assert list(nn.Dropout(0.5).parameters()) == []


def test_loss_modules_reject_unknown_reduction():
    for cls in (nn.MSELoss, nn.CrossEntropyLoss):
        with pytest.raises(ValueError, match=cls.__name__):
            cls(reduction="avg")  # "none" is valid, as in torch


def test_nn_utils_import_paths_and_examples():
    import importlib
    import inspect

    import duograd.nn.utils as by_path
    from duograd.nn import utils as by_from

    assert by_path is by_from is nn.utils is importlib.import_module("duograd.nn.utils")
    for name in by_path.__all__:
        obj = getattr(by_path, name)
        if inspect.isfunction(obj):
            assert ">>>" in (obj.__doc__ or ""), name



@pytest.mark.parametrize("targets", [np.array([0, 1, 2, 3]), np.array([0.0, 1.0, 2.0, 3.0]),
                                     np.array([0, 1, 2, 3], dtype=np.uint8), [0, 1, 2, 3]])
def test_cross_entropy_out_of_range_message_shows_a_plain_int(targets):
    with pytest.raises(ValueError) as e:
        F.cross_entropy(dg.tensor(np.zeros((4, 3))), targets)
    assert "target 3 is out of range" in str(e.value) and "np." not in str(e.value)


def test_load_torch_state_dict_loads_square_linear_weights_as_they_are():
    """Without torch: arrays in PyTorch's layout, (out, in), which is duograd's, checked
    against x @ W.T + b."""
    rng = np.random.default_rng(0)
    w0, b0, w1, b1 = rng.standard_normal((3, 3)), rng.standard_normal(3), \
        rng.standard_normal((2, 3)), rng.standard_normal(2)
    net = nn.Sequential(nn.Linear(3, 3, rng=0), nn.Tanh(), nn.Linear(3, 2, rng=0))
    nn.utils.load_torch_state_dict(net, {"0.weight": w0, "0.bias": b0, "2.weight": w1,
                                         "2.bias": b1})
    x = rng.standard_normal((5, 3))
    expected = np.tanh(x @ w0.T + b0) @ w1.T + b1
    np.testing.assert_allclose(net(dg.tensor(x)).detach().numpy(), expected, rtol=1e-14, atol=1e-15)
    back = nn.utils.torch_state_dict(net, numpy=True)
    for name, value in zip(back, (w0, b0, w1, b1)):
        np.testing.assert_array_equal(back[name], value)
        assert back[name].flags.c_contiguous


def test_clip_grad_norm_closed_form():
    a, b = dg.tensor(np.zeros(2), requires_grad=True), dg.tensor(np.zeros((1, 2)), requires_grad=True)
    a.grad, b.grad = dg.tensor([1.0, 2.0]), dg.tensor([[2.0, 4.0]])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=2.5)
    assert total == 5.0
    factor = 2.5 / (5.0 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), [factor, 2 * factor], rtol=1e-15)
    np.testing.assert_allclose(b.grad.numpy(), [[2 * factor, 4 * factor]], rtol=1e-15)
    assert nn.utils.clip_grad_norm_([a, b], max_norm=100.0) == pytest.approx(2.5, rel=1e-6)
    assert nn.utils.clip_grad_norm_([a], 1.0, norm_type=float("inf")) == pytest.approx(2 * factor)
    with pytest.raises(TypeError, match="clip_grad_norm_"):
        nn.utils.clip_grad_norm_([a, np.zeros(2)], 1.0)
    a.grad = dg.tensor([np.inf, 0.0])
    with pytest.raises(RuntimeError, match="clip_grad_norm_"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
