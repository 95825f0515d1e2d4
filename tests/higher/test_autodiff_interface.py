"""torch's autodiff interface against torch 2.13 itself: ``torch.autograd.functional``,
``torch.autograd.forward_ad``, ``torch.autograd.Function`` (both styles and its ctx
features), ``torch.func.functional_call`` / ``stack_module_state`` / ``grad`` over dicts,
and ``autograd.grad(is_grads_batched=True)``.

Every test runs the same code with ``lib`` = duograd and ``lib`` = torch (float64
everywhere) and compares values, tuple structures and errors. PyTorch's tutorials'
patterns (per-sample gradients, model ensembling, forward-mode AD through a Linear,
double backward with a custom Function, neural tangent kernels) run as written there,
``vmap`` included, and are also checked against a loop of single examples.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import duograd as dg

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
]

R = np.random.default_rng(31)
X3 = R.standard_normal(3)
Y2 = R.standard_normal(2)
M23 = R.standard_normal((2, 3))


def sub(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


def np_of(t):
    return None if t is None else t.detach().numpy()


def same(a, b, tol=1e-10):
    """Structures equal (tuples nest alike) and values close."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, type(b)) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            same(x, y, tol)
        return
    if b is None:
        assert a is None
        return
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np_of(a), np_of(b), rtol=tol, atol=tol)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class and message are the comparison
        return type(e).__name__, str(e).replace("dg.Size", "torch.Size")


def run_both(torch, build):
    """``build(lib)`` with duograd and with torch."""
    return build(dg), build(torch)


# ---------------------------------------------------------------- autograd.functional

def f_two(a, b):
    return (a.sin() * b.sum(), (a ** 2).sum() * b.exp())


def f_scalar(a, b):
    return (a.sin() * b.sum()).sum() ** 2 + (b ** 3).sum()


FUNCS = [  # (function, inputs as NumPy; a tuple means tuple inputs)
    (lambda a: a.tanh() * 2, X3),
    (lambda a: a @ a, X3),
    (f_two, (X3, Y2)),
    (lambda a, b: a.exp().sum() * b, (X3, Y2)),
    (lambda m: (m @ m.T).logsumexp(0), M23),
    (lambda m, v: m @ v, (M23, X3)),
    (lambda a: (a.sigmoid(),), X3),
    (lambda a: a.reshape(3, 1) * a.cos(), X3),
]


def lib_inputs(lib, x, requires_grad=False):
    if isinstance(x, tuple):
        return tuple(lib.tensor(v, requires_grad=requires_grad) for v in x)
    return lib.tensor(x, requires_grad=requires_grad)


@pytest.mark.parametrize("k", range(len(FUNCS)))
def test_jacobian_matches_torch_in_every_strategy(torch, k):
    f, x = FUNCS[k]
    for kw in ({}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}):
        a, b = run_both(torch, lambda lib: sub(lib, "autograd.functional").jacobian(
            f, lib_inputs(lib, x), **kw))
        same(a, b)


@pytest.mark.parametrize("k", range(len(FUNCS)))
def test_vjp_and_jvp_match_torch(torch, k):
    f, x = FUNCS[k]

    def build(lib):
        F = sub(lib, "autograd.functional")
        ins = lib_inputs(lib, x)
        outs = f(*ins) if isinstance(ins, tuple) else f(ins)
        v_out = tuple(lib.ones_like(o) * 0.5 for o in outs) if isinstance(outs, tuple) \
            else lib.ones_like(outs) * 0.5
        v_in = tuple(lib.ones_like(i) * 0.3 for i in ins) if isinstance(ins, tuple) \
            else lib.ones_like(ins) * 0.3
        return F.vjp(f, ins, v_out), F.jvp(f, ins, v_in)
    a, b = run_both(torch, build)
    same(a, b)


SCALARS = [
    (lambda a: (a.sin() ** 3).sum(), X3),
    (f_scalar, (X3, Y2)),
    (lambda m: (m.tanh() @ m.T).trace(), M23),
    (lambda a, m: (m @ a).exp().sum(), (X3, M23)),
]


