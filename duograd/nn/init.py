"""Parameter initialisation, as ``torch.nn.init``: each function writes into its tensor in
place, under ``no_grad``, and returns it.

The random ones take ``generator=`` (anything ``duograd.random.as_rng`` accepts; the default
generator without it) and draw their whole array through ``_tensor._draw``, so a
``dg.compile`` replay draws anew. The write itself goes through ``inplace.write``, so the
tensor keeps its identity and its version counter moves, as with ``uniform_``.

Fans follow torch's rule (``_calculate_fan_in_and_fan_out``): dim 1 times the receptive
field (the product of dims 2 onwards) is fan_in, dim 0 times it is fan_out.

>>> import duograd as dg
>>> from duograd.nn import init
>>> w = dg.empty(3, 4)
>>> init.kaiming_uniform_(w, generator=dg.random.as_rng(0)) is w
True
>>> bool((w.abs() <= init.calculate_gain("leaky_relu") * (3 / 4) ** 0.5).all())
True
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor, _draw
from ..autograd import no_grad
from ..inplace import assign_p, write
from ..random import as_rng

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_",
           "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def _check(tensor: Any, name: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{name}: expected a Tensor, got {type(tensor).__name__}")
    return tensor


def _put(tensor: Tensor, values: np.ndarray, name: str) -> Tensor:
    """``values`` written into ``tensor`` (cast to its dtype) under no_grad; returns it."""
    with no_grad():
        return write(tensor, assign_p, values, name=f"nn.init.{name}")


def _drawn(tensor: Tensor, name: str, fn: Callable[..., np.ndarray], *args: Any) -> Tensor:
    """``fn(*args)`` (the whole array, drawn afresh on a replay) written into ``tensor``."""
    dtype = tensor.dtype
    if dtype.kind != "f":  # torch's kind of error: random floats do not fit an integer tensor
        raise RuntimeError(f"nn.init.{name}: not implemented for a tensor of dtype {dtype} (shape "
                           f"{tuple(tensor.shape)}); expected a floating point tensor")

    def sample(*a: Any) -> np.ndarray:
        return np.asarray(fn(*a)).astype(dtype, copy=False)

    return _put(tensor, _draw(sample, *args), name)


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (torch's table): 1 for the linear ones and
    sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu
    (``param`` the slope, 0.01 by default), 3/4 for selu.

    >>> calculate_gain("tanh"), calculate_gain("leaky_relu", 0.0) == 2 ** 0.5
    (1.6666666666666667, True)
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of 2 or more dims, as torch computes them.

    >>> import duograd as dg
    >>> _calculate_fan_in_and_fan_out(dg.zeros(8, 3, 5, 5))
    (75, 200)
    """
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         f"dimensions (got shape {tuple(tensor.shape)})")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b).

    >>> import duograd as dg
    >>> w = uniform_(dg.zeros(1000), -2.0, 2.0, generator=dg.random.as_rng(0))
    >>> bool((w >= -2).all() and (w < 2).all())
    True
    """
    _check(tensor, "uniform_")
    return _drawn(tensor, "uniform_", as_rng(generator=generator).uniform, a, b, tensor.shape)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std^2).

    >>> import duograd as dg
    >>> w = normal_(dg.zeros(10000), 1.0, 0.02, generator=dg.random.as_rng(0))
    >>> abs(w.mean().item() - 1.0) < 1e-3
    True
    """
    _check(tensor, "normal_")
    return _drawn(tensor, "normal_", as_rng(generator=generator).normal, mean, std, tensor.shape)


