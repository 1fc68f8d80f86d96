"""`loopfix lsp`: a language server on stdio (pygls).

Diagnostics are pushed on open, change and save, and served on pull (`textDocument/diagnostic`)
when the client asks; code actions offer a quick fix per fixable finding and
`source.fixAll.loopfix`; the `loopfix.verify` command runs the verification harness on the
buffer in a worker thread, reporting through work-done progress and a message, so diagnostics
keep flowing meanwhile. Settings come from `[tool.loopfix]` and, over it, from the client's
`initializationOptions` and `workspace/didChangeConfiguration`; an open `pyproject.toml` gets
its `[tool.loopfix]` error as a diagnostic on the key at fault, and saving it re-analyses every
open document. A buffer that cannot be analysed (a syntax error), or an internal error in a
rule, is logged; the server keeps serving.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from loopfix import __version__
from loopfix.config import Config, ConfigError, find_config, with_overrides
from loopfix.parse import ChunkParser
from loopfix.project import Project, find_root, read_disk, unchanged

from . import features


class LoopfixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "loopfix", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental
        )
        self.client_settings: dict = {}
        self.analyses: dict[str, features.BufferAnalysis] = {}  # findings only
        self.plans: dict[str, features.BufferAnalysis] = {}  # findings with planned fixes
        self.parsers: dict[str, ChunkParser] = {}  # per document: unchanged statements reused
        self.project_configs: dict[Path, tuple[Config, tuple]] = {}
        self.projects: dict[Path, Project] = {}  # by root; modules read from buffers first
        self.shown: set[str] = set()  # settings errors already shown to the user
        # uri -> (document version, diagnostics of its last `loopfix.diagnose` run)
        self.diagnosed: dict[str, tuple] = {}
        self._opened: tuple[set[str], dict[str, Path]] | None = None  # see `open_documents`

    # -- settings -----------------------------------------------------------------------
    def config_for(self, uri: str) -> Config:
        """The project's settings (read again when a `pyproject.toml` above the document
        changes) with the client's over them."""
        folder = features.uri_to_path(uri).parent
        stamp = _pyproject_stamp(folder)
        cached = self.project_configs.get(folder)
        if cached is None or cached[1] != stamp:
            try:
                cached = (find_config(folder), stamp)
            except ConfigError as error:
                self.warn_once(str(error))
                cached = (Config(), stamp)
            self.project_configs[folder] = cached
        config = cached[0]
        if not self.client_settings:
            return config
        try:
            return with_overrides(config, self.client_settings, "client settings")
        except ConfigError as error:
            self.warn_once(str(error))
            return config

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    # -- the project ----------------------------------------------------------------------
    def project_for(self, uri: str) -> Project:
        root = find_root(features.uri_to_path(uri))
        if root not in self.projects:
            self.projects[root] = Project(root, self.read_module)
        return self.projects[root]

    def read_module(self, path: Path) -> str | None:
        """A module's text: the editor's buffer when it is open (unsaved edits count), else
        the disk."""
        documents, document = self.open_documents(), None
        if any(opened.name == path.name for opened in documents):  # resolved only then
            document = documents.get(path) or documents.get(path.resolve())
        return document.source if document is not None else read_disk(path)

    def open_documents(self) -> dict:
        """The open documents by resolved path (resolved once per set of open documents)."""
        opened = self.workspace.text_documents
        if self._opened is None or self._opened[0] != opened.keys():
            paths = {uri: features.uri_to_path(uri).resolve() for uri in opened}
            self._opened = (set(opened.keys()), paths)
        return {path: opened[uri] for uri, path in self._opened[1].items()}

    def dependents_of(self, uri: str) -> list[str]:
        """Open documents whose last analysis looked into the module `uri` is."""
        path = str(features.uri_to_path(uri).resolve())
        return [
            other
            for other, analysis in self.analyses.items()
            if other != uri and analysis.result is not None and path in analysis.result.dependencies
        ]

    def _dependencies_unchanged(self, analysis: features.BufferAnalysis) -> bool:
        if analysis.result is None:
            return True
        return unchanged(analysis.result.dependencies, self.read_module)

    # -- analysis -----------------------------------------------------------------------
    def analyse(self, uri: str, plan_fixes: bool = False) -> features.BufferAnalysis:
        """The buffer's analysis, cached per text (and the texts of the project modules it
        looked into): findings only for diagnostics (fast), with the planned fixes for code
        actions and verification."""
        document = self.workspace.get_text_document(uri)
        cache = self.plans if plan_fixes else self.analyses
        cached = cache.get(uri)
        if (
            cached is not None
            and cached.text == document.source
            and self._dependencies_unchanged(cached)
        ):
            return cached
        config = self.config_for(uri)
        parser = self.parsers.setdefault(uri, ChunkParser())
        project = self.project_for(uri)
        project.next_epoch()  # a module this one reaches may have been edited since
        analysis = features.analyse_buffer(
            uri, document.source, config, plan_fixes, parser, project
        )
        if not plan_fixes or analysis.result is None:
            for message in analysis.messages:
                self.log(types.MessageType.Warning, message)
        cache[uri] = analysis
        return analysis

    def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """A Python buffer's findings (and the last `loopfix.diagnose` of this version); a
        `pyproject.toml` buffer's `[tool.loopfix]` error."""
        if features.is_settings_file(uri):
            text = self.workspace.get_text_document(uri).source
            return features.settings_diagnostics(text, self.encoding)
        version = self.workspace.get_text_document(uri).version
        diagnosed = self.diagnosed.get(uri)
        extra = diagnosed[1] if diagnosed and diagnosed[0] == version else []
        return features.diagnostics(self.analyse(uri), self.encoding) + extra

    def publish(self, uri: str) -> None:
        found = self.diagnostics(uri)
        version = self.workspace.get_text_document(uri).version
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version)
        self.text_document_publish_diagnostics(params)

    def log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=f"loopfix: {message}"))

    def warn_once(self, message: str) -> None:
        """A settings error: logged each time, shown to the user once (the defaults apply)."""
        self.log(types.MessageType.Error, message)
        if message not in self.shown:
            self.shown.add(message)
            text = f"loopfix: {message} (using the defaults)"
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=text)
            )