@pytest.mark.parametrize("k", range(len(SCALARS)))
def test_hessian_hvp_vhp_match_torch(torch, k):
    f, x = SCALARS[k]

    def build(lib):
        F = sub(lib, "autograd.functional")
        ins = lib_inputs(lib, x)
        v = tuple(lib.ones_like(i) * 0.7 for i in ins) if isinstance(ins, tuple) \
            else lib.ones_like(ins) * 0.7
        return (F.hessian(f, ins),
                F.hessian(f, ins, vectorize=True, outer_jacobian_strategy="forward-mode"),
                F.hvp(f, ins, v), F.vhp(f, ins, v))
    a, b = run_both(torch, build)
    same(a, b)


def test_create_graph_gives_second_order(torch):
    def build(lib):
        F = sub(lib, "autograd.functional")
        x = lib.tensor(X3, requires_grad=True)
        J = F.jacobian(lambda a: a ** 3, x, create_graph=True)
        (gj,) = lib.autograd.grad(J.sum(), x)
        _, hv = F.hvp(lambda a: (a ** 4).sum(), x, lib.ones(3, dtype=lib.float64), create_graph=True)
        (gh,) = lib.autograd.grad(hv.sum(), x)
        _, vj = F.vjp(lambda a: a.sin(), x, lib.ones(3, dtype=lib.float64), create_graph=True)
        (gv,) = lib.autograd.grad(vj.sum(), x)
        _, jv = F.jvp(lambda a: a.exp() * a, x, lib.ones(3, dtype=lib.float64), create_graph=True)
        (gjv,) = lib.autograd.grad(jv.sum(), x)
        plain = F.jacobian(lambda a: a ** 3, x)
        return gj, gh, gv, gjv, plain.requires_grad, J.requires_grad
    a, b = run_both(torch, build)
    same(a[:4], b[:4])
    assert a[4:] == b[4:] == (False, True)


def test_vectorize_and_is_grads_batched_run_one_batched_sweep():
    """``vectorize=True`` (both strategies) and ``is_grads_batched=True`` go through vmap:
    a 16 -> 16 map's Jacobian runs the matmul's rules a handful of times, not once per row."""
    from duograd import _context
    F = dg.autograd.functional
    w = dg.tensor(R.standard_normal((16, 16)) * 0.3)
    x = dg.tensor(R.standard_normal(16))

    def f(a):
        return (w @ a).tanh()
    want = (1 - np.tanh(w.numpy() @ x.numpy()) ** 2)[:, None] * w.numpy()
    calls = []

    class Count:
        def on_call(self, call):
            calls.append(call[0].name)
    for run in (lambda: F.jacobian(f, x, vectorize=True),
                lambda: F.jacobian(f, x, vectorize=True, strategy="forward-mode"),
                lambda: dg.autograd.grad(f(x.requires_grad_()), x, dg.eye(16),
                                         is_grads_batched=True)[0]):
        calls.clear()
        with _context.listening(Count()):
            j = run()
        x = x.detach()
        np.testing.assert_allclose(j.detach().numpy(), want, rtol=1e-13, atol=1e-15)
        assert calls.count("matmul") <= 4, calls.count("matmul")


def test_vectorized_jacobian_and_hessian_with_create_graph_match_torch(torch):
    def build(lib):
        F = sub(lib, "autograd.functional")
        x = lib.tensor(X3, requires_grad=True)
        J = F.jacobian(lambda a: a.sin() * a.sum(), x, create_graph=True, vectorize=True)
        (gj,) = lib.autograd.grad((J ** 2).sum(), x)
        H = F.hessian(lambda a: (a.exp() * a).sum(), x, create_graph=True, vectorize=True)
        (gh,) = lib.autograd.grad(H.sum(), x)
        y = x.tanh() * x
        (jb,) = lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64) * 2, create_graph=True,
                                  is_grads_batched=True)
        (gb,) = lib.autograd.grad(jb.sum(), x)
        return J, gj, H, gh, jb, gb, (J.requires_grad, H.requires_grad, jb.requires_grad)
    a, b = run_both(torch, build)
    same(a[:6], b[:6])
    assert a[6] == b[6] == (True, True, True)


