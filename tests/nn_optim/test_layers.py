"""The layers of the layers branch against torch 2.13: each is loaded from a torch model's
``state_dict()`` and gives torch's outputs and gradients (input and every parameter) to
1e-12 in float64; batch norm over several steps in both modes with its running
statistics; attention's gradcheck/gradgradcheck and the exact causal mask; Module
methods (named_modules, buffers, apply, to, requires_grad_, load_state_dict(strict))."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn
from duograd.nn import functional as F

TOL = 1e-12


@pytest.fixture(autouse=True)
def _f64(torch, one_torch_thread):
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def load_from_torch(ours: nn.Module, theirs) -> None:
    """``ours.load_state_dict(theirs.state_dict())``, as a torch user writes it. While
    nn.Linear is still duograd's (in, out) layout (before the `signatures` branch), a
    square Linear weight (MultiheadAttention.out_proj) loads transposed: put it right."""
    result = ours.load_state_dict(theirs.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    if nn.Linear(2, 3).weight.shape == (2, 3):
        for _, m in ours.named_modules():
            if isinstance(m, nn.Linear):
                m.weight.data = m.weight._data.T.copy()


def close(a, b, what: str = "") -> None:
    a = a.detach().numpy() if isinstance(a, dg.Tensor) else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL, err_msg=what)


def compare(torch, ours, theirs, *xs, seed: int = 0, select=lambda o: o):
    """Forward and backward (through a random cotangent) of both; compares the output, each
    input's gradient and each parameter's gradient (by torch's names)."""
    rng = np.random.default_rng(seed)
    a = [dg.tensor(x, requires_grad=True) for x in xs]
    b = [torch.tensor(x, requires_grad=True) for x in xs]
    oa, ob = select(ours(*a)), select(theirs(*b))
    close(oa, ob, "output")
    c = rng.standard_normal(tuple(ob.shape))
    (oa * c).sum().backward()
    (ob * torch.tensor(c)).sum().backward()
    for i, (x, y) in enumerate(zip(a, b)):
        close(x.grad, y.grad, f"input {i} gradient")
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        g = mine[name].grad
        if g is None or p.grad is None:
            assert g is None and (p.grad is None or not p.grad.any()), f"gradient of {name}: None vs torch"
            continue
        if name.endswith("out_proj.weight") and nn.Linear(2, 3).weight.shape == (2, 3):
            g = g.T
        close(g, p.grad, f"gradient of {name}")


def randomize(torch, m) -> None:
    with torch.no_grad():
        for p in m.parameters():
            p.uniform_(-1, 1)


# ---------------------------------------------------------------- normalization

@pytest.mark.parametrize("shape,normalized,kw", [((2, 3, 4), (3, 4), {}), ((5, 6), 6, {}),
                                                 ((2, 3, 4), (4,), {"bias": False}),
                                                 ((2, 4), (4,), {"elementwise_affine": False}),
                                                 ((2, 4), (4,), {"eps": 1e-2})])
def test_layer_norm_matches_torch(torch, shape, normalized, kw):
    theirs = torch.nn.LayerNorm(normalized, **kw)
    randomize(torch, theirs)
    ours = nn.LayerNorm(normalized, **kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from_torch(ours, theirs)
    compare(torch, ours, theirs, np.random.default_rng(1).standard_normal(shape))


@pytest.mark.parametrize("groups,channels,shape,affine", [(2, 4, (3, 4, 5), True),
                                                          (1, 3, (2, 3, 2, 2), True),
                                                          (3, 3, (2, 3), False)])
def test_group_norm_matches_torch(torch, groups, channels, shape, affine):
    theirs = torch.nn.GroupNorm(groups, channels, affine=affine)
    randomize(torch, theirs)
    ours = nn.GroupNorm(groups, channels, affine=affine)
    load_from_torch(ours, theirs)
    compare(torch, ours, theirs, np.random.default_rng(2).standard_normal(shape))


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 4)), ("BatchNorm1d", (5, 4, 3)),
                                       ("BatchNorm2d", (3, 4, 2, 5))])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_batch_norm_trains_and_evaluates_like_torch_over_several_steps(torch, cls, shape, momentum):
    theirs = getattr(torch.nn, cls)(4, momentum=momentum)
    randomize(torch, theirs)
    ours = getattr(nn, cls)(4, momentum=momentum)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from_torch(ours, theirs)
    rng = np.random.default_rng(3)
    for step in range(5):
        x = rng.standard_normal(shape) * (1 + step) + step
        compare(torch, ours, theirs, x, seed=step)
        for name in ("running_mean", "running_var"):
            close(getattr(ours, name), getattr(theirs, name), f"{name} after step {step}")
        assert float(ours.num_batches_tracked.detach().numpy()) == int(theirs.num_batches_tracked)
        ours.zero_grad()
        theirs.zero_grad()
    ours.eval()
    theirs.eval()
    compare(torch, ours, theirs, rng.standard_normal(shape), seed=9)
    close(ours.running_var, theirs.running_var, "running_var unchanged in eval")
    sd = theirs.state_dict()
    fresh = getattr(nn, cls)(4, momentum=momentum).eval()
    fresh.load_state_dict(sd)
    theirs.zero_grad()
    compare(torch, fresh, theirs, rng.standard_normal(shape), seed=10)