def _pyproject_stamp(folder: Path) -> tuple:
    """When each `pyproject.toml` from `folder` up to the repository root last changed."""
    stamp = []
    for candidate in [folder, *folder.parents]:
        with contextlib.suppress(OSError):
            stamp.append((str(candidate), (candidate / "pyproject.toml").stat().st_mtime_ns))
        if (candidate / ".git").exists():
            break
    return tuple(stamp)


server = LoopfixServer()


def _pulls(ls: LoopfixServer) -> bool:
    """Whether the client pulls diagnostics (then pushing them too would duplicate them)."""
    document = ls.client_capabilities.text_document
    return bool(document and document.diagnostic)


@server.feature(types.INITIALIZE)
def initialize(ls: LoopfixServer, params: types.InitializeParams) -> None:
    ls.client_settings = features.settings_table(params.initialization_options)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def on_text(ls: LoopfixServer, params) -> None:
    uri = params.text_document.uri
    if not features.is_settings_file(uri):
        # who imports what: the modules that call into a file bind its parameters
        ls.project_for(uri).imports_changed(features.uri_to_path(uri))
    if features.is_settings_file(uri) and isinstance(params, types.DidSaveTextDocumentParams):
        _refresh(ls)  # the settings on disk changed: every open document again
    elif not _pulls(ls):
        ls.publish(uri)
        for dependent in ls.dependents_of(uri):  # `train.py` imports the `models.py` edited
            ls.publish(dependent)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: LoopfixServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.analyses.pop(params.text_document.uri, None)
    ls.plans.pop(params.text_document.uri, None)
    ls.parsers.pop(params.text_document.uri, None)
    if not _pulls(ls):
        empty = types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        ls.text_document_publish_diagnostics(empty)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(
        # a file's findings depend on the project modules it imports: a client that pulls
        # asks again for the open importers when one of them changes
        identifier="loopfix",
        inter_file_dependencies=True,
        workspace_diagnostics=False,
    ),
)
def pull_diagnostics(ls: LoopfixServer, params: types.DocumentDiagnosticParams):
    found = ls.diagnostics(params.text_document.uri)
    return types.RelatedFullDocumentDiagnosticReport(items=found)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def on_configuration(ls: LoopfixServer, params: types.DidChangeConfigurationParams) -> None:
    ls.client_settings = features.settings_table(params.settings) or ls.client_settings
    _refresh(ls)


def _refresh(ls: LoopfixServer) -> None:
    """Every open document's diagnostics again (new settings), or the client told to pull."""
    ls.analyses.clear()
    ls.plans.clear()
    if _pulls(ls):
        ls.workspace_diagnostic_refresh(None)
        return
    for uri in list(ls.workspace.text_documents):
        ls.publish(uri)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, features.FIX_ALL],
        resolve_provider=False,
    ),
)
def code_actions(ls: LoopfixServer, params: types.CodeActionParams):
    if features.is_settings_file(params.text_document.uri):
        return []
    analysis = ls.analyse(params.text_document.uri, plan_fixes=True)
    return features.code_actions(analysis, params.range, ls.encoding, params.context.only)


