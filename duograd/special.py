"""``torch.special``: the special functions, with torch's gradients, and their
``torch.*``/Tensor twins (``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``, ``i0``,
``sinc``, ``igamma``/``igammac``).

The gamma family, the Bessel functions ``i0``/``i0e``/``i1``/``i1e``, ``erfcx``, ``ndtri``,
``log_ndtr``, ``entr`` and ``zeta`` are primitives (SciPy's values; their rows are in
``duograd/rows/special.py`` and re-exported here) whose VJPs are written with other rows,
so they differentiate again; ``ndtr``, ``xlog1py``, ``sinc``,
``multigammaln``, ``expit`` are compositions. The functions torch does not differentiate
(the Bessel functions J, Y, K, Airy's Ai, the orthogonal polynomials) give results
without history, as torch's backward would refuse them.

>>> import duograd as dg
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> dg.special.i0(x).sum().backward()
>>> x.grad.numpy().round(6)          # i0' = i1
array([0.565159, 1.590637])
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from . import elementwise as ew, ops
from ._tensor import Tensor, _as_tensor
from .autograd import Primitive
from .distributions._ops import digamma_p, gammainc_p, lgamma_p, polygamma_p
from .tensor_api import _out, logit as _logit, xlogy as _xlogy
# The rows, every one re-exported (rows/special.py).
from .rows.special import (  # noqa: F401
    i0_p, i0e_p, i1_p, i1e_p, erfcx_p, ndtri_p, log_ndtr_p, entr_p, zeta_p, gammaincc_p,
    _SQRT_2PI, _TWO_OVER_SQRT_PI, _entr_fwd, _gammaincc_fwd, _i1_d, _i1e_d, _scipy, _zeta_fwd)
# The selectors of the functions torch does not differentiate (rows/special.py).
from .rows.special import (
    bessel_j0_p, bessel_j1_p, bessel_y0_p, bessel_y1_p, modified_bessel_i0_p, modified_bessel_i1_p,
    modified_bessel_k0_p, modified_bessel_k1_p, scaled_modified_bessel_k0_p,
    scaled_modified_bessel_k1_p, spherical_bessel_j0_p, airy_ai_p, chebyshev_polynomial_t_p,
    chebyshev_polynomial_u_p, chebyshev_polynomial_v_p, chebyshev_polynomial_w_p,
    shifted_chebyshev_polynomial_t_p, shifted_chebyshev_polynomial_u_p,
    shifted_chebyshev_polynomial_v_p, shifted_chebyshev_polynomial_w_p, hermite_polynomial_h_p,
    hermite_polynomial_he_p, laguerre_polynomial_l_p, legendre_polynomial_p_p,
)

_int = builtins.int


def _ft(x: Any, op: str) -> Tensor:
    """x as a Tensor; integer and bool inputs promoted to the default float dtype (as torch's
    unary float functions)."""
    t = x if isinstance(x, Tensor) else _as_tensor(x, op=op)
    if t.dtype.kind != "f":
        from ._tensor import get_default_dtype  # noqa: PLC0415
        t = ops.cast_p(t, dtype=np.dtype(get_default_dtype()))
    return t


# ---------------------------------------------------------------- public functions

def _unary(name: str, prim: Any, doc: str, example: str) -> Any:
    def fn(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        return _out(prim(_ft(input, f"special.{name}")), out, f"special.{name}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc}, as ``torch.special.{name}``.\n\n    >>> import duograd as dg\n    {example}\n"
    return fn


gammaln = _unary("gammaln", lgamma_p, "log |Gamma(x)| (gradient: digamma)",
                 ">>> dg.special.gammaln(dg.tensor([3.0])).numpy().round(6)\n    array([0.693147])")
digamma = _unary("digamma", digamma_p, "The digamma function (gradient: polygamma(1, x))",
                 ">>> dg.special.digamma(dg.tensor([1.0])).numpy().round(6)\n    array([-0.577216])")
psi = _unary("psi", digamma_p, "``digamma``",
             ">>> dg.special.psi(dg.tensor([1.0])).numpy().round(6)\n    array([-0.577216])")
i0 = _unary("i0", i0_p, "The modified Bessel function of the first kind, order 0",
            ">>> dg.special.i0(dg.tensor([0.0])).tolist()\n    [1.0]")
i0e = _unary("i0e", i0e_p, "exp(-|x|) i0(x)", ">>> dg.special.i0e(dg.tensor([0.0])).tolist()\n    [1.0]")
i1 = _unary("i1", i1_p, "The modified Bessel function of the first kind, order 1",
            ">>> dg.special.i1(dg.tensor([0.0])).tolist()\n    [0.0]")
i1e = _unary("i1e", i1e_p, "exp(-|x|) i1(x)", ">>> dg.special.i1e(dg.tensor([0.0])).tolist()\n    [0.0]")
erfcx = _unary("erfcx", erfcx_p, "The scaled complementary error function exp(x^2) erfc(x)",
               ">>> dg.special.erfcx(dg.tensor([0.0])).tolist()\n    [1.0]")
ndtri = _unary("ndtri", ndtri_p, "The standard normal quantile function",
               ">>> dg.special.ndtri(dg.tensor([0.5])).tolist()\n    [0.0]")
log_ndtr = _unary("log_ndtr", log_ndtr_p, "log of the standard normal CDF",
                  ">>> dg.special.log_ndtr(dg.tensor([0.0])).numpy().round(6)\n    array([-0.693147])")
entr = _unary("entr", entr_p, "-x log x elementwise (0 at 0, -inf below)",
              ">>> dg.special.entr(dg.tensor([1.0, 0.0])).tolist()\n    [-0.0, 0.0]")
erf = _unary("erf", ew.erf, "The error function", ">>> dg.special.erf(dg.tensor([0.0])).tolist()\n    [0.0]")
erfc = _unary("erfc", ew.erfc, "The complementary error function",
              ">>> dg.special.erfc(dg.tensor([0.0])).tolist()\n    [1.0]")
erfinv = _unary("erfinv", ew.erfinv, "The inverse error function",
                ">>> dg.special.erfinv(dg.tensor([0.0])).tolist()\n    [0.0]")
exp2 = _unary("exp2", ew.exp2, "2^x", ">>> dg.special.exp2(dg.tensor([3.0])).tolist()\n    [8.0]")
expm1 = _unary("expm1", ew.expm1, "exp(x) - 1", ">>> dg.special.expm1(dg.tensor([0.0])).tolist()\n    [0.0]")
log1p = _unary("log1p", ew.log1p, "log(1 + x)", ">>> dg.special.log1p(dg.tensor([0.0])).tolist()\n    [0.0]")
expit = _unary("expit", ops.sigmoid, "The logistic sigmoid",
               ">>> dg.special.expit(dg.tensor([0.0])).tolist()\n    [0.5]")


def ndtr(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2, as ``torch.special.ndtr``.

    >>> import duograd as dg
    >>> dg.special.ndtr(dg.tensor([0.0])).tolist()
    [0.5]
    """
    x = _ft(input, "special.ndtr")
    return _out((1 + ew.erf(x * (1 / math.sqrt(2)))) * 0.5, out, "special.ndtr")


