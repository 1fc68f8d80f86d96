"""The VS Code extension (editors/vscode), end to end in a real VS Code: code-server with the
built `.vsix` installed, driven by headless Chromium through Playwright. Each test opens a
folder holding a corpus case's buggy script, waits for the server's diagnostic, and acts as a
user would (a quick fix, a command from the palette); the file saved to disk must be what
`loopfix apply` writes on a copy.

`editors/vscode/build.sh --e2e` (run by `.ci/run`) builds the `.vsix` and installs code-server
(with the Node it needs) under `.cache/editors/tools`; Chromium is Debian's. A test is skipped
only when one of these is missing, with the reason (the build script's, when it recorded one).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "editors" / "vscode"
VSIX = EXTENSION / "loopfix.vsix"
TOOLS = ROOT / ".cache" / "editors" / "tools"
SKIP_REASON = ROOT / ".cache" / "editors" / "skip-reason.txt"
CODE_SERVER = TOOLS / "node_modules" / ".bin" / "code-server"
LOOPFIX = Path(sys.executable).with_name("loopfix")

LSTM = ROOT / "corpus" / "lf001_lstm_word_lm_slicing" / "before.py"  # one LF001
VAEGAN = ROOT / "corpus" / "lf002_vaegan_three_optimizers" / "before.py"  # two LF002

pytestmark = pytest.mark.slow

# two minutes for what takes seconds: the machine may be busy with other tests
WAIT_MS = 120_000


def _missing() -> str | None:
    """Why the end-to-end tests cannot run here, or None."""
    recorded = SKIP_REASON.read_text().strip() if SKIP_REASON.exists() else ""
    hint = recorded or "run `editors/vscode/build.sh --e2e` to install them"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return f"playwright is not installed (the `dev` extra has it); {hint}"
    if _chromium() is None:
        return f"chromium is not installed (`apt-get install chromium`); {hint}"
    if not CODE_SERVER.exists():
        return f"code-server is not installed in {CODE_SERVER.parent}; {hint}"
    if not VSIX.exists():
        return f"the extension is not built ({VSIX} is missing); {hint}"
    return None


def _chromium() -> str | None:
    return os.environ.get("LOOPFIX_CHROMIUM") or shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Workbench:
    """One code-server serving one folder, with the extension installed, and a page on it."""

    def __init__(self, base: Path, settings: dict, also: tuple[Path, ...] = ()) -> None:
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.folder = base / "project"
        self.folder.mkdir()
        user = base / "user-data"
        (user / "User").mkdir(parents=True)
        settings = {
            "security.workspace.trust.enabled": False,  # else Restricted Mode: no extensions
            "workbench.startupEditor": "none",
            "workbench.secondarySideBar.defaultVisibility": "hidden",
            "workbench.tips.enabled": False,
            "extensions.ignoreRecommendations": True,
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "update.mode": "none",
            "telemetry.telemetryLevel": "off",
            "chat.disableAIFeatures": True,
            "files.autoSave": "off",  # the tests save, as a user does
            **settings,
        }
        (user / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
        extensions = base / "extensions"
        env = {**os.environ, "CODE_SERVER_CONFIG": str(base / "code-server.yaml")}
        env["PATH"] = f"{CODE_SERVER.parent}{os.pathsep}{env.get('PATH', '')}"
        self.env = env
        common = ["--user-data-dir", str(user), "--extensions-dir", str(extensions)]
        installing = [arg for vsix in (VSIX, *also) for arg in ("--install-extension", str(vsix))]
        installed = subprocess.run(
            [str(CODE_SERVER), *common, *installing],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
        self.port = _free_port()
        self.log = (base / "code-server.log").open("w")
        self.process = subprocess.Popen(
            [str(CODE_SERVER), *common, "--auth", "none", "--disable-telemetry"]
            + ["--disable-update-check", "--bind-addr", f"127.0.0.1:{self.port}"]
            + [str(self.folder)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its extension host and servers go with it
        )
        self._wait_healthy()
        self.playwright = None
        self.browser = None
        self.page = None

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + WAIT_MS / 1000
        url = f"http://127.0.0.1:{self.port}/healthz"
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.server_log()
            with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
            time.sleep(0.25)
        raise AssertionError(f"code-server did not answer\n{self.server_log()}")

    def server_log(self) -> str:
        self.log.flush()
        return (self.base / "code-server.log").read_text()

    def launch(self):
        from playwright.sync_api import sync_playwright

        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=_chromium())
        self.page = self.browser.new_page(viewport={"width": 1400, "height": 900})
        self.page.set_default_timeout(WAIT_MS)
        self.page.goto(f"http://127.0.0.1:{self.port}/?folder={self.folder}")
        self.page.wait_for_selector(".monaco-workbench")
        return self.page

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.page is not None:
                self.page.screenshot(path=str(self.base / "last.png"))
        with contextlib.suppress(Exception):
            if self.browser is not None:
                self.browser.close()
        with contextlib.suppress(Exception):
            if self.playwright is not None:
                self.playwright.stop()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)
        self.log.close()

    # -- what a user does -----------------------------------------------------------------
    def open(self, name: str) -> None:
        self.page.get_by_role("treeitem", name=name).click()
        self.page.locator(".tab.active", has_text=name).wait_for()
        self.page.locator(".monaco-editor .view-lines").first.wait_for()

    def wait_for_diagnostic(self) -> None:
        squiggle = ".monaco-editor .squiggly-error, .monaco-editor .squiggly-warning"
        self.page.locator(squiggle).first.wait_for()

    def focus_editor(self) -> None:
        self.page.locator(".monaco-editor .view-lines").first.click()

    def run_command(self, title: str) -> None:
        """The command palette (F1), the command by its title, Enter."""
        self.focus_editor()
        self.page.keyboard.press("F1")
        box = self.page.locator(".quick-input-widget input")
        box.wait_for()
        box.fill(f">{title}")
        self.page.locator(".quick-input-list .monaco-list-row", has_text=title).first.wait_for()
        self.page.keyboard.press("Enter")

    def notification(self, text: str):
        toast = self.page.locator(".notifications-toasts .notification-toast", has_text=text)
        toast.first.wait_for()
        return toast.first.inner_text()

    def quick_fixes(self):
        """The quick-fix menu at the first problem (F8 goes there, Ctrl+. opens it): its
        rows. Tried again when the menu does not open (a key pressed while the editor was
        still busy)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        rows = self.page.locator(".action-widget .monaco-list-row")
        for _ in range(5):
            self.focus_editor()
            self.page.keyboard.press("F8")  # to the finding (its peek opens)
            self.page.locator(".peekview-widget, .marker-widget").first.wait_for()
            self.page.keyboard.press("Escape")
            self.page.keyboard.press("Control+Period")
            try:
                rows.filter(has_text="loopfix:").first.wait_for(timeout=15_000)
                return rows
            except PlaywrightTimeout:
                self.page.keyboard.press("Escape")
        rows.filter(has_text="loopfix:").first.wait_for()
        return rows

    def save(self) -> None:
        self.focus_editor()
        self.page.keyboard.press("Control+S")
        self.page.locator(".tab.active.dirty").wait_for(state="detached")


