"""The op table's rows, by family: every primitive's NumPy forward beside its derivative rules.

A row is one ``Primitive`` (``name_p``): a NumPy forward, one VJP rule per input and its
JVP (``rows/core.py``'s docstring says what a rule may do). The rows sit below the public
layer: the torch-signature functions that normalise torch's arguments and call the rows
are in ``duograd/ops.py`` (and the other public modules), which import from here; no
module of this package imports them (``tests/engine/test_import_graph.py`` checks it).

- ``core``: the core table (selectors, elementwise arithmetic, reductions, shape, indexing,
  joins, matmul and linear).

>>> from duograd.rows import add_p
>>> import duograd as dg
>>> add_p(dg.tensor([1.0]), dg.tensor([2.0])).numpy()
array([3.])
"""

from __future__ import annotations

from .core import *  # noqa: F403  (every row of the core table: its __all__)
from .core import _expand, _mT, _selector  # noqa: F401  (helpers the other families use)