def sinc(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """sin(pi x) / (pi x), 1 at 0 (its gradient 0 there), as ``torch.sinc``.

    >>> import duograd as dg
    >>> dg.sinc(dg.tensor([0.0, 0.5])).numpy().round(6)
    array([1.      , 0.63662])
    """
    x = _ft(input, "sinc")
    zero = ops.equal_p(x, 0.0)
    px = ops.where_p(zero, 1.0, x) * math.pi
    return _out(ops.where_p(zero, 1.0, ops.sin(px) / px), out, "sinc")


def xlog1py(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """x * log1p(y), 0 where x == 0 (unless y is NaN), as ``torch.special.xlog1py``.

    >>> import duograd as dg
    >>> dg.special.xlog1py(dg.tensor([0.0, 2.0]), dg.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    x = input if isinstance(input, Tensor) else _as_tensor(input, op="special.xlog1py")
    y = other if isinstance(other, Tensor) else _as_tensor(other, op="special.xlog1py")
    if x.dtype.kind != "f" and y.dtype.kind != "f":
        x = _ft(x, "special.xlog1py")
    zero = ew.logical_and(ops.equal_p(x, 0.0), ew.logical_not(ew.isnan(y)))
    safe = ops.where_p(zero, 0.0, y)
    return _out(ops.where_p(zero, 0.0 * x, x * ew.log1p(safe)), out, "special.xlog1py")


def multigammaln(input: Any, p: _int, *, out: Any = None) -> Tensor:  # noqa: A002
    """The multivariate log-gamma function of dimension p, as ``torch.special.multigammaln``
    (every element must exceed (p - 1) / 2).

    >>> import duograd as dg
    >>> dg.special.multigammaln(dg.tensor([2.0]), 1).numpy().round(6)
    array([0.])
    """
    x = _ft(input, "special.multigammaln")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if x._data.size and not np.all(x._data > (p - 1) / 2):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = lgamma_p(x)
    for i in range(1, p):
        total = total + lgamma_p(x - i / 2)
    return _out(total + p * (p - 1) / 4 * math.log(math.pi), out, "special.multigammaln")


def polygamma(n: _int, input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma, as ``torch.special.polygamma`` (n = 0: digamma).

    >>> import duograd as dg
    >>> dg.special.polygamma(1, dg.tensor([1.0])).numpy().round(6)
    array([1.644934])
    """
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _ft(input, "special.polygamma")
    return _out(digamma_p(x) if n == 0 else polygamma_p(x, n=int(n)), out, "special.polygamma")


def zeta(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function zeta(x, q), as ``torch.special.zeta`` (differentiable in q).

    >>> import duograd as dg
    >>> dg.special.zeta(dg.tensor([2.0]), dg.tensor([1.0])).numpy().round(6)
    array([1.644934])
    """
    x, q = _float_pair(input, other, "special.zeta")
    return _out(zeta_p(x, q), out, "special.zeta")


def _float_pair(a: Any, b: Any, op: str) -> tuple[Tensor, Tensor]:
    ta = a if isinstance(a, Tensor) else _as_tensor(a, op=op)
    tb = b if isinstance(b, Tensor) else _as_tensor(b, op=op)
    if not isinstance(a, Tensor) and ta.ndim == 0:
        ta = ops.cast_p(ta, dtype=tb.dtype) if tb.dtype.kind == "f" else ta
    if not isinstance(b, Tensor) and tb.ndim == 0:
        tb = ops.cast_p(tb, dtype=ta.dtype) if ta.dtype.kind == "f" else tb
    if ta.dtype.kind != "f":
        ta = _ft(ta, op)
    if tb.dtype.kind != "f":
        tb = _ft(tb, op)
    if ta.dtype != tb.dtype:
        dt = np.promote_types(ta.dtype, tb.dtype)
        ta, tb = ops.cast_p(ta, dtype=dt), ops.cast_p(tb, dtype=dt)
    return ta, tb


def gammainc(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The regularised lower incomplete gamma function P(a, x), as ``torch.special.gammainc``
    (differentiable in x only, as torch).

    >>> import duograd as dg
    >>> dg.special.gammainc(dg.tensor([1.0]), dg.tensor([0.0])).tolist()
    [0.0]
    """
    a, x = _float_pair(input, other, "special.gammainc")
    return _out(gammainc_p(a, x), out, "special.gammainc")


def gammaincc(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x), as
    ``torch.special.gammaincc``.

    >>> import duograd as dg
    >>> dg.special.gammaincc(dg.tensor([1.0]), dg.tensor([0.0])).tolist()
    [1.0]
    """
    a, x = _float_pair(input, other, "special.gammaincc")
    return _out(gammaincc_p(a, x), out, "special.gammaincc")


def logit(input: Any, eps: float | None = None, *, out: Any = None) -> Tensor:  # noqa: A002
    """log(p / (1 - p)), as ``torch.special.logit``.

    >>> import duograd as dg
    >>> dg.special.logit(dg.tensor([0.5])).tolist()
    [0.0]
    """
    return _logit(input, eps, out=out)


def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """x * log(y), 0 where x == 0, as ``torch.special.xlogy``.

    >>> import duograd as dg
    >>> dg.special.xlogy(dg.tensor([0.0]), dg.tensor([0.0])).tolist()
    [0.0]
    """
    return _xlogy(input, other, out=out)


def round(input: Any, *, decimals: _int = 0, out: Any = None) -> Tensor:  # noqa: A001,A002
    """``torch.round`` (half to even, ``decimals``).

    >>> import duograd as dg
    >>> dg.special.round(dg.tensor([2.5, 1.26]), decimals=0).tolist()
    [2.0, 1.0]
    """
    return _out(ew.round(input, decimals=decimals), out, "special.round")


def softmax(input: Any, dim: _int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.softmax``.

    >>> import duograd as dg
    >>> dg.special.softmax(dg.zeros(2), 0).tolist()
    [0.5, 0.5]
    """
    x = input if isinstance(input, Tensor) else _as_tensor(input, op="special.softmax")
    if dtype is not None:
        x = x.to(dtype)
    return ops.softmax(x, dim)


def log_softmax(input: Any, dim: _int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.log_softmax``.

    >>> import duograd as dg
    >>> dg.special.log_softmax(dg.zeros(1), 0).tolist()
    [0.0]
    """
    x = input if isinstance(input, Tensor) else _as_tensor(input, op="special.log_softmax")
    if dtype is not None:
        x = x.to(dtype)
    return ops.log_softmax(x, dim)


def logsumexp(input: Any, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.logsumexp``.

    >>> import duograd as dg
    >>> dg.special.logsumexp(dg.zeros(1), 0).tolist()
    0.0
    """
    return _out(ops.logsumexp(input, dim, keepdim), out, "special.logsumexp")


# ---------------------------------------------------------------- without a gradient in torch

def _nograd(name: str, prim: Primitive, example: str) -> Any:
    def fn(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        return _out(prim(_ft(input, f"special.{name}")), out, f"special.{name}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}`` (no gradient: torch does not differentiate it).\n\n"
                  f"    >>> import duograd as dg\n    {example}\n")
    return fn


bessel_j0 = _nograd("bessel_j0", bessel_j0_p, ">>> dg.special.bessel_j0(dg.tensor([0.0])).tolist()\n    [1.0]")
bessel_j1 = _nograd("bessel_j1", bessel_j1_p, ">>> dg.special.bessel_j1(dg.tensor([0.0])).tolist()\n    [0.0]")
bessel_y0 = _nograd("bessel_y0", bessel_y0_p,
                    ">>> dg.special.bessel_y0(dg.tensor([1.0])).numpy().round(6)\n    array([0.088257])")
bessel_y1 = _nograd("bessel_y1", bessel_y1_p,
                    ">>> dg.special.bessel_y1(dg.tensor([1.0])).numpy().round(6)\n    array([-0.781213])")
modified_bessel_i0 = _nograd("modified_bessel_i0", modified_bessel_i0_p,
                             ">>> dg.special.modified_bessel_i0(dg.tensor([0.0])).tolist()\n    [1.0]")
modified_bessel_i1 = _nograd("modified_bessel_i1", modified_bessel_i1_p,
                             ">>> dg.special.modified_bessel_i1(dg.tensor([0.0])).tolist()\n    [0.0]")
modified_bessel_k0 = _nograd("modified_bessel_k0", modified_bessel_k0_p,
                             ">>> dg.special.modified_bessel_k0(dg.tensor([1.0])).numpy().round(6)\n"
                             "    array([0.421024])")
modified_bessel_k1 = _nograd("modified_bessel_k1", modified_bessel_k1_p,
                             ">>> dg.special.modified_bessel_k1(dg.tensor([1.0])).numpy().round(6)\n"
                             "    array([0.601907])")
scaled_modified_bessel_k0 = _nograd("scaled_modified_bessel_k0", scaled_modified_bessel_k0_p,
                                    ">>> dg.special.scaled_modified_bessel_k0(dg.tensor([1.0])).numpy()"
                                    ".round(6)\n    array([1.144463])")
scaled_modified_bessel_k1 = _nograd("scaled_modified_bessel_k1", scaled_modified_bessel_k1_p,
                                    ">>> dg.special.scaled_modified_bessel_k1(dg.tensor([1.0])).numpy()"
                                    ".round(6)\n    array([1.636153])")
spherical_bessel_j0 = _nograd("spherical_bessel_j0", spherical_bessel_j0_p,
                              ">>> dg.special.spherical_bessel_j0(dg.tensor([0.0])).tolist()\n    [1.0]")
airy_ai = _nograd("airy_ai", airy_ai_p, ">>> dg.special.airy_ai(dg.tensor([0.0])).numpy().round(6)\n"
                  "    array([0.355028])")


# ---------------------------------------------------------------- orthogonal polynomials

def _poly(name: str, prim: Primitive, example: str) -> Any:
    def fn(input: Any, n: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        x = input if isinstance(input, Tensor) else _as_tensor(input, op=f"special.{name}")
        nt = n if isinstance(n, Tensor) else _as_tensor(n, op=f"special.{name}")
        if x.dtype.kind != "f":
            x = _ft(x, f"special.{name}")
        return _out(prim(x, nt), out, f"special.{name}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}``: the polynomial of degree n at x, by its recurrence "
                  f"(no gradient, as torch).\n\n    >>> import duograd as dg\n    {example}\n")
    return fn


chebyshev_polynomial_t = _poly("chebyshev_polynomial_t", chebyshev_polynomial_t_p,
                               ">>> dg.special.chebyshev_polynomial_t(dg.tensor([0.5]), 2).tolist()\n    [-0.5]")
chebyshev_polynomial_u = _poly("chebyshev_polynomial_u", chebyshev_polynomial_u_p,
                               ">>> dg.special.chebyshev_polynomial_u(dg.tensor([0.5]), 2).tolist()\n    [0.0]")
chebyshev_polynomial_v = _poly("chebyshev_polynomial_v", chebyshev_polynomial_v_p,
                               ">>> dg.special.chebyshev_polynomial_v(dg.tensor([0.5]), 1).tolist()\n    [0.0]")
chebyshev_polynomial_w = _poly("chebyshev_polynomial_w", chebyshev_polynomial_w_p,
                               ">>> dg.special.chebyshev_polynomial_w(dg.tensor([0.5]), 1).tolist()\n    [2.0]")
shifted_chebyshev_polynomial_t = _poly("shifted_chebyshev_polynomial_t", shifted_chebyshev_polynomial_t_p,
                                       ">>> dg.special.shifted_chebyshev_polynomial_t(dg.tensor([1.0]), 2)"
                                       ".tolist()\n    [1.0]")
shifted_chebyshev_polynomial_u = _poly("shifted_chebyshev_polynomial_u", shifted_chebyshev_polynomial_u_p,
                                       ">>> dg.special.shifted_chebyshev_polynomial_u(dg.tensor([1.0]), 2)"
                                       ".tolist()\n    [3.0]")
shifted_chebyshev_polynomial_v = _poly("shifted_chebyshev_polynomial_v", shifted_chebyshev_polynomial_v_p,
                                       ">>> dg.special.shifted_chebyshev_polynomial_v(dg.tensor([1.0]), 1)"
                                       ".tolist()\n    [1.0]")
shifted_chebyshev_polynomial_w = _poly("shifted_chebyshev_polynomial_w", shifted_chebyshev_polynomial_w_p,
                                       ">>> dg.special.shifted_chebyshev_polynomial_w(dg.tensor([1.0]), 1)"
                                       ".tolist()\n    [3.0]")
hermite_polynomial_h = _poly("hermite_polynomial_h", hermite_polynomial_h_p,
                             ">>> dg.special.hermite_polynomial_h(dg.tensor([1.0]), 2).tolist()\n    [2.0]")
hermite_polynomial_he = _poly("hermite_polynomial_he", hermite_polynomial_he_p,
                              ">>> dg.special.hermite_polynomial_he(dg.tensor([1.0]), 2).tolist()\n    [0.0]")
laguerre_polynomial_l = _poly("laguerre_polynomial_l", laguerre_polynomial_l_p,
                              ">>> dg.special.laguerre_polynomial_l(dg.tensor([1.0]), 2).tolist()\n    [-0.5]")
legendre_polynomial_p = _poly("legendre_polynomial_p", legendre_polynomial_p_p,
                              ">>> dg.special.legendre_polynomial_p(dg.tensor([1.0]), 2).tolist()\n    [1.0]")


# ---------------------------------------------------------------- torch.* and Tensor twins

def lgamma(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.lgamma``: log |Gamma(x)|.

    >>> import duograd as dg
    >>> dg.lgamma(dg.tensor([1.0])).tolist()
    [0.0]
    """
    return gammaln(input, out=out)


def mvlgamma(input: Any, p: _int, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.mvlgamma``: ``special.multigammaln``.

    >>> import duograd as dg
    >>> dg.mvlgamma(dg.tensor([2.0]), 1).numpy().round(6)
    array([0.])
    """
    return multigammaln(input, p, out=out)


def igamma(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.igamma``: ``special.gammainc``.

    >>> import duograd as dg
    >>> dg.igamma(dg.tensor([1.0]), dg.tensor([0.0])).tolist()
    [0.0]
    """
    return gammainc(input, other, out=out)


def igammac(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.igammac``: ``special.gammaincc``.

    >>> import duograd as dg
    >>> dg.igammac(dg.tensor([1.0]), dg.tensor([0.0])).tolist()
    [1.0]
    """
    return gammaincc(input, other, out=out)


SPECIAL = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr",
    "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]
__all__ = SPECIAL
# torch.* names
TORCH = {"lgamma": lgamma, "digamma": digamma, "polygamma": polygamma, "mvlgamma": mvlgamma, "i0": i0,
         "sinc": sinc, "igamma": igamma, "igammac": igammac}


def _m_polygamma(self: Tensor, n: _int) -> Tensor:
    return polygamma(n, self)


def _m_mvlgamma(self: Tensor, p: _int) -> Tensor:
    return multigammaln(self, p)


# Arguments for the in-place forms' doc examples (the ones that take more than ``self``).
_EXAMPLE_ARGS = {"polygamma": "1", "mvlgamma": "1", "igamma": "dg.tensor([1.0])", "igammac": "dg.tensor([1.0])"}

METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _m_polygamma, "mvlgamma": _m_mvlgamma,
           "i0": i0, "sinc": sinc, "igamma": igamma, "igammac": igammac}


def install(namespace: dict) -> None:
    """Bind the torch.* and Tensor twins (and their in-place forms) onto ``namespace`` and Tensor."""
    from . import inplace  # noqa: PLC0415
    for n, f in TORCH.items():
        namespace[n] = f
    for n, f in METHODS.items():
        setattr(Tensor, n, f)

        def method_(self: Tensor, *args: Any, _n: str = n, **kw: Any) -> Tensor:
            return inplace.twin(self, _n, *args, **kw)
        method_.__name__ = method_.__qualname__ = n + "_"
        method_.__doc__ = (f"In place: ``t`` becomes ``t.{n}(...)``, as torch's ``Tensor.{n}_``; returns ``t``.\n\n"
                           f"    >>> import duograd as dg\n    >>> x = dg.tensor([0.5])\n"
                           f"    >>> x.{n}_({_EXAMPLE_ARGS.get(n, '')}) is x\n    True\n")
        setattr(Tensor, n + "_", method_)
    for n in ("sinc", "i0"):  # torch.sinc_ / torch.i0_
        namespace[n + "_"] = getattr(Tensor, n + "_")
