"""The NumPy backend's fusion pass (``duograd.capture.fusion``) and the derived-array memo
(``duograd.capture.memo``): every result equals the unfused replay's and the eager run's
bit for bit (the bytes, so -0.0 and nan payloads count), in float32 and float64, and
what leaves a replay is never a buffer a later call overwrites."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import duograd as dg
from duograd import capture, nn, optim
from duograd.capture import fusion, memo
from duograd.nn import functional as F


@contextlib.contextmanager
def _fusion(on: bool):
    old = fusion.ENABLED
    fusion.ENABLED = on
    try:
        yield
    finally:
        fusion.ENABLED = old


def _bits(a, b) -> None:
    a = a.detach().numpy() if isinstance(a, dg.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, dg.Tensor) else np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), (a, b)


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _fused_labels(fast) -> list[str]:
    prog = next(iter(fast.programs.values()))
    prog.code  # (finished)
    return [ins.label for ins in prog.instructions if hasattr(ins.f, "outs")]


def _three_ways(fn, calls, expect_fused=True):
    """fn eagerly, compiled with fusion and compiled without, on each call's arguments:
    every result the same bytes. Returns the fused program's fused labels."""
    fused, plain = dg.compile(fn), dg.compile(fn)
    for args in calls:
        want = _flat(fn(*args))
        with _fusion(True):
            got = _flat(fused(*args))
        with _fusion(False):
            ref = _flat(plain(*args))
        for w, g, r in zip(want, got, ref):
            _bits(g, w)
            _bits(r, w)
    labels = _fused_labels(fused)
    assert not _fused_labels(plain)
    if expect_fused:
        assert labels, "nothing was fused"
    return labels


def _rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_hand_made_chain_is_one_kernel_and_bit_identical(dtype):
    def f(x, y):
        t = dg.tensor(x)
        return ((t * 0.5 + dg.tensor(y)).tanh() * 3.0 - 1.0).exp()
    calls = [(_rng(i).standard_normal((5, 7)).astype(dtype),
              _rng(10 + i).standard_normal((5, 7)).astype(dtype)) for i in range(4)]
    labels = _three_ways(f, calls)
    assert labels == ["mul+add+tanh+mul+sub+exp"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(37, 29), (1001,)])
def test_transcendentals_written_in_place_on_long_arrays(dtype, shape):
    """Arrays long enough for NumPy's SIMD loops (odd lengths: a scalar tail too), every
    result after the first written into an array the chain already holds."""
    def f(x):
        t = dg.tensor(x)
        a = (t * 0.7).exp().log().tanh().sin().cos().sqrt() + 0.25
        return (a.sigmoid() * a).abs() - 1e-3
    calls = [(_rng(i).standard_normal(shape).astype(dtype),) for i in range(3)]
    labels = _three_ways(f, calls)
    assert max(label.count("+") for label in labels) >= 6  # (sigmoid is not one ufunc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcasting_inside_the_chain(dtype):
    def f(x, row, col):
        t = dg.tensor(x)
        return ((t * dg.tensor(row) + dg.tensor(col)).relu() / dg.tensor(col).exp()).sqrt()
    calls = [(_rng(i).standard_normal((4, 6)).astype(dtype),
              _rng(20 + i).standard_normal((1, 6)).astype(dtype),
              _rng(40 + i).standard_normal((4, 1)).astype(dtype)) for i in range(3)]
    _three_ways(f, calls)


def test_float32_with_python_scalars_bool_masks_and_a_float64_operand():
    def f(x, m, d):
        t = dg.tensor(x)
        a = (t * 1e-3 + 0.1) * dg.tensor(m)    # float32 * bool: float32
        return a * 3.0, (a + dg.tensor(d)) * 2.0  # float32 + float64: float64
    calls = [(_rng(i).standard_normal((3, 4)).astype(np.float32), _rng(i).random((3, 4)) > 0.5,
              _rng(i).standard_normal((3, 4))) for i in range(3)]
    _three_ways(f, calls)


def test_a_chain_interrupted_by_a_reduction_fuses_on_each_side():
    def f(x):
        t = dg.tensor(x)
        a = (t * 2.0 + 1.0).exp()
        s = a.sum(1, keepdim=True)        # not elementwise: the chain stops here
        return ((a / s) * 3.0 - t).abs()
    labels = _three_ways(f, [(_rng(i).standard_normal((4, 5)),) for i in range(3)])
    assert len(labels) == 2


