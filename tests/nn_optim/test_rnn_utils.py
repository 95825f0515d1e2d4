"""``nn.utils.rnn`` against ``torch.nn.utils.rnn`` (values, index tensors, gradients through
the padding), and the recurrent layers on packed sequences: outputs, final states and
gradients equal to torch's and to running each sequence alone at its own length (the
padded computation with the padding cut away by hand)."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import nn
from duograd.nn.utils import rnn as R

pytestmark = pytest.mark.oracle

LENGTHS = [2, 5, 3, 5]  # unsorted, with a tie


def _seqs(lib, rng, lengths, feat=(3,)):
    arrs = [rng.standard_normal((n,) + feat) for n in lengths]
    return arrs, [lib.tensor(a, requires_grad=True) for a in arrs]


def _weights(shape, seed=5):
    return np.random.default_rng(seed).standard_normal(shape)


def test_nn_utils_is_still_the_old_module_too():
    from duograd.nn.utils import clip_grad_norm_, load_torch_state_dict, torch_state_dict  # noqa: F401
    assert nn.utils.rnn is R and callable(nn.utils.clip_grad_norm_)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_and_its_gradient_match_torch(torch, batch_first, padding_side):
    rng = np.random.default_rng(0)
    arrs, ds = _seqs(dg, rng, LENGTHS, (2, 3))
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    d = R.pad_sequence(ds, batch_first=batch_first, padding_value=-2.5, padding_side=padding_side)
    t = torch.nn.utils.rnn.pad_sequence(ts, batch_first=batch_first, padding_value=-2.5,
                                        padding_side=padding_side)
    assert d.shape == tuple(t.shape)
    np.testing.assert_array_equal(d.detach().numpy(), t.detach().numpy())
    w = _weights(d.shape)
    (d * dg.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    for a, b in zip(ds, ts):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("as_tensor", [False, True], ids=["list", "tensor"])
def test_pack_padded_then_pad_packed_match_torch(torch, batch_first, enforce_sorted, as_tensor):
    lengths = sorted(LENGTHS, reverse=True) if enforce_sorted else LENGTHS
    rng = np.random.default_rng(1)
    Tn, Bn = max(lengths), len(lengths)
    x = rng.standard_normal((Bn, Tn, 3) if batch_first else (Tn, Bn, 3))
    dx, tx = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    dl = dg.tensor(lengths) if as_tensor else lengths
    tl = torch.tensor(lengths) if as_tensor else lengths
    dp = R.pack_padded_sequence(dx, dl, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, tl, batch_first=batch_first,
                                                 enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(dp.data.detach().numpy(), tp.data.detach().numpy())
    np.testing.assert_array_equal(dp.batch_sizes.numpy(), tp.batch_sizes.numpy())
    for a, b in ((dp.sorted_indices, tp.sorted_indices), (dp.unsorted_indices, tp.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    dpad, dlen = R.pad_packed_sequence(dp, batch_first=batch_first, padding_value=7.0, total_length=Tn + 2)
    tpad, tlen = torch.nn.utils.rnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=7.0,
                                                        total_length=Tn + 2)
    np.testing.assert_array_equal(dpad.detach().numpy(), tpad.detach().numpy())
    np.testing.assert_array_equal(dlen.numpy(), tlen.numpy())
    assert dlen.dtype == np.int64
    w = _weights(dpad.shape)
    ((dpad * dg.tensor(w)).sum() + (dp.data ** 2).sum()).backward()
    ((tpad * torch.tensor(w)).sum() + (tp.data ** 2).sum()).backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=1e-15, atol=1e-15)


def test_pack_sequence_unpack_and_unpad_match_torch(torch):
    rng = np.random.default_rng(2)
    arrs, ds = _seqs(dg, rng, LENGTHS)
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    dp = R.pack_sequence(ds, enforce_sorted=False)
    tp = torch.nn.utils.rnn.pack_sequence(ts, enforce_sorted=False)
    np.testing.assert_array_equal(dp.data.detach().numpy(), tp.data.detach().numpy())
    du, tu = R.unpack_sequence(dp), torch.nn.utils.rnn.unpack_sequence(tp)
    assert [u.shape for u in du] == [tuple(u.shape) for u in tu]
    for a, b in zip(du, tu):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    padded = rng.standard_normal((5, 4, 3))
    dn = R.unpad_sequence(dg.tensor(padded), dg.tensor(LENGTHS))
    tn = torch.nn.utils.rnn.unpad_sequence(torch.tensor(padded), torch.tensor(LENGTHS))
    for a, b in zip(dn, tn):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    w = [_weights(u.shape, i) for i, u in enumerate(du)]
    sum((u * dg.tensor(v)).sum() for u, v in zip(du, w)).backward()
    sum((u * torch.tensor(v)).sum() for u, v in zip(tu, w)).backward()
    for a, b in zip(ds, ts):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    with pytest.raises(RuntimeError):
        torch.nn.utils.rnn.pack_sequence(ts)
    with pytest.raises(RuntimeError, match="decreasing"):
        R.pack_sequence(ds)
    with pytest.raises(ValueError):
        torch.nn.utils.rnn.pad_packed_sequence(tp, total_length=2)
    with pytest.raises(ValueError, match="total_length"):
        R.pad_packed_sequence(dp, total_length=2)


LAYERS = [("RNN", {}), ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
          ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 2}),
          ("GRU", {"num_layers": 2, "bidirectional": True}), ("GRU", {"bias": False})]


@pytest.mark.parametrize("with_h0", [False, True], ids=["zeros", "h0"])
@pytest.mark.parametrize("name,kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LAYERS)])
def test_layer_on_packed_sequences_matches_torch_and_each_sequence_alone(torch, one_torch_thread,
                                                                         name, kwargs, with_h0):
    IN, H = 3, 4
    torch.manual_seed(0)
    tl = getattr(torch.nn, name)(IN, H, **kwargs).double()
    dl = getattr(nn, name)(IN, H, **kwargs)
    dl.load_state_dict(tl.state_dict())
    rng = np.random.default_rng(3)
    arrs, ds = _seqs(dg, rng, LENGTHS, (IN,))
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    is_lstm = name == "LSTM"
    D = 2 if kwargs.get("bidirectional") else 1
    L = kwargs.get("num_layers", 1)
    P = kwargs.get("proj_size", 0) or H
    h0s = [rng.standard_normal((D * L, len(LENGTHS), P))]
    if is_lstm:
        h0s.append(rng.standard_normal((D * L, len(LENGTHS), H)))

    def run(lib, layer, seqs):
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        hx = None
        if with_h0:
            hx = tuple(lib.tensor(h) for h in h0s) if is_lstm else lib.tensor(h0s[0])
        out, hn = layer(packed, hx)
        assert type(out).__name__ == "PackedSequence"
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        results = [padded] + (list(hn) if is_lstm else [hn])
        loss = sum((r * lib.tensor(_weights(tuple(r.shape), 9 + i))).sum() for i, r in enumerate(results))
        return results, loss

    dres, dloss = run(dg, dl, ds)
    tres, tloss = run(torch, tl, ts)
    for a, b in zip(dres, tres):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    dloss.backward()
    tloss.backward()
    for a, b in zip(ds, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)
    tp = dict(tl.named_parameters())
    grads = {n: p.grad.numpy().copy() for n, p in dl.named_parameters()}
    for n, g in grads.items():
        np.testing.assert_allclose(g, tp[n].grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=n)

    # each sequence alone, unbatched, at its own length: the same outputs and states, and
    # the gradients of the packed loss are the sums of the per-sequence ones
    dl.zero_grad()
    Tmax = max(LENGTHS)
    padded_w = _weights(tuple(dres[0].shape), 9)
    state_w = [_weights(tuple(r.shape), 10 + i) for i, r in enumerate(dres[1:])]
    for b, n in enumerate(LENGTHS):
        x = dg.tensor(arrs[b], requires_grad=True)
        hx = None
        if with_h0:
            hx = tuple(dg.tensor(h[:, b]) for h in h0s) if is_lstm else dg.tensor(h0s[0][:, b])
        out, hn = dl(x, hx)
        hn = list(hn) if is_lstm else [hn]
        np.testing.assert_allclose(out.detach().numpy(), dres[0].detach().numpy()[b, :n], atol=1e-13)
        assert not dres[0].detach().numpy()[b, n:Tmax].any()  # zero padding after the end
        for s, ref in zip(hn, dres[1:]):
            np.testing.assert_allclose(s.detach().numpy(), ref.detach().numpy()[:, b], atol=1e-13)
        loss = (out * dg.tensor(padded_w[b, :n])).sum() + \
            sum((s * dg.tensor(w[:, b])).sum() for s, w in zip(hn, state_w))
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), ds[b].grad.numpy(), atol=1e-12)
    for n, p in dl.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[n], rtol=1e-11, atol=1e-12, err_msg=n)
