"""``examples/sine_lstm.py`` run twice, as written (duograd) and with its one
``import duograd as torch`` line replaced by ``import torch``, from the same initial
weights (the torch model's ``state_dict()`` loaded into the duograd one): the 20 training
losses agree to 1e-9 (float64)."""

from __future__ import annotations


import numpy as np
import pytest

from twins import run_example

pytestmark = pytest.mark.oracle

def test_sine_lstm_trains_like_torch(torch, one_torch_thread):
    tns, dns = run_example("sine_lstm", "torch"), run_example("sine_lstm", "duograd")
    torch.manual_seed(0)
    tmodel = tns["SinePredictor"]().double()
    dmodel = dns["SinePredictor"]().double()
    assert list(dmodel.state_dict()) == list(tmodel.state_dict())
    dmodel.load_state_dict(tmodel.state_dict())
    tlosses = tns["train"](tmodel, tns["make_waves"](), 20)
    dlosses = dns["train"](dmodel, dns["make_waves"](), 20)
    assert len(dlosses) == 20 and tlosses[-1] < tlosses[0]
    np.testing.assert_allclose(dlosses, tlosses, rtol=1e-9, atol=1e-12)
    # and the free-running prediction after training
    with torch.no_grad():
        tahead = tmodel(tns["make_waves"]()[:, :-1], future=5).numpy()
    ahead = dmodel(dns["make_waves"]()[:, :-1], future=5).detach().numpy()
    np.testing.assert_allclose(ahead, tahead, rtol=1e-9, atol=1e-10)
