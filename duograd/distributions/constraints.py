"""Constraints, as ``torch.distributions.constraints``: objects whose ``check(value)`` gives
a bool Tensor saying where ``value`` satisfies them. Distributions declare them in
``arg_constraints`` (checked at construction when validation is on) and ``support``
(checked by ``log_prob`` and friends).

>>> import duograd as dg
>>> from duograd.distributions import constraints
>>> constraints.positive.check(dg.tensor([1.0, -1.0])).tolist()
[True, False]
>>> constraints.simplex.check(dg.tensor([0.25, 0.75])).item()
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _as_tensor

__all__ = ["Constraint", "boolean", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
           "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "nonnegative",
           "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer",
           "positive_semidefinite", "real", "real_vector", "simplex", "square", "symmetric",
           "unit_interval"]


def _t(value: Any) -> Tensor:
    return _as_tensor(value)


def _fmt(bound: Any) -> Any:
    """A bound as the reprs show it: a one-element Tensor by its number."""
    return bound.item() if isinstance(bound, Tensor) and bound.numel() == 1 else bound


class Constraint:
    """A region of values; ``check(value)`` is a bool Tensor of the batch shape (the event
    dims, ``event_dim`` of them, folded). ``is_discrete``: the region is of integers."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.check")

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder whose region depends on other values (a support computed from the
    parameters); it cannot be checked."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> "_Dependent":
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Any) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a ``dependent`` placeholder.

    >>> is_dependent(dependent), is_dependent(real)
    (True, False)
    """
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@constraints.dependent_property``: a property that is also a dependent constraint,
    for a support computed from the parameters."""

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> "_DependentProperty":  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base`` with its rightmost ``reinterpreted_batch_ndims`` batch dims made event dims."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, int(reinterpreted_batch_ndims)

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Any) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            raise ValueError(f"Expected value.dim() >= {n + self.base_constraint.event_dim} but got "
                             f"{_t(value).ndim}")
        return result.all(tuple(range(-n, 0))) if n else result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return (v == 0) | (v == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return ((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return (v % 1 == 0) & (self.lower_bound <= v) & (v <= self.upper_bound)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={_fmt(self.lower_bound)}, upper_bound={_fmt(self.upper_bound)})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return (v % 1 == 0) & (v >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={_fmt(self.lower_bound)})"


class _Real(Constraint):
    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return v == v  # False at NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        return self.lower_bound < _t(value)

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={_fmt(self.lower_bound)})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Any) -> Tensor:
        return self.lower_bound <= _t(value)

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={_fmt(self.lower_bound)})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Tensor:
        return _t(value) < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={_fmt(self.upper_bound)})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return (self.lower_bound <= v) & (v <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={_fmt(self.lower_bound)}, upper_bound={_fmt(self.upper_bound)})"


class _HalfOpenInterval(_Interval):
    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return (self.lower_bound <= v) & (v < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={_fmt(self.lower_bound)}, upper_bound={_fmt(self.upper_bound)})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        return (v >= 0).all(-1) & ((v.sum(-1) - 1).abs() < 1e-6)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        v = _t(value)
        ok = v.shape[-2] == v.shape[-1]
        return _t(np.full(v.shape[:-2], ok))


class _Symmetric(_Square):
    def check(self, value: Any) -> Tensor:
        v = _t(value)
        if v.shape[-2] != v.shape[-1]:
            return _t(np.zeros(v.shape[:-2], dtype=bool))
        a = v._data
        return _t(np.isclose(a, np.swapaxes(a, -1, -2), atol=1e-6).all((-2, -1)))


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        a = _t(value)._data
        return _t((np.tril(a) == a).reshape(a.shape[:-2] + (-1,)).min(-1))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        a = _t(value)._data
        tril = (np.tril(a) == a).reshape(a.shape[:-2] + (-1,)).min(-1)
        positive = (np.diagonal(a, 0, -2, -1) > 0).min(-1)
        return _t(tril & positive)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Any) -> Tensor:
        sym = super().check(value)._data
        if not sym.any():
            return _t(sym)
        a = _t(value)._data
        return _t(sym & (np.linalg.eigvalsh(a) >= 0).all(-1))


class _PositiveDefinite(_Symmetric):
    def check(self, value: Any) -> Tensor:
        sym = super().check(value)._data
        if not sym.any():
            return _t(sym)
        a = _t(value)._data
        ok = np.zeros(a.shape[:-2], dtype=bool)
        flat, okf = a.reshape((-1,) + a.shape[-2:]), ok.reshape(-1)
        for i, m in enumerate(flat):
            try:
                np.linalg.cholesky(m)
                okf[i] = True
            except np.linalg.LinAlgError:
                okf[i] = False
        return _t(sym & okf.reshape(ok.shape))


class _RealVector(_IndependentConstraint):
    def __init__(self) -> None:
        super().__init__(real, 1)

    def __repr__(self) -> str:
        return "IndependentConstraint(Real(), 1)"


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _RealVector()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
square = _Square()
symmetric = _Symmetric()
