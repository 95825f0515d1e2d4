"""Rows for the ``torch.nn.functional`` names added for issue 28 (branch nnoptim): linear
maps, shrinks and thresholds, the in-place activations, shuffles, distances, the
margin/triplet/Poisson/Gaussian/CTC losses, instance/RMS/local-response normalisation, the
3-D and Lp pools, the ``*_with_indices`` forms, embedding bags, upsampling, affine grids and
grid sampling. Random functions (dropouts, rrelu in training, gumbel_softmax) are checked
by tests/nn_optim/test_nnfunc.py; here only their deterministic forms."""

from __future__ import annotations

import numpy as np

from opinfo import F, I, S, row


def f(name):
    return lambda m, *a, **kw: getattr(m.nn.functional, name)(*a, **kw)


def pm1(m, t):
    """An int64 sample in {0, 1} as a ±1 target (a tensor of the row's library)."""
    return t * 2 - 1


# ---------------------------------------------------------------- linear maps and activations

row("F.linear", f("linear"), [S(F(4, 3), F(2, 3)), S(F(4, 3), F(2, 3), F(2)), S(F(3), F(2, 3), F(2)),
                              S(F(2, 5, 3), F(4, 3), bias=F(4)), S(F(3), F(3), label="1-D weight")],
    errors=[S(F(4, 3), F(2, 4)), S(F(4, 3), F(2, 3, 1))])
row("F.bilinear", f("bilinear"), [S(F(4, 3), F(4, 2), F(5, 3, 2)), S(F(4, 3), F(4, 2), F(5, 3, 2), F(5)),
                                  S(F(2, 4, 3), F(2, 4, 2), F(1, 3, 2), label="leading dims")],
    errors=[S(F(4, 3), F(4, 2), F(5, 2, 2))])
row("F.sigmoid", f("sigmoid"), [F(3, 4), F()])
row("F.tanh", f("tanh"), [F(3, 4), F()])
row("F.threshold", f("threshold"), [S(F(3, 4), 0.1, 20.0), S(F(5), -0.5, -3.0)])
row("F.hardshrink", f("hardshrink"), [S(F(3, 4)), S(F(6), 1.0), S(F(0))])
row("F.softshrink", f("softshrink"), [S(F(3, 4)), S(F(6), 1.0), S(F())],
    errors=[S(F(3), -1.0)])
row("F.tanhshrink", f("tanhshrink"), [F(3, 4), F()])
row("F.rrelu", f("rrelu"), [S(F(3, 4)), S(F(5), 0.1, 0.4)], note="training=False: deterministic")


def _inplace(name, *args):
    def fn(m, x, *a, **kw):
        y = x * 1.0  # (a non-leaf: in place on a leaf that requires grad raises, in both)
        out = getattr(m.nn.functional, name)(y, *a, **kw)
        assert out is y
        return y
    return fn


for _name, _samples in [("relu_", [S(F(3, 4))]), ("elu_", [S(F(3, 4)), S(F(3), 0.5)]),
                        ("selu_", [S(F(3, 4))]), ("celu_", [S(F(3, 4)), S(F(4), 2.0)]),
                        ("leaky_relu_", [S(F(3, 4)), S(F(4), 0.2)]),
                        ("hardtanh_", [S(F(3, 4)), S(F(4), -0.5, 0.5)]),
                        ("threshold_", [S(F(3, 4), 0.1, 2.0)]),
                        ("rrelu_", [S(F(3, 4))])]:
    row(f"F.{_name}", _inplace(_name), _samples)

# ---------------------------------------------------------------- shuffles

row("F.pixel_shuffle", f("pixel_shuffle"), [S(F(2, 8, 3, 2), 2), S(F(9, 2, 2), 3), S(F(2, 1, 4, 1, 2), 1)],
    errors=[S(F(2, 6, 3, 2), 2), S(F(4, 4), 2)])
