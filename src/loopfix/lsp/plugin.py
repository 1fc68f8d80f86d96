"""A python-lsp-server plugin: the same diagnostics and code actions as `loopfix lsp`.

Registered under the `pylsp` entry-point group (`pyproject.toml`), so a pylsp installation
with loopfix beside it picks it up. It reuses `features.py`; pylsp speaks UTF-16 positions.
Each hook returns plain JSON-shaped dicts, as pylsp expects; `pylsp_execute_command` answers
only `loopfix.verify` and returns None for every other command.
"""

from __future__ import annotations

from lsprotocol import types
from lsprotocol.converters import get_converter
from pylsp import hookimpl

from loopfix.config import Config, ConfigError, find_config, with_overrides

from . import features

ENCODING = types.PositionEncodingKind.Utf16
_converter = get_converter()


def _config(config, document) -> Config:
    path = features.uri_to_path(document.uri)
    try:
        project = find_config(path.parent)
        settings = config.plugin_settings("loopfix", document_path=document.path) or {}
        table = features.settings_table({k: v for k, v in settings.items() if k != "enabled"})
        return with_overrides(project, table, "pylsp settings") if table else project
    except ConfigError:
        return Config()


def _analysis(config, document) -> features.BufferAnalysis:
    return features.analyse_buffer(document.uri, document.source, _config(config, document))


@hookimpl
def pylsp_settings():
    return {"plugins": {"loopfix": {"enabled": True}}}


@hookimpl
def pylsp_lint(config, workspace, document, is_saved):
    analysis = _analysis(config, document)
    for message in analysis.messages:
        workspace.show_message(f"loopfix: {message}", types.MessageType.Log.value)
    return _converter.unstructure(features.diagnostics(analysis, ENCODING))


@hookimpl
def pylsp_code_actions(config, workspace, document, range, context):
    requested = _converter.structure(range, types.Range)
    only = (context or {}).get("only")
    actions = features.code_actions(_analysis(config, document), requested, ENCODING, only)
    return _converter.unstructure(actions)


@hookimpl
def pylsp_commands(config, workspace):
    return [features.VERIFY_COMMAND]


@hookimpl
def pylsp_execute_command(config, workspace, command, arguments):
    if command != features.VERIFY_COMMAND:
        return None  # not ours: another plugin answers
    from loopfix.verify.harness import RunSettings  # torch only when verifying
    from loopfix.verify.verifier import verify_file

    uri = next((a for a in arguments or [] if isinstance(a, str)), None)
    if uri is None:
        return None
    document = workspace.get_document(uri)
    analysis = _analysis(config, document)
    if analysis.result is None or not analysis.result.changed:
        summary = "nothing to verify"
    else:
        settings = RunSettings(
            device=analysis.config.device,
            iterations=analysis.config.iterations,
            timeout=analysis.config.timeout,
            pass_env=analysis.config.pass_env,
            python=analysis.config.interpreter(),
        )
        summary = "; ".join(v.summary() for v in verify_file(analysis.result, settings))
    workspace.show_message(f"loopfix: {summary}")
    return summary
