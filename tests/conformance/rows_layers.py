"""Rows for the layers branch: losses, normalisations, embedding and attention in
``nn.functional`` (the nn modules, optimizers and schedules are compared with torch by the
tests named in coverage_map.COVERED_BY).

Integer targets are ``I(...)`` samples (int64 in torch; duograd accepts them as int64
Tensors, and as whole-number floats before the `dtypes` branch makes integers real)."""

from __future__ import annotations

import numpy as np

from opinfo import F, I, S, row


def _bool(m, arr):
    """A bool mask as ``m``'s tensor (a NumPy bool array for duograd while its tensors
    cannot hold bool; the function reads either)."""
    if m.__name__ == "torch":
        return m.tensor(arr)
    t = m.tensor(arr)
    return t if np.dtype(t.dtype) == np.bool_ else arr


def _int64_values(d, t):
    """one_hot: values and shape as torch; the dtype int64 once duograd has int64 tensors."""
    import duograd as dg
    assert tuple(d.shape) == tuple(t.shape)
    np.testing.assert_array_equal(np.asarray(d.numpy()), t.numpy())
    if np.dtype(dg.tensor(np.array([1], dtype=np.int64)).dtype) == np.int64:
        assert np.dtype(d.dtype) == np.int64, f"one_hot: dtype {d.dtype}, torch int64"


# ---------------------------------------------------------------- class-index losses

ALL_IGNORED = I(4, low=-100, high=-99)
CE_SAMPLES = [
    S(F(4, 3), I(4, high=3)),
    S(F(4, 3), I(4, high=3), reduction="sum"),
    S(F(4, 3), I(4, high=3), reduction="none"),
    S(F(2, 3, 5), I(2, 5, high=3), label="(N, C, d1)"),
    S(F(2, 3, 2, 2), I(2, 2, 2, high=3), reduction="none", label="(N, C, d1, d2) none"),
    S(F(3), I(high=3), label="unbatched (C,)"),
    S(F(4, 3), I(4, high=3), weight=F(3, domain="positive", grad=False)),
    S(F(4, 3), I(4, low=-1, high=3), ignore_index=-1, label="some ignored"),
    S(F(4, 3), I(4, low=-1, high=3), ignore_index=-1, weight=F(3, domain="positive", grad=False),
      label="weighted, some ignored"),
    S(F(4, 3), ALL_IGNORED, label="all ignored: nan"),
    S(F(4, 3), ALL_IGNORED, reduction="sum", label="all ignored, sum"),
    S(F(0, 3), I(0, high=3), label="empty batch: nan"),
    S(F(0, 3), I(0, high=3), reduction="sum", label="empty batch, sum"),
]
row("F.nll_loss", lambda m, x, t, **kw: m.nn.functional.nll_loss(x, t, **kw), CE_SAMPLES,
    errors=[S(F(3, 4), I(3, low=4, high=5)), S(F(3, 4), I(2, high=4)),
            S(F(3, 4), I(3, high=4), reduction="avg")])
row("F.cross_entropy", lambda m, x, t, **kw: m.nn.functional.cross_entropy(x, t, **kw), CE_SAMPLES + [
    S(F(4, 3), I(4, high=3), label_smoothing=0.2),
    S(F(2, 3, 5), I(2, 5, low=-1, high=3), ignore_index=-1, label_smoothing=0.1,
      weight=F(3, domain="positive", grad=False), label="(N, C, d1) smoothing, weight, ignored"),
    S(F(4, 3), I(4, low=-1, high=3), ignore_index=-1, label_smoothing=0.3, reduction="none"),
    S(F(4, 3), ALL_IGNORED, label_smoothing=0.1, label="all ignored, smoothing: nan"),
    S(F(4, 3), F(4, 3, domain="positive", grad=False), label="probabilities"),
    S(F(2, 3, 4), F(2, 3, 4, domain="positive"), label_smoothing=0.1,
      weight=F(3, domain="positive", grad=False), reduction="none", label="probabilities (N, C, d1)"),
    S(F(4, 3), F(4, 3, domain="positive"), reduction="sum", label="probabilities, sum"),
], errors=[S(F(3, 4), I(3, low=4, high=5)), S(F(3, 4), I(3, low=-3, high=-2))])