@pytest.mark.parametrize("affine,track", [(False, True), (True, False)])
def test_batch_norm_without_affine_or_running_stats(torch, affine, track):
    theirs = torch.nn.BatchNorm1d(3, affine=affine, track_running_stats=track)
    ours = nn.BatchNorm1d(3, affine=affine, track_running_stats=track)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(4)
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        compare(torch, ours, theirs, rng.standard_normal((5, 3)))


def test_batch_norm_refuses_one_value_per_channel_in_training(torch):
    with pytest.raises(ValueError):
        torch.nn.BatchNorm1d(3)(torch.ones(1, 3))
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match="more than 1 value"):
        bn(dg.ones((1, 3)))


# ---------------------------------------------------------------- embedding

def test_embedding_with_padding_matches_torch(torch):
    theirs = torch.nn.Embedding(7, 3, padding_idx=2)
    ours = nn.Embedding(7, 3, padding_idx=2, rng=0)
    assert not ours.weight.detach().numpy()[2].any()
    load_from_torch(ours, theirs)
    idx = np.array([[1, 2, 2], [6, 1, 0]])
    oa, ob = ours(dg.tensor(idx)), theirs(torch.tensor(idx))
    close(oa, ob, "output")
    c = np.random.default_rng(5).standard_normal(ob.shape)
    (oa * c).sum().backward()
    (ob * torch.tensor(c)).sum().backward()
    close(ours.weight.grad, theirs.weight.grad, "weight gradient (row 2 zero)")
    assert not ours.weight.grad.detach().numpy()[2].any()


def test_embedding_accepts_int64_arrays_and_rejects_out_of_range(torch):
    emb = nn.Embedding(4, 2, rng=0)
    assert emb(np.array([3, 0], dtype=np.int64)).shape == (2, 2)
    with pytest.raises(IndexError):
        theirs = torch.nn.Embedding(4, 2)
        theirs(torch.tensor([4]))
    with pytest.raises(IndexError, match="out of range"):
        emb(np.array([4]))


def test_embedding_initialisation_is_standard_normal():
    w = nn.Embedding(2000, 50, rng=0).weight.detach().numpy()
    assert abs(w.mean()) < 4 / np.sqrt(w.size) and abs(w.std() - 1) < 0.01


# ---------------------------------------------------------------- attention

@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("case", ["plain", "bool_causal", "key_padding", "float_mask_3d",
                                  "per_head_weights", "no_weights", "is_causal"])
