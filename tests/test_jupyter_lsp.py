"""JupyterLab's way to the language server, end to end: a real Jupyter server with the jupyter-lsp
extension finds `loopfix lsp` through its `jupyter_lsp_spec_v1` entry point, and this test
talks to it over jupyter-lsp's websocket as JupyterLab does (LSP JSON-RPC messages as bare
JSON text frames). The notebook goes over as JupyterLab sends it: one Python text under
`.virtual_documents` (the cells joined, blank lines between them, IPython magics rewritten as
calls), so its diagnostics must map back to the cell and line `loopfix check` names for the
`.ipynb`, and a quick fix's edit must stay within the cell and give what `loopfix apply`
writes into it.

How JupyterLab builds the text and the URI: `@jupyterlab/lsp`'s `VirtualDocument`
(`appendCodeBlock`: each cell's lines joined and ended with a newline, the cells joined with
two blank lines; a markdown cell contributes an empty line, its text going to a markdown
document) and `DocumentConnectionManager.solveUris` (a notebook's URI is its path under the
`virtualDocumentsUri` that jupyter-lsp puts in the page config); jupyterlab-lsp's IPython
overrides (`transclusions/ipython/overrides.ts`) for the magics.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from loopfix.lsp import jupyter as spec_module

from corpus_cases import CORPUS

TOKEN = "loopfix-test-token"
GAN = (CORPUS / "lf002_gan_generator_reuses_d_output" / "before.py").read_text()
HEAD, LOOP = GAN.split("for i in range(3):\n")
CELLS = [
    ("markdown", "# A GAN on toy data\n\nThe generator's update reuses D's output."),
    ("code", "%matplotlib inline\n!nvidia-smi\n" + HEAD.rstrip("\n")),
    ("code", "for i in range(3):\n" + LOOP.rstrip("\n")),
]
# a notebook in a folder, importing the networks from the package beside it
PACKAGE = CORPUS / "project_lf002_gan_nets_in_package" / "before"
SETUP, STEPS = (PACKAGE / "train_gan.py").read_text().split("for step in range(4):\n")
PACKAGE_CELLS = [("code", SETUP.rstrip("\n")), ("code", "for step in range(4):\n" + STEPS)]
WAIT = 20  # seconds for any one answer
# Seconds for the server to come up: a fresh virtual environment compiles jupyter_server's
# bytecode on first import, and under `pytest -n 2` on two cores that has taken over 20 s.
STARTUP_WAIT = 120


def notebook_json(cells) -> str:
    """An nbformat 4 notebook as Jupyter writes it (sources as lists of lines)."""
    entries = []
    for kind, source in cells:
        entry = {"cell_type": kind, "metadata": {}, "source": source.splitlines(True)}
        if kind == "code":
            entry.update(execution_count=None, outputs=[])
        entries.append(entry)
    document = {
        "cells": entries,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python", "file_extension": ".py"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def ipython_line(line: str) -> str:
    """jupyterlab-lsp's IPython line overrides for `%magic args` and `!command` lines."""
    shell = re.match(r"^(\s*)!([^=\s]+)(.*)$", line)
    if shell:
        return f'{shell[1]}get_ipython().getoutput("{shell[2]}{shell[3]}")'
    magic = re.match(r"^(\s*)%(\S+)(.*)$", line)
    if magic:
        args = re.sub(r'(["\\])', r"\\\1", magic[3])
        return f'{magic[1]}get_ipython().run_line_magic("{magic[2]}", "{args}")'
    return line


def virtual_document(cells) -> tuple[str, list[int], list[int]]:
    """The text JupyterLab sends for the notebook; the first line of each cell in it, and the
    offset where each cell's text begins."""
    blocks, starts, offsets, line, offset = [], [], [], 0, 0
    for kind, source in cells:
        lines = [ipython_line(x) for x in source.split("\n")] if kind == "code" else [""]
        starts.append(line)
        offsets.append(offset)
        blocks.append("\n".join(lines) + "\n")
        line += len(lines) + 2  # the block's lines, then two blank lines
        offset += len(blocks[-1]) + 2
    return "\n\n".join(blocks), starts, offsets


