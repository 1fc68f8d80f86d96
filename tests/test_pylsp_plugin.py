"""The python-lsp-server plugin, through pylsp's own server and hook calls."""

from __future__ import annotations

import io
from importlib.metadata import entry_points

import pytest
from pylsp.python_lsp import PythonLSPServer

from corpus_cases import CORPUS

BEFORE = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
AFTER = (CORPUS / "lf001_gru_state_init_once" / "after.py").read_text()


@pytest.fixture
def pylsp(tmp_path):
    server = PythonLSPServer(io.BytesIO(), io.BytesIO())
    server.m_initialize(processId=None, rootUri=tmp_path.as_uri(), initializationOptions={})
    yield server
    server.m_shutdown()


def open_document(server: PythonLSPServer, path, text: str) -> str:
    uri = path.as_uri()
    server.workspace.put_document(uri, text)
    return uri


def apply(text: str, edits: list[dict]) -> str:
    lines = text.splitlines(keepends=True)

    def offset(position: dict) -> int:  # ASCII text: UTF-16 units are characters
        return sum(len(line) for line in lines[: position["line"]]) + position["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
    return text


def test_the_plugin_is_registered_under_the_pylsp_entry_point_group(pylsp):
    assert "loopfix" in {entry.name for entry in entry_points(group="pylsp")}
    assert "loopfix" in dict(pylsp.config.plugin_manager.list_name_plugin())


def test_lint_reports_the_finding_with_its_rule_and_severity(pylsp, tmp_path):
    uri = open_document(pylsp, tmp_path / "train.py", BEFORE)
    every = [d for batch in pylsp._hook("pylsp_lint", uri, is_saved=False) for d in batch]
    (diagnostic,) = [d for d in every if d["source"] == "loopfix"]
    assert diagnostic["code"] == "LF001" and diagnostic["range"]["start"]["line"] == 15
    assert diagnostic["severity"] == 1 and "hidden-state-not-detached" in diagnostic["message"]


def test_code_actions_carry_the_cli_fix(pylsp, tmp_path):
    uri = open_document(pylsp, tmp_path / "train.py", BEFORE)
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}
    actions = pylsp.code_actions(uri, everything, {"diagnostics": []})
    ours = [a for a in actions if a["title"].startswith("loopfix") and "Disable" not in a["title"]]
    detach, reset, fix_all = ours  # the preferred fix, its unsafe alternative, then fix-all
    assert detach["kind"] == reset["kind"] == "quickfix" and detach["isPreferred"]
    assert "unsafe fix" in reset["title"] and not reset.get("isPreferred")
    assert fix_all["kind"] == "source.fixAll.loopfix"
    for action in (detach, fix_all):
        assert apply(BEFORE, action["edit"]["changes"][uri]) == AFTER


def test_only_the_verify_command_is_answered(pylsp, tmp_path):
    uri = open_document(pylsp, tmp_path / "train.py", BEFORE)
    assert "loopfix.verify" in pylsp.capabilities()["executeCommandProvider"]["commands"]
    assert pylsp._hook("pylsp_execute_command", command="other.command", arguments=[]) in (
        None,
        [],
        [None],
    )
    summary = pylsp.execute_command("loopfix.verify", [uri])
    summary = summary if isinstance(summary, str) else next(s for s in summary if s)
    assert "LF001" in summary and "equivalent" in summary


def test_a_syntax_error_buffer_gives_no_diagnostics_and_no_crash(pylsp, tmp_path):
    uri = open_document(pylsp, tmp_path / "broken.py", "def oops(:\n    pass\n")
    ours = [d for batch in pylsp._hook("pylsp_lint", uri, is_saved=False) for d in batch]
    assert [d for d in ours if d.get("source") == "loopfix"] == []