@pytest.mark.parametrize("n", [3, 64])  # 64: large enough to be written in place
def test_an_intermediate_that_is_also_returned_or_read_later(n):
    def f(x, y):
        t = dg.tensor(x)
        a = t * 2.0 + 1.0                  # returned, and read by a matmul after the chain
        b = (a.exp() - 1.0) * 0.5
        c = (x @ dg.tensor(y)) + 1.0       # the product dies in its sum: written in place
        d = (c * 0.5).tanh()               # c is read after d's chain too
        return a, b, a @ dg.tensor(y), d, c.sum()
    calls = [(_rng(i).standard_normal((n, n)), _rng(9 + i).standard_normal((n, n))) for i in range(3)]
    _three_ways(f, calls)
    fast = dg.compile(f)
    x, y = calls[0]
    fast(x, y)
    a1, b1, _, d1, _ = fast(x, y)
    keep = [v.detach().numpy().copy() for v in (a1, b1, d1)]
    fast(np.zeros((n, n)), y)               # results of an earlier call are never overwritten
    for v, k in zip((a1, b1, d1), keep):
        _bits(v, k)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_chains_write_into_dying_products(dtype):
    """Products (matmul, linear) whose only readers are a chain are written over in place
    (results of at least fusion.INPLACE_MIN bytes); one read again after the chain is not."""
    def f(x, w, v):
        h = (dg.tensor(x) @ dg.tensor(w) + 0.5).relu()       # dies in its chain
        k = dg.tensor(x) @ dg.tensor(v)                      # read by two chains
        return (h * 2.0 - 1.0).exp(), (k * 3.0).tanh(), (k + 1.0).abs()
    calls = [(_rng(i).standard_normal((96, 64)).astype(dtype),
              _rng(5 + i).standard_normal((64, 80)).astype(dtype),
              _rng(7 + i).standard_normal((64, 80)).astype(dtype)) for i in range(3)]
    _three_ways(f, calls)


@pytest.mark.parametrize("reuse", [None, True, False])
def test_every_buffer_policy_gives_the_same_bits_and_fresh_results(reuse):
    def f(x):
        t = dg.tensor(x)
        return ((t * 2.0).exp() + 1.0).log(), (t - 1.0).abs() * 0.25
    fast, plain = dg.compile(f, reuse_buffers=reuse), dg.compile(f, reuse_buffers=reuse)
    outs = []
    for i in range(4):
        x = _rng(i).standard_normal((8, 8))
        with _fusion(False):
            ref = plain(x)
        got = fast(x)
        for g, r, w in zip(got, ref, f(x)):
            _bits(g, w)
            _bits(r, w)
        outs.append((got, [g.detach().numpy().copy() for g in got]))
    for got, saved in outs:  # nothing handed out was written by a later call
        for g, s in zip(got, saved):
            _bits(g, s)