row("F.pixel_unshuffle", f("pixel_unshuffle"), [S(F(2, 2, 4, 6), 2), S(F(1, 6, 3), 3)],
    errors=[S(F(2, 2, 3, 4), 2)])
row("F.channel_shuffle", f("channel_shuffle"), [S(F(2, 6, 3), 2), S(F(1, 6, 2, 2), 3)],
    errors=[S(F(2, 5, 3), 2)])
row("F.native_channel_shuffle", f("native_channel_shuffle"), [S(F(2, 6, 3), 3)],
    grad=False, note="torch has no derivative for it; duograd's is channel_shuffle's")

# ---------------------------------------------------------------- distances

row("F.pairwise_distance", f("pairwise_distance"), [
    S(F(4, 3), F(4, 3)), S(F(4, 3), F(4, 3), 1.0), S(F(4, 3), F(4, 3), 3.0, keepdim=True),
    S(F(4, 3), F(1, 3), label="broadcast"), S(F(3), F(3)), S(F(4, 3), F(4, 3), float("inf"))])
row("F.pdist", f("pdist"), [S(F(5, 3, domain="distinct")), S(F(4, 2, domain="distinct"), 1.0),
                            S(F(4, 3, domain="distinct"), 3.0)],
    errors=[S(F(3)), S(F(3, 2), -1.0)])

# ---------------------------------------------------------------- losses

row("F.margin_ranking_loss", lambda m, a, b, t, **kw: m.nn.functional.margin_ranking_loss(a, b, pm1(m, t), **kw),
    [S(F(6), F(6), I(6, high=2)), S(F(6), F(6), I(6, high=2), margin=0.5, reduction="sum"),
     S(F(6), F(6), I(6, high=2), reduction="none")],
    errors=[S(F(6), F(6), I(6, high=2), reduction="avg")])
row("F.hinge_embedding_loss", lambda m, x, t, **kw: m.nn.functional.hinge_embedding_loss(x, pm1(m, t), **kw),
    [S(F(3, 4), I(3, 4, high=2)), S(F(5), I(5, high=2), margin=0.3, reduction="none"),
     S(F(5), I(5, high=2), reduction="sum")])
row("F.soft_margin_loss", lambda m, x, t, **kw: m.nn.functional.soft_margin_loss(x, pm1(m, t).to(x.dtype), **kw),
    [S(F(3, 4), I(3, 4, high=2)), S(F(5), I(5, high=2), reduction="none")])
row("F.multilabel_soft_margin_loss",
    lambda m, x, t, *a, **kw: m.nn.functional.multilabel_soft_margin_loss(x, t.to(x.dtype), *a, **kw),
    [S(F(3, 4), I(3, 4, high=2)), S(F(3, 4), I(3, 4, high=2), F(4, domain="positive", grad=False)),
     S(F(3, 4), I(3, 4, high=2), reduction="none"), S(F(4), I(4, high=2), reduction="sum")])
row("F.multi_margin_loss", f("multi_margin_loss"), [
    S(F(5, 4), I(5, high=4)), S(F(5, 4), I(5, high=4), p=2, margin=0.5),
    S(F(5, 4), I(5, high=4), weight=F(4, domain="positive", grad=False), reduction="sum"),
    S(F(5, 4), I(5, high=4), reduction="none"), S(F(4), I(1, high=4), label="1-D input")],
    errors=[S(F(5, 4), I(5, high=4), p=3), S(F(5, 4), I(4, high=4))])


def _mlm_target(m, n, c):
    """multilabel_margin_loss targets: listed classes, then -1, then anything."""
    t = np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]][:n])[:, :c]
    return m.tensor(t)


row("F.multilabel_margin_loss", lambda m, x, **kw: m.nn.functional.multilabel_margin_loss(
        x, _mlm_target(m, *x.shape) if x.ndim == 2 else m.tensor([2, 0, -1, 1]), **kw),
    [S(F(3, 4)), S(F(3, 4), reduction="none"), S(F(2, 4), reduction="sum"), S(F(4), label="1-D")])
