"""Random numbers as torch has them: generator objects (``dg.Generator``), the default
generator and its seed (``manual_seed``, ``seed``, ``initial_seed``, ``get_rng_state``,
``set_rng_state``), and the sampling functions (``rand``, ``randn``, ``randint``,
``randperm``, ``normal``, ``rand_like``, ``randn_like``, ``multinomial``, ``bernoulli``,
``poisson``).

A ``dg.Generator`` wraps a ``numpy.random.Generator`` (PCG64). Each function takes
``generator=`` (a ``dg.Generator`` or a ``numpy.random.Generator``) and, as before, ``rng=``
(either, or an int seed); with neither it draws from the default generator, which
``dg.manual_seed(n)`` reseeds in place (so whoever holds it, or the NumPy generator inside
it, sees the new seed). The values for a seed are NumPy's, not torch's (different
generators); the distributions, shapes, dtypes and errors are torch's. Every draw goes
through ``_tensor._draw``, so a ``dg.compile`` replay draws anew.

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

from . import _context as _ctx
from ._tensor import (Tensor, _check_device, _CPU, _draw, _dtype_of, _made, _shape_of, _wrap,
                      get_default_dtype, int64)
from ._tensor import device as _device

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator", "rand", "randn", "randint", "randperm", "normal", "rand_like",
           "randn_like", "multinomial", "bernoulli", "poisson"]

_DEFAULT_SEED = 67280421310721  # what a new torch.Generator() starts from
_STATE_BYTES = 45  # seed (8) + PCG64 state (16) + increment (16) + has_uint32 (1) + uinteger (4)


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2 ** 63))


def _check_seed(seed: Any, op: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"{op} expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2 ** 63) <= seed < 2 ** 64:
        raise RuntimeError(f"{op}: the seed {seed} is out of range [-2**63, 2**64)")
    return seed % (2 ** 64)


class Generator:
    """A random number generator object, as ``torch.Generator``: pass it as ``generator=``
    to any random function, sampler or data loader. It wraps a ``numpy.random.Generator``
    (PCG64), so the values for a seed are NumPy's, not torch's. A new one starts from
    torch's default seed (67280421310721).

    >>> import duograd as dg
    >>> g = dg.Generator().manual_seed(42)
    >>> a = dg.randperm(5, generator=g)
    >>> _ = g.manual_seed(42)
    >>> dg.randperm(5, generator=g).tolist() == a.tolist(), g.initial_seed()
    (True, 42)
    """

    def __init__(self, device: Any = "cpu") -> None:
        _check_device(device)
        self._rng = np.random.Generator(np.random.PCG64(_DEFAULT_SEED))
        self._seed = _DEFAULT_SEED

    @property
    def device(self) -> _device:
        """Where the generator draws: always ``dg.device("cpu")``."""
        return _CPU

    def manual_seed(self, seed: int) -> "Generator":
        """Reseed in place (an int in [-2**63, 2**64); a negative one wraps, as torch) and
        return this generator."""
        # As an effect of a draw: a dg.compile replay reseeds again, in order among its draws.
        _draw(self._reseed, _check_seed(seed, "manual_seed"))
        return self

    def _reseed(self, s: int) -> np.ndarray:
        # In place: the NumPy generator keeps its identity, so holders of it see the reseed.
        self._rng.bit_generator.state = np.random.PCG64(s).state
        self._seed = s
        return np.empty(0)  # (a draw's result, read by nothing)

    def seed(self) -> int:
        """Reseed from fresh entropy; returns the new seed."""
        s = _fresh_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 Tensor (give it to ``set_state`` to draw the same
        numbers again). Its layout is duograd's, not torch's 5056-byte one.

        >>> import duograd as dg
        >>> g = dg.Generator()
        >>> s = g.get_state()
        >>> a = dg.rand(2, generator=g)
        >>> dg.rand(2, generator=g.set_state(s)).tolist() == a.tolist(), s.dtype
        (True, dtype('uint8'))
        """
        st = self._rng.bit_generator.state
        inner = st["state"]
        raw = (self._seed.to_bytes(8, "little") + int(inner["state"]).to_bytes(16, "little")
               + int(inner["inc"]).to_bytes(16, "little") + bytes([int(st["has_uint32"])])
               + int(st["uinteger"]).to_bytes(4, "little"))
        return _wrap(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> "Generator":
        """Restore a state from ``get_state``; returns this generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
            raise TypeError("set_state: RNG state must be a uint8 Tensor (from Generator.get_state), "
                            f"got {type(new_state).__name__}"
                            + (f" of dtype {new_state.dtype}" if isinstance(new_state, Tensor) else ""))
        if new_state.shape != (_STATE_BYTES,):
            raise RuntimeError(f"set_state: expected a state of shape ({_STATE_BYTES},), got "
                               f"{new_state.shape}")
        raw = new_state._data.tobytes()
        state = {"bit_generator": "PCG64",
                 "state": {"state": int.from_bytes(raw[8:24], "little"),
                           "inc": int.from_bytes(raw[24:40], "little")},
                 "has_uint32": raw[40], "uinteger": int.from_bytes(raw[41:45], "little")}
        try:
            self._rng.bit_generator.state = state
        except (ValueError, TypeError) as e:
            raise RuntimeError(f"set_state: not a valid generator state ({e})") from None
        self._seed = int.from_bytes(raw[:8], "little")
        return self

    def __repr__(self) -> str:
        return f"<duograd.Generator (cpu, initial_seed={self._seed})>"


default_generator: Generator = Generator()
default_generator.manual_seed(_fresh_seed())


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (as ``torch.manual_seed``) and return it.

    >>> import duograd as dg
    >>> g = dg.manual_seed(1)
    >>> g is dg.random.default_generator, g.initial_seed()
    (True, 1)
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Reseed the default generator from fresh entropy; returns the new seed.

    >>> import duograd as dg
    >>> s = dg.seed()
    >>> s == dg.initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    >>> import duograd as dg
    >>> _ = dg.manual_seed(7)
    >>> dg.initial_seed()
    7
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, a uint8 Tensor (``Generator.get_state``).

    >>> import duograd as dg
    >>> s = dg.get_rng_state()
    >>> a = dg.randn(3)
    >>> dg.set_rng_state(s)
    >>> dg.randn(3).tolist() == a.tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state``.

    >>> import duograd as dg
    >>> s = dg.get_rng_state()
    >>> a = dg.rand(2)
    >>> dg.set_rng_state(s)
    >>> dg.rand(2).tolist() == a.tolist()
    True
    """
    default_generator.set_state(new_state)


def as_rng(rng: Any = None, generator: Any = None) -> np.random.Generator:
    """The NumPy generator to draw from: ``generator`` or ``rng`` (a ``dg.Generator``, a
    ``numpy.random.Generator``, or for ``rng`` an int seed), else the default generator's.

    >>> bool(as_rng(0).integers(10) == as_rng(0).integers(10))
    True
    >>> g = Generator()
    >>> as_rng(generator=g) is g._rng
    True
    """
    if generator is not None:
        if isinstance(generator, Generator):
            return generator._rng
        if not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator: expected a dg.Generator or a numpy.random.Generator, got "
                            f"{type(generator).__name__}")
        return generator
    if rng is None:
        return default_generator._rng
    if isinstance(rng, Generator):
        return rng._rng
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected a dg.Generator, a numpy.random.Generator or an int seed, got "
                    f"{type(rng).__name__}")


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
    data = _draw(_permutation, as_rng(rng, generator), int(n), dt)  # (cast inside the draw)
    return _made(data, requires_grad, device, "randperm")