def test_multihead_attention_matches_torch(torch, batch_first, case):
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    randomize(torch, theirs)
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first, rng=0)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from_torch(ours, theirs)
    n, L = 3, 5
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, L, 8) if batch_first else (L, n, 8))
    kw: dict = {}
    if case in ("bool_causal", "is_causal"):
        kw["attn_mask"] = np.triu(np.ones((L, L), bool), 1)
        if case == "is_causal":
            kw["is_causal"] = True
    elif case == "key_padding":
        kpm = np.zeros((n, L), bool)
        kpm[0, 3:] = True
        kw["key_padding_mask"] = kpm
    elif case == "float_mask_3d":
        kw["attn_mask"] = rng.standard_normal((n * 2, L, L))
    elif case == "per_head_weights":
        kw["average_attn_weights"] = False
    elif case == "no_weights":
        kw["need_weights"] = False
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    for which in (0, 1):
        if which == 1 and case == "no_weights":
            assert ours(dg.tensor(x), dg.tensor(x), dg.tensor(x), **kw)[1] is None
            continue
        ours.zero_grad()
        theirs.zero_grad()
        _compare_fn(torch, ours, theirs, kw, tkw, x, which)


def _compare_fn(torch, ours, theirs, kw, tkw, x, which):
    class Wrap(nn.Module):
        def __init__(self, m, k):
            self.m, self._k = m, k

        def forward(self, q):
            return self.m(q, q * 2, q * 0.5, **self._k)[which]

    class TWrap(torch.nn.Module):
        def __init__(self, m, k):
            super().__init__()
            self.m, self.k = m, k

        def forward(self, q):
            return self.m(q, q * 2, q * 0.5, **self.k)[which]

    compare(torch, Wrap(ours, kw), TWrap(theirs, tkw), x, seed=which)


def test_multihead_attention_unbatched_and_init(torch):
    theirs = torch.nn.MultiheadAttention(6, 3)
    randomize(torch, theirs)
    ours = nn.MultiheadAttention(6, 3, rng=1)
    assert not ours.in_proj_bias.detach().numpy().any() and not ours.out_proj.bias.detach().numpy().any()
    bound = np.sqrt(6 / (6 + 18))
    assert np.abs(ours.in_proj_weight.detach().numpy()).max() <= bound
    load_from_torch(ours, theirs)
    x = np.random.default_rng(7).standard_normal((4, 6))
    a, b = ours(dg.tensor(x), dg.tensor(x), dg.tensor(x)), theirs(*[torch.tensor(x)] * 3)
    close(a[0], b[0], "unbatched output")
    close(a[1], b[1], "unbatched weights")


def test_multihead_attention_dropout_acts_in_training_only():
    mha = nn.MultiheadAttention(4, 2, dropout=0.5, batch_first=True, rng=0)
    x = dg.tensor(np.random.default_rng(8).standard_normal((2, 6, 4)))
    first, second = mha(x, x, x)[0], mha(x, x, x)[0]
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    mha.eval()
    np.testing.assert_array_equal(mha(x, x, x)[0].detach().numpy(), mha(x, x, x)[0].detach().numpy())


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}, {"mask": "float"},
                                {"mask": "bool"}])
def test_sdpa_matches_torch(torch, kw):
    import torch.nn.functional as TF
    rng = np.random.default_rng(9)
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 2))
    kw = dict(kw)
    mask = kw.pop("mask", None)
    if mask == "float":
        kw["attn_mask"] = rng.standard_normal((4, 6))
    elif mask == "bool":
        m = rng.uniform(size=(3, 4, 6)) > 0.3
        m[:, :, 0] = True  # every query attends somewhere
        kw["attn_mask"] = m
    tkw = {a: torch.tensor(b) if isinstance(b, np.ndarray) else b for a, b in kw.items()}

    class Ours(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, **kw)

    class Theirs(torch.nn.Module):
        def forward(self, q, k, v):
            return TF.scaled_dot_product_attention(q, k, v, **tkw)

    compare(torch, Ours(), Theirs(), q, k, v)


