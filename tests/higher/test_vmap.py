"""``func.vmap`` and the Jacobians vectorised through it.

Truth: a Python loop over the batch (the same function on one example at a time, so bit for
bit where the op allows and to 1e-15 where a batched product sums in another order), and
``torch.func`` as the oracle for in_dims/out_dims forms, nesting, composition, per-sample
gradients and jacrev/jacfwd/hessian.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import batching, func

oracle = [pytest.mark.oracle,
          pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]

R = np.random.default_rng(31)
A = R.standard_normal((4, 3, 5))   # batch 4 along dim 0
B = R.standard_normal((4, 5))
W = R.standard_normal((5, 2))
M = R.standard_normal((4, 5, 5))


def _loop(f, args, in_dims, out_dim=0):
    """The function on each example, stacked along out_dim: the truth for vmap."""
    size = next(np.shape(a)[d] for a, d in zip(args, in_dims) if d is not None)
    outs = []
    for b in range(size):
        one = [dg.tensor(np.take(a, b, axis=d)) if d is not None else dg.tensor(a)
               for a, d in zip(args, in_dims)]
        outs.append(f(*one).detach().numpy())
    return np.stack(outs, axis=out_dim)


def _check(f, args, in_dims, exact=True):
    out = func.vmap(f, in_dims=in_dims)(*[dg.tensor(a) for a in args]).detach().numpy()
    want = _loop(f, args, in_dims)
    assert out.shape == want.shape and out.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(out, want)
    else:
        np.testing.assert_allclose(out, want, rtol=1e-15, atol=1e-15)


F = dg.nn.functional
FAMILIES = {
    # elementwise rows, a shared operand broadcasting against the batch
    "unary": (lambda x: (x.exp() + x.tanh() * x.sin()).sqrt().log(), (np.abs(A),), (0,)),
    "binary shared": (lambda x, y: x * y - y / (x + 3), (A, A[0]), (0, None)),
    "pow/max/abs": (lambda x, y: dg.maximum(x, y).abs() ** 1.5, (A, B[:, None, :]), (0, 0)),
    "compare/where": (lambda x: dg.where(x > 0.2, x, -x * 2), (A,), (0,)),
    "in_dim 1": (lambda x: x.relu() + 1, (A,), (1,)),
    "in_dim -1": (lambda x: F.gelu(x) * 2, (A,), (-1,)),
    "cast": (lambda x: (x > 0).to(dg.float64) + x.to(dg.float32).to(dg.float64), (A,), (0,)),
    # reductions and running ops: the axes shift
    "sum/mean": (lambda x: x.sum(0) + x.mean(-1).sum() + x.sum(), (A,), (0,)),
    "max/min/dim": (lambda x: x.max(-1).values.sum() + x.amin(0) + x.max(), (A,), (0,)),
    "logsumexp/softmax": (lambda x: x.logsumexp(1) + F.log_softmax(x, -1).sum(-1), (A,), (0,)),
    "var/cumsum/prod": (lambda x: x.var(-1) + x.cumsum(0).sum(-1) + x.prod(0).sum(), (A,), (0,)),
    "argmax": (lambda x: x.argmax(-1), (A,), (0,)),
    # shape ops
    "reshape/permute": (lambda x: x.reshape(5, 3).T.flatten() * 2, (A,), (0,)),
    "transpose/unsqueeze": (lambda x: x.transpose(0, 1).unsqueeze(0).squeeze(0), (A,), (0,)),
    "expand/broadcast": (lambda x: x[0:1].expand(4, 5) + x.sum(0), (A,), (0,)),
    "getitem basic": (lambda x: x[1:, ::2] + x[0, None, -1], (A,), (0,)),
    "getitem advanced": (lambda x: x[[0, 2], 1:3] * x[:, [4, 0]].sum(), (A,), (0,)),
    "cat/stack": (lambda x, y: dg.cat([x, y[None]], 0).sum(0) + dg.stack([y, y * 2]).sum(0),
                  (A, B), (0, 0)),
    "cat shared": (lambda x, y: dg.cat([x, y], 0), (A, A[0]), (0, None)),
    # products
    "matmul mv": (lambda x, w: x @ w, (A, B[0]), (0, None)),
    "matmul mm": (lambda x, w: x @ w, (A, W), (0, None)),
    "matmul shared left": (lambda x, w: w @ x, (B, A[0]), (0, None)),
    "matmul both": (lambda x, y: x @ y, (M, M), (0, 0)),
    "matmul vec-vec": (lambda x, y: x @ y, (B, B), (0, 0)),
    "matmul batched mats": (lambda x, y: x @ y, (R.standard_normal((4, 2, 3, 5)), M),
                            (0, 0)),
}


# bit for bit: the elementwise and shape families (a product, or a sum over several axes at
# once, may add in another order batched, so those are held to 1e-15)
EXACT = {"unary", "binary shared", "pow/max/abs", "compare/where", "in_dim 1", "in_dim -1", "cast",
         "argmax", "reshape/permute", "transpose/unsqueeze", "getitem basic", "cat shared"}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_vmap_of_each_family_matches_a_loop(name):
    f, args, in_dims = FAMILIES[name]
    _check(f, args, in_dims, exact=name in EXACT)


def test_the_linear_row_batched_both_ways():
    from duograd.ops import linear_p
    x, w = R.standard_normal((4, 3, 5)), R.standard_normal((4, 2, 5))
    for dims in [(0, None), (None, 0), (0, 0)]:
        args = (x if dims[0] is not None else x[0], w if dims[1] is not None else w[0])
        _check(lambda a, b: linear_p(a, b), args, dims, exact=False)


def test_nested_vmap_matches_two_loops():
    x, y = R.standard_normal((3, 4, 5)), R.standard_normal((4, 5))

    def f(a, b):
        return (a[:, None] * b).sum(0) @ b + a.max()
    out = func.vmap(func.vmap(f, in_dims=(0, 0)), in_dims=(0, None))(dg.tensor(x), dg.tensor(y))
    want = np.stack([np.stack([f(dg.tensor(x[i, j]), dg.tensor(y[j])).numpy() for j in range(4)])
                     for i in range(3)])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-15, atol=1e-15)


def test_chunk_size_gives_the_same_result_and_out_dims_place_the_batch():
    x = dg.tensor(R.standard_normal((7, 3)))
    f = func.vmap(lambda a: (a.exp(), a.sum()), out_dims=(1, 0))
    g = func.vmap(lambda a: (a.exp(), a.sum()), out_dims=(1, 0), chunk_size=3)
    (e1, s1), (e2, s2) = f(x), g(x)
    assert e1.shape == (3, 7) and s1.shape == (7,)
    np.testing.assert_array_equal(e1.numpy(), e2.numpy())
    np.testing.assert_array_equal(s1.numpy(), s2.numpy())
    np.testing.assert_array_equal(e1.numpy(), np.exp(x.numpy()).T)


def test_pytree_in_dims_dicts_and_lists():
    x, y = R.standard_normal((3, 2)), R.standard_normal((2, 3))
    f = func.vmap(lambda d, ls: d["a"] * ls[0] + ls[1], in_dims=({"a": 0}, [1, None]))
    out = f({"a": dg.tensor(x)}, [dg.tensor(y), dg.tensor(1.5)])
    np.testing.assert_array_equal(out.numpy(), x * y.T + 1.5)


def test_an_output_that_does_not_depend_on_the_batch_is_expanded():
    out = func.vmap(lambda a, b: b * 2, in_dims=(0, None))(dg.ones(3, 2), dg.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(out.numpy(), np.tile([2.0, 4.0], (3, 1)))


# ---------------------------------------------------------------- errors, as torch's

def test_errors_name_the_problem_and_match_torch_classes():
    x = dg.ones(3, 2)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(lambda a, b: a + b)(x, dg.ones(4, 2))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        func.vmap(lambda a, b: a + b, in_dims=(0,))(x, x)
    with pytest.raises(ValueError, match="expected in_dim to satisfy"):
        func.vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(ValueError, match="non-Tensor"):
        func.vmap(lambda a, n: a * n, in_dims=(0, 0))(x, 3)
    with pytest.raises(ValueError, match="At least one"):
        func.vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        func.vmap(lambda a: 3)(x)
    with pytest.raises(ValueError, match="out_dims=None"):
        func.vmap(lambda a: a * 2, out_dims=None)(x)
    with pytest.raises(RuntimeError, match="randomness"):
        func.vmap(lambda a: a, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size"):
        func.vmap(lambda a: a, chunk_size=0)
    with pytest.raises(RuntimeError, match="item"):
        func.vmap(lambda a: a.sum().item())(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        func.vmap(lambda a: a if a.sum() > 0 else -a)(x)


@pytest.mark.oracle
def test_the_same_inputs_are_errors_in_torch(torch):
    x = torch.ones(3, 2)
    for call in [lambda: torch.func.vmap(lambda a, b: a + b)(x, torch.ones(4, 2)),
                 lambda: torch.func.vmap(lambda a, b: a + b, in_dims=(0,))(x, x),
                 lambda: torch.func.vmap(lambda a: a, in_dims=2)(x),
                 lambda: torch.func.vmap(lambda a, n: a * n, in_dims=(0, 0))(x, 3),
                 lambda: torch.func.vmap(lambda a: 3)(x)]:
        with pytest.raises(ValueError):
            call()
    with pytest.raises(RuntimeError):
        torch.func.vmap(lambda a: a, randomness="sometimes")(x)


def test_randomness_modes():
    x = dg.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(lambda a: a + dg.randn(3))(x)
    same = func.vmap(lambda a: a + dg.randn(3), randomness="same")(x).numpy()
    assert np.all(same == same[0]) and np.all(np.isfinite(same))
    diff = func.vmap(lambda a: a + dg.rand_like(a), randomness="different")(x).numpy()
    assert diff.shape == (4, 3) and len({tuple(r) for r in diff}) == 4
    assert np.all((diff >= 0) & (diff < 1))


# ---------------------------------------------------------------- the fallback and user rules

def test_a_primitive_without_a_rule_runs_in_a_loop_and_warns_once():
    cube = dg.Primitive("vmap_test_cube_rows", forward=lambda x: np.cumsum(x ** 3, axis=-1),
                        vjp=(lambda g, out, x: g.flip(-1).cumsum(-1).flip(-1) * 3 * x ** 2,))
    x = R.standard_normal((5, 4))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = func.vmap(cube)(dg.tensor(x))
        out2 = func.vmap(cube)(dg.tensor(x))
    msgs = [str(m.message) for m in w if "vmap_test_cube_rows" in str(m.message)]
    assert len(msgs) == 1 and "performance" in msgs[0]
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x ** 3, axis=-1))
    np.testing.assert_array_equal(out2.numpy(), out.numpy())


def test_a_primitive_can_declare_its_batching_rule():
    seen = []

    def rule(args, dims):
        seen.append(dims)
        return args[0] * 2, dims[0]
    double = dg.Primitive("vmap_test_double", forward=lambda x: x * 2,
                          vjp=(lambda g, out, x: g * 2,), batch=rule)
    x = R.standard_normal((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = func.vmap(double, in_dims=1)(dg.tensor(x))
    assert seen == [(0,)]
    np.testing.assert_array_equal(out.numpy(), (x * 2).T)


def test_library_code_that_reads_values_raises_instead_of_computing_garbage():
    logits, target = dg.tensor(R.standard_normal((4, 3))), dg.tensor([0, 2, 1, 1])
    with pytest.raises(batching.ValueAccessError):  # a batched index tensor
        func.vmap(lambda z, t: z[t])(logits, target)
    with pytest.raises(batching.ValueAccessError):  # an in-place shape change of a batched tensor
        func.vmap(lambda z: z.clone().t_())(dg.tensor(R.standard_normal((4, 2, 3))))
    # cross_entropy with batched targets takes its one-hot path (no values read)
    out = func.vmap(lambda z, t: F.cross_entropy(z[None], t[None]))(logits, target)
    want = [float(F.cross_entropy(logits[i][None], target[i][None])) for i in range(4)]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-15)
    out = func.vmap(lambda z: F.cross_entropy(z[None], dg.tensor([1])))(logits)
    want = [float(F.cross_entropy(logits[i][None], dg.tensor([1]))) for i in range(4)]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-15)
    # .data of a batched tensor is the batch's
    out = func.vmap(lambda z: z.data * 2)(logits)
    np.testing.assert_array_equal(out.numpy(), logits.numpy() * 2)


@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"reduction": "sum"},
                                {"weight": [1.0, 2.0, 3.0]}, {"ignore_index": 1},
                                {"label_smoothing": 0.1, "ignore_index": 2},
                                {"label_smoothing": 0.2, "weight": [1.0, 2.0, 3.0], "reduction": "sum"},
                                {"label_smoothing": 0.2, "weight": [0.5, 2.0, 1.0]}])
def test_cross_entropy_and_nll_with_batched_targets_match_a_loop(kw):
    z = R.standard_normal((4, 2, 3))
    t = np.array([[0, 2], [1, 1], [2, 0], [1, 2]])
    kw = {k: dg.tensor(v) if k == "weight" else v for k, v in kw.items()}
    f = lambda a, b: F.cross_entropy(a, b, **kw)  # noqa: E731
    _check(f, (z, t), (0, 0), exact=False)
    if kw.get("reduction") != "none":
        _check(lambda a, b: func.grad(f)(a, b), (z, t), (0, 0), exact=False)
    if "label_smoothing" not in kw:
        _check(lambda a, b: F.nll_loss(F.log_softmax(a, 1), b, **kw), (z, t), (0, 0), exact=False)


class _Cube(dg.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class _CubeRule(_Cube):
    generate_vmap_rule = False
    calls = 0

    @staticmethod
    def vmap(info, in_dims, x):
        _CubeRule.calls += 1
        assert info.batch_size == 4 and in_dims == (0,)
        return x ** 3, in_dims[0]


class _CubeLoop(_Cube):
    generate_vmap_rule = False


@pytest.mark.parametrize("cls", [_Cube, _CubeRule, _CubeLoop])
def test_autograd_function_under_vmap_and_vmap_of_grad(cls):
    x = R.standard_normal((4, 3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = func.vmap(cls.apply)(dg.tensor(x))
        g = func.vmap(func.grad(lambda a: cls.apply(a).sum()))(dg.tensor(x))
    np.testing.assert_array_equal(out.numpy(), x ** 3)
    np.testing.assert_allclose(g.numpy(), 3 * x ** 2, rtol=1e-15)
    warned = any("_CubeLoop" in str(m.message) for m in w)
    assert warned == (cls is _CubeLoop)
    if cls is _CubeRule:
        assert _CubeRule.calls >= 2


# ---------------------------------------------------------------- composition, against torch.func

def _mlp(params, x):
    w1, b1, w2, b2 = params
    return (x @ w1 + b1).tanh() @ w2 + b2


def _loss(params, x, y):
    out = _mlp(params, x)
    return ((out - y) ** 2).sum()


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_per_sample_gradients_of_an_mlp_match_torch_func(torch):
    shapes = [(6, 8), (8,), (8, 2), (2,)]
    ps = [R.standard_normal(s) * 0.5 for s in shapes]
    x, y = R.standard_normal((16, 6)), R.standard_normal((16, 2))

    def loss_one(w1, b1, w2, b2, xi, yi):  # one example, batched by vmap (torch's tutorial)
        return _loss((w1, b1, w2, b2), xi[None], yi[None])
    dims = (None,) * 4 + (0, 0)
    ours = func.vmap(func.grad(loss_one, argnums=(0, 1, 2, 3)), in_dims=dims)(
        *[dg.tensor(p) for p in ps], dg.tensor(x), dg.tensor(y))
    theirs = torch.func.vmap(torch.func.grad(loss_one, argnums=(0, 1, 2, 3)), in_dims=dims)(
        *[torch.tensor(p) for p in ps], torch.tensor(x), torch.tensor(y))
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)
    # and the loop of single-example backwards
    for i in (0, 7):
        one = func.grad(loss_one, argnums=(0, 1, 2, 3))(*[dg.tensor(p) for p in ps],
                                                         dg.tensor(x[i]), dg.tensor(y[i]))
        for a, b in zip(ours, one):
            np.testing.assert_allclose(a.numpy()[i], b.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_compositions_in_every_order_match_torch_func(torch):
    x, v = R.standard_normal((3, 4)), R.standard_normal((3, 4))

    def f(lib, a):
        return (lib.sin(a) * a).sum() ** 2

    def fd(a):
        return f(dg, a)

    def ft(a):
        return f(torch, a)
    X, V, TX, TV = dg.tensor(x), dg.tensor(v), torch.tensor(x), torch.tensor(v)
    pairs = [
        (func.vmap(func.grad(fd))(X), torch.func.vmap(torch.func.grad(ft))(TX)),
        (func.grad(lambda a: func.vmap(fd)(a).sum())(X),
         torch.func.grad(lambda a: torch.func.vmap(ft)(a).sum())(TX)),
        (func.vmap(lambda a, t: func.jvp(fd, (a,), (t,))[1])(X, V),
         torch.func.vmap(lambda a, t: torch.func.jvp(ft, (a,), (t,))[1])(TX, TV)),
        (func.jvp(func.vmap(fd), (X,), (V,))[1], torch.func.jvp(torch.func.vmap(ft), (TX,), (TV,))[1]),
        (func.vmap(func.jacrev(func.grad(fd)))(X), torch.func.vmap(torch.func.jacrev(torch.func.grad(ft)))(TX)),
        (func.vmap(func.hessian(fd))(X), torch.func.vmap(torch.func.hessian(ft))(TX)),
        (func.jacfwd(func.vmap(fd))(X), torch.func.jacfwd(torch.func.vmap(ft))(TX)),
        (func.vmap(func.vjp(fd, X[0])[1])(dg.ones(3)),
         torch.func.vmap(torch.func.vjp(ft, TX[0])[1])(torch.ones(3, dtype=torch.float64))),
        (func.vmap(func.vmap(func.grad(fd)))(X.reshape(3, 2, 2)),
         torch.func.vmap(torch.func.vmap(torch.func.grad(ft)))(TX.reshape(3, 2, 2))),
        (func.vmap(func.jacfwd(func.grad(fd)))(X), torch.func.vmap(torch.func.jacfwd(torch.func.grad(ft)))(TX)),
        (func.jacrev(func.vmap(fd))(X), torch.func.jacrev(torch.func.vmap(ft))(TX)),
        (func.jacfwd(func.jacrev(fd))(X[0]), torch.func.jacfwd(torch.func.jacrev(ft))(TX[0])),
        (func.jacrev(func.jacrev(fd))(X[0]), torch.func.jacrev(torch.func.jacrev(ft))(TX[0])),
        (func.vmap(func.jvp(func.grad(fd), (X[0],), (V[0],))[1].__mul__)(X),
         torch.func.vmap(torch.func.jvp(torch.func.grad(ft), (TX[0],), (TV[0],))[1].__mul__)(TX)),
        (func.grad(lambda a: func.vmap(func.grad(fd))(a).sum())(X),
         torch.func.grad(lambda a: torch.func.vmap(torch.func.grad(ft))(a).sum())(TX)),
        # the batch differentiated outside reaches the inner grad only by its closure
        (func.grad(lambda a: func.vmap(lambda r: func.grad(lambda w: ((w.sin() * r).sum()) ** 2)(V[0]))(a).sum())(X),
         torch.func.grad(lambda a: torch.func.vmap(lambda r: torch.func.grad(
             lambda w: ((w.sin() * r).sum()) ** 2)(TV[0]))(a).sum())(TX)),
    ]
    for ours, theirs in pairs:
        ours = ours[0] if isinstance(ours, tuple) else ours
        theirs = theirs[0] if isinstance(theirs, tuple) else theirs
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_vmap_in_dims_out_dims_forms_match_torch(torch):
    x, y = R.standard_normal((3, 4)), R.standard_normal((4, 3))

    def f(lib, a, b):
        return lib.exp(a) * b, (a * b).sum()
    for in_dims, out_dims in [(0, 0), ((0, 1), (1, 0)), ((1, None), -1), ((-1, 0), (0, None))]:
        ax = x if in_dims == 0 or in_dims[0] in (0,) else x.T
        ay = y.T if in_dims == 0 else (y if in_dims[1] in (1, 0) and in_dims[0] == 0 else y[:, 0])
        if in_dims == ((-1, 0)):
            ax, ay = x.T, y.T
        if in_dims == (1, None):
            ax, ay = x.T, y[:, 0]
        if in_dims == (0, 1):
            ax, ay = x, y
        if in_dims == (-1, 0):
            ax, ay = x.T, y.T
        try:
            theirs = torch.func.vmap(lambda a, b: f(torch, a, b), in_dims=in_dims,
                                     out_dims=out_dims)(torch.tensor(ax), torch.tensor(ay))
        except ValueError:
            with pytest.raises(ValueError):
                func.vmap(lambda a, b: f(dg, a, b), in_dims=in_dims,
                          out_dims=out_dims)(dg.tensor(ax), dg.tensor(ay))
            continue
        ours = func.vmap(lambda a, b: f(dg, a, b), in_dims=in_dims, out_dims=out_dims)(
            dg.tensor(ax), dg.tensor(ay))
        for o, t in zip(ours, theirs):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-15)


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_jacrev_jacfwd_hessian_with_argnums_aux_and_chunks_match_torch(torch):
    x, y = R.standard_normal(4), R.standard_normal((3, 4))

    def f(lib, a, b):
        out = lib.tanh(b @ a) * a[:3]
        return out, out.sum()
    X, Y, TX, TY = dg.tensor(x), dg.tensor(y), torch.tensor(x), torch.tensor(y)
    cases = [
        (func.jacrev(lambda a, b: f(dg, a, b)[0], argnums=(0, 1), chunk_size=2)(X, Y),
         torch.func.jacrev(lambda a, b: f(torch, a, b)[0], argnums=(0, 1), chunk_size=2)(TX, TY)),
        (func.jacrev(lambda a, b: f(dg, a, b), argnums=1, has_aux=True)(X, Y),
         torch.func.jacrev(lambda a, b: f(torch, a, b), argnums=1, has_aux=True)(TX, TY)),
        (func.jacfwd(lambda a, b: f(dg, a, b), argnums=(0,), has_aux=True)(X, Y),
         torch.func.jacfwd(lambda a, b: f(torch, a, b), argnums=(0,), has_aux=True)(TX, TY)),
        (func.jacrev(lambda a, b: f(dg, a, b))(X, Y), torch.func.jacrev(lambda a, b: f(torch, a, b))(TX, TY)),
        (func.hessian(lambda a, b: f(dg, a, b)[1], argnums=(0, 1))(X, Y),
         torch.func.hessian(lambda a, b: f(torch, a, b)[1], argnums=(0, 1))(TX, TY)),
    ]

    def flat(t):
        if isinstance(t, (tuple, list)):
            return [v for s in t for v in flat(s)]
        return [t]
    for ours, theirs in cases:
        fo, ft = flat(ours), flat(theirs)
        assert len(fo) == len(ft)
        for o, t in zip(fo, ft):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_jacrev_is_one_batched_sweep():
    """jacrev of a 64 -> 64 map records one backward pass, not 64: the count of VJP rule
    runs equals the graph's node count."""
    calls = []

    class Count:
        def on_call(self, call):
            calls.append(call[0].name)
    x = dg.tensor(R.standard_normal(64))
    w = dg.tensor(R.standard_normal((64, 64)) * 0.1)
    from duograd import _context
    with _context.listening(Count()):
        j = func.jacrev(lambda a: (w @ a).tanh())(x)
    assert j.shape == (64, 64)
    assert calls.count("matmul") <= 4   # forward, and the batched VJP (not one per row)
    want = (1 - np.tanh(w.numpy() @ x.numpy()) ** 2)[:, None] * w.numpy()
    np.testing.assert_allclose(j.numpy(), want, rtol=1e-13)


def test_batching_module_doc_names():
    assert "BatchedTensor" in batching.__all__
