"""A python-lsp-server plugin: the same diagnostics and code actions as `loopfix lsp`.

Registered under the `pylsp` entry-point group (`pyproject.toml`), so a pylsp installation
with loopfix beside it picks it up. It reuses `features.py`; pylsp speaks UTF-16 positions.
Each hook returns plain JSON-shaped dicts, as pylsp expects; `pylsp_execute_command` answers
only `loopfix.verify` (run in a worker thread) and returns None for every other command. A
document is analysed once per version and settings; a `[tool.loopfix]` error is shown once, and
as a diagnostic on the key at fault when the client has the `pyproject.toml` open (pylsp lints
every document the client opens, whatever its language).
"""

from __future__ import annotations

import threading

from lsprotocol import types
from lsprotocol.converters import get_converter
from pylsp import hookimpl

from loopfix.config import Config, ConfigError, find_config, with_overrides

from . import features

ENCODING = types.PositionEncodingKind.Utf16
_converter = get_converter()


# settings errors already shown (once each), and each document's last analysis: planned once
# per document version and settings, so code actions after a lint cost a lookup
_SHOWN: set[str] = set()
_ANALYSES: dict[str, tuple[tuple, features.BufferAnalysis]] = {}


def _config(config, document, workspace=None) -> Config:
    path = features.uri_to_path(document.uri)
    try:
        project = find_config(path.parent)
        settings = config.plugin_settings("loopfix", document_path=document.path) or {}
        table = features.settings_table({k: v for k, v in settings.items() if k != "enabled"})
        return with_overrides(project, table, "pylsp settings") if table else project
    except ConfigError as error:
        if workspace is not None and str(error) not in _SHOWN:
            _SHOWN.add(str(error))  # once: a broken pyproject.toml is not news on every key
            workspace.show_message(
                f"loopfix: {error} (using the defaults)", types.MessageType.Warning.value
            )
        return Config()


def _analysis(config, document, workspace=None) -> features.BufferAnalysis:
    settings = _config(config, document, workspace)
    key = (document.version, document.source, settings)
    cached = _ANALYSES.get(document.uri)
    if cached is not None and cached[0] == key:
        return cached[1]
    analysis = features.analyse_buffer(document.uri, document.source, settings)
    _ANALYSES[document.uri] = (key, analysis)
    return analysis


@hookimpl
def pylsp_settings():
    return {"plugins": {"loopfix": {"enabled": True}}}


@hookimpl
def pylsp_lint(config, workspace, document, is_saved):
    if features.is_settings_file(document.uri):  # pylsp lints every open document
        return _converter.unstructure(features.settings_diagnostics(document.source, ENCODING))
    analysis = _analysis(config, document, workspace)
    for message in analysis.messages:
        workspace.show_message(f"loopfix: {message}", types.MessageType.Log.value)
    return _converter.unstructure(features.diagnostics(analysis, ENCODING))


@hookimpl
def pylsp_code_actions(config, workspace, document, range, context):
    if features.is_settings_file(document.uri):
        return []
    requested = _converter.structure(range, types.Range)
    only = (context or {}).get("only")
    analysis = _analysis(config, document, workspace)
    actions = features.code_actions(analysis, requested, ENCODING, only)
    return _converter.unstructure(actions)


@hookimpl
def pylsp_commands(config, workspace):
    return [features.VERIFY_COMMAND]


@hookimpl
def pylsp_execute_command(config, workspace, command, arguments):
    """`loopfix.verify`: started in a worker thread, with work-done progress, so pylsp keeps
    answering (hovers, completions) while the project's code runs; the verdicts arrive as a
    message. Answers at once with "verification started"."""
    if command != features.VERIFY_COMMAND:
        return None  # not ours: another plugin answers
    uri = next((a for a in arguments or [] if isinstance(a, str)), None)
    if uri is None:
        return None
    analysis = _analysis(config, workspace.get_document(uri), workspace)
    if analysis.result is None or not analysis.result.changed:
        workspace.show_message("loopfix: nothing to verify")
        return "nothing to verify"
    worker = threading.Thread(target=_verify, args=(workspace, analysis), daemon=True)
    worker.start()
    return "verification started"


def _verify(workspace, analysis: features.BufferAnalysis) -> None:
    from loopfix.verify.harness import RunSettings  # torch, if any, only when verifying
    from loopfix.verify.verifier import verify_file

    settings = RunSettings(
        device=analysis.config.device,
        iterations=analysis.config.iterations,
        timeout=analysis.config.timeout,
        pass_env=analysis.config.pass_env,
        python=analysis.config.interpreter(features.uri_to_path(analysis.uri)),
    )
    try:
        with workspace.report_progress("loopfix: verifying", "running the original and the fix"):
            summary = "; ".join(v.summary() for v in verify_file(analysis.result, settings))
    except Exception as error:  # a loopfix bug: say so, keep pylsp alive
        summary = f"verification failed: {error!r}"
    workspace.show_message(f"loopfix: {summary}")
