"""Issue 32, item 2: the capture package without back-channels into the interpreter, its
one container walker, and what users get from them: a batch in a dict subclass, a dict's
own order, a number argument stored by the step given back as a plain number. Every
compiled call is compared with the eager call bit for bit."""

from __future__ import annotations

import pathlib
from collections import OrderedDict

import numpy as np
import pytest

import duograd as dg
from bitwise import same as _same

CAPTURE = pathlib.Path(dg.__file__).parent / "capture"


@pytest.mark.parametrize("name", ["gc.get_referrers(", "sys.getrefcount(", "import ctypes"])
def test_the_capture_package_reads_no_interpreter_internals(name):
    hits = [p.name for p in CAPTURE.glob("*.py") if name in p.read_text()]
    assert hits == []


def test_a_batch_in_an_ordered_dict_is_walked_and_records_once():
    def step(batch):
        return (dg.tensor(batch["x"]) * dg.tensor(batch["w"])).sum()
    fast = dg.compile(step)
    rng = np.random.default_rng(0)
    for _ in range(3):
        b = OrderedDict(x=rng.standard_normal(4), w=rng.standard_normal(4))
        _same(fast(b), step(b))
    assert fast.traces == 1


def test_a_dict_in_another_order_is_another_signature():
    """``fn`` sums in the dict's order, and float addition is not associative: the same
    items in another order give another value, so they cannot share a program."""
    def step(d):
        total = dg.zeros(())
        for v in d.values():
            total = total + dg.tensor(v)
        return total
    fast = dg.compile(step)
    big, one = np.array(1e16), np.array(1.0)
    a = {"a": big, "b": one, "c": -big}
    b = {"a": big, "c": -big, "b": one}
    for d in (a, b, a, b):
        _same(fast(d), step(d))
    assert float(step(a)) != float(step(b)) and fast.traces == 2


HISTORY: list = []


def test_a_number_stored_into_a_global_list_is_keyed_by_value_and_run_plainly():
    """At its second value the number enters as a stand-in, which the list still holds
    after the recording: the number is static, and ``fn`` runs again with the plain number
    (the abandoned run's append is not undone: a list is the user's, not rewritten). A
    step that stores a number runs eagerly again whenever another eager run stored since."""
    def step(x, lr):
        HISTORY.append(lr)
        return x * lr
    fast = dg.compile(step)
    for lr in (0.5, 0.25, 0.5):
        HISTORY.clear()
        _same(fast(np.ones(2), lr), np.full(2, lr))
        assert type(HISTORY[-1]) is float and HISTORY[-1] == lr
    assert fast.traces == 3           # 0.5; 0.25 (static from then on); 0.5 again
    HISTORY.clear()
    _same(fast(np.ones(2), 0.5), np.full(2, 0.5))
    assert fast.traces == 3 and HISTORY == []   # right after its own run: a replay


def test_a_draw_from_the_global_generator_is_refused_whatever_it_draws():
    for draw in (lambda: np.random.rand(), lambda: np.random.standard_normal(),
                 lambda: np.random.randint(3)):
        fast = dg.compile(lambda x, draw=draw: x * draw())
        with pytest.raises(RuntimeError, match="global generator"):
            fast(dg.ones(2))
