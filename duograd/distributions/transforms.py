"""Invertible transforms with their log |det Jacobian|, as ``torch.distributions.transforms``:
``Transform`` (the base), ``ComposeTransform``, ``ExpTransform``, ``AffineTransform``,
``SigmoidTransform``, ``TanhTransform``; ``t.inv`` is the inverse transform. Used by
``TransformedDistribution``; every computation is a duograd operation, so gradients flow.

>>> import duograd as dg
>>> from duograd.distributions.transforms import AffineTransform, ExpTransform
>>> t = ExpTransform()
>>> x = dg.tensor([0.0, 1.0])
>>> t.inv(t(x)).tolist(), t.log_abs_det_jacobian(x, t(x)).tolist()
([0.0, 1.0], [0.0, 1.0])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor, _as_tensor
from ..nn.functional import softplus
from . import constraints

__all__ = ["Transform", "ComposeTransform", "ExpTransform", "AffineTransform", "SigmoidTransform",
           "TanhTransform", "identity_transform"]


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    if dim == 0:
        return value
    return value.reshape(*value.shape[:-dim], -1).sum(-1)


class Transform:
    """An invertible map ``y = t(x)`` with ``t.inv(y)`` and ``t.log_abs_det_jacobian(x, y)``;
    ``domain``/``codomain`` are constraints, ``bijective`` and ``sign`` (of the derivative,
    for monotone elementwise maps) describe it. ``cache_size=1`` remembers the last pair."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv: Any = None
        self._cached_x_y: tuple[Any, Any] = (None, None)

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform (``inv.inv`` is this one)."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self) -> Any:
        """The sign of the derivative (+1 or -1) of a monotone elementwise transform."""
        raise NotImplementedError(f"{type(self).__name__}.sign")

    def with_cache(self, cache_size: int = 1) -> "Transform":
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Any) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Any) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}._call")

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}._inverse")

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        """log |dy/dx|, of the shape of x without its event dims."""
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian")

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform (``t.inv``)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x: Any) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied in order (the first one first).

    >>> import duograd as dg
    >>> t = ComposeTransform([AffineTransform(1.0, 2.0), ExpTransform()])
    >>> round(t(dg.tensor(0.0)).item(), 6), round(t.inv(t(dg.tensor(0.3))).item(), 12)
    (2.718282, 0.3)
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def __call__(self, x: Any) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        if not self.parts:
            return x * 0
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        out = terms[0]
        for t in terms[1:]:
            out = out + t
        return out

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """y = exp(x); log |dy/dx| = x."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class SigmoidTransform(Transform):
    """y = sigmoid(x) (kept inside (0, 1) as the dtype allows); inverse logit;
    log |dy/dx| = -softplus(-x) - softplus(x)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        fi = np.finfo(x.dtype)
        return x.sigmoid().clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))

    def _inverse(self, y: Tensor) -> Tensor:
        fi = np.finfo(y.dtype)
        y = y.clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); inverse atanh; log |dy/dx| = 2 (log 2 - x - softplus(-2x)), stably."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale * x; ``event_dim`` rightmost dims count as one event (their log
    |scale| summed).

    >>> import duograd as dg
    >>> t = AffineTransform(1.0, -2.0)
    >>> t(dg.tensor(3.0)).item(), t.sign, round(t.log_abs_det_jacobian(dg.tensor(3.0), None).item(), 6)
    (-5.0, -1, 0.693147)
    """

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self._event_dim

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.domain

    def with_cache(self, cache_size: int = 1) -> "AffineTransform":
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False

        def same(a: Any, b: Any) -> bool:
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return a == b
            return bool((_as_tensor(a) == _as_tensor(b)).all())
        return same(self.loc, other.loc) and same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        shape = x.shape if isinstance(x, Tensor) else ()
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = _as_tensor(np.full(shape, math.log(abs(scale))))
        else:
            result = scale.abs().log()
        if self._event_dim:
            result_size = result.shape[:result.ndim - self._event_dim] + (-1,)
            result = result.reshape(*result_size).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(*shape) if tuple(result.shape) != tuple(shape) else result

    def forward_shape(self, shape: Any) -> Any:
        return tuple(np.broadcast_shapes(tuple(shape), getattr(self.loc, "shape", ()),
                                         getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape: Any) -> Any:
        return self.forward_shape(shape)
