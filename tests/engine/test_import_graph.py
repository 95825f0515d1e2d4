"""The package's import graph has no cycle, so its modules read in one order.

The graph is read from the source (``ast``), not from ``sys.modules``: an edge is an
import at module level, including one at the bottom of a file, and excluding those
under ``if TYPE_CHECKING:`` (type hints only, never executed). A package's
``__init__`` is a node of its own, so ``from .. import Tensor`` inside ``duograd.nn``
is an edge back to ``duograd``.

    python tests/engine/test_import_graph.py     # prints the graph, one module a line
"""

from __future__ import annotations

import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "duograd")


def _module_files() -> dict[str, str]:
    out = {}
    for folder, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, f), os.path.join(ROOT, ".."))
                name = rel[:-3].replace(os.sep, ".")
                out[name[: -len(".__init__")] if name.endswith(".__init__") else name] = \
                    os.path.join(folder, f)
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _top_level_imports(tree: ast.Module):
    """Imports executed when the module loads (not inside functions or TYPE_CHECKING)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)


def import_graph() -> dict[str, set[str]]:
    """Module -> the duograd modules it imports when it loads."""
    files = _module_files()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_pkg = path.endswith("__init__.py")
        package = name if is_pkg else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in _top_level_imports(ast.parse(open(path).read())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    mod = f"{base}.{node.module}" if node.module else base
                else:
                    mod = node.module or ""
                # `from pkg import sub` imports the submodule when sub is one
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in files else mod for a in node.names]
            deps.update(t for t in targets if t in files and t != name)
        graph[name] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None. Iterative DFS."""
    state: dict[str, int] = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [], [(start, iter(sorted(graph[start])))]
        state[start] = 1
        path.append(start)
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert "duograd.ops" in graph and "duograd._tensor" in graph["duograd.ops"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_engine_reads_in_one_order():
    """shapes -> tensor -> autograd -> rows -> ops -> methods: each imports only earlier ones."""
    graph = import_graph()
    order = ["duograd.shapes", "duograd._tensor", "duograd.autograd", "duograd.rows", "duograd.ops",
             "duograd.methods"]
    for i, mod in enumerate(order):
        later = set(order[i + 1:]) | {"duograd"}
        assert not graph[mod] & later, f"{mod} imports {sorted(graph[mod] & later)}"


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` loads, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_rows_sit_below_the_public_layer():
    """No module of ``duograd.rows`` (the op table's rows) loads, even through another
    module, the public layer above it (``ops``, ``methods``, the package's ``__init__``) or
    any module that does; ``ops`` loads the rows."""
    graph = import_graph()
    rows = sorted(m for m in graph if m == "duograd.rows" or m.startswith("duograd.rows."))
    assert "duograd.rows.core" in rows and "duograd.rows.core" in graph["duograd.ops"]
    above = {"duograd", "duograd.ops", "duograd.methods"}
    for mod in rows:
        reach = _reach(graph, mod)
        bad = sorted(m for m in reach if m in above or "duograd.ops" in _reach(graph, m))
        assert not bad, f"{mod} loads the layer above the rows: {bad}"


# What builds a row: the engine's classes and the rows' selector helper.
_ROW_MAKERS = {"Primitive", "Variadic", "_selector", "_Multilinear"}


def rows_built_in(path: str) -> list[str]:
    """Where the module at ``path`` builds a primitive: each call of a row maker
    (``Primitive(...)``, ``Variadic(...)``, ``_selector(...)``, ``ops._selector(...)``), at
    module level or inside a function, and each class derived from one, as "line: name"."""
    found = []
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in _ROW_MAKERS:
                found.append((node.lineno, name))
        elif isinstance(node, ast.ClassDef):
            for b in node.bases:
                name = b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None
                if name in _ROW_MAKERS:
                    found.append((node.lineno, f"class {node.name}({name})"))
    return [f"{line}: {what}" for line, what in sorted(found)]


# Modules above the rows that still build primitives, and why they may.
_BUILDS_ROWS_OUTSIDE = {
    "duograd.checkpoint": "checkpoint_p's forward is the user's function, passed per call",
}


def test_the_rows_are_built_only_in_the_rows_package():
    """Every primitive is built in ``duograd.rows`` or the engine (``duograd.autograd``:
    ``Primitive`` itself, ``ones_like_p``, custom Functions' per-call nodes); a public
    module imports its rows from there. The four modules whose rows moved (issue 28) build
    none; the few others that still do are listed, with their reason."""
    files = _module_files()
    for mod in ("duograd.linalg_more", "duograd.more_ops", "duograd.nn._activations", "duograd.nn._scan"):
        assert not rows_built_in(files[mod]), f"{mod} builds rows: {rows_built_in(files[mod])}"
    outside = {m: rows_built_in(p) for m, p in files.items()
               if not m.startswith(("duograd.rows", "duograd.autograd"))}
    builders = sorted(m for m, found in outside.items() if found)
    assert builders == sorted(_BUILDS_ROWS_OUTSIDE), \
        f"rows built outside duograd/rows: { {m: outside[m] for m in builders} }"


def test_the_row_finder_finds_a_planted_row(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import numpy as np\nfrom duograd import ops\n"
                 "def g():\n    return ops._selector('s', np.sign)\n"
                 "class P(Primitive):\n    pass\n")
    assert rows_built_in(str(f)) == ["4: _selector", "5: class P(Primitive)"]


def test_the_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


if __name__ == "__main__":
    g = import_graph()
    for mod in sorted(g):
        print(f"{mod:28} -> {', '.join(sorted(g[mod])) or '(nothing)'}")
    print("cycle:", find_cycle(g))
    sys.exit(0)
