"""The inventory of torch 2.13's names (duograd/_inventory): generated from torch, every
name decided, every name present, stubs that raise NotImplementedError naming themselves,
and the built names' parameters against torch's (the mismatches listed, not hidden)."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys

import pytest

import duograd as dg
from duograd import _inventory
from duograd._inventory import generate, stubs, unsupported


def _target(ns: str):
    return stubs.resolve(ns, create=False)


@pytest.mark.oracle
def test_the_committed_inventory_is_torchs(torch) -> None:
    """Regenerated from the installed torch, the file is the committed one, line for line.
    In a fresh process: what a torch module lists grows as its lazy submodules load
    (``torch.compile`` in another test loads many), and the committed file lists a fresh import."""
    out = subprocess.run([sys.executable, "-m", "duograd._inventory.generate"], capture_output=True,
                         text=True, cwd=os.path.dirname(os.path.dirname(generate.HERE)))
    assert out.returncode == 0, ("torch_names.json differs from torch "
                                 "(python -m duograd._inventory.generate --write):\n" + out.stdout[-4000:]
                                 + out.stderr[-2000:])
    assert "up to date" in out.stdout


def test_the_inventory_holds_what_the_issue_counts() -> None:
    inv = _inventory.inventory()
    assert set(inv) == set(generate.NAMESPACES)
    assert len(inv["torch.Tensor"]) == 604  # torch 2.13's public dir(torch.Tensor)
    assert sum(e["kind"] == "function" for e in inv["torch"].values()) == 728
    assert sum(e.get("nn_module", False) for e in inv["torch.nn"].values()) == 163
    for dtype in ("int16", "uint8", "float16", "bfloat16", "complex64", "float64"):
        assert inv["torch"][dtype]["kind"] == "dtype"
    for legacy in ("FloatTensor", "LongTensor", "DoubleTensor", "BoolTensor"):
        assert inv["torch"][legacy]["kind"] == "class"
    assert inv["torch.nn.functional"]["relu"]["signatures"] == [["input", "inplace"]]
    assert ["input", "other", "*", "alpha", "out"] in inv["torch"]["add"]["signatures"]


def test_no_name_is_undecided() -> None:
    """Every torch name is built, or has a reason (an internal, or listed as not built yet)."""
    undecided = [f"{ns}.{n}" for ns, names in _inventory.inventory().items() for n in names
                 if _inventory.status(ns, n) == "undecided"]
    assert not undecided, f"no reason in duograd/_inventory/unsupported.py for: {undecided}"


def test_every_name_is_an_attribute() -> None:
    missing = []
    for ns, names in _inventory.inventory().items():
        target = _target(ns)
        assert target is not None, f"{ns} has no duograd module"
        for n in names:
            if isinstance(target, type):
                if not any(n in vars(k) for k in target.__mro__):
                    missing.append(f"{ns}.{n}")
            elif n not in vars(target):
                missing.append(f"{ns}.{n}")
    assert not missing, f"not attributes of duograd: {missing[:50]}"


def _raise_of(ns: str, n: str, kind: str):
    """Use the stub the way a program would, and return what it raised."""
    target = _target(ns)
    with pytest.raises(NotImplementedError) as exc:
        if ns == "torch.Tensor":
            x = dg.ones(2)
            value = getattr(x, n)  # an attribute raises here
            value()  # a method here
        else:
            obj = vars(target)[n]
            if kind == "module":
                obj.some_entry_point
            else:
                obj()
    return exc.value


def test_each_stub_raises_not_implemented_naming_itself_and_its_reason() -> None:
    checked = 0
    for ns, names in _inventory.inventory().items():
        for n, e in names.items():
            if _inventory.status(ns, n) == "built":
                continue
            err = _raise_of(ns, n, e["kind"])
            msg = str(err)
            assert f"{ns}.{n}" in msg, msg
            kind, why = unsupported.reason(ns, n)
            assert why in msg, msg
            checked += 1
    assert checked > 1000


def test_submodules_programs_import_at_their_top_are_importable() -> None:
    for name in ("duograd.jit", "duograd.onnx", "duograd.fx", "duograd.distributed", "duograd.functional",
                 "duograd.nn.parallel", "duograd.cuda", "duograd.backends", "duograd.amp",
                 "duograd.backends.cudnn", "duograd.autograd.graph", "duograd.autograd.forward_ad",
                 "duograd.special", "duograd.fft", "duograd.utils.data", "duograd.distributions"):
        assert importlib.import_module(name) is not None
    # a child process: `import duograd.onnx` as the first line of a program
    code = "import duograd.onnx, duograd.jit, duograd.fx, duograd.distributed; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_the_installer_skips_every_name_that_exists() -> None:
    """Names built before the installer ran are the built objects; a second run adds nothing."""
    assert not stubs.is_stub(dg.exp) and dg.nn.Linear.__module__ == "duograd.nn.modules"
    assert not stubs.is_stub(dg.Tensor.sum)
    before = {n: vars(dg)[n] for n in ("exp", "cat", "nn", "compile", "cuda")}
    assert stubs.install() == 0
    assert all(vars(dg)[n] is obj for n, obj in before.items())


def test_aliases_are_torchs_own_object_under_its_two_names() -> None:
    inv = _inventory.inventory()
    assert inv["torch.functional"]["einsum"]["alias"] == "torch.einsum"
    assert dg.functional.einsum is dg.einsum


def test_the_counts_add_up_and_are_computed() -> None:
    for label, c in _inventory.counts().items():
        assert c["built"] + c["internal"] + c["not_built"] + c["undecided"] == c["names"], label
        assert c["undecided"] == 0, label
    table = _inventory.table()
    assert table.splitlines()[0].startswith("| namespace | built | of | internals")
    # a name built later is counted as built, whatever NOT_BUILT_YET still says
    assert "tensor" not in unsupported.NOT_BUILT_YET.get("torch", ())


def test_parameter_names_of_built_names_against_torchs() -> None:
    """Each built name whose parameters differ from torch's documented ones is listed in
    tests/inventory/signature_mismatches.txt: a new mismatch fails, and so does a fixed one
    still listed (rewrite with `python -m duograd._inventory --update-mismatches`)."""
    now = set(_inventory.signature_mismatches())
    reasons = _inventory.read_mismatch_reasons()
    listed = set(reasons)
    new, fixed = sorted(now - listed), sorted(listed - now)
    assert not new and not fixed, (f"new signature mismatches: {new[:20]}\nno longer mismatched: {fixed[:20]}\n"
                                   "(python -m duograd._inventory --update-mismatches)")
    print("accepted signature differences (tests/inventory/signature_mismatches.txt):")
    for line, why in sorted(reasons.items()):
        print(f"  {line}\n      because {why}")
    unexplained = sorted(line for line, why in reasons.items() if not why)
    assert not unexplained, ("each accepted difference needs its reason after `  # accepted: ` in "
                             f"tests/inventory/signature_mismatches.txt: {unexplained[:20]}")


def test_the_signature_check_reports_what_torch_accepts_and_duograd_does_not() -> None:
    def f(x, dim=None):
        return x
    sig = inspect.signature(f)
    problems = _inventory._problems(sig, [["input", "dim", "*", "keepdim", "out"]])
    assert problems == ["argument 1 is `x` where torch's is `input`", "no keyword `input`",
                        "no keyword `keepdim`", "no keyword `out`"]

    def g(input, *size, **kwargs):
        return input
    assert _inventory._problems(inspect.signature(g), [["input", "*size", "*", "out"]]) == []

    def h(*size, out=None):
        return size
    # a *varargs that also takes its name by keyword (ones(size=(2, 3))), and torch's (*args, **kwargs)
    assert _inventory._problems(inspect.signature(h), [["size", "*", "out"]]) == ["no keyword `size`"]
    assert _inventory._problems(inspect.signature(h), [["size", "*", "out"]], ("size",)) == []
    assert _inventory._problems(inspect.signature(f), [["*args", "**kwargs"]]) == []


def test_the_installer_is_the_last_statement_of_the_package() -> None:
    """Merging keeps it last: a name bound after it would still be found, but an alias or a
    wrapper applied after it would see stubs."""
    import ast
    path = os.path.join(os.path.dirname(dg.__file__), "__init__.py")
    with open(path) as f:
        body = ast.parse(f.read()).body
    last = body[-1]
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
        and getattr(last.value.func, "id", None) == "_install_stubs", \
        "duograd/__init__.py must end with `_install_stubs()` (move the block to the end)"
