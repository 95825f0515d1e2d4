"""The rows the distributions need (and ``special``, ``linalg`` reuse): the gamma family's
special functions (``lgamma_p``, ``digamma_p``, ``polygamma_p``, ``gammainc_p``), triangular
and general solves and the Cholesky factor, and the implicit reparameterisation of the
standard gamma and Dirichlet samplers. Each is a ``Primitive`` row whose derivative rules
are written in Tensor algebra (so they differentiate again where the rule is itself
differentiable). The compositions the distributions share (``lgamma``, ``xlogy``,
``batch_mahalanobis``, ...) are in ``duograd/distributions/_ops.py``, the layer above.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import ELEMENTWISE, Primitive


def _float(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _sp(name: str) -> Any:
    def fn(*xs: np.ndarray, **kw: Any) -> np.ndarray:
        import scipy.special  # noqa: PLC0415  (first use only: scipy is slow to import)
        x = _float(xs[-1])
        return np.asarray(getattr(scipy.special, name)(*xs[:-1], x, **kw)).astype(x.dtype, copy=False)
    return fn


def _polygamma_fwd(x: np.ndarray, n: int) -> np.ndarray:
    import scipy.special  # noqa: PLC0415
    x = _float(x)
    return np.asarray(scipy.special.polygamma(n, x)).astype(x.dtype, copy=False)


lgamma_p = Primitive("lgamma", _sp("gammaln"), vjp=(lambda g, out, x: g * digamma_p(x),), jvp=ELEMENTWISE)
digamma_p = Primitive("digamma", _sp("psi"), vjp=(lambda g, out, x: g * polygamma_p(x, n=1),),
                      jvp=ELEMENTWISE)
polygamma_p = Primitive("polygamma", _polygamma_fwd,
                        vjp=(lambda g, out, x, n: g * polygamma_p(x, n=n + 1),), jvp=ELEMENTWISE)


def _gammainc_fwd(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    import scipy.special  # noqa: PLC0415
    dt = np.result_type(_float(np.asarray(a)), _float(np.asarray(x)))
    return np.asarray(scipy.special.gammainc(a, x)).astype(dt, copy=False)


# The regularised lower incomplete gamma P(a, x): only x is differentiated (as torch: the
# derivative in a has no closed form and torch does not give it either).
gammainc_p = Primitive("gammainc", _gammainc_fwd,
                       vjp=(None, lambda g, out, a, x: g * (
                           ((a - 1) * x.log() - x - lgamma_p(a)).exp())))


# --------------------------------------------------------------------------- linear algebra

def _mT(x: Tensor) -> Tensor:
    return x.transpose(-1, -2)


def _trisolve_fwd(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    tri = np.triu(a) if upper else np.tril(a)
    return np.linalg.solve(tri, b)


def _tri_mask(t: Tensor, upper: bool) -> np.ndarray:
    n = t.shape[-1]
    ones = np.ones((n, n), dtype=t.dtype)
    return np.triu(ones) if upper else np.tril(ones)


def _trisolve_vjp_a(g: Tensor, out: Tensor, a: Tensor, b: Tensor, upper: bool) -> Tensor:
    gb = trisolve_p(_mT(a), g, upper=not upper)
    return -(gb @ _mT(out)) * _tri_mask(a, upper)  # only the triangle that was read


# X = A^{-1} B with A triangular (only its triangle read): B's cotangent A^{-T} g, A's
# -(A^{-T} g) X^T restricted to that triangle.
trisolve_p = Primitive("solve_triangular", _trisolve_fwd,
                       vjp=(_trisolve_vjp_a,
                            lambda g, out, a, b, upper: trisolve_p(_mT(a), g, upper=not upper)))


def _solve_vjp_a(g: Tensor, out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    return -(solve_p(_mT(a), g) @ _mT(out))


solve_p = Primitive("solve", lambda a, b: np.linalg.solve(a, b),
                    vjp=(_solve_vjp_a, lambda g, out, a, b: solve_p(_mT(a), g)))


def _cholesky_vjp(g: Tensor, out: Tensor, a: Tensor) -> Tensor:
    # A = L L^T: P = tril(L^T g) with its diagonal halved and mirrored, then
    # L^{-T} P L^{-1} (the rule torch's cholesky_backward uses).
    lower = _tri_mask(out, False)
    p = (_mT(out) @ g) * lower
    p = 0.5 * (p + _mT(p * np.tril(np.ones_like(lower), -1)))
    x = trisolve_p(_mT(out), p, upper=True)              # L^{-T} P
    return _mT(trisolve_p(_mT(out), _mT(x), upper=True))  # (L^{-T} X^T)^T = X L^{-1}


def _cholesky_fwd(a: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise ValueError(f"cholesky: the matrix of shape {a.shape} is not positive-definite") from None


cholesky_p = Primitive("cholesky", _cholesky_fwd, vjp=(_cholesky_vjp,))


# --------------------------------------------------------------------------- implicit reparameterisation

def _gamma_dz_dalpha(z: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """dz/dalpha for z ~ Gamma(alpha, 1) drawn by inverting its CDF: -(dF/dalpha) / f(z).

    dF/dalpha (F the regularised incomplete gamma P(alpha, z)) has no closed form; it is
    taken by Richardson extrapolation of central differences of scipy's ``gammainc`` in
    alpha (error O(h^4), relative accuracy near 1e-9)."""
    import scipy.special  # noqa: PLC0415
    z, alpha = np.broadcast_arrays(np.asarray(z, dtype=np.float64), np.asarray(alpha, dtype=np.float64))
    dfda = _richardson(lambda a: scipy.special.gammainc(a, z), alpha)
    logpdf = (alpha - 1) * np.log(z) - z - scipy.special.gammaln(alpha)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = -dfda / np.exp(logpdf)
    return np.where(z > 0, out, 0.0)


# d z / d alpha as a primitive of its own (no further derivative: second order raises)
gamma_grad_p = Primitive("standard_gamma_grad",
                         lambda z, alpha: _gamma_dz_dalpha(z, alpha).astype(np.result_type(z, alpha)))

def _gamma_icdf(alpha: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Gamma(alpha, 1) draws from uniform ones by the inverse CDF (kept above the dtype's
    smallest normal number, as torch clamps its draws)."""
    import scipy.special  # noqa: PLC0415
    dt = np.result_type(alpha, u)
    z = scipy.special.gammaincinv(alpha, u)
    return np.maximum(z, np.finfo(dt).tiny).astype(dt, copy=False)


