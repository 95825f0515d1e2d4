"""Python numbers passed to a ``dg.compile``d function (issues 21 and 32), as torch.compile's
automatic dynamic shapes: static at the first value of a signature, an input of the program
from its second distinct value on (recorded once more, with the number as a 0-d Tensor
stand-in), so a learning-rate sweep records twice. A number whose value decides the program
(a branch, a dim, a shape, a constant computed in ``math``) is found at that second
recording and keyed by its value for good (it records again per value);
``static_argnums``/``static_argnames`` ask for that. Every call is compared with an eager
twin of the same state, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from bitwise import same as _same

LRS = [0.1, 0.05, 0.2, 0.013, 0.3, 1e-3, 0.7, 0.02, 0.15, 0.09, 0.5, 0.0]


def _twins(make, calls, **compile_kw):
    """``make()`` gives a step and a function listing its state; the step runs eagerly
    on one twin and compiled on another over ``calls`` (argument tuples); every result
    and every state array is compared bit for bit. Returns the compiled callable."""
    eager, eager_state = make()
    comp, comp_state = make()
    fast = dg.compile(comp, **compile_kw)
    for args in calls:
        want = eager(*[dg.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
        got = fast(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        for w, g in zip(want if isinstance(want, tuple) else (want,),
                        got if isinstance(got, tuple) else (got,)):
            _same(w, g)
        for w, g in zip(eager_state(), comp_state()):
            _same(w, g)
    return fast


def _sgd_world():
    rng = np.random.default_rng(0)
    W = dg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = dg.tensor(rng.standard_normal(2), requires_grad=True)

    def step(x, lr):
        W.grad = b.grad = None
        loss = ((x * lr) @ W + b).tanh().sum()
        loss.backward()
        with dg.no_grad():
            for p in (W, b):
                p -= lr * p.grad
        return loss
    return step, lambda: [W, W.grad, b, b.grad]


def _batches(n, shape=(4, 3), seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(n)]


def test_a_learning_rate_sweep_records_twice_and_equals_eager_at_every_value():
    calls = [(x, lr) for x, lr in zip(_batches(len(LRS)), LRS)]
    fast = _twins(_sgd_world, calls + calls[:3])
    assert fast.traces == 2   # static at the first value, an input from the second on


def test_a_sweep_given_by_keyword_records_twice():
    eager, es = _sgd_world()
    comp, cs = _sgd_world()
    fast = dg.compile(comp)
    for x, lr in zip(_batches(6), LRS):
        _same(eager(dg.tensor(x), lr=lr), fast(x, lr=lr))
        for a, b in zip(es(), cs()):
            _same(a, b)
    assert fast.traces == 2


def test_float32_tensors_times_a_float_argument():
    def make():
        w = dg.tensor(np.linspace(-1, 1, 5, dtype=np.float32), requires_grad=True)

        def step(x, s):
            w.grad = None
            y = (x * s + w * s).sin()
            y.sum().backward()
            return y
        return step, lambda: [w.grad]
    xs = [dg.tensor(x.astype(np.float32)) for x in _batches(5, (5,))]
    fast = _twins(make, [(x, s) for x, s in zip(xs, [0.1, 1.0 / 3, 2.5, -7.25, 1e-8])])
    assert fast.traces == 2
    assert fast(xs[0], 0.7).dtype == np.float32


def test_an_int_argument_used_as_a_value_is_an_input():
    def make():
        def step(x, k):
            return x * k + x ** 2 * k - k
        return step, lambda: []
    fast = _twins(make, [(x, k) for x, k in zip(_batches(5), [1, 2, -3, 0, 10 ** 6])])
    assert fast.traces == 2


@pytest.mark.parametrize("use", ["dim", "shape", "range", "slice"])
def test_an_int_argument_that_shapes_the_program_is_keyed_by_value(use):
    def make():
        def step(x, n):
            if use == "dim":
                return x.sum(dim=n)
            if use == "shape":
                return x.sum() + dg.zeros(n).sum() + dg.ones(n + 1).sum()
            if use == "range":
                out = x
                for _ in range(n):
                    out = out * 2
                return out
            return x[:n]
        return step, lambda: []
    ns = [0, 1, 0, 1, 1, 0] if use == "dim" else [1, 2, 3, 2, 1, 3]
    fast = _twins(make, [(x, n) for x, n in zip(_batches(len(ns)), ns)])
    assert fast.traces == len(set(ns))


@pytest.mark.parametrize("how", ["math.sqrt", "np.float64", "np.asarray", "dg.tensor", "round"])
def test_a_number_computed_from_the_argument_in_python_or_numpy_is_correct(how):
    conv = {"math.sqrt": math.sqrt, "np.float64": np.float64, "np.asarray": np.asarray,
            "dg.tensor": dg.tensor, "round": lambda v: round(v, 1)}[how]

    def make():
        def step(x, lr):
            return x * conv(lr)
        return step, lambda: []
    calls = [(x, lr) for x, lr in zip(_batches(len(LRS)), LRS)]
    fast = _twins(make, calls + calls[-4:])   # (the last ones are in the cache)
    if how == "dg.tensor":
        assert fast.traces == 2        # a tensor of the argument is derived from it: an input
    else:
        assert fast.traces == len(LRS)  # its value decides a constant: keyed by value


def test_a_python_branch_on_the_argument_is_correct_on_both_sides():
    def make():
        def step(x, lr):
            if lr > 0.1:
                return x * 2
            return x * lr
        return step, lambda: []
    calls = [(x, lr) for x, lr in zip(_batches(len(LRS)), LRS)]
    _twins(make, calls + calls)


def test_a_numpy_branch_on_the_argument_is_found_at_the_second_recording():
    def make():
        def step(x, lr):
            if np.float64(lr) > 0.1:   # NumPy reads the stand-in's value (a read)
                return x * 2.0
            return x * 3.0
        return step, lambda: []
    _twins(make, [(x, lr) for x, lr in zip(_batches(4), [0.05, 0.2, 0.01, 0.3])])


def test_python_arithmetic_on_the_argument_stays_an_input():
    """``lr * 0.5`` on the stand-in is a 0-d float64 product, the bits of Python's: an
    input (issue 21's design keyed it by value: 3 recordings)."""
    def make():
        w = dg.tensor([1.0, -2.0, 3.0], requires_grad=True)

        def step(x, lr):
            w.grad = None
            (w * x).sum().backward()
            with dg.no_grad():
                w.sub_(lr * 0.5 * w.grad)      # lr * 0.5 is a Python float
            return w * 1.0
        return step, lambda: [w]
    fast = _twins(make, [(x, lr) for x, lr in zip(_batches(4, (3,)), [0.1, 0.2, 0.1, 0.3])])
    assert fast.traces == 2


def test_python_arithmetic_that_numpy_may_round_otherwise_keys_it_by_value():
    def make():
        def step(x, lr):
            return x * round(lr * 3.0, 1) + x * lr ** 2   # round and pow: static
        return step, lambda: []
    fast = _twins(make, [(x, lr) for x, lr in zip(_batches(4, (3,)), [0.1, 0.2, 0.1, 0.35])])
    assert fast.traces == 3


def test_a_number_stored_by_fn_is_keyed_by_value_and_guarded_where_it_was_stored():
    """Stored into an optimizer's options (read by its update): static, and since a replay
    does not store it again, a program replays only right after its own recording (after
    a call with another value, going back to a value records again)."""
    def make():
        w = dg.tensor([1.0, -2.0, 3.0], requires_grad=True)
        opt = optim.SGD([w], lr=0.1, momentum=0.9)

        def step(x, lr):
            opt.zero_grad()
            opt.param_groups[0]["lr"] = lr
            (w * x).tanh().sum().backward()
            opt.step()
            return w * 1.0
        return step, lambda: [w, w.grad]
    fast = _twins(make, [(x, lr) for x, lr in zip(_batches(7, (3,)),
                                                  [0.1, 0.1, 0.2, 0.2, 0.1, 0.3, 0.2])])
    assert fast.traces == 5


def test_a_number_stored_as_an_attribute_is_the_plain_number_and_is_checked():
    class Scaler(nn.Module):
        def __init__(self):
            self.scale = 1.0

        def forward(self, x):
            return x * self.scale
    m = Scaler()

    def step(x, s):
        m.scale = s
        return m(x)
    fast = dg.compile(step)
    for s in (2.0, 2.0, 3.0, 2.0, 0.5):
        _same(fast(np.ones(2), s), np.full(2, s))
        assert type(m.scale) is float and m.scale == s
    m.scale = 7.0                      # changed outside fn: fn sets it again, so it is seen
    _same(fast(np.ones(2), 0.5), np.full(2, 0.5))


def test_a_returned_number_and_an_op_keyword_are_keyed_by_value():
    def make():
        def step(x, lr):
            return x.clamp(min=lr), lr
        return step, lambda: []
    eager = make()[0]
    fast = dg.compile(make()[0])
    for x, lr in zip(_batches(4), [0.1, 0.2, 0.1, -0.3]):
        (a, s), (b, t) = eager(dg.tensor(x), lr), fast(x, lr)
        _same(a, b)
        assert s == t and type(t) is float


def test_negative_zero_nan_and_inf_are_values_like_any_other():
    def make():
        def step(x, s):
            return x * s, (x + s).exp()
        return step, lambda: []
    vals = [1.0, -0.0, 0.0, float("nan"), float("inf"), -0.0]
    fast = _twins(make, [(x, v) for x, v in zip(_batches(len(vals)), vals)])
    assert fast.traces == 2


def test_static_argnums_and_argnames_key_the_numbers_by_value():
    def f(x, lr, scale=2.0):
        return x * lr * scale
    x = np.ones(3)
    for kw in (dict(static_argnums=1), dict(static_argnames="lr"), dict(static_argnums=(1,))):
        fast = dg.compile(f, **kw)
        for lr in (0.1, 0.2, 0.1, 0.3):
            _same(fast(x, lr), f(dg.tensor(x), lr))
            _same(fast(x, lr=lr), f(dg.tensor(x), lr=lr))
        assert fast.traces == 6   # three values, positional and keyword (two signatures)
    fast = dg.compile(f, static_argnames=("scale",))
    for s in (1.0, 2.0, 3.0):
        _same(fast(x, 0.5, scale=s), f(dg.tensor(x), 0.5, scale=s))
        _same(fast(x, 0.25, scale=s), f(dg.tensor(x), 0.25, scale=s))
        _same(fast(x, 0.125, scale=s), f(dg.tensor(x), 0.125, scale=s))
    assert fast.traces == 6   # per scale (a signature): lr static at 0.5, an input from 0.25
    with pytest.raises(ValueError, match="static_argnums"):
        dg.compile(f, static_argnums=-1)
    with pytest.raises(ValueError, match="static_argnames"):
        dg.compile(f, static_argnames=[1])


def test_a_bool_argument_is_a_flag_keyed_by_value():
    def make():
        def step(x, flag):
            return x * 2 if flag else x * 3
        return step, lambda: []
    fast = _twins(make, [(x, f) for x, f in zip(_batches(6), [True, False, True, False, True, True])])
    assert fast.traces == 2


def test_rechecks_of_a_sweep_do_not_raise():
    eager, es = _sgd_world()
    comp, cs = _sgd_world()
    fast = dg.compile(comp, recheck_every=2)
    for x, lr in zip(_batches(8), LRS):
        _same(eager(dg.tensor(x), lr), fast(x, lr))
        for a, b in zip(es(), cs()):
            _same(a, b)
    assert fast.traces == 2 and len(fast.programs) == 1   # (the static one is dropped)


def test_a_recheck_at_a_new_value_records_instead_of_raising():
    fast = dg.compile(lambda x, lr: dg.tensor(x) * math.sqrt(lr), recheck_every=1)
    for lr in (0.25, 0.25, 0.5, 0.5, 0.09):
        _same(fast(np.ones(2), lr), np.full(2, math.sqrt(lr)))


@pytest.mark.filterwarnings("ignore:divide by zero")
def test_a_keyword_computed_in_c_from_the_number_is_compared_by_its_bits():
    def make():
        def step(x, s):
            return x * 1.0 / x.clamp(min=math.copysign(0.0, s))
        return step, lambda: []
    _twins(make, [(x, s) for x, s in zip(_batches(4) , [1.0, -1.0, 2.0, -3.0])])


def test_two_number_arguments_one_static_one_input():
    def make():
        def step(x, lr, n):
            out = x * lr
            for _ in range(n):
                out = out + x
            return out
        return step, lambda: []
    calls = [(x, lr, n) for x, lr, n in zip(_batches(8), LRS, [1, 1, 2, 2, 1, 2, 1, 1])]
    fast = _twins(make, calls)
    assert fast.traces == 3   # (1, static), lr an input at (0.05, 1), then n static at 2


def test_a_module_trained_over_a_sweep_with_dropout_and_adam():
    """A whole training step whose forward scales by a number argument (and whose
    optimizer's options are its own): two recordings, eager's bits at every value."""
    def make():
        model = nn.MLP(3, [8, 2], rng=0)
        drop = nn.Dropout(0.25, rng=np.random.default_rng(5))
        opt = optim.Adam(model.parameters(), lr=0.01)

        def step(x, temperature):
            opt.zero_grad()
            loss = (drop(model(x)) / temperature).logsumexp(dim=1).mean()
            loss.backward()
            opt.step()
            return loss
        return step, lambda: [p for p in model.parameters()]
    fast = _twins(make, [(x, t) for x, t in zip(_batches(8, (6, 3)), [1.0, 0.5, 2.0, 0.25, 1.5,
                                                                      3.0, 1.0, 0.75])])
    assert fast.traces == 2


def test_a_host_steps_argument_and_a_dropout_probability_are_keyed_by_value():
    def make():
        model = nn.MLP(3, [6, 2], rng=1)
        opt = optim.SGD(model.parameters(), lr=0.1)
        drop = nn.Dropout(0.5, rng=np.random.default_rng(3))

        def step(x, max_norm, p):
            opt.zero_grad()
            drop.p = p                 # stored into the module: static, and checked
            h = drop(model(x))
            loss = (h * h).sum()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.step()
            return loss
        return step, lambda: [p for p in model.parameters()]
    calls = [(x, m, p) for x, m, p in zip(_batches(6, (5, 3)), [1.0, 1.0, 0.5, 0.5, 1.0, 0.25],
                                          [0.2, 0.2, 0.2, 0.5, 0.5, 0.2])]
    _twins(make, calls)


# ---------------------------------------------------------------- the stand-in (issue 32)

def test_torch_promotes_a_dimensioned_float32_tensor_with_a_0d_float64_tensor_to_float32():
    """The stand-in of a float argument is a 0-d float64 Tensor: times a float32 tensor it
    gives float32, the bits of the tensor times the Python float (torch as the oracle)."""
    torch = pytest.importorskip("torch")
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    for v in (0.1, 1.0 / 3, -7.25, 1e-8):
        want = (torch.from_numpy(x) * torch.tensor(v, dtype=torch.float64)).numpy()
        got = (dg.tensor(x) * dg.tensor(v, dtype=dg.float64)).numpy()
        assert want.dtype == got.dtype == np.float32
        assert got.tobytes() == want.tobytes() == (dg.tensor(x) * v).numpy().tobytes()


def test_a_0d_float32_tensor_times_the_number_stays_float32_as_with_the_python_float():
    """Two 0-d tensors promote to the wider dtype, a 0-d float32 tensor and a Python float
    do not: while recording, the stand-in (and what is computed from it alone) ranks as the
    number it stands for, so the program is eager's at every value."""
    def make():
        w = dg.tensor(np.float32(1.5), requires_grad=True)

        def step(x, s):
            w.grad = None
            y = x.sum() * s + w * (s * 2.0 - 1.0) + (x * 2.0).sum() / s
            y.backward()
            return y
        return step, lambda: [w.grad]
    xs = [dg.tensor(x.astype(np.float32)) for x in _batches(5, (5,))]
    fast = _twins(make, [(x, s) for x, s in zip(xs, [0.1, 1.0 / 3, 2.5, -7.25, 1e-8])])
    assert fast.traces == 2 and fast(xs[0], 0.7).dtype == np.float32


def test_an_int_times_a_float_argument_and_an_int_tensor_times_an_int_argument():
    def make():
        def step(x, k, s):
            n = dg.tensor(np.arange(4, dtype=np.int32))
            return (n * k, x * (k * s), n * s)
        return step, lambda: []
    calls = [(x, k, s) for x, k, s in zip(_batches(5, (4,)), [1, 2, 3, -4, 5], [0.5, 0.25, 3.0, 0.1, 7.0])]
    fast = _twins(make, calls)
    assert fast.traces == 2
    assert fast(calls[0][0], 6, 0.5)[0].dtype == np.int32


def test_a_number_a_dimension_or_a_shape_decides_is_found_and_the_run_is_put_back():
    """At the second value, the stand-in is read (``range``: an error; ``dg.zeros(n)``:
    iteration over a 0-d tensor), so the number is static for good; what that run changed
    (the parameter's update) is put back, and the plain run's is the call's."""
    def make():
        w = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def step(x, n):
            w.grad = None
            loss = (w * x).sum() * 1.0 + dg.ones(n).sum()
            loss.backward()
            with dg.no_grad():
                w.sub_(0.1 * w.grad)
            return loss
        return step, lambda: [w, w.grad]
    fast = _twins(make, [(x, n) for x, n in zip(_batches(5, (3,)), [1, 2, 3, 2, 1])])
    assert fast.traces == 3


def test_a_stand_in_still_referenced_after_the_recording_makes_the_number_static():
    """``fn`` stores the number: the stand-in is alive after the recording let go of it
    (a weak reference), so the number is static for good and ``fn`` runs again with it."""
    class Box:
        value = None
    box = Box()

    def step(x, s):
        box.value = s
        return x * s
    fast = dg.compile(step)
    for s in (2.0, 3.0, 3.0, 4.0):
        _same(fast(np.ones(2), s), np.full(2, s))
        assert type(box.value) is float and box.value == s
    assert fast.traces == 3     # 2.0; 3.0 (the stand-in's run abandoned); 4.0


def test_a_number_computed_from_the_argument_alone_and_returned_stays_a_python_number():
    """Eager returns ``lr * 2.0`` as a float; the stand-in's run would return a 0-d
    Tensor, so a returned number makes the argument static and ``fn`` runs plainly."""
    def step(x, lr):
        return dg.tensor(x) * lr, lr * 2.0, -lr
    fast = dg.compile(step)
    for lr in (0.5, 0.25, 0.125, 0.25):
        t, a, b = fast(np.ones(2), lr)
        _same(t, np.full(2, lr))
        assert type(a) is float and a == lr * 2.0 and type(b) is float and b == -lr
    assert fast.traces == 3
