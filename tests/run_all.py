"""Run the whole test suite under pytest and print a table of checks per category.

A check is one test that ran. Skipped tests are listed with their reason and are
never counted as passed. The category of a test comes from its file name (see
CATEGORIES), except that every test marked ``oracle`` counts as a PyTorch-oracle check.

    python tests/run_all.py            # the whole suite
    python tests/run_all.py -k scalar  # extra arguments go to pytest
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# (file-name prefix, category); the first match wins.
CATEGORIES = [
    ("test_scalar", "scalar engine gradcheck (finite differences)"),
    ("test_tensor", "tensor engine gradcheck + broadcasting adjoints"),
    ("test_higher", "higher-order derivatives (analytic Hessians)"),
    ("test_softmax", "softmax / cross-entropy closed-form gradient"),
    ("test_training", "training-loop pins (closed-form least squares)"),
    ("test_compile", "dg.compile replay against eager, bit for bit"),
]
ORACLE = "PyTorch oracle [optional]"
OTHER = "nn, optim, viz, tutorial, walkthrough"
ORDER = [c for _, c in CATEGORIES] + [OTHER, ORACLE]


def category(item_path: str, oracle: bool) -> str:
    if oracle:
        return ORACLE
    name = os.path.basename(item_path)
    for prefix, cat in CATEGORIES:
        if name.startswith(prefix):
            return cat
    return OTHER


class Collector:
    """A pytest plugin that records each test's outcome and category."""

    def __init__(self) -> None:
        self.cats: dict[str, str] = {}
        self.outcome: dict[str, str] = {}
        self.skip_reason: dict[str, str] = {}

    def pytest_collection_modifyitems(self, items):
        for item in items:
            oracle = item.get_closest_marker("oracle") is not None
            self.cats[item.nodeid] = category(str(item.fspath), oracle)

    def pytest_sessionstart(self, session):
        # The table below ends with the one closing line "N passed, N failed"; pytest's own
        # "N passed in Xs" line would say it a second time.
        reporter = session.config.pluginmanager.getplugin("terminalreporter")
        if reporter is not None:
            reporter.summary_stats = lambda: None

    def pytest_runtest_logreport(self, report):
        nid = report.nodeid
        if report.skipped:
            self.outcome[nid] = "skipped"
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self.skip_reason[nid] = reason
        elif report.failed:
            self.outcome[nid] = "failed"  # a failure in any phase fails the check
        elif report.when == "call" and nid not in self.outcome:
            self.outcome[nid] = "passed"


def main(argv: list[str]) -> int:
    col = Collector()
    code = pytest.main(["-q", "-p", "no:cacheprovider", HERE, *argv], plugins=[col])
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for nid, cat in col.cats.items():
        counts[cat][col.outcome.get(nid, "not run")] += 1

    print()
    print("=" * 78)
    print(f"{'checks':>8}  {'category':<52} result")
    print("-" * 78)
    total_run = total_passed = total_failed = total_skipped = 0
    for cat in ORDER:
        c = counts.get(cat, {})
        run = c.get("passed", 0) + c.get("failed", 0)
        total_run += run
        total_passed += c.get("passed", 0)
        total_failed += c.get("failed", 0)
        total_skipped += c.get("skipped", 0)
        if run == 0 and not c.get("skipped"):
            continue
        status = "[OK]" if c.get("failed", 0) == 0 and run else ("[FAILED]" if c.get("failed") else "[SKIPPED]")
        extra = f"  ({c['skipped']} skipped)" if c.get("skipped") else ""
        print(f"{run:>8}  {cat:<52} {status}{extra}")
    print("-" * 78)
    if col.skip_reason:
        print("Skipped (not counted as passed):")
        reasons: dict[str, int] = defaultdict(int)
        for r in col.skip_reason.values():
            reasons[r] += 1
        for r, n in sorted(reasons.items()):
            print(f"  {n:>4} x {r}")
        print("-" * 78)
    print(f"TOTAL: {total_run} checks run" + (f", {total_skipped} skipped (not counted)"
                                               if total_skipped else ""))
    print(f"{total_passed} passed, {total_failed} failed")
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        return 1
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
