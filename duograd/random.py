"""Random numbers as torch has them: a default generator, ``manual_seed``, and the sampling
functions (``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``rand_like``,
``randn_like``).

The generator is a ``numpy.random.Generator``. Each function takes ``generator=`` (a
Generator) and, as before, ``rng=`` (a Generator or an int seed); with neither it draws
from the default generator, which ``dg.manual_seed(n)`` reseeds. The values for a seed are
NumPy's, not torch's (different generators); the distributions, shapes and dtypes are
torch's. Every draw goes through ``_tensor._draw``, so a ``dg.compile`` replay draws anew.

>>> import duograd as dg
>>> _ = dg.manual_seed(0)
>>> a = dg.rand(3)
>>> _ = dg.manual_seed(0)
>>> dg.rand(3).tolist() == a.tolist()
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._tensor import Tensor, _draw, _dtype_of, _made, _shape_of, get_default_dtype, int64

__all__ = ["manual_seed", "seed", "initial_seed", "default_generator", "rand", "randn",
           "randint", "randperm", "normal", "rand_like", "randn_like"]

_initial_seed = int(np.random.SeedSequence().entropy % (2 ** 63))
default_generator: np.random.Generator = np.random.default_rng(_initial_seed)


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the default generator (as ``torch.manual_seed``) and return it.

    >>> import duograd as dg
    >>> g = dg.manual_seed(1)
    >>> g is dg.random.default_generator
    True
    """
    global default_generator, _initial_seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: expected an int seed, got {type(seed).__name__}")
    _initial_seed = int(seed)
    default_generator = np.random.default_rng(_initial_seed % (2 ** 64))
    return default_generator


def seed() -> int:
    """Reseed the default generator from fresh entropy; returns the new seed."""
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return _initial_seed


def as_rng(rng: Any = None, generator: Any = None) -> np.random.Generator:
    """The generator to draw from: ``generator`` or ``rng`` (a Generator or an int seed),
    else the default generator.

    >>> bool(as_rng(0).integers(10) == as_rng(0).integers(10))
    True
    """
    if generator is not None:
        if not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator: expected a numpy.random.Generator, got "
                            f"{type(generator).__name__}")
        return generator
    if rng is None:
        return default_generator
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected a numpy.random.Generator or an int seed, got {type(rng).__name__}")


def _float(dtype: Any, op: str) -> np.dtype:
    dt = get_default_dtype() if dtype is None else _dtype_of(dtype, op)
    if dt.kind != "f":
        raise NotImplementedError(f"{op}: not implemented for {dt}; expected a floating point dtype")
    return dt


def rand(*size: Any, generator: Any = None, dtype: Any = None, requires_grad: bool = False,
         device: Any = None, rng: Any = None) -> Tensor:
    """Uniform samples on [0, 1): ``dg.rand(2, 3)`` or ``dg.rand((2, 3))``.

    >>> import duograd as dg
    >>> x = dg.rand(2, 3, generator=np.random.default_rng(0))
    >>> x.shape, 0 <= x.min().item() <= x.max().item() < 1
    ((2, 3), True)
    """
    dt = _float(dtype, "rand")
    data = _draw(as_rng(rng, generator).random, _shape_of(size), dt)
    return _made(data, requires_grad, device, "rand")


def randn(*size: Any, generator: Any = None, dtype: Any = None, requires_grad: bool = False,
          device: Any = None, rng: Any = None) -> Tensor:
    """Standard normal samples; ``generator`` is a ``numpy.random.Generator`` (``rng`` may
    also be an int seed).

    >>> import duograd as dg
    >>> dg.randn(2, 3, rng=0).shape
    (2, 3)
    """
    dt = _float(dtype, "randn")
    data = _draw(as_rng(rng, generator).standard_normal, _shape_of(size), dt)
    return _made(data, requires_grad, device, "randn")


def _integers(gen: np.random.Generator, low: int, high: int, size: tuple, dtype: np.dtype) -> np.ndarray:
    return gen.integers(low, high, size).astype(dtype, copy=False)


