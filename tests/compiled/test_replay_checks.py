"""``dg.compile``: a replay on bad values raises what the eager call raises.

The checks of values (probabilities in [0, 1], quantiles in [0, 1], indices in range,
counts not negative) are derived from the values, so that a replay runs them on each
call's arrays: recorded on good values, replayed on bad ones, the compiled call raises
the eager call's error (its class and message), never a NaN or a clamped answer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg
from duograd.nn import functional as F

CASES = {
    "binary_cross_entropy": (lambda p, y: F.binary_cross_entropy(p, y),
                             ([0.2, 0.7], [0.0, 1.0]), ([1.5, 0.7], [0.0, 1.0])),
    "binary_cross_entropy target": (lambda p, y: F.binary_cross_entropy(p, y),
                                    ([0.2, 0.7], [0.0, 1.0]), ([0.2, 0.7], [0.0, -1.0])),
    "quantile": (lambda x, q: dg.quantile(x, q), ([1.0, 2.0, 3.0], [0.5]), ([1.0, 2.0, 3.0], [1.5])),
    "bincount": (lambda x: dg.bincount(x), ([0, 1, 1],), ([0, -1, 1],)),
    "repeat_interleave": (lambda x, r: dg.repeat_interleave(x, r), ([1.0, 2.0], [1, 2]),
                          ([1.0, 2.0], [1, -2])),
    "gather": (lambda x, i: dg.gather(x, 0, i), ([1.0, 2.0], [0, 1]), ([1.0, 2.0], [0, 5])),
    "index_select": (lambda x, i: dg.index_select(x, 0, i), ([1.0, 2.0], [0, 1]), ([1.0, 2.0], [0, 5])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_replay_on_bad_values_raises_the_eager_error(name):
    f, good, bad = CASES[name]
    with pytest.raises(Exception) as eager:
        f(*[dg.tensor(a) for a in bad])
    fast = dg.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no read was announced: the values are checked)
        fast(*[dg.tensor(a) for a in good])
    with pytest.raises(type(eager.value)) as replayed:
        fast(*[dg.tensor(a) for a in bad])
    assert str(eager.value) in str(replayed.value)
    assert fast.traces == 1  # the replay raised; it did not record again
    good_out = fast(*[dg.tensor(a) for a in good])  # and the program still replays
    want = f(*[dg.tensor(a) for a in good])
    assert np.array_equal(good_out.detach().numpy(), want.detach().numpy())