def test_sdpa_causal_with_a_mask_is_an_error_as_in_torch(torch):
    import torch.nn.functional as TF
    q = np.ones((1, 2, 2))
    with pytest.raises(RuntimeError):
        TF.scaled_dot_product_attention(*[torch.tensor(q)] * 3, attn_mask=torch.ones(2, 2), is_causal=True)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(*[dg.tensor(q)] * 3, attn_mask=np.ones((2, 2)), is_causal=True)


def test_attention_gradcheck_and_gradgradcheck_on_a_tiny_config():
    rng = np.random.default_rng(10)
    q, k, v = (dg.tensor(rng.standard_normal((1, 2, 3, 2)), requires_grad=True) for _ in range(3))
    f = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    assert dg.gradcheck(f, [q, k, v])
    assert dg.gradgradcheck(f, [q, k, v])
    mha = nn.MultiheadAttention(4, 2, batch_first=True, rng=0)
    x = dg.tensor(rng.standard_normal((1, 3, 4)), requires_grad=True)
    g = lambda x: mha(x, x, x, attn_mask=np.triu(np.ones((3, 3), bool), 1))[0]  # noqa: E731
    assert dg.gradcheck(g, [x])
    assert dg.gradgradcheck(g, [x])


def test_the_causal_mask_is_exact():
    """Changing a later position never changes an earlier output: exactly 0.0 difference."""
    rng = np.random.default_rng(11)
    mha = nn.MultiheadAttention(8, 2, batch_first=True, rng=0)
    x = rng.standard_normal((2, 7, 8))
    mask = np.triu(np.ones((7, 7), bool), 1)
    base = mha(dg.tensor(x), dg.tensor(x), dg.tensor(x), attn_mask=mask)[0].detach().numpy()
    sd_base = F.scaled_dot_product_attention(*[dg.tensor(x)] * 3, is_causal=True).detach().numpy()
    for t in range(7):
        y = x.copy()
        y[:, t:] = rng.standard_normal(y[:, t:].shape) * 100
        out = mha(dg.tensor(y), dg.tensor(y), dg.tensor(y), attn_mask=mask)[0].detach().numpy()
        assert np.abs(out[:, :t] - base[:, :t]).max(initial=0.0) == 0.0
        sd = F.scaled_dot_product_attention(*[dg.tensor(y)] * 3, is_causal=True).detach().numpy()
        assert np.abs(sd[:, :t] - sd_base[:, :t]).max(initial=0.0) == 0.0
        if t < 7:
            assert np.abs(out[:, t:] - base[:, t:]).max() > 0  # the later ones do change


# ---------------------------------------------------------------- containers and Module methods

def test_containers_and_named_modules_match_torch_names(torch):
    def build(lib):
        m = lib.nn.ModuleDict({"emb": lib.nn.Embedding(5, 4),
                               "blocks": lib.nn.ModuleList([lib.nn.LayerNorm(4), lib.nn.Identity(),
                                                            lib.nn.LayerNorm(4)])})
        return m
    ours, theirs = build(dg), build(torch)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from_torch(ours, theirs)
    close(ours["blocks"][2].weight, theirs["blocks"][2].weight)


def test_parameter_is_a_tensor_that_requires_grad_and_registers(torch):
    class M(nn.Module):
        def __init__(self):
            self.scale = nn.Parameter(dg.ones(2))

        def forward(self, x):
            return x * self.scale

    m = M()
    assert isinstance(m.scale, dg.Tensor) and m.scale.requires_grad
    assert [n for n, _ in m.named_parameters()] == ["scale"]
    assert torch.nn.Parameter(torch.ones(2)).requires_grad
    assert not nn.Parameter(dg.ones(2), requires_grad=False).requires_grad


