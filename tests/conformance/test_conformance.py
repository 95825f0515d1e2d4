"""The conformance table against torch 2.13 (see tests/opinfo.py for what an entry checks).

Every sample of every entry of ``opinfo.OPS`` (the rows of the ``rows_*.py`` files beside this
one, with their gradient-check variants, and those of tests/specs.py) becomes a test per float
dtype (forward: structure, dtype, shape, values, and the same against the entry's NumPy
``ref`` where it has one; backward: each float input's gradient and its dtype), and every
error sample a test (the class of exception torch raises).
``test_every_public_name_has_a_row`` checks that each public name PyTorch also has is in
the table, is covered by a named test elsewhere (``COVERED_BY``), or is in ``missing.py``.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any

import numpy as np
import pytest

import duograd as dg
from duograd._inventory.stubs import is_stub  # the names duograd does not build (they raise)

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:  # run as a script: tests/ holds opinfo.py
    sys.path.insert(0, os.path.dirname(HERE))
from opinfo import Arg, S, build_args, flatten_out, load_all, structure  # noqa: E402

OPS = load_all()
from coverage_map import COVERED_BY, KNOWN_MISSING  # noqa: E402  (after the rows)

pytestmark = pytest.mark.oracle


def _has_float(sample: S) -> bool:
    def walk(a: Any) -> bool:
        if isinstance(a, Arg):
            return a.kind == "float"
        if isinstance(a, (list, tuple)):
            return any(walk(b) for b in a)
        return False
    return any(walk(a) for a in sample.args) or any(walk(v) for v in sample.kwargs.values())


def _cases() -> list:
    cases = []
    for r in OPS:
        for s in r.samples:
            dtypes = ["float64"] + (["float32"] if s.setting("float32") and _has_float(s) else [])
            for dt in dtypes:
                cases.append(pytest.param(s, dt, id=f"{r.name}[{s.describe()}]-{dt}"))
    return cases


def _error_cases() -> list:
    return [pytest.param(s, id=f"{r.name}[{s.describe()}]-error") for r in OPS for s in r.errors]


@pytest.fixture
def torch64(torch):
    """torch with float64 as its default dtype (duograd's documented default), restored after."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(before)


def _np(t: Any, lib: str) -> np.ndarray:
    return t.detach().cpu().numpy() if lib == "torch" else np.asarray(t.detach()._data)


def _dtype_name(t: Any, lib: str) -> str:
    return str(t.dtype).replace("torch.", "") if lib == "torch" else np.dtype(t.dtype).name


def _compare_tensor(name: str, d: Any, t: Any, r: S, dt: str) -> None:
    assert isinstance(d, dg.Tensor), f"{name}: duograd gave {type(d).__name__}, torch a Tensor"
    assert _dtype_name(d, "dg") == _dtype_name(t, "torch"), \
        f"{name}: dtype {_dtype_name(d, 'dg')} where torch gives {_dtype_name(t, 'torch')}"
    assert tuple(d.shape) == tuple(t.shape), f"{name}: shape {tuple(d.shape)} where torch gives {tuple(t.shape)}"
    if r.setting("compare") == "shape":
        return
    dv, tv = _np(d, "dg"), _np(t, "torch")
    if dv.dtype.kind == "f":
        rtol, atol = _tols(r, dt)
        np.testing.assert_allclose(dv, tv, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(dv, tv, err_msg=name)


def _tols(s: S, dt: str) -> tuple[float, float]:
    keys = ("rtol", "atol") if dt == "float64" else ("rtol32", "atol32")
    return s.setting(keys[0]), s.setting(keys[1])


def _compare(r: S, dout: Any, tout: Any, dt: str) -> None:
    """Compare one sample's results (``r``: the sample, whose settings say how)."""
    compare = r.setting("compare")
    if callable(compare):
        compare(dout, tout)
        return
    assert structure(dout) == structure(tout), \
        f"{r.name}: result {structure(dout)} where torch gives {structure(tout)}"
    for d, t in zip(flatten_out(dout), flatten_out(tout)):
        if hasattr(t, "shape") and not isinstance(t, (int, float, bool)):
            _compare_tensor(r.name, d, t, r, dt)
        elif isinstance(t, float):
            assert isinstance(d, float) and np.isclose(d, t, rtol=r.setting("rtol"), atol=r.setting("atol"),
                                                       equal_nan=True), \
                f"{r.name}: {d!r} where torch gives {t!r}"
        else:
            assert type(d) is type(t) and d == t, f"{r.name}: {d!r} where torch gives {t!r}"


class _NumPy:
    """``build_args``'s view of NumPy: a sample's arguments as plain arrays (the same draws)."""

    __name__ = "numpy"

    @staticmethod
    def tensor(a: Any, requires_grad: bool = False) -> np.ndarray:
        return np.asarray(a)


def _compare_ref(s: S, dout: Any, seed: list, fdt: Any, dt: str) -> None:
    """The sample's result against the entry's NumPy reference, where it has one: the same
    arrays in, the same shape, dtype and values out (a reference independent of torch)."""
    ref = s.setting("ref")
    if ref is None or s.setting("compare") != "values":
        return
    nargs, nkw, _ = build_args(s, _NumPy, seed, fdt, is_torch=False)
    want = flatten_out(ref(*nargs, **nkw))
    got = flatten_out(dout)
    assert len(got) == len(want), f"{s.name}: {len(got)} results where the NumPy reference gives {len(want)}"
    rtol, atol = _tols(s, dt)
    for d, w in zip(got, want):
        w = np.asarray(w)
        dv = _np(d, "dg") if isinstance(d, dg.Tensor) else np.asarray(d)
        assert dv.shape == w.shape, f"{s.name}: shape {dv.shape} where the NumPy reference gives {w.shape}"
        assert dv.dtype == w.dtype, f"{s.name}: dtype {dv.dtype} where the NumPy reference gives {w.dtype}"
        if dv.dtype.kind == "f":
            np.testing.assert_allclose(dv, w, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{s.name}: against the NumPy reference")
        else:
            np.testing.assert_array_equal(dv, w, err_msg=f"{s.name}: against the NumPy reference")


@pytest.mark.parametrize("s,dt", _cases())
def test_row(torch64, s: S, dt: str) -> None:
    torch = torch64
    r = s.info
    fdt = np.float64 if dt == "float64" else np.float32
    seed = list(s.seed)
    dargs, dkw, dleaves = build_args(s, dg, seed, fdt, is_torch=False)
    targs, tkw, tleaves = build_args(s, torch, seed, fdt, is_torch=True)
    tout = s.call(torch, *targs, **tkw)
    dout = s.call(dg, *dargs, **dkw)
    _compare(s, dout, tout, dt)
    _compare_ref(s, dout, seed, fdt, dt)
    if not s.setting("grad") or not tleaves:
        return
    touts = [t for t in flatten_out(tout) if isinstance(t, torch.Tensor) and t.requires_grad]
    douts = [d for d, t in zip(flatten_out(dout), flatten_out(tout))
             if isinstance(t, torch.Tensor) and t.requires_grad]
    if not touts:
        return
    rng = np.random.default_rng(seed + [99])
    cts = [rng.standard_normal(tuple(t.shape)).astype(fdt) for t in touts]
    tgrads = torch.autograd.grad(touts, tleaves, grad_outputs=[torch.from_numpy(c) for c in cts],
                                 allow_unused=True)
    dgrads = dg.grad(douts, dleaves, grad_outputs=[dg.tensor(c) for c in cts], allow_unused=True)
    rtol, atol = _tols(s, dt)
    for k, (dgx, tgx) in enumerate(zip(dgrads, tgrads)):
        where = f"{r.name}: gradient of float input {k}"
        if tgx is None or dgx is None:
            other = dgx if tgx is None else tgx
            if other is not None:  # None on one side: the other must be all zeros
                assert not np.any(_np(other, "dg" if tgx is None else "torch")), f"{where}: None vs nonzero"
            continue
        assert _dtype_name(dgx, "dg") == _dtype_name(tgx, "torch"), f"{where}: dtype"
        assert tuple(dgx.shape) == tuple(tgx.shape), f"{where}: shape"
        np.testing.assert_allclose(_np(dgx, "dg"), _np(tgx, "torch"), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=where)


@pytest.mark.parametrize("s", _error_cases())
def test_row_error(torch64, s: S) -> None:
    torch = torch64
    seed = list(s.seed)
    targs, tkw, _ = build_args(s, torch, seed, np.float64, is_torch=True)
    with pytest.raises(Exception) as texc:
        s.call(torch, *targs, **tkw)
    dargs, dkw, _ = build_args(s, dg, seed, np.float64, is_torch=False)
    with pytest.raises(type(texc.value)):
        s.call(dg, *dargs, **dkw)


# ---------------------------------------------------------------- coverage

_DUNDERS = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
            "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
            "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__", "__invert__",
            "__and__", "__or__", "__xor__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
            "__getitem__", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
            "__imatmul__", "__len__", "__bool__", "__float__", "__int__", "__array__"]


def public_names() -> set[str]:
    """Each public duograd name that torch also has, spelled as rows name them."""
    import torch
    import torch.nn.functional as TF

    names: set[str] = set()
    for n in getattr(dg, "__all__", []):
        obj = getattr(dg, n, None)
        if hasattr(torch, n) and (inspect.isfunction(obj) or callable(obj)) and not inspect.ismodule(obj) \
                and not inspect.isclass(obj):
            names.add(f"dg.{n}")
    for n in dir(dg.Tensor):
        if n.startswith("_") or is_stub(getattr(dg.Tensor, n, None)):  # a stub raises: no row to hold
            continue
        if hasattr(torch.Tensor, n):
            names.add(f"Tensor.{n}")
    for n in _DUNDERS:
        if n in vars(dg.Tensor) or any(n in vars(k) for k in dg.Tensor.__mro__[:-1]):
            if hasattr(torch.Tensor, n):
                names.add(f"Tensor.{n}")
    for n in getattr(dg.nn.functional, "__all__", []):
        if hasattr(TF, n):
            names.add(f"F.{n}")
    for n in getattr(dg.nn, "__all__", []):
        if inspect.isclass(getattr(dg.nn, n, None)) and hasattr(torch.nn, n):
            names.add(f"nn.{n}")
    for n in getattr(dg.optim, "__all__", []):
        if inspect.isclass(getattr(dg.optim, n, None)) and hasattr(torch.optim, n):
            names.add(f"optim.{n}")
    for prefix, ours, theirs in (("init", dg.nn.init, torch.nn.init), ("distributions", dg.distributions,
                                                                          torch.distributions)):
        for n in getattr(ours, "__all__", []):
            if callable(getattr(ours, n, None)) and hasattr(theirs, n):
                names.add(f"{prefix}.{n}")
    for n in dir(dg.optim.lr_scheduler):
        if inspect.isclass(getattr(dg.optim.lr_scheduler, n)) and hasattr(torch.optim.lr_scheduler, n) \
                and not n.startswith("_") and not is_stub(getattr(dg.optim.lr_scheduler, n)):
            names.add(f"lr_scheduler.{n}")
    return names


def test_every_public_name_has_a_row(torch) -> None:
    rows = {r.name for r in OPS}
    covered = rows | set(COVERED_BY)
    names = public_names()
    uncovered = names - covered - set(KNOWN_MISSING)
    assert not uncovered, f"public names with no conformance row: {sorted(uncovered)}"
    stale = set(KNOWN_MISSING) & covered
    assert not stale, f"coverage_map.KNOWN_MISSING lists names that now have rows: {sorted(stale)}"
    gone = set(KNOWN_MISSING) - names
    assert not gone, f"coverage_map.KNOWN_MISSING lists names that are not public: {sorted(gone)}"


def test_covered_by_names_real_tests() -> None:
    """Each COVERED_BY entry points at a test function that exists."""
    root = os.path.dirname(HERE)
    for name, where in COVERED_BY.items():
        path, _, func = where.partition("::")
        full = os.path.join(os.path.dirname(root), path)
        assert os.path.exists(full), f"{name}: {path} does not exist"
        with open(full) as f:
            assert f"def {func}(" in f.read(), f"{name}: {where} has no test {func}"


def test_rows_cover_float32_and_edges() -> None:
    """The table as a whole samples 0-d and empty inputs (a guard against a table of easy cases)."""
    shapes = [a.shape for r in OPS for s in r.samples for a in s.args if isinstance(a, Arg)]
    assert any(len(sh) == 0 for sh in shapes), "no 0-d sample in the table"
    assert any(0 in sh for sh in shapes), "no empty sample in the table"


if __name__ == "__main__":  # print the coverage: python tests/conformance/test_conformance.py
    rows = {r.name for r in OPS}
    for n in sorted(public_names()):
        mark = "row" if n in rows else ("elsewhere" if n in COVERED_BY else "MISSING")
        print(f"{mark:10} {n}")
