"""The discrete distributions: ``Bernoulli``, ``Categorical``, ``OneHotCategorical``, each
given by ``probs`` or ``logits`` (exactly one), the other computed on first use, as torch's.
Their samples have no gradient (``has_rsample`` is False).

>>> import duograd as dg
>>> from duograd.distributions import Categorical
>>> d = Categorical(logits=dg.tensor([0.0, 0.0, 0.0, 0.0]))
>>> round(d.entropy().item(), 6), d.log_prob(dg.tensor(2)).item() == -math.log(4)
(1.386294, True)
"""

from __future__ import annotations

import math  # noqa: F401  (the doctests use it)
from typing import Any

import numpy as np

from ..indexing import where
from .._tensor import Size, Tensor, _as_tensor, int64
from ..autograd import no_grad
from . import constraints
from .distribution import Distribution, _noise, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]


def _one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _float_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor(np.asarray(x, dtype=float))


class Bernoulli(Distribution):
    """Bernoulli(probs): 1 with probability ``probs``, else 0; or given by ``logits``
    (log-odds).

    >>> import duograd as dg
    >>> d = Bernoulli(probs=dg.tensor([0.25]))
    >>> d.mean.tolist(), d.variance.tolist(), d.log_prob(dg.tensor([1.0])).tolist() == [math.log(0.25)]
    ([0.25], [0.1875], True)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Bernoulli":
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> Size:
        return Size(self._param.shape)

    @lazy_property
    def logits(self) -> Tensor:  # type: ignore[override]
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:  # type: ignore[override]
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():  # uniform noise against the probabilities: a replay redraws the noise
            u = _noise("random", shape, self.probs.dtype)
            return (u < self.probs).to(self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value)
        logits, value = broadcast_all(self.logits, value)
        # -BCE with logits: value * logits - softplus(logits), written stably
        return value * logits - logits.clamp(min=0) - (-logits.abs()).exp().log1p()

    def entropy(self) -> Tensor:
        logits, p = self.logits, self.probs
        return logits.clamp(min=0) - logits * p + (-logits.abs()).exp().log1p()  # BCE with logits, target p

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _as_tensor(np.arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self.batch_shape)))
        return values.expand(2, *self.batch_shape) if expand else values


class Categorical(Distribution):
    """A categorical distribution over {0, ..., K-1}: ``probs`` (normalised along the last
    dim) or ``logits`` (unnormalised log-probabilities); the last dim indexes the categories.

    >>> import duograd as dg
    >>> d = Categorical(probs=dg.tensor([1.0, 3.0]))
    >>> d.probs.tolist(), d.sample((5,)).shape
    ([0.25, 0.75], (5,))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            probs = _float_tensor(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = _float_tensor(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Categorical":
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:  # type: ignore[override]
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:  # type: ignore[override]
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return Size(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return _as_tensor(np.full(self._extended_shape(), np.nan, dtype=self.probs.dtype))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return _as_tensor(np.full(self._extended_shape(), np.nan, dtype=self.probs.dtype))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():  # inverse CDF of uniform noise, in operations (a replay redraws the noise)
            cum = self.probs.cumsum(-1)
            u = _noise("random", tuple(shape) + (1,), self.probs.dtype) * cum[..., -1:]
            idx = (cum <= u).to(int64).sum(-1)
            return idx.clamp(max=self._num_events - 1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value if isinstance(value, Tensor) else _as_tensor(np.asarray(value))
        value = value.to(int64).unsqueeze(-1)
        shape = np.broadcast_shapes(value.shape, self.logits.shape[:-1] + (1,))
        value = value.expand(*shape)
        logits = self.logits.expand(*shape[:-1], self._num_events)
        return logits.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits.dtype).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._num_events
        values = _as_tensor(np.arange(n, dtype=np.int64).reshape((-1,) + (1,) * len(self.batch_shape)))
        return values.expand(n, *self.batch_shape) if expand else values


class OneHotCategorical(Distribution):
    """A categorical distribution whose samples are one-hot vectors of length K (the event).

    >>> import duograd as dg
    >>> d = OneHotCategorical(probs=dg.tensor([0.0, 1.0]))
    >>> d.sample().tolist(), d.event_shape
    ([0.0, 1.0], dg.Size([2]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "OneHotCategorical":
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        from ..nn.functional import one_hot  # noqa: PLC0415
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..nn.functional import one_hot  # noqa: PLC0415
        idx = self._categorical.sample(sample_shape)
        return one_hot(idx, self._categorical._num_events).to(self._categorical.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value if isinstance(value, Tensor) else _as_tensor(np.asarray(value, dtype=float))
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = _as_tensor(np.eye(n, dtype=self._param.dtype).reshape((n,) + (1,) * len(self.batch_shape) + (n,)))
        return values.expand(n, *self.batch_shape, n) if expand else values

