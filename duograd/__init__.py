"""duograd: reverse-mode automatic differentiation, written twice.

``duograd.scalar`` is the clarity engine (one float per node); this package's top
level is the tensor engine (NumPy arrays, hand-written vector-Jacobian products).

>>> import duograd as dg
>>> x = dg.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad.numpy()
array([2., 4.])
"""

from ._tensor import (Size, Tensor, arange, from_numpy, linspace, ones, ones_like, tensor, zeros,
                     zeros_like)
from ._tensor import (bool_ as bool, device, float32, float64, get_default_dtype, int32,  # noqa: A001
                      int64, result_type, set_default_dtype)
from ._tensor import float32 as float, float64 as double, int32 as int, int64 as long  # noqa: A001
from .random import (manual_seed, normal, rand, rand_like, randint, randn, randn_like,
                     randperm)
from .random import (Generator, bernoulli, get_rng_state, initial_seed, multinomial, poisson,  # noqa: E402
                     seed, set_rng_state)
from .autograd import Primitive, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .shapes import DimError, ShapeError
from .ops import (amax, amin, clamp, flatten, power as pow, std)  # noqa: A001  (torch's signatures)
from .ops import (absolute as abs, max, min, argmax, argmin, broadcast_to, clip,  # noqa: A001
                  cos, cumsum, exp, log, log_softmax, logsumexp, matmul, maximum, mean,
                  minimum, relu, reshape, sigmoid, sin, softmax, softplus, sqrt, squeeze, sum,
                  tanh, transpose, unsqueeze, var)
from .indexing import (cat, chunk, concat, concatenate, diag, diag_embed, diagonal, flip,  # noqa: F811
                       gather, index_add, index_select, masked_fill, masked_select, meshgrid,
                       moveaxis, movedim, nonzero, repeat_interleave, roll, scatter, scatter_add,
                       scatter_reduce, split, stack, take_along_dim, trace, tril, triu, unbind,
                       unflatten, where)
from .reductions import (all, any, argsort, cummax, cummin, cumprod, kthvalue,  # noqa: A004
                         logcumsumexp, median, mode, prod, sort, topk, unique)
from .creation import empty, empty_like, eye, full, full_like, tril_indices, triu_indices
from . import methods  # noqa: F401  (binds the Tensor's operators and methods)
from .conv import avg_pool2d, conv2d, max_pool2d
from .elementwise import (acos, acosh, asin, asinh, atan, atan2, atanh, ceil, copysign, cosh, erf,  # noqa: A004
                          erfc, erfinv, exp2, expm1, floor, floor_divide, fmod, frac, hypot, isclose,
                          isfinite, isinf, isnan, lerp, log10, log1p, log2, logaddexp, logical_and,
                          logical_not, logical_or, logical_xor, remainder, round, rsqrt, sign,
                          sinh, tan, trunc)
from . import linalg  # noqa: E402
from .linalg import addmm, baddbmm, bmm, dot, einsum, mm, mv, outer, tensor_norm as norm  # noqa: E402
from .conv import (_adaptive_max_pool1d_torch as adaptive_max_pool1d, adaptive_avg_pool1d, avg_pool1d,
                   conv1d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, max_pool1d)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import autograd, func, nn, optim, random, viz  # noqa: E402  (after the engine they build on)
autograd.gradcheck, autograd.gradgradcheck = gradcheck, gradgradcheck  # torch.autograd's names too
from . import utils  # noqa: E402  (duograd.utils.data: datasets and the data loader)
from .nn.functional import celu, prelu, selu  # noqa: E402  (torch has them at the top level too)
from .capture import Compiled, compile  # noqa: E402,A001
from . import hooks  # noqa: E402,F401  (binds Tensor.register_hook and Tensor.retain_grad)
from .anomaly import AnomalyError, detect_anomaly  # noqa: E402
from .explain import explain  # noqa: E402
from .checkpoint import checkpoint  # noqa: E402
from .serialization import load, save  # noqa: E402
from . import distributions  # noqa: E402  (composed from the operations above)

