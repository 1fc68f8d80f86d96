"""Project cases: a training job split across files (models in `models.py`, networks
re-exported by a package, a detach helper in `utils.py`). The same guarantees as single-file
cases: `check` reports exactly the case's rules for the file that holds the bug (the entry
script, or the module named `checked`: a trainer the entry hands its networks to), `apply`
over a copy of `before/` gives `after/` byte for byte and a second run changes nothing, the
entry really fails (or runs), and the rewrite verifies `equivalent` (LF005's learning-rate
move: `changed as intended`) at `live` with the real imported classes (a module that runs
nothing itself is verified by running the entry)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loopfix.analysis import analyse_source
from loopfix.cli import app
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

from corpus_cases import PROJECTS, Case
from tracing import run_traced

VERIFY = RunSettings(device="cpu", iterations=3, timeout=180)
POSITIVE = [c for c in PROJECTS if c.positive and c.fixable]
NEGATIVE = [c for c in PROJECTS if not c.positive]


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def test_there_are_project_cases():
    assert len(POSITIVE) >= 2 and len(NEGATIVE) >= 1


@pytest.mark.parametrize("case", PROJECTS, ids=str)
def test_check_reports_exactly_the_expected_rules(case: Case):
    result = analyse_source(SourceFile.read(case.checked))
    assert result.errors == []
    assert sorted(f.rule for f in result.findings) == sorted(case.rules)
    if case.fixable:
        assert all(f.fixable for f in result.findings)
    else:  # reported without a fix, saying why
        assert all(case.no_fix in (f.fix_unavailable or "") for f in result.findings)
    assert result.dependencies, "the file imports, or is imported by, project modules"


@pytest.mark.parametrize("case", POSITIVE, ids=str)
def test_apply_over_the_project_gives_after(case: Case, tmp_path, monkeypatch):
    copy = tmp_path / "project"
    shutil.copytree(case.folder / "before", copy)
    monkeypatch.chdir(copy)
    result = CliRunner().invoke(app, ["apply", "--no-verify", "--no-cache", "."])
    assert result.exit_code == 0, result.output
    assert files_of(copy) == files_of(case.folder / "after")
    again = CliRunner().invoke(app, ["check", "--no-cache", "."])
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize("case", POSITIVE, ids=str)
def test_the_rewrite_verifies_live_with_the_imported_classes(case: Case):
    verdicts = verify_file(analyse_source(SourceFile.read(case.checked)), VERIFY)
    intended = "changed as intended" if case.rules == ("LF005",) else "equivalent"
    workers = "mp.Process" in case.before.read_text()  # A3C workers run in the traced process
    level = "live (worker processes run in turn, in one process)" if workers else "live"
    assert [(v.outcome, v.level) for v in verdicts] == [(intended, level)]


@pytest.mark.parametrize("case", PROJECTS, ids=str)
def test_the_entry_really_fails_or_runs(case: Case, tmp_path):
    run = run_traced(case.before, tmp_path)
    if case.error:
        assert case.error in (run.error or ""), run.stderr[-2000:]
        if not case.fixable:
            return
        fixed = run_traced(case.after, tmp_path)
        assert fixed.returncode == 0 and fixed.error is None, fixed.stderr[-2000:]
    else:
        assert run.returncode == 0 and run.error is None, run.stderr[-2000:]