STRICT_CASES = [
    lambda F, lib, x, y: F.jacobian(lambda a, b: a.sum(), (x, y), strict=True),
    lambda F, lib, x, y: F.jacobian(lambda a: a.detach(), x, strict=True),
    lambda F, lib, x, y: F.jacobian(lambda a: a, x, strategy="forward-mode"),
    lambda F, lib, x, y: F.jacobian(lambda a: a, x, strategy="forward-mode", vectorize=True,
                                    create_graph=True),
    lambda F, lib, x, y: F.jacobian(lambda a: a, x, strategy="forward-mode", vectorize=True,
                                    strict=True),
    lambda F, lib, x, y: F.jacobian(lambda a: a, x, strategy="sideways"),
    lambda F, lib, x, y: F.jacobian(lambda a: a * 2, x, vectorize=True, strict=True),
    lambda F, lib, x, y: F.jacobian(lambda a: 3, x),
    lambda F, lib, x, y: F.vjp(lambda a: a, x),
    lambda F, lib, x, y: F.vjp(lambda a: a, x, lib.ones(2, dtype=lib.float64)),
    lambda F, lib, x, y: F.vjp(lambda a: a, x, (x, x)),
    lambda F, lib, x, y: F.vjp(lambda a: (a, a), x, (x,)),
    lambda F, lib, x, y: F.vjp(lambda a: (a, a), x, (x, y)),
    lambda F, lib, x, y: F.vjp(lambda a: lib.zeros(3, dtype=lib.float64), x, x, strict=True),
    lambda F, lib, x, y: F.vjp(lambda a: a * 0 + 1, x, x, strict=True),
    lambda F, lib, x, y: F.jvp(lambda a: a.sum(), x),
    lambda F, lib, x, y: F.jvp(lambda a: lib.zeros(3, dtype=lib.float64), x, x, strict=True),
    lambda F, lib, x, y: F.jvp(lambda a, b: a * 2, (x, y), (x, y), strict=True),
    lambda F, lib, x, y: F.hessian(lambda a: a, x),
    lambda F, lib, x, y: F.hessian(lambda a: (a,), x),
    lambda F, lib, x, y: F.hessian(lambda a: a.sum(), x, strict=True),
    lambda F, lib, x, y: F.hessian(lambda a, b: (a ** 2).sum() + b.sum(), (x, y), strict=True),
    lambda F, lib, x, y: F.hvp(lambda a: a.sum(), x, x, strict=True),
    lambda F, lib, x, y: F.vhp(lambda a: a.sum(), x, x, strict=True),
    lambda F, lib, x, y: F.hvp(lambda a: a, x, x),
    lambda F, lib, x, y: F.vhp(lambda a: (a, a), x, x),
    lambda F, lib, x, y: F.hvp(lambda a: (a ** 2).sum(), x),
    lambda F, lib, x, y: F.vhp(lambda a, b: (a ** 2).sum(), (x, y), (x, y), strict=True),
    lambda F, lib, x, y: F.hvp(lambda a, b: (a ** 2).sum(), (x, y), (x, y), strict=True),
    lambda F, lib, x, y: F.vjp(lambda a: a, [x, 3], x),
]


@pytest.mark.parametrize("k", range(len(STRICT_CASES)))
def test_errors_and_strict_mode_match_torch(torch, k):
    def build(lib):
        F = sub(lib, "autograd.functional")
        x, y = lib.tensor(X3), lib.tensor(Y2)
        got = outcome(lambda: STRICT_CASES[k](F, lib, x, y))
        return got if got[0] != "ok" else ("ok", None)
    a, b = run_both(torch, build)
    if b[0] == "TypeError":  # torch names its own classes in the message
        assert a[0] == b[0]
        return
    assert a == b


# ---------------------------------------------------------------- forward_ad

def _layers(lib, seed=0):
    """Linear -> tanh -> LayerNorm -> Linear, and a Conv2d, with the same weights."""
    nn = lib.nn
    r = np.random.default_rng(seed)
    lin1, ln, lin2 = nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2)
    conv = nn.Conv2d(2, 3, 3, padding=1)
    mods = [lin1, ln, lin2, conv]
    if lib is not dg:
        for m in mods:
            m.double()
    with lib.no_grad():
        for m in mods:
            for p in m.parameters():
                p.copy_(lib.tensor(r.standard_normal(tuple(p.shape))))
    return lin1, ln, lin2, conv


