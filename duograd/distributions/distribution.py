"""``Distribution``, the base class (as ``torch.distributions.Distribution``), and the
helpers the distributions share: broadcasting parameters, the probs/logits conversions,
cached properties, and drawing noise through the engine's ``_draw`` (so a ``dg.compile``
replay draws anew).

>>> import duograd as dg
>>> from duograd.distributions import Normal
>>> d = Normal(dg.zeros(3), 1.0)
>>> d.batch_shape, d.event_shape, d.sample((2,)).shape
(dg.Size([3]), dg.Size([]), (2, 3))
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .._tensor import Size, Tensor, _as_tensor, _draw, get_default_dtype
from ..autograd import enable_grad, no_grad
from ..random import as_rng
from . import constraints

__all__ = ["Distribution"]


class lazy_property:
    """A property computed once per instance, then stored on it (torch's ``lazy_property``:
    ``probs`` from ``logits`` and the other way round)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():  # as torch's: the cached value keeps its history
            value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Each value as a Tensor (a number takes the default float dtype, or the dtype of the
    Tensors among them), all expanded to their broadcast shape (as torch's).

    >>> import duograd as dg
    >>> [t.shape for t in broadcast_all(1.0, dg.zeros(2, 1), dg.zeros(3))]
    [(2, 3), (2, 3), (2, 3)]
    """
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else get_default_dtype()
    if dtype.kind != "f":
        dtype = get_default_dtype()
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (int, float, np.number, np.ndarray)) and not isinstance(v, bool):
            out.append(_as_tensor(np.asarray(v, dtype=dtype)))
        else:
            raise ValueError("Input arguments must all be instances of numbers, torch.Tensor or "
                             f"objects implementing __torch_function__ (got {type(v).__name__})")
    shape = np.broadcast_shapes(*(t.shape for t in out))
    return tuple(t if t.shape == shape else t.expand(*shape) for t in out)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    if dim == 0:
        return value
    return value.reshape(*value.shape[:-dim], -1).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` kept in [eps, 1 - eps] (eps the dtype's machine epsilon)."""
    eps = float(np.finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds of binary ``probs`` (``is_binary``), else log-probabilities."""
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """``sigmoid(logits)`` (``is_binary``), else ``softmax(logits, -1)``."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def _noise(method: str, shape: tuple, dtype: Any, *args: Any) -> Tensor:
    """A Tensor of ``shape`` drawn by the default generator's ``method`` (``standard_normal``,
    ``random``, ``standard_exponential``), drawn afresh on a ``dg.compile`` replay."""
    gen = as_rng()
    fn = getattr(gen, method)
    dt = np.dtype(dtype)

    def draw(*a: Any) -> np.ndarray:
        return np.asarray(fn(*a)).astype(dt, copy=False)

    return _as_tensor(_draw(draw, *args, tuple(shape)))


class Distribution:
    """The base class: a batch of distributions of one kind over events of one shape.

    Subclasses set ``arg_constraints`` (checked at construction when validation is on),
    ``support``, ``has_rsample`` and implement the methods they have; the others raise
    ``NotImplementedError`` naming the class. Validation is on by default, as torch's;
    ``Distribution.set_default_validate_args(False)`` or ``validate_args=False`` turn it off.

    >>> import duograd as dg
    >>> from duograd.distributions import Distribution, Normal
    >>> try:
    ...     Normal(0.0, -1.0)
    ... except ValueError as e:
    ...     print(str(e).split(" of distribution")[0])
    Expected parameter scale (Tensor of shape ())
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{type(self).__name__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # the parameter was given in its other form
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                        f"{constraint!r}, but found invalid values:\n{value}")

    # ------------------------------------------------------------------ shapes
    @property
    def batch_shape(self) -> Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one sample (without batching)."""
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> Size:
        if not isinstance(sample_shape, tuple):
            sample_shape = tuple(sample_shape) if hasattr(sample_shape, "__iter__") else (int(sample_shape),)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """A new distribution with its parameters expanded to ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__}.expand")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a "
                                      "custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    # ------------------------------------------------------------------ moments
    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError(f"{type(self).__name__}.mean")

    @property
    def mode(self) -> Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError(f"{type(self).__name__}.variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation: the square root of the variance."""
        return self.variance.sqrt()

    # ------------------------------------------------------------------ sampling
    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Samples of shape ``sample_shape + batch_shape + event_shape``, without history."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Reparameterised samples: differentiable with respect to the parameters."""
        raise NotImplementedError(f"{type(self).__name__}.rsample")

    def sample_n(self, n: int) -> Tensor:
        """``sample((n,))`` (deprecated in torch)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample((n,))

    # ------------------------------------------------------------------ densities
    def log_prob(self, value: Any) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__}.log_prob")

    def cdf(self, value: Any) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__}.cdf")

    def icdf(self, value: Any) -> Tensor:
        """The inverse of the cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__}.icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support, along a new leading dim."""
        raise NotImplementedError(f"{type(self).__name__}.enumerate_support")

    def entropy(self) -> Tensor:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__}.entropy")

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {tuple(value.shape)} "
                             f"vs {tuple(self._event_shape)}.")
        actual_shape, expected_shape = value.shape, self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{tuple(actual_shape)} vs {tuple(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self).__name__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with `validate_args=False` "
                          "to turn off validation.", stacklevel=2)
            return
        if support is None:
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                f"values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = ", ".join(f"{p}: {self.__dict__[p].item() if self.__dict__[p].numel() == 1 else Size(self.__dict__[p].shape)}"
                          for p in names)
        return f"{type(self).__name__}({parts})"
