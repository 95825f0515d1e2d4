"""The recurrent layers and cells against torch.nn: each built with the same arguments and
loaded from the torch module's ``state_dict()`` gives torch's outputs, final states, input
gradients and parameter gradients (float64 to 1e-12, float32 to float32 precision), over
layers 1/2, bidirectional, batch_first, bias False, proj_size, unbatched input, with and
without initial states, tanh and relu; parameter names, shapes, order and the default
initialisation's bounds are torch's; the cells and the sequence primitives' hand-written
VJPs pass ``dg.gradgradcheck``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg
from duograd import nn

pytestmark = [pytest.mark.oracle, pytest.mark.filterwarnings("ignore:LSTM with projections")]

T, B, IN, H = 4, 3, 3, 5

# (class, kwargs); every row is run batched and unbatched, with and without initial states
LAYERS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "batch_first": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "batch_first": True, "bias": False}),
    ("GRU", {"bidirectional": True, "num_layers": 2}),
]


def _pair(torch, name, kwargs, dtype="float64"):
    torch.manual_seed(0)
    tl = getattr(torch.nn, name)(IN, H, **kwargs).to(getattr(torch, dtype))
    dl = getattr(nn, name)(IN, H, **kwargs, dtype=np.dtype(dtype))
    sd = tl.state_dict()
    assert list(dl.state_dict()) == list(sd)
    assert [n for n, _ in dl.named_parameters()] == [n for n, _ in tl.named_parameters()]
    dl.load_state_dict(sd)
    return tl, dl


def _state_shapes(kwargs, unbatched):
    D = 2 if kwargs.get("bidirectional") else 1
    L = kwargs.get("num_layers", 1)
    P = kwargs.get("proj_size", 0) or H
    lead = (D * L,) if unbatched else (D * L, B)
    return lead + (P,), lead + (H,)


def _run(lib, layer, x, states, is_lstm):
    """(outputs to compare, scalar loss): the loss weighs every result by fixed randoms."""
    if states is None:
        out, hn = layer(x)
    else:
        out, hn = layer(x, tuple(states) if is_lstm else states[0])
    results = [out] + (list(hn) if is_lstm else [hn])
    rng = np.random.default_rng(7)
    loss = sum((r * lib.tensor(rng.standard_normal(tuple(r.shape)), dtype=r.dtype)).sum()
               for r in results)
    return results, loss


def _compare(torch, name, kwargs, unbatched, with_h0, dtype, tol):
    tl, dl = _pair(torch, name, kwargs, dtype)
    rng = np.random.default_rng(1)
    bf = kwargs.get("batch_first", False)
    shape = (T, IN) if unbatched else ((B, T, IN) if bf else (T, B, IN))
    x = rng.standard_normal(shape).astype(dtype)
    is_lstm = name == "LSTM"
    hshape, cshape = _state_shapes(kwargs, unbatched)
    states = None
    if with_h0:
        states = [rng.standard_normal(hshape).astype(dtype)]
        if is_lstm:
            states.append(rng.standard_normal(cshape).astype(dtype))
    tx = torch.tensor(x, requires_grad=True)
    dx = dg.tensor(x, requires_grad=True)
    ts = None if states is None else [torch.tensor(s, requires_grad=True) for s in states]
    ds = None if states is None else [dg.tensor(s, requires_grad=True) for s in states]
    tres, tloss = _run(torch, tl, tx, ts, is_lstm)
    dres, dloss = _run(dg, dl, dx, ds, is_lstm)
    for a, b in zip(dres, tres):
        assert a.shape == tuple(b.shape) and a.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    tloss.backward()
    dloss.backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    if states is not None:
        for a, b in zip(ds, ts):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    tp = dict(tl.named_parameters())
    for n, p in dl.named_parameters():
        assert p.grad.dtype == np.dtype(dtype), n
        np.testing.assert_allclose(p.grad.numpy(), tp[n].grad.numpy(), rtol=tol, atol=tol, err_msg=n)


@pytest.mark.parametrize("unbatched", [False, True], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_h0", [False, True], ids=["zeros", "h0"])
@pytest.mark.parametrize("name,kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LAYERS)])
def test_layer_matches_torch_in_float64(torch, one_torch_thread, name, kwargs, unbatched, with_h0):
    _compare(torch, name, kwargs, unbatched, with_h0, "float64", 1e-12)


@pytest.mark.parametrize("name,kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LAYERS)])
def test_layer_matches_torch_in_float32(torch, one_torch_thread, name, kwargs):
    _compare(torch, name, kwargs, False, True, "float32", 2e-5)


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}), ("LSTMCell", {}),
         ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("unbatched", [False, True], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_h0", [False, True], ids=["zeros", "h0"])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-6)])
@pytest.mark.parametrize("name,kwargs", CELLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CELLS)])
def test_cell_matches_torch(torch, one_torch_thread, name, kwargs, dtype, tol, unbatched, with_h0):
    torch.manual_seed(0)
    tc = getattr(torch.nn, name)(IN, H, **kwargs).to(getattr(torch, dtype))
    dc = getattr(nn, name)(IN, H, **kwargs, dtype=np.dtype(dtype))
    assert list(dc.state_dict()) == list(tc.state_dict())
    dc.load_state_dict(tc.state_dict())
    rng = np.random.default_rng(2)
    lead = () if unbatched else (B,)
    x = rng.standard_normal(lead + (IN,)).astype(dtype)
    n_states = 2 if name == "LSTMCell" else 1
    states = [rng.standard_normal(lead + (H,)).astype(dtype) for _ in range(n_states)] if with_h0 else None
    tx, dx = torch.tensor(x, requires_grad=True), dg.tensor(x, requires_grad=True)
    ts = None if states is None else [torch.tensor(s, requires_grad=True) for s in states]
    ds = None if states is None else [dg.tensor(s, requires_grad=True) for s in states]

    def run(lib, cell, x, s):
        hx = None if s is None else (tuple(s) if n_states == 2 else s[0])
        out = cell(x, hx)
        outs = list(out) if n_states == 2 else [out]
        w = np.random.default_rng(3)
        return outs, sum((o * lib.tensor(w.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum()
                         for o in outs)

    tout, tl = run(torch, tc, tx, ts)
    dout, dl = run(dg, dc, dx, ds)
    for a, b in zip(dout, tout):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    tl.backward()
    dl.backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    for a, b in zip(ds or [], ts or []):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    tp = dict(tc.named_parameters())
    for n, p in dc.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tp[n].grad.numpy(), rtol=tol, atol=tol, err_msg=n)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_second_derivatives(name):
    cell = getattr(nn, name)(2, 3, rng=0)
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    h = dg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    params = [p for p in cell.parameters()]

    def f(x, h, *ps):
        for p, v in zip(params, ps):
            setattr(cell, [n for n, q in cell.named_parameters() if q is p][0], v)
        try:
            out = cell(x, (h, h * 0.5) if name == "LSTMCell" else h)
        finally:
            for n, p in zip([n for n, _ in cell.named_parameters()], params):
                setattr(cell, n, p)
        return sum(o.sum() for o in out) if name == "LSTMCell" else out
    assert dg.gradgradcheck(f, (x, h, *[dg.tensor(p.detach().numpy(), requires_grad=True) for p in params]))


def _scan_inputs(rng, kind, masked, proj=False, bias=True):
    Tn, Bn, Hn, Pn = 3, 2, 2, (1 if proj else 2)
    G = {"rnn": 1, "lstm": 4, "gru": 3}[kind]
    t = lambda *s: dg.tensor(rng.standard_normal(s) * 0.8, requires_grad=True)  # noqa: E731
    xs = [t(Tn, Bn, G * Hn), t(Bn, Pn)]
    if kind == "lstm":
        xs.append(t(Bn, Hn))
    xs.append(t(G * Hn, Pn))
    if proj:
        xs.append(t(Pn, Hn))
    if kind == "gru" and bias:
        xs.append(t(G * Hn))
    if masked:
        xs.append(dg.tensor(np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])[:, :, None]))
    return xs


@pytest.mark.parametrize("masked", [False, True], ids=["full", "masked"])
@pytest.mark.parametrize("kind,kw", [("rnn", {"nonlinearity": "tanh"}), ("lstm", {"proj": False}),
                                     ("lstm", {"proj": True}), ("gru", {"bias": True}),
                                     ("gru", {"bias": False})])
def test_sequence_primitive_first_and_second_derivatives(kind, kw, masked):
    """The hand-written back-propagation through time against finite differences, to
    first and second order, every output column weighted (the gate columns too)."""
    from duograd.nn import _scan
    prim = getattr(_scan, f"{kind}_scan_p")
    xs = _scan_inputs(np.random.default_rng(0), kind, masked, proj=kw.get("proj", False),
                      bias=kw.get("bias", True))
    f = lambda *a: prim(*a, masked=masked, **kw)  # noqa: E731
    assert dg.gradcheck(f, xs)
    assert dg.gradgradcheck(f, xs)


def test_relu_rnn_sequence_primitive_gradients():
    from duograd.nn import _scan
    xs = _scan_inputs(np.random.default_rng(3), "rnn", True)
    assert dg.gradcheck(lambda *a: _scan.rnn_scan_p(*a, nonlinearity="relu", masked=True), xs)


def test_layer_second_derivatives_through_the_sequence():
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True, rng=0)
    x = dg.tensor(np.random.default_rng(0).standard_normal((3, 2, 2)), requires_grad=True)
    assert dg.gradgradcheck(lambda x: lstm(x)[0], (x,))


def test_parameters_initialisation_and_names_are_torch_s(torch):
    lstm = nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=4, rng=0)
    tl = torch.nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=4)
    assert [(n, p.shape) for n, p in lstm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tl.named_parameters()]
    assert [[tuple(w.shape) for w in ws] for ws in tl.all_weights] == \
        [[w.shape for w in ws] for ws in lstm.all_weights]
    bound = 1 / math.sqrt(8)
    every = np.concatenate([p.detach().numpy().ravel() for p in lstm.parameters()])
    assert every.min() >= -bound and every.max() <= bound and every.max() > 0.9 * bound
    assert lstm.weight_ih_l0.dtype == np.float64
    assert nn.GRU(2, 3, dtype=dg.float32).weight_hh_l0.dtype == np.float32
    lstm.flatten_parameters()
    assert repr(nn.LSTM(3, 4, num_layers=2)) == repr(torch.nn.LSTM(3, 4, num_layers=2))


def test_dropout_between_layers_as_torch_at_the_extremes(torch):
    """dropout=1 in training zeroes every input of layer 2 in both libraries; in eval
    mode dropout is off."""
    torch.manual_seed(0)
    tl = torch.nn.GRU(IN, H, num_layers=2, dropout=1.0).double()
    dl = nn.GRU(IN, H, num_layers=2, dropout=1.0)
    dl.load_state_dict(tl.state_dict())
    x = np.random.default_rng(0).standard_normal((T, B, IN))
    for mode in ("train", "eval"):
        getattr(tl, mode)()
        getattr(dl, mode)()
        np.testing.assert_allclose(dl(dg.tensor(x))[0].detach().numpy(),
                                   tl(torch.tensor(x))[0].detach().numpy(), atol=1e-12)


def test_bad_arguments_raise_as_torch(torch):
    for make in (lambda lib: lib.nn.RNN(2, 3, nonlinearity="sigmoid"),
                 lambda lib: lib.nn.GRU(2, 3, proj_size=1),
                 lambda lib: lib.nn.LSTM(2, 3, proj_size=3),
                 lambda lib: lib.nn.LSTM(2, 3, dropout=1.5)):
        with pytest.raises(ValueError):
            make(torch)
        with pytest.raises(ValueError):
            make(dg)
    lstm, tl = nn.LSTM(2, 3), torch.nn.LSTM(2, 3).double()
    for bad, err in (((4, 2, 5), RuntimeError), ((4,), ValueError), ((1, 4, 2, 2), ValueError)):
        with pytest.raises(err):
            tl(torch.zeros(bad, dtype=torch.float64))
        with pytest.raises(err):
            lstm(dg.zeros(bad))
    with pytest.raises(RuntimeError):
        tl(torch.zeros(4, 2, 2, dtype=torch.float64), (torch.zeros(1, 3, 3, dtype=torch.float64),) * 2)
    with pytest.raises(RuntimeError, match="hidden size"):
        lstm(dg.zeros((4, 2, 2)), (dg.zeros((1, 3, 3)), dg.zeros((1, 3, 3))))


def test_a_compiled_step_replays_the_eager_one_bit_for_bit():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, rng=0)

    def step(x):
        lstm.zero_grad()
        out, (h, c) = lstm(x)
        loss = (out * out).sum() + h.sum() + c.sum()
        loss.backward()
        return loss

    compiled = dg.compile(step)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = dg.tensor(rng.standard_normal((5, 2, 3)))
        loss = compiled(x).item()
        grads = [p.grad.numpy().copy() for p in lstm.parameters()]
        assert step(x).item() == loss
        for g, p in zip(grads, lstm.parameters()):
            np.testing.assert_array_equal(g, p.grad.numpy())


def test_forward_mode_through_a_layer_raises_clearly():
    lstm = nn.LSTM(2, 3, rng=0)
    x = dg.ones((4, 1, 2))
    with pytest.raises(NotImplementedError, match="lstm_scan"):
        dg.func.jvp(lambda x: lstm(x)[0], (x,), (x,))