def test_forward_ad_dual_tensors_through_nn_layers(torch):
    img = R.standard_normal((1, 2, 4, 4))
    timg = R.standard_normal((1, 2, 4, 4))
    xs, ts = R.standard_normal((5, 3)), R.standard_normal((5, 3))

    def build(lib):
        fwAD = sub(lib, "autograd.forward_ad")
        lin1, ln, lin2, conv = _layers(lib)
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(xs), lib.tensor(ts))
            out = lin2(ln(lin1(d).tanh()))
            p, t = fwAD.unpack_dual(out)
            u = fwAD.unpack_dual(out)
            c = fwAD.unpack_dual(lib.nn.functional.relu(conv(fwAD.make_dual(lib.tensor(img),
                                                                             lib.tensor(timg)))))
            plain = fwAD.unpack_dual(lib.tensor(xs))
            names = (type(u).__name__, u._fields, plain.tangent is None)
        after = fwAD.unpack_dual(out).tangent is None
        return (p, t, c.primal, c.tangent), names, after
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1] == b[1] == ("UnpackedDualTensor", ("primal", "tangent"), True)
    assert a[2] is b[2] is True


def test_forward_ad_tutorial_dual_numbers_through_a_linear(torch):
    """PyTorch's forward-mode AD tutorial: a Linear on dual tensors, its tangent the JVP."""
    primal, tangent = R.standard_normal((10, 10)), R.standard_normal((10, 10))

    def build(lib):
        fwAD = sub(lib, "autograd.forward_ad")
        fn = lib.nn.Linear(10, 10)
        if lib is not dg:
            fn.double()
        with lib.no_grad():
            fn.weight.copy_(lib.tensor(M23[0, 0] * np.eye(10) + 0.1))
            fn.bias.copy_(lib.tensor(np.arange(10.0)))
        with fwAD.dual_level():
            dual_input = fwAD.make_dual(lib.tensor(primal), lib.tensor(tangent))
            dual_output = fn(dual_input).sin()
            jvp = fwAD.unpack_dual(dual_output).tangent
        return jvp
    a, b = run_both(torch, build)
    same(a, b)


def test_forward_ad_errors_match_torch(torch):
    def build(lib):
        fwAD = sub(lib, "autograd.forward_ad")
        x = lib.tensor(X3)
        res = [outcome(lambda: fwAD.make_dual(x, x))[0]]
        with fwAD.dual_level():
            res.append(outcome(lambda: fwAD.make_dual(x, lib.ones(2, dtype=lib.float64))))

            def nested():
                with fwAD.dual_level():
                    pass
            res.append(outcome(nested))
        lvl = fwAD.enter_dual_level()
        fwAD.exit_dual_level(level=lvl)
        res.append(outcome(lambda: fwAD.make_dual(x, x))[0])
        return res
    a, b = run_both(torch, build)
    assert a == b


# ---------------------------------------------------------------- autograd.Function