def _truncated_normal(gen: np.random.Generator, mean: float, std: float, a: float, b: float,
                      shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Exact samples of N(mean, std^2) restricted to [a, b], by rejection: from the normal
    itself when [a, b] holds much of its mass, else from U(a, b) accepted with the density's
    ratio to its peak on [a, b] (both as torch does it)."""
    lo, hi = float(np.asarray(a, dtype)), float(np.asarray(b, dtype))  # bounds as the dtype holds them
    n = math.prod(shape)
    out = np.empty(n)
    mass = 0.5 * (math.erf((b - mean) / (std * math.sqrt(2))) - math.erf((a - mean) / (std * math.sqrt(2))))
    todo = np.arange(n)
    if mass > 0.3:
        while todo.size:
            x = gen.normal(mean, std, todo.size)
            ok = (x.astype(dtype) >= lo) & (x.astype(dtype) <= hi)
            out[todo[ok]] = x[ok]
            todo = todo[~ok]
    else:
        peak = max(a, min(mean, b))
        while todo.size:
            x = gen.uniform(a, b, todo.size)
            log_ratio = -0.5 * ((x - mean) / std) ** 2 + 0.5 * ((peak - mean) / std) ** 2
            ok = np.log(gen.random(todo.size)) <= log_ratio
            out[todo[ok]] = x[ok]
            todo = todo[~ok]
    return np.clip(out, lo, hi).reshape(shape)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std^2) truncated to [a, b] (``a`` and ``b``
    are absolute bounds, as torch's).

    >>> import duograd as dg
    >>> w = trunc_normal_(dg.zeros(1000), std=0.02, a=-0.04, b=0.04, generator=dg.random.as_rng(0))
    >>> bool((w.abs() <= 0.04).all())
    True
    """
    _check(tensor, "trunc_normal_")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    gen = as_rng(generator=generator)
    return _drawn(tensor, "trunc_normal_", _truncated_normal, gen, float(mean), float(std),
                  float(a), float(b), tensor.shape, tensor.dtype)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``.

    >>> import duograd as dg
    >>> constant_(dg.zeros(2), 0.25).tolist()
    [0.25, 0.25]
    """
    _check(tensor, "constant_")
    return _put(tensor, np.full(tensor.shape, val, dtype=tensor.dtype), "constant_")


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones.

    >>> import duograd as dg
    >>> ones_(dg.zeros(2)).tolist()
    [1.0, 1.0]
    """
    _check(tensor, "ones_")
    return _put(tensor, np.ones(tensor.shape, dtype=tensor.dtype), "ones_")


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros.

    >>> import duograd as dg
    >>> zeros_(dg.ones(2)).tolist()
    [0.0, 0.0]
    """
    _check(tensor, "zeros_")
    return _put(tensor, np.zeros(tensor.shape, dtype=tensor.dtype), "zeros_")


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity (ones on the main diagonal).

    >>> import duograd as dg
    >>> eye_(dg.zeros(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    _check(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported (got shape {tuple(tensor.shape)})")
    return _put(tensor, np.eye(*tensor.shape, dtype=tensor.dtype), "eye_")


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: in each of ``groups``
    groups, output channel d copies input channel d (its kernel's centre is 1).

    >>> import duograd as dg
    >>> dirac_(dg.zeros(2, 2, 3)).tolist()
    [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]
    """
    _check(tensor, "dirac_")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"Only tensors with 3, 4, or 5 dimensions are supported (got shape "
                         f"{tuple(tensor.shape)})")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError(f"dim 0 must be divisible by groups (dim 0 is {sizes[0]}, groups {groups})")
    per_group = sizes[0] // groups
    values = np.zeros(sizes, dtype=tensor.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _put(tensor, values, "dirac_")


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010).

    >>> import duograd as dg
    >>> w = xavier_uniform_(dg.zeros(3, 5), generator=dg.random.as_rng(0))
    >>> bool((w.abs() <= (6 / 8) ** 0.5).all())
    True
    """
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))  # sqrt(3) times the std
    return _drawn(tensor, "xavier_uniform_", as_rng(generator=generator).uniform, -bound, bound,
                  tensor.shape)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import duograd as dg
    >>> xavier_normal_(dg.zeros(3, 5), generator=dg.random.as_rng(0)).shape
    (3, 5)
    """
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _drawn(tensor, "xavier_normal_", as_rng(generator=generator).normal, 0.0, std,
                  tensor.shape)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015); ``fan`` is
    fan_in or fan_out (``mode``), ``gain`` is ``calculate_gain(nonlinearity, a)``.

    >>> import duograd as dg
    >>> w = kaiming_uniform_(dg.zeros(4, 6), nonlinearity="relu", generator=dg.random.as_rng(0))
    >>> bool((w.abs() <= 2 ** 0.5 * (3 / 6) ** 0.5).all())
    True
    """
    _check(tensor, "kaiming_uniform_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / _calculate_correct_fan(tensor, mode))  # sqrt(3) times the std
    return _drawn(tensor, "kaiming_uniform_", as_rng(generator=generator).uniform, -bound, bound,
                  tensor.shape)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He et al., 2015).

    >>> import duograd as dg
    >>> kaiming_normal_(dg.zeros(4, 6), mode="fan_out", generator=dg.random.as_rng(0)).shape
    (4, 6)
    """
    _check(tensor, "kaiming_normal_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return _drawn(tensor, "kaiming_normal_", as_rng(generator=generator).normal, 0.0, std,
                  tensor.shape)


def _orthogonal(gen: np.random.Generator, rows: int, cols: int, gain: float, shape: tuple) -> np.ndarray:
    flat = gen.normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # signs fixed by R's diagonal: Haar-distributed (Mezzadri, 2007)
    if rows < cols:
        q = q.T
    return (gain * q).reshape(shape)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``, from the QR factorisation of a normal draw;
    a tensor of more than 2 dims is flattened to (dim 0, the rest).

    >>> import duograd as dg
    >>> q = orthogonal_(dg.zeros(3, 3), generator=dg.random.as_rng(0))
    >>> bool(((q.T @ q - dg.eye(3)).abs() < 1e-12).all())
    True
    """
    _check(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError(f"Only tensors with 2 or more dimensions are supported (got shape "
                         f"{tuple(tensor.shape)})")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    return _drawn(tensor, "orthogonal_", _orthogonal, as_rng(generator=generator), rows, cols,
                  float(gain), tensor.shape)


def _sparse(gen: np.random.Generator, rows: int, cols: int, zeros: int, std: float) -> np.ndarray:
    values = gen.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[gen.permutation(rows)[:zeros], col] = 0.0
    return values


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """A 2-D ``tensor`` drawn from N(0, std^2), then ceil(sparsity * rows) of each column's
    elements, chosen at random, set to zero (Martens, 2010).

    >>> import duograd as dg
    >>> w = sparse_(dg.zeros(10, 3), 0.3, generator=dg.random.as_rng(0))
    >>> [(w[:, j] == 0).sum().item() for j in range(3)]
    [3, 3, 3]
    """
    _check(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported (got shape {tuple(tensor.shape)})")
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)
    return _drawn(tensor, "sparse_", _sparse, as_rng(generator=generator), rows, cols, zeros,
                  float(std))


def _deprecated(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    new, old = fn.__name__, fn.__name__[:-1]

    def deprecated(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = f"Deprecated alias of ``{new}`` (warns ``FutureWarning``), as torch's."
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
