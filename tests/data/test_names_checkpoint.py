"""``examples/names_checkpoint.py`` run as written (duograd) and with its one
``import duograd as torch`` line replaced by ``import torch``: the same batches from a
``DataLoader(num_workers=2)`` and the same initial weights give the same losses (float64,
1e-9); duograd's checkpoint loads in real torch and torch's run continues from it as
duograd's does; a resumed duograd run continues the uninterrupted one bit for bit."""

from __future__ import annotations


import numpy as np
import pytest

from twins import IMPORT, run_example

pytestmark = pytest.mark.oracle

LINES = (IMPORT, ("\nfrom duograd.utils.data import DataLoader, Dataset\n",
                  "\nfrom torch.utils.data import DataLoader, Dataset\n"))


def _namespace(lib: str) -> dict:
    return run_example("names_checkpoint", lib, lines=LINES)




def _twins(torch):
    tns, dns = _namespace("torch"), _namespace("duograd")
    torch.manual_seed(0)
    tdata, ddata = tns["NamesDataset"](tns["NAMES"]), dns["NamesDataset"](dns["NAMES"])
    tmodel = tns["CharMLP"](tdata.vocab_size).double()
    dmodel = dns["CharMLP"](ddata.vocab_size).double()
    assert list(dmodel.state_dict()) == list(tmodel.state_dict())
    dmodel.load_state_dict(tmodel.state_dict())
    return tns, dns, tdata, ddata, tmodel, dmodel


def test_the_program_trains_like_its_torch_twin(torch, one_torch_thread):
    tns, dns, tdata, ddata, tmodel, dmodel = _twins(torch)
    topt = torch.optim.Adam(tmodel.parameters(), lr=1e-2)
    dopt = dns["torch"].optim.Adam(dmodel.parameters(), lr=1e-2)
    tl = tns["train"](tmodel, topt, tns["make_loader"](tdata), 20)
    dl = dns["train"](dmodel, dopt, dns["make_loader"](ddata), 20)
    assert len(dl) == 20 and tl[-1] < tl[0]
    np.testing.assert_allclose(dl, tl, rtol=1e-9, atol=1e-12)


def test_its_checkpoint_loads_in_torch_and_resumes_there(torch, one_torch_thread, tmp_path):
    tns, dns, tdata, ddata, tmodel, dmodel = _twins(torch)
    dg = dns["torch"]
    dopt = dg.optim.Adam(dmodel.parameters(), lr=1e-2)
    dns["train"](dmodel, dopt, dns["make_loader"](ddata, num_workers=0), 10)
    path = str(tmp_path / "ckpt.pt")
    dns["save_checkpoint"](path, dmodel, dopt, 10)

    # real torch reads duograd's file: the same weights, and its run goes on from them
    ck = torch.load(path)
    assert ck["step"] == 10 and isinstance(ck["model"]["head.weight"], torch.Tensor)
    for name, value in dmodel.state_dict().items():
        np.testing.assert_array_equal(ck["model"][name].numpy(), np.asarray(value))
    topt = torch.optim.Adam(tmodel.parameters(), lr=1e-2)
    assert tns["resume"](path, tmodel, topt) == 10
    t_next = tns["train"](tmodel, topt, tns["make_loader"](tdata, num_workers=0), 10, start=10)

    # duograd resumes from the same file; and its uninterrupted run is the same, bit for bit
    dmodel2 = dns["CharMLP"](ddata.vocab_size).double()
    dopt2 = dg.optim.Adam(dmodel2.parameters(), lr=1e-2)
    assert dns["resume"](path, dmodel2, dopt2) == 10
    d_next = dns["train"](dmodel2, dopt2, dns["make_loader"](ddata, num_workers=0), 10, start=10)
    d_on = dns["train"](dmodel, dopt, dns["make_loader"](ddata, num_workers=0), 10, start=10)
    assert d_next == d_on
    np.testing.assert_allclose(d_next, t_next, rtol=1e-9, atol=1e-12)


def test_multinomial_samples_are_names_of_the_vocabulary():
    dns = _namespace("duograd")
    dns["torch"].manual_seed(0)
    data = dns["NamesDataset"](dns["NAMES"])
    model = dns["CharMLP"](data.vocab_size).double()
    names = dns["sample"](model, data, n=8)
    assert len(names) == 8 and all(set(n) <= set("".join(dns["NAMES"])) for n in names)
    assert names == dns["sample"](model, data, n=8)        # the same generator seed, the same draws


def test_main_runs():
    _namespace("duograd")["main"]()