def _exp_setup_style(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y
    return Exp


def _mul_ctx_style(lib):
    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_backward(x, y)
            ctx.k = k
            ctx.needs = ctx.needs_input_grad
            return x * y + k, (x > 0).to(x.dtype)

        @staticmethod
        def backward(ctx, g, g_mask):
            x, y = ctx.saved_tensors
            return g * y, g * x, None
    return MulAdd


def test_function_both_styles_values_grads_and_double_backward(torch):
    def build(lib):
        Exp, MulAdd = _exp_setup_style(lib), _mul_ctx_style(lib)
        x = lib.tensor(X3, requires_grad=True)
        y = lib.tensor(X3[::-1].copy())
        e = Exp.apply(x)
        (g,) = lib.autograd.grad(e.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        out, mask = MulAdd.apply(x, y, 2.0)
        (gm,) = lib.autograd.grad(out.sum(), x)
        return (e, g, gg, out, gm), (mask.requires_grad, out.requires_grad)
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1] == b[1]


def test_function_jvp_staticmethod_under_forward_ad_and_func_jvp(torch):
    def build(lib):
        Exp = _exp_setup_style(lib)
        fwAD = sub(lib, "autograd.forward_ad")

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_forward(x, y)
                return x * y

            @staticmethod
            def backward(ctx, g):
                raise AssertionError("not used")

            @staticmethod
            def jvp(ctx, tx, ty):
                x, y = ctx.saved_tensors
                return tx * y + ty * x
        func = sub(lib, "func")
        x, t = lib.tensor(X3), lib.tensor(X3 * 0 + 0.5)
        y = lib.tensor(X3[::-1].copy())
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            te = fwAD.unpack_dual(Exp.apply(d)).tangent
            tm = fwAD.unpack_dual(Mul.apply(d, y)).tangent
            tm2 = fwAD.unpack_dual(Mul.apply(d, fwAD.make_dual(y, t * 3))).tangent
        _, tj = func.jvp(lambda v: Exp.apply(v) * 2, (x,), (t,))
        return te, tm, tm2, tj
    a, b = run_both(torch, build)
    same(a, b)


def test_function_double_backward_tutorial_passes_gradgradcheck(torch):
    """PyTorch's "double backward with custom functions" tutorial: a backward written in
    differentiable operations, checked by gradcheck and gradgradcheck, and equal to torch."""
    def build(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            def backward(ctx, grad_out):
                (x,) = ctx.saved_tensors
                return grad_out * 2 * x
        x = lib.tensor(X3, requires_grad=True)
        ok = (lib.autograd.gradcheck(Square.apply, (x,)),
              lib.autograd.gradgradcheck(Square.apply, (x,)))
        (g,) = lib.autograd.grad((Square.apply(x) ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return ok, (g, gg)
    a, b = run_both(torch, build)
    assert a[0] == b[0] == (True, True)
    same(a[1], b[1])


def test_function_mark_dirty_gives_the_input_the_history(torch):
    def build(lib):
        class Double_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return 2 * g
        x = lib.tensor(X3, requires_grad=True)
        a = x * 1
        b = Double_.apply(a)
        (a * a).sum().backward()
        leaf = outcome(lambda: Double_.apply(lib.tensor(X3, requires_grad=True)))
        return (b is a, a.grad_fn is not None, leaf[0]), (x.grad, a)
    a, b = run_both(torch, build)
    assert a[0] == b[0] == (True, True, "RuntimeError")
    same(a[1], b[1])


def test_function_set_materialize_grads_false_hands_none(torch):
    def build(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None))
                out = 0
                if g1 is not None:
                    out = out + 2 * g1
                if g2 is not None:
                    out = out + 3 * g2
                return out

        class TwoMaterialized(Two):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3
        x = lib.tensor(X3, requires_grad=True)
        p, _ = Two.apply(x)
        (g,) = lib.autograd.grad(p.sum(), x)
        p, _ = TwoMaterialized.apply(x)
        (g2,) = lib.autograd.grad(p.sum(), x)
        return seen, (g, g2)
    a, b = run_both(torch, build)
    assert a[0] == b[0] == [(False, True), (False, False)]
    same(a[1], b[1])


def test_function_once_differentiable_and_vmap_fields(torch):
    def build(lib):
        od = sub(lib, "autograd.function").once_differentiable

        class Sq(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @od
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        x = lib.tensor(X3, requires_grad=True)
        (g,) = lib.autograd.grad(Sq.apply(x).sum(), x)
        seed = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g2,) = lib.autograd.grad(Sq.apply(x), x, seed, create_graph=True)
        twice = outcome(lambda: g2.sum().backward())
        return g, (twice[0], "once_differentiable" in twice[1]), Sq.generate_vmap_rule, \
            lib.autograd.Function.generate_vmap_rule, callable(Sq.vmap)
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1:] == b[1:] == (("RuntimeError", True), True, False, True)


# ---------------------------------------------------------------- torch.func with modules

class _Tied:
    @staticmethod
    def build(lib):
        nn = lib.nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(2, 2)
                self.b = nn.Linear(2, 2)
                self.b.weight = self.a.weight
                self.register_buffer("buf", lib.ones(2, dtype=lib.float64))

            def forward(self, x, scale=1.0):
                return self.b(self.a(x)) * scale + self.buf
        m = M()
        if lib is not dg:
            m.double()
        r = np.random.default_rng(5)
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(r.standard_normal(tuple(p.shape))))
        return m


def test_functional_call_values_ties_strict_and_restore(torch):
    def build(lib):
        fn = sub(lib, "func")
        m = _Tied.build(lib)
        x = lib.tensor(M23.T.copy())
        w0 = m.a.weight.detach().clone()
        z = lib.zeros(2, 2, dtype=lib.float64)
        res = [fn.functional_call(m, {"a.weight": z}, (x,)),
               fn.functional_call(m, {"a.weight": z}, x, tie_weights=False),
               fn.functional_call(m, ({"buf": lib.zeros(2, dtype=lib.float64)}, {"a.bias": z[0]}),
                                  (x,), {"scale": 2.0}),
               fn.functional_call(m, [{"buf": z[0]}], x)]
        res.append(fn.functional_call(m, {"a.weight": z, "b.weight": z}, x))
        errs = [outcome(lambda: fn.functional_call(m, {"a.weight": z, "b.weight": z * 1}, x)),
                outcome(lambda: fn.functional_call(m, {"a.weight": z}, x, strict=True)),
                outcome(lambda: fn.functional_call(m, {"zzz": z}, x, strict=True)),
                outcome(lambda: fn.functional_call(m, ({"buf": z[0]}, {"buf": z[0]}), x))]
        outcome(lambda: fn.functional_call(m, {"a.weight": lib.zeros(3, 3, dtype=lib.float64)}, x))
        full = {k: v * 1 for k, v in list(m.named_parameters()) + list(m.named_buffers())}
        res.append(fn.functional_call(m, full, x, strict=True))
        return res, errs, (m.a.weight, w0, m.b.weight is m.a.weight)
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1] == b[1]
    same(a[2][:2], b[2][:2])
    assert a[2][2] and b[2][2]