# ---------------------------------------------------------------- elementwise losses

PROB = dict(domain="unit")
row("F.binary_cross_entropy",
    lambda m, x, t, **kw: m.nn.functional.binary_cross_entropy((x + 1) / 2.0, (t + 1) / 2.0, **kw),
    [S(F(4, 3, **PROB), F(4, 3, domain="unit", grad=False)),
     S(F(5, **PROB), F(5, **PROB), reduction="sum"),
     S(F(4, 3, **PROB), F(4, 3, **PROB), reduction="none", weight=F(3, domain="positive", grad=False)),
     S(F(**PROB), F(**PROB), label="0-d"),
     S(F(0, 3, **PROB), F(0, 3, **PROB), reduction="sum", label="empty")],
    errors=[S(F(3, domain="positive"), F(3, **PROB))])
row("F.binary_cross_entropy_with_logits",
    lambda m, x, t, **kw: m.nn.functional.binary_cross_entropy_with_logits(x * 20, t, **kw),
    [S(F(4, 3), F(4, 3, domain="positive", grad=False)),
     S(F(4, 3), F(4, 3, domain="unit"), reduction="none", pos_weight=F(3, domain="positive", grad=False)),
     S(F(4, 3), F(4, 3, domain="unit"), weight=F(4, 1, domain="positive", grad=False), reduction="sum"),
     S(F(), F(), label="0-d"), S(F(0, 2), F(0, 2), reduction="sum", label="empty")],
    errors=[S(F(4, 3), F(4, 2))])
