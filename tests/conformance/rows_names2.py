"""Rows for branch `names2` (issue 28, item 4 continued): ``torch.linalg``'s decompositions and
their ``torch.*``/Tensor twins, ``torch.special``, splits, stacks and flips, the ``*_scatter``
family, statistics, the elementwise odds, the ``*_copy`` views, the ``torch.*`` spellings of
the in-place methods, the shape-changing in-place methods, windows and configuration flags.

Decompositions whose factors are defined up to signs (``svd``, ``eigh``) are compared through
sign-free functions of them (``U * U``), so the values and gradients are those of one
function in both libraries. Symmetric positive-definite inputs are built inside the row
(``x @ x.mT + eye``), so that the gradient reaches ``x`` through torch's own algebra too.
"""

from __future__ import annotations

from opinfo import B, F, I, S, row

LIN = dict(rtol=1e-8, atol=1e-10, rtol32=2e-3, atol32=2e-4)
SQ = [S(F(3, 3)), S(F(2, 3, 3)), S(F(1, 1))]


def _spd(m, x):
    return x @ x.mT + m.eye(x.shape[-1], dtype=x.dtype)


def _raises(f):
    """The name of what ``f`` raises, as a RuntimeError (torch's LinAlgError is one), or None."""
    try:
        f()
    except RuntimeError:
        return "raised"
    return None


def _both(name: str, fn, samples, **kw) -> None:
    """Rows for ``dg.name`` and ``Tensor.name`` of one function ``fn(m, x, *a)``."""
    row(f"dg.{name}", lambda m, x, *a, n=name, **k: getattr(m, n)(x, *a, **k), samples, **kw)
    row(f"Tensor.{name}", lambda m, x, *a, n=name, **k: getattr(x, n)(*a, **k), samples, **kw)


def _twin(name: str, samples, **kw) -> None:
    def fn(m, x, *a, n=name, **k):
        y = x.clone()
        v = y._version
        out = getattr(y, n + "_")(*a, **k)
        assert out is y and y._version > v, f"{n}_: not the same tensor, or no version bump"
        return out
    row(f"Tensor.{name}_", fn, samples, **kw)


def _torch_twin(name: str, samples, **kw) -> None:
    """``torch.name_(x, ...)`` on a clone."""
    def fn(m, x, *a, n=name, **k):
        y = x.clone()
        out = getattr(m, n + "_")(y, *a, **k)
        assert out is y
        return out
    row(f"dg.{name}_", fn, samples, **kw)


# ====================================================================== linear algebra
DET = dict(LIN, float32=False)  # torch's float32 det backward fails (lu_solve dtype) under float64 default
row("linalg.det", lambda m, x: m.linalg.det(x), SQ + [S(F(0, 0))], errors=[S(F(2, 3)), S(I(2, 2))], **DET)
_both("det", lambda m, x: m.det(x), SQ, errors=[S(F(2, 3))], **DET)
row("linalg.slogdet", lambda m, x: m.linalg.slogdet(x), SQ, errors=[S(F(3))], **LIN)
_both("slogdet", None, SQ, **LIN)
row("linalg.inv", lambda m, x: m.linalg.inv(x), SQ, errors=[S(F(2, 3)), S(F(3))], **LIN)
row("linalg.inv.singular", lambda m, x: _raises(lambda: m.linalg.inv(x * 0)), [S(F(2, 2))], grad=False)
row("linalg.inv_ex", lambda m, x: m.linalg.inv_ex(x), SQ[:2], grad=False, **LIN)
_both("inverse", None, SQ, errors=[S(F(2, 3))], **LIN)
row("linalg.solve", lambda m, a, b, **k: m.linalg.solve(a, b, **k),
    [S(F(3, 3), F(3, 2)), S(F(3, 3), F(3)), S(F(2, 3, 3), F(3, 1)), S(F(2, 3, 3), F(2, 3)),
     S(F(3, 3), F(2, 3), left=False)], errors=[S(F(3, 3), F(2, 2)), S(F(2, 3), F(2))], **LIN)
