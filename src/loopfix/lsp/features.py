"""Diagnostics and code actions for one editor buffer, shared by the language server and the
python-lsp-server plugin.

The buffer's unsaved text goes through the same pipeline as `loopfix check` and `apply`
(`analysis.analyse_source`), so a quick fix carries exactly the planned edits: applying the
`source.fixAll.loopfix` action to the text gives the bytes `loopfix apply` would write, and a
finding's own quick fix is offered only when its edits, applied alone, fix it and add nothing.
Pure: no torch, no file writes (reading `pyproject.toml` for settings aside). A
`pyproject.toml` buffer gets its `[tool.loopfix]` error as a diagnostic on the key at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from lsprotocol import types

from loopfix.analysis import ON_DISK, FileResult, analyse_source
from loopfix.config import Config, ConfigError, config_from_text
from loopfix.edits import Edit, apply_edits
from loopfix.notebook import automagic_lines
from loopfix.parse import ChunkParser, parse
from loopfix.project import Project
from loopfix.rules import CRASHING_RULES, Finding, Fix, rule_by_code
from loopfix.source import SourceError, SourceFile, line_starts

from .jupyter import real_path
from .positions import PositionMap

# a suppression comment already listing codes on the line
NOQA_LIST = re.compile(r"#\s*noqa:\s*[A-Z]+\d+(?:\s*,\s*[A-Z]+\d+)*", re.I)

SOURCE = "loopfix"
SETTINGS_FILE = "pyproject.toml"
# any table header line, `[a.b]` or `[[a.b]]` (where a `[tool.loopfix]` table ends)
ANY_HEADER = re.compile(r"^[ \t]*\[\[?[^\]\n]*\]\]?[ \t]*(?:#.*)?$", re.M)
FIX_ALL = "source.fixAll.loopfix"
VERIFY_COMMAND = "loopfix.verify"
DIAGNOSE_COMMAND = "loopfix.diagnose"


def uri_to_path(uri: str) -> Path:
    """The document's path; a notebook JupyterLab sends as a virtual document is at its
    notebook's path (`jupyter.real_path`: its imports, settings and per-file ignores)."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return Path(parsed.path or "untitled.py")
    return real_path(Path(url2pathname(unquote(parsed.path))))


@dataclass
class BufferAnalysis:
    """One version of one buffer, analysed; `error` is why it could not be (one line)."""

    uri: str
    text: str
    result: FileResult | None
    error: str | None = None
    config: Config = field(default_factory=Config)
    _alone: dict[tuple[int, int], bool] = field(default_factory=dict, repr=False)

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings if self.result is not None else []

    @property
    def messages(self) -> list[str]:
        """What to log: why the buffer could not be analysed, and internal rule errors."""
        return ([self.error] if self.error else []) + (self.result.errors if self.result else [])


def analyse_buffer(
    uri: str,
    text: str,
    config: Config | None = None,
    plan_fixes: bool = True,
    parser: ChunkParser | None = None,
    project: Project | None | type[ON_DISK] = ON_DISK,
) -> BufferAnalysis:
    """The buffer's findings; with `plan_fixes=False` without their fixes (diagnostics on
    every keystroke need only the findings; code actions ask for the plan). A document's
    `ChunkParser` reuses the parse of the statements an edit did not touch; `project` gives
    the modules it imports (the server's reads open buffers before the disk; by default the
    disk, as for the python-lsp-server plugin)."""
    config = config or Config()
    path = uri_to_path(uri)
    magics = automagic_lines(text) if path.suffix == ".ipynb" else []
    source = SourceFile.from_text(path, _commented_out(text, magics))
    options = replace(config.options(), alternatives=True)  # the further code actions
    try:
        rules = config.rules_for(path)
        result = analyse_source(source, rules, options, plan_fixes, parser or parse, project)
    except SourceError as error:
        return BufferAnalysis(uri, text, None, str(error).replace(str(path), path.name), config)
    except Exception as error:  # a loopfix bug: log it, keep serving
        return BufferAnalysis(uri, text, None, f"{path.name}: internal error: {error!r}", config)
    if magics:
        result = _with_magics_kept(result, text, magics)
    return BufferAnalysis(uri, text, result, None, config)