# z = F^{-1}(u; alpha): the uniform noise u is drawn outside, so a dg.compile replay draws it
# anew and recomputes z from the new alpha; alpha is differentiated by the implicit rule
standard_gamma_p = Primitive("standard_gamma", _gamma_icdf,
                             vjp=(lambda g, out, alpha, u: g * gamma_grad_p(out, alpha), None))



def _richardson(f: Any, a: np.ndarray) -> np.ndarray:
    """d f / d a by Richardson-extrapolated central differences (error O(h^4))."""
    h = np.minimum(1e-3 * np.maximum(a, 1e-3), 0.4 * a)

    def d(step: np.ndarray) -> np.ndarray:
        return (f(a + step) - f(a - step)) / (2 * step)

    return (4 * d(h / 2) - d(h)) / 3


def _dirichlet_d(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """For x ~ Dirichlet(alpha): d x_i / d alpha_i of the marginal x_i ~ Beta(alpha_i,
    total - alpha_i) with the other concentrations fixed (implicit: -(dI/da) / f), divided by
    1 - x_i. The pathwise gradient is then D_i (e_i - x), torch's choice."""
    import scipy.special  # noqa: PLC0415
    x, alpha = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(alpha, dtype=np.float64))
    b = alpha.sum(-1, keepdims=True) - alpha
    dida = _richardson(lambda a: scipy.special.betainc(a, b, x), alpha)
    logpdf = (alpha - 1) * np.log(x) + (b - 1) * np.log1p(-x) - scipy.special.betaln(alpha, b)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = -dida / np.exp(logpdf) / (1 - x)
    return np.where((x > 0) & (x < 1), out, 0.0)


dirichlet_grad_p = Primitive("dirichlet_grad",
                             lambda x, alpha: _dirichlet_d(x, alpha).astype(np.result_type(x, alpha)))


def _dirichlet_vjp(g: Tensor, out: Tensor, alpha: Tensor, x: Tensor) -> Tensor:
    return dirichlet_grad_p(out, alpha) * (g - (out * g).sum(-1, keepdim=True))


def _dirichlet_fwd(alpha: np.ndarray, u: np.ndarray) -> np.ndarray:
    g = _gamma_icdf(alpha, u)
    fi = np.finfo(g.dtype)
    return np.clip(g / g.sum(-1, keepdims=True), fi.tiny, 1 - fi.eps)


# normalised Gamma draws from uniform noise u (drawn outside, as above); alpha differentiated
# through the implicit rule above
dirichlet_p = Primitive("dirichlet", _dirichlet_fwd, vjp=(_dirichlet_vjp, None))