row("F.cosine_embedding_loss", lambda m, a, b, t, **kw: m.nn.functional.cosine_embedding_loss(a, b, pm1(m, t), **kw),
    [S(F(5, 3), F(5, 3), I(5, high=2)), S(F(5, 3), F(5, 3), I(5, high=2), margin=0.2, reduction="none"),
     S(F(3), F(3), I(high=2), reduction="sum")])
row("F.triplet_margin_loss", f("triplet_margin_loss"), [
    S(F(4, 3), F(4, 3), F(4, 3)), S(F(4, 3), F(4, 3), F(4, 3), margin=2.0, p=1, swap=True),
    S(F(4, 3), F(4, 3), F(4, 3), reduction="none"), S(F(3), F(3), F(3), margin=3.0)],
    errors=[S(F(4, 3), F(4, 3), F(3))])
row("F.triplet_margin_with_distance_loss", f("triplet_margin_with_distance_loss"), [
    S(F(4, 3), F(4, 3), F(4, 3)), S(F(4, 3), F(4, 3), F(4, 3), margin=2.0, swap=True, reduction="sum")],
    errors=[S(F(4, 3), F(4, 3), F(4, 3), margin=-1.0)])
row("F.triplet_margin_with_distance_loss[distance_function]",
    lambda m, a, p, n, **kw: m.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), **kw),
    [S(F(4, 3), F(4, 3), F(4, 3), margin=3.0), S(F(4, 3), F(4, 3), F(4, 3), margin=3.0, swap=True)])
row("F.poisson_nll_loss", f("poisson_nll_loss"), [
    S(F(3, 4), F(3, 4, domain="positive", grad=False)),
    S(F(3, 4, domain="positive"), F(3, 4, domain="positive", grad=False), log_input=False),
    S(F(3, 4), F(3, 4, domain="positive", grad=False), full=True, reduction="none"),
    S(F(3, 4, domain="positive"), F(3, 4, domain="positive"), log_input=False, full=True, reduction="sum")])
row("F.gaussian_nll_loss", f("gaussian_nll_loss"), [
    S(F(4, 3), F(4, 3), F(4, 3, domain="positive")),
    S(F(4, 3), F(4, 3), F(4, domain="positive"), label="var one dim less"),
    S(F(4, 3), F(4, 3), F(4, 1, domain="positive"), full=True, label="var last dim 1"),
    S(F(4, 3), F(4, 3), F(4, 3, domain="positive"), reduction="none"),
    S(F(4, 3), F(4, 3), 0.5, label="var a number")],
    errors=[S(F(4, 3), F(4, 3), F(3, 4, domain="positive")), S(F(4, 3), F(4, 3), -1.0)])


def _ctc(m, lp, concat=False, **kw):
    """A ctc_loss call on log-probabilities made from ``lp`` (T, N, C)."""
    t, n, c = lp.shape
    logp = lp.log_softmax(2)
    targets = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]])[:n]
    tl = [3, 2, 1][:n]
    il = [t, t - 1, t - 2][:n]
    if concat:
        targets = np.concatenate([targets[i, :tl[i]] for i in range(n)])
    return m.nn.functional.ctc_loss(logp, m.tensor(targets), m.tensor(il), m.tensor(tl), **kw)


row("F.ctc_loss", _ctc, [S(F(6, 3, 4)), S(F(6, 3, 4), reduction="sum"), S(F(6, 3, 4), reduction="none"),
                         S(F(6, 2, 4), concat=True, label="concatenated targets"),
                         S(F(2, 3, 4), zero_infinity=True, reduction="none", label="too short: inf to 0")])

# ---------------------------------------------------------------- normalisation


def _instance(m, x, *a, **kw):
    return m.nn.functional.instance_norm(x, *a, **kw)


