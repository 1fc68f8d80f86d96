"""The python-lsp-server plugin, through pylsp's own server and hook calls."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
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
    shown: list[str] = []
    pylsp.workspace.show_message = lambda message, *args: shown.append(message)
    answer = pylsp.execute_command("loopfix.verify", [uri])
    answer = answer if isinstance(answer, str) else next(s for s in answer if s)
    assert answer == "verification started"  # at once: the runs go on in a worker thread
    deadline = time.monotonic() + 120
    while not any("LF001" in m for m in shown) and time.monotonic() < deadline:
        time.sleep(0.1)
    (summary,) = [m for m in shown if "LF001" in m]
    assert "equivalent" in summary


def test_a_settings_error_is_shown_once(pylsp, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.loopfix]\nselect = ["XX9"]\n')
    shown: list[str] = []
    pylsp.workspace.show_message = lambda message, *args: shown.append(message)
    uri = open_document(pylsp, tmp_path / "train.py", BEFORE)
    for _ in range(3):
        pylsp._hook("pylsp_lint", uri, is_saved=False)
    errors = [m for m in shown if "unknown rule code" in m]
    assert len(errors) == 1 and "pyproject.toml" in errors[0]


def test_a_syntax_error_buffer_gives_no_diagnostics_and_no_crash(pylsp, tmp_path):
    uri = open_document(pylsp, tmp_path / "broken.py", "def oops(:\n    pass\n")
    ours = [d for batch in pylsp._hook("pylsp_lint", uri, is_saved=False) for d in batch]
    assert [d for d in ours if d.get("source") == "loopfix"] == []


class StdioClient:
    """A bare JSON-RPC client for a real `pylsp` on stdio (pylsp's answers are not all strict
    enough for lsprotocol's typed client)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pylsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.next_id = 0
        self.inbox: list[dict] = []  # everything read, in order
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:  # headers, up to the blank line
                header = stream.readline()
                if not header:
                    return
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
                if header in (b"\r\n", b"\n"):
                    break
            self.inbox.append(json.loads(stream.read(length)))

    def send(self, method: str, params: dict, request: bool = True) -> int | None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return message.get("id")

    def wait(self, found, timeout: float = 120) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in list(self.inbox):
                if found(message):
                    return message
            time.sleep(0.02)
        raise AssertionError(f"nothing came; got {self.inbox[-5:]}")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def test_pylsp_answers_while_loopfix_verifies(tmp_path):
    """Through a real pylsp on stdio: `loopfix.verify` answers at once, and a hover sent right
    after is answered before the verdicts arrive (as a message when the runs end)."""
    client = StdioClient()
    try:
        client.send(
            "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
        )
        client.wait(lambda m: m.get("id") == 1)
        client.send("initialized", {}, request=False)
        uri = (tmp_path / "train.py").as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": BEFORE}
        client.send("textDocument/didOpen", {"textDocument": document}, request=False)
        verify = client.send(
            "workspace/executeCommand", {"command": "loopfix.verify", "arguments": [uri]}
        )
        answer = client.wait(lambda m: m.get("id") == verify)
        assert answer["result"] == "verification started"
        position = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 7}}
        hover = client.send("textDocument/hover", position)
        client.wait(lambda m: m.get("id") == hover)

        def verdict(message: dict) -> bool:
            text = message.get("params", {}).get("message", "")
            return message.get("method") == "window/showMessage" and "LF001" in text

        order = [m for m in client.inbox if m.get("id") == hover or verdict(m)]
        assert "id" in order[0], "the hover must be answered before the verdicts arrive"
        assert "equivalent" in client.wait(verdict)["params"]["message"]
    finally:
        client.close()


def test_pylsp_lints_an_open_pyproject_and_the_plugin_marks_the_bad_key(tmp_path):
    """pylsp calls every plugin's lint on every document the client opens, `pyproject.toml`
    included (its own plugins read it as Python: only loopfix's diagnostics are looked at)."""
    client = StdioClient()
    try:
        client.send(
            "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
        )
        client.wait(lambda m: m.get("id") == 1)
        client.send("initialized", {}, request=False)
        uri = (tmp_path / "pyproject.toml").as_uri()
        text = '[project]\nname = "demo"\n\n[tool.loopfix]\nselect = ["XX9"]\n'
        document = {"uri": uri, "languageId": "toml", "version": 1, "text": text}
        client.send("textDocument/didOpen", {"textDocument": document}, request=False)

        def ours(version: int):
            def found(message: dict) -> bool:
                params = message.get("params", {})
                return (
                    message.get("method") == "textDocument/publishDiagnostics"
                    and params.get("uri") == uri
                    and params.get("version") == version
                )

            published = client.wait(found)["params"]["diagnostics"]
            return [d for d in published if d.get("source") == "loopfix"]

        (error,) = ours(1)
        assert error["range"]["start"] == {"line": 4, "character": 0}
        assert error["range"]["end"] == {"line": 4, "character": len("select")}
        assert error["message"].startswith("[tool.loopfix] select: unknown rule code 'XX9'")
        fixed = {"text": text.replace("XX9", "LF001")}
        identifier = {"uri": uri, "version": 2}
        change = {"textDocument": identifier, "contentChanges": [fixed]}
        client.send("textDocument/didChange", change, request=False)
        assert ours(2) == []
    finally:
        client.close()
