"""``kl_divergence(p, q)`` and ``register_kl``, as torch's: a registry of closed forms keyed
by the pair of distribution types, dispatched to the most specific registered pair (a
RuntimeWarning when two candidates are equally specific). The pairs are the ones torch
registers among the distributions duograd has.

>>> import duograd as dg
>>> from duograd.distributions import Normal, kl_divergence
>>> round(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item(), 6)
0.5
"""

from __future__ import annotations

import math
import warnings
from functools import total_ordering
from typing import Any, Callable

import numpy as np

from ..indexing import where
from .._tensor import Tensor, _as_tensor
from ..nn.functional import softplus
from ._ops import batch_mahalanobis, diag_part, digamma, lgamma, trisolve_p, xlogy
from .continuous import Beta, Dirichlet, Exponential, Gamma, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, _sum_rightmost
from .multivariate import Independent, MultivariateNormal, TransformedDistribution

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}

_EULER_GAMMA = 0.57721566490153286060


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator: ``fn(p, q)`` computes KL(p || q) for ``p`` of ``type_p`` and ``q`` of
    ``type_q`` (subclasses included, the most specific registration winning).

    >>> from duograd.distributions import Normal
    >>> @register_kl(Normal, Normal)
    ... def _kl(p, q):
    ...     return (p.loc - q.loc) ** 2  # (a toy, registered and then put back)
    >>> _ = register_kl(Normal, Normal)(_kl_normal_normal)
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: "_Match") -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun, right_fun = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning,
                      stacklevel=2)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], of shape ``batch_shape``; NotImplementedError
    for a pair with no registered closed form.

    >>> import duograd as dg
    >>> from duograd.distributions import Bernoulli
    >>> round(kl_divergence(Bernoulli(0.5), Bernoulli(0.25)).item(), 6)
    0.143841
    """
    key = (type(p), type(q))
    try:
        fun = _KL_MEMOIZE[key]
    except KeyError:
        fun = _dispatch_kl(*key)
        _KL_MEMOIZE[key] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and "
                                  f"q type {q.__class__.__name__}")
    return fun(p, q)


def _inf_where(cond: Any, x: Tensor) -> Tensor:
    return where(cond, float("inf"), x)


def _zero_where(cond: Any, x: Tensor) -> Tensor:
    return where(cond, 0.0, x)


def _infinite_like(t: Tensor) -> Tensor:
    return _as_tensor(np.full(t.shape, np.inf, dtype=t.dtype))


def _x_log_x(t: Tensor) -> Tensor:
    return xlogy(t, t)


# ------------------------------------------------------------------ same family

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sp = p.concentration1 + p.concentration0
    sq = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sp)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sq)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sq - sp) * digamma(sp)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    shape = np.broadcast_shapes(t.shape, q.probs.shape, p.probs.shape)
    t = _inf_where((q.probs == 0).expand(*shape), t)
    t = _zero_where((p.probs == 0).expand(*shape), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = lgamma(sp) - lgamma(sq)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sp).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes "
                         "cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = diag_part(Lq).log().sum(-1) - diag_part(Lp).log().sum(-1)
    n = p.event_shape[0]
    batch = tuple(np.broadcast_shapes(Lq.shape[:-2], Lp.shape[:-2]))
    m = trisolve_p(Lq.expand(*batch, n, n), Lp.expand(*batch, n, n), upper=False)
    term2 = (m * m).sum((-2, -1))
    term3 = batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# ------------------------------------------------------------------ across families

@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    t1 = -p.entropy()
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0))
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    e = p.concentration1 / (p.concentration1 + p.concentration0)
    var = q.scale ** 2
    t1 = -p.entropy()
    t2 = 0.5 * (var * 2 * math.pi).log()
    t3 = (e * (1 - e) / (p.concentration1 + p.concentration0 + 1) + e ** 2) * 0.5
    return t1 + t2 + (t3 - q.loc * e + q.loc ** 2 * 0.5) / var


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0.0) | (q.high < 1.0), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + lgamma(q.concentration) + q.concentration * _EULER_GAMMA - (1 + _EULER_GAMMA)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    var = q.scale ** 2
    rate_sqr = p.rate ** 2
    t1 = 0.5 * (rate_sqr * var * 2 * math.pi).log()
    return t1 - 1 + (1 / rate_sqr - q.loc / p.rate + q.loc ** 2 * 0.5) / var


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    var = q.scale ** 2
    beta_sqr = p.rate ** 2
    a = p.concentration
    t1 = 0.5 * (beta_sqr * var * 2 * math.pi).log() - a - lgamma(a)
    t2 = 0.5 * (a ** 2 + a) / beta_sqr
    t3 = q.loc * a / p.rate
    t4 = 0.5 * q.loc ** 2
    return t1 + (a - 1) * digamma(a) + (t2 - t3 + t4) / var


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var = q.scale ** 2
    ratio = p.scale ** 2 / var
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return -t1 + ratio + (0.5 * p.loc ** 2 - p.loc * q.loc + 0.5 * q.loc ** 2) / var - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    z = loc_diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * z ** 2).exp()
    t3 = loc_diff * (math.sqrt(0.5) * z).erf()
    return -scale_ratio.log() + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    w = p.high - p.low
    t1 = w.log()
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - w) / w
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + w) / w
    t4 = lgamma(q.concentration1) + lgamma(q.concentration0) - lgamma(q.concentration1 + q.concentration0)
    return _inf_where((p.high > 1.0) | (p.low < 0.0), t3 + t4 - t1 - t2)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(p.low < 0.0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    w = p.high - p.low
    t1 = w.log()
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - w) / w
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(p.low < 0.0, -t1 + t2 + t3 + t4)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    w = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / w).log()
    t2 = w ** 2 / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2) ** 2
    return t1 + 0.5 * (t2 + t3) / q.scale ** 2


def _kl_infinity(attr: str) -> Callable:
    def fn(p: Distribution, q: Distribution) -> Tensor:
        return _infinite_like(getattr(p, attr))
    return fn


# supports that do not nest: KL is infinite (the pairs torch registers so)
for _p, _q, _attr in [(Exponential, Beta, "rate"), (Exponential, Uniform, "rate"),
                      (Gamma, Beta, "concentration"), (Gamma, Uniform, "concentration"),
                      (Laplace, Beta, "loc"), (Laplace, Exponential, "loc"), (Laplace, Gamma, "loc"),
                      (Laplace, Uniform, "loc"), (Normal, Beta, "loc"), (Normal, Exponential, "loc"),
                      (Normal, Gamma, "loc"), (Normal, Uniform, "loc")]:
    register_kl(_p, _q)(_kl_infinity(_attr))