row("F.instance_norm", _instance, [S(F(2, 3, 5)), S(F(2, 3, 2, 3), weight=F(3), bias=F(3)),
                                   S(F(1, 2, 2, 2, 2), eps=0.1)],
    errors=[S(F(2, 3, 1))])
row("F.rms_norm", f("rms_norm"), [S(F(3, 4), (4,)), S(F(2, 3, 4), (3, 4), F(3, 4)), S(F(3, 4), [4], eps=0.1),
                                  S(F(5), (5,))],
    errors=[S(F(3, 4), (3,)), S(F(5), 5)])
row("F.local_response_norm", f("local_response_norm"), [
    S(F(2, 5, 3), 3), S(F(2, 4, 3, 3), 2, alpha=0.1, beta=0.5, k=2.0), S(F(1, 6, 2, 2, 2), 4)],
    errors=[S(F(4, 5), 2)])

# ---------------------------------------------------------------- pooling

row("F.lp_pool1d", f("lp_pool1d"), [S(F(2, 3, 6, domain="positive"), 2, 2),
                                    S(F(2, 3, 7, domain="positive"), 3, 3, 2, ceil_mode=True),
                                    S(F(2, 3, 6), 1, 2)])
row("F.lp_pool2d", f("lp_pool2d"), [S(F(2, 3, 4, 6, domain="positive"), 2, 2),
                                    S(F(1, 2, 5, 5, domain="positive"), 1.5, (2, 3), 1)])
row("F.lp_pool3d", f("lp_pool3d"), [S(F(1, 2, 4, 4, 4, domain="positive"), 2, 2)])
row("F.avg_pool3d", f("avg_pool3d"), [
    S(F(2, 2, 4, 4, 4), 2), S(F(1, 2, 5, 4, 3), (3, 2, 2), stride=1, padding=1, count_include_pad=False),
    S(F(2, 5, 5, 5), 2, ceil_mode=True, label="unbatched, ceil"), S(F(1, 1, 4, 4, 4), 2, divisor_override=3)],
    errors=[S(F(1, 1, 2, 2, 2), 3)])
row("F.max_pool3d", f("max_pool3d"), [
    S(F(2, 2, 4, 4, 4, domain="distinct"), 2), S(F(1, 2, 5, 5, 5, domain="distinct"), 3, 2, 1),
    S(F(1, 1, 5, 5, 5, domain="distinct"), 2, dilation=2, ceil_mode=True),
    S(F(1, 4, 4, 4, domain="distinct"), 2, return_indices=True, label="unbatched, indices")])
row("F.max_unpool3d", lambda m, x, **kw: m.nn.functional.max_unpool3d(
        *m.nn.functional.max_pool3d(x, 2, return_indices=True), 2, **kw),
    [S(F(1, 2, 4, 4, 4, domain="distinct")), S(F(1, 1, 4, 4, 4, domain="distinct"), output_size=(5, 5, 5))])
row("F.adaptive_avg_pool3d", f("adaptive_avg_pool3d"), [S(F(2, 3, 5, 4, 6), (2, 3, 2)), S(F(3, 4, 4, 4), 1),
                                                        S(F(1, 2, 4, 5, 6), (None, 2, 3))])
row("F.adaptive_max_pool3d", f("adaptive_max_pool3d"), [
    S(F(2, 3, 5, 4, 6, domain="distinct"), (2, 3, 2)),
    S(F(1, 2, 4, 4, 4, domain="distinct"), 2, return_indices=True)])
for _d, _shape in [(1, (2, 3, 7)), (2, (2, 3, 5, 6)), (3, (1, 2, 4, 4, 4))]:
    row(f"F.max_pool{_d}d_with_indices", f(f"max_pool{_d}d_with_indices"),
        [S(F(*_shape, domain="distinct"), 2), S(F(*_shape, domain="distinct"), 3, 1, 1)], grad=True)
    row(f"F.adaptive_max_pool{_d}d_with_indices", f(f"adaptive_max_pool{_d}d_with_indices"),
        [S(F(*_shape, domain="distinct"), 2), S(F(*_shape, domain="distinct"), 3)])