def _commented_out(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each line magic called without `%` (`cd data`, which jupyterlab-lsp's
    virtual document keeps as the cell has it) made a comment of the same length (`#d
    data`): every other offset stays where it was, so findings and edits need no mapping."""
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        first = start + len(text[start:end]) - len(text[start:end].lstrip())
        chars[first] = "#"
    return "".join(chars)


def _with_magics_kept(result: FileResult, text: str, spans: list[tuple[int, int]]) -> FileResult:
    """The analysis of the commented text as the document's own: a fix whose edits touch a
    magic's line is not offered (its edit would write the comment into the cell), and the
    fixed text is the document's with the other fixes' edits."""

    def keeps_magics(fix: Fix | None) -> bool:
        return fix is None or not any(
            e.start <= end and start <= e.end for e in fix.edits for start, end in spans
        )

    findings = []
    for finding in result.findings:
        if not keeps_magics(finding.fix):
            finding = replace(
                finding,
                fix=None,
                applied=False,
                fix_unavailable="its edit would change a line magic's line",
            )
        alternatives = tuple(a for a in finding.alternatives if keeps_magics(a))
        findings.append(replace(finding, alternatives=alternatives))
    edits = sorted({e for f in findings if f.applied for e in f.fix.edits})
    source = SourceFile.from_text(result.source.path, text)
    return replace(result, source=source, findings=findings, fixed_text=apply_edits(text, edits))


def diagnostics(analysis: BufferAnalysis, encoding: str) -> list[types.Diagnostic]:
    positions = PositionMap(analysis.text, encoding)
    found = []
    for index, finding in enumerate(analysis.findings):
        rule = rule_by_code(finding.rule)
        severity = types.DiagnosticSeverity.Error
        if finding.rule not in CRASHING_RULES:
            severity = types.DiagnosticSeverity.Warning
        found.append(
            types.Diagnostic(
                range=positions.range(finding.start, finding.end),
                message=f"{finding.message} ({rule.name}; "
                f"`loopfix explain {finding.rule}` tells more)",
                severity=severity,
                code=finding.rule,
                code_description=types.CodeDescription(href=rule_help_uri(rule)),
                source=SOURCE,
                data={"index": index},
            )
        )
    return found


def rule_help_uri(rule) -> str:
    """Where the rule's documentation lives (the SARIF `helpUri` too)."""
    from loopfix.report import HELP_URI

    return HELP_URI.format(anchor=f"{rule.code.lower()}-{rule.name}")


def noqa_edit(analysis: BufferAnalysis, finding: Finding, positions: PositionMap) -> types.TextEdit:
    """`# noqa: LF00x` at the end of the finding's first line (added to an existing `# noqa:`
    list there), as Ruff's "Disable for this line" does."""
    text = analysis.text
    line_start = text.rfind("\n", 0, finding.start) + 1
    line_end = text.find("\n", finding.start)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_end - 1 : line_end] == "\r":
        line_end -= 1
    line = text[line_start:line_end]
    existing = NOQA_LIST.search(line)
    if existing:
        at = line_start + existing.end()
        return types.TextEdit(range=positions.range(at, at), new_text=f", {finding.rule}")
    stripped = len(line.rstrip())
    at = line_start + stripped
    return types.TextEdit(range=positions.range(at, line_end), new_text=f"  # noqa: {finding.rule}")


