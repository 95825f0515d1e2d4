"""The surname language models (experiments/names.py) against independent truth.

- The split partitions the census file 80/10/10; the counted bigram equals PyTorch's count.
- The neural bigram's gradient is softmax - one-hot weighted by the counts (closed form),
  and training reaches the counted bigram's dev NLL within 1e-3 nats.
- The MLP and the transformer trained 20 steps (through dg.compile) agree with the same
  models in PyTorch float64 from the same weights on the same batches: losses within
  1e-9, parameters within 1e-7.
- The causal mask holds exactly on the transformer; its attention module passes gradcheck
  and gradgradcheck; sampling is the same eagerly and compiled, and works untrained.
- Bad input: a context of 0, a checkpoint of another vocabulary.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import duograd as dg  # noqa: E402
from duograd.nn import functional as F  # noqa: E402
from experiments import names as N  # noqa: E402
from experiments.names_models import CausalSelfAttention, CharMLP, Transformer  # noqa: E402

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def parts():
    return N.split(N.load_surnames())


def test_split_is_a_partition_of_the_census_file(parts):
    words = N.load_surnames()
    assert [len(parts[k]) for k in ("train", "dev", "test")] == [
        int(0.8 * len(words)), int(0.1 * len(words)),
        len(words) - int(0.8 * len(words)) - int(0.1 * len(words))]
    assert sorted(parts["train"] + parts["dev"] + parts["test"]) == sorted(words)
    assert N.checksum(parts) == N.checksum(N.split(words))
    assert N.checksum(parts) != N.checksum(N.split(words, seed=N.SPLIT_SEED + 1))


def test_counted_bigram_equals_pytorchs_count(parts):
    ours = N.counted_bigram(N.bigram_counts(parts["train"]))
    np.testing.assert_allclose(ours, N.torch_counted_bigram(parts["train"]), rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.exp(ours).sum(axis=1), 1.0, rtol=0, atol=1e-14)


def test_neural_bigram_gradient_is_softmax_minus_one_hot_weighted_by_counts():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 50, (N.VOCAB, N.VOCAB)).astype(float)
    weights = (counts + 1) / (counts + 1).sum()
    Wv = rng.standard_normal((N.VOCAB, N.VOCAB))
    W = dg.tensor(Wv, requires_grad=True)
    (-(dg.tensor(weights) * F.log_softmax(W, dim=1)).sum()).backward()
    soft = np.exp(Wv - Wv.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    # each row: (its total weight) * softmax - (the weights of its observed next symbols)
    closed = weights.sum(axis=1, keepdims=True) * soft - weights
    np.testing.assert_allclose(W.grad.numpy(), closed, rtol=0, atol=1e-17)


def test_neural_bigram_reaches_the_counted_bigram_within_1e_3_nats(parts):
    counts = N.bigram_counts(parts["train"])
    learned, curve = N.train_neural_bigram(counts)
    gap = abs(N.nll(learned, parts["dev"]) - N.nll(N.counted_bigram(counts), parts["dev"]))
    assert gap < 1e-3
    assert curve[-1] < curve[0]


@pytest.fixture(scope="module")
def small_data(parts):
    sub = {k: v[:1500] for k, v in parts.items()}
    return {"mlp": {k: N.windows(v, N.MLP_CONFIG["context"]) for k, v in sub.items()},
            "transformer": {k: N.sequences(v, N.TF_CONFIG["context"]) for k, v in sub.items()}}


@pytest.mark.parametrize("kind", ["mlp", "transformer"])
def test_training_agrees_with_pytorch_float64_over_20_steps(kind, small_data, monkeypatch):
    cfg = dict(N.SIZES_CONFIG["smoke"], mlp_steps=20, tf_steps=20, mlp_batch=64, tf_batch=16,
               compare_steps=20, curve_dev=50)
    monkeypatch.setitem(N.SIZES_CONFIG, "test20", cfg)
    r = N.train_pair(kind, 1, "test20", small_data[kind], compile_steps=True)
    assert len(r["curve"]) == len(r["torch_curve"]) == 20
    assert r["curve"][-1] < r["curve"][0]
    assert r["curve_max_diff"] <= 1e-9
    assert r["param_max_diff"] <= 1e-7
    assert abs(r["dev_nll"] - r["torch_dev_nll"]) <= 1e-9


def test_compiled_training_equals_eager_training(small_data, monkeypatch):
    cfg = dict(N.SIZES_CONFIG["smoke"], tf_steps=6, tf_batch=8, compare_steps=6, curve_dev=20)
    monkeypatch.setitem(N.SIZES_CONFIG, "test6", cfg)
    runs = [N.train_pair("transformer", 2, "test6", small_data["transformer"], with_torch=False,
                         compile_steps=c) for c in (False, True)]
    np.testing.assert_allclose(runs[0]["curve"], runs[1]["curve"], rtol=0, atol=1e-12)


def test_causal_mask_later_characters_never_change_earlier_outputs(parts):
    model = Transformer(rng=3)
    assert N.causal_mask_diff(model, parts["dev"][:16]) == 0.0
    # and the check can fail: attention without the mask leaks the future
    model.blocks[0].attn.forward = _unmasked(model.blocks[0].attn)
    assert N.causal_mask_diff(model, parts["dev"][:16]) > 0.0


def _unmasked(att):
    def forward(x):
        B, T, C = x.shape
        q, k, v = att.qkv(x).split(C, dim=-1)
        q, k, v = (t.reshape(B, T, att.heads, C // att.heads).movedim(2, 1) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v)
        return att.proj(y.movedim(1, 2).reshape(B, T, C))
    return forward


def test_attention_module_passes_gradcheck_and_gradgradcheck():
    att = CausalSelfAttention(4, 2, np.random.default_rng(0))
    x = dg.tensor(np.random.default_rng(1).standard_normal((1, 3, 4)), requires_grad=True)
    f = lambda x: att(x)  # noqa: E731
    assert dg.gradcheck(f, [x])
    assert dg.gradgradcheck(f, [x])


@pytest.mark.parametrize("kind", ["mlp", "transformer"])
def test_sampling_untrained_is_the_same_eager_and_compiled(kind):
    model = N.make_model(kind, 0)
    eager = N.sample(N.next_logits_fn(kind, model), 8, seed=5)
    compiled = N.sample(N.next_logits_fn(kind, model, compile_forward=True), 8, seed=5)
    assert eager == compiled
    assert len(eager) == 8 and all(set(w) <= set(N.ALPHABET[1:]) and len(w) <= 15 for w in eager)
    assert eager != N.sample(N.next_logits_fn(kind, model), 8, seed=6)


def test_twin_forward_matches_pytorch():
    from experiments.names_models import torch_twin
    for model, x in ((CharMLP(context=3, rng=0), np.random.default_rng(0).integers(0, 27, (5, 3))),
                     (Transformer(rng=0), np.random.default_rng(0).integers(0, 27, (3, 16)))):
        theirs = torch_twin(model)(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(model(x).detach().numpy(), theirs, rtol=0, atol=1e-12)


def test_windows_and_sequences_cover_every_predicted_symbol():
    X, y = N.windows(["abc", "d"], 3)
    assert X.shape == (6, 3) and y.tolist() == [1, 2, 3, 0, 4, 0]
    X, Y = N.sequences(["abc", "d"], 5)
    assert int((Y != N.IGNORE).sum()) == 6
    assert (X[:, 1:][Y[:, :-1] != N.IGNORE] == Y[:, :-1][Y[:, :-1] != N.IGNORE]).all()


# ---------------------------------------------------------------- bad input

def test_context_of_zero_fails_clearly(capsys):
    with pytest.raises(SystemExit):
        N.main(["--context", "0", "--steps", "0"])
    assert "--context must be a positive number" in capsys.readouterr().err
    with pytest.raises(ValueError, match="context must be a positive"):
        CharMLP(context=0)
    with pytest.raises(ValueError, match="context must be a positive"):
        N.windows(["ab"], 0)
    with pytest.raises(SystemExit):
        N.main(["--model", "transformer", "--context", "5", "--steps", "0"])
    assert "too short" in capsys.readouterr().err


def test_checkpoint_of_another_vocabulary_fails_clearly(tmp_path, capsys):
    other = CharMLP(vocab=30, context=4, rng=0)
    path = other.save(tmp_path / "other.npz")
    model = N.make_model("mlp", 0)
    before = {k: v.copy() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match="vocabulary mismatch.*30 symbols.*27"):
        N.check_checkpoint(model, path)
    assert all((model.state_dict()[k] == v).all() for k, v in before.items())
    with pytest.raises(SystemExit):
        N.main(["--load", str(path), "--steps", "0"])
    assert "vocabulary mismatch" in capsys.readouterr().err


def test_checkpoint_round_trip_and_cli_samples_untrained(tmp_path, capsys):
    path = tmp_path / "m.npz"
    assert N.main(["--steps", "2", "--sample", "3", "--save", str(path)]) == 0
    assert N.main(["--load", str(path), "--steps", "0", "--sample", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:4] == out[6:9]  # the loaded model samples the saved model's names