# ---------------------------------------------------------------- embedding bags


def _bag(m, w, mode="mean", offsets=(0, 2, 2, 5), weights=None, two_d=False, **kw):
    idx = np.array([1, 0, 3, 3, 2, 4, 1])
    if two_d:
        return m.nn.functional.embedding_bag(m.tensor(idx[:6].reshape(3, 2)), w, mode=mode,
                                             per_sample_weights=weights, **kw)
    return m.nn.functional.embedding_bag(m.tensor(idx), w, m.tensor(list(offsets)), mode=mode,
                                         per_sample_weights=weights, **kw)


row("F.embedding_bag", _bag, [
    S(F(5, 3)), S(F(5, 3), mode="sum"), S(F(5, 3, domain="distinct"), mode="max"),
    S(F(5, 3), mode="sum", weights=F(7)), S(F(5, 3), two_d=True), S(F(5, 3), padding_idx=3),
    S(F(5, 3), mode="sum", offsets=(0, 2, 7), include_last_offset=True)],
    errors=[S(F(5, 3), mode="mean", weights=F(7)), S(F(5, 3), mode="median")])

# ---------------------------------------------------------------- resampling

row("F.upsample", f("upsample"), [S(F(1, 2, 3), scale_factor=2), S(F(1, 2, 3, 4), size=(5, 6), mode="bilinear",
                                                                   align_corners=False)])
row("F.upsample_nearest", f("upsample_nearest"), [S(F(1, 2, 3, 4), scale_factor=2), S(F(1, 2, 3), 5)])
row("F.upsample_bilinear", f("upsample_bilinear"), [S(F(1, 2, 3, 4), scale_factor=2), S(F(2, 1, 3, 3), (4, 5))])
row("F.conv_tbc", lambda m, x, w, b, pad=0: m.nn.functional.conv_tbc(x, w, b, pad), [
    S(F(7, 2, 3), F(3, 3, 4), F(4)), S(F(5, 1, 2), F(2, 2, 3), F(3), 1)],
    errors=[S(F(7, 2, 3), F(3, 2, 4), F(4))])
row("F.affine_grid", f("affine_grid"), [
    S(F(2, 2, 3), (2, 3, 4, 5), align_corners=False), S(F(2, 2, 3), (2, 1, 3, 3), align_corners=True),
    S(F(1, 3, 4), (1, 2, 3, 2, 4), align_corners=False, label="3-D")],
    errors=[S(F(2, 2, 3), (2, 3, 4)), S(F(2, 3, 3), (2, 3, 4, 5))])


def _grid(m, x, g, **kw):
    return m.nn.functional.grid_sample(x, g * 1.2, **kw)   # (some points outside [-1, 1])


row("F.grid_sample", _grid, [
    S(F(2, 3, 4, 5), F(2, 3, 2, 2, domain="unit"), align_corners=False),
    S(F(2, 3, 4, 5), F(2, 3, 2, 2, domain="unit"), align_corners=True),
    S(F(1, 2, 3, 4), F(1, 4, 3, 2, domain="unit"), padding_mode="border", align_corners=False),
    S(F(1, 2, 3, 4), F(1, 4, 3, 2, domain="unit"), padding_mode="reflection", align_corners=False),
    S(F(1, 2, 3, 4), F(1, 4, 3, 2, domain="unit"), padding_mode="reflection", align_corners=True),
    S(F(1, 2, 3, 4), F(1, 4, 3, 2, domain="unit", grad=False), mode="nearest", align_corners=False)],
    errors=[S(F(1, 2, 3, 4), F(1, 4, 3, 2), mode="cubic"), S(F(1, 2, 3, 4), F(1, 4, 3, 2), padding_mode="wrap")])

