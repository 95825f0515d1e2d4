"""Stage 9: the verification headline numbers, from ``benchmarks/pins.py``.

Each is an engine result measured against something the engine never computed:

- ``ce_identity``: the gradient of the composed cross-entropy against the closed form
  ``(softmax - onehot) / N`` in NumPy, over many random cases;
- ``least_squares``: gradient descent through the engine against the normal-equation
  solution from ``numpy.linalg.solve``;
- ``adam_stall``: Adam at a fixed learning rate on that same problem, which does not
  settle at the optimum, against the annealed run, which does.

The test suite asserts thresholds on these same functions, so a number quoted from
here is one the suite checks.
"""

from __future__ import annotations

import os
from typing import Any

from . import check_size, track

SEED = 0
# Keyword arguments per size; full and quick use pins.py's own defaults.
SMOKE = {"ce_identity_error": {"n_cases": 10},
         "least_squares_pins": {"steps": 300},
         "adam_stall": {"steps": 300, "anneal_steps": 300}}
N_CASES = 200


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Run the three pins and return their dicts (no figure).

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> sorted(m)
    ['adam_stall', 'ce_identity', 'least_squares', 'seed']
    """
    check_size(size)
    from benchmarks import pins

    small = size == "smoke"
    calls = (("ce_identity", pins.ce_identity_error,
              SMOKE["ce_identity_error"] if small else {"n_cases": N_CASES}),
             ("least_squares", pins.least_squares_pins, SMOKE["least_squares_pins"] if small else {}),
             ("adam_stall", pins.adam_stall, SMOKE["adam_stall"] if small else {}))
    result: dict[str, Any] = {"seed": SEED}
    for key, fn, kw in track(calls, "verification pins", progress):
        result[key] = fn(seed=SEED, **kw)
    return result
