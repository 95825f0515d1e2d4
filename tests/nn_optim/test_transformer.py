"""The Transformer family and the completed MultiheadAttention against torch 2.13.

Each layer is built in both libraries, torch's ``state_dict()`` (randomised) is loaded into
duograd's by name, and both run the same inputs: the output, the gradient of every input
and of every parameter (through a random cotangent) agree to 1e-12 in float64 and to
float32's tolerance in float32, over the arguments (``norm_first``, ``batch_first``,
activations, ``bias=False``) and masks (bool and float, 2-D and 3-D, key padding,
``is_causal``, unbatched). Dropout is 0 for the comparisons; a separate test checks that
``train()``/``eval()`` switch it. ``examples/tiny_gpt.py`` trains with both libraries from
the same weights and its 20 losses agree to 1e-9.
"""

from __future__ import annotations


import numpy as np
import pytest

from twins import run_example

import duograd as dg
from duograd import nn
from duograd.nn import functional as F

pytestmark = pytest.mark.oracle

TOL = {np.float64: 1e-12, np.float32: 2e-4}


@pytest.fixture(autouse=True)
def _f64(torch, one_torch_thread):
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def close(a, b, what: str, dtype=np.float64) -> None:
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs torch {b.dtype}"
    tol = TOL[dtype]
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


