"""``MultivariateNormal``, ``Independent`` and ``TransformedDistribution``, as torch's.

The normal is held by its lower Cholesky factor ``scale_tril`` (computed from
``covariance_matrix`` or ``precision_matrix`` through a differentiable Cholesky), so
``log_prob``, ``entropy`` and ``rsample`` (loc + L eps) are differentiable with respect to
whichever matrix was given.

>>> import duograd as dg
>>> from duograd.distributions import MultivariateNormal
>>> d = MultivariateNormal(dg.zeros(2), covariance_matrix=dg.tensor([[4.0, 0.0], [0.0, 1.0]]))
>>> d.scale_tril.tolist(), d.variance.tolist()
([[2.0, 0.0], [0.0, 1.0]], [4.0, 1.0])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Size, Tensor, _as_tensor
from . import constraints
from ._ops import batch_mahalanobis, cholesky_p, diag_part, solve_p
from .distribution import Distribution, _noise, _sum_rightmost, lazy_property
from .transforms import ComposeTransform, Transform

__all__ = ["MultivariateNormal", "Independent", "TransformedDistribution"]


def _float_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor(np.asarray(x, dtype=float))


class MultivariateNormal(Distribution):
    """N(loc, Sigma) with exactly one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril`` (lower triangular, positive diagonal); batch dims broadcast.

    >>> import duograd as dg
    >>> d = MultivariateNormal(dg.zeros(2), scale_tril=dg.eye(2))
    >>> round(d.log_prob(dg.zeros(2)).item(), 6), d.rsample((3,)).shape
    (-1.837877, (3, 2))
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        loc = _float_tensor(loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        given = _float_tensor(given)
        name = "scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None \
            else "precision_matrix"
        if given.ndim < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        batch_shape = tuple(np.broadcast_shapes(given.shape[:-2], loc.shape[:-1]))
        n = loc.shape[-1]
        setattr(self, name, given.expand(*batch_shape, *given.shape[-2:]))
        self.loc = loc.expand(*batch_shape, n)
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = given
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky_p(given)
        else:
            eye = _as_tensor(np.eye(given.shape[-1], dtype=given.dtype))
            self._unbroadcasted_scale_tril = cholesky_p(solve_p(given, eye.expand(*given.shape)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> "MultivariateNormal":
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        n = self.event_shape[0]
        new.loc = self.loc.expand(*batch_shape, n)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, n, n))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:  # type: ignore[override]
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:  # type: ignore[override]
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-1, -2)).expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:  # type: ignore[override]
        cov = self.covariance_matrix
        eye = _as_tensor(np.eye(cov.shape[-1], dtype=cov.dtype))
        return solve_p(cov, eye.expand(*cov.shape))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L * L).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _noise("standard_normal", shape, self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value)
        diff = value - self.loc
        M = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = diag_part(self._unbroadcasted_scale_tril).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = diag_part(self._unbroadcasted_scale_tril).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if tuple(H.shape) == tuple(self._batch_shape) else H.expand(*self._batch_shape)


class Independent(Distribution):
    """``base_distribution`` with its rightmost ``reinterpreted_batch_ndims`` batch dims
    read as event dims: ``log_prob`` and ``entropy`` sum over them.

    >>> import duograd as dg
    >>> from duograd.distributions import Normal
    >>> d = Independent(Normal(dg.zeros(3), 1.0), 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(dg.zeros(3)).shape
    (dg.Size([]), dg.Size([3]), ())
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        n = int(reinterpreted_batch_ndims)
        if n > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                f"{n} vs {len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Independent":
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + tuple(self.event_shape[:self.reinterpreted_batch_ndims]))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Any) -> Tensor:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """The distribution of ``transforms`` (a Transform or a list, applied in order) applied
    to samples of ``base_distribution``; ``log_prob`` subtracts each log |det Jacobian|.

    >>> import duograd as dg
    >>> from duograd.distributions import Normal
    >>> from duograd.distributions.transforms import ExpTransform
    >>> lognormal = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
    >>> round(lognormal.log_prob(dg.tensor(1.0)).item(), 6)
    -0.918939
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms: Any,
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded:
            base_distribution = base_distribution.expand(expanded[:len(expanded) - base_event_dim])
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "TransformedDistribution":
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> constraints.Constraint:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad  # noqa: PLC0415
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        sign: Any = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Any) -> Tensor:
        value = _float_tensor(value)
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Any) -> Tensor:
        value = self._monotonize_cdf(_float_tensor(value))
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value