FAKE_PYTHON_EXTENSION = """
const vscode = require("vscode");
exports.activate = () => ({
  environments: {
    getActiveEnvironmentPath: () => ({ id: "selected", path: PYTHON }),
    resolveEnvironment: async () => ({ executable: { uri: vscode.Uri.file(PYTHON) } }),
    onDidChangeActiveEnvironmentPath: new vscode.EventEmitter().event,
  },
});
"""


def python_extension_vsix(folder: Path, python: str) -> Path:
    """A stand-in for ms-python.python whose `environments` API selects `python`."""
    manifest = {
        "name": "python",
        "publisher": "ms-python",
        "version": "2099.0.0",
        "engines": {"vscode": "^1.82.0"},
        "main": "./extension.js",
        "extensionKind": ["workspace"],
    }
    vsix = folder / "python.vsix"
    with zipfile.ZipFile(vsix, "w") as archive:
        archive.writestr("extension/package.json", json.dumps(manifest))
        script = f"const PYTHON = {json.dumps(python)};\n{FAKE_PYTHON_EXTENSION}"
        archive.writestr("extension/extension.js", script)
        archive.writestr(
            "extension.vsixmanifest",
            '<?xml version="1.0" encoding="utf-8"?><PackageManifest Version="2.0.0" '
            'xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011"><Metadata>'
            '<Identity Language="en-US" Id="python" Version="2099.0.0" Publisher="ms-python"/>'
            "<DisplayName>python</DisplayName></Metadata><Installation><InstallationTarget "
            'Id="Microsoft.VisualStudio.Code"/></Installation><Dependencies/><Assets><Asset '
            'Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" '
            'Addressable="true"/></Assets></PackageManifest>',
        )
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.'
            'org/package/2006/content-types"><Default Extension=".js" ContentType="application/'
            'javascript"/><Default Extension=".json" ContentType="application/json"/><Default '
            'Extension=".vsixmanifest" ContentType="text/xml"/></Types>',
        )
    return vsix


def _started(tmp_path: Path, settings: dict, also: tuple[Path, ...] = ()) -> Workbench:
    reason = _missing()
    if reason:
        pytest.skip(reason)
    return Workbench(tmp_path, settings, also)


@pytest.fixture
def workbench(tmp_path):
    bench = _started(tmp_path, {"loopfix.interpreter": sys.executable})
    try:
        yield bench
    finally:
        bench.close()