@server.thread()
@server.command(features.VERIFY_COMMAND)
def verify_command(ls: LoopfixServer, *arguments):
    """Verify the buffer's planned rewrites in a worker thread (diagnostics keep flowing):
    work-done progress while it runs, a message with the verdicts at the end."""
    uri = _uri_argument(arguments)
    if uri is None or uri not in ls.workspace.text_documents:
        message = "loopfix.verify: give the URI of an open document"
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=message)
        )
        return None
    analysis = ls.analyse(uri, plan_fixes=True)
    token = _progress(ls)
    summary, kind = _verify(ls, analysis, token)
    if token is not None:
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
    ls.window_show_message(types.ShowMessageParams(type=kind, message=f"loopfix: {summary}"))
    return summary


@server.thread()
@server.command(features.DIAGNOSE_COMMAND)
def diagnose_command(ls: LoopfixServer, *arguments):
    """Run the document as a script (`python FILE` in its folder, the project's interpreter)
    under `loopfix diagnose`, in a worker thread; the explanation becomes diagnostics at the
    lines it names, and a message says what happened."""
    from loopfix.diagnose import Options, diagnose

    uri = _uri_argument(arguments)
    if uri is None or uri not in ls.workspace.text_documents:
        message = "loopfix.diagnose: give the URI of an open document"
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=message)
        )
        return None
    document = ls.workspace.get_text_document(uri)
    path = features.uri_to_path(uri)
    config = ls.config_for(uri)
    options = Options(python=config.interpreter(path), verify=False, timeout=config.timeout * 4)
    try:
        diagnosis = diagnose(["python", path.name], options, cwd=path.parent)
    except Exception as error:  # report it; never take the server down
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"loopfix: {error!r}")
        )
        return None
    found = features.diagnosis_diagnostics(diagnosis, path, document.source, ls.encoding)
    ls.diagnosed[uri] = (document.version, found)
    if _pulls(ls):
        ls.workspace_diagnostic_refresh(None)  # the client pulls them again
    else:
        ls.publish(uri)
    kind = types.MessageType.Warning if diagnosis.exit_code else types.MessageType.Info
    summary = f"loopfix diagnose: {diagnosis.summary}"
    ls.window_show_message(types.ShowMessageParams(type=kind, message=summary))
    return diagnosis.as_json()


def _progress(ls: LoopfixServer) -> str | None:
    """A work-done progress token, begun; None when the client does not show progress."""
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress):
        return None
    token = str(uuid.uuid4())
    try:
        ls.work_done_progress.create(token).result(timeout=30)
    except Exception:  # the client refused or did not answer: verify without progress
        return None
    begin = types.WorkDoneProgressBegin(title="loopfix: verifying rewrites", cancellable=False)
    ls.work_done_progress.begin(token, begin)
    return token


def _uri_argument(arguments) -> str | None:
    for argument in arguments:
        if isinstance(argument, str):
            return argument
        if isinstance(argument, list | tuple) and argument:
            return _uri_argument(argument)
        if isinstance(argument, dict) and isinstance(argument.get("uri"), str):
            return argument["uri"]
    return None


def _verify(ls: LoopfixServer, analysis: features.BufferAnalysis, token) -> tuple[str, int]:
    from loopfix.verify.harness import RunSettings  # torch only when verifying
    from loopfix.verify.verifier import verify_file

    config = analysis.config
    try:
        if analysis.result is None or not analysis.result.changed:
            return "nothing to verify", types.MessageType.Info
        settings = RunSettings(
            device=config.device,
            iterations=config.iterations,
            timeout=config.timeout,
            pass_env=config.pass_env,
            python=config.interpreter(features.uri_to_path(analysis.uri)),
        )
        if token is not None:
            report = types.WorkDoneProgressReport(message="running the original and patched code")
            ls.work_done_progress.report(token, report)
        verdicts = verify_file(analysis.result, settings)
    except Exception as error:  # report it; never take the server down
        return f"verification failed: {error!r}", types.MessageType.Error
    written = all(v.writable for v in verdicts)  # what `apply` and "fix all" would write
    kind = types.MessageType.Info if written else types.MessageType.Warning
    return "; ".join(v.summary() for v in verdicts), kind


def main() -> None:
    server.start_io()
