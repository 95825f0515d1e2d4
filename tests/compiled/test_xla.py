"""``dg.compile(fn, backend="xla")``: the recorded program run by XLA equals the eager
step (issue 32, item 3).

Each test runs the same step three ways from the same start: eagerly (the truth, checked
against finite differences and PyTorch elsewhere), through ``dg.compile`` on the NumPy
backend, which must agree bit for bit, and through ``backend="xla"``, which must agree to
1e-12 relative in float64 (XLA may add in another order) and 1e-5 in float32. The
recording is made on other inputs than the ones compared, so a value frozen into the
recording shows up. Skipped when JAX is not installed (the ``duograd[xla]`` extra).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("jax")

import duograd as dg  # noqa: E402
from duograd import func, nn, optim  # noqa: E402
from duograd.capture import xla  # noqa: E402
from duograd.nn import functional as F  # noqa: E402
from duograd.optim import lr_scheduler  # noqa: E402

BACKENDS = ["numpy", "xla"]
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}


def _np(x):
    return x.detach().numpy() if isinstance(x, dg.Tensor) else np.asarray(x)


def _close(got, want, backend) -> None:
    """Bit for bit on the NumPy backend; within the dtype's tolerance, relative to the
    array's largest magnitude, on XLA. Dtype and shape always equal."""
    a, b = _np(got), _np(want)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if backend == "numpy" or a.dtype.kind not in "fc":
        assert np.array_equal(a, b, equal_nan=True), np.max(np.abs(a - b), initial=0.0)
        return
    scale = max(float(np.max(np.abs(b), initial=0.0)), np.finfo(b.dtype).tiny)
    err = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)) / scale
    assert err <= RTOL[a.dtype], f"relative error {err:.3g} over {RTOL[a.dtype]:g}"


def _state(model, opt):
    """Parameters, gradients and the optimizer's state arrays, in a fixed order."""
    out = []
    for p in model.parameters():
        out += [p, p.grad]
        for k, v in sorted(opt.state.get(p, {}).items()):
            out.append(np.asarray(v))
    return out


def _same_state(got, want, backend) -> None:
    """Every parameter, .grad and optimizer state array of (model, opt) ``got`` close to ``want``'s."""
    for a, b in zip(_state(*got), _state(*want)):
        _close(a, b, backend)


def _program(fast):
    (program,) = fast.programs.values()
    return program


def _twins(make_model, make_opt, dtype=np.float64):
    out = []
    for _ in range(2):
        model = make_model()
        if dtype != np.float64:
            for p in model.parameters():
                p.data = p._data.astype(dtype)
        opt = make_opt(model)

        def step(X, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss
        out.append((model, opt, step))
    return out


def _batches(n, nin, nout, batch, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, nin)).astype(dtype), rng.integers(0, nout, batch))
            for _ in range(n)]


# ---------------------------------------------------------------- training steps