def test_stack_module_state_ensemble_tutorial_vmap_matches_a_loop_and_torch(torch):
    """PyTorch's model-ensembling tutorial as written there: stack_module_state +
    ``vmap(functional_call)`` over the models, the minibatch shared (in_dims None) and one
    minibatch per model (in_dims 0); against each model called on its own and against torch."""
    data = R.standard_normal((4, 3))
    per_model = R.standard_normal((3, 4, 3))

    def build(lib):
        fn = sub(lib, "func")
        nn = lib.nn
        r = np.random.default_rng(7)
        models = []
        for _ in range(3):
            m = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2), nn.BatchNorm1d(2))
            if lib is not dg:
                m.double()
            with lib.no_grad():
                for p in m.parameters():
                    p.copy_(lib.tensor(r.standard_normal(tuple(p.shape))))
            models.append(m.eval())
        params, buffers = fn.stack_module_state(models)
        base = models[0]

        def fmodel(params, buffers, x):
            return fn.functional_call(base, (params, buffers), (x,))
        x, xs = lib.tensor(data), lib.tensor(per_model)
        shared = fn.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        each = fn.vmap(fmodel)(params, buffers, xs)
        loop = lib.stack([fmodel({k: v[i] for k, v in params.items()},
                                 {k: v[i] for k, v in buffers.items()}, x) for i in range(3)])
        direct = lib.stack([m(x) for m in models])
        direct_each = lib.stack([m(xs[i]) for i, m in enumerate(models)])
        meta = {k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()}
        bmeta = {k: (tuple(v.shape), v.requires_grad) for k, v in buffers.items()}
        errs = [outcome(lambda: fn.stack_module_state([])),
                outcome(lambda: fn.stack_module_state([nn.Linear(2, 2), nn.Linear(2, 2).eval()]))]
        return (shared, each), (loop, direct, direct_each), meta, bmeta, errs
    a, b = run_both(torch, build)
    same(a[0], b[0])
    same(a[0][0], a[1][0], 1e-13)
    same(a[0][0], a[1][1], 1e-13)
    same(a[0][1], a[1][2], 1e-13)
    assert a[2:] == b[2:]


def _mlp_model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def _cnn_model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(3 * 3 * 3, 3))