def cell_of(starts: list[int], cells, line: int) -> tuple[int, int]:
    """(cell index from 0, line in the cell from 0) of a line of the virtual document; a line
    between cells is no cell's (JupyterLab has nowhere to show it)."""
    for index in reversed(range(len(starts))):
        if line >= starts[index]:
            offset = line - starts[index]
            assert offset < len(cells[index][1].split("\n")), f"line {line} is between cells"
            return index, offset
    raise AssertionError(f"line {line} precedes the first cell")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_json(url: str):
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    """A Jupyter server with jupyter-lsp over a temporary root holding `gan.ipynb`; its own
    config, data and runtime folders, so no user setting takes part."""
    for module in ("jupyter_server", "jupyter_lsp"):
        pytest.importorskip(module, reason=f"{module} is not installed (loopfix[jupyter])")
    base = tmp_path_factory.mktemp("jupyter")
    root, config = base / "root", base / "config"
    root.mkdir()
    config.mkdir()
    (root / "gan.ipynb").write_text(notebook_json(CELLS))
    shutil.copytree(PACKAGE / "gan", root / "sub" / "gan")
    (root / "sub" / "train.ipynb").write_text(notebook_json(PACKAGE_CELLS))
    port = free_port()
    settings = {
        "ServerApp": {
            "ip": "127.0.0.1",
            "port": port,
            "port_retries": 0,
            "open_browser": False,
            "allow_root": True,  # CI containers run as root
            "root_dir": str(root),
            "jpserver_extensions": {"jupyter_lsp": True},
        },
        "IdentityProvider": {"token": TOKEN},
    }
    (config / "jupyter_server_config.json").write_text(json.dumps(settings))
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
    )
    env.pop("JP_LSP_VIRTUAL_DIR", None)
    log = (base / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server"], cwd=base, env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_WAIT
    status = None
    while status is None:
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.fail("jupyter server did not start:\n" + (base / "server.log").read_text())
        try:
            status = get_json(f"{url}/lsp/status")
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    yield {"url": url, "port": port, "root": root, "status": status, "log": base / "server.log"}
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    log.close()


class Client:
    """JupyterLab's end of `/lsp/ws/<server>`: each LSP message one JSON text frame."""

    def __init__(self, connection) -> None:
        self.connection = connection
        self.next_id = 0
        self.frames: list[str] = []  # every frame received, as it came
        self.notifications: list[dict] = []

    async def send(self, message: dict) -> None:
        await self.connection.write_message(json.dumps({"jsonrpc": "2.0", **message}))

    async def notify(self, method: str, params) -> None:
        await self.send({"method": method, "params": params})

    async def receive(self) -> dict:
        frame = await asyncio.wait_for(self.connection.read_message(), WAIT)
        assert frame is not None, "the websocket closed"
        self.frames.append(frame)
        message = json.loads(frame)  # a bare JSON-RPC message: no Content-Length header
        if "method" in message and "id" in message:  # a request from the server
            await self.send({"id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)
        return message

    async def request(self, method: str, params) -> dict:
        self.next_id += 1
        number = self.next_id
        await self.send({"id": number, "method": method, "params": params})
        while True:
            message = await self.receive()
            if message.get("id") == number and "method" not in message:
                assert "error" not in message, message
                return message["result"]

    async def diagnostics(self, uri: str) -> list[dict]:
        """The diagnostics first published for `uri` (its whole text came with didOpen)."""
        while True:
            for message in self.notifications:
                if message["method"] == "textDocument/publishDiagnostics":
                    params = message["params"]
                    if params["uri"] == uri:
                        return params["diagnostics"]
            self.notifications.clear()
            await self.receive()


async def open_notebook(client: Client, root: Path, name: str, cells) -> tuple[str, str, list]:
    """Open the notebook `name` as JupyterLab does (`sendOpen`: didOpen, then the whole text
    again as a change); its URI, its text and the diagnostics first published for it."""
    uri = (root / ".virtual_documents" / name).as_uri()
    text = virtual_document(cells)[0]
    item = {"uri": uri, "languageId": "python", "version": 0, "text": text}
    await client.notify("textDocument/didOpen", {"textDocument": item})
    change = {"textDocument": {"uri": uri, "version": 0}, "contentChanges": [{"text": text}]}
    await client.notify("textDocument/didChange", change)
    return uri, text, await client.diagnostics(uri)


# what JupyterLab 4's LSP client sends (`LSPConnection.initializeParams`): the capabilities of
# its features (here jupyterlab-lsp's diagnostics), rootUri the virtual documents folder
def initialize_params(root_uri: str) -> dict:
    diagnostics = {"publishDiagnostics": {"tagSupport": {"valueSet": [1, 2]}}}
    return {
        "capabilities": {"textDocument": diagnostics},
        "initializationOptions": None,
        "processId": None,
        "rootUri": root_uri,
        "workspaceFolders": None,
    }


def check_json(folder: Path, name: str) -> list[dict]:
    command = [sys.executable, "-m", "loopfix", "check", "--no-cache", "--format", "json", name]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def apply_edits(text: str, edits: list[dict]) -> str:
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: dict) -> int:  # ASCII text: UTF-16 units are characters
        return starts[position["line"]] + position["character"]

    spans = [(offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def test_jupyter_lsp_finds_the_spec(jupyter):
    (entry,) = [e for e in entry_points(group="jupyter_lsp_spec_v1") if e.name == "loopfix"]
    spec = entry.load()(None)["loopfix"]
    assert spec["argv"] == [sys.executable, "-m", "loopfix", "lsp"]  # this very interpreter
    status = jupyter["status"]  # what JupyterLab reads (`argv` is censored there)
    shown = status["specs"]["loopfix"]
    assert (shown["display_name"], shown["languages"]) == ("loopfix", ["python"])
    assert shown["requires_documents_on_disk"] is False
    assert status["sessions"]["loopfix"]["status"] == "not_started"  # started on connection


@pytest.mark.asyncio
async def test_a_notebook_sent_as_jupyterlab_sends_it_gets_cell_mapped_diagnostics(
    jupyter, tmp_path
):
    from tornado.httpclient import HTTPRequest  # tornado comes with jupyter_server
    from tornado.websocket import websocket_connect

    root = jupyter["root"]
    _, starts, offsets = virtual_document(CELLS)
    socket_url = f"ws://127.0.0.1:{jupyter['port']}/lsp/ws/loopfix?token={TOKEN}"
    connection = await asyncio.wait_for(websocket_connect(HTTPRequest(socket_url)), WAIT)
    client = Client(connection)
    try:
        virtual_root = (root / ".virtual_documents").as_uri()
        result = await client.request("initialize", initialize_params(virtual_root))
        assert result["serverInfo"]["name"] == "loopfix"
        assert result["capabilities"]["codeActionProvider"]
        session = get_json(f"{jupyter['url']}/lsp/status")["sessions"]["loopfix"]
        assert (session["status"], session["handler_count"]) == ("started", 1)
        await client.notify("initialized", {})
        await client.notify("workspace/didChangeConfiguration", {"settings": {}})
        uri, text, (diagnostic,) = await open_notebook(client, root, "gan.ipynb", CELLS)
        assert all(frame.lstrip().startswith("{") for frame in client.frames)

        # the cell and line JupyterLab shows it at are those `loopfix check` names
        (row,) = check_json(root, "gan.ipynb")
        assert (row["rule"], row["cell"], row["line"]) == ("LF002", 3, 15)
        assert diagnostic["code"] == "LF002" and diagnostic["source"] == "loopfix"
        start, end = diagnostic["range"]["start"], diagnostic["range"]["end"]
        cell, line = cell_of(starts, CELLS, start["line"])
        assert (cell + 1, line + 1, start["character"] + 1) == (3, 15, row["column"])
        assert cell_of(starts, CELLS, end["line"])[0] == cell
        loop = CELLS[cell][1].split("\n")
        assert loop[line][start["character"] : end["character"]] == "errG.backward()"

        # the quick fix edits only that cell, and gives the cell `loopfix apply` writes
        context = {"diagnostics": [diagnostic], "only": ["quickfix"]}
        params = {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": context}
        actions = await client.request("textDocument/codeAction", params)
        (fix,) = [a for a in actions if a.get("isPreferred")]
        edits = fix["edit"]["changes"][uri]
        cell_lines = len(CELLS[cell][1].split("\n"))
        block_end = {"line": starts[cell] + cell_lines, "character": 0}  # after its newline
        for edit in edits:
            assert cell_of(starts, CELLS, edit["range"]["start"]["line"])[0] == cell
            if edit["range"]["end"] != block_end:  # whole lines replaced, the last one's too
                assert cell_of(starts, CELLS, edit["range"]["end"]["line"])[0] == cell
        begin = offsets[cell]  # the code cell has no magic: its text is the cell's source
        after = text[begin + len(CELLS[cell][1]) :]  # its block's newline, the cells after it
        edited = apply_edits(text, edits)
        assert edited[:begin] == text[:begin] and edited.endswith(after)
        fixed_cell = edited[begin : len(edited) - len(after)]
        applied = tmp_path / "gan.ipynb"
        shutil.copy(root / "gan.ipynb", applied)
        command = [sys.executable, "-m", "loopfix", "apply", "--no-verify", "gan.ipynb"]
        subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=60, check=True)
        written = json.loads(applied.read_text())["cells"][cell]
        assert fixed_cell == "".join(written["source"])
        assert fixed_cell != CELLS[cell][1]

        # a notebook in a folder is analysed where it is: `from gan import ...` is the
        # package beside it (not beside its virtual document), as for `loopfix check`
        name = "sub/train.ipynb"
        _, _, (diagnostic,) = await open_notebook(client, root, name, PACKAGE_CELLS)
        (row,) = check_json(root, name)
        assert (row["rule"], row["cell"], row["line"]) == ("LF002", 2, 11)
        _, starts, _ = virtual_document(PACKAGE_CELLS)
        cell, line = cell_of(starts, PACKAGE_CELLS, diagnostic["range"]["start"]["line"])
        assert (diagnostic["code"], cell + 1, line + 1) == ("LF002", 2, 11)

        # settings from Settings → Language Servers (`serverSettings`) apply to open notebooks
        client.notifications.clear()
        ignore = {"settings": {"loopfix": {"ignore": ["LF002"]}}}
        await client.notify("workspace/didChangeConfiguration", ignore)
        assert await client.diagnostics(uri) == []
    finally:
        connection.close()
    # the spec says the server reads the text from memory: jupyter-lsp wrote no shadow copy
    assert not (root / ".virtual_documents" / "gan.ipynb").exists()


def test_a_virtual_document_is_at_its_notebooks_path(tmp_path, monkeypatch):
    monkeypatch.delenv(spec_module.ROOT_ENV, raising=False)
    monkeypatch.delenv(spec_module.VIRTUAL_ENV, raising=False)
    real_path = spec_module.real_path
    # without the spec's environment (the pylsp plugin under jupyter-lsp): the default name
    assert real_path(tmp_path / ".virtual_documents/sub/nb.ipynb") == tmp_path / "sub/nb.ipynb"
    assert real_path(tmp_path / "sub/train.py") == tmp_path / "sub/train.py"
    assert real_path(tmp_path / ".virtual_documents") == tmp_path / ".virtual_documents"

    class Contents:
        root_dir = str(tmp_path / "root")

    class Manager:  # what the spec reads of jupyter-lsp's LanguageServerManager
        parent = type("ServerApp", (), {"contents_manager": Contents()})()
        virtual_documents_dir = "../lsp-documents"  # anywhere, relative to the server root

    env = spec_module.spec(Manager())["loopfix"]["env"]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert real_path(tmp_path / "lsp-documents/sub/nb.ipynb") == tmp_path / "root/sub/nb.ipynb"
    outside = tmp_path / "root/.virtual_documents/nb.ipynb"  # not that server's folder
    assert real_path(outside) == outside


def test_a_line_magic_without_its_percent_sign_leaves_the_notebook_analysed(tmp_path, monkeypatch):
    """`cd 'Colab Notebooks'` (IPython's automagic, which Colab notebooks lean on) reaches the
    server as the cell has it: jupyterlab-lsp rewrites only lines starting with `%` or `!`.
    The notebook is analysed as if the line were a comment, and the quick fix leaves the line
    as it is and changes what it changes without it."""
    from loopfix.edits import apply_edits
    from loopfix.lsp.features import analyse_buffer, planned_edits

    monkeypatch.delenv(spec_module.ROOT_ENV, raising=False)
    monkeypatch.delenv(spec_module.VIRTUAL_ENV, raising=False)
    uri = (tmp_path / ".virtual_documents" / "gan.ipynb").as_uri()
    magic = "cd 'Colab Notebooks'\n"
    cells = HEAD.rstrip("\n") + "\n\n\nfor i in range(3):\n" + LOOP
    plain = analyse_buffer(uri, cells)
    analysis = analyse_buffer(uri, magic + cells)
    assert analysis.error is None
    assert [f.rule for f in analysis.findings] == [f.rule for f in plain.findings] == ["LF002"]
    fixed = apply_edits(analysis.text, planned_edits(analysis))
    assert fixed == magic + plain.result.fixed_text != magic + cells
