"""``examples/word_lstm_lm.py`` run twice, as written (duograd) and with its one
``import duograd as torch`` line replaced by ``import torch``, from the same initial
weights (the torch model's ``state_dict()`` loaded into the duograd one) and dropout 0:
the 20 training losses of truncated BPTT with gradient clipping and a decaying SGD rate
agree to 1e-9 (float64), and so do the weights after training."""

from __future__ import annotations


import numpy as np
import pytest

from twins import run_example

pytestmark = pytest.mark.oracle

def test_word_lstm_lm_trains_like_torch(torch, one_torch_thread):
    tns, dns = run_example("word_lstm_lm", "torch"), run_example("word_lstm_lm", "duograd")
    tcorpus, dcorpus = tns["Corpus"](), dns["Corpus"]()
    assert tcorpus.words == dcorpus.words
    torch.manual_seed(0)
    tmodel = tns["WordLM"](len(tcorpus.words), dropout=0.0).double()
    dmodel = dns["WordLM"](len(dcorpus.words), dropout=0.0).double()
    # torch's state_dict lists the tied weight under both names; duograd's lists it once
    # (under its first name), and loads torch's, both names filling the one parameter
    assert [k for k in tmodel.state_dict() if k != "decoder.weight"] == list(dmodel.state_dict())
    dmodel.load_state_dict(tmodel.state_dict())
    # the decoder's weight is still the embedding's after loading (tied), and counted once
    assert dmodel.decoder.weight is dmodel.encoder.weight
    assert len(list(dmodel.parameters())) == len(list(tmodel.parameters()))
    # 20 steps of bptt 6 over 22 rows wrap round the corpus (a fresh hidden state) once
    tlosses = tns["train"](tmodel, tcorpus, 20)
    dlosses = dns["train"](dmodel, dcorpus, 20)
    assert len(dlosses) == 20 and tlosses[-1] < tlosses[0]
    np.testing.assert_allclose(dlosses, tlosses, rtol=1e-9, atol=1e-12)
    tstate = tmodel.state_dict()
    for name, value in dmodel.state_dict().items():  # the tied one is encoder.weight
        np.testing.assert_allclose(np.asarray(value), tstate[name].numpy(),
                                   rtol=1e-9, atol=1e-12, err_msg=name)


def test_word_lstm_lm_with_dropout_runs_the_same_program(torch):
    """With dropout on (whose masks the two libraries draw differently) a closed form:
    with every weight zero the logits are all zero whatever the masks, so the first
    loss is log(vocabulary size)."""
    dns = run_example("word_lstm_lm", "duograd")
    corpus = dns["Corpus"]()
    model = dns["WordLM"](len(corpus.words), dropout=0.5).double()
    for p in model.parameters():
        p.data.fill_(0.0)
    losses = dns["train"](model, corpus, 1)
    assert losses[0] == pytest.approx(np.log(len(corpus.words)), rel=1e-12)
