"""duograd: reverse-mode automatic differentiation, written twice.

``duograd.scalar`` is the clarity engine (one float per node); this package's top
level is the tensor engine (NumPy arrays, hand-written vector-Jacobian products).

>>> import duograd as dg
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad.numpy()
array([2., 4.])
"""

from .tensor import Tensor, ones, randn, tensor, zeros  # first: it loads autograd and ops
from .autograd import Primitive, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .ops import concatenate, matmul, maximum, minimum, stack, where
from . import func, nn, optim, viz  # noqa: E402  (after the engine they build on)

__all__ = [
    "Tensor", "tensor", "zeros", "ones", "randn",
    "matmul", "maximum", "minimum", "where", "concatenate", "stack",
    "grad", "no_grad", "enable_grad", "is_grad_enabled", "set_grad_enabled", "Primitive",
    "gradcheck", "gradgradcheck", "GradcheckError", "func", "nn", "optim", "viz",
]
__version__ = "0.1.0"
