"""Every mutant of tests/mutants.py can still be planted: its snippet occurs exactly once
in its file. A refactor that changes the code a mutant targets makes the mutant stale (it
plants nothing, or plants it in the wrong place), a check that cannot fail; this test
fails instead, naming it, without running any mutant (the mutants themselves take minutes
and run by hand)."""

from __future__ import annotations

import os

import mutants


def test_every_mutant_snippet_occurs_exactly_once():
    problems = mutants.stale(mutants.MUTANTS)
    assert not problems, "stale mutants (retarget them to the current code):\n" + "\n".join(problems)


def test_the_check_catches_a_stale_snippet(tmp_path):
    # (the check itself can fail: a snippet missing, one occurring twice, a missing file)
    (tmp_path / "f.py").write_text("a = 1\nb = 1\n")
    ms = [mutants.Mutant("ok", "f.py", "a = 1", "a = 2", "", ""),
          mutants.Mutant("gone", "f.py", "c = 1", "c = 2", "", ""),
          mutants.Mutant("twice", "f.py", " = 1", " = 2", "", ""),
          mutants.Mutant("nofile", "g.py", "a", "b", "", "")]
    problems = mutants.stale(ms, str(tmp_path))
    assert [p.split(":")[0] for p in problems] == ["gone", "twice", "nofile"]
    assert "0 times" in problems[0] and "2 times" in problems[1]


def test_every_mutant_changes_its_file_and_names_an_existing_test_file():
    for m in mutants.MUTANTS:
        assert m.old != m.new, m.id
        paths = [w for w in m.tests.split() if w.startswith("tests/")]
        assert paths, m.id
        for path in paths:
            assert os.path.isfile(os.path.join(mutants.REPO, path)), (m.id, path)
