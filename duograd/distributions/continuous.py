"""The continuous univariate distributions and the Dirichlet: ``Normal``, ``Uniform``,
``Exponential``, ``Laplace``, ``Gamma``, ``Beta``, ``Dirichlet``, each as torch's (same
parameters, constraints, supports, moments, densities), composed from duograd operations
so that ``log_prob``, ``entropy`` and ``rsample`` are differentiable.

``rsample`` is the location-scale transform of standard noise for Normal, Uniform,
Exponential and Laplace (exactly torch's reparameterisation). Gamma's, Beta's and
Dirichlet's are implicit reparameterisation, as torch's: dz/dalpha = -(dF/dalpha) / f(z)
for the Gamma (F its CDF), and for the Dirichlet torch's pathwise choice D_i (e_i - x) with
D_i from the marginal Beta CDF of x_i (Beta is the two-component Dirichlet); the CDFs'
derivatives in the concentration, which have no closed form, are taken by
Richardson-extrapolated differences of scipy's ``gammainc``/``betainc`` (``_ops``). Their
draws are the inverse Gamma CDF (scipy's ``gammaincinv``) of uniform noise, so that every
sample is uniform noise mapped through operations and a ``dg.compile`` replay samples from
the parameters it is given.

>>> import duograd as dg
>>> from duograd.distributions import Normal
>>> loc = dg.tensor(0.5, requires_grad=True)
>>> Normal(loc, 2.0).log_prob(dg.tensor(1.5)).backward()
>>> loc.grad.item()   # (x - loc) / scale^2
0.25
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..indexing import stack, where
from .._tensor import Size, Tensor, _as_tensor
from . import constraints
from ._ops import LOG_SQRT_2PI, digamma, dirichlet_p, lgamma, standard_gamma_p, xlogy
from .distribution import Distribution, _noise, broadcast_all

__all__ = ["Normal", "Uniform", "Exponential", "Laplace", "Gamma", "Beta", "Dirichlet"]


def _value(d: Distribution, value: Any) -> Tensor:
    if d._validate_args:
        d._validate_sample(value)
    return value if isinstance(value, Tensor) else _as_tensor(np.asarray(value, dtype=float))


def _expand(d: Distribution, cls: type, batch_shape: Any, names: tuple[str, ...], _instance: Any,
            event_shape: tuple = ()) -> Any:
    new = d._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for n in names:
        setattr(new, n, getattr(d, n).expand(*batch_shape, *event_shape))
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = d._validate_args
    return new


def _standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws, differentiable in alpha by implicit reparameterisation."""
    return standard_gamma_p(alpha, _noise("random", alpha.shape, alpha.dtype))


