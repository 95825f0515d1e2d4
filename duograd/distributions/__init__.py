"""Probability distributions, as ``torch.distributions``: ``Distribution`` and ``Normal``,
``Uniform``, ``Bernoulli``, ``Categorical``, ``OneHotCategorical``, ``Beta``, ``Gamma``,
``Dirichlet``, ``Exponential``, ``Laplace``, ``MultivariateNormal``, ``Independent``,
``TransformedDistribution`` with the transforms of ``duograd.distributions.transforms``,
``kl_divergence`` / ``register_kl``, and ``constraints``.

Each has torch's parameters, shapes (``batch_shape``, ``event_shape``, ``expand``),
argument validation (``validate_args``; ``Distribution.set_default_validate_args``),
``sample``, ``rsample`` where torch has it (differentiable: composed from duograd
operations), ``log_prob``, ``entropy``, the moments, and ``cdf``/``icdf`` where torch has
them. Samples come from duograd's default generator (``dg.manual_seed``).

>>> import duograd as dg
>>> from duograd import distributions as D
>>> _ = dg.manual_seed(0)
>>> mu = dg.tensor(0.0, requires_grad=True)
>>> x = D.Normal(mu, 1.0).rsample((1000,))
>>> (x ** 2).mean().backward()   # d/dmu E[x^2] = 2 mu = 0, estimated
>>> abs(mu.grad.item()) < 0.2
True
"""

from . import constraints, transforms
from .continuous import Beta, Dirichlet, Exponential, Gamma, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .multivariate import Independent, MultivariateNormal, TransformedDistribution
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, TanhTransform,
                         Transform)

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical", "Beta",
           "Gamma", "Dirichlet", "Exponential", "Laplace", "MultivariateNormal", "Independent",
           "TransformedDistribution", "Transform", "ComposeTransform", "ExpTransform", "AffineTransform",
           "SigmoidTransform", "TanhTransform", "kl_divergence", "register_kl", "constraints", "transforms"]
