"""``torch.linalg``'s decompositions and solvers, and their ``torch.*`` and Tensor twins.

Each function checks its input as torch does (batches of square matrices, a float dtype)
and computes with primitives whose VJP and JVP are written in Tensor algebra, so that
every gradient differentiates again: ``det``, ``slogdet``, ``inv``, ``solve``,
``cholesky``, ``qr``, ``eigh``, ``svdvals``, ``matrix_exp`` call rows (``det_p``,
``qr_p``, ``eigh_p``, ``svd_p``, ``matrix_exp_p`` are in ``duograd/rows/linalg.py`` and
re-exported here; the solves, Cholesky and the inverse are the rows of
``rows/distributions.py`` and ``rows/tensor_api.py``, reused); ``pinv``, ``matrix_power``,
``multi_dot``, ``vecdot``, ``vander``, ``tensorinv``, ``tensorsolve``, ``cond`` are
compositions. ``matrix_rank`` is a count without history, as torch's.

The functions torch 2.13 has removed (``torch.solve``, ``torch.eig``, ``torch.symeig``,
``torch.lstsq``, ``torch.matrix_rank``) raise torch's ``RuntimeError`` naming their
replacement.

>>> import duograd as dg
>>> a = dg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> dg.linalg.det(a).backward()
>>> a.grad.numpy()
array([[ 3., -1.],
       [-1.,  2.]])
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import ops
from ._tensor import Tensor, _as_tensor, _wrap
from .shapes import dim_index
from .indexing import tril as _tril
from .distributions._ops import cholesky_p, solve_p, trisolve_p
from .tensor_api import _inverse_p, _out, cross as _cross
# The rows, every one re-exported (rows/linalg.py).
from .rows.linalg import det_p, detsign_p, eigh_p, logabsdet_p, matrix_exp_p, qr_p, svd_p  # noqa: F401

_int = builtins.int


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix that is singular or not positive-definite."""


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-1, -2)


def _sq(A: Any, op: str) -> Tensor:  # noqa: N803
    """``A`` as a batch of square float matrices, or torch's errors."""
    a = A if isinstance(A, Tensor) else _as_tensor(A, op=op)
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    _floating(a, op)
    return a


def _mat(A: Any, op: str) -> Tensor:  # noqa: N803
    a = A if isinstance(A, Tensor) else _as_tensor(A, op=op)
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    _floating(a, op)
    return a


def _floating(a: Tensor, op: str) -> None:
    if a.dtype.kind != "f":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {a.dtype}")


# ====================================================================== det, slogdet, inv