def _permutation(gen: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    return gen.permutation(n).astype(dtype, copy=False)


def _normal(gen: np.random.Generator, mean: Any, std: Any, size: tuple, dtype: np.dtype) -> np.ndarray:
    return (mean + std * gen.standard_normal(size)).astype(dtype, copy=False)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, requires_grad: bool = False, device: Any = None,
           rng: Any = None) -> Tensor:
    """Normal samples: ``normal(mean, std, size)`` with numbers, or ``normal(mean, std)`` with
    a Tensor for either or both (one sample per element of their broadcast shape), as
    ``torch.normal``. The
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
        raise RuntimeError(f"normal expects std >= 0.0, but found std {s.min()}")
    gen = as_rng(rng, generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        # mean + std * z with primitives: a dg.compile replay uses the call's mean and std
        z = _wrap(_draw(gen.standard_normal, shape))
        out = z * (std.detach() if isinstance(std, Tensor) else std) \
            + (mean.detach() if isinstance(mean, Tensor) else mean)
        from . import ops
        out = out if out.dtype == dt else ops.astype(out, dt)
        _check_device(device)
        if requires_grad:
            out = _made(out._data, requires_grad, device, "normal")
        return out
    data = _draw(_normal, gen, m, s, shape, dt)
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


# ---------------------------------------------------------------- discrete and counting draws

def _check_float(x: Tensor, op: str, kernel: str) -> None:
    if x.dtype.kind != "f":
        raise NotImplementedError(f'{op}: "{kernel}" not implemented for {x.dtype}; expected a '
                                  "floating point input")


def _categories(p: Tensor, n: int, replacement: bool, gen: np.random.Generator) -> Tensor:
    """``n`` category indices per row of the (rows, k) weights ``p``. The draw itself does not
    depend on ``p`` (uniforms, or exponentials), and what does is computed with primitives,
    so a ``dg.compile`` replay draws anew *for the weights of that call*."""
    from . import _context, ops
    from .reductions import argsort
    rows, k = p.shape
    if not replacement:
        # The n largest p / E with E ~ Exp(1) are a draw of n categories one after
        # another, each in proportion to the weight of those not yet drawn.
        e = _wrap(_draw(gen.standard_exponential, (rows, k)))
        return argsort(p / e, dim=1, descending=True, stable=True)[:, :n]
    # Inverse CDF: a uniform on [0, total) falls in one category's interval of the cumulative
    # weights (a category of weight 0 has an empty interval).
    cdf = ops.cumsum(p, dim=1)
    v = _wrap(_draw(gen.random, (rows, n))) * cdf[:, -1:]
    if not _context.on_effect:  # nothing records: the same count, found by bisection
        idx = np.zeros((rows, n), dtype=np.int64)
        for r in range(rows):
            idx[r] = np.searchsorted(cdf._data[r], v._data[r], side="right")
        return _wrap(np.minimum(idx, k - 1))
    below = ops.unsqueeze(cdf, 1) <= ops.unsqueeze(v, 2)  # (rows, n, k): cdf_j <= v
    return ops.minimum(below.sum(-1), k - 1)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Any = None) -> Tensor:
    """Category indices drawn with probability proportional to the weights in ``input``
    (1-D: ``(num_samples,)``; 2-D: one row of draws per row, ``(rows, num_samples)``),
    int64, as ``torch.multinomial``. Without ``replacement`` a row never repeats an index.

    >>> import duograd as dg
    >>> g = dg.Generator().manual_seed(0)
    >>> idx = dg.multinomial(dg.tensor([0.0, 1.0, 3.0]), 2, generator=g)
    >>> sorted(idx.tolist()), idx.dtype
    ([1, 2], dtype('int64'))
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: expected a Tensor, got {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {input.shape}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial: num_samples must be an int, got {type(num_samples).__name__}")
    n, k = int(num_samples), input.shape[-1]
    if n <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got {n})")
    if not replacement and n > k:
        raise RuntimeError(f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                           f"without replacement ({n} > {k})")
    p = input._data.reshape(-1, k)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or "
                           "element < 0")
    if p.shape[0] and np.any(p.sum(axis=1) <= 0):
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities "
                           "<= 0)")
    weights = input.detach().reshape(-1, k)
    if weights.dtype != np.float64:
        weights = weights.double()
    out = _categories(weights, n, bool(replacement), as_rng(generator=generator))
    return out.reshape(input.shape[:-1] + (n,))