def expected_after_apply(script: Path, tmp_path: Path) -> bytes:
    """What `loopfix apply` (verifying) writes on a copy of `script`."""
    folder = tmp_path / "apply"
    folder.mkdir()
    copy = folder / "train.py"
    shutil.copyfile(script, copy)
    done = subprocess.run(
        [str(LOOPFIX), "apply", str(copy)], capture_output=True, text=True, cwd=folder
    )
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = copy.read_bytes()
    assert fixed != script.read_bytes()
    return fixed


def wait_for_disk(path: Path, original: bytes, expected: bytes) -> bytes:
    """The saved file once it is `expected`, or what it holds after a short settling time
    once it has changed (a save read half-written is not taken for the result)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    changed_at = None
    while time.monotonic() < deadline:
        data = path.read_bytes()
        if data == expected:
            return data
        if data != original:
            changed_at = changed_at or time.monotonic()
            if time.monotonic() - changed_at > 5:
                return data
        time.sleep(0.2)
    raise AssertionError(f"{path.name} was not saved")


def test_quick_fix_writes_what_apply_writes(workbench, tmp_path):
    script = workbench.folder / "train.py"
    shutil.copyfile(LSTM, script)
    original = script.read_bytes()
    expected = expected_after_apply(LSTM, tmp_path)
    page = workbench.launch()
    workbench.open("train.py")
    workbench.wait_for_diagnostic()
    rows = workbench.quick_fixes()
    titles = rows.all_inner_texts()
    # the safe fix, the alternative (titled unsafe, saying what it changes), and noqa
    assert any("(LF001)" in t and t.startswith("loopfix: Detach") for t in titles), titles
    assert any("unsafe fix:" in t for t in titles), titles
    assert any(t.startswith("loopfix: Disable LF001 for this line") for t in titles), titles
    rows.filter(has_text="loopfix: Detach").first.click()
    page.locator(".tab.active.dirty").wait_for()
    workbench.save()
    assert wait_for_disk(script, original, expected) == expected


def test_fix_all_command_writes_what_apply_writes(workbench, tmp_path):
    script = workbench.folder / "train.py"
    shutil.copyfile(VAEGAN, script)
    original = script.read_bytes()
    expected = expected_after_apply(VAEGAN, tmp_path)
    workbench.launch()
    workbench.open("train.py")
    workbench.wait_for_diagnostic()
    workbench.run_command("loopfix: Fix all in this file")
    workbench.page.locator(".tab.active.dirty").wait_for()
    workbench.save()
    assert wait_for_disk(script, original, expected) == expected


def test_verify_command_reports_the_verdicts_with_progress(workbench):
    shutil.copyfile(LSTM, workbench.folder / "train.py")
    page = workbench.launch()
    workbench.open("train.py")
    workbench.wait_for_diagnostic()
    workbench.run_command("loopfix: Verify fixes in this file")
    # the server's work-done progress, in the status bar, while it runs
    page.locator(".statusbar", has_text="verifying rewrites").wait_for()
    verdict = workbench.notification("LF001 line 35")
    assert "equivalent" in verdict, verdict


def test_diagnose_command_explains_the_crash(workbench):
    shutil.copyfile(LSTM, workbench.folder / "train.py")
    page = workbench.launch()
    workbench.open("train.py")
    workbench.wait_for_diagnostic()
    workbench.run_command("loopfix: Diagnose this script")
    summary = workbench.notification("loopfix diagnose:")
    assert "backward" in summary.lower(), summary
    # the explanation is a diagnostic too, beside the finding
    page.keyboard.press("Control+Shift+M")
    page.locator(".markers-panel .monaco-list-row", has_text="loopfix diagnose").first.wait_for()


def test_missing_loopfix_names_the_interpreter(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = bare / "bin" / "python"
    bench = _started(tmp_path / "bench", {"loopfix.interpreter": str(python)})
    try:
        shutil.copyfile(LSTM, bench.folder / "train.py")
        bench.launch()
        bench.open("train.py")
        message = bench.notification("loopfix is not installed")
        assert f"the Python environment {python}" in message, message
        assert "loopfix.interpreter" in message, message
    finally:
        bench.close()


def test_the_python_extensions_selected_environment_starts_the_server(tmp_path):
    """With no loopfix setting, the interpreter the Python extension selected runs the
    server (here a stand-in for ms-python.python with its `environments` API)."""
    (tmp_path / "vsix").mkdir()
    vsix = python_extension_vsix(tmp_path / "vsix", sys.executable)
    bench = _started(tmp_path / "bench", {}, also=(vsix,))
    try:
        shutil.copyfile(LSTM, bench.folder / "train.py")
        bench.launch()
        bench.open("train.py")
        bench.wait_for_diagnostic()
        logs = list((bench.base / "user-data" / "logs").rglob("loopfix.loopfix/loopfix.log"))
        started = "".join(log.read_text() for log in logs)
        expected = f"starting {sys.executable} -m loopfix lsp (from the Python extension"
        assert expected in started, started
    finally:
        bench.close()
