"""``dg.compile`` on every sample of the op table: a replay on new values is the eager call.

``tests/opinfo.py``'s ``OPS`` holds every public op with its samples (integer, bool and
non-differentiable ops included, keyword forms, 0-d and empty inputs). For each sample the
call is compiled, recorded on one draw of its arguments (A) and replayed on another (B) of
the same shapes and dtypes; the replay must give what the eager engine gives on B, to the
bit (structure, dtype, shape, values). The only other outcome allowed is one the recording
announced: a warning from ``dg.compile`` that a value was read into Python (``item()``,
a NumPy conversion), which the documentation lists under "What a replay cannot see".
Where the eager call raises on B, the replay must raise the same class.

Random ops are in too: a replay draws its numbers again, from the same generator in the
same order as the eager call, so with the generator seeded alike before both, the values
match. The gradient side of every differentiable op is tests/compiled/test_compile.py's
``test_every_op_forward_and_backward_replays_bit_for_bit``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg
from duograd.capture import program as capture_program
import opinfo
from opinfo import build_args, flatten_out

opinfo.load_all()


@pytest.fixture(autouse=True)
def _generated_replays(monkeypatch):
    """Every replay here runs through the generated code (``program._generate``), which
    the rest of the suite reaches only after a program's hundredth replay; the loop
    (``Program._loop``) is tests/compiled/test_compile.py's and the others'."""
    monkeypatch.setattr(capture_program, "GENERATE_AFTER", 0)

SAMPLES = [pytest.param(s, id=f"{info.name}[{k}]")
           for info in opinfo.OPS for k, s in enumerate(info.samples)]
PLAIN = (bool, int, float, complex, str, type(None))


def _values(out):
    """A result as comparable values: arrays for Tensors, plain values as they are, and any
    other object (a generator, a module) as its type alone."""
    res = []
    for o in flatten_out(out):
        if isinstance(o, dg.Tensor):
            res.append(o.detach().numpy().copy())
        elif type(o) in PLAIN or isinstance(o, tuple):
            res.append(o)
        else:
            res.append(type(o))
    return res


def _same(got, want) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            if not (isinstance(g, np.ndarray) and g.shape == w.shape and g.dtype == w.dtype
                    and np.array_equal(g, w, equal_nan=True)):
                return False
        elif g != w and not (g != g and w != w):  # (NaN equals NaN here)
            return False
    return True


def _args(s, k):
    return build_args(s, dg, list(s.seed) + [k], np.float64, is_torch=False)[:2]


def _eager(s, k):
    args, kwargs = _args(s, k)
    dg.manual_seed(k)
    try:
        return _values(s.call(dg, *args, **kwargs)), None
    except Exception as e:  # noqa: BLE001 (the replay must raise the same)
        return None, e


@pytest.mark.parametrize("s", SAMPLES)
def test_a_replay_on_new_values_is_the_eager_call(s):
    fast = dg.compile(lambda *a, **kw: s.call(dg, *a, **kw))
    args, kwargs = build_args(s, dg, list(s.seed), np.float64, is_torch=False)[:2]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fast(*args, **kwargs)  # records, on the sample's own values (A)
    announced = [str(w.message) for w in caught if "dg.compile" in str(w.message)]
    want, error = _eager(s, 1)  # B, run eagerly ...
    args, kwargs = _args(s, 1)  # ... and replayed, on arrays of its own
    if error is not None:
        dg.manual_seed(1)
        with pytest.raises(type(error)):
            fast(*args, **kwargs)
        return
    dg.manual_seed(1)
    got = _values(fast(*args, **kwargs))
    assert _same(got, want) or announced, (
        f"the replay on new values differs from the eager call, and the recording did not "
        f"say why:\n got {got}\nwant {want}")
