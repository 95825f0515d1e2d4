"""The special-function rows: the Bessel functions ``i0``/``i0e``/``i1``/``i1e``, ``erfcx``,
``ndtri``, ``log_ndtr``, ``entr``, ``zeta`` and ``gammaincc``, SciPy's values with VJPs
written with other rows, so they differentiate again; and the selectors (no history, as
torch does not differentiate them) of the Bessel functions J, Y, K, Airy's Ai and the
orthogonal polynomials (``bessel_j0_p``, ..., ``legendre_polynomial_p_p``). Their public functions
(``torch.special``'s signatures, and the compositions) are in ``duograd/special.py``, the
layer above; the gamma family's rows are in ``rows/distributions.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import ELEMENTWISE, Primitive
from .core import _selector, equal_p, exp_p, log_p, sign_p, where_p
from .distributions import lgamma_p


def _scipy(name: str, *pre: Any) -> Any:
    def fwd(x: np.ndarray) -> np.ndarray:
        import scipy.special  # noqa: PLC0415  (first use only: scipy is slow to import)
        with np.errstate(all="ignore"):
            return np.asarray(getattr(scipy.special, name)(*pre, x)).astype(x.dtype, copy=False)
    return fwd


# ---------------------------------------------------------------- primitives

i0_p = Primitive("i0", _scipy("i0"), vjp=(lambda g, out, x: g * i1_p(x),), jvp=ELEMENTWISE)
i0e_p = Primitive("i0e", _scipy("i0e"),
                  vjp=(lambda g, out, x: g * (i1e_p(x) - sign_p(x) * out),), jvp=ELEMENTWISE)


def _i1_d(x: Tensor, out: Tensor) -> Tensor:
    # i1' = i0 - i1 / x, 1/2 at 0
    zero = equal_p(x, 0.0)
    safe = where_p(zero, 1.0, x)
    return where_p(zero, 0.5, i0_p(x) - out / safe)


def _i1e_d(x: Tensor, out: Tensor) -> Tensor:
    zero = equal_p(x, 0.0)
    safe = where_p(zero, 1.0, x)
    return where_p(zero, 0.5, i0e_p(x) - out * (sign_p(x) + 1 / safe))


i1_p = Primitive("i1", _scipy("i1"), vjp=(lambda g, out, x: g * _i1_d(x, out),), jvp=ELEMENTWISE)
i1e_p = Primitive("i1e", _scipy("i1e"), vjp=(lambda g, out, x: g * _i1e_d(x, out),), jvp=ELEMENTWISE)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
erfcx_p = Primitive("erfcx", _scipy("erfcx"),
                    vjp=(lambda g, out, x: g * (2 * x * out - _TWO_OVER_SQRT_PI),), jvp=ELEMENTWISE)
_SQRT_2PI = math.sqrt(2 * math.pi)
ndtri_p = Primitive("ndtri", _scipy("ndtri"),
                    vjp=(lambda g, out, x: g * _SQRT_2PI * exp_p(out * out / 2),), jvp=ELEMENTWISE)
log_ndtr_p = Primitive("log_ndtr", _scipy("log_ndtr"),
                       vjp=(lambda g, out, x: g / _SQRT_2PI * exp_p(-(out + x * x / 2)),), jvp=ELEMENTWISE)


def _entr_fwd(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)),
                        np.where(x == 0, 0.0, np.where(np.isnan(x), x, -np.inf))).astype(x.dtype)


entr_p = Primitive("entr", _entr_fwd, vjp=(lambda g, out, x: g * -(1 + log_p(x)),), jvp=ELEMENTWISE)


def _zeta_fwd(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    import scipy.special  # noqa: PLC0415
    dt = np.result_type(x, q)
    with np.errstate(all="ignore"):
        return np.asarray(scipy.special.zeta(x, q)).astype(dt, copy=False)


# torch differentiates zeta in q only: d/dq zeta(x, q) = -x zeta(x + 1, q)
zeta_p = Primitive("zeta", _zeta_fwd, vjp=(None, lambda g, out, x, q: g * -x * zeta_p(x + 1, q)))


def _gammaincc_fwd(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    import scipy.special  # noqa: PLC0415
    return np.asarray(scipy.special.gammaincc(a, x)).astype(np.result_type(a, x), copy=False)


gammaincc_p = Primitive("gammaincc", _gammaincc_fwd,
                        vjp=(None, lambda g, out, a, x: -g * exp_p((a - 1) * log_p(x) - x - lgamma_p(a))))


# ---------------------------------------------------------------- selectors
# The functions torch does not differentiate: their results have no history.

def _spherical_j0(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x)).astype(x.dtype)


def _airy(x: np.ndarray) -> np.ndarray:
    import scipy.special  # noqa: PLC0415
    return np.asarray(scipy.special.airy(x)[0]).astype(x.dtype, copy=False)


bessel_j0_p = _selector("bessel_j0", _scipy("j0"))
bessel_j1_p = _selector("bessel_j1", _scipy("j1"))
bessel_y0_p = _selector("bessel_y0", _scipy("y0"))
bessel_y1_p = _selector("bessel_y1", _scipy("y1"))
modified_bessel_i0_p = _selector("modified_bessel_i0", _scipy("i0"))
modified_bessel_i1_p = _selector("modified_bessel_i1", _scipy("i1"))
modified_bessel_k0_p = _selector("modified_bessel_k0", _scipy("k0"))
modified_bessel_k1_p = _selector("modified_bessel_k1", _scipy("k1"))
scaled_modified_bessel_k0_p = _selector("scaled_modified_bessel_k0", _scipy("k0e"))
scaled_modified_bessel_k1_p = _selector("scaled_modified_bessel_k1", _scipy("k1e"))
spherical_bessel_j0_p = _selector("spherical_bessel_j0", _spherical_j0)
airy_ai_p = _selector("airy_ai", _airy)


def _recurrence(kind: str) -> Any:
    """p_n(x) by its three-term recurrence, elementwise in (x, n); 0 where n < 0."""
    def fwd(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        dt = x.dtype if x.dtype.kind == "f" else np.float64
        x, n = np.broadcast_arrays(x.astype(dt), np.asarray(n))
        n = n.astype(np.int64)
        if kind.startswith("shifted_"):
            x = 2 * x - 1
        k = kind.removeprefix("shifted_")
        p0 = np.ones_like(x)
        p1 = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1, "h": 2 * x, "he": x, "l": 1 - x,
              "p": x}[k]
        out = np.where(n == 0, p0, p1)
        top = int(n.max()) if n.size else 0
        prev, cur = p0, p1
        for m in range(1, top):  # cur = p_m, prev = p_{m-1} -> p_{m+1}
            if k in ("t", "u", "v", "w"):
                nxt = 2 * x * cur - prev
            elif k == "h":
                nxt = 2 * x * cur - 2 * m * prev
            elif k == "he":
                nxt = x * cur - m * prev
            elif k == "l":
                nxt = ((2 * m + 1 - x) * cur - m * prev) / (m + 1)
            else:
                nxt = ((2 * m + 1) * x * cur - m * prev) / (m + 1)
            prev, cur = cur, nxt
            out = np.where(n == m + 1, cur, out)
        return np.where(n < 0, 0.0, out).astype(dt)
    return fwd


chebyshev_polynomial_t_p = _selector("chebyshev_polynomial_t", _recurrence("t"))
chebyshev_polynomial_u_p = _selector("chebyshev_polynomial_u", _recurrence("u"))
chebyshev_polynomial_v_p = _selector("chebyshev_polynomial_v", _recurrence("v"))
chebyshev_polynomial_w_p = _selector("chebyshev_polynomial_w", _recurrence("w"))
shifted_chebyshev_polynomial_t_p = _selector("shifted_chebyshev_polynomial_t", _recurrence("shifted_t"))
shifted_chebyshev_polynomial_u_p = _selector("shifted_chebyshev_polynomial_u", _recurrence("shifted_u"))
shifted_chebyshev_polynomial_v_p = _selector("shifted_chebyshev_polynomial_v", _recurrence("shifted_v"))
shifted_chebyshev_polynomial_w_p = _selector("shifted_chebyshev_polynomial_w", _recurrence("shifted_w"))
hermite_polynomial_h_p = _selector("hermite_polynomial_h", _recurrence("h"))
hermite_polynomial_he_p = _selector("hermite_polynomial_he", _recurrence("he"))
laguerre_polynomial_l_p = _selector("laguerre_polynomial_l", _recurrence("l"))
legendre_polynomial_p_p = _selector("legendre_polynomial_p", _recurrence("p"))