@pytest.mark.parametrize("make,shape", [(_mlp_model, (4,)), (_cnn_model, (1, 6, 6))],
                         ids=["mlp", "cnn"])
def test_per_sample_gradients_tutorial_vmap_matches_a_loop_and_torch(torch, make, shape):
    """PyTorch's per-sample-gradients tutorial as written there: functional_call + grad
    over the params dict, ``vmap(ft_compute_grad, in_dims=(None, None, 0, 0))``; against
    one backward per sample (``.grad`` of the model) and against torch.func."""
    xs = R.standard_normal((6,) + shape)
    ys = np.array([0, 2, 1, 1, 0, 2])

    def build(lib):
        fn = sub(lib, "func")
        F = lib.nn.functional
        r = np.random.default_rng(3)
        model = make(lib)
        if lib is not dg:
            model.double()
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(r.standard_normal(tuple(p.shape)) * 0.5))
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
            predictions = fn.functional_call(model, (params, buffers), (batch,))
            return F.cross_entropy(predictions, targets)
        ft_compute_grad = fn.grad(compute_loss)
        ft_compute_sample_grad = fn.vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
        x, y = lib.tensor(xs), lib.tensor(ys)
        grads = ft_compute_sample_grad(params, buffers, x, y)
        loop = []  # the same per-sample gradients by one backward per sample
        for i in range(len(xs)):
            model.zero_grad()
            F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            loop.append([p.grad.detach().clone() for p in model.parameters()])
        n = len(params)
        return [grads[k] for k in params], [lib.stack([s[j] for s in loop]) for j in range(n)]
    a, b = run_both(torch, build)
    same(a[0], b[0])
    same(a[0], a[1], 1e-13)


def test_neural_tangent_kernel_tutorial_matches_torch(torch):
    """PyTorch's neural-tangent-kernel tutorial: the Jacobian of functional_call with
    respect to the parameters for each example (``vmap(jacrev(fnet_single), (None, 0))``),
    contracted into the empirical NTK, both the full kernel and its trace; also the
    Jacobian-free form ``vmap(vmap(vjp of jvp))`` the tutorial computes it by."""
    x1, x2 = R.standard_normal((5, 4)), R.standard_normal((3, 4))

    def build(lib):
        fn = sub(lib, "func")
        net = _mlp_model(lib)
        if lib is not dg:
            net.double()
        r = np.random.default_rng(11)
        with lib.no_grad():
            for p in net.parameters():
                p.copy_(lib.tensor(r.standard_normal(tuple(p.shape)) * 0.5))
        params = {k: v.detach() for k, v in net.named_parameters()}

        def fnet_single(params, x):
            return fn.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

        def ntk(x1, x2, compute):
            j1 = fn.vmap(fn.jacrev(fnet_single), (None, 0))(params, x1)
            j1 = [j.flatten(2) for j in j1.values()]
            j2 = fn.vmap(fn.jacrev(fnet_single), (None, 0))(params, x2)
            j2 = [j.flatten(2) for j in j2.values()]
            eq = "Naf,Mbf->NMab" if compute == "full" else "Naf,Maf->NM"
            return lib.stack([lib.einsum(eq, a, b) for a, b in zip(j1, j2)]).sum(0)

        def ntk_vps(x1, x2):  # the tutorial's NTK-vector products, one column at a time
            def get_ntk(x1, x2):
                def func_x1(params):
                    return fnet_single(params, x1)

                def func_x2(params):
                    return fnet_single(params, x2)
                output, vjp_fn = fn.vjp(func_x1, params)

                def get_ntk_slice(vec):
                    vjps = vjp_fn(vec)
                    _, jvps = fn.jvp(func_x2, (params,), vjps)
                    return jvps
                basis = lib.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
                return fn.vmap(get_ntk_slice)(basis)
            res = fn.vmap(fn.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
            return res.transpose(-1, -2)  # vmap of the slices gives (b, a)
        X1, X2 = lib.tensor(x1), lib.tensor(x2)
        return ntk(X1, X2, "full"), ntk(X1, X2, "trace"), ntk_vps(X1, X2)
    a, b = run_both(torch, build)
    assert tuple(a[0].shape) == (5, 3, 3, 3)
    same(a, b)
    same(a[2], a[0])


def test_func_transforms_over_dicts_with_has_aux_and_argnums(torch):
    def build(lib):
        fn = sub(lib, "func")
        p = {"w": lib.tensor(M23), "b": lib.tensor(Y2)}
        x = lib.tensor(X3)

        def loss(p, x, scale=1.0):
            out = p["w"] @ x + p["b"]
            return (out.tanh() ** 2).sum() * scale, out

        def plain(p, x):
            return loss(p, x)[0]
        g, aux = fn.grad(loss, has_aux=True)(p, x, scale=2.0)
        gx = fn.grad(plain, argnums=(0, 1))(p, x)
        gv = fn.grad_and_value(plain)(p, x)
        out, vjp_fn = fn.vjp(lambda q: {"y": q["w"] @ x * q["b"]}, p)
        (ct,) = vjp_fn({"y": lib.ones(2, dtype=lib.float64)})
        o, t = fn.jvp(lambda q: (q["w"] * 2).sum() + q["b"].exp().sum(), (p,),
                      ({"w": lib.ones(2, 3, dtype=lib.float64), "b": lib.ones(2, dtype=lib.float64)},))
        return ([g["w"], g["b"], aux, gx[0]["w"], gx[1], gv[0]["b"], gv[1], out["y"], ct["w"],
                 ct["b"], o, t], (sorted(g), type(gx).__name__, sorted(ct)))
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1] == b[1]