def test_apply_to_double_float_requires_grad(torch):
    net = nn.Sequential(nn.LayerNorm(3), nn.BatchNorm1d(3))
    order = []
    net.apply(lambda m: order.append(type(m).__name__))
    torder = []
    torch.nn.Sequential(torch.nn.LayerNorm(3), torch.nn.BatchNorm1d(3)).apply(
        lambda m: torder.append(type(m).__name__))
    assert order == torder
    params = list(net.parameters())
    net.float()
    assert all(p.dtype == np.float32 for p in net.parameters())
    assert net[1].running_mean.dtype == np.float32
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]  # same objects
    net.to(np.float64)
    assert all(p.dtype == np.float64 for p in net.parameters())
    net.double()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(TypeError):
        net.to(np.int64)


def test_load_state_dict_strict_and_not_strict_as_torch(torch):
    tnet = torch.nn.Sequential(torch.nn.LayerNorm(3), torch.nn.BatchNorm1d(3))
    net = nn.Sequential(nn.LayerNorm(3), nn.BatchNorm1d(3))
    partial = {k: v for k, v in tnet.state_dict().items() if k != "1.running_var"}
    partial["extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError):
        tnet.load_state_dict(partial)
    before = net.state_dict()
    with pytest.raises(RuntimeError, match="missing key '1.running_var'.*unexpected key 'extra'"):
        net.load_state_dict(partial)
    for k, v in net.state_dict().items():  # nothing was loaded
        np.testing.assert_array_equal(v, before[k])
    t_result = tnet.load_state_dict(partial, strict=False)
    result = net.load_state_dict(partial, strict=False)
    assert result.missing_keys == t_result.missing_keys
    assert result.unexpected_keys == t_result.unexpected_keys
    assert type(result).__name__ == type(t_result).__name__
    assert repr(net.load_state_dict(tnet.state_dict())) == repr(tnet.load_state_dict(tnet.state_dict()))
    bad = dict(tnet.state_dict())
    bad["0.weight"] = torch.zeros(4)
    with pytest.raises(RuntimeError):
        net.load_state_dict(bad, strict=False)


def test_zero_grad_set_to_none_false_gives_zeros():
    ln = nn.LayerNorm(2)
    ln(dg.ones((1, 2))).sum().backward()
    ln.zero_grad(set_to_none=False)
    assert all(not p.grad.detach().numpy().any() for p in ln.parameters())
    ln.zero_grad()
    assert all(p.grad is None for p in ln.parameters())


@pytest.mark.parametrize("name,kw", [("NLLLoss", {"ignore_index": 1}), ("BCELoss", {}),
                                     ("BCEWithLogitsLoss", {"pos_weight": [2.0, 0.5, 1.0]}),
                                     ("L1Loss", {"reduction": "sum"}), ("SmoothL1Loss", {"beta": 0.5}),
                                     ("HuberLoss", {"delta": 0.5}), ("KLDivLoss", {"reduction": "batchmean"}),
                                     ("CrossEntropyLoss", {"label_smoothing": 0.1, "weight": [1.0, 2.0, 0.5]}),
                                     ("CosineSimilarity", {"dim": 0})])
def test_loss_modules_match_torch(torch, name, kw):
    rng = np.random.default_rng(12)
    x = rng.uniform(0.05, 0.95, (4, 3))
    if name in ("NLLLoss", "CrossEntropyLoss"):
        target = rng.integers(0, 3, 4)
        tt = torch.tensor(target)
    else:
        target = rng.uniform(0.05, 0.95, (4, 3))
        tt = torch.tensor(target)
    tkw = {k: torch.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}
    ours, theirs = getattr(nn, name)(**kw), getattr(torch.nn, name)(**tkw)
    a, b = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oa, ob = ours(a, target), theirs(b, tt)
    close(oa, ob, name)
    oa.sum().backward()
    ob.sum().backward()
    close(a.grad, b.grad, f"{name} gradient")


# ---------------------------------------------------------------- dg.compile

def _tiny_lm_losses(compiled: bool) -> tuple[list[float], float]:
    """A tiny causal language-model step (Embedding, LayerNorm, MultiheadAttention with
    dropout, scaled_dot_product_attention, cross_entropy over (N, C, T) with ignore_index
    and label smoothing, AdamW with a warm-up then a cosine schedule)."""
    from duograd import optim
    from duograd.optim import lr_scheduler as S

    class Tiny(nn.Module):
        def __init__(self):
            self.emb, self.pos = nn.Embedding(7, 8, rng=0), nn.Embedding(5, 8, rng=1)
            self.ln = nn.LayerNorm(8)
            self.attn = nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=True, rng=2)
            self.head = nn.Linear(8, 7, rng=3)

        def forward(self, idx):
            x = self.emb(idx) + self.pos(np.arange(idx.shape[1]))
            h = self.ln(x)
            causal = np.triu(np.ones((idx.shape[1],) * 2, bool), 1)  # torch needs the mask too
            a, _ = self.attn(h, h, h, attn_mask=causal, is_causal=True, need_weights=False)
            s = F.scaled_dot_product_attention(h, h, h, is_causal=True)
            return self.head(x + a + s).permute(0, 2, 1)  # (N, C, T)

    model = Tiny()
    opt = optim.AdamW(model.parameters(), lr=0.01)
    sched = S.SequentialLR(opt, [S.LinearLR(opt, 0.1, total_iters=3),
                                 S.CosineAnnealingLR(opt, T_max=10)], milestones=[3])

    def step(idx, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(idx), y, ignore_index=0, label_smoothing=0.1)
        loss.backward()
        opt.step()
        sched.step()
        return loss

    f = dg.compile(step) if compiled else step
    rng = np.random.default_rng(0)
    losses = [f(rng.integers(0, 7, (4, 5)), rng.integers(0, 7, (4, 5))).item() for _ in range(8)]
    return losses, opt.lr