def twins(torch, make, dtype=np.float64, scale: float = 0.5):
    """(ours, theirs): torch's module randomised, loaded into ours by name."""
    theirs = make(torch)
    with torch.no_grad():
        gen = torch.Generator().manual_seed(0)
        for p in theirs.parameters():
            p.copy_(torch.rand(p.shape, generator=gen, dtype=torch.float64) * 2 * scale - scale)
    ours = make(dg)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    result = ours.load_state_dict(theirs.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    if dtype == np.float32:
        theirs.float()
        ours.float()
    return ours, theirs


def lib_args(lib, args: dict, dtype=np.float64) -> dict:
    """Keyword arguments with arrays as the library's tensors (float arrays in ``dtype``)."""
    out = {}
    for k, v in args.items():
        if isinstance(v, np.ndarray):
            v = v.astype(dtype) if v.dtype.kind == "f" else v
            out[k] = lib.tensor(v) if lib is dg else lib.from_numpy(v.copy())
        else:
            out[k] = v
    return out


def compare(torch, ours, theirs, xs, call, kw=None, dtype=np.float64, seed: int = 0) -> None:
    """``call(module, *inputs, **kw)`` in both; output, input and parameter gradients."""
    kw = kw or {}
    xs = [x.astype(dtype) for x in xs]
    a = [dg.tensor(x, requires_grad=True) for x in xs]
    b = [torch.from_numpy(x.copy()).requires_grad_() for x in xs]
    oa = call(ours, *a, **lib_args(dg, kw, dtype))
    ob = call(theirs, *b, **lib_args(torch, kw, dtype))
    close(oa, ob, "output", dtype)
    c = np.random.default_rng(seed).standard_normal(tuple(ob.shape)).astype(dtype)
    (oa * dg.tensor(c)).sum().backward()
    (ob * torch.from_numpy(c)).sum().backward()
    for i, (x, y) in enumerate(zip(a, b)):
        if y.grad is None:  # (the weights do not depend on the value)
            assert x.grad is None or not _np(x.grad).any(), f"input {i}: torch has no gradient"
            continue
        close(x.grad, y.grad, f"input {i} gradient", dtype)
    mine = dict(ours.named_parameters())
    assert set(mine) == {n for n, _ in theirs.named_parameters()}
    for name, p in theirs.named_parameters():
        g = mine[name].grad
        if p.grad is None:
            assert g is None or not _np(g).any(), f"gradient of {name}: torch has none"
            continue
        close(g, p.grad, f"gradient of {name}", dtype)


R = np.random.default_rng(1234)
N, S, T, E, H = 3, 5, 4, 8, 2


def _kpm(n: int, s: int) -> np.ndarray:
    m = np.zeros((n, s), bool)
    m[0, s - 2:] = True
    m[-1, 1] = True
    return m


def _causal_bool(s: int) -> np.ndarray:
    return np.triu(np.ones((s, s), bool), 1)


def _causal_float(s: int) -> np.ndarray:
    return np.triu(np.full((s, s), -np.inf), 1)


# ---------------------------------------------------------------- TransformerEncoderLayer

ACTIVATIONS = {"relu": ("relu", "relu"), "gelu": ("gelu", "gelu"),
               "callable": (F.silu, "silu"), "module": (nn.GELU(approximate="tanh"), "GELU_tanh")}


def _torch_activation(torch, which):
    ours, name = ACTIVATIONS[which]
    if name == "silu":
        return torch.nn.functional.silu
    if name == "GELU_tanh":
        return torch.nn.GELU(approximate="tanh")
    return name


def _encoder_layer(lib, torch, which="relu", **kw):
    act = ACTIVATIONS[which][0] if lib is dg else _torch_activation(torch, which)
    return lib.nn.TransformerEncoderLayer(E, H, dim_feedforward=12, dropout=0.0, activation=act,
                                          **kw)


ENCODER_MASKS = {
    "none": {},
    "bool_mask": {"src_mask": R.standard_normal((S, S)) > 0.8},
    "float_mask": {"src_mask": R.standard_normal((S, S))},
    "mask_3d": {"src_mask": R.standard_normal((N * H, S, S))},
    "causal": {"src_mask": _causal_float(S), "is_causal": True},
    "causal_bool": {"src_mask": _causal_bool(S), "is_causal": True},
    "key_padding": {"src_key_padding_mask": _kpm(N, S)},
    "key_padding_float": {"src_key_padding_mask": np.where(_kpm(N, S), -1e9, 0.0)},
    "both": {"src_mask": _causal_float(S), "src_key_padding_mask": _kpm(N, S)},
    "causal_and_padding": {"src_mask": _causal_bool(S), "is_causal": True,
                           "src_key_padding_mask": _kpm(N, S)},
}

LAYER_ARGS = [
    {"norm_first": False, "batch_first": False, "which": "relu"},
    {"norm_first": True, "batch_first": True, "which": "gelu"},
    {"norm_first": False, "batch_first": True, "which": "callable", "bias": False},
    {"norm_first": True, "batch_first": False, "which": "module", "layer_norm_eps": 1e-3},
]


def _encoder_input(batch_first: bool, unbatched: bool = False) -> np.ndarray:
    if unbatched:
        return R.standard_normal((S, E))
    return R.standard_normal((N, S, E) if batch_first else (S, N, E))


def _call_encoder_layer(m, x, **kw):
    return m(x, **kw)


@pytest.mark.parametrize("args", LAYER_ARGS, ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()))
@pytest.mark.parametrize("masks", list(ENCODER_MASKS), ids=str)
def test_encoder_layer_matches_torch(torch, args, masks):
    args = dict(args)
    which = args.pop("which")
    ours, theirs = twins(torch, lambda lib: _encoder_layer(lib, torch, which, **args))
    x = _encoder_input(args["batch_first"])
    compare(torch, ours, theirs, [x], _call_encoder_layer, ENCODER_MASKS[masks])


@pytest.mark.parametrize("masks", ["none", "float_mask", "causal", "key_padding_1d"])
def test_encoder_layer_unbatched_matches_torch(torch, masks):
    kw = {"key_padding_1d": {"src_key_padding_mask": _kpm(1, S)[0]}}.get(masks, ENCODER_MASKS.get(masks))
    ours, theirs = twins(torch, lambda lib: _encoder_layer(lib, torch, "gelu", norm_first=True))
    compare(torch, ours, theirs, [_encoder_input(False, unbatched=True)], _call_encoder_layer, kw)