def test_jacrev_jacfwd_hessian_over_dicts_match_torch(torch):
    def build(lib):
        fn = sub(lib, "func")
        p = {"w": lib.tensor(M23), "b": lib.tensor(Y2)}
        x = lib.tensor(X3)

        def f(p, x, scale=1.0):
            out = (p["w"] @ x + p["b"]).tanh() * scale
            return out, {"s": (out ** 2).sum()}

        def loss(p, x):
            return f(p, x)[1]["s"]
        jr = fn.jacrev(lambda p, x: f(p, x, scale=2.0))(p, x)
        jf = fn.jacfwd(f, argnums=(0, 1))(p, x)
        ja, aux = fn.jacrev(lambda p, x: (f(p, x)[0], x.sum()), has_aux=True)(p, x)
        h = fn.hessian(loss)(p, x)
        hv = fn.vmap(fn.jacrev(lambda p, x: f(p, x)[0]), in_dims=(None, 0))(p, lib.stack([x, x * 2]))
        flat = [jr[0]["w"], jr[0]["b"], jr[1]["s"]["w"], jf[0][0]["b"], jf[0][1], jf[1]["s"][0]["w"],
                ja["w"], aux, h["w"]["w"], h["w"]["b"], h["b"]["b"], hv["w"], hv["b"]]
        return flat, (sorted(jr[0]), type(jf[0]).__name__, sorted(h["w"]))
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1] == b[1]


def test_grad_is_grads_batched_and_materialize_grads(torch):
    def build(lib):
        x = lib.tensor(X3, requires_grad=True)
        z = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        y = x.sin() * x
        (jac,) = lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
        gz = lib.autograd.grad((x ** 2).sum(), (x, z), materialize_grads=True)
        err = outcome(lambda: lib.autograd.grad((x ** 2).sum(), (x, z), allow_unused=False,
                                                materialize_grads=True))
        return (jac, gz), err
    a, b = run_both(torch, build)
    same(a[0], b[0])
    assert a[1] == b[1]


def test_the_pytree_transforms_docstring_examples_run():
    """``func.grad`` and the others are closures of ``func_module.tree_transforms``, which
    the package's doctest collection does not reach: their examples (and those of the
    Tensor transforms they wrap) run here."""
    import doctest
    from duograd import func
    for f in (func.grad, func.value_and_grad, func.grad_and_value, func.vjp, func.jvp, func.jacrev,
              func.jacfwd):
        for g in (f, getattr(f, "__wrapped__", None)):
            if g is None:
                continue
            runner = doctest.DocTestRunner()
            for t in doctest.DocTestFinder().find(g, g.__name__, globs={}):
                runner.run(t)
            result = runner.summarize(verbose=False)
            assert result.attempted > 0 and result.failed == 0, (g.__name__, result)
