"""Linear algebra: ``einsum`` (a row of the op table whose VJP is again an einsum; the rows,
``einsum_p`` and ``pnorm_p``, are in ``duograd/rows/linalg.py`` and re-exported here), the
matrix products torch names (``mm``, ``bmm``, ``mv``, ``dot``, ``outer``, ``addmm``,
``baddbmm``, compositions of ``matmul``) and norms (``vector_norm``, ``matrix_norm``,
``norm``; also reachable as ``dg.linalg.norm``, ``dg.linalg.vector_norm``).

>>> import duograd as dg
>>> a = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dg.einsum("ii->", a).backward()
>>> a.grad.numpy()
array([[1., 0.],
       [0., 1.]])
"""

from __future__ import annotations

import math
import string
from typing import Any, Sequence

import numpy as np

from ._tensor import Tensor, _lift_all
from .ops import abs_p, amax, amin, broadcast_to_p, matmul_p, reshape_p, sum_p
from .shapes import normalize_axes
# The rows, every one re-exported (rows/linalg.py).
from .rows.linalg import (  # noqa: F401
    eye_of_p, einsum_p, pnorm_p,
    _Multilinear)

_LETTERS = string.ascii_letters

# ====================================================================== einsum


def _parse(equation: str, shapes: Sequence[tuple[int, ...]]) -> tuple[tuple[str, ...], str]:
    """``equation`` with each ``...`` spelled out in fresh letters and the output explicit
    (implicit: the ellipsis, then each letter used once, in ASCII order, as torch)."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise RuntimeError(f"einsum(): more than one '->' in equation {equation!r}")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(f"einsum(): the equation {equation!r} has {len(terms)} operands but "
                           f"{len(shapes)} were given (shapes {list(shapes)})")
    for part in terms + [rhs]:
        rest = part.replace("...", "", 1)
        if any(c not in _LETTERS for c in rest):
            raise RuntimeError(f"einsum(): invalid subscript in {part!r} of equation {equation!r}")
    ell = 0
    for term, shape in zip(terms, shapes):
        n = len(term.replace("...", ""))
        if ("..." in term and n > len(shape)) or ("..." not in term and n != len(shape)):
            raise RuntimeError(f"einsum(): the subscripts {term!r} do not fit an operand of "
                               f"shape {tuple(shape)} in equation {equation!r}")
        if "..." in term:
            ell = max(ell, len(shape) - n)
    used = set(eq)
    fresh = "".join([c for c in _LETTERS if c not in used][:ell])
    subs = tuple(t.replace("...", fresh[ell - (len(sh) - len(t.replace("...", ""))):] if ell else "")
                 for t, sh in zip(terms, shapes))
    if arrow:
        out = rhs.replace("...", fresh)
        letters = set("".join(subs))
        for c in out:
            if c not in letters or out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c!r} of equation {equation!r} "
                                   "appears more than once or in no operand")
    else:
        counts: dict[str, int] = {}
        for c in lhs.replace("...", "").replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = fresh + "".join(sorted(c for c, k in counts.items() if k == 1))
    return subs, out


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation as torch.einsum: any equation, ``...`` and implicit outputs.

    The VJP of each operand is another einsum (of the cotangent with the other operands),
    so derivatives of every order are einsums too.

    >>> import duograd as dg
    >>> dg.einsum("ij,jk->ik", dg.ones((2, 3)), dg.ones((3, 4))).shape
    (2, 4)
    >>> dg.einsum("...i,...i", dg.ones((5, 3)), dg.ones(3)).shape
    (5,)
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a str, got {type(equation).__name__}")
    xs = _lift_all("einsum", tuple(operands))
    subs, out = _parse(equation, [x.shape for x in xs])
    sizes: dict[str, int] = {}
    for term, x in zip(subs, xs):
        for c, n in zip(term, x.shape):
            if term.count(c) > 1 and x.shape[term.index(c)] != n:
                raise RuntimeError(f"einsum(): subscript {c!r} is repeated in {term!r} for axes "
                                   f"of different sizes (shape {x.shape})")
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise RuntimeError(f"einsum(): subscript {c!r} has size {sizes[c]} and {n} in "
                                   f"equation {equation!r} (shapes {[x.shape for x in xs]})")
            if n != 1 or c not in sizes:
                sizes[c] = n
    return einsum_p(*xs, subs=subs, to=out)

# ====================================================================== matrix products


def _need(op: str, x: Tensor, nd: int, what: str) -> None:
    if x.ndim != nd:
        raise RuntimeError(f"{op}: {what} must be {nd}-D, got shape {x.shape}")


def mm(x: Any, y: Any) -> Tensor:
    """The product of two matrices (no broadcasting).

    >>> import duograd as dg
    >>> dg.mm(dg.ones((2, 3)), dg.ones((3, 4))).shape
    (2, 4)
    """
    x, y = _lift_all("mm", (x, y), "matmul")
    _need("mm", x, 2, "self")
    _need("mm", y, 2, "mat2")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mm: shapes {x.shape} and {y.shape} cannot be multiplied")
    return matmul_p(x, y)


def bmm(x: Any, y: Any) -> Tensor:
    """Batched matrix products: (b, n, m) @ (b, m, p) -> (b, n, p), no broadcasting.

    >>> import duograd as dg
    >>> dg.bmm(dg.ones((5, 2, 3)), dg.ones((5, 3, 4))).shape
    (5, 2, 4)
    """
    x, y = _lift_all("bmm", (x, y), "matmul")
    _need("bmm", x, 3, "batch1")
    _need("bmm", y, 3, "batch2")
    if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
        raise RuntimeError(f"bmm: shapes {x.shape} and {y.shape} cannot be multiplied batch by batch")
    return matmul_p(x, y)


def mv(x: Any, v: Any) -> Tensor:
    """A matrix times a vector.

    >>> import duograd as dg
    >>> dg.mv(dg.ones((2, 3)), dg.ones(3)).numpy()
    array([3., 3.])
    """
    x, v = _lift_all("mv", (x, v), "matmul")
    _need("mv", x, 2, "self")
    _need("mv", v, 1, "vec")
    if x.shape[1] != v.shape[0]:
        raise RuntimeError(f"mv: shapes {x.shape} and {v.shape} cannot be multiplied")
    return matmul_p(x, v)


def dot(x: Any, y: Any) -> Tensor:
    """The inner product of two vectors of one length.

    >>> import duograd as dg
    >>> float(dg.dot(dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0])))
    11.0
    """
    x, y = _lift_all("dot", (x, y), "matmul")
    _need("dot", x, 1, "self")
    _need("dot", y, 1, "tensor")
    if x.shape != y.shape:
        raise RuntimeError(f"dot: vectors of shapes {x.shape} and {y.shape} differ in length")
    return matmul_p(x, y)


def outer(x: Any, y: Any) -> Tensor:
    """The outer product of two vectors: ``out[i, j] = x[i] * y[j]``.

    >>> import duograd as dg
    >>> dg.outer(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 10.0])).numpy()
    array([[ 1., 10.],
           [ 2., 20.]])
    """
    x, y = _lift_all("outer", (x, y))
    _need("outer", x, 1, "self")
    _need("outer", y, 1, "vec2")
    return reshape_p(x, shape=(x.shape[0], 1)) * y


def _add_scaled(op: str, inp: Any, prod: Tensor, beta: float, alpha: float) -> Tensor:
    inp = _lift_all(op, (inp,))[0]
    try:
        shape = np.broadcast_shapes(inp.shape, prod.shape)
    except ValueError:
        shape = None
    if shape != prod.shape:
        raise RuntimeError(f"{op}: input of shape {inp.shape} does not broadcast to the "
                           f"product's shape {prod.shape}")
    out = prod if alpha == 1 else prod * alpha
    # NOTE: beta = 0 ignores input entirely (nan and inf in it do not propagate), as torch.
    if beta == 0:
        return broadcast_to_p(out, shape=prod.shape)
    return out + (inp if beta == 1 else inp * beta)


def addmm(input: Any, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``.

    >>> import duograd as dg
    >>> dg.addmm(dg.ones(2), dg.ones((3, 4)), dg.ones((4, 2)), alpha=0.5).numpy()[0]
    array([3., 3.])
    """
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> import duograd as dg
    >>> dg.baddbmm(dg.zeros((2, 3, 4)), dg.ones((2, 3, 5)), dg.ones((2, 5, 4))).shape
    (2, 3, 4)
    """
    return _add_scaled("baddbmm", input, bmm(batch1, batch2), beta, alpha)

# ====================================================================== norms


def _check_float(x: Tensor, op: str) -> None:
    if x.dtype.kind != "f":
        raise RuntimeError(f"{op}: expected a floating point tensor, got {x.dtype} of shape {x.shape}")


def vector_norm(x: Any, ord: float = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all of x by default); ``ord`` may be inf,
    -inf (largest, smallest |x|) or 0 (the number of nonzeros).

    >>> import duograd as dg
    >>> float(dg.linalg.vector_norm(dg.tensor([3.0, -4.0])))
    5.0
    """
    x = _lift_all("linalg.vector_norm", (x,))[0]
    if dtype is not None:
        x = x.astype(dtype)
    _check_float(x, "linalg.vector_norm")
    if isinstance(ord, str):
        raise TypeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    axes = normalize_axes(dim, x.ndim, "linalg.vector_norm", x.shape)
    keepdim = bool(keepdim)
    if ord in (math.inf, -math.inf):
        if any(x.shape[a] == 0 for a in axes):
            raise RuntimeError(f"linalg.vector_norm: cannot take the inf norm of an empty tensor "
                               f"(shape {x.shape})")
        # NOTE: ties share the gradient evenly (amax/amin's rule, torch's), abs'(0) = 0.
        return (amax if ord > 0 else amin)(abs_p(x), axes, keepdim)
    if ord == 1:
        return sum_p(abs_p(x), axis=axes, keepdims=keepdim)
    return pnorm_p(x, ord=float(ord), axis=axes, keepdims=keepdim)


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,  # noqa: A002,N803
                dtype: Any = None) -> Tensor:
    """The Frobenius norm, or the largest (smallest) absolute column sum (ord 1, -1) or row
    sum (inf, -inf), over the two axes ``dim``. The spectral and nuclear norms are not here.

    >>> import duograd as dg
    >>> float(dg.linalg.matrix_norm(dg.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1))
    6.0
    """
    A = _lift_all("linalg.matrix_norm", (A,))[0]  # noqa: N806
    if dtype is not None:
        A = A.astype(dtype)  # noqa: N806
    _check_float(A, "linalg.matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: needs at least 2 dimensions, got shape {A.shape}")
    d = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(d) != 2 or len(set(normalize_axes(d, A.ndim, "linalg.matrix_norm", A.shape))) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must name 2 distinct axes, got {dim!r}")
    if ord == "fro":
        return vector_norm(A, 2, d, keepdim)
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} needs singular values, which "
                                  "duograd does not compute")
    d = tuple(a % A.ndim for a in d)  # in the order given: ord 1 sums over d[0], inf over d[1]
    if ord in (1, -1, math.inf, -math.inf):
        across, along = (d[0], d[1]) if ord in (1, -1) else (d[1], d[0])
        sums = sum_p(abs_p(A), axis=(across,), keepdims=True)
        out = (amax if ord > 0 else amin)(sums, (along,), True)
        return out if keepdim else reshape_p(out, shape=tuple(n for i, n in enumerate(A.shape) if i not in d))
    raise RuntimeError(f"linalg.matrix_norm: unsupported ord {ord!r}")


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *,  # noqa: A002,N803
         dtype: Any = None) -> Tensor:
    """torch.linalg.norm: a vector norm over one axis (or all of a 1-D input), a matrix norm
    over two; with ``ord=None`` the 2-norm of everything (or Frobenius over two axes).

    >>> import duograd as dg
    >>> float(dg.linalg.norm(dg.tensor([[3.0, 0.0], [0.0, 4.0]])))
    5.0
    """
    A = _lift_all("linalg.norm", (A,))[0]  # noqa: N806
    if dim is not None:
        dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: with ord given and dim=None the input must be 1-D "
                               f"or 2-D, got shape {A.shape}")
        dim = tuple(range(A.ndim))
    if len(dim) == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.norm: ord={ord!r} is a matrix norm; a vector norm over one "
                               f"axis needs a number (input shape {A.shape})")
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: dim must name 1 or 2 axes, got {dim!r}")


def tensor_norm(x: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """torch.norm and Tensor.norm: ``p="fro"`` (default) and any number give a vector norm
    over ``dim`` (every axis by default); ``"nuc"`` is not here.

    >>> import duograd as dg
    >>> float(dg.norm(dg.tensor([3.0, 4.0])))
    5.0
    >>> dg.norm(dg.ones((2, 3)), p=1, dim=1).numpy()
    array([3., 3.])
    """
    x = _lift_all("norm", (x,))[0]
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    if isinstance(p, str):
        if p == "fro":
            return vector_norm(x, 2, dim, keepdim, dtype=dtype)
        if p == "nuc":
            raise NotImplementedError("norm: p='nuc' needs singular values, which duograd does not compute")
        raise RuntimeError(f"norm: unknown p {p!r}")
    return vector_norm(x, 2 if p is None else p, dim, keepdim, dtype=dtype)


__all__ = ["einsum", "mm", "bmm", "mv", "dot", "outer", "addmm", "baddbmm", "vector_norm",
           "matrix_norm", "norm"]