def test_a_tiny_language_model_step_compiles_to_the_eager_result():
    """To round-off: dg.compile's replay can sum in another memory order than the eager
    engine (a known difference of the last bit, seen on main too, outside this branch);
    a target frozen at its recorded value would differ by far more."""
    (eager, lr), (compiled, clr) = _tiny_lm_losses(False), _tiny_lm_losses(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12, atol=0)
    assert lr == clr
    assert len(set(eager)) == 8  # the batches really differ (the replay recomputes targets)


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss", "bce_with_logits", "smooth_l1", "kl_div",
                                  "cosine_similarity", "normalize", "layer_norm", "group_norm",
                                  "batch_norm", "embedding"])
def test_second_order_of_the_compositions(name):
    """gradgradcheck (finite differences of the gradient) on each composition."""
    rng = np.random.default_rng(13)
    x = dg.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    t = rng.integers(0, 4, (3, 2))
    t[0, 0] = -100
    y = rng.uniform(0.1, 0.9, (3, 4, 2))
    fns = {
        "cross_entropy": lambda x: F.cross_entropy(x, t, label_smoothing=0.2, weight=[1.0, 2.0, 0.5, 1.0]),
        "nll_loss": lambda x: F.nll_loss(x, t, reduction="none"),
        "bce_with_logits": lambda x: F.binary_cross_entropy_with_logits(x, y, pos_weight=np.full(2, 2.0)),
        "smooth_l1": lambda x: F.smooth_l1_loss(x, y, beta=0.5),
        "kl_div": lambda x: F.kl_div(x, y, reduction="batchmean"),
        "cosine_similarity": lambda x: F.cosine_similarity(x, dg.tensor(y)),
        "normalize": lambda x: F.normalize(x, p=3.0),
        "layer_norm": lambda x: F.layer_norm(x, (4, 2)),
        "group_norm": lambda x: F.group_norm(x, 2),
        "batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
        "embedding": lambda w: F.embedding(np.array([[0, 2], [2, 1]]), w.reshape(6, 4)),  # (padding_idx: torch zeroes a true derivative)
    }
    assert dg.gradcheck(fns[name], [x])
    assert dg.gradgradcheck(fns[name], [x])