def randint(*args: Any, size: Any = None, generator: Any = None, dtype: Any = None,
            requires_grad: bool = False, device: Any = None, rng: Any = None) -> Tensor:
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, int64 unless ``dtype`` says otherwise, as torch.

    >>> import duograd as dg
    >>> t = dg.randint(3, 7, (4,), generator=np.random.default_rng(0))
    >>> t.dtype, 3 <= t.min().item() <= t.max().item() < 7
    (dtype('int64'), True)
    """
    if size is None and args and isinstance(args[-1], (tuple, list)):
        args, size = args[:-1], args[-1]
    if size is None or len(args) not in (1, 2):
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size)")
    low, high = (0, args[0]) if len(args) == 1 else args
    if high <= low:
        raise RuntimeError(f"randint: random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    dt = int64 if dtype is None else _dtype_of(dtype, "randint")
    data = _draw(_integers, as_rng(rng, generator), int(low), int(high), _shape_of((size,)), dt)
    return _made(data, requires_grad, device, "randint")


def randperm(n: int, *, generator: Any = None, dtype: Any = None, requires_grad: bool = False,
             device: Any = None, rng: Any = None) -> Tensor:
    """A random permutation of 0 .. n-1, int64, as torch.

    >>> import duograd as dg
    >>> sorted(dg.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise RuntimeError(f"randperm: n must be a non-negative int, got {n!r}")
    dt = int64 if dtype is None else _dtype_of(dtype, "randperm")
    data = _draw(as_rng(rng, generator).permutation, int(n)).astype(dt, copy=False)
    return _made(data, requires_grad, device, "randperm")


def _normal(gen: np.random.Generator, mean: Any, std: Any, size: tuple, dtype: np.dtype) -> np.ndarray:
    return (mean + std * gen.standard_normal(size)).astype(dtype, copy=False)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, requires_grad: bool = False, device: Any = None,
           rng: Any = None) -> Tensor:
    """Normal samples: ``normal(mean, std, size)`` with numbers, or ``normal(mean, std)`` with
    Tensors (one sample per element of their broadcast shape), as ``torch.normal``. The
    result is not differentiated with respect to ``mean`` or ``std``.

    >>> import duograd as dg
    >>> dg.normal(2.0, 3.0, (2, 2)).shape, dg.normal(dg.zeros(3), 1.0).shape
    ((2, 2), (3,))
    """
    m = mean._data if isinstance(mean, Tensor) else np.asarray(mean)
    s = std._data if isinstance(std, Tensor) else np.asarray(std)
    if size is None:
        if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
            raise TypeError("normal: give size, or mean or std as a Tensor")
        shape = np.broadcast_shapes(m.shape, s.shape)
        float_dts = [a.dtype for a in (m, s) if a.dtype.kind == "f" and a.ndim]
        dt = float_dts[0] if float_dts and dtype is None else _float(dtype, "normal")
    else:
        shape = _shape_of((size,))
        dt = _float(dtype, "normal")
    if np.any(s < 0):
        raise RuntimeError(f"normal: expects std >= 0.0, got {s.min()}")
    data = _draw(_normal, as_rng(rng, generator), m, s, shape, dt)
    return _made(data, requires_grad, device, "normal")


def rand_like(input: Tensor, *, generator: Any = None, dtype: Any = None,  # noqa: A002
              requires_grad: bool = False, device: Any = None, rng: Any = None) -> Tensor:
    """Uniform samples on [0, 1) of ``input``'s shape and dtype.

    >>> import duograd as dg
    >>> dg.rand_like(dg.zeros(2, 3, dtype=dg.float32)).dtype
    dtype('float32')
    """
    dt = input.dtype if dtype is None else dtype
    return rand(input.shape, generator=generator, dtype=_float(dt, "rand_like"),
                requires_grad=requires_grad, device=device, rng=rng)


def randn_like(input: Tensor, *, generator: Any = None, dtype: Any = None,  # noqa: A002
               requires_grad: bool = False, device: Any = None, rng: Any = None) -> Tensor:
    """Standard normal samples of ``input``'s shape and dtype.

    >>> import duograd as dg
    >>> dg.randn_like(dg.zeros(4)).shape
    (4,)
    """
    dt = input.dtype if dtype is None else dtype
    return randn(input.shape, generator=generator, dtype=_float(dt, "randn_like"),
                 requires_grad=requires_grad, device=device, rng=rng)