row("linalg.solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b), [S(F(3, 3), F(3, 2))], **LIN)
row("linalg.solve_triangular", lambda m, a, b, **k: m.linalg.solve_triangular(a + 3 * m.eye(3, dtype=a.dtype), b, **k),
    [S(F(3, 3), F(3, 2), upper=True), S(F(3, 3), F(3, 2), upper=False),
     S(F(3, 3), F(2, 3), upper=True, left=False), S(F(3, 3), F(3, 1), upper=False, unitriangular=True)], **LIN)
_both("triangular_solve", None, [], **LIN)
row("dg.triangular_solve.s", lambda m, b, a, **k: m.triangular_solve(b, a + 3 * m.eye(3, dtype=a.dtype), **k),
    [S(F(3, 2), F(3, 3)), S(F(3, 2), F(3, 3), upper=False), S(F(3, 2), F(3, 3), transpose=True)], **LIN)
row("Tensor.triangular_solve.s", lambda m, b, a: b.triangular_solve(a + 3 * m.eye(3, dtype=a.dtype)), [S(F(3, 2), F(3, 3))], **LIN)
row("linalg.cholesky", lambda m, x, **k: m.linalg.cholesky(_spd(m, x), **k),
    [S(F(3, 3)), S(F(2, 3, 3)), S(F(3, 3), upper=True)], **LIN)
row("linalg.cholesky.notpd", lambda m, x: _raises(lambda: m.linalg.cholesky(-_spd(m, x))), [S(F(3, 3))], grad=False)
row("linalg.cholesky_ex", lambda m, x: m.linalg.cholesky_ex(_spd(m, x)), [S(F(3, 3))], **LIN)
row("dg.cholesky", lambda m, x, *a: m.cholesky(_spd(m, x), *a), [S(F(3, 3)), S(F(3, 3), True)], **LIN)
row("Tensor.cholesky", lambda m, x, *a: _spd(m, x).cholesky(*a), [S(F(3, 3)), S(F(3, 3), True)], **LIN)
for _p in ("dg", "Tensor"):
    row(f"{_p}.cholesky_solve",
        lambda m, b, x, *a, p=_p: (m.cholesky_solve(b, m.linalg.cholesky(_spd(m, x), upper=bool(a)), *a)
                                   if p == "dg" else b.cholesky_solve(m.linalg.cholesky(_spd(m, x),
                                                                                        upper=bool(a)), *a)),
        [S(F(3, 2), F(3, 3)), S(F(3, 2), F(3, 3), True)], **LIN)
    row(f"{_p}.cholesky_inverse",
        lambda m, x, p=_p: (m.cholesky_inverse(m.linalg.cholesky(_spd(m, x))) if p == "dg"
                            else m.linalg.cholesky(_spd(m, x)).cholesky_inverse()), [S(F(3, 3))], **LIN)
row("linalg.qr", lambda m, x, *a: m.linalg.qr(x, *a), [S(F(4, 3)), S(F(3, 3)), S(F(2, 4, 3))],
    errors=[S(F(3, 3), "bad")], **LIN)
row("linalg.qr.r", lambda m, x: m.linalg.qr(x, "r").R, [S(F(4, 3, grad=False))], grad=False, **LIN)
_both("qr", None, [S(F(4, 3)), S(F(3, 3))], **LIN)
row("linalg.eigh", lambda m, x, *a: (lambda r: (r.eigenvalues, r.eigenvectors * r.eigenvectors))(
    m.linalg.eigh(x + x.mT, *a)), [S(F(3, 3)), S(F(2, 3, 3)), S(F(3, 3), "U")], errors=[S(F(3, 3), "X")], **LIN)
row("linalg.eigh.lower_read", lambda m, x: m.linalg.eigh(x)[0], [S(F(3, 3))], **LIN)
row("linalg.eigvalsh", lambda m, x: m.linalg.eigvalsh(x + x.mT), [S(F(3, 3))], **LIN)
_SVD = [S(F(4, 3)), S(F(3, 4)), S(F(2, 3, 3))]
row("linalg.svd", lambda m, x: (lambda r: (r.S, r.U * r.U, r.Vh * r.Vh))(m.linalg.svd(x, full_matrices=False)),
    _SVD, **LIN)
row("linalg.svd.full", lambda m, x: m.linalg.svd(x)[1], [S(F(4, 3))], **LIN)
row("linalg.svdvals", lambda m, x: m.linalg.svdvals(x), _SVD + [S(F(3, 1))], **LIN)
for _p in ("dg", "Tensor"):
    row(f"{_p}.svd", lambda m, x, *a, p=_p: (lambda r: (r.S, r.U * r.U, r.V * r.V))(
        m.svd(x, *a) if p == "dg" else x.svd(*a)), [S(F(4, 3)), S(F(3, 4))], **LIN)
row("linalg.pinv", lambda m, x, **k: m.linalg.pinv(x, **k), [S(F(4, 3)), S(F(3, 4)), S(F(2, 3, 3))], **LIN)
_both("pinverse", None, [S(F(4, 3)), S(F(3, 3))], **LIN)
row("linalg.matrix_power", lambda m, x, n: m.linalg.matrix_power(x, n),
    [S(F(3, 3), 3), S(F(3, 3), 0), S(F(3, 3), -2), S(F(2, 3, 3), 2), S(I(2, 2), 3)],
    errors=[S(F(2, 3), 2), S(F(3, 3), 1.5)], **LIN)
_both("matrix_power", None, [S(F(3, 3), 2), S(F(3, 3), -1)], **LIN)
row("linalg.matrix_rank", lambda m, x, **k: m.linalg.matrix_rank(x, **k),
    [S(F(4, 3)), S(F(3, 3), hermitian=False), S(F(2, 3, 4))], grad=False)
row("linalg.matrix_rank.deficient", lambda m, x: m.linalg.matrix_rank(x[:, :1] * x[:1, :]), [S(F(3, 3))], grad=False)
row("linalg.matrix_exp", lambda m, x: m.linalg.matrix_exp(x), SQ, **LIN)
_both("matrix_exp", None, SQ[:2], **LIN)
row("linalg.cond", lambda m, x, *a: m.linalg.cond(x, *a), [S(F(3, 3))], **LIN)
row("linalg.cond.p", lambda m, x, *a: m.linalg.cond(x, *a), [S(F(3, 3), "fro"), S(F(3, 3), 1)], grad=False, **LIN)
row("linalg.multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
    [S(F(2, 3), F(3, 4), F(4, 2)), S(F(3), F(3, 4), F(4)), S(F(3), F(3, 2), F(2, 2))],
    errors=[S(F(2, 3), F(2, 3), F(3, 3))], **LIN)
row("dg.chain_matmul", lambda m, a, b: m.chain_matmul(a, b), [S(F(2, 3), F(3, 4))], **LIN)
row("linalg.vecdot", lambda m, a, b, **k: m.linalg.vecdot(a, b, **k), [S(F(3, 4), F(4)), S(F(3, 4), F(3, 4), dim=0)])
row("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), [S(F(4, 3), F(1, 3)), S(F(2, 3), F(2, 3))], errors=[S(F(4, 2), F(2))])
row("linalg.matmul", lambda m, a, b: m.linalg.matmul(a, b), [S(F(2, 3), F(3))])
row("linalg.diagonal", lambda m, a, **k: m.linalg.diagonal(a, **k), [S(F(2, 3, 3)), S(F(3, 4), offset=1)])
row("linalg.vander", lambda m, x, **k: m.linalg.vander(x, **k), [S(F(3)), S(F(2, 3), N=4)])
row("dg.vander", lambda m, x, **k: m.vander(x, **k), [S(F(3)), S(F(3), N=2, increasing=True), S(I(3), N=3)],
    grad=False)  # torch's own vander backward fails on its in-place write
row("linalg.tensorinv", lambda m, x: m.linalg.tensorinv(x.reshape(2, 2, 4), ind=2), [S(F(4, 4))], **LIN)
row("linalg.tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a.reshape(2, 3, 6), b), [S(F(6, 6), F(2, 3))], **LIN)
for _n in ("solve", "eig", "symeig", "lstsq", "matrix_rank"):
    row(f"dg.{_n}", lambda m, x, n=_n: getattr(m, n)(x, x), [], errors=[S(F(2, 2))])
for _n in ("solve", "eig", "symeig", "lstsq"):
    row(f"Tensor.{_n}", lambda m, x, n=_n: getattr(x, n)(x), [], errors=[S(F(2, 2))])

# ====================================================================== special
_REAL = [S(F(3, 4)), S(F()), S(F(0, 3))]
_PPOS = [S(F(3, 4, domain="positive")), S(F(domain="positive")), S(F(0, 3, domain="positive"))]
for _n, _s in [("gammaln", _PPOS), ("digamma", _PPOS), ("psi", _PPOS), ("i0", _REAL), ("i0e", _REAL),
               ("i1", _REAL), ("i1e", _REAL), ("erfcx", _REAL), ("log_ndtr", _REAL), ("ndtr", _REAL),
               ("entr", _PPOS), ("sinc", _REAL + [S(I(3))]), ("expit", _REAL), ("erf", _REAL), ("erfc", _REAL),
               ("expm1", _REAL), ("exp2", _REAL), ("log1p", _PPOS), ("erfinv", [S(F(3, 4, domain="unit"))]),
               ("ndtri", [S(F(3, 4, domain="unit"))])]:
    row(f"special.{_n}", lambda m, x, n=_n: getattr(m.special, n)(x), _s + [S(I(3, low=1))], rtol=1e-8, atol=1e-10)
row("special.ndtri.p", lambda m, x: m.special.ndtri(x.abs() * 0.4 + 0.05), [S(F(3, 4))])
row("special.entr.edges", lambda m, x: m.special.entr(x * 0 + m.tensor([-1.0, 0.0, 2.0])), [S(F(3, grad=False))],
    grad=False)
row("special.sinc.zero", lambda m, x: m.special.sinc(x * 0), [S(F(3))])
row("special.xlog1py", lambda m, x, y: m.special.xlog1py(x, y),
    [S(F(3, 4), F(3, 4, domain="positive")), S(F(3), F(domain="positive"))])
row("special.xlog1py.zero", lambda m, x, y: m.special.xlog1py(x * 0, y), [S(F(3), F(3, domain="positive"))])
row("special.xlogy", lambda m, x, y: m.special.xlogy(x, y), [S(F(3, 4), F(3, 4, domain="positive"))])
row("special.multigammaln", lambda m, x, p: m.special.multigammaln(x + 2, p), [S(F(3, 4, domain="positive"), 1),
                                                                             S(F(3, domain="positive"), 3)],
    errors=[S(F(3, domain="positive"), 0)])
row("special.polygamma", lambda m, n, x: m.special.polygamma(n, x),
    [S(0, F(3, domain="positive")), S(1, F(3, 4, domain="positive")), S(3, F(domain="positive"))],
    rtol=1e-8, atol=1e-10)
row("special.zeta", lambda m, x, q: m.special.zeta(x + 1.5, q),
    [S(F(3, domain="positive", grad=False), F(3, domain="positive")), S(F(2, 3, domain="positive", grad=False), 2.0)])
for _n in ("gammainc", "gammaincc"):
    row(f"special.{_n}", lambda m, a, x, n=_n: getattr(m.special, n)(a, x),
        [S(F(3, 4, domain="positive", grad=False), F(3, 4, domain="positive")),
         S(F(3, domain="positive", grad=False), F(domain="positive"))])
row("special.logit", lambda m, x, *a: m.special.logit(x * 0.4, *a), [S(F(3, domain="positive")),
                                                                   S(F(3, domain="positive"), 0.3)])
row("special.round", lambda m, x, **k: m.special.round(x, **k), [S(F(3, 4)), S(F(3), decimals=2)], grad=False)
row("special.softmax", lambda m, x, d: m.special.softmax(x, d), [S(F(3, 4), 1), S(F(3, 4), 0)])
row("special.log_softmax", lambda m, x, d: m.special.log_softmax(x, d), [S(F(3, 4), 1)])
row("special.logsumexp", lambda m, x, d: m.special.logsumexp(x, d), [S(F(3, 4), 1), S(F(3, 4), (0, 1))])
for _n in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0", "airy_ai"):
    row(f"special.{_n}", lambda m, x, n=_n: getattr(m.special, n)(x),
        [S(F(3, 4, domain="positive", grad=False)), S(F(domain="positive", grad=False))], grad=False, rtol=1e-7)
for _n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"):
    row(f"special.{_n}", lambda m, x, n, k=_n: getattr(m.special, k)(x, n),
        [S(F(3, 4, domain="unit", grad=False), 0), S(F(3, 4, domain="unit", grad=False), 1),
         S(F(5, domain="unit", grad=False), 4), S(F(5, domain="unit", grad=False), I(5, low=0, high=6))],
        grad=False, rtol=1e-7, atol=1e-9)
for _n in ("lgamma", "digamma", "i0", "sinc"):
    _both(_n, None, _PPOS, rtol=1e-8, atol=1e-10)
    _twin(_n, _PPOS[:2], rtol=1e-8, atol=1e-10)
for _n in ("sinc", "i0"):
    _torch_twin(_n, _PPOS[:2])
for _p in ("dg", "Tensor"):
    row(f"{_p}.polygamma", lambda m, x, n, p=_p: m.polygamma(n, x) if p == "dg" else x.polygamma(n),
        [S(F(3, domain="positive"), 1), S(F(2, 3, domain="positive"), 2)], rtol=1e-8, atol=1e-10)
    row(f"{_p}.mvlgamma", lambda m, x, k, p=_p: m.mvlgamma(x + 2, k) if p == "dg" else (x + 2).mvlgamma(k),
        [S(F(3, domain="positive"), 2)])
    for _n in ("igamma", "igammac"):
        row(f"{_p}.{_n}", lambda m, a, x, p=_p, n=_n: getattr(m, n)(a, x) if p == "dg" else getattr(a, n)(x),
            [S(F(3, domain="positive", grad=False), F(3, domain="positive"))])
_twin("polygamma", [S(F(3, domain="positive"), 1)], rtol=1e-8, atol=1e-10)
row("Tensor.mvlgamma_", lambda m, x: (x.clone() + 2).mvlgamma_(2), [S(F(3, domain="positive"))])
row("Tensor.lgamma_.2", lambda m, x: x.clone().lgamma_(), [S(F(3, domain="positive"))])
for _n in ("igamma", "igammac"):
    row(f"Tensor.{_n}_", lambda m, a, x, n=_n: getattr(a.clone(), n + "_")(x),
        [S(F(3, domain="positive", grad=False), F(3, domain="positive"))])

# ====================================================================== splits, stacks, flips
_both("tensor_split", None, [S(F(7), 3), S(F(3, 6), [1, 4], 1), S(F(3, 6), [1, -2, 9], 1), S(F(4, 2), I(2, high=4))],
      errors=[S(F(), 2), S(F(4), 0)])
_both("hsplit", None, [S(F(3, 6), 3), S(F(6), [2])], errors=[S(F(3, 5), 2), S(F(), 1)])
_both("vsplit", None, [S(F(4, 2), 2), S(F(4, 2), [1, 3])], errors=[S(F(4), 2)])
_both("dsplit", None, [S(F(1, 2, 4), 2)], errors=[S(F(2, 4), 2)])
_both("split_with_sizes", None, [S(F(5, 2), [2, 3]), S(F(2, 5), [1, 4], 1)], errors=[S(F(5), [2, 2])])
_both("unsafe_split", None, [S(F(5, 2), 2)])
_both("unsafe_split_with_sizes", None, [S(F(5, 2), [2, 3])])
_both("unsafe_chunk", None, [S(F(5, 2), 2)])
for _n in ("atleast_1d", "atleast_2d", "atleast_3d"):
    row(f"dg.{_n}", lambda m, *xs, n=_n: getattr(m, n)(*xs), [S(F()), S(F(3)), S(F(2, 3)), S(F(1, 2, 3)),
                                                            S(F(), F(3))])
    row(f"dg.{_n}.list", lambda m, a, b, n=_n: getattr(m, n)([a, b]), [S(F(), F(2, 3))])
for _n in ("hstack", "vstack", "row_stack", "dstack", "column_stack"):
    row(f"dg.{_n}", lambda m, *xs, n=_n: getattr(m, n)(list(xs)),
        [S(F(3), F(2)) if _n == "hstack" else S(F(3), F(3)), S(F(2, 3), F(2, 3)), S(F(), F())],
        errors=[S(F(2, 3), F(3, 3)) if _n != "vstack" and _n != "row_stack" else S(F(2, 3), F(2, 2))])
row("dg.block_diag", lambda m, *xs: m.block_diag(*xs), [S(F(2, 2), F(3), F()), S(F(1, 3), I(2, 2)), S(F(0, 2), F(2, 1))],
    errors=[S(F(2, 2, 2))])
row("dg.cartesian_prod", lambda m, *xs: m.cartesian_prod(*xs), [S(F(3), F(2)), S(F(2), F(2), F(3)), S(F(3))],
    errors=[S(F(2, 2), F(2))])
row("dg.combinations", lambda m, x, *a, **k: m.combinations(x, *a, **k),
    [S(F(4)), S(F(4), 3), S(F(3), 2, with_replacement=True), S(F(2), 3), S(I(4))], errors=[S(F(2, 2))])
_both("fliplr", None, [S(F(3, 4)), S(F(2, 3, 4))], errors=[S(F(3))])
_both("flipud", None, [S(F(3, 4)), S(F(3))], errors=[S(F())])
_both("rot90", None, [S(F(3, 4)), S(F(3, 4), 2), S(F(3, 4), 3), S(F(3, 4), -1, [1, 0]), S(F(2, 3, 4), 1, [0, 2]),
                      S(F(3, 4), 4)], errors=[S(F(3), 1), S(F(3, 4), 1, [0, 0])])
_both("diagflat", None, [S(F(3)), S(F(2, 2), 1), S(F(3), -1)])
_both("msort", None, [S(F(4, 3, domain="distinct")), S(F(5, domain="distinct"))])

# ====================================================================== scatters
_both("select_scatter", None, [S(F(3, 4), F(4), 0, 1), S(F(3, 4), F(3), 1, -1)], errors=[S(F(3, 4), F(3), 0, 1),
                                                                                      S(F(3, 4), F(4), 0, 3)])
_both("slice_scatter", None, [S(F(6, 4), F(2, 4), 0, 2, 4), S(F(3, 6), F(3, 3), 1, 0, 6, 2), S(F(4), F(4))],
      errors=[S(F(6, 4), F(3, 4), 0, 2, 4)])
_both("diagonal_scatter", None, [S(F(3, 3), F(3)), S(F(3, 4), F(3), 1), S(F(4, 3), F(2), -2),
                                 S(F(2, 3, 3), F(2, 3), 0, 1, 2)], errors=[S(F(3, 3), F(2))])
for _p in ("dg", "Tensor"):
    row(f"{_p}.index_put", lambda m, x, v, idx, p=_p, **k: (m.index_put(x, idx, v, **k) if p == "dg" else
                                                            x.index_put(idx, v, **k)),
        [S(F(4, 3), F(2, 3), (I(2, high=4),)), S(F(4, 3), F(3), (I(3, high=4), I(3, high=3))),
         S(F(4, 3), F(3), (I(3, high=4),), accumulate=True), S(F(4), F(), (I(3, high=4),), accumulate=True)])
    row(f"{_p}.masked_scatter", lambda m, x, mask, s, p=_p: (m.masked_scatter(x, mask, s) if p == "dg" else
                                                             x.masked_scatter(mask, s)),
        [S(F(3, 4), B(3, 4), F(12)), S(F(3, 4), B(4), F(20))], errors=[S(F(3), F(3), F(3))])
row("dg.index_put_", lambda m, x, v, idx: m.index_put_(x.clone(), idx, v), [S(F(4, 3), F(2, 3), (I(2, high=4),))])
row("Tensor.index_put_", lambda m, x, v, idx, **k: x.clone().index_put_(idx, v, **k),
    [S(F(4, 3), F(2, 3), (I(2, high=4),)), S(F(4), F(3), (I(3, high=4),), accumulate=True)])
row("Tensor.masked_scatter_", lambda m, x, mask, s: x.clone().masked_scatter_(mask, s), [S(F(3, 4), B(3, 4), F(12))])

# ====================================================================== statistics
for _n in ("quantile", "nanquantile"):
    row(f"dg.{_n}.qtensor", lambda m, x, q, n=_n: getattr(m, n)(x, q / 2.5, 1), [S(F(4, 6), F(3, domain="positive",
                                                                                        grad=False))])
    _both(_n, None, [S(F(3, 5), 0.3), S(F(3, 5), 0.5, 1), S(F(3, 5), 0.25, 0, True), S(F(7), 0.9, interpolation="lower"),
                     S(F(2, 5), 0.35, 1, interpolation="higher"), S(F(2, 5), 0.35, 1, interpolation="midpoint"),
                     S(F(2, 5), 0.5, 1, interpolation="nearest")],
          errors=[S(F(3), 1.5), S(I(3), 0.5), S(F(3), 0.5, interpolation="cubic")])
row("dg.quantile.nan", lambda m, x: m.quantile(x / (x > -1.5), 0.5, 1), [S(F(4, 6))])
row("dg.nanquantile.nan", lambda m, x: m.nanquantile(x / (x > -1.0) * 0 + x, 0.5, 1), [S(F(4, 6))])
_both("nanmedian", None, [S(F(3, 5)), S(F(3, 5), 1), S(F(3, 5), 0, True)])
row("dg.nanmedian.nan", lambda m, x: m.nanmedian(x.masked_fill(x > 1, float("nan")), 1).values, [S(F(3, 6))],
    grad=False)
row("dg.nanmedian.nan_all", lambda m, x: m.nanmedian(x.masked_fill(x > 1, float("nan"))), [S(F(3, 6))])
row("dg.cov", lambda m, x, **k: m.cov(x, **k), [S(F(3, 5)), S(F(5)), S(F(3, 5), correction=0),
                                               S(F(2, 4), fweights=I(4, low=1, high=3)),
                                               S(F(2, 4), aweights=F(4, domain="positive", grad=False)),
                                               S(F(2, 4), correction=2, fweights=I(4, low=1, high=3),
                                                 aweights=F(4, domain="positive"))],
    errors=[S(F(2, 2, 2)), S(F(2, 4), fweights=F(4))])
row("Tensor.cov", lambda m, x, **k: x.cov(**k), [S(F(3, 5)), S(F(3, 5), correction=0)])
_both("corrcoef", None, [S(F(3, 5)), S(F(5))])
row("dg.histogram", lambda m, x, *a, **k: m.histogram(x, *a, **k),
    [S(F(20, grad=False)), S(F(4, 5, grad=False), 4), S(F(20, grad=False), 5, range=(-1.0, 1.0)),
     S(F(20, grad=False), 3, density=True), S(F(20, grad=False), 3, weight=F(20, domain="positive", grad=False))],
    grad=False)
row("Tensor.histogram", lambda m, x, *a: x.histogram(*a), [S(F(20, grad=False), 4)], grad=False)
_both("renorm", None, [S(F(3, 4), 2, 0, 1.0), S(F(3, 4), 1, 1, 0.5), S(F(2, 3, 4), 3, -1, 2.0)],
      errors=[S(F(3, 4), -1, 0, 1.0)])
_twin("renorm", [S(F(3, 4), 2, 0, 1.0)])
row("dg.cdist", lambda m, a, b, *p: m.cdist(a, b, *p), [S(F(4, 3), F(5, 3)), S(F(2, 4, 3), F(2, 2, 3), 1.0),
                                                        S(F(4, 3), F(5, 3), 3.0)],
    errors=[S(F(4, 3), F(5, 2)), S(F(3), F(3))])
row("dg.pdist", lambda m, x, *p: m.pdist(x, *p), [S(F(4, 3)), S(F(5, 2), 1.0)], errors=[S(F(3))])

# ====================================================================== elementwise
_both("float_power", None, [S(F(3, 4, domain="positive"), 2.5), S(F(3, domain="positive"), F(3)), S(I(3), 2),
                            S(I(3), I(3))])
_twin("float_power", [S(F(3, domain="positive"), 2.0)], float32=False)
_both("logaddexp2", None, [S(F(3, 4), F(4)), S(F(), F())])
_both("ldexp", None, [S(F(3, 4), I(4)), S(F(3), I(3, low=-2, high=3)), S(I(3), I(3))], grad=False)
_twin("ldexp", [S(F(3), I(3))])
_both("frexp", None, [S(F(3, 4)), S(F())], grad=False, errors=[S(I(3))])
for _n in ("gcd", "lcm"):
    _both(_n, None, [S(I(3, 4, low=-9, high=20), I(4, low=0, high=12)), S(I(3), I(3, high=9))], errors=[S(F(3), F(3))])
    _twin(_n, [S(I(3, low=-9, high=20), I(3, low=0, high=12))])
    _torch_twin(_n, [S(I(3, low=-9, high=20), I(3, low=0, high=12))])
for _n in ("bitwise_left_shift", "bitwise_right_shift"):
    _both(_n, None, [S(I(3, 4, low=-9, high=20), I(4, low=0, high=4)), S(I(3), 2)], errors=[S(F(3), F(3))])
    _twin(_n, [S(I(3, low=-9, high=20), I(3, low=0, high=4))])
_both("nextafter", None, [S(F(3, 4), F(4)), S(F(3), F(3))], grad=False)
_twin("nextafter", [S(F(3, grad=False), F(3, grad=False))], grad=False)
for _n in ("isposinf", "isneginf", "isreal"):
    _both(_n, None, [S(F(3, 4)), S(I(3))], grad=False)
    row(f"dg.{_n}.inf", lambda m, x, n=_n: getattr(m, n)(x / 0), [S(F(5, grad=False))], grad=False)
row("dg.isin", lambda m, a, b, **k: m.isin(a, b, **k), [S(I(3, 4, high=9), I(5, high=9)), S(I(4), I(2), invert=True),
                                                      S(F(5, domain="ties"), F(2, domain="ties"))], grad=False)
_both("unique_consecutive", None, [S(I(10, high=3)), S(I(10, high=3), True, True),
                                   S(F(6, domain="ties", grad=False))], grad=False)

# ====================================================================== windows and creation
for _n in ("bartlett_window", "blackman_window", "hann_window", "hamming_window", "kaiser_window"):
    row(f"dg.{_n}", lambda m, *a, n=_n, **k: getattr(m, n)(*a, **k), [S(7), S(6, False), S(1), S(0), S(5, dtype=None)],
        errors=[S(-1)])
row("dg.hamming_window.ab", lambda m: m.hamming_window(6, True, 0.5, 0.5), [S()])
row("dg.kaiser_window.beta", lambda m: m.kaiser_window(6, False, 5.0), [S()])
row("dg.logspace", lambda m, *a, **k: m.logspace(*a, **k), [S(0, 2, 3), S(-1, 1, 5, 2.0), S(0, 1, 0)])
row("dg.scalar_tensor", lambda m, v, **k: m.scalar_tensor(v, **k), [S(3), S(2.5), S(1, dtype=None)])
row("dg.range", lambda m, *a: m.range(*a), [S(1, 4), S(0, 1, 0.25), S(3, 0, -1)])
row("dg.broadcast_shapes", lambda m, *a: tuple(m.broadcast_shapes(*a)), [S((2, 1), (3,)), S((1,), (4, 1, 2))],
    errors=[S((2,), (3,))])
row("dg.broadcast_tensors", lambda m, *xs: m.broadcast_tensors(*xs), [S(F(3, 1), F(4)), S(F(), F(2, 2))],
    errors=[S(F(3), F(4))])
row("dg.empty_strided", lambda m, *a: tuple(m.empty_strided(*a).shape), [S((2, 3), (3, 1))])
row("dg.randint_like", lambda m, x, *a: m.randint_like(x, *a), [S(F(3, 4), 5), S(I(3), 2, 6)], compare="shape")
row("dg.fill", lambda m, x, v: m.fill(x, v), [S(F(3, 4), 2.5), S(F(3), F())])
row("dg.fill_", lambda m, x, v: m.fill_(x.clone(), v), [S(F(3, 4), 2.5)])
row("dg.zero_", lambda m, x: m.zero_(x.clone()), [S(F(3, 4))])
row("dg.promote_types", lambda m, a, b: str(m.tensor([], dtype=m.promote_types(getattr(m, a), getattr(m, b))).dtype)
    .replace("torch.", ""), [S("int32", "float32"), S("int64", "float32"), S("int32", "int64"),
                             S("float32", "float64"), S("bool", "int32")])
row("dg.can_cast", lambda m, a, b: m.can_cast(getattr(m, a), getattr(m, b)),
    [S("float64", "int32"), S("int32", "float32"), S("float32", "float64"), S("int64", "bool"),
     S("bool", "int64")])
row("dg.is_same_size", lambda m, a, b: m.is_same_size(a, b), [S(F(3), F(3)), S(F(3), F(2, 3))])
row("Tensor.is_same_size", lambda m, a, b: a.is_same_size(b), [S(F(3), F(3)), S(F(3), F(2, 3))])
row("dg.is_signed", lambda m, x: m.is_signed(x), [S(F(3)), S(I(3)), S(B(3))])
row("dg.typename", lambda m, x: m.typename(x), [S(F(3)), S(I(3)), S(B(2))], float32=False)
row("dg.get_device", lambda m, x: m.get_device(x), [S(F(3))])
row("dg.permute", lambda m, x, d: m.permute(x, d), [S(F(2, 3, 4), (2, 0, 1)), S(F(2, 3), (-1, 0))])
row("dg.adjoint", lambda m, x: m.adjoint(x), [S(F(2, 3)), S(F(2, 3, 4))])
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    row(f"dg.{_n}", lambda m, a, b, n=_n: getattr(m, n)(a, b), [S(I(3, high=9), I(3, high=9)), S(B(3), B(3))])
row("dg.bitwise_not", lambda m, a: m.bitwise_not(a), [S(I(3, high=9)), S(B(3))])
row("dg.tensordot", lambda m, a, b, **k: m.tensordot(a, b, **k),
    [S(F(2, 3, 4), F(3, 4, 5)), S(F(2, 3), F(3, 4), dims=1), S(F(2, 3, 4), F(4, 3), dims=([1, 2], [1, 0])),
     S(F(2, 3), F(4), dims=0)], errors=[S(F(2, 3), F(2, 3), dims=1)])
row("dg.unravel_index", lambda m, i, s: m.unravel_index(i, s), [S(I(5, high=12), (3, 4)), S(I(3, high=6), (6,))],
    errors=[S(F(3), (2,))])
row("dg.frobenius_norm", lambda m, x, d, *k: m.frobenius_norm(x, d, *k), [S(F(3, 4), (0, 1)), S(F(2, 3, 4), (1, 2), True)])
row("dg.nuclear_norm", lambda m, x, *a: m.nuclear_norm(x, *a), [S(F(3, 4)), S(F(3, 4), True), S(F(2, 3, 4), (1, 2))],
    **LIN)
for _p in ("dg", "Tensor"):
    row(f"{_p}.hardshrink", lambda m, x, *a, p=_p: m.hardshrink(x, *a) if p == "dg" else x.hardshrink(*a),
        [S(F(3, 4)), S(F(3, 4), 1.0)])
row("dg.threshold", lambda m, x, t, v: m.threshold(x, t, v), [S(F(3, 4), 0.5, -1.0), S(F(), 0.0, 2.0)])
row("dg.threshold_", lambda m, x, t, v: m.threshold_(x.clone(), t, v), [S(F(3, 4), 0.5, -1.0)])
row("dg.rrelu", lambda m, x, *a: m.rrelu(x, *a), [S(F(3, 4)), S(F(3, 4), 0.1, 0.3)])
row("dg.rrelu.train", lambda m, x: m.rrelu(x, training=True), [S(F(3, 4))], compare="shape", grad=False)
row("dg.rrelu_", lambda m, x, *a: m.rrelu_(x.clone(), *a), [S(F(3, 4), 0.1, 0.3)])
for _n in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"):
    row(f"dg.{_n}", lambda m, x, p, t, n=_n: getattr(m, n)(x, p, t), [S(F(3, 4), 0.5, False), S(F(2, 3, 4), 0.3, False),
                                                                      S(F(3, 4), 0.0, True)])
    row(f"dg.{_n}.train", lambda m, x, n=_n: getattr(m, n)(x, 0.5, True), [S(F(3, 4, 2))], compare="shape", grad=False)
    row(f"dg.{_n}_", lambda m, x, n=_n: getattr(m, n + "_")(x.clone(), 0.5, False), [S(F(3, 4))])
row("dg.layer_norm", lambda m, x, *a: m.layer_norm(x, *a), [S(F(3, 4), [4]), S(F(2, 3, 4), [3, 4], F(3, 4), F(3, 4))])
row("dg.group_norm", lambda m, x, *a: m.group_norm(x, *a), [S(F(2, 4, 3), 2), S(F(2, 4, 3), 4, F(4), F(4))])
row("dg.batch_norm", lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
    [S(F(4, 3), F(3), F(3)), S(F(4, 3, 2), F(3), F(3))])
row("dg.instance_norm", lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
    [S(F(2, 3, 5), F(3), F(3)), S(F(2, 3, 2, 2), None, None)])
row("dg.embedding", lambda m, w, i: m.embedding(w, i), [S(F(5, 3), I(4, high=5)), S(F(5, 3), I(2, 2, high=5))])
row("dg.kl_div", lambda m, x, t, *a, **k: m.kl_div(x, t, *a, **k),
    [S(F(3, 4), F(3, 4, domain="positive")), S(F(3, 4), F(3, 4, domain="positive"), 0),
     S(F(3, 4), F(3, 4), 2, log_target=True)])
row("dg.binary_cross_entropy_with_logits", lambda m, x, t, *a: m.binary_cross_entropy_with_logits(x, t, *a),
    [S(F(3, 4), F(3, 4, domain="unit", grad=False)), S(F(3, 4), F(3, 4, domain="unit", grad=False), F(4, grad=False), F(4, grad=False), 2)])
row("dg.pairwise_distance", lambda m, a, b, *p: m.pairwise_distance(a, b, *p), [S(F(3, 4), F(3, 4)), S(F(3, 4), F(4), 1.0)])
row("dg.margin_ranking_loss", lambda m, a, b, y, *k: m.margin_ranking_loss(a, b, y.sign(), *k),
    [S(F(5), F(5), F(5, grad=False)), S(F(5), F(5), F(5, grad=False), 0.5, 0)])
row("dg.hinge_embedding_loss", lambda m, x, y, *k: m.hinge_embedding_loss(x, y.sign(), *k),
    [S(F(5), F(5, grad=False)), S(F(5), F(5, grad=False), 0.5, 2)])
row("dg.cosine_embedding_loss", lambda m, a, b, y, *k: m.cosine_embedding_loss(a, b, y.sign(), *k),
    [S(F(4, 3), F(4, 3), F(4, grad=False)), S(F(4, 3), F(4, 3), F(4, grad=False), 0.2, 0)], rtol=1e-8)
row("dg.triplet_margin_loss", lambda m, a, p, n, *k: m.triplet_margin_loss(a, p, n, *k),
    [S(F(4, 3), F(4, 3), F(4, 3)), S(F(4, 3), F(4, 3), F(4, 3), 0.5, 1.0, 1e-6, True, 0)])
row("dg.poisson_nll_loss", lambda m, x, t, *a: m.poisson_nll_loss(x, t, *a),
    [S(F(3, 4), F(3, 4, domain="positive", grad=False), True, False, 1e-8, 1),
     S(F(3, 4, domain="positive"), F(3, 4, domain="positive", grad=False), False, True, 1e-8, 2)])
row("dg.pixel_shuffle", lambda m, x, r: m.pixel_shuffle(x, r), [S(F(1, 8, 2, 3), 2), S(F(4, 2, 2), 1)],
    errors=[S(F(1, 3, 2, 2), 2)])
row("dg.pixel_unshuffle", lambda m, x, r: m.pixel_unshuffle(x, r), [S(F(1, 2, 4, 6), 2)], errors=[S(F(1, 1, 3, 3), 2)])
for _n in ("channel_shuffle", "native_channel_shuffle"):
    row(f"dg.{_n}", lambda m, x, g, n=_n: getattr(m, n)(x, g), [S(F(2, 6, 3), 3), S(F(1, 4, 2, 2), 2)],
        errors=[S(F(1, 5, 2), 2)], grad=_n == "channel_shuffle")
row("dg.constant_pad_nd", lambda m, x, p, *v: m.constant_pad_nd(x, p, *v),
    [S(F(3, 4), [1, 2]), S(F(3, 4), [1, 0, 2, 1], 1.5), S(F(3, 4), [-1, 1])])
# dg.cond and dg.while_loop: not run against torch here (torch runs them through dynamo, which turns
# torch.distributions' argument validation off for the rest of the process); see coverage_map.

# ====================================================================== copies of views, torch.* in-place spellings
for _n, _s in [("alias_copy", [S(F(3, 4))]), ("detach_copy", [S(F(3, 4, grad=False))]),
               ("diagonal_copy", [S(F(3, 4)), S(F(3, 4), 1)]), ("expand_copy", [S(F(1, 4), (3, 4))]),
               ("permute_copy", [S(F(2, 3, 4), (2, 0, 1))]), ("select_copy", [S(F(3, 4), 1, 2)]),
               ("slice_copy", [S(F(5, 4), 0, 1, 4, 2), S(F(5, 4), 1, 1)]), ("split_copy", [S(F(5, 4), 2)]),
               ("split_with_sizes_copy", [S(F(5, 4), [2, 3])]), ("squeeze_copy", [S(F(1, 3, 1)), S(F(1, 3, 1), 0)]),
               ("t_copy", [S(F(3, 4))]), ("transpose_copy", [S(F(2, 3, 4), 0, 2)]), ("unbind_copy", [S(F(3, 4), 1)]),
               ("unfold_copy", [S(F(3, 6), 1, 2, 2)]), ("unsqueeze_copy", [S(F(3, 4), 1)]),
               ("view_copy", [S(F(3, 4), (4, 3)), S(F(3, 4), (-1,))]),
               ("as_strided_copy", [S(F(12), (3, 3), (3, 1)), S(F(12), (2, 2), (1, 4), 2)]),
               ("narrow_copy", [S(F(5, 4), 0, 1, 3)])]:
    row(f"dg.{_n}", lambda m, x, *a, n=_n: getattr(m, n)(x, *a), _s, grad="detach" not in _n)
row("dg.as_strided", lambda m, x, *a: m.as_strided(x, *a), [S(F(12), (3, 3), (3, 1)), S(F(3, 4), (2, 2), (1, 4), 2),
                                                           S(F(6), (3, 2), (1, 1))],
    errors=[S(F(4), (3, 3), (3, 1))])
row("Tensor.as_strided", lambda m, x, *a: x.as_strided(*a), [S(F(12), (3, 3), (3, 1))])
row("Tensor.narrow_copy", lambda m, x, *a: x.narrow_copy(*a), [S(F(5, 4), 1, 1, 2)])
_UN = "abs acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan atanh ceil cos cosh deg2rad " \
      "erf erfc exp2 exp expm1 fix floor frac log10 log1p log2 log neg negative rad2deg reciprocal relu round " \
      "rsqrt sigmoid sin sinh sqrt square tan tanh trunc".split()
for _n in _UN:
    dom = "positive" if _n in ("log10", "log1p", "log2", "log", "rsqrt", "sqrt", "reciprocal", "acosh", "arccosh") \
        else "unit" if _n in ("acos", "arccos", "asin", "arcsin", "atanh", "arctanh") else "real"
    x = F(3, 4, domain=dom) if _n not in ("acosh", "arccosh") else F(3, 4, domain="positive")
    if _n in ("acosh", "arccosh", "atanh", "arctanh", "asinh", "arcsinh"):  # torch: no in-place derivative
        row(f"dg.{_n}_", lambda m, x, n=_n: getattr(m, n + "_")(x.clone() + (1 if "cosh" in n else 0)), [S(x)],
            grad=False)
    elif _n in ("ceil", "floor", "round", "trunc", "fix", "frac"):
        row(f"dg.{_n}_", lambda m, x, n=_n: getattr(m, n + "_")(x.clone()), [S(x)], grad=False)
    else:
        _torch_twin(_n, [S(x)])
_torch_twin("clamp", [S(F(3, 4), -0.5, 0.5)])
_torch_twin("clip", [S(F(3, 4), -0.5, 0.5)])
_torch_twin("clamp_min", [S(F(3, 4), 0.1)])
_torch_twin("clamp_max", [S(F(3, 4), 0.1)])
_torch_twin("logit", [S(F(3, 4, domain="unit"), 0.1)])
_torch_twin("nan_to_num", [S(F(3, 4))])
_torch_twin("xlogy", [S(F(3, 4), F(3, 4, domain="positive"))])
_torch_twin("ldexp", [S(F(3), I(3))])
row("dg.addmv_", lambda m, x, a, v: m.addmv_(x.clone(), a, v), [S(F(3), F(3, 4), F(4))])
row("dg.detach_", lambda m, x: m.detach_(x.clone()), [S(F(3))], grad=False)
row("dg.celu_", lambda m, x: m.celu_(x.clone()), [S(F(3, 4))])
row("dg.selu_", lambda m, x: m.selu_(x.clone()), [S(F(3, 4))])
row("dg.resize_as_", lambda m, x, t: m.resize_as_(x.clone(), t), [S(F(3, 4, grad=False), F(2, 6, grad=False))],
    grad=False)
row("dg.conj_physical_", lambda m, x: m.conj_physical_(x.clone()), [S(F(3))])

# ====================================================================== Tensor: shape-changing in-place, identities
row("Tensor.t_", lambda m, x: x.clone().t_(), [S(F(3, 4)), S(F(3)), S(F())], errors=[S(F(2, 3, 4))])
row("Tensor.t_.view", lambda m, x: (lambda y: (y.t_(), y * 1)[1])(x * 2), [S(F(3, 4))])
for _n in ("transpose_", "swapaxes_", "swapdims_"):
    row(f"Tensor.{_n}", lambda m, x, a, b, n=_n: getattr(x.clone(), n)(a, b), [S(F(2, 3, 4), 0, 2), S(F(3, 4), -1, 0)],
        errors=[S(F(3, 4), 0, 2)])
row("Tensor.squeeze_", lambda m, x, *d: x.clone().squeeze_(*d), [S(F(1, 3, 1)), S(F(1, 3, 1), 0), S(F(1, 3, 1), 1)])
row("Tensor.unsqueeze_", lambda m, x, d: x.clone().unsqueeze_(d), [S(F(3, 4), 0), S(F(3, 4), -1), S(F(), 0)],
    errors=[S(F(3), 3)])
row("Tensor.squeeze_.then_grad", lambda m, x: (lambda y: y.squeeze_(0) * y.squeeze_(0))(x * 1), [S(F(1, 3))])
row("Tensor.resize_", lambda m, x, *s: x.clone().resize_(*s), [S(F(3, 4, grad=False), 2, 6),
                                                              S(F(3, 4, grad=False), (12,)),
                                                              S(F(3, 4, grad=False), 2, 3)], grad=False)
row("Tensor.resize_.grad", lambda m, x: x.resize_(2, 6), [], errors=[S(F(3, 4))])
row("Tensor.resize_as_", lambda m, x, t: x.clone().resize_as_(t), [S(F(3, 4, grad=False), F(2, 6, grad=False))],
    grad=False)
row("Tensor.resize", lambda m, x, *s: x.detach().resize(*s), [S(F(3, 4, grad=False), 4, 3)], grad=False)
row("Tensor.resize_as", lambda m, x, t: x.detach().resize_as(t), [S(F(3, 4, grad=False), F(6, 2, grad=False))],
    grad=False)
row("Tensor.H", lambda m, x: x.H, [S(F(3, 4)), S(F())], errors=[S(F(2, 3, 4))])
row("Tensor.real", lambda m, x: x.real, [S(F(3, 4))])
row("Tensor.imag", lambda m, x: x.imag, [], errors=[S(F(3))])
row("dg.real", lambda m, x: m.real(x), [S(F(3, 4))])
row("dg.imag", lambda m, x: m.imag(x), [], errors=[S(F(3))])
for _n in ("conj", "conj_physical", "resolve_conj", "resolve_neg"):
    _both(_n, None, [S(F(3, 4)), S(I(3))])
row("Tensor.conj_physical_", lambda m, x: x.clone().conj_physical_(), [S(F(3))])
for _n in ("is_conj", "is_neg", "is_inference", "is_distributed"):
    _both(_n, None, [S(F(3))])
_both("angle", None, [S(F(3, 4), label="angle"), S(I(3, low=-3))], grad=False)
row("Tensor.is_set_to", lambda m, x: (x.is_set_to(x), x.is_set_to(x.clone())), [S(F(3))])
row("Tensor.apply_", lambda m, x: x.clone().apply_(lambda v: v * 2 + 1), [S(F(3, 4, grad=False))], grad=False)
row("Tensor.map_", lambda m, x, y: x.clone().map_(y, lambda a, b: a * b + 1), [S(F(3, 4, grad=False), F(4, grad=False))],
    grad=False)
row("Tensor.map2_", lambda m, x, y, z: x.clone().map2_(y, z, lambda a, b, c: a + b * c),
    [S(F(3, grad=False), F(3, grad=False), F(3, grad=False))], grad=False)
row("Tensor.fill_diagonal_", lambda m, x, *a: x.clone().fill_diagonal_(*a),
    [S(F(3, 3), 2.0), S(F(3, 4), 1.5), S(F(7, 3), 2.0, True), S(F(7, 3), 2.0), S(F(2, 2, 2), 0.5)],
    errors=[S(F(3), 1.0)])
row("Tensor.new", lambda m, x, *a: x.new(*a), [S(F(3), [1.0, 2.0]), S(I(3), [1, 2])], grad=False)
row("Tensor.new.sizes", lambda m, x, *a: x.new(*a), [S(F(3), 2, 3)], grad=False, compare="shape")
row("Tensor.new_empty_strided", lambda m, x: tuple(x.new_empty_strided((2, 3), (3, 1)).shape), [S(F(3))])
row("Tensor.dim_order", lambda m, x: x.dim_order(), [S(F(2, 3, 4))])
for _n in ("byte", "char", "short", "half"):
    row(f"Tensor.{_n}", lambda m, x, n=_n: getattr(x * 3, n)(), [S(F(3, 4, domain="positive"))], grad=False,
        rtol=1e-3, atol=1e-3, rtol32=1e-3, atol32=1e-3)
row("Tensor.layout", lambda m, x: str(x.layout), [S(F(3))], float32=False)
row("Tensor.name", lambda m, x: x.name, [S(F(3))], compare=lambda d, t: None)
row("Tensor.output_nr", lambda m, x: (x * 2).output_nr, [S(F(3))])

# ====================================================================== configuration (each restores torch's default)
row("dg.set_warn_always", lambda m: (m.set_warn_always(True), m.is_warn_always_enabled(), m.set_warn_always(False))[1],
    [S()])
row("dg.is_warn_always_enabled", lambda m: m.is_warn_always_enabled(), [S()])
row("dg.set_deterministic_debug_mode",
    lambda m, v: (m.set_deterministic_debug_mode(v), m.get_deterministic_debug_mode(),
                  m.set_deterministic_debug_mode(0))[1], [S("warn"), S(2), S("default")], errors=[S("loud"), S(5)])
row("dg.get_deterministic_debug_mode", lambda m: m.get_deterministic_debug_mode(), [S()])
row("dg.get_default_device", lambda m: str(m.get_default_device()), [S()])
row("dg.set_default_device", lambda m: (m.set_default_device("cpu"), str(m.get_default_device()))[1], [S()])
row("dg.set_flush_denormal", lambda m: m.set_flush_denormal(False), [S()])
row("dg.is_anomaly_enabled", lambda m: m.is_anomaly_enabled(), [S()])
row("dg.is_anomaly_check_nan_enabled", lambda m: m.is_anomaly_check_nan_enabled(), [S()])
row("dg.set_anomaly_enabled", lambda m: (m.set_anomaly_enabled(True), m.is_anomaly_enabled(),
                                         m.set_anomaly_enabled(False), m.is_anomaly_enabled())[1::2], [S()])
row("dg.set_default_tensor_type", lambda m: (m.set_default_tensor_type(m.DoubleTensor), str(m.get_default_dtype()))[1]
    .replace("torch.", ""), [S()], compare=lambda d, t: None)
row("dg.set_printoptions", lambda m: m.set_printoptions(profile="default"), [S()], compare=lambda d, t: None)
row("dg.is_autocast_enabled", lambda m, *a: m.is_autocast_enabled(*a), [S(), S("cpu")])
row("dg.is_autocast_cpu_enabled", lambda m: m.is_autocast_cpu_enabled(), [S()])
row("dg.is_autocast_ipu_enabled", lambda m: m.is_autocast_ipu_enabled(), [S()])
row("dg.is_autocast_xla_enabled", lambda m: m.is_autocast_xla_enabled(), [S()])
row("dg.is_autocast_cache_enabled", lambda m: m.is_autocast_cache_enabled(), [S()])
row("dg.set_autocast_enabled", lambda m: (m.set_autocast_enabled("cpu", True), m.is_autocast_enabled("cpu"),
                                          m.set_autocast_enabled("cpu", False))[1], [S()])
row("dg.set_autocast_cpu_enabled", lambda m: (m.set_autocast_cpu_enabled(True), m.is_autocast_cpu_enabled(),
                                              m.set_autocast_cpu_enabled(False))[1], [S()])
row("dg.set_autocast_cache_enabled", lambda m: (m.set_autocast_cache_enabled(False), m.is_autocast_cache_enabled(),
                                                m.set_autocast_cache_enabled(True))[1], [S()])
row("dg.set_autocast_ipu_enabled", lambda m: (m.set_autocast_ipu_enabled(False), m.is_autocast_ipu_enabled())[1],
    [S()])
row("dg.set_autocast_xla_enabled", lambda m: (m.set_autocast_xla_enabled(False), m.is_autocast_xla_enabled())[1],
    [S()])
row("dg.clear_autocast_cache", lambda m: m.clear_autocast_cache(), [S()], compare=lambda d, t: None)
row("dg.autocast_increment_nesting", lambda m: (m.autocast_increment_nesting(), m.autocast_decrement_nesting()),
    [S()])
row("dg.autocast_decrement_nesting", lambda m: (m.autocast_increment_nesting(), m.autocast_decrement_nesting())[1],
    [S()])
for _n in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
           "BoolTensor", "HalfTensor"):
    row(f"dg.{_n}", lambda m, n=_n: (getattr(m, n)([1, 0, 2]), getattr(m, n)(2, 3).shape == (2, 3),
                                     getattr(m, n)().shape == (0,), isinstance(getattr(m, n)([1]), getattr(m, n)),
                                     isinstance(m.tensor([1.5]), getattr(m, n))), [S()])
row("dg.LongTensor.from_tensor", lambda m, x: m.LongTensor(x), [], errors=[])
