"""duograd: reverse-mode automatic differentiation, written twice.

``duograd.scalar`` is the clarity engine (one float per node); this package's top
level is the tensor engine (NumPy arrays, hand-written vector-Jacobian products).

>>> import duograd as dg
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad.numpy()
array([2., 4.])
"""

from ._tensor import (Size, Tensor, arange, from_numpy, linspace, ones, ones_like, randn, tensor, zeros,
                     zeros_like)
from .autograd import Primitive, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .shapes import DimError, ShapeError
from .ops import (amax, amin, clamp, flatten, power as pow, std)  # noqa: A001  (torch's signatures)
from .ops import (absolute as abs, max, min, argmax, argmin, broadcast_to, clip,  # noqa: A001
                  concatenate, cos, cumsum, exp, log, log_softmax, logsumexp, matmul, maximum, mean,
                  minimum, relu, reshape, sigmoid, sin, softmax, softplus, sqrt, squeeze, stack, sum,
                  tanh, transpose, unsqueeze, var, where)
from . import methods  # noqa: F401  (binds the Tensor's operators and methods)
from .conv import avg_pool2d, conv2d, max_pool2d
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import autograd, func, nn, optim, viz  # noqa: E402  (after the engine they build on)
from .capture import Compiled, compile  # noqa: E402,A001
from . import hooks  # noqa: E402,F401  (binds Tensor.register_hook and Tensor.retain_grad)
from .anomaly import AnomalyError, detect_anomaly  # noqa: E402
from .explain import explain  # noqa: E402
from .checkpoint import checkpoint  # noqa: E402

__all__ = [
    "Tensor", "tensor", "from_numpy", "zeros", "ones", "zeros_like", "ones_like", "arange",
    "linspace", "randn",
    "matmul", "maximum", "minimum", "where", "concatenate", "stack",
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "softplus", "sin", "cos", "abs", "clip",
    "sum", "mean", "var", "max", "min", "logsumexp", "softmax", "log_softmax", "cumsum",
    "argmax", "argmin", "reshape", "transpose", "broadcast_to", "squeeze", "unsqueeze",
    "conv2d", "max_pool2d", "avg_pool2d",
    "Size", "amax", "amin", "std", "clamp", "flatten", "pow", "ShapeError", "DimError",
    "grad", "no_grad", "enable_grad", "is_grad_enabled", "set_grad_enabled", "Primitive",
    "gradcheck", "gradgradcheck", "GradcheckError", "autograd", "func", "nn", "optim", "viz",
    "compile", "Compiled",
    "explain", "detect_anomaly", "AnomalyError", "checkpoint",
]
__version__ = "0.1.0"