def code_actions(
    analysis: BufferAnalysis,
    requested: types.Range,
    encoding: str,
    only: list[str] | None = None,
) -> list[types.CodeAction]:
    """Quick fixes for the findings in `requested`: each finding's fix (titled as unsafe when
    it changes what the code computes) and its alternatives (e.g. LF001's reset in place of
    the detach), then the fix-all action (exactly what `loopfix apply` writes)."""
    if analysis.result is None:
        return []
    positions = PositionMap(analysis.text, encoding)
    start, end = positions.offset(requested.start), positions.offset(requested.end)
    actions = []
    diagnostics_by_index = {d.data["index"]: d for d in diagnostics(analysis, encoding)}
    if _wanted(types.CodeActionKind.QuickFix, only):
        for index, finding in enumerate(analysis.findings):
            if not (finding.start <= end and start <= finding.end):
                continue
            fixes = [finding.fix] if finding.fix else []
            for number, fix in enumerate([*fixes, *finding.alternatives]):
                if not _fixes_alone(analysis, index, number, fix):
                    continue
                actions.append(
                    types.CodeAction(
                        title=action_title(finding.rule, fix),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostics_by_index[index]],
                        edit=_workspace_edit(analysis, list(fix.edits), positions),
                        is_preferred=number == 0 and fix.safe and finding.fix is fix,
                    )
                )
    if _wanted(types.CodeActionKind.QuickFix, only):
        for index, finding in enumerate(analysis.findings):
            if not (finding.start <= end and start <= finding.end):
                continue
            edit = noqa_edit(analysis, finding, positions)
            actions.append(
                types.CodeAction(
                    title=f"loopfix: Disable {finding.rule} for this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostics_by_index[index]],
                    edit=types.WorkspaceEdit(changes={analysis.uri: [edit]}),
                )
            )
    if analysis.result.changed and _wanted(FIX_ALL, only):
        actions.append(
            types.CodeAction(
                title="loopfix: fix all autograd findings in this file",
                kind=FIX_ALL,
                edit=_workspace_edit(analysis, planned_edits(analysis), positions),
            )
        )
    return actions


def action_title(rule: str, fix: Fix) -> str:
    """`loopfix: <title> (LF002)`; an unsafe fix says so and what it changes."""
    if fix.safe:
        return f"loopfix: {fix.title} ({rule})"
    return f"loopfix: {fix.title} ({rule}; unsafe fix: {fix.changes})"


def planned_edits(analysis: BufferAnalysis) -> list[Edit]:
    """The edits of the whole planned change: exactly what `loopfix apply` writes."""
    edits = sorted({e for f in analysis.findings if f.applied for e in f.fix.edits})
    if apply_edits(analysis.text, edits) != analysis.result.fixed_text:  # never expected
        return [Edit(0, len(analysis.text), analysis.result.fixed_text)]
    return edits


def _fixes_alone(analysis: BufferAnalysis, index: int, number: int, fix: Fix) -> bool:
    """Whether `fix` (the finding's fix or an alternative), applied alone, removes the
    finding and adds no finding."""
    key = (index, number)
    if key not in analysis._alone:
        finding = analysis.findings[index]
        text = apply_edits(analysis.text, fix.edits)
        after = analyse_buffer(analysis.uri, text, analysis.config)
        before_rules = [f.rule for f in analysis.findings]
        before_rules.remove(finding.rule)
        after_rules = [f.rule for f in after.findings]
        analysis._alone[key] = after.result is not None and sorted(after_rules) == sorted(
            before_rules
        )
    return analysis._alone[key]


def _workspace_edit(
    analysis: BufferAnalysis, edits: list[Edit], positions: PositionMap
) -> types.WorkspaceEdit:
    text_edits = [
        types.TextEdit(range=positions.range(e.start, e.end), new_text=e.text)
        for e in sorted(set(edits))
    ]
    return types.WorkspaceEdit(changes={analysis.uri: text_edits})


def _wanted(kind: str, only: list[str] | None) -> bool:
    """LSP's `only` filter: a requested kind covers its sub-kinds (`source` covers ours)."""
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def is_settings_file(uri: str) -> bool:
    """Whether the document is a `pyproject.toml` (where `[tool.loopfix]` lives)."""
    return uri_to_path(uri).name == SETTINGS_FILE


def settings_diagnostics(text: str, encoding: str) -> list[types.Diagnostic]:
    """The `[tool.loopfix]` error in a `pyproject.toml` buffer (what `loopfix check` would
    stop on), on the key at fault; none when its settings are usable."""
    try:
        config_from_text(text, None, SETTINGS_FILE)
    except ConfigError as error:
        start, end = setting_span(text, error.key, error.line)
        message = str(error).removeprefix(f"{SETTINGS_FILE}: ") + " (the defaults apply)"
        return [
            types.Diagnostic(
                range=PositionMap(text, encoding).range(start, end),
                message=message,
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
            )
        ]
    return []


