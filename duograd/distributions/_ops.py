"""The few primitives the distributions need that the engine does not have yet (the gamma
family's special functions, triangular and general solves, the Cholesky factor, and the
implicit reparameterisation of the standard gamma sampler; their rows are in
``duograd/rows/distributions.py`` and re-exported here), plus small compositions used by
several distributions.

>>> import duograd as dg
>>> x = dg.tensor([0.5, 3.0], requires_grad=True)
>>> lgamma(x).sum().backward()
>>> [round(v, 6) for v in x.grad.tolist()]   # digamma(0.5), digamma(3)
[-1.96351, 0.922784]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor, _as_tensor
from ..indexing import where
# The rows, every one re-exported (rows/distributions.py).
from ..rows.distributions import (  # noqa: F401
    lgamma_p, digamma_p, polygamma_p, gammainc_p, trisolve_p, solve_p, cholesky_p, gamma_grad_p,
    standard_gamma_p, dirichlet_grad_p, dirichlet_p,
    _cholesky_fwd, _cholesky_vjp, _dirichlet_d, _dirichlet_fwd, _dirichlet_vjp, _float,
    _gamma_dz_dalpha, _gamma_icdf, _gammainc_fwd, _mT, _polygamma_fwd, _richardson, _solve_vjp_a,
    _sp, _tri_mask, _trisolve_fwd, _trisolve_vjp_a)


def lgamma(x: Any) -> Tensor:
    """log |Gamma(x)|, differentiable (its derivative is ``digamma``)."""
    return lgamma_p(_as_tensor(x))


def digamma(x: Any) -> Tensor:
    """The digamma function psi(x) = d/dx log Gamma(x), differentiable."""
    return digamma_p(_as_tensor(x))


def xlogy(x: Any, y: Any) -> Tensor:
    """x * log(y), 0 where x == 0 (as ``torch.xlogy``)."""
    x, y = _as_tensor(x), _as_tensor(y)
    zero = x == 0  # y replaced by 1 there too, so that neither the value nor a gradient is NaN
    return where(zero, 0.0 * x, x * where(zero, 1.0, y).log())


def batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """|L^{-1} diff|^2 over the last dim, L and diff broadcast over batch dims."""
    n = diff.shape[-1]
    shape = np.broadcast_shapes(scale_tril.shape[:-2], diff.shape[:-1])
    lt = scale_tril.expand(*shape, n, n)
    m = trisolve_p(lt, diff.expand(*shape, n).unsqueeze(-1), upper=False)
    return (m * m).sum((-2, -1))


def diag_part(x: Tensor) -> Tensor:
    """The diagonal of the last two dims (a differentiable view)."""
    return x.diagonal(0, -2, -1)


LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