__all__ = [
    "Tensor", "tensor", "from_numpy", "zeros", "ones", "zeros_like", "ones_like", "arange",
    "linspace", "randn", "rand", "randint", "randperm", "normal", "rand_like", "randn_like",
    "manual_seed", "set_default_dtype", "get_default_dtype", "result_type", "device",
    "bool", "int32", "int64", "float32", "float64", "long", "int", "float", "double",
    "matmul", "maximum", "minimum", "where", "concatenate", "stack",
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "softplus", "sin", "cos", "abs", "clip",
    "sum", "mean", "var", "max", "min", "logsumexp", "softmax", "log_softmax", "cumsum",
    "argmax", "argmin", "reshape", "transpose", "broadcast_to", "squeeze", "unsqueeze",
    "conv2d", "max_pool2d", "avg_pool2d",
    # the elementwise family and linear algebra (branch elementwise)
    "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh",
    "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "erf", "erfc", "erfinv", "sign", "copysign",
    "floor", "ceil", "round", "trunc", "frac", "fmod", "remainder", "floor_divide",
    "isnan", "isinf", "isfinite", "isclose", "logaddexp", "lerp", "hypot",
    "logical_not", "logical_and", "logical_or", "logical_xor",
    "selu", "celu", "prelu",
    "einsum", "outer", "bmm", "mm", "mv", "dot", "addmm", "baddbmm", "norm", "linalg",
    "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
    "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "Size", "amax", "amin", "std", "clamp", "flatten", "pow", "ShapeError", "DimError",
    "grad", "no_grad", "enable_grad", "is_grad_enabled", "set_grad_enabled", "Primitive",
    "gradcheck", "gradgradcheck", "GradcheckError", "autograd", "func", "nn", "optim", "random", "viz",
    "compile", "Compiled",
    "explain", "detect_anomaly", "AnomalyError", "checkpoint",
    # shapes branch: reductions, scans and sorting; shape and indexing; creation
    "prod", "all", "any", "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort", "topk",
    "kthvalue", "median", "mode", "unique",
    "cat", "concat", "split", "chunk", "unbind", "unflatten", "movedim", "moveaxis", "flip", "roll",
    "tril", "triu", "diag", "diagonal", "diag_embed", "trace", "gather", "scatter", "scatter_add",
    "scatter_reduce", "index_select", "index_add", "take_along_dim", "masked_fill", "masked_select",
    "nonzero", "repeat_interleave", "meshgrid",
    "eye", "full", "full_like", "empty", "empty_like", "tril_indices", "triu_indices",
    # random numbers as objects; data loading (branch data)
    "Generator", "seed", "initial_seed", "get_rng_state", "set_rng_state", "multinomial", "bernoulli",
    "poisson", "utils",
    # serialization branch: torch's checkpoint format
    "save", "load",
    # initdist branch
    "distributions",
]
__version__ = "0.1.0"

# branch inventory: torch's device and configuration idioms as torch behaves without a GPU
from . import amp, backends, cuda, distributed, functional, fx, jit, onnx, settings  # noqa: E402,F401
from .amp import autocast  # noqa: E402
from .settings import (are_deterministic_algorithms_enabled, get_float32_matmul_precision,  # noqa: E402
                       get_num_interop_threads, get_num_threads, inference_mode,
                       is_deterministic_algorithms_warn_only_enabled, is_inference_mode_enabled,
                       set_float32_matmul_precision, set_num_interop_threads, set_num_threads,
                       use_deterministic_algorithms)
from .torch_compile import compile  # noqa: E402,A001,F811  (torch's keywords over capture.compile)

__all__ += [
    "amp", "backends", "cuda", "distributed", "functional", "fx", "jit", "onnx", "autocast",
    "are_deterministic_algorithms_enabled", "get_float32_matmul_precision", "get_num_interop_threads",
    "get_num_threads", "inference_mode", "is_deterministic_algorithms_warn_only_enabled",
    "is_inference_mode_enabled", "set_float32_matmul_precision", "set_num_interop_threads",
    "set_num_threads", "use_deterministic_algorithms",
]