def setting_span(text: str, key: str | None, line: int | None = None) -> tuple[int, int]:
    """Where a settings error lies, as text offsets: the line (from 1) of a syntax error; else
    `key` in the `[tool.loopfix]` table, or its own `[tool.loopfix.<key>]` table; else the
    table's header; else the first mention of loopfix (a dotted key, an inline table)."""
    starts = line_starts(text)
    if line is not None and 0 < line <= len(starts):
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(text)
        return start, start + len(text[start:end].rstrip("\r\n"))
    own = _header(f"tool.loopfix.{key}").search(text) if key else None
    if own is not None:
        return own.span(1)
    table = _header("tool.loopfix").search(text)
    if table is None:
        at = text.find("loopfix")
        return (at, at + len("loopfix")) if at >= 0 else (0, 0)
    if key:
        following = ANY_HEADER.search(text, table.end())
        body_end = following.start() if following is not None else len(text)
        assignment = re.compile(rf"^[ \t]*({_toml_key(key)})[ \t]*[=.]", re.M)
        found = assignment.search(text, table.end(), body_end)
        if found is not None:
            return found.span(1)
    return table.span(1)


def _toml_key(dotted: str) -> str:
    """A regular expression for a TOML dotted key, each part bare or quoted."""
    parts = [re.escape(part) for part in dotted.split(".")]
    return r"[ \t]*\.[ \t]*".join(f"""(?:{p}|"{p}"|'{p}')""" for p in parts)


def _header(dotted: str) -> re.Pattern:
    return re.compile(rf"^[ \t]*(\[[ \t]*{_toml_key(dotted)}[ \t]*\])[ \t]*(?:#.*)?$", re.M)


def settings_table(settings: object) -> dict:
    """Client settings (initializationOptions or didChangeConfiguration), under a `loopfix`
    key or not, with the `[tool.loopfix]` key names (`restrict-style` or `restrictStyle`)."""
    if not isinstance(settings, dict):
        return {}
    settings = settings.get("loopfix", settings)
    if not isinstance(settings, dict):
        return {}
    table = {}
    for key, value in settings.items():
        kebab = "".join("-" + c.lower() if c.isupper() else c for c in key).replace("_", "-")
        table[kebab] = value
    return table


def diagnosis_diagnostics(diagnosis, path: Path, text: str, encoding: str) -> list:
    """`loopfix diagnose`'s explanation of a run of the document as diagnostics: an error at
    the failing backward with the whole explanation, and a related note at each other line
    of the document it names."""
    facts = diagnosis.facts or {}
    places = [facts.get("backward")]
    for key in ("variable", "created", "freed_by", "saved", "changed"):
        value = facts.get(key) or {}
        places += [value.get("line"), value.get("read_at")]
    lines = [
        place["line"]
        for place in places
        if isinstance(place, dict) and "line" in place and _same_file(place["path"], path)
    ]
    if not lines:
        return []
    positions = PositionMap(text, encoding)
    message = "\n".join([diagnosis.summary, *diagnosis.explanation])
    found = []
    for index, line in enumerate(dict.fromkeys(lines)):
        start = positions.position(_line_offset(text, line))
        end = types.Position(line=start.line, character=start.character + 1)
        found.append(
            types.Diagnostic(
                range=types.Range(start=start, end=end),
                message=message if index == 0 else f"involved: {diagnosis.summary}",
                severity=types.DiagnosticSeverity.Error
                if index == 0
                else types.DiagnosticSeverity.Information,
                source=f"{SOURCE} diagnose",
            )
        )
    return found


def _same_file(shown: str, path: Path) -> bool:
    try:
        return Path(shown).resolve() == path.resolve()
    except OSError:
        return False


def _line_offset(text: str, line: int) -> int:
    """The offset of the first non-blank character of 1-based `line`."""
    offset = 0
    for number, content in enumerate(text.splitlines(keepends=True), start=1):
        if number == line:
            return offset + len(content) - len(content.lstrip())
        offset += len(content)
    return offset