OPTIMIZERS = {  # every formula and flag the lowering has, in few variants (one compilation)
    "adam": lambda m: optim.Adam(m.parameters(), lr=0.01),
    "adamw": lambda m: optim.AdamW(m.parameters(), lr=0.01, weight_decay=0.1),
    "adam_l2_max_beta": lambda m: optim.Adam(m.parameters(), lr=0.01, betas=(0.3, 0.9),
                                             weight_decay=0.1, maximize=True),  # lerp's other formula
    "sgd": lambda m: optim.SGD(m.parameters(), lr=0.1),
    "sgd_nesterov_wd": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                           weight_decay=0.01),
    "sgd_dampening": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.5, dampening=0.3),
    "rmsprop": lambda m: optim.RMSprop(m.parameters(), lr=0.01),
    "rmsprop_centered_momentum_wd": lambda m: optim.RMSprop(m.parameters(), lr=0.01, momentum=0.9,
                                                            centered=True, weight_decay=0.1),
    "rmsprop_momentum_max": lambda m: optim.RMSprop(m.parameters(), lr=0.01, momentum=0.5,
                                                    alpha=0.3, maximize=True),  # lerp's other formula
    "sgd_plain_momentum_max": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9,
                                                  maximize=True),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_training_steps_with_every_lowered_optimizer_inside(backend):
    """One compiled step trains one small MLP per optimizer variant (one XLA compilation
    for all of them), eight steps, against the same step run eagerly."""
    names = sorted(OPTIMIZERS)

    def make():
        models = [nn.MLP(3, [6, 4], rng=k) for k in range(len(names))]
        opts = [OPTIMIZERS[n](m) for n, m in zip(names, models)]

        def step(X, y):
            losses = []
            for m, o in zip(models, opts):
                o.zero_grad()
                loss = F.cross_entropy(m(X), y)
                loss.backward()
                o.step()
                losses.append(loss)
            return losses
        return models, opts, step
    (m1, o1, eager), (m2, o2, step) = make(), make()
    fast = dg.compile(step, backend=backend)
    for X, y in _batches(8, 3, 4, 10):
        for a, b in zip(fast(X, y), eager(dg.tensor(X), y)):
            _close(a, b, backend)
        for ma, oa, mb, ob in zip(m2, o2, m1, o1):
            _same_state((ma, oa), (mb, ob), backend)
    assert fast.traces == 1
    program = _program(fast)
    assert getattr(program, "backend", "numpy") == backend
    if backend == "xla":
        assert len(program.updates) == len(names)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_digits_sized_step_and_the_parameters_keep_their_arrays(backend):
    (m1, o1, eager), (m2, o2, step) = _twins(lambda: nn.MLP(64, [32, 10], rng=1),
                                             lambda m: optim.Adam(m.parameters(), lr=1e-3))
    arrays = [p._data for p in m2.parameters()]
    moments = None
    fast = dg.compile(step, backend=backend)
    for X, y in _batches(4, 64, 10, 32, seed=1):
        _close(fast(X, y), eager(dg.tensor(X), y), backend)
        if moments is None:
            moments = [o2.state[p]["exp_avg"] for p in m2.parameters()]
    _same_state((m2, o2), (m1, o1), backend)
    # written in place: a view of a parameter or of a moment taken before sees the update
    assert all(p._data is a for p, a in zip(m2.parameters(), arrays))
    if backend == "xla":
        assert all(o2.state[p]["exp_avg"] is m for p, m in zip(m2.parameters(), moments))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_stays_float32(backend):
    (m1, o1, eager), (m2, o2, step) = _twins(lambda: nn.MLP(3, [8, 4], rng=0),
                                             lambda m: optim.Adam(m.parameters(), lr=0.01),
                                             dtype=np.float32)
    fast = dg.compile(step, backend=backend)
    for X, y in _batches(5, 3, 4, 10, dtype=np.float32):
        loss = fast(X, y)
        assert loss.dtype == dg.float32
        _close(loss, eager(dg.tensor(X), y), backend)
    for a, b in zip(_state(m2, o2), _state(m1, o1)):
        assert _np(a).dtype == np.float32 or _np(a).ndim == 0  # (Adam's step count: a float)
        _close(a, b, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_accumulated_over_calls_with_the_step_outside(backend):
    """Backward inside, zero_grad and opt.step outside: .grad accumulates over calls
    (the program reads the .grad it was given), as eagerly."""
    X, y = np.random.default_rng(2).standard_normal((16, 2)), np.arange(16) % 2
    results = []
    for compiled in (False, True):
        model = nn.MLP(2, [8, 2], rng=3)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(X, y):
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            return loss
        run = dg.compile(step, backend=backend) if compiled else (lambda X, y: step(dg.tensor(X), y))
        for i in range(6):
            if i % 2 == 0:
                model.zero_grad()
            run(X, y)
            if i % 2 == 1:
                opt.step()
        results.append([p for p in model.parameters()] + [p.grad for p in model.parameters()])
    for a, b in zip(results[1], results[0]):
        _close(a, b, backend)


# ---------------------------------------------------------------- number inputs, static arguments

@pytest.mark.parametrize("backend", BACKENDS)
def test_a_float_learning_rate_is_an_input_from_its_second_value(backend):
    def make():
        w = dg.tensor([1.0, -2.0, 0.5], requires_grad=True)

        def sgd_step(x, lr):
            w.grad = None
            (w * x).sum().backward()
            with dg.no_grad():
                w.sub_(lr * w.grad)    # an in-place write into a tensor the step reads
            return w * 1.0
        return w, sgd_step
    w1, eager = make()
    w2, step = make()
    fast = dg.compile(step, backend=backend)
    x = np.array([0.3, 0.2, -1.0])
    for lr in (0.5, 0.25, 0.125, 0.3):
        _close(fast(x, lr), eager(dg.tensor(x), lr), backend)
        _close(w2, w1, backend)
        _close(w2.grad, w1.grad, backend)
    assert fast.traces == 2   # static at 0.5, an input (a stand-in's slot) from 0.25 on


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_argnums_keys_the_number_by_value(backend):
    power = dg.compile(lambda x, n: (dg.tensor(x) ** n).sum(), static_argnums=1, backend=backend)
    x = np.array([1.5, -2.0])
    for n in (2, 3, 2):
        _close(power(x, n), (dg.tensor(x) ** n).sum(), backend)
    assert power.traces == 2


# ---------------------------------------------------------------- guards, draws, failures

@pytest.mark.parametrize("backend", BACKENDS)
def test_training_flipped_between_calls_records_again_and_dropout_draws_anew(backend):
    runs = []
    for compiled in (False, True):
        model = nn.Sequential(nn.Linear(6, 16, rng=0), nn.ReLU(), nn.Dropout(0.5, rng=1),
                              nn.Linear(16, 3, rng=2))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(X, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss
        run = dg.compile(step, backend=backend) if compiled else (lambda X, y, step=step: step(dg.tensor(X), y))
        X, y = np.random.default_rng(3).standard_normal((8, 6)), np.arange(8) % 3
        out = []
        for i in range(6):
            model.train(i < 3)
            out.append(run(X, y))
        runs.append(out + list(model.parameters()))
        if compiled:
            assert run.traces == 2
    for a, b in zip(runs[1], runs[0]):
        _close(a, b, backend)
    assert len({float(_np(v)) for v in runs[1][:3]}) == 3  # a new mask each training step


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_module_flag_read_outside_a_call_is_guarded(backend):
    drop = nn.Dropout(0.5)
    h = dg.compile(lambda x: dg.tensor(x).sum() * (3.0 if drop.training else 1.0), backend=backend)
    x = np.array([1.0, 2.0])
    _close(h(x), np.float64(9.0), backend)
    drop.eval()
    _close(h(x), np.float64(3.0), backend)
    assert h.traces == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_call_changes_nothing(backend):
    model = nn.MLP(2, [4, 3], rng=0)
    opt = optim.Adam(model.parameters(), lr=0.1)

    def step(X, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return loss

    fast = dg.compile(step, backend=backend)
    X = np.random.default_rng(0).standard_normal((5, 2))
    fast(X, np.array([0, 1, 2, 0, 1]))
    fast(X, np.array([0, 1, 2, 0, 1]))
    before = [(_np(p).copy(), p.grad, _np(p.grad).copy()) for p in model.parameters()]
    state = [{k: np.array(v, copy=True) for k, v in opt.state[p].items()} for p in model.parameters()]
    with pytest.raises(ValueError, match="cross_entropy: target 7 is out of range"):
        fast(X, np.array([0, 1, 7, 0, 1]))
    assert fast.traces == 1
    for p, (data, g, gdata), st in zip(model.parameters(), before, state):
        assert np.array_equal(_np(p), data) and p.grad is g and np.array_equal(_np(p.grad), gdata)
        assert all(np.array_equal(opt.state[p][k], v) for k, v in st.items())


def test_an_index_out_of_range_raises_as_numpy_does_and_changes_nothing():
    """XLA clamps an index out of range; the replay checks it on the host first."""
    w = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def pick(i):
        w.grad = None
        w[dg.tensor(i)].sum().backward()
        return w.grad

    fast = dg.compile(pick, backend="xla")
    _close(fast(np.array([0, 2])), np.array([1.0, 0.0, 1.0]), "xla")
    _close(fast(np.array([1, 1])), np.array([0.0, 2.0, 0.0]), "xla")
    g = w.grad
    with pytest.raises(IndexError, match="out of bounds"):
        fast(np.array([0, 3]))
    assert w.grad is g and fast.traces == 1


# ---------------------------------------------------------------- transforms and chains

def _mlp_loss(X, y, *params):
    h = X
    for k in range(0, len(params), 2):
        h = h @ params[k].mT + params[k + 1]
        if k + 2 < len(params):
            h = h.relu()
    return F.cross_entropy(h, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hvp(backend):
    y = np.arange(20) % 2

    def hvp(X, params, vs):
        return func.hvp(lambda *ps: _mlp_loss(X, y, *ps), tuple(params), tuple(vs))[1]

    def params(seed):
        return [dg.tensor(p.detach().numpy()) for p in nn.MLP(2, [8, 8, 2], rng=seed).parameters()]
    fast = dg.compile(hvp, backend=backend)
    rng = np.random.default_rng(5)
    fast(rng.standard_normal((20, 2)), params(0), [dg.tensor(rng.standard_normal(p.shape)) for p in params(0)])
    X = rng.standard_normal((20, 2))
    ps, vs = params(1), [dg.tensor(rng.standard_normal(p.shape)) for p in params(1)]
    got, want = fast(X, ps, vs), hvp(dg.tensor(X), ps, vs)
    assert fast.traces == 1 and len(got) == 6
    for a, b in zip(got, want):
        _close(a, b, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_chain_of_elementwise_ops_and_its_backward(backend):
    def chain(x):
        x.grad = None
        h = x
        for k in range(40):
            h = h * 0.9 if k % 4 == 0 else h.tanh() if k % 4 == 1 else h + 0.1 if k % 4 == 2 else h.exp()
        h.sum().backward()
        return x.grad

    fast = dg.compile(chain, backend=backend)
    rng = np.random.default_rng(0)
    fast(dg.tensor(rng.uniform(-1, 1, (4, 4)), requires_grad=True))
    x0 = rng.uniform(-1, 1, (4, 4))
    a, b = dg.tensor(x0, requires_grad=True), dg.tensor(x0, requires_grad=True)
    _close(fast(a), chain(b), backend)
    assert fast.traces == 1


def test_torch_compile_backend_keyword_selects_xla():
    model = nn.Linear(3, 2, rng=0)
    fast = dg.compile(model, backend="xla")
    x = dg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    _close(fast(x), model(x), "xla")
    assert fast._compiled.backend == "xla"
    assert dg.compile(lambda x: x * 2, backend="inductor").backend == "numpy"


# ---------------------------------------------------------------- what is not lowered

def test_a_host_step_inside_runs_on_the_numpy_backend_with_a_warning():
    (m1, o1, _), (m2, o2, _) = _twins(lambda: nn.MLP(3, [8, 4], rng=0),
                                      lambda m: optim.Adam(m.parameters(), lr=0.01))
    s1, s2 = (lr_scheduler.StepLR(o, step_size=2, gamma=0.5) for o in (o1, o2))

    def make(model, opt, sched):
        def step(X, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            sched.step()
            return loss
        return step
    eager, fast = make(m1, o1, s1), dg.compile(make(m2, o2, s2), backend="xla")
    batches = _batches(4, 3, 4, 10)
    with pytest.warns(UserWarning, match="has no XLA lowering.*NumPy backend"):
        fast(*batches[0])
    eager(dg.tensor(batches[0][0]), batches[0][1])
    assert _program(fast).backend == "numpy"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for X, y in batches[1:]:
            _close(fast(X, y), eager(dg.tensor(X), y), "numpy")
    _same_state((m2, o2), (m1, o1), "numpy")


def test_an_op_without_a_lowering_runs_on_the_numpy_backend():
    cube = dg.Primitive("add", forward=lambda x: x ** 3, vjp=(lambda g, out, x: g * 3 * x ** 2,))
    fast = dg.compile(lambda x: cube(dg.tensor(x)).sum(), backend="xla")
    with pytest.warns(UserWarning, match="operation 'add'"):  # a user's op, named like duograd's
        _close(fast(np.array([2.0])), np.float64(8.0), "numpy")
    _close(fast(np.array([3.0])), np.float64(27.0), "numpy")


def test_without_jax_the_backend_raises_an_import_error_naming_the_extra(monkeypatch):
    monkeypatch.setattr(xla, "_jax", None)
    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.setitem(sys.modules, "jax.numpy", None)
    with pytest.raises(ImportError, match=r"pip install duograd\[xla\]"):
        dg.compile(lambda x: x, backend="xla")
    with pytest.raises(ValueError, match="backend"):
        dg.capture.compile(lambda x: x, backend="tpu")


def test_the_lowered_ops_are_listed():
    names = xla.supported_ops()
    for name in ("add", "matmul", "linear", "sum", "getitem", "scatter_add", "relu", "row_max"):
        assert name in names


# ---------------------------------------------------------------- every lowered op

def _lowered_cover():
    """Specs of tests/specs.py whose every primitive (forward and backward) has a lowering,
    chosen greedily so that together they call every lowered primitive they can reach."""
    from specs import OP_SPECS, make_inputs
    sets = {}
    for spec in OP_SPECS:
        leaves = [dg.tensor(a, requires_grad=True) for a in make_inputs(spec, seed=0)]
        with dg.autograd.trace() as calls:
            out = spec.fn(*leaves)
            (out * dg.tensor(np.ones(out.shape))).sum().backward()
        ops = {op for op, *_ in calls if not op.shape_only}
        if all(xla.lowering_of(op) is not None for op in ops):
            sets[spec.name] = (spec, ops, len(calls))
    need, chosen = set().union(*[s[1] for s in sets.values()]), []
    while need:
        name = max(sets, key=lambda n: (len(sets[n][1] & need), -sets[n][2]))
        chosen.append(sets[name][0])
        need -= sets[name][1]
    return chosen


def test_every_lowered_op_forward_and_backward_in_one_program():
    """About 30 specs that together call every primitive the table lowers, compiled as one
    program (one XLA compilation), against the eager step on new inputs."""
    from specs import make_inputs
    specs = _lowered_cover()
    counts = [spec.arity for spec in specs]

    def step(*xs):
        outs, total, k = [], None, 0
        for spec, n in zip(specs, counts):
            out = spec.fn(*xs[k:k + n])
            k += n
            v = np.random.default_rng(7).standard_normal(out.shape)
            term = (out * v).sum()
            total = term if total is None else total + term
            outs.append(out)
        total.backward()
        return outs

    def leaves(seed):
        return [dg.tensor(a, requires_grad=True) for spec in specs for a in make_inputs(spec, seed=seed)]
    fast = dg.compile(step, backend="xla")
    fast(*leaves(0))
    got_leaves, want_leaves = leaves(1), leaves(1)
    got, want = fast(*got_leaves), step(*want_leaves)
    assert fast.traces == 1 and _program(fast).backend == "xla"
    for a, b in zip(got, want):
        _close(a, b, "xla")
    for a, b in zip(got_leaves, want_leaves):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            _close(a.grad, b.grad, "xla")


# ---------------------------------------------------------------- writes and rechecks

@pytest.mark.parametrize("backend", BACKENDS)
def test_data_assigned_and_written_in_place_as_eagerly(backend):
    """``t.data = v`` gives ``t`` a new array (a view taken before keeps the old values);
    an in-place write goes into ``t``'s own array (a view sees it), as eagerly."""
    def make():
        a = dg.tensor([1.0, 2.0, 3.0])
        b = dg.tensor([4.0, 5.0, 6.0])

        def step(x):
            a.data = (a * x).detach()
            with dg.no_grad():
                b.add_(x)
            return a.sum() + b.sum()
        return a, b, step
    a1, b1, eager = make()
    a2, b2, step = make()
    fast = dg.compile(step, backend=backend)
    x = np.array([0.5, 2.0, -1.0])
    for k in range(3):
        views = (a2._data, b2._data)
        old_a = views[0].copy()
        _close(fast(x * (k + 1)), eager(dg.tensor(x * (k + 1))), backend)
        _close(a2, a1, backend)
        _close(b2, b1, backend)
        assert np.array_equal(views[0], old_a) and views[1] is b2._data
    assert fast.traces == 1


@pytest.mark.filterwarnings("ignore:dg.compile. item:RuntimeWarning")
def test_recheck_every_on_the_xla_backend():
    w = dg.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        w.grad = None
        loss = (w * x).sum()
        if loss.item() > 0:   # a branch on a value: frozen, caught by the recheck
            loss = loss * 2
        loss.backward()
        return loss
    fast = dg.compile(step, recheck_every=2, backend="xla")
    assert float(fast(np.array([1.0, 1.0]))) == 6.0   # records
    assert float(fast(np.array([2.0, 1.0]))) == 8.0   # rechecked: the same branch
    assert float(fast(np.array([-3.0, 1.0]))) == -2.0  # replayed: the frozen branch
    g = w.grad
    with pytest.raises(RuntimeError, match="differs from a fresh eager run"):
        fast(np.array([-3.0, 1.0]))                   # rechecked: the other branch
    assert w.grad is g


# ---------------------------------------------------------------- values kept on the XLA side
# (issue 32, item 3: parameters, .grad and optimizer state stay in XLA between calls and
# are written back at the first read, through whichever route)

from duograd.capture.resident import Pending, peek  # noqa: E402


def _adam_twins(make_opt=lambda m: optim.Adam(m.parameters(), lr=0.05)):
    """An eager and an XLA-compiled training step of two identical models."""
    (m1, o1, eager), (m2, o2, step) = _twins(lambda: nn.MLP(3, [5, 4], rng=3), make_opt)
    return (m1, o1, eager), (m2, o2, dg.compile(step, backend="xla"))


def _both(eager, fast, batches):
    for X, y in batches:
        _close(fast(X, y), eager(dg.tensor(X), y), "xla")


def _pending(model, opt):
    """Whether every parameter, .grad and state array is held in XLA (none written back)."""
    ps = list(model.parameters())
    st = vars(opt)["state"]
    return (all(type(peek(p)) is Pending and type(peek(p.grad)) is Pending for p in ps)
            and all(type(v) is Pending for p in ps for k, v in st[p].items() if k != "step"))


READS = {  # every way a user reads a value; each returns arrays to compare
    "data": lambda m, o: [p.data for p in m.parameters()],
    "numpy": lambda m, o: [p.detach().numpy() for p in m.parameters()],
    "grad": lambda m, o: [p.grad.numpy() for p in m.parameters()],
    "item": lambda m, o: [np.array(p[0].sum().item()) for p in m.parameters()],
    "eager_op": lambda m, o: [(p * 1.0).detach() for p in m.parameters()],
    "repr": lambda m, o: [np.array(float(repr(p).split("[")[-1].split(",")[0].strip("[] \n")))
                          for p in m.parameters() if p.ndim == 1],
    "module_state_dict": lambda m, o: list(m.state_dict().values()),
    "opt_state_dict": lambda m, o: [v for st in o.state_dict()["state"].values()
                                    for k, v in sorted(st.items())],
    "opt_state": lambda m, o: [np.asarray(v) for p in m.parameters()
                               for k, v in sorted(o.state[p].items())],
}


@pytest.mark.parametrize("route", sorted(READS))
def test_values_stay_in_xla_between_calls_and_every_read_sees_them(route):
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    batches = _batches(6, 3, 4, 7, seed=5)
    _both(eager, fast, batches[:3])
    assert _pending(m2, o2)
    program = _program(fast)
    assert program._carry_in()[1]  # the buffers go straight back in
    for a, b in zip(READS[route](m2, o2), READS[route](m1, o1)):
        _close(a, b, "xla")
    _both(eager, fast, batches[3:])  # (read in between: this call uploads, the rest do not)
    assert _pending(m2, o2)
    _same_state((m2, o2), (m1, o1), "xla")
    assert all(type(p) is dg.Tensor for p in m2.parameters())  # settled: the plain class
    assert fast.traces == 1


WRITES = {  # every way a user writes a value between calls (applied to both twins)
    "inplace": lambda m, o: [p.mul_(0.5) for p in m.parameters()],
    "data_copy": lambda m, o: [p.data.copy_(p.data * 2) for p in m.parameters()],
    "data_assign": lambda m, o: [setattr(p, "data", p.data + 1) for p in m.parameters()],
    "load_state_dict": lambda m, o: m.load_state_dict({k: v * 0.9 for k, v in m.state_dict().items()}),
    "opt_load_state_dict": lambda m, o: o.load_state_dict(_scaled(o.state_dict(), 0.5)),
    "opt_state_entry": lambda m, o: [o.state[p]["exp_avg"].__imul__(3.0) for p in m.parameters()],
    "eager_step": lambda m, o: _eager_step(m, o),
}


def _scaled(sd, f):
    for st in sd["state"].values():
        for k in ("exp_avg", "exp_avg_sq"):
            st[k] = st[k] * f
    return sd


def _eager_step(m, o):
    with dg.enable_grad():
        o.zero_grad()
        (m(dg.tensor(np.ones((2, 3)))) ** 2).sum().backward()
        o.step()


@pytest.mark.parametrize("route", sorted(WRITES))
def test_writes_between_calls_are_seen_by_the_next_call(route):
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    batches = _batches(5, 3, 4, 7, seed=6)
    _both(eager, fast, batches[:2])
    with dg.no_grad():
        WRITES[route](m1, o1)
        WRITES[route](m2, o2)
    _both(eager, fast, batches[2:])
    _same_state((m2, o2), (m1, o1), "xla")


def test_zero_grad_keeping_zeros_and_an_accumulating_step_outside():
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    batches = _batches(4, 3, 4, 7, seed=7)
    _both(eager, fast, batches[:2])
    for m, o in ((m1, o1), (m2, o2)):
        o.zero_grad(set_to_none=False)   # zeros of the right shape, written back first
        assert all(np.array_equal(_np(p.grad), np.zeros(p.shape)) for p in m.parameters())
    _both(eager, fast, batches[2:])
    _same_state((m2, o2), (m1, o1), "xla")


def test_a_gradient_held_from_an_earlier_call_keeps_its_values():
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    batches = _batches(3, 3, 4, 7, seed=8)
    _both(eager, fast, batches[:1])
    held = [p.grad for p in m2.parameters()]
    want = [_np(p.grad).copy() for p in m1.parameters()]
    _both(eager, fast, batches[1:])
    assert all(p.grad is not g for p, g in zip(m2.parameters(), held))
    for g, w in zip(held, want):
        _close(g, w, "xla")


def test_a_failed_call_between_unread_calls_changes_nothing():
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    batches = _batches(4, 3, 4, 7, seed=9)
    _both(eager, fast, batches[:2])
    X, y = batches[2]
    with pytest.raises(ValueError, match="out of range"):
        fast(X, np.where(y == 0, 9, y))
    assert _pending(m2, o2)  # nothing written back, nothing changed
    _both(eager, fast, batches[2:])
    _same_state((m2, o2), (m1, o1), "xla")


def test_state_dicts_round_trip_while_values_are_in_xla():
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    batches = _batches(6, 3, 4, 7, seed=10)
    _both(eager, fast, batches[:3])
    msd, osd = m2.state_dict(), o2.state_dict()
    for a, b in zip(msd.values(), m1.state_dict().values()):
        _close(a, b, "xla")
    # into a fresh model and optimizer, which continue as the eager twin does
    m3 = nn.MLP(3, [5, 4], rng=0)
    o3 = optim.Adam(m3.parameters(), lr=0.05)
    m3.load_state_dict(msd)
    o3.load_state_dict(osd)

    def step3(X, y):
        o3.zero_grad()
        loss = F.cross_entropy(m3(X), y)
        loss.backward()
        o3.step()
        return loss
    fast3 = dg.compile(step3, backend="xla")
    for X, y in batches[3:]:
        _close(fast3(X, y), eager(dg.tensor(X), y), "xla")
    _same_state((m3, o3), (m1, o1), "xla")


def test_two_programs_sharing_parameters_take_turns():
    """A training step and an evaluation, compiled apart, on one model: each sees the
    other's latest values, read or not."""
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    evaluate = lambda m: (lambda X: (m(X) ** 2).sum())  # noqa: E731
    fast_eval = dg.compile(evaluate(m2), backend="xla")
    sgd1, sgd2 = optim.SGD(m1.parameters(), lr=0.01), optim.SGD(m2.parameters(), lr=0.01)

    def other(m, opt):
        def step(X):
            opt.zero_grad()
            loss = m(X).sum()
            loss.backward()
            opt.step()
            return loss
        return step
    fast_other = dg.compile(other(m2, sgd2), backend="xla")
    eager_other = other(m1, sgd1)
    for X, y in _batches(4, 3, 4, 7, seed=11):
        _close(fast(X, y), eager(dg.tensor(X), y), "xla")
        _close(fast_eval(X), evaluate(m1)(dg.tensor(X)), "xla")
        _close(fast_other(X), eager_other(dg.tensor(X)), "xla")
    _same_state((m2, o2), (m1, o1), "xla")


def test_values_outlive_the_compiled_function():
    import copy
    import gc
    import pickle
    (m1, o1, eager), (m2, o2, fast) = _adam_twins()
    _both(eager, fast, _batches(3, 3, 4, 7, seed=12))
    del fast
    gc.collect()
    assert _pending(m2, o2)
    twin = copy.deepcopy(m2)            # a copy settles the values it copies
    back = pickle.loads(pickle.dumps(o2.state_dict()))
    for a, b in zip(twin.parameters(), m1.parameters()):
        _close(a, b, "xla")
    for k, st in back["state"].items():
        for name, v in st.items():
            _close(v, o1.state_dict()["state"][k][name], "xla")
    _same_state((m2, o2), (m1, o1), "xla")


@pytest.mark.oracle
def test_adam_steps_kept_in_xla_match_torch(torch):
    model = nn.MLP(3, [5, 4], rng=4)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 4)).double()
    with torch.no_grad():
        for tp, p in zip(tmodel.parameters(), model.parameters()):
            tp.copy_(torch.from_numpy(_np(p).copy()))
    opt = optim.Adam(model.parameters(), lr=0.05)
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.05)

    def step(X, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return loss
    fast = dg.compile(step, backend="xla")
    for X, y in _batches(5, 3, 4, 7, seed=13):
        fast(X, y)
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tmodel(torch.from_numpy(X)), torch.from_numpy(y)).backward()
        topt.step()
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        _close(p, tp.detach().numpy(), "xla")
        _close(p.grad, tp.grad.numpy(), "xla")


def test_new_numbers_of_a_group_need_no_new_compilation():
    """lr, betas (across lerp's two formulas) and weight decay changed between calls: the
    same program and the same XLA computation, the eager step's values."""
    (m1, o1, eager), (m2, o2, fast) = _adam_twins(
        lambda m: optim.AdamW(m.parameters(), lr=0.05, weight_decay=0.1))
    for k, (X, y) in enumerate(_batches(4, 3, 4, 7, seed=14)):
        for o in (o1, o2):
            o.param_groups[0]["lr"] = 0.05 / (k + 1)
            o.param_groups[0]["betas"] = ((0.9, 0.999), (0.2, 0.99))[k % 2]
            o.param_groups[0]["weight_decay"] = 0.1 * (k + 1)
        _close(fast(X, y), eager(dg.tensor(X), y), "xla")
    _same_state((m2, o2), (m1, o1), "xla")
    assert fast.traces == 1 and len(_program(fast)._jits) == 1


def test_rmsprop_state_kept_in_xla_round_trips_through_its_state_dict():
    make = lambda m: optim.RMSprop(m.parameters(), lr=0.01, momentum=0.5, centered=True)  # noqa: E731
    (m1, o1, eager), (m2, o2, fast) = _adam_twins(make)
    batches = _batches(5, 3, 4, 7, seed=15)
    _both(eager, fast, batches[:3])
    assert _pending(m2, o2)
    sd = o2.state_dict()
    want = o1.state_dict()
    for k, st in want["state"].items():
        assert sorted(st) == sorted(sd["state"][k])
        for name, v in st.items():
            _close(sd["state"][k][name], v, "xla")
    o2.load_state_dict(sd)
    _both(eager, fast, batches[3:])
    _same_state((m2, o2), (m1, o1), "xla")


def test_rechecks_with_values_kept_in_xla():
    """``recheck_every``: the eager rerun and its snapshot see the values kept in XLA."""
    (m1, o1, eager), (m2, o2, step) = _twins(lambda: nn.MLP(3, [5, 4], rng=3),
                                             lambda m: optim.Adam(m.parameters(), lr=0.05))
    fast = dg.compile(step, recheck_every=2, backend="xla")
    _both(eager, fast, _batches(5, 3, 4, 7, seed=16))
    from duograd.capture.program import _snapshot
    assert _pending(m2, o2)
    _snapshot((o2,))()  # a rollback's put-back: the state's values, as arrays
    assert all(type(v) is not Pending for st in vars(o2)["state"].values() for v in st.values())
    _same_state((m2, o2), (m1, o1), "xla")