class _TriSolve(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class InvExResult(NamedTuple):
    inverse: Tensor
    info: Tensor


class CholeskyExResult(NamedTuple):
    L: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    result: Tensor
    info: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class TorchSVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


SlogdetResult.__name__ = SlogdetResult.__qualname__ = "linalg_slogdet"

InvExResult.__name__ = InvExResult.__qualname__ = "linalg_inv_ex"

CholeskyExResult.__name__ = CholeskyExResult.__qualname__ = "linalg_cholesky_ex"

SolveExResult.__name__ = SolveExResult.__qualname__ = "linalg_solve_ex"

QRResult.__name__ = QRResult.__qualname__ = "linalg_qr"

EighResult.__name__ = EighResult.__qualname__ = "linalg_eigh"

SVDResult.__name__ = SVDResult.__qualname__ = "linalg_svd"

TorchSVDResult.__name__ = TorchSVDResult.__qualname__ = "svd"

_TriSolve.__name__ = _TriSolve.__qualname__ = "triangular_solve"


class _TorchSlogdet(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class _TorchQR(NamedTuple):
    Q: Tensor
    R: Tensor


_TorchSlogdet.__name__ = _TorchSlogdet.__qualname__ = "slogdet"
_TorchQR.__name__ = _TorchQR.__qualname__ = "qr"


def det(A: Any, *, out: Any = None) -> Tensor:  # noqa: N803
    """The determinant of a square matrix or a batch of them, as ``torch.linalg.det``.

    >>> import duograd as dg
    >>> float(dg.linalg.det(dg.tensor([[1.0, 2.0], [3.0, 4.0]])))
    -2.0000000000000004
    """
    return _out(det_p(_sq(A, "linalg.det")), out, "linalg.det")


def slogdet(A: Any, *, out: Any = None) -> SlogdetResult:  # noqa: N803
    """(sign, log |det|) of a square matrix or a batch, as ``torch.linalg.slogdet``.

    >>> import duograd as dg
    >>> s, l = dg.linalg.slogdet(dg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> float(s), round(float(l), 6)
    (-1.0, 0.693147)
    """
    a = _sq(A, "linalg.slogdet")
    logabs = logabsdet_p(a)
    sign = detsign_p(a)
    if logabs.requires_grad:  # torch's sign has a (zero) gradient too
        sign = sign + ops.where_p(ops.equal_p(sign, 0.0), 0.0, logabs) * 0.0
    return _out(SlogdetResult(sign, logabs), out, "linalg.slogdet")


def torch_slogdet(input: Any, *, out: Any = None) -> Any:  # noqa: A002
    """``torch.slogdet``: ``linalg.slogdet`` (its result type named ``slogdet``).

    >>> import duograd as dg
    >>> dg.slogdet(dg.eye(2)).sign.tolist()
    1.0
    """
    return _out(_TorchSlogdet(*slogdet(input)), out, "slogdet")


def _check_invertible(a: Tensor, op: str) -> None:
    if a._data.size and np.any(np.linalg.matrix_rank(a._data) < a.shape[-1]):
        raise LinAlgError(f"{op}: The diagonal element {a.shape[-1]} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")


def inv(A: Any, *, out: Any = None) -> Tensor:  # noqa: N803
    """The inverse of a square matrix or a batch, as ``torch.linalg.inv`` (``LinAlgError``,
    a ``RuntimeError``, for a singular one).

    >>> import duograd as dg
    >>> dg.linalg.inv(dg.tensor([[2.0, 0.0], [0.0, 4.0]])).numpy()
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    a = _sq(A, "linalg.inv")
    _check_invertible(a, "linalg.inv")
    return _out(_inverse_p(a), out, "linalg.inv")


def inv_ex(A: Any, *, check_errors: bool = False, out: Any = None) -> InvExResult:  # noqa: N803
    """(inverse, info) as ``torch.linalg.inv_ex`` (info 0 where the matrix is invertible).

    >>> import duograd as dg
    >>> dg.linalg.inv_ex(dg.eye(2)).info.tolist()
    0
    """
    a = _sq(A, "linalg.inv_ex")
    if check_errors:
        _check_invertible(a, "linalg.inv_ex")
    info = np.zeros(a.shape[:-2], np.int32)
    if a._data.size:
        info = np.where(np.linalg.matrix_rank(a._data) < a.shape[-1], a.shape[-1], 0).astype(np.int32)
    return _out(InvExResult(_inverse_p(a), _wrap(info)), out, "linalg.inv_ex")


def inverse(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.inverse``: ``linalg.inv``.

    >>> import duograd as dg
    >>> dg.inverse(dg.tensor([[4.0]])).tolist()
    [[0.25]]
    """
    return _out(inv(input), out, "inverse")


# ====================================================================== solve


def _vector_rhs(a: Tensor, b: Tensor, left: bool) -> bool:
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def solve(A: Any, B: Any, *, left: bool = True, out: Any = None) -> Tensor:  # noqa: N803
    """X with A X = B (``left=False``: X A = B), batched and broadcast, as ``torch.linalg.solve``;
    a vector B (shape ``A.shape[:-1]``) gives a vector X.

    >>> import duograd as dg
    >>> dg.linalg.solve(dg.tensor([[2.0, 0.0], [0.0, 4.0]]), dg.tensor([2.0, 2.0])).numpy()
    array([1. , 0.5])
    """
    a = _sq(A, "linalg.solve")
    b = B if isinstance(B, Tensor) else _as_tensor(B, op="linalg.solve")
    _floating(b, "linalg.solve")
    if b.dtype != a.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{a.dtype} and B of type {b.dtype} instead")
    if not left:
        return _out(_mT(solve(_mT(a), _mT(b))), out, "linalg.solve")
    vec = _vector_rhs(a, b, left)
    bm = ops.unsqueeze(b, -1) if vec else b
    if bm.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a.shape[-2]}x{a.shape[-1]} and {bm.shape[-2]}x{bm.shape[-1]})")
    _check_invertible(a, "linalg.solve")
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    x = solve_p(a.expand(*batch, *a.shape[-2:]), bm.expand(*batch, *bm.shape[-2:]))
    return _out(ops.squeeze(x, -1) if vec else x, out, "linalg.solve")