@pytest.mark.parametrize("args", LAYER_ARGS[:2], ids=["post_norm", "pre_norm"])
def test_encoder_layer_float32_matches_torch(torch, args):
    args = dict(args)
    which = args.pop("which")
    ours, theirs = twins(torch, lambda lib: _encoder_layer(lib, torch, which, **args), np.float32)
    assert ours.linear1.weight.dtype == np.float32
    compare(torch, ours, theirs, [_encoder_input(args["batch_first"])], _call_encoder_layer,
            ENCODER_MASKS["both"], dtype=np.float32)


def test_layer_dtype_argument_and_gradgradcheck(torch):
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, dtype=dg.float32,
                                       activation="gelu", batch_first=True, rng=0)
    assert {p.dtype for p in layer.parameters()} == {np.dtype(np.float32)}
    layer.double()
    x = dg.tensor(np.random.default_rng(3).standard_normal((1, 3, 4)), requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    f = lambda t: layer(t, src_mask=mask, is_causal=True)  # noqa: E731
    assert dg.gradcheck(f, (x,))
    assert dg.gradgradcheck(f, (x,))


# ---------------------------------------------------------------- TransformerDecoderLayer

def _decoder_layer(lib, torch, which="relu", **kw):
    act = ACTIVATIONS[which][0] if lib is dg else _torch_activation(torch, which)
    return lib.nn.TransformerDecoderLayer(E, H, dim_feedforward=12, dropout=0.0, activation=act,
                                          **kw)


DECODER_MASKS = {
    "none": {},
    "tgt_causal": {"tgt_mask": _causal_float(T), "tgt_is_causal": True},
    "tgt_bool": {"tgt_mask": _causal_bool(T)},
    "memory_mask": {"memory_mask": R.standard_normal((T, S))},
    "memory_mask_bool_3d": {"memory_mask": R.standard_normal((N * H, T, S)) > 0.9},
    "paddings": {"tgt_key_padding_mask": _kpm(N, T), "memory_key_padding_mask": _kpm(N, S)},
    "all": {"tgt_mask": _causal_bool(T), "memory_mask": R.standard_normal((T, S)) > 0.9,
            "tgt_key_padding_mask": _kpm(N, T), "memory_key_padding_mask": _kpm(N, S),
            "tgt_is_causal": True},
    "memory_is_causal": {"memory_mask": np.triu(np.full((T, S), -np.inf), 1),
                         "memory_is_causal": True},
}


def _decoder_inputs(batch_first: bool) -> list[np.ndarray]:
    if batch_first:
        return [R.standard_normal((N, T, E)), R.standard_normal((N, S, E))]
    return [R.standard_normal((T, N, E)), R.standard_normal((S, N, E))]


def _call_decoder(m, tgt, memory, **kw):
    return m(tgt, memory, **kw)


@pytest.mark.parametrize("args", LAYER_ARGS, ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()))
@pytest.mark.parametrize("masks", list(DECODER_MASKS), ids=str)
def test_decoder_layer_matches_torch(torch, args, masks):
    args = dict(args)
    which = args.pop("which")
    ours, theirs = twins(torch, lambda lib: _decoder_layer(lib, torch, which, **args))
    compare(torch, ours, theirs, _decoder_inputs(args["batch_first"]), _call_decoder,
            DECODER_MASKS[masks])


def test_decoder_layer_unbatched_and_float32_match_torch(torch):
    ours, theirs = twins(torch, lambda lib: _decoder_layer(lib, torch, "gelu"))
    xs = [R.standard_normal((T, E)), R.standard_normal((S, E))]
    compare(torch, ours, theirs, xs, _call_decoder, {"tgt_mask": _causal_bool(T),
                                                     "memory_key_padding_mask": _kpm(1, S)[0]})
    ours, theirs = twins(torch, lambda lib: _decoder_layer(lib, torch, "relu", norm_first=True),
                         np.float32)
    compare(torch, ours, theirs, _decoder_inputs(False), _call_decoder, DECODER_MASKS["all"],
            dtype=np.float32)


