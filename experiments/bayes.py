"""The spiral's Bayes ceiling: the best accuracy any classifier can reach on
:func:`experiments.make_spiral`'s distribution, from the generator itself.

The generator draws the class ``y`` (0 or 1, equally often), ``t ~ U(0, 1)`` and puts
the point at radius ``r = t`` and angle ``phi = 2 pi R t + pi y + sigma e`` with
``e ~ N(0, 1)``. In polar coordinates its class-conditional density is therefore

    p(x | y) = (1 / r) * WN(theta - 2 pi R r - pi y; sigma),   0 < r < 1,

where ``WN(d; sigma) = sum_k N(d + 2 pi k; 0, sigma^2)`` is the wrapped normal density
(the angle only matters modulo a full turn) and ``1 / r`` is the Jacobian of the polar
map. Both classes share the factor ``1 / r`` and the prior 1/2, so the posterior is

    P(y = 1 | x) = WN(d - pi) / (WN(d) + WN(d - pi)),   d = theta - 2 pi R r,

and the Bayes-optimal accuracy is ``integral over x of max_y p(y) p(x | y)``.
:func:`bayes_accuracy` evaluates that integral numerically over ``(r, theta)`` with the
exact densities. Because the wrapped normal is symmetric and falls off with circular
distance, the integrand does not depend on ``r`` and the answer has a closed form,
:func:`bayes_accuracy_closed_form`: the probability that the angular noise, wrapped
onto the circle, stays within a quarter turn. The two are computed independently and
agree (tests/walkthrough/test_spiral_bayes.py also checks both against brute-force estimates that
use only samples from the generator).

>>> round(bayes_accuracy(2.5, 0.5), 4), round(bayes_accuracy_closed_form(0.5), 4)
(0.9983, 0.9983)
"""

from __future__ import annotations

import math

import numpy as np

N_WRAPS = 6  # at least the terms k = -6..6 of the wrapped normal (more for wide noise)


def _wraps(sigma: float, wraps: int | None) -> int:
    """Enough terms that the first one left out lies beyond 9 sigma (below 1e-18)."""
    return wraps if wraps is not None else max(N_WRAPS, math.ceil(9 * sigma / (2 * math.pi)) + 1)


def wrapped_normal(d: np.ndarray | float, sigma: float, wraps: int | None = None) -> np.ndarray:
    """The density at angle ``d`` of ``sigma * N(0, 1)`` taken modulo ``2 pi``.

    >>> float(np.round(wrapped_normal(0.0, 0.1), 4)) == round(1 / (0.1 * math.sqrt(2 * math.pi)), 4)
    True
    """
    if sigma <= 0:
        raise ValueError(f"wrapped_normal: sigma must be positive, got {sigma}")
    d = np.remainder(np.asarray(d, dtype=float) + np.pi, 2 * np.pi) - np.pi
    wraps = _wraps(sigma, wraps)
    k = np.arange(-wraps, wraps + 1).reshape((-1,) + (1,) * d.ndim)
    z = (d + 2 * np.pi * k) / sigma
    return np.exp(-0.5 * z * z).sum(axis=0) / (sigma * math.sqrt(2 * math.pi))


def posterior(X: np.ndarray, revolutions: float, noise: float) -> np.ndarray:
    """``P(class 1 | x)`` for each row of ``X`` under make_spiral's distribution.

    >>> from experiments import make_spiral
    >>> X, y = make_spiral(2000, 2.5, 0.5, rng=0)
    >>> float(np.mean((posterior(X, 2.5, 0.5) > 0.5) == y)) > 0.99
    True
    """
    X = np.asarray(X, dtype=float)
    r = np.hypot(X[:, 0], X[:, 1])
    d = np.arctan2(X[:, 1], X[:, 0]) - 2 * np.pi * revolutions * r
    p0, p1 = wrapped_normal(d, noise), wrapped_normal(d - np.pi, noise)
    return p1 / (p0 + p1)


def bayes_accuracy(revolutions: float, noise: float, n_r: int = 16, n_theta: int = 8192
                   ) -> float:
    """The Bayes-optimal accuracy, ``integral of max_y p(y) p(x | y) dx``, by quadrature.

    In polar coordinates ``dx = r dr dtheta`` cancels the density's ``1 / r``, leaving
    ``integral_0^1 dr integral_0^2pi dtheta max_y 1/2 WN(theta - mu_y(r))``: Gauss-Legendre
    in ``r``, the periodic trapezoid rule in ``theta`` (its error is O(h^2) at the two
    kinks of the max: below 1e-7 at the default grid).

    >>> round(bayes_accuracy(2.5, 1.0), 4)
    0.8838
    """
    if noise <= 0:
        return 1.0
    nodes, weights = np.polynomial.legendre.leggauss(n_r)
    r = 0.5 * (nodes[:, None] + 1.0)                  # [-1, 1] -> [0, 1], one row per node
    theta = np.linspace(0.0, 2 * np.pi, n_theta, endpoint=False)[None, :]
    mu0 = 2 * np.pi * revolutions * r
    best = np.maximum(wrapped_normal(theta - mu0, noise), wrapped_normal(theta - mu0 - np.pi, noise))
    per_r = 0.5 * best.sum(axis=1) * (2 * np.pi / n_theta)    # the theta integral at each r
    return float(0.5 * weights @ per_r)


def _phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def bayes_accuracy_closed_form(noise: float, wraps: int | None = None) -> float:
    """``P(|sigma e wrapped onto (-pi, pi]| < pi / 2)``: the two arms sit half a turn apart
    at every radius, so the Bayes rule errs exactly when the noise carries a point more
    than a quarter turn from its arm (modulo whole turns).

    >>> [round(bayes_accuracy_closed_form(s), 4) for s in (0.5, 0.7, 0.9, 1.0, 1.2)]
    [0.9983, 0.9752, 0.9191, 0.8838, 0.8096]
    """
    if noise <= 0:
        return 1.0
    wraps = _wraps(noise, wraps)
    return float(sum(_phi((2 * math.pi * k + math.pi / 2) / noise)
                     - _phi((2 * math.pi * k - math.pi / 2) / noise)
                     for k in range(-wraps, wraps + 1)))


def noise_for_ceiling(ceiling: float, lo: float = 1e-3, hi: float = 10.0) -> float:
    """The angular noise whose Bayes ceiling is ``ceiling`` (bisection on the closed form,
    which falls monotonically from 1 towards 1/2 as the noise grows).

    >>> s = noise_for_ceiling(0.9)
    >>> round(s, 4), round(bayes_accuracy_closed_form(s), 10)
    (0.955, 0.9)
    """
    if not 0.5 < ceiling < 1.0:
        raise ValueError(f"noise_for_ceiling: a ceiling must lie in (0.5, 1), got {ceiling}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if bayes_accuracy_closed_form(mid) > ceiling:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return 0.5 * (lo + hi)