def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False,  # noqa: N803
             out: Any = None) -> SolveExResult:
    """(result, info) as ``torch.linalg.solve_ex``.

    >>> import duograd as dg
    >>> dg.linalg.solve_ex(dg.eye(2), dg.ones(2)).result.tolist()
    [1.0, 1.0]
    """
    x = solve(A, B, left=left)
    a = _sq(A, "linalg.solve_ex")
    return _out(SolveExResult(x, _wrap(np.zeros(a.shape[:-2], np.int32))), out, "linalg.solve_ex")


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False, out: Any = None) -> Tensor:
    """X with A X = B for triangular A (only its triangle read), as
    ``torch.linalg.solve_triangular``.

    >>> import duograd as dg
    >>> dg.linalg.solve_triangular(dg.tensor([[2.0, 9.0], [1.0, 1.0]]), dg.tensor([[2.0], [2.0]]),
    ...                            upper=False).numpy()
    array([[1.],
           [1.]])
    """
    a = _sq(A, "linalg.solve_triangular")
    b = _mat(B, "linalg.solve_triangular")
    if not left:
        return _out(_mT(solve_triangular(_mT(a), _mT(b), upper=not upper, unitriangular=unitriangular)),
                    out, "linalg.solve_triangular")
    if unitriangular:
        n = a.shape[-1]
        eye = np.eye(n, dtype=a.dtype)
        a = a * (1 - eye) + eye
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = trisolve_p(a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:]), upper=upper)
    return _out(x, out, "linalg.solve_triangular")


def triangular_solve(b: Any, A: Any, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False, *, out: Any = None) -> Any:
    """``torch.triangular_solve``: (solution, cloned_coefficient) of A X = b.

    >>> import duograd as dg
    >>> dg.triangular_solve(dg.tensor([[2.0], [2.0]]), dg.tensor([[2.0, 0.0], [0.0, 1.0]])).solution.tolist()
    [[1.0], [2.0]]
    """
    a = _sq(A, "triangular_solve")
    am = _mT(a) if transpose else a
    x = solve_triangular(am, b, upper=upper != transpose, unitriangular=unitriangular)
    return _out(_TriSolve(x, a.clone()), out, "triangular_solve")


# ====================================================================== cholesky


def _pd_check(a: Tensor, op: str) -> None:
    d = a._data
    if not d.size:
        return
    try:
        np.linalg.cholesky(d)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"{op}: The factorization could not be completed because the input is not "
                          "positive-definite.") from None


def cholesky(A: Any, *, upper: bool = False, out: Any = None) -> Tensor:  # noqa: N803
    """The Cholesky factor L (A = L L^T; ``upper=True``: U = L^T) of a symmetric
    positive-definite matrix or batch, as ``torch.linalg.cholesky`` (only the lower triangle is
    read; ``LinAlgError`` when A is not positive-definite).

    >>> import duograd as dg
    >>> dg.linalg.cholesky(dg.tensor([[4.0, 2.0], [2.0, 5.0]])).numpy()
    array([[2., 0.],
           [1., 2.]])
    """
    a = _sq(A, "linalg.cholesky")
    a = _tril(a) + _mT(_tril(a, -1))  # only the lower triangle is read
    _pd_check(a, "linalg.cholesky")
    if not a._data.size:
        return _out(a * 0, out, "linalg.cholesky")
    L = cholesky_p(a)  # noqa: N806
    return _out(_mT(L) if upper else L, out, "linalg.cholesky")