# ---------------------------------------------------------------- stacks and the Transformer

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "causal_detected", "causal", "both"])
def test_encoder_stack_matches_torch(torch, batch_first, masks):
    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(E, H, 12, 0.0, batch_first=batch_first)
        return lib.nn.TransformerEncoder(layer, num_layers=2, norm=lib.nn.LayerNorm(E),
                                         enable_nested_tensor=False)
    ours, theirs = twins(torch, make)
    assert list(ours.state_dict())[:1] == ["layers.0.self_attn.in_proj_weight"]
    kw = {"none": {}, "causal_detected": {"mask": _causal_float(S)},
          "causal": {"mask": _causal_float(S), "is_causal": True},
          "both": {"mask": _causal_bool(S), "src_key_padding_mask": _kpm(N, S)}}[masks]
    compare(torch, ours, theirs, [_encoder_input(batch_first)], lambda m, x, **k: m(x, **k), kw)


@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_stack_matches_torch(torch, batch_first):
    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(E, H, 12, 0.0, batch_first=batch_first,
                                               norm_first=True)
        return lib.nn.TransformerDecoder(layer, num_layers=2, norm=lib.nn.LayerNorm(E))
    ours, theirs = twins(torch, make)
    kw = {"tgt_mask": _causal_float(T), "memory_key_padding_mask": _kpm(N, S),
          "tgt_key_padding_mask": _kpm(N, T)}
    compare(torch, ours, theirs, _decoder_inputs(batch_first), _call_decoder, kw)


@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_transformer_matches_torch(torch, batch_first, norm_first):
    def make(lib):
        return lib.nn.Transformer(d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=1,
                                  dim_feedforward=12, dropout=0.0, activation="gelu",
                                  batch_first=batch_first, norm_first=norm_first)
    ours, theirs = twins(torch, make)
    src = _encoder_input(batch_first)
    tgt = _decoder_inputs(batch_first)[0]
    kw = {"tgt_mask": torch.nn.Transformer.generate_square_subsequent_mask(T).numpy(),
          "src_key_padding_mask": _kpm(N, S), "memory_key_padding_mask": _kpm(N, S),
          "src_mask": R.standard_normal((S, S))}
    compare(torch, ours, theirs, [src, tgt], lambda m, s, t, **k: m(s, t, **k), kw)
    # unbatched
    compare(torch, ours, theirs, [R.standard_normal((S, E)), R.standard_normal((T, E))],
            lambda m, s, t, **k: m(s, t, **k), {"tgt_mask": _causal_bool(T)})


def test_transformer_init_mask_and_errors(torch):
    ours = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                          dim_feedforward=16, rng=0)
    theirs = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                                  dim_feedforward=16)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, p in ours.named_parameters():  # torch's _reset_parameters: xavier-uniform
        if p.ndim > 1:
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            arr = _np(p)
            assert np.abs(arr).max() <= bound and np.abs(arr).max() > 0.5 * bound, name
    # the clones start equal, as torch's deep copies
    a, b = ours.decoder.layers[0].linear1.weight, ours.decoder.layers[1].linear1.weight
    assert a is not b
    m = nn.Transformer.generate_square_subsequent_mask(4)
    close(m, torch.nn.Transformer.generate_square_subsequent_mask(4), "mask")
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=dg.float32).dtype == np.float32
    for lib, model in ((dg, ours), (torch, theirs)):
        with pytest.raises(RuntimeError):  # batch sizes differ
            model(lib.zeros((5, 2, 8)), lib.zeros((4, 3, 8)))
        with pytest.raises(RuntimeError):  # feature size is not d_model
            model(lib.zeros((5, 2, 6)), lib.zeros((4, 2, 6)))
        with pytest.raises(RuntimeError):  # the activation names only relu and gelu
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16)
        with pytest.raises(RuntimeError):  # is_causal is a hint: it needs the mask
            layer(lib.zeros((5, 2, 8)), is_causal=True)