# ---------------------------------------------------------------- linear + cross-entropy, fractional pools

row("F.linear_cross_entropy", lambda m, x, w, t, **kw: m.nn.functional.linear_cross_entropy(x, w, t, **kw), [
    S(F(5, 3), F(4, 3), I(5, high=4)), S(F(5, 3), F(4, 3), I(5, high=4), linear_bias=F(4), reduction="sum"),
    S(F(5, 3), F(4, 3), I(5, low=-1, high=4), ignore_index=-1, label_smoothing=0.1),
    S(F(5, 3), F(4, 3), I(5, high=4), weight=F(4, domain="positive", grad=False), reduction="none")])


def _frac(m, x, u, d, **kw):
    fn = getattr(m.nn.functional, f"fractional_max_pool{d}d")
    return fn(x, kw.pop("k", 2), _random_samples=u, **kw)


def _samples(n, c, d):
    return np.random.default_rng(7).random((n, c, d))


row("F.fractional_max_pool2d", lambda m, x, **kw: _frac(m, x, m.tensor(_samples(2, 3, 2)).to(x.dtype), 2, **kw), [
    S(F(2, 3, 9, 7, domain="distinct"), output_size=(4, 3)),
    S(F(2, 3, 9, 7, domain="distinct"), k=(3, 2), output_ratio=(0.5, 0.5)),
    S(F(2, 3, 9, 7, domain="distinct"), k=3, output_size=5, return_indices=True)],
    errors=[S(F(2, 3, 9, 7), output_size=(9, 7))])
row("F.fractional_max_pool3d", lambda m, x, **kw: _frac(m, x, m.tensor(_samples(1, 2, 3)).to(x.dtype), 3, **kw), [
    S(F(1, 2, 6, 5, 7, domain="distinct"), k=(2, 2, 3), output_size=(3, 2, 4)),
    S(F(1, 2, 6, 5, 7, domain="distinct"), output_size=3, return_indices=True)])
row("F.fractional_max_pool2d_with_indices", lambda m, x, **kw: m.nn.functional.fractional_max_pool2d_with_indices(
        x, 2, _random_samples=m.tensor(_samples(2, 3, 2)).to(x.dtype), **kw),
    [S(F(2, 3, 8, 8, domain="distinct"), output_size=(5, 4))])
row("F.fractional_max_pool3d_with_indices", lambda m, x, **kw: m.nn.functional.fractional_max_pool3d_with_indices(
        x, 2, _random_samples=m.tensor(_samples(1, 2, 3)).to(x.dtype), **kw),
    [S(F(1, 2, 5, 5, 5, domain="distinct"), output_size=(3, 3, 2))])

# ---------------------------------------------------------------- attention


def _mha(m, q, k, v, w, b, ow, ob, **kw):
    e = q.shape[-1]
    return m.nn.functional.multi_head_attention_forward(q, k, v, e, 2, w, b, None, None, False, 0.0,
                                                        ow, ob, **kw)


row("F.multi_head_attention_forward", _mha, [
    S(F(5, 3, 4), F(6, 3, 4), F(6, 3, 4), F(12, 4), F(12), F(4, 4), F(4)),
    S(F(5, 3, 4), F(5, 3, 4), F(5, 3, 4), F(12, 4), F(12), F(4, 4), F(4), average_attn_weights=False),
    S(F(5, 4), F(5, 4), F(5, 4), F(12, 4), F(12), F(4, 4), F(4), label="unbatched"),
    S(F(5, 3, 4), F(5, 3, 4), F(5, 3, 4), F(12, 4), F(12), F(4, 4), F(4), need_weights=False)],
    errors=[S(F(5, 3, 4), F(5, 3, 4), F(5, 3, 4), F(12, 3), F(12), F(4, 4), F(4))])