def test_in_place_writes_inside_the_step():
    def f(x):
        h = dg.tensor(x) * 2.0
        h.add_(1.0)                        # an in-place write between two chains
        g = (h.exp() * 0.5 + 1.0)
        g.mul_(3.0)
        return (g - h).relu(), h
    _three_ways(f, [(_rng(i).standard_normal((4, 4)),) for i in range(3)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("act", ["tanh", "sigmoid", "relu"])
@pytest.mark.parametrize("batch", [12, 300])  # 300 x 64: the products written in place
def test_an_mlp_step_activation_and_derivative(dtype, act, batch):
    """A training step (forward, cross-entropy, backward, Adam or SGD): the fused program's
    parameters, gradients and losses equal the unfused program's and eager's bit for bit."""
    def make(seed=0):
        model = nn.Sequential(nn.Linear(5, 64), getattr(nn, act.capitalize() if act != "relu" else "ReLU")(),
                              nn.Linear(64, 3)).to(dtype)
        opt = optim.Adam(model.parameters(), lr=0.01) if act != "sigmoid" else \
            optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(X, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss
        return model, step
    dg.manual_seed(0)
    m0, eager = make()
    state = m0.state_dict()
    m1, s1 = make()
    m2, s2 = make()
    m1.load_state_dict(state)
    m2.load_state_dict(state)
    fused, plain = dg.compile(s1), dg.compile(s2)
    y = np.arange(batch) % 3
    for i in range(4):
        X = _rng(i).standard_normal((batch, 5)).astype(dtype)
        want = eager(dg.tensor(X), y)
        with _fusion(True):
            got = fused(X, y)
        with _fusion(False):
            ref = plain(X, y)
        _bits(got, want)
        _bits(ref, want)
        for p0, p1, p2 in zip(m0.parameters(), m1.parameters(), m2.parameters()):
            _bits(p1, p0)
            _bits(p2, p0)
            _bits(p1.grad, p0.grad)
    assert _fused_labels(fused)


def test_the_switch_turns_the_pass_off(monkeypatch):
    def f(x):
        return (dg.tensor(x) * 2.0 + 1.0).exp()
    monkeypatch.setenv("DUOGRAD_FUSION", "0")
    assert not fusion.enabled()
    off = dg.compile(f)
    off(np.ones(3))
    off(np.ones(3))
    assert not _fused_labels(off)
    monkeypatch.delenv("DUOGRAD_FUSION")
    assert fusion.enabled()
    on = dg.compile(f)
    on(np.ones(3))
    on(np.ones(3))
    assert _fused_labels(on) == ["mul+add+exp"]


def test_a_failing_kernel_inside_a_fused_one_names_the_chain():
    def f(x):
        return (dg.tensor(x) * 2.0).log() + 1.0
    fast = dg.compile(f)
    fast(np.ones(3))
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="mul"):
            fast(np.zeros(3))


def test_fuse_leaves_a_group_that_cannot_move_alone():
    """A unit check of the pass on hand-made instructions: a kernel between two members
    that reads the first one's result keeps them apart."""
    from duograd.capture.instructions import CALL1, CALL2, Instr

    def k(f, a, b, o, reads, label):
        return Instr(CALL2 if b is not None else CALL1, f, a, b, o, reads, label, "kernel", None)
    code = [k(np.exp, 0, None, 1, [0], "exp"),
            k(np.negative, 1, None, 2, [1], "neg"),
            k(np.add, 1, 0, 3, [1, 0], "add")]
    shapes = {1: (3,), 2: (3,), 3: (3,)}
    dtypes = {1: np.dtype("f8"), 2: np.dtype("f8"), 3: np.dtype("f8")}
    # 1 is read by neg and add (both elementwise): all three fuse
    out = fusion.fuse(code, {2, 3}, shapes, dtypes)
    assert [i.label for i in out] == ["exp+neg+add"]
    # with neg replaced by a non-elementwise kernel between the two, they stay apart
    code[1] = Instr(CALL1, np.sort, 1, None, 2, [1], "sort", "kernel", None)
    assert [i.label for i in fusion.fuse(code, {2, 3}, shapes, dtypes)] == ["exp", "sort", "add"]


# ---------------------------------------------------------------- the derived-array memo

def test_targets_changed_in_place_between_calls_are_read_again():
    model = nn.Linear(4, 3)

    def step(X, y):
        return F.cross_entropy(model(dg.tensor(X)), y)
    fast = dg.compile(step)
    X = _rng(0).standard_normal((6, 4))
    y = np.array([0, 1, 2, 0, 1, 2])
    for i in range(4):
        _bits(fast(X, y), step(X, y))
        y[i] = (y[i] + 1) % 3               # the same array object, new values
    _bits(fast(X, y), step(X, y))
    prog = next(iter(fast.programs.values()))
    kept = [ins.f for ins in prog.instructions if isinstance(ins.f, memo.Memo)]
    assert kept and all(m.value is None or not m.value.flags.writeable for m in kept)


def test_a_bad_target_still_raises_on_a_replay():
    model = nn.Linear(4, 3)
    fast = dg.compile(lambda X, y: F.cross_entropy(model(dg.tensor(X)), y))
    X, y = np.ones((2, 4)), np.array([0, 1])
    fast(X, y)
    fast(X, y)
    with pytest.raises(IndexError, match="out of range"):
        fast(X, np.array([0, 7]))


def test_a_derived_array_that_leaves_the_step_is_not_kept():
    """A view of a derived array returned: a new array every call, writable by the caller."""
    fast = dg.compile(lambda y: F.one_hot(dg.tensor(y), 3).reshape(-1, 1) * 1, )
    leave = dg.compile(lambda y: F.one_hot(dg.tensor(y), 3).reshape(-1, 1))
    y = np.array([0, 2])
    for f in (fast, leave):
        f(y)
        b = f(y)
        b.data[0, 0] = 5                   # the caller's own array: writing is fine
        _bits(f(y), np.array([[1, 0, 0, 0, 0, 1]]).T)
        _bits(f(np.array([1, 1])), np.array([[0, 1, 0, 0, 1, 0]]).T)
    prog = next(iter(leave.programs.values()))
    assert not [ins for ins in prog.instructions
                if isinstance(ins.f, memo.Memo) and ins.out in prog.template[1:]]


def test_memo_keeps_only_results_that_are_not_its_source():
    m = memo.Memo(lambda a: a)              # hands its source back: never kept
    y = np.arange(3)
    assert m(y) is y and m.value is None
    big = memo.Memo(lambda a: a + 1)
    z = np.zeros(memo.LIMIT // 8 + 1)
    big(z)
    assert big.value is None               # too large to compare: computed every time
    assert capture.fusion is fusion


def test_a_derive_whose_keywords_hold_an_array_is_never_kept():
    """An array in a derive's keywords may be changed in place between calls (a class
    weight once was one): such a kernel is computed on every call. The same function
    with plain keywords is kept."""
    import functools
    fixed = functools.partial(F._one_hot, num_classes=4)
    assert memo.keepable(fixed)
    assert not memo.keepable(functools.partial(F._one_hot, num_classes=np.ones(4)))
    assert not memo.keepable(lambda a: a)      # not one of nn.functional's label functions


def test_a_class_weight_changed_in_place_between_calls_is_seen():
    """The weights stay a Tensor the step reads (never a kept derive): a change in place
    between calls is seen."""
    model = nn.Linear(4, 3)
    w = dg.tensor([1.0, 2.0, 3.0])

    def step(X, y):
        return F.cross_entropy(model(dg.tensor(X)), y, weight=w)
    fast = dg.compile(step)
    X, y = _rng(0).standard_normal((6, 4)), np.array([0, 1, 2, 0, 1, 2])
    for i in range(3):
        _bits(fast(X, y), step(X, y))
        w._data[i] = 0.5                    # the same array, new values
    _bits(fast(X, y), step(X, y))