def test_dropout_is_switched_by_train_and_eval(torch):
    def make(lib):
        return lib.nn.TransformerEncoderLayer(E, H, 12, dropout=0.5, batch_first=True)
    ours, theirs = twins(torch, make)
    x = _encoder_input(True)
    ours.train()
    first, second = _np(ours(dg.tensor(x))), _np(ours(dg.tensor(x)))
    assert not np.allclose(first, second)  # a fresh mask on every call
    theirs.eval()
    expected = theirs(torch.tensor(x)).detach().numpy()
    assert not np.allclose(first, expected)
    ours.eval()
    assert all(not m.training for m in ours.modules())
    close(ours(dg.tensor(x)), expected, "eval output")
    # the clones of a stack draw from one generator, so their masks differ
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 12, dropout=0.5, rng=3), 2)
    assert enc.layers[0].dropout._rng is enc.layers[1].dropout._rng


# ---------------------------------------------------------------- MultiheadAttention, completed

MHA_CASES = {
    "kdim_vdim": ({"kdim": 3, "vdim": 6}, {}),
    "kdim_vdim_masks": ({"kdim": 3, "vdim": 6}, {"attn_mask": R.standard_normal((T, S)),
                                                 "key_padding_mask": _kpm(N, S)}),
    "bias_kv": ({"add_bias_kv": True}, {"key_padding_mask": _kpm(N, S),
                                         "attn_mask": R.standard_normal((T, S)) > 0.9}),
    "zero_attn": ({"add_zero_attn": True}, {"key_padding_mask": _kpm(N, S),
                                            "attn_mask": R.standard_normal((N * H, T, S))}),
    "bias_kv_zero_attn_heads": ({"add_bias_kv": True, "add_zero_attn": True},
                                {"average_attn_weights": False}),
    "no_bias_causal_no_weights": ({"bias": False}, {"need_weights": False, "is_causal": True,
                                                     "attn_mask": np.triu(np.ones((T, S), bool), 1)}),
    "all": ({"kdim": 5, "vdim": 3, "add_bias_kv": True, "add_zero_attn": True, "bias": False},
            {"attn_mask": R.standard_normal((T, S)), "key_padding_mask": _kpm(N, S)}),
}


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("case", list(MHA_CASES))
@pytest.mark.parametrize("which", [0, 1], ids=["output", "weights"])
def test_multihead_attention_new_arguments_match_torch(torch, batch_first, case, which):
    init, kw = MHA_CASES[case]
    if which == 1 and kw.get("need_weights") is False:
        pytest.skip("no weights to compare")
    kd, vd = init.get("kdim", E), init.get("vdim", E)
    ours, theirs = twins(torch, lambda lib: lib.nn.MultiheadAttention(
        E, H, batch_first=batch_first, **init), scale=1.0)
    if "kdim" in init:
        assert ours.in_proj_weight is None and ours.k_proj_weight.shape == (E, kd)
    shapes = [(T, E), (S, kd), (S, vd)]
    xs = [R.standard_normal((N,) + s if batch_first else (s[0], N, s[1])) for s in shapes]
    compare(torch, ours, theirs, xs, lambda m, *a, **k: m(*a, **k)[which], kw)


@pytest.mark.parametrize("init", [{}, {"kdim": 3, "vdim": 6, "add_bias_kv": True,
                                       "add_zero_attn": True}])
def test_multihead_attention_unbatched_self_attention_and_weights(torch, init):
    kd, vd = init.get("kdim", E), init.get("vdim", E)
    ours, theirs = twins(torch, lambda lib: lib.nn.MultiheadAttention(E, H, **init), scale=1.0)
    xs = [R.standard_normal((T, E)), R.standard_normal((S, kd)), R.standard_normal((S, vd))]
    kw = {"attn_mask": R.standard_normal((H, T, S)), "key_padding_mask": _kpm(1, S)[0],
          "average_attn_weights": False}
    for which in (0, 1):
        compare(torch, ours, theirs, xs, lambda m, *a, **k: m(*a, **k)[which], kw)
        ours.zero_grad()
        theirs.zero_grad()
    if not init:  # self-attention: query is key is value (one packed product)
        kw = {"attn_mask": _causal_bool(T), "is_causal": True, "need_weights": False}
        compare(torch, ours, theirs, [R.standard_normal((N, T, E)).transpose(1, 0, 2).copy()],
                lambda m, x, **k: m(x, x, x, **k)[0], kw)