for _name, _extra in (("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 0.7})):
    row(f"F.{_name}", lambda m, x, y, n=_name, **kw: getattr(m.nn.functional, n)(x, y, **kw),
        [S(F(4, 3), F(4, 3), **_extra), S(F(4, 3), F(4, 3), reduction="sum", **_extra),
         S(F(4, 3), F(4, 3), reduction="none", **_extra), S(F(), F(), **_extra),
         S(F(0, 3), F(0, 3), reduction="sum", **_extra)],
        errors=[S(F(3), F(3), reduction="avg")])
row("F.mse_loss", lambda m, x, y, **kw: m.nn.functional.mse_loss(x, y, **kw),
    [S(F(4, 3), F(4, 3)), S(F(4, 3), F(4, 3), reduction="sum"), S(F(5), F(5), reduction="none"),
     S(F(), F())])
row("F.kl_div", lambda m, x, y, **kw: m.nn.functional.kl_div(x, y, **kw),
    [S(F(4, 3), F(4, 3, domain="positive"), reduction="batchmean"),
     S(F(4, 3), F(4, 3, domain="positive"), reduction="sum"),
     S(F(4, 3), F(4, 3, domain="positive"), reduction="none"),
     S(F(4, 3), F(4, 3), reduction="batchmean", log_target=True),
     S(F(4, 3), F(4, 3), reduction="none", log_target=True)])

# ---------------------------------------------------------------- similarity, normalize, one_hot

row("F.cosine_similarity", lambda m, x, y, **kw: m.nn.functional.cosine_similarity(x, y, **kw),
    [S(F(4, 3), F(4, 3)), S(F(4, 3), F(1, 3), dim=-1, label="broadcast"), S(F(2, 3, 4), F(2, 3, 4), dim=0),
     S(F(5), F(5), dim=0, eps=1e-3)])
row("F.normalize", lambda m, x, **kw: m.nn.functional.normalize(x, **kw),
    [S(F(4, 3)), S(F(4, 3), dim=0), S(F(2, 3, 4), p=1.0, dim=-1), S(F(4, 3), p=3.0),
     S(F(4, 3, domain="distinct"), p=float("inf")), S(F(0, 3), dim=1), S(F(2, 0), dim=0)])
row("F.one_hot", lambda m, x, **kw: m.nn.functional.one_hot(x, **kw),
    [S(I(5, high=4)), S(I(2, 3, high=4), num_classes=6), S(I(0, high=3), num_classes=3)],
    grad=False, compare=_int64_values, errors=[S(I(3, low=4, high=5), num_classes=3)])

# ---------------------------------------------------------------- layers' functions

row("F.embedding", lambda m, i, w, **kw: m.nn.functional.embedding(i, w, **kw),
    [S(I(2, 3, high=5), F(5, 4)), S(I(4, high=5), F(5, 2), padding_idx=1), S(I(high=5), F(5, 3)),
     S(I(0, high=5), F(5, 3))],
    errors=[S(I(2, low=5, high=6), F(5, 4))])
row("F.layer_norm", lambda m, x, shape, *wb, **kw: m.nn.functional.layer_norm(x, shape, *wb, **kw),
    [S(F(4, 3), (3,)), S(F(2, 3, 4), (3, 4), F(3, 4), F(3, 4)), S(F(2, 5), [5], F(5), None, eps=0.1),
     S(F(0, 3), (3,), F(3), F(3), label="empty batch")],
    errors=[S(F(4, 3), (4,))])
row("F.group_norm", lambda m, x, g, *wb, **kw: m.nn.functional.group_norm(x, g, *wb, **kw),
    [S(F(3, 4, 5), 2, F(4), F(4)), S(F(2, 6), 3), S(F(2, 4, 2, 2), 1, F(4), F(4), eps=0.1)],
    errors=[S(F(2, 5, 3), 2)])
row("F.batch_norm",
    lambda m, x, *wb, training=True, **kw: (
        lambda rm, rv: (m.nn.functional.batch_norm(x, rm, rv, *wb, training=training, **kw), rm, rv))(
        m.zeros(x.shape[1], dtype=x.dtype), m.ones(x.shape[1], dtype=x.dtype)),
    [S(F(5, 3), F(3), F(3), label="train, running stats updated"),
     S(F(4, 3, 2), F(3), F(3), momentum=0.3), S(F(3, 2, 2, 2), training=False, label="eval"),
     S(F(2, 3, 4), F(3), F(3), training=False, eps=0.5)],
    errors=[S(F(1, 3))])


def _sdpa(m, q, k, v, mask=None, **kw):
    if mask == "tril":
        kw["attn_mask"] = _bool(m, np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool)))
    elif mask == "diag":
        kw["attn_mask"] = _bool(m, np.eye(q.shape[-2], k.shape[-2], dtype=bool) | (np.arange(k.shape[-2]) == 0))
    return m.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


row("F.scaled_dot_product_attention", _sdpa,
    [S(F(2, 4, 3), F(2, 5, 3), F(2, 5, 2)), S(F(1, 2, 4, 3), F(1, 2, 4, 3), F(1, 2, 4, 3), is_causal=True),
     S(F(2, 3, 4), F(2, 5, 4), F(2, 5, 4), attn_mask=F(3, 5, grad=False), label="float mask"),
     S(F(2, 3, 4), F(2, 5, 4), F(2, 5, 4), attn_mask=F(2, 3, 5), label="float mask with grad"),
     S(F(3, 4), F(3, 4), F(3, 4), mask="tril", label="bool mask (L, S)"),
     S(F(2, 4, 3), F(2, 6, 3), F(2, 6, 1), mask="diag", scale=0.7, label="bool mask, scale"),
     S(F(4, 3), F(5, 3), F(5, 2), label="2-d"), S(F(2, 0, 3), F(2, 4, 3), F(2, 4, 2), label="no queries")],
    errors=[S(F(2, 3, 4), F(2, 5, 3), F(2, 5, 3))])