def _bernoulli_check(p: Any, op: str) -> None:
    arr = p._data if isinstance(p, Tensor) else np.asarray(p)
    if not np.all((arr >= 0) & (arr <= 1)):
        raise RuntimeError(f"{op}: expects p to be in [0, 1], got values outside it "
                           f"(min {arr.min()}, max {arr.max()})" if arr.size else f"{op}: bad p")


def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:  # noqa: A002
    """0/1 samples, 1 with probability ``input`` (elementwise), or with probability ``p`` (a
    number) at every element of ``input``'s shape; ``input``'s dtype, as ``torch.bernoulli``.

    >>> import duograd as dg
    >>> dg.bernoulli(dg.tensor([0.0, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli: expected a Tensor, got {type(input).__name__}")
    _check_float(input, "bernoulli", "bernoulli_tensor_cpu_p_")
    prob = input if p is None else p
    _bernoulli_check(prob, "bernoulli")
    u = _made(_draw(as_rng(generator=generator).random, input.shape), False, None, "bernoulli")
    from . import ops  # (ops imports this module's neighbours; imported when first needed)
    hit = ops.less_p(u, prob.detach() if isinstance(prob, Tensor) else prob)
    return ops.astype(hit, input.dtype)


def _poisson(gen: np.random.Generator, lam: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.asarray(gen.poisson(lam)).astype(dtype, copy=False)


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson counts with rates ``input`` (elementwise), in ``input``'s float dtype, as
    ``torch.poisson``.

    >>> import duograd as dg
    >>> dg.poisson(dg.tensor([0.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson: expected a Tensor, got {type(input).__name__}")
    _check_float(input, "poisson", "poisson_cpu")
    lam = input._data
    if not np.all(lam >= 0):
        raise RuntimeError("poisson: invalid Poisson rate, expected rate to be non-negative")
    # NOTE: the rates are an argument of the draw (NumPy's sampler draws as many numbers as
    # each rate needs, so no draw of fixed size can stand in for it), and a dg.compile replay
    # draws with the recorded arguments: the read of the rates is announced (warned).
    if _ctx.on_read:
        _ctx.read(input, "poisson()'s rates")
    out = _draw(_poisson, as_rng(generator=generator), lam, lam.dtype)
    return _made(out, False, None, "poisson")
