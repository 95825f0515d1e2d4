"""``default_collate`` and ``default_convert`` on every container kind, against torch's
output: the same structure (container types, their keys and order), the same dtypes and
shapes, the same values."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import duograd as dg
from duograd.utils.data import default_collate, default_convert

Point = namedtuple("Point", ["x", "y"])


def _canon(obj, lib):
    """A library-free picture of a collated result: tensors as (dtype name, array)."""
    if isinstance(obj, lib.Tensor):
        return ("tensor", str(obj.dtype).replace("torch.", ""), np.asarray(obj.tolist()).tolist())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, tuple(_canon(v, lib) for v in obj))
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, _canon(v, lib)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_canon(v, lib) for v in obj])
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.tolist())
    return (type(obj).__name__, obj)


def _batches(lib):
    """The same batches in each library's tensors."""
    f = lambda *v: lib.tensor(list(v), dtype=lib.float64)  # noqa: E731
    return {
        "tensors": [f(1.0, 2.0), f(3.0, 4.0)],
        "0-d tensors": [lib.tensor(1), lib.tensor(2)],
        "int32 tensors": [lib.tensor([1, 2], dtype=lib.int32), lib.tensor([3, 4], dtype=lib.int32)],
        "numpy arrays": [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
        "numpy float32": [np.zeros((2, 2), np.float32), np.ones((2, 2), np.float32)],
        "numpy scalars": [np.float32(1.5), np.float32(2.5)],
        "numpy ints": [np.int64(3), np.int64(4)],
        "floats": [1.5, 2.0],
        "ints": [1, 2, 3],
        "bools": [True, False],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "dict": [{"x": f(1.0), "label": 0, "name": "a"}, {"x": f(2.0), "label": 1, "name": "b"}],
        "ordered dict": [OrderedDict(b=1, a=2.0), OrderedDict(b=3, a=4.0)],
        "named tuple": [Point(f(1.0), 2), Point(f(3.0), 4)],
        "tuple": [(f(1.0), 1, "a"), (f(2.0), 2, "b")],
        "list": [[1, 2.5], [3, 4.5]],
        "nested": [{"pair": (np.array([1, 2]), [1.0, {"k": 1}]), "p": Point(1, "s")},
                   {"pair": (np.array([3, 4]), [2.0, {"k": 2}]), "p": Point(2, "t")}],
    }


@pytest.mark.oracle
@pytest.mark.parametrize("kind", [
    "tensors", "0-d tensors", "int32 tensors", "numpy arrays", "numpy float32", "numpy scalars",
    "numpy ints", "floats", "ints", "bools", "strings", "bytes", "dict", "ordered dict",
    "named tuple", "tuple", "list", "nested"])
def test_default_collate_matches_torch(torch, kind) -> None:
    from torch.utils.data import default_collate as torch_collate
    ours = _canon(default_collate(_batches(dg)[kind]), dg)
    theirs = _canon(torch_collate(_batches(torch)[kind]), torch)
    assert ours == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("sample", [
    np.array([1, 2]), np.float64(2.5), 3, "s", (np.array([1.0]), 2), [np.array([0]), "a"],
    {"a": np.array([1.0]), "b": [np.int32(2)]}, Point(np.array(0), np.array(1)),
    np.array(["a", "b"])])
def test_default_convert_matches_torch(torch, sample) -> None:
    from torch.utils.data import default_convert as torch_convert
    assert _canon(default_convert(sample), dg) == _canon(torch_convert(sample), torch)


@pytest.mark.oracle
def test_default_collate_errors_as_torch(torch) -> None:
    from torch.utils.data import default_collate as torch_collate
    for batch_of in (lambda m: [m.zeros(2), m.zeros(3)], lambda m: [[1, 2], [1]],
                     lambda m: [np.array(["a"]), np.array(["b"])], lambda m: [object(), object()]):
        with pytest.raises(Exception) as te:
            torch_collate(batch_of(torch))
        with pytest.raises(te.type):
            default_collate(batch_of(dg))


def test_collated_tensor_is_a_new_stack() -> None:
    a, b = dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0])
    out = default_collate([a, b])
    assert out.shape == (2, 2) and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with dg.no_grad():
        out.fill_(0.0)
    assert a.tolist() == [1.0, 2.0]
