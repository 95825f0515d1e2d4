"""The special-function rows: the Bessel functions ``i0``/``i0e``/``i1``/``i1e``, ``erfcx``,
``ndtri``, ``log_ndtr``, ``entr``, ``zeta`` and ``gammaincc``, SciPy's values with VJPs
written with other rows, so they differentiate again. Their public functions
(``torch.special``'s signatures, and the compositions) are in ``duograd/special.py``, the
layer above; the gamma family's rows are in ``rows/distributions.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import ELEMENTWISE, Primitive
from .core import equal_p, exp_p, log_p, sign_p, where_p
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