class _LocScale(Distribution):
    """What the location-scale families here share: ``loc`` and ``scale`` broadcast
    together, the batch shape theirs, and the mean and the mode at ``loc``."""

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__module__ == __name__:  # the family a user's subclass expands as (torch's check)
            cls._family = cls

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        return _expand(self, self._family, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocScale):
    """N(loc, scale^2), as ``torch.distributions.Normal``.

    >>> import duograd as dg
    >>> d = Normal(0.0, 1.0)
    >>> round(d.cdf(dg.tensor(1.96)).item(), 4), round(d.entropy().item(), 6)
    (0.975, 1.418939)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = _noise("standard_normal", self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        return -((value - self.loc) ** 2) / (2 * self.scale * self.scale) - self.scale.log() - LOG_SQRT_2PI

    def cdf(self, value: Any) -> Tensor:
        value = _value(self, value)
        return 0.5 * (1 + ((value - self.loc) * (1 / (self.scale * math.sqrt(2)))).erf())

    def icdf(self, value: Any) -> Tensor:
        value = value if isinstance(value, Tensor) else _as_tensor(np.asarray(value, dtype=float))
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + LOG_SQRT_2PI + self.scale.log()


class Uniform(Distribution):
    """U[low, high), as ``torch.distributions.Uniform``.

    >>> import duograd as dg
    >>> d = Uniform(0.0, 4.0)
    >>> d.log_prob(dg.tensor(1.0)).item() == -math.log(4), d.variance.item()
    (True, 1.3333333333333333)
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Uniform":
        return _expand(self, Uniform, batch_shape, ("low", "high"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return self.high * float("nan")

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = _noise("random", self._extended_shape(sample_shape), self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        inside = (self.low <= value) & (value < self.high)
        return where(inside, -(self.high - self.low).log(), float("-inf"))

    def cdf(self, value: Any) -> Tensor:
        value = _value(self, value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Any) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Exponential(Distribution):
    """Exponential(rate), density rate * exp(-rate x) on x >= 0.

    >>> import duograd as dg
    >>> Exponential(2.0).mean.item(), Exponential(2.0).cdf(dg.tensor(0.0)).item()
    (0.5, 0.0)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Exponential":
        return _expand(self, Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self) -> Tensor:
        return 1 / self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return 1 / self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate ** -2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        e = _noise("standard_exponential", self._extended_shape(sample_shape), self.rate.dtype)
        return e / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        value = _value(self, value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Any) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()


class Laplace(_LocScale):
    """Laplace(loc, scale), density exp(-|x - loc| / scale) / (2 scale).

    >>> import duograd as dg
    >>> Laplace(0.0, 1.0).cdf(dg.tensor(0.0)).item(), Laplace(0.0, 1.0).variance.item()
    (0.5, 2.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def stddev(self) -> Tensor:
        return 2 ** 0.5 * self.scale

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale ** 2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = float(np.finfo(self.loc.dtype).eps)
        u = _noise("uniform", self._extended_shape(sample_shape), self.loc.dtype, eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Any) -> Tensor:
        value = _value(self, value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value: Any) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Gamma(Distribution):
    """Gamma(concentration, rate), density rate^a x^(a-1) exp(-rate x) / Gamma(a).

    >>> import duograd as dg
    >>> d = Gamma(dg.tensor(3.0), dg.tensor(2.0))
    >>> d.mean.item(), d.variance.item(), d.mode.item()
    (1.5, 0.75, 1.0)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Gamma":
        return _expand(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        a, b = self.concentration, self.rate
        return xlogy(a, b) + xlogy(a - 1, value) - b * value - lgamma(a)

    def cdf(self, value: Any) -> Tensor:
        from ._ops import gammainc_p  # noqa: PLC0415
        value = _value(self, value)
        a, x = broadcast_all(self.concentration, self.rate * value)
        return gammainc_p(a, x)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)


class Dirichlet(Distribution):
    """Dirichlet(concentration) over the probability simplex (the last dim is the event).

    >>> import duograd as dg
    >>> Dirichlet(dg.tensor([1.0, 3.0])).mean.tolist()
    [0.25, 0.75]
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        concentration = concentration if isinstance(concentration, Tensor) else \
            _as_tensor(np.asarray(concentration, dtype=float))
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Dirichlet":
        return _expand(self, Dirichlet, batch_shape, ("concentration",), _instance, tuple(self.event_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        alpha = self.concentration.expand(*shape)
        return dirichlet_p(alpha, _noise("random", shape, alpha.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        from ..nn.functional import one_hot  # noqa: PLC0415
        c = self.concentration
        cm1 = (c - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        corner = one_hot(c.argmax(-1), c.shape[-1]).to(c.dtype)
        return where((c < 1).all(-1).unsqueeze(-1), corner, mode)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        con0 = c.sum(-1, keepdim=True)
        return c * (con0 - c) / (con0 ** 2 * (con0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)


class Beta(Distribution):
    """Beta(concentration1, concentration0) on [0, 1], density x^(a-1) (1-x)^(b-1) / B(a, b).

    >>> import duograd as dg
    >>> d = Beta(dg.tensor(2.0), dg.tensor(6.0))
    >>> d.mean.item(), round(d.mode.item(), 6)
    (0.25, 0.166667)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([self.concentration1, self.concentration0], -1),
                                    validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Beta":
        new = _expand(self, Beta, batch_shape, ("concentration1", "concentration0"), _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Any) -> Tensor:
        value = _value(self, value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