# branch `names2`: torch.linalg's decompositions and their torch.*/Tensor twins, torch.special,
# and more of torch's functions (splits, scatters, statistics, in-place twins, legacy constructors)
from . import linalg_more as _linalg_more  # noqa: E402
_linalg_more.install(globals())
__all__ += sorted(_linalg_more.TORCH)
from . import special  # noqa: E402
special.install(globals())
__all__ += sorted(special.TORCH) + ["special", "sinc_", "i0_"]
from . import more_ops as _more_ops  # noqa: E402
_more_ops.install(globals())
_more_ops.install_extra(globals())
_more_ops.install_more(globals())
__all__ += sorted(_more_ops.TORCH)  # (the legacy constructors are classes: not in __all__)
# branch vmap: torch.vmap is torch.func.vmap
from .func import vmap  # noqa: E402

__all__ += ["vmap"]

# branch `methods`: torch's functions composed of the rows (tensor_api.py), torch's aliases, and
# torch's parameter names, ``axis=``, ``out=`` and the factory keywords on every public function
# (torch_signatures.py; applied last, to whatever the lines above export).
from .tensor_api import (add, addbmm, addcdiv, addcmul, addmv, addr, allclose, aminmax,  # noqa: E402,F811,A004
                         argwhere, as_tensor, asarray, bincount, bucketize, clamp_max, clamp_min,
                         clone, count_nonzero, cross, cumulative_trapezoid, deg2rad, detach, diff,
                         dist, div, divide, eq, equal, fmax, fmin, ge, ger, greater, greater_equal,
                         gt, heaviside, histc, index_copy, index_fill, inner, is_complex,
                         is_floating_point, is_nonzero, is_tensor, kron, le, less, less_equal,
                         logdet, logit, lt, matmul, mul, multiply, nan_to_num, nanmean, nansum, narrow,
                         ne, neg, negative, not_equal, numel, positive, put, rad2deg, ravel,
                         reciprocal, rsub, searchsorted, select, sgn, signbit, square, std_mean,
                         sub, subtract, swapaxes, swapdims, t, take, tile, trapezoid, trapz,
                         true_divide, var_mean, vdot, xlogy)
from .elementwise import (acos as arccos, acosh as arccosh, asin as arcsin, asinh as arcsinh,  # noqa: E402
                          atan as arctan, atan2 as arctan2, atanh as arctanh, trunc as fix)
from .ops import absolute  # noqa: E402
from .torch_signatures import contiguous_format, preserve_format, strided  # noqa: E402
from . import torch_signatures as _torch_signatures  # noqa: E402

__all__ += [
    "add", "addbmm", "addcdiv", "addcmul", "addmv", "addr", "allclose", "aminmax", "argwhere",
    "as_tensor", "asarray", "bincount", "bucketize", "clamp_max", "clamp_min", "clone",
    "count_nonzero", "cross", "cumulative_trapezoid", "deg2rad", "detach", "diff", "dist", "div",
    "divide", "eq", "equal", "fmax", "fmin", "ge", "ger", "greater", "greater_equal", "gt",
    "heaviside", "histc", "index_copy", "index_fill", "inner", "is_complex", "is_floating_point",
    "is_nonzero", "is_tensor", "kron", "le", "less", "less_equal", "logdet", "logit", "lt", "mul", "multiply",
    "nan_to_num", "nanmean", "nansum", "narrow", "ne", "neg", "negative", "not_equal", "numel",
    "positive", "put", "rad2deg", "ravel", "reciprocal", "rsub", "searchsorted", "select", "sgn",
    "signbit", "square", "std_mean", "sub", "subtract", "swapaxes", "swapdims", "t", "take",
    "tile", "trapezoid", "trapz", "true_divide", "var_mean", "vdot", "xlogy",
    "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "fix", "absolute",
    "strided", "contiguous_format", "preserve_format",
]
_torch_signatures.apply(globals())

# Keep this block last: every torch 2.13 name that nothing above built becomes an attribute
# that raises NotImplementedError with its reason (duograd/_inventory); built names are skipped.
from ._inventory.stubs import install as _install_stubs  # noqa: E402
_install_stubs()
