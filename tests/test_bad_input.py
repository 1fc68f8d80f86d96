"""Bad input never loses or corrupts code: each bad file gets one clear line naming it, the
other files are still analysed (and fixed), and the exit code is 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loopfix import analysis
from loopfix.cli import app
from loopfix.rules import rule_by_code
from loopfix.source import MAX_SOURCE_BYTES

from corpus_cases import CORPUS

runner = CliRunner()
BUGGY = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
FIXED = (CORPUS / "lf001_gru_state_init_once" / "after.py").read_text()


def make_syntax_error(folder: Path) -> Path:
    (folder / "bad.py").write_text("loss.backward()\ndef oops(:\n    pass\n")
    return folder / "bad.py"


def make_python2(folder: Path) -> Path:
    (folder / "bad.py").write_text('loss.backward()\nprint "hello"\nexec "x = 1"\n')
    return folder / "bad.py"


def make_undeclared_latin1(folder: Path) -> Path:
    (folder / "bad.py").write_bytes("loss.backward()\nname = 'café'\n".encode("latin-1"))
    return folder / "bad.py"


def make_wrongly_declared(folder: Path) -> Path:
    (folder / "bad.py").write_bytes(b"# -*- coding: no-such-codec -*-\nloss.backward()\n")
    return folder / "bad.py"


def make_nul_bytes(folder: Path) -> Path:
    (folder / "bad.py").write_bytes(b"x = 1\n\x00\x00y = 2\n")
    return folder / "bad.py"


def make_binary(folder: Path) -> Path:
    (folder / "bad.py").write_bytes(bytes(range(256)) * 64)
    return folder / "bad.py"


def make_huge(folder: Path) -> Path:
    line = b"x = 1  # " + b"padding " * 12 + b"\n"
    (folder / "bad.py").write_bytes(line * (10 * (1 << 20) // len(line) + 1))  # over 10 MB
    return folder / "bad.py"


def make_deeply_nested(folder: Path) -> Path:
    (folder / "bad.py").write_text("loss.backward()\nx = " + " + ".join(["a"] * 200_000) + "\n")
    return folder / "bad.py"


def make_deep_indentation(folder: Path) -> Path:
    lines = ["loss.backward()\n"] + ["    " * depth + "if x:\n" for depth in range(120)]
    lines.append("    " * 120 + "pass\n")
    (folder / "bad.py").write_text("".join(lines))
    return folder / "bad.py"


def make_python2_without_a_backward_pass(folder: Path) -> Path:
    (folder / "bad.py").write_text('import torch\nprint "hello"\n')
    return folder / "bad.py"


def make_broken_symlink(folder: Path) -> Path:
    (folder / "bad.py").symlink_to(folder / "missing.py")
    return folder / "bad.py"


def make_symlink_loop(folder: Path) -> Path:
    (folder / "bad.py").symlink_to(folder / "other.py")
    (folder / "other.py").symlink_to(folder / "bad.py")
    return folder / "bad.py"


BAD_FILES = {
    "syntax error": (make_syntax_error, "syntax error"),
    "python 2": (make_python2, "syntax error"),
    "latin-1 without a coding line": (make_undeclared_latin1, "cannot decode as utf-8"),
    "unknown coding": (make_wrongly_declared, "unknown encoding"),
    "NUL bytes": (make_nul_bytes, "NUL bytes"),
    "binary": (make_binary, "NUL bytes"),
    "10 MB": (make_huge, "over the 4 MB limit"),
    "deep nesting": (make_deeply_nested, "nested too deeply"),
    "deep indentation": (make_deep_indentation, "too many levels of indentation"),
    "broken symlink": (make_broken_symlink, "broken symlink"),
    "symlink loop": (make_symlink_loop, "symlink loop"),
}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    return tmp_path


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("loopfix: error:")]


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_file_gets_one_line_and_the_others_are_still_fixed(project, kind):
    make, expected = BAD_FILES[kind]
    bad = make(project)
    before = bad.read_bytes() if bad.exists() else None
    result = runner.invoke(app, ["apply", "--no-verify", "."])
    (line,) = [line for line in error_lines(result.stderr) if "bad.py" in line]
    assert expected in line and "\n" not in line, line
    assert result.exit_code == 2
    assert (project / "train.py").read_text() == FIXED  # the good file was still fixed
    if before is not None:
        assert bad.read_bytes() == before  # the bad one was left as it was


def test_a_check_with_a_bad_file_still_says_the_others_passed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_syntax_error(tmp_path)
    (tmp_path / "train.py").write_text(FIXED)
    result = runner.invoke(app, ["check", "--no-cache", "."])
    assert result.exit_code == 2
    assert len(error_lines(result.stderr)) == 1
    assert result.stderr.splitlines()[-1] == "No findings; 1 error(s) above."


def test_a_file_without_a_backward_pass_is_skipped_without_parsing(project):
    make_python2_without_a_backward_pass(project)
    result = runner.invoke(app, ["check", "."])
    assert "bad.py" not in result.stderr and result.exit_code == 1  # train.py's finding


@pytest.mark.parametrize(
    "content",
    [b"", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n", b"\n\n\n"],
    ids=["empty", "bom only", "declared latin-1", "blank lines"],
)
def test_unusual_but_valid_files_are_not_errors(project, content):
    (project / "odd.py").write_bytes(content)
    result = runner.invoke(app, ["check", "odd.py"])
    assert result.exit_code == 0, result.stderr


def test_an_unreadable_file_is_named(project, monkeypatch):
    (project / "secret.py").write_text("x = 1\n")
    read_bytes = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path.name == "secret.py":
            raise PermissionError(13, "Permission denied")
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = runner.invoke(app, ["check", "."])
    (line,) = error_lines(result.stderr)
    assert "secret.py: cannot read: Permission denied" in line
    assert result.exit_code == 2 and "train.py:16:14: LF001" in result.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_named_without_stubs(project):
    (project / "secret.py").write_text("x = 1\n")
    (project / "secret.py").chmod(0)
    result = runner.invoke(app, ["check", "."])
    assert "secret.py: cannot read" in result.stderr and result.exit_code == 2


def test_a_symlink_out_of_the_given_paths_is_never_written_through(tmp_path, monkeypatch):
    outside, inside = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir(), inside.mkdir()
    (outside / "train.py").write_text(BUGGY)
    (inside / "linked.py").symlink_to(outside / "train.py")
    monkeypatch.chdir(inside)
    result = runner.invoke(app, ["apply", "--no-verify", "."])
    assert "linked.py: a symlink to" in result.stderr and "outside the given paths" in result.stderr
    assert result.exit_code == 2
    assert (outside / "train.py").read_text() == BUGGY


def test_a_symlink_inside_is_fixed_once_through_its_target(project):
    (project / "alias.py").symlink_to(project / "train.py")
    result = runner.invoke(app, ["apply", "--no-verify", "."])
    assert result.exit_code == 0, result.stderr
    assert (project / "alias.py").is_symlink()
    assert (project / "train.py").read_text() == FIXED
    assert "Fixed 1 finding(s) in 1 file(s)." in result.stderr


def test_a_file_reached_through_overlapping_or_linked_folders_is_checked_once(project):
    (project / "sub").mkdir()
    (project / "sub" / "train.py").write_text(BUGGY)
    (project.parent / f"{project.name}-link").symlink_to(project, target_is_directory=True)
    linked = f"../{project.name}-link"
    result = runner.invoke(app, ["check", "--no-cache", ".", "sub", linked, f"{linked}/sub"])
    assert result.stdout.count("LF001") == 2, result.stdout  # train.py and sub/train.py


def test_a_file_over_the_limit_is_skipped_before_it_is_read(project, monkeypatch):
    (project / "big.py").write_bytes(b"#" * (MAX_SOURCE_BYTES + 1))
    monkeypatch.setattr(Path, "read_bytes", lambda path: pytest.fail(f"read {path}"))
    result = runner.invoke(app, ["check", "big.py"])
    assert "big.py: 4.0 MB, over the 4 MB limit; skipped" in result.stderr


def test_an_internal_error_in_one_rule_spares_the_other_rules_and_files(project, monkeypatch):
    (project / "gan.py").write_text(
        (CORPUS / "lf002_gan_generator_reuses_d_output" / "before.py").read_text()
    )

    def broken(context):
        raise KeyError("simulated bug")

    monkeypatch.setattr(rule_by_code("LF001"), "detect", broken)
    result = runner.invoke(app, ["check", "."])
    lines = error_lines(result.stderr)
    assert any("train.py: internal error in LF001: KeyError" in line for line in lines)
    assert "gan.py" in result.stdout and "LF002" in result.stdout
    assert result.exit_code == 2


def test_an_internal_error_in_the_loop_model_spares_the_other_files(project, monkeypatch):
    (project / "other.py").write_text(BUGGY.replace("hidden", "state"))
    build = analysis.FileContext.parse.__func__

    def flaky(cls, text, filename="<unknown>", *rest, **named):
        if filename.endswith("other.py"):
            raise IndexError("simulated bug")
        return build(cls, text, filename, *rest, **named)

    monkeypatch.setattr(analysis.FileContext, "parse", classmethod(flaky))
    result = runner.invoke(app, ["check", "."])
    (line,) = error_lines(result.stderr)
    assert "other.py: internal error while modelling loops: IndexError" in line
    assert "train.py:16:14: LF001" in result.stdout and result.exit_code == 2


def test_an_internal_error_checking_a_fix_drops_only_that_fix(project, monkeypatch):
    def broken(before, after, fixed):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(rule_by_code("LF001"), "accepts", broken)
    result = runner.invoke(app, ["apply", "--no-verify", "."])
    assert "internal error in LF001 checking its fix" in result.stderr
    assert (project / "train.py").read_text() == BUGGY and result.exit_code == 2


def test_a_named_file_without_a_backward_is_still_parsed_and_its_error_reported(tmp_path):
    broken = tmp_path / "helpers.py"
    broken.write_text("import os\n\ndef oops(:\n    pass\n")
    result = runner.invoke(app, ["check", "--no-cache", str(broken)])
    assert result.exit_code == 2
    assert f"{broken}:3:10: syntax error" in result.output
    walked = runner.invoke(app, ["check", "--no-cache", str(tmp_path)])  # not named: skipped
    assert walked.exit_code == 0, walked.output


def test_a_named_broken_module_that_a_named_file_imports_is_one_error_line(tmp_path, monkeypatch):
    """`check bad.py good.py` where `good.py` imports `bad`: the module's syntax error is
    named once, not once as given and again as the importer found it."""
    (tmp_path / "bad.py").write_text('print "hello"\n')
    (tmp_path / "good.py").write_text("import bad\n\n\ndef train(loss):\n    loss.backward()\n")
    monkeypatch.chdir(tmp_path)
    for order in (["bad.py", "good.py"], ["good.py", "bad.py"]):
        result = runner.invoke(app, ["check", "--no-cache", *order])
        assert result.exit_code == 2
        assert result.output.count("syntax error") == 1, result.output


def test_a_named_notebook_with_magics_is_no_syntax_error(tmp_path):
    import json

    cells = [["%matplotlib inline\n", "import os\n", "!ls\n", "files = !ls\n", "os?"]]
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for source in cells
        ],
    }
    path = tmp_path / "lesson.ipynb"
    path.write_text(json.dumps(notebook))
    result = runner.invoke(app, ["check", "--no-cache", str(path)])
    assert result.exit_code == 0, result.output
    notebook["cells"].append({**notebook["cells"][0], "source": ["def f(:\n", "    pass\n"]})
    path.write_text(json.dumps(notebook))
    broken = runner.invoke(app, ["check", "--no-cache", str(path)])
    assert broken.exit_code == 2 and f"{path}:cell 2:1:7: syntax error" in broken.output