def test_multihead_attention_init_and_errors(torch):
    m = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, rng=0)
    t = torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)
    assert list(m.state_dict()) == list(t.state_dict())
    assert {k: v.shape for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert np.abs(_np(m.k_proj_weight)).max() <= np.sqrt(6 / (8 + 3))
    assert not _np(m.in_proj_bias).any()
    for lib, mod in ((dg, m), (torch, t)):
        q, k, v = lib.zeros((4, 2, 8)), lib.zeros((5, 2, 3)), lib.zeros((5, 2, 5))
        with pytest.raises(RuntimeError):  # the 2-D mask must be (L, S + 1 for bias_k)
            mod(q, k, v, attn_mask=lib.zeros((4, 4)))
        with pytest.raises(AssertionError):  # key padding of the wrong batch
            mod(q, k, v, key_padding_mask=lib.zeros((3, 5), dtype=lib.bool))
        with pytest.raises(RuntimeError):
            mod(q, k, v, is_causal=True)


def test_functional_multi_head_attention_forward_matches_torch(torch):
    rng = np.random.default_rng(5)
    w = {"in_proj_weight": rng.standard_normal((3 * E, E)), "in_proj_bias": rng.standard_normal(3 * E),
         "bias_k": rng.standard_normal((1, 1, E)), "bias_v": rng.standard_normal((1, 1, E)),
         "out_proj_weight": rng.standard_normal((E, E)), "out_proj_bias": rng.standard_normal(E),
         "q_proj_weight": rng.standard_normal((E, E)), "k_proj_weight": rng.standard_normal((E, 3)),
         "v_proj_weight": rng.standard_normal((E, 6))}
    q, k3, v6 = rng.standard_normal((T, N, E)), rng.standard_normal((S, N, 3)), rng.standard_normal((S, N, 6))
    k, v = rng.standard_normal((S, N, E)), rng.standard_normal((S, N, E))
    for separate in (False, True):
        for need in (True, False):
            inputs = [q, k3, v6] if separate else [q, k, v]

            def run(lib, *xs):
                f = F.multi_head_attention_forward if lib is dg else torch.nn.functional.multi_head_attention_forward
                ws = {n: (lib.tensor(a) if lib is dg else torch.tensor(a)) for n, a in w.items()}
                kw = dict(key_padding_mask=lib.tensor(_kpm(N, S)),
                          attn_mask=lib.tensor(np.triu(np.ones((T, S), bool), 1)),
                          need_weights=need, average_attn_weights=False,
                          use_separate_proj_weight=separate,
                          q_proj_weight=ws["q_proj_weight"], k_proj_weight=ws["k_proj_weight"],
                          v_proj_weight=ws["v_proj_weight"])
                return f(*xs, E, H, ws["in_proj_weight"], ws["in_proj_bias"], ws["bias_k"],
                         ws["bias_v"], True, 0.0, ws["out_proj_weight"], ws["out_proj_bias"], **kw)
            a = [dg.tensor(x, requires_grad=True) for x in inputs]
            b = [torch.tensor(x, requires_grad=True) for x in inputs]
            oa, ob = run(dg, *a), run(torch, *b)
            close(oa[0], ob[0], "output")
            if need:
                close(oa[1], ob[1], "weights")
            else:
                assert oa[1] is None and ob[1] is None
            (oa[0] ** 2).sum().backward()
            (ob[0] ** 2).sum().backward()
            for x, y in zip(a, b):
                close(x.grad, y.grad, "input gradient")


@pytest.mark.parametrize("kw", [{"enable_gqa": True}, {"enable_gqa": True, "is_causal": True},
                                {"scale": 0.3, "attn_mask": "float"}, {"attn_mask": "bool"},
                                {"dropout_p": 0.0, "is_causal": True}])
def test_scaled_dot_product_attention_matches_torch(torch, kw):
    rng = np.random.default_rng(7)
    gqa = kw.get("enable_gqa", False)
    xs = [rng.standard_normal(s) for s in ((2, 4, 5, 3), (2, 2 if gqa else 4, 6, 3),
                                           (2, 2 if gqa else 4, 6, 7))]
    mask = {"float": rng.standard_normal((5, 6)), "bool": rng.standard_normal((4, 5, 6)) > -0.5}
    kw = {k: (mask[v] if k == "attn_mask" else v) for k, v in kw.items()}
    a = [dg.tensor(x, requires_grad=True) for x in xs]
    b = [torch.tensor(x, requires_grad=True) for x in xs]
    oa = F.scaled_dot_product_attention(*a, **lib_args(dg, kw))
    ob = torch.nn.functional.scaled_dot_product_attention(*b, **lib_args(torch, kw))
    close(oa, ob, "output")
    (oa ** 2).sum().backward()
    (ob ** 2).sum().backward()
    for x, y in zip(a, b):
        close(x.grad, y.grad, "gradient")
    if gqa:  # torch needs enable_gqa for unequal head counts; so does duograd
        for lib, f in ((dg, F.scaled_dot_product_attention),
                       (torch, torch.nn.functional.scaled_dot_product_attention)):
            with pytest.raises(RuntimeError):
                f(lib.ones((2, 4, 5, 3)), lib.ones((2, 2, 6, 3)), lib.ones((2, 2, 6, 3)))
            with pytest.raises(RuntimeError):
                f(lib.ones((2, 3, 5, 3)), lib.ones((2, 2, 6, 3)), lib.ones((2, 2, 6, 3)),
                  enable_gqa=True)


# ---------------------------------------------------------------- examples/tiny_gpt.py

def test_tiny_gpt_trains_like_torch_from_the_same_weights(torch):
    theirs_ns, ours_ns = run_example("tiny_gpt", "torch", module="tiny_gpt"), run_example("tiny_gpt", "duograd", module="tiny_gpt")
    torch.manual_seed(0)
    theirs = theirs_ns["make_model"]()
    ours = ours_ns["make_model"]()
    result = ours.load_state_dict(theirs.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    expected = theirs_ns["train"](theirs, steps=20)
    got = ours_ns["train"](ours, steps=20)
    assert len(got) == len(expected) == 20
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    assert expected[-1] < expected[0]
    assert ours_ns["generate"](ours, "the ", 8) == theirs_ns["generate"](theirs, "the ", 8)


# ---------------------------------------------------------------- F.gelu (exact): speed rows, accuracy

def _gelu_points() -> np.ndarray:
    rng = np.random.default_rng(11)
    tiny = 10.0 ** rng.uniform(-300, -1, 60) * rng.choice([-1.0, 1.0], 60)
    return np.concatenate([rng.standard_normal(300) * 3, rng.uniform(-37, 10, 240), tiny,
                           [0.0, -0.0, -2.0, -1.0, 1e-300, -36.9]])


def test_gelu_exact_is_exact_to_1e_15_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = _gelu_points()
    ref = []
    for v in x:
        m = mpmath.mpf(float(v))
        cdf, pdf = mpmath.ncdf(m), mpmath.npdf(m)
        ref.append((float(m * cdf), float(cdf + m * pdf), float(abs(cdf) + abs(m * pdf))))
    ref = np.array(ref)
    t = dg.tensor(x, requires_grad=True)
    out = F.gelu(t)
    out.backward(dg.ones(len(x)))
    value = _np(out)
    scale = np.where(ref[:, 0] == 0, 1.0, np.abs(ref[:, 0]))
    assert (np.abs(value - ref[:, 0]) / scale).max() < 1e-15
    # the derivative Phi + x phi, to 1e-15 of |Phi| + |x phi| (it crosses 0 near x = -0.75)
    assert (np.abs(_np(t.grad) - ref[:, 1]) / ref[:, 2]).max() < 1e-15


def test_gelu_matches_torch_where_torch_is_exact_and_at_special_values(torch):
    x = _gelu_points()
    x = np.concatenate([x[x > -1.0], [np.inf, -np.inf, np.nan]])
    for dtype, tol in ((np.float64, 1e-15), (np.float32, 1e-6)):
        # (torch's float32 kernel gives gelu(inf) = nan; duograd gives inf, as torch's float64)
        xs = x.astype(dtype) if dtype == np.float64 else x[x != np.inf].astype(dtype)
        a, b = dg.tensor(xs, requires_grad=True), torch.from_numpy(xs.copy()).requires_grad_()
        oa, ob = F.gelu(a), torch.nn.functional.gelu(b)
        oa.backward(dg.ones(len(xs), dtype=dtype))
        ob.backward(torch.ones(len(xs), dtype=ob.dtype))
        # (the derivative crosses 0 near x = -0.75: there it is compared to its scale, ~1)
        for mine, theirs, atol in ((oa, ob, tol * 1e-3), (a.grad, b.grad, tol)):
            mine, theirs = _np(mine), _np(theirs)
            assert mine.dtype == theirs.dtype == dtype
            np.testing.assert_allclose(mine, theirs, rtol=tol, atol=atol)


def test_gelu_second_order_and_layouts():
    rng = np.random.default_rng(12)
    x = dg.tensor(np.concatenate([rng.standard_normal(6) * 2, [-3.5, -2.5, 0.0, 4.0]]),
                  requires_grad=True)
    assert dg.gradcheck(F.gelu, (x,))
    assert dg.gradgradcheck(F.gelu, (x,))
    # the second derivative phi(x) (2 - x^2), against the closed form
    (g,) = dg.autograd.grad(F.gelu(x).sum(), x, create_graph=True)
    (h,) = dg.autograd.grad(g.sum(), x)
    xv = _np(x)
    np.testing.assert_allclose(_np(h), np.exp(-xv * xv / 2) / np.sqrt(2 * np.pi) * (2 - xv * xv),
                               rtol=1e-13, atol=1e-15)
    # a transposed (non-contiguous) input gives the contiguous input's values bit for bit
    arr = rng.standard_normal((4, 5, 6)) * 4
    a = dg.tensor(arr.transpose(2, 0, 1), requires_grad=True)
    b = dg.tensor(arr.transpose(2, 0, 1).copy(), requires_grad=True)
    F.gelu(a).sum().backward()
    F.gelu(b).sum().backward()
    assert np.array_equal(_np(F.gelu(a)), _np(F.gelu(b)))
    assert np.array_equal(_np(a.grad), _np(b.grad))


def test_gelu_tanh_matches_torch_and_has_second_order(torch):
    rng = np.random.default_rng(13)
    x = np.concatenate([rng.standard_normal(400) * 3, [0.0, -0.0, 1e-310, -50.0, 50.0, np.nan]])
    for dtype, tol in ((np.float64, 1e-14), (np.float32, 2e-6)):
        xs = x.astype(dtype)
        a, b = dg.tensor(xs, requires_grad=True), torch.from_numpy(xs.copy()).requires_grad_()
        oa, ob = F.gelu(a, approximate="tanh"), torch.nn.functional.gelu(b, approximate="tanh")
        oa.backward(dg.ones(len(xs), dtype=dtype))
        ob.backward(torch.ones(len(xs), dtype=ob.dtype))
        # (1 + tanh k cancels for x << 0, in both: there the two agree to their scale, ~1)
        for mine, theirs in ((oa, ob), (a.grad, b.grad)):
            mine, theirs = _np(mine), _np(theirs)
            assert mine.dtype == theirs.dtype == dtype
            np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)
    xt = dg.tensor(rng.standard_normal(10) * 2, requires_grad=True)
    f = lambda v: F.gelu(v, approximate="tanh")  # noqa: E731
    assert dg.gradcheck(f, (xt,))
    assert dg.gradgradcheck(f, (xt,))
    assert f(dg.tensor(0.5)).shape == ()
