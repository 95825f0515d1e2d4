"""The op table's rows, by family: every primitive's NumPy forward beside its derivative rules.

A row is one ``Primitive`` (``name_p``): a NumPy forward, one VJP rule per input and its
JVP (``rows/core.py``'s docstring says what a rule may do). The rows sit below the public
layer: the torch-signature functions that normalise torch's arguments and call the rows
are in ``duograd/ops.py`` (and the other public modules), which import from here; no
module of this package imports them (``tests/engine/test_import_graph.py`` checks it).

- ``core``: the core table (selectors, elementwise arithmetic, reductions, shape, indexing,
  joins, matmul and linear); public layer ``ops.py``.
- ``elementwise``: trigonometric, exponential, rounding, tests and logic; ``elementwise.py``
  (isposinf, isneginf, nextafter, gcd, lcm and the shifts: ``more_ops.py``).
- ``indexing``: the gather/scatter pair along an axis, scatter_reduce's rows, nonzero;
  ``indexing.py``.
- ``reductions``: cumprod, prod, logcumsumexp, all/any and the sorting selectors (unique,
  unique_consecutive, the medians' and quantiles' positions); ``reductions.py``.
- ``conv``: im2col/col2im, the pooling windows, pad; ``conv.py``.
- ``linalg``: einsum, the p-norm and the decompositions (det, slogdet, qr, eigh, svd,
  matrix_exp); ``linalg.py`` and ``linalg_more.py``.
- ``distributions``: the gamma family, the solves and Cholesky, the samplers' implicit
  rules; ``distributions/_ops.py``.
- ``special``: the Bessel functions, erfcx, ndtri, log_ndtr, entr, zeta, gammaincc, and the
  selectors of J, Y, K, Airy's Ai and the orthogonal polynomials; ``special.py``.
- ``tensor_api``: signbit, heaviside, fmax/fmin, bincount, histc, searchsorted, the inverse
  and the log-determinant; the selectors of isin, frexp, unravel_index and histogram;
  ``tensor_api.py``.
- ``activations``: gelu (exact and tanh, each with its slope as a row) and hardtanh;
  ``nn/_activations.py``.
- ``inplace``: assign and setitem, the out-of-place rows of the in-place writes;
  ``inplace.py``.
- ``scan``: the recurrences of RNN, LSTM and GRU over a sequence, with their
  back-propagation through time; ``nn/rnn.py``.

Each public module re-exports its family's rows, so ``from duograd.ops import add_p`` and
``duograd.elementwise.tan_p`` keep working; this package re-exports the core table's rows
(a family's rows are read from its module: ``duograd.rows.elementwise.sign_p``, the public
differentiable sign, is not the core table's selector ``sign_p``).

>>> from duograd.rows import add_p
>>> import duograd as dg
>>> add_p(dg.tensor([1.0]), dg.tensor([2.0])).numpy()
array([3.])
"""

from __future__ import annotations

from .core import *  # noqa: F403  (every row of the core table: its __all__)
from .core import _expand, _mT, _selector  # noqa: F401  (helpers the other families use)
