"""Every docstring example (library, experiments, benchmarks, examples) runs and prints
what it says it prints."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import benchmarks
import duograd
import examples
import experiments

MODULES = sorted(
    name
    for pkg in (duograd, experiments, benchmarks, examples)
    for _, name, _ in pkgutil.walk_packages(pkg.__path__, prefix=pkg.__name__ + ".")
)


# duograd.anomaly's examples divide by zero on purpose (that is what detect_anomaly finds);
# NumPy's RuntimeWarnings for it are expected there, and only there.
_EXPECTED_WARNINGS = {"duograd.anomaly": [
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]}


@pytest.mark.parametrize("name", [pytest.param(n, marks=_EXPECTED_WARNINGS.get(n, ()))
                                  for n in MODULES])
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_every_public_function_has_an_example():
    """Public functions and classes of the API carry a runnable example (a '>>>' line)."""
    import inspect

    missing = []
    for name in ("duograd", "duograd.func", "duograd.nn", "duograd.optim", "duograd.viz",
                 "duograd.scalar", "duograd.scalar.higher", "duograd.scalar.forward"):
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")]):
            obj = getattr(module, attr)
            if inspect.ismodule(obj) or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not (obj.__doc__ or "").count(">>>"):
                missing.append(f"{name}.{attr}")
    assert not missing, f"no runnable example in: {missing}"