def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False,  # noqa: N803
                out: Any = None) -> CholeskyExResult:
    """(L, info) as ``torch.linalg.cholesky_ex``.

    >>> import duograd as dg
    >>> dg.linalg.cholesky_ex(dg.eye(2)).info.tolist()
    0
    """
    L = cholesky(A, upper=upper)  # noqa: N806
    return _out(CholeskyExResult(L, _wrap(np.zeros(L.shape[:-2], np.int32))), out, "linalg.cholesky_ex")


def cholesky_legacy(input: Any, upper: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.cholesky(input, upper=False)``.

    >>> import duograd as dg
    >>> dg.cholesky(dg.tensor([[4.0]])).tolist()
    [[2.0]]
    """
    return _out(cholesky(input, upper=upper), out, "cholesky")


def cholesky_solve(B: Any, L: Any, upper: bool = False, *, out: Any = None) -> Tensor:  # noqa: N803
    """X with A X = B given A's Cholesky factor, as ``torch.cholesky_solve``.

    >>> import duograd as dg
    >>> dg.cholesky_solve(dg.tensor([[8.0]]), dg.tensor([[2.0]])).tolist()
    [[2.0]]
    """
    lf = _sq(L, "cholesky_solve")
    low = _mT(lf) if upper else lf
    y = solve_triangular(low, B, upper=False)
    return _out(solve_triangular(_mT(low), y, upper=True), out, "cholesky_solve")


def cholesky_inverse(L: Any, upper: bool = False, *, out: Any = None) -> Tensor:  # noqa: N803
    """inv(A) given A's Cholesky factor, as ``torch.cholesky_inverse``.

    >>> import duograd as dg
    >>> dg.cholesky_inverse(dg.tensor([[2.0]])).tolist()
    [[0.25]]
    """
    lf = _sq(L, "cholesky_inverse")
    eye = _wrap(np.broadcast_to(np.eye(lf.shape[-1], dtype=lf.dtype), lf.shape).copy())
    return _out(cholesky_solve(eye, lf, upper), out, "cholesky_inverse")


# ====================================================================== qr


def qr(A: Any, mode: str = "reduced", *, out: Any = None) -> QRResult:  # noqa: N803
    """(Q, R) with A = QR, as ``torch.linalg.qr`` (``mode`` "reduced", "complete" or "r").
    Differentiable for "reduced" when the rows are at least the columns (as torch).

    >>> import duograd as dg
    >>> q, r = dg.linalg.qr(dg.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> r.numpy().round(4)
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    a = _mat(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    r = qr_p(a, which=1, mode=mode)
    q = _wrap(np.zeros((0,), a.dtype)) if mode == "r" else qr_p(a, which=0, mode=mode)
    return _out(QRResult(q, r), out, "linalg.qr")


def qr_legacy(input: Any, some: bool = True, *, out: Any = None) -> QRResult:  # noqa: A002
    """``torch.qr(input, some=True)``: ``linalg.qr`` with mode "reduced" or "complete".

    >>> import duograd as dg
    >>> dg.qr(dg.eye(2)).R.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _out(_TorchQR(*qr(input, "reduced" if some else "complete")), out, "qr")


# ====================================================================== eigh, svd


def eigh(A: Any, UPLO: str = "L", *, out: Any = None) -> EighResult:  # noqa: N803
    """(eigenvalues ascending, eigenvectors) of a symmetric matrix or batch (only the ``UPLO``
    triangle read), as ``torch.linalg.eigh``; differentiable (distinct eigenvalues).

    >>> import duograd as dg
    >>> dg.linalg.eigh(dg.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues.numpy()
    array([1., 3.])
    """
    a = _sq(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _out(EighResult(eigh_p(a, which=0, uplo=UPLO), eigh_p(a, which=1, uplo=UPLO)), out, "linalg.eigh")


def eigvalsh(A: Any, UPLO: str = "L", *, out: Any = None) -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric matrix (ascending), as ``torch.linalg.eigvalsh``.

    >>> import duograd as dg
    >>> dg.linalg.eigvalsh(dg.tensor([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    return _out(eigh(A, UPLO).eigenvalues, out, "linalg.eigvalsh")


def svd(A: Any, full_matrices: bool = True, *, driver: Any = None, out: Any = None) -> SVDResult:  # noqa: N803
    """(U, S, Vh) with A = U diag(S) Vh, as ``torch.linalg.svd``; differentiable with
    ``full_matrices=False`` (distinct singular values; the gradient of U and Vh is defined
    up to their signs, which the loss must not depend on, as in torch).

    >>> import duograd as dg
    >>> dg.linalg.svd(dg.tensor([[3.0, 0.0], [0.0, -2.0]])).S.tolist()
    [3.0, 2.0]
    """
    a = _mat(A, "linalg.svd")
    res = SVDResult(*(svd_p(a, which=i, full=full_matrices) for i in range(3)))
    return _out(res, out, "linalg.svd")


def svdvals(A: Any, *, driver: Any = None, out: Any = None) -> Tensor:  # noqa: N803
    """The singular values, descending, as ``torch.linalg.svdvals``; gradient U diag(g) Vh.

    >>> import duograd as dg
    >>> dg.linalg.svdvals(dg.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    return _out(svd_p(_mat(A, "linalg.svdvals"), which=1, full=False), out, "linalg.svdvals")


def svd_legacy(input: Any, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> TorchSVDResult:  # noqa: A002
    """``torch.svd``: (U, S, V) (V, not Vh), reduced when ``some``.

    >>> import duograd as dg
    >>> dg.svd(dg.eye(2)).S.tolist()
    [1.0, 1.0]
    """
    a = _mat(input, "svd")
    u, s, vh = svd(a, full_matrices=not some)
    if not compute_uv:
        u, vh = u * 0, vh * 0
    return _out(TorchSVDResult(u, s, _mT(vh)), out, "svd")


# ====================================================================== compositions


def pinv(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,  # noqa: N803
         out: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, as ``torch.linalg.pinv``, composed of the SVD:
    V diag(1/s) U^T over the singular values above the tolerance (torch's: ``max(atol, rtol *
    s_max)``, rtol ``eps * max(m, n)`` when neither is given).

    >>> import duograd as dg
    >>> dg.linalg.pinv(dg.tensor([[2.0, 0.0], [0.0, 0.0]])).numpy()
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    a = _mat(A, "linalg.pinv")
    m, n = a.shape[-2], a.shape[-1]
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(m, n) if atol is None or atol == 0 else 0.0
    atol = 0.0 if atol is None else atol
    if a._data.size == 0:
        return _out(_wrap(np.zeros(a.shape[:-2] + (n, m), a.dtype)), out, "linalg.pinv")
    u, s, vh = svd(a, full_matrices=False)
    smax = ops.amax(s, -1, keepdim=True)
    tol = smax * rtol
    if not (isinstance(atol, (int, float)) and atol == 0):
        tol = ops.maximum_p(tol, atol)
    keep = ops.greater_p(s, tol)
    safe = ops.where_p(keep, s, 1.0)
    sinv = ops.where_p(keep, 1 / safe, 0.0)
    return _out(_mT(vh) @ (ops.unsqueeze(sinv, -1) * _mT(u)), out, "linalg.pinv")


def pinverse(input: Any, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``.

    >>> import duograd as dg
    >>> dg.pinverse(dg.tensor([[4.0]])).tolist()
    [[0.25]]
    """
    return pinv(input, rtol=rcond)


def matrix_power(A: Any, n: _int, *, out: Any = None) -> Tensor:  # noqa: N803
    """A to the integer power n by repeated squaring (n < 0: of the inverse; n = 0: the
    identity), as ``torch.linalg.matrix_power``.

    >>> import duograd as dg
    >>> dg.linalg.matrix_power(dg.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).numpy()
    array([[1., 3.],
           [0., 1.]])
    """
    a = A if isinstance(A, Tensor) else _as_tensor(A, op="linalg.matrix_power")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{a.shape[-2] if a.ndim > 1 else a.ndim} by {a.shape[-1] if a.ndim else 0} matrices")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
        return _out(_wrap(eye) + a * 0 if a.requires_grad else _wrap(eye), out, "linalg.matrix_power")
    if n < 0:
        a = inv(a)
        n = -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _out(result, out, "linalg.matrix_power")


def _matrix_power_method(input: Any, n: _int) -> Tensor:  # noqa: A002
    """``torch.matrix_power(input, n)`` and ``Tensor.matrix_power``: ``linalg.matrix_power``.

    >>> import duograd as dg
    >>> dg.matrix_power(dg.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    return matrix_power(input, n)


def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,  # noqa: N803
                out: Any = None) -> Tensor:
    """The number of singular values above the tolerance (int64, no history), as
    ``torch.linalg.matrix_rank``.

    >>> import duograd as dg
    >>> dg.linalg.matrix_rank(dg.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    a = _mat(A, "linalg.matrix_rank")
    m, n = a.shape[-2], a.shape[-1]
    if a._data.size == 0:
        return _out(_wrap(np.zeros(a.shape[:-2], np.int64)), out, "linalg.matrix_rank")
    s = np.linalg.svd(a._data, compute_uv=False)
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(m, n) if atol is None or atol == 0 else 0.0
    rtol = rtol._data if isinstance(rtol, Tensor) else rtol
    atol = 0.0 if atol is None else (atol._data if isinstance(atol, Tensor) else atol)
    tol = np.maximum(atol, rtol * s.max(-1, keepdims=True))
    return _out(_wrap((s > tol).sum(-1).astype(np.int64)), out, "linalg.matrix_rank")


def cond(A: Any, p: Any = None, *, out: Any = None) -> Tensor:  # noqa: N803
    """The condition number in the norm ``p`` (None or 2: s_max / s_min), as ``torch.linalg.cond``.

    >>> import duograd as dg
    >>> float(dg.linalg.cond(dg.tensor([[4.0, 0.0], [0.0, 2.0]])))
    2.0
    """
    from .linalg import matrix_norm  # noqa: PLC0415
    a = _mat(A, "linalg.cond")
    if p is None or p == 2 or p == -2:
        s = svdvals(a)
        r = s[..., 0] / s[..., -1]
        return _out(r if p != -2 else 1 / r, out, "linalg.cond")
    a = _sq(a, "linalg.cond")
    return _out(matrix_norm(a, p) * matrix_norm(inv(a), p), out, "linalg.cond")


def multi_dot(tensors: Sequence[Any], *, out: Any = None) -> Tensor:
    """The product of two or more matrices left to right (the first may be a vector, as may
    the last), as ``torch.linalg.multi_dot``.

    >>> import duograd as dg
    >>> dg.linalg.multi_dot([dg.ones(2), dg.eye(2), dg.ones(2)]).tolist()
    2.0
    """
    ts = [t if isinstance(t, Tensor) else _as_tensor(t, op="linalg.multi_dot") for t in tensors]
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(ts) - 1))
        if not ok:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D{' or 1D' if i in (0, len(ts) - 1) else ''}"
                               f" but got {t.ndim}D")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    ms = list(ts)
    if first_vec:
        ms[0] = ops.unsqueeze(ms[0], 0)
    if last_vec:
        ms[-1] = ops.unsqueeze(ms[-1], -1)
    r = ms[0]
    for m in ms[1:]:
        if r.shape[-1] != m.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors cannot be multiplied ({r.shape[0]}x{r.shape[1]} and "
                               f"{m.shape[0]}x{m.shape[1]})")
        r = r @ m
    if last_vec:
        r = ops.squeeze(r, -1)
    if first_vec:
        r = ops.squeeze(r, 0)
    return _out(r, out, "linalg.multi_dot")


def chain_matmul(*matrices: Any, out: Any = None) -> Tensor:
    """``torch.chain_matmul``: the product of 2-D matrices (``linalg.multi_dot``).

    >>> import duograd as dg
    >>> dg.chain_matmul(dg.eye(2), dg.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if len(matrices) == 1:
        return matrices[0].clone()
    return _out(multi_dot(list(matrices)), out, "chain_matmul")


def vecdot(x: Any, y: Any, *, dim: _int = -1, out: Any = None) -> Tensor:
    """The dot product of x and y along ``dim`` (broadcast), as ``torch.linalg.vecdot``.

    >>> import duograd as dg
    >>> dg.linalg.vecdot(dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0])).tolist()
    11.0
    """
    x = x if isinstance(x, Tensor) else _as_tensor(x, op="linalg.vecdot")
    return _out(ops.sum(x * y, dim), out, "linalg.vecdot")


def linalg_cross(input: Any, other: Any, *, dim: _int = -1, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.linalg.cross``: the cross product along ``dim`` (default -1; both of size 3).

    >>> import duograd as dg
    >>> dg.linalg.cross(dg.tensor([1.0, 0.0, 0.0]), dg.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    a = input if isinstance(input, Tensor) else _as_tensor(input, op="linalg.cross")
    b = other if isinstance(other, Tensor) else _as_tensor(other, op="linalg.cross")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(f"linalg.cross: inputs of shapes {list(a.shape)} and {list(b.shape)} do not "
                           "broadcast") from None
    return _cross(a.expand(*shape), b.expand(*shape), dim, out=out)


def linalg_matmul(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``torch.linalg.matmul``: ``torch.matmul``.

    >>> import duograd as dg
    >>> dg.linalg.matmul(dg.eye(2), dg.ones(2)).tolist()
    [1.0, 1.0]
    """
    from .tensor_api import matmul  # noqa: PLC0415
    return matmul(input, other, out=out)


def linalg_diagonal(A: Any, *, offset: _int = 0, dim1: _int = -2, dim2: _int = -1) -> Tensor:  # noqa: N803
    """``torch.linalg.diagonal``: ``torch.diagonal`` with the last two dims by default.

    >>> import duograd as dg
    >>> dg.linalg.diagonal(dg.eye(2)).tolist()
    [1.0, 1.0]
    """
    from .indexing import diagonal  # noqa: PLC0415
    return diagonal(A, offset, dim1, dim2)


def vander(x: Any, N: _int | None = None) -> Tensor:  # noqa: N803
    """``torch.linalg.vander``: the powers x^0 ... x^(N-1) along a new last dim.

    >>> import duograd as dg
    >>> dg.linalg.vander(dg.tensor([2.0, 3.0])).tolist()
    [[1.0, 2.0], [1.0, 3.0]]
    """
    x = x if isinstance(x, Tensor) else _as_tensor(x, op="linalg.vander")
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise RuntimeError("linalg.vander: N must be greater than 1.")
    cols = [x * 0 + 1]
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    from .indexing import stack  # noqa: PLC0415
    return stack(cols, -1)


def torch_vander(x: Any, N: _int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """``torch.vander`` (1-D x): decreasing powers unless ``increasing``.

    >>> import duograd as dg
    >>> dg.vander(dg.tensor([2, 3]), N=3).tolist()
    [[4, 2, 1], [9, 3, 1]]
    """
    x = x if isinstance(x, Tensor) else _as_tensor(x, op="vander")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    v = vander(x, x.shape[0] if N is None else builtins.max(N, 1)) if (N is None or N > 0) else \
        _wrap(np.zeros((x.shape[0], 0), x.dtype))
    return v if increasing else v.flip(-1)


def tensorinv(A: Any, ind: _int = 2, *, out: Any = None) -> Tensor:  # noqa: N803
    """``torch.linalg.tensorinv``: the inverse of A as a map from its last dims to its first ``ind``.

    >>> import duograd as dg
    >>> dg.linalg.tensorinv(dg.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = A if isinstance(A, Tensor) else _as_tensor(A, op="linalg.tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    lead, rest = a.shape[:ind], a.shape[ind:]
    p = int(np.prod(lead))
    if p != int(np.prod(rest)):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind])")
    return _out(inv(a.reshape(p, p)).reshape(*rest, *lead), out, "linalg.tensorinv")


def tensorsolve(A: Any, B: Any, dims: Any = None, *, out: Any = None) -> Tensor:  # noqa: N803
    """``torch.linalg.tensorsolve``: X with tensordot(A, X, X.ndim) = B.

    >>> import duograd as dg
    >>> dg.linalg.tensorsolve(dg.eye(4).reshape(2, 2, 4), dg.ones(2, 2)).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    a = A if isinstance(A, Tensor) else _as_tensor(A, op="linalg.tensorsolve")
    b = B if isinstance(B, Tensor) else _as_tensor(B, op="linalg.tensorsolve")
    if dims is not None:
        dims = [dim_index(d, a.ndim, "linalg.tensorsolve", a.shape) for d in dims]
        rest = [d for d in range(a.ndim) if d not in dims]
        a = a.permute(*rest, *dims)
    xshape = a.shape[b.ndim:]
    n = int(np.prod(b.shape))
    return _out(solve(a.reshape(n, int(np.prod(xshape))), b.reshape(n)).reshape(*xshape), out,
                "linalg.tensorsolve")


def matrix_exp(A: Any) -> Tensor:  # noqa: N803
    """The matrix exponential, as ``torch.linalg.matrix_exp``; its VJP is a block matrix
    exponential (differentiable again).

    >>> import duograd as dg
    >>> dg.linalg.matrix_exp(dg.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return matrix_exp_p(_sq(A, "linalg.matrix_exp"))


# ====================================================================== removed in torch 2


def _removed(name: str, instead: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. "
                           f"`torch.{name}` is deprecated in favor of `{instead}`.")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Removed in torch 2 (raises torch's ``RuntimeError``); use ``{instead}``.\n\n"
                  f"    >>> import duograd as dg\n"
                  f"    >>> try:\n    ...     dg.{name}(dg.eye(2))\n"
                  f"    ... except RuntimeError as e:\n    ...     print('removed' in str(e))\n    True\n")
    return fn


removed_solve = _removed("solve", "torch.linalg.solve")
removed_eig = _removed("eig", "torch.linalg.eig")
removed_symeig = _removed("symeig", "torch.linalg.eigh")
removed_lstsq = _removed("lstsq", "torch.linalg.lstsq")
removed_matrix_rank = _removed("matrix_rank", "torch.linalg.matrix_rank")


# the names ``dg.linalg`` gets from this module
LINALG = {
    "det": det, "slogdet": slogdet, "inv": inv, "inv_ex": inv_ex, "solve": solve, "solve_ex": solve_ex,
    "solve_triangular": solve_triangular, "cholesky": cholesky, "cholesky_ex": cholesky_ex, "qr": qr,
    "eigh": eigh, "eigvalsh": eigvalsh, "svd": svd, "svdvals": svdvals, "pinv": pinv,
    "matrix_power": matrix_power, "matrix_rank": matrix_rank, "cond": cond, "multi_dot": multi_dot,
    "vecdot": vecdot, "cross": linalg_cross, "matmul": linalg_matmul, "diagonal": linalg_diagonal,
    "vander": vander, "tensorinv": tensorinv, "tensorsolve": tensorsolve, "matrix_exp": matrix_exp,
    "LinAlgError": LinAlgError,
}
# the names ``dg`` (torch.*) gets
TORCH = {
    "det": det, "slogdet": torch_slogdet, "inverse": inverse, "cholesky": cholesky_legacy,
    "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse, "qr": qr_legacy,
    "svd": svd_legacy, "pinverse": pinverse, "matrix_power": _matrix_power_method, "matrix_exp": matrix_exp,
    "triangular_solve": triangular_solve, "chain_matmul": chain_matmul, "vander": torch_vander,
    "solve": removed_solve, "eig": removed_eig, "symeig": removed_symeig, "lstsq": removed_lstsq,
    "matrix_rank": removed_matrix_rank,
}
# the Tensor methods: name -> function of (self, ...)
METHODS = {
    "det": det, "slogdet": torch_slogdet, "inverse": inverse, "cholesky": cholesky_legacy,
    "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse, "qr": qr_legacy,
    "svd": svd_legacy, "pinverse": pinverse, "matrix_power": _matrix_power_method, "matrix_exp": matrix_exp,
    "triangular_solve": triangular_solve, "solve": removed_solve, "eig": removed_eig,
    "symeig": removed_symeig, "lstsq": removed_lstsq,
}


def install(namespace: dict) -> None:
    """Bind the names above onto ``dg.linalg``, ``dg`` and ``Tensor``."""
    from . import linalg  # noqa: PLC0415
    for n, f in LINALG.items():
        setattr(linalg, n, f)
    for n, f in TORCH.items():
        namespace[n] = f
    for n, f in METHODS.items():
        setattr(Tensor, n, f)
