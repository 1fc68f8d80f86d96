"""One file through the pipeline: source text -> tree -> loop model -> findings -> fixed text.

Pure: no file I/O, no torch. The fixed text is planned here once; `check`, `apply --dry-run`,
`apply` (and the language server) all consume the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from loopfix.options import Options
from loopfix.parse import ChunkParser, parse
from loopfix.project import Project, Resolver, project_for, root_markers_absent
from loopfix.rules import ALL_RULES, FileContext, Finding, Rule
from loopfix.rules.base import Fix
from loopfix.source import SourceError, SourceFile, respell, source_spellings
from loopfix.suppression import noqa_lines, suppressed


class ON_DISK:
    """`analyse_source(project=ON_DISK)`: the project the file belongs to on disk."""


@dataclass
class FileResult:
    source: SourceFile
    findings: list[Finding] = field(default_factory=list)
    fixed_text: str = ""
    errors: list[str] = field(default_factory=list)
    suppressed: int = 0  # findings silenced by noqa comments
    # project modules the analysis looked into: path -> sha256 of the text it used
    dependencies: dict[str, str | None] = field(default_factory=dict)
    skipped: bool = False  # the file says `# loopfix: noqa`
    models_built: int = 0  # loop models the analysis built (see `FileContext.models_built`)

    @property
    def changed(self) -> bool:
        return self.fixed_text != self.source.text

    @property
    def fixed_bytes(self) -> bytes:
        return self.source.encode(self.fixed_text)


def parse_context(
    text: str,
    filename: str,
    options: Options | None = None,
    parser=parse,
    resolver=None,
    source: SourceFile | None = None,
) -> FileContext:
    """The file's context; a syntax error names the place as the report does (`source`: a
    notebook's cell and line within it)."""
    try:
        return FileContext.parse(text, filename, options, parser, resolver)
    except SyntaxError as error:
        raise SourceError(syntax_error_message(error, filename, text, source)) from None
    except (RecursionError, MemoryError):
        raise SourceError(f"{filename}: nested too deeply to analyse") from None
    except ValueError as error:
        raise SourceError(f"{filename}: {error}") from None
    except Exception as error:  # a bug in loopfix's loop model: this file only
        raise SourceError(f"{filename}: internal error while modelling loops: {error!r}") from None


def syntax_error_message(
    error: SyntaxError, filename: str, text: str, source: SourceFile | None = None
) -> str:
    """`train.py:3:10: syntax error: ...`, placed as the report places findings (a
    notebook's cell and line within it)."""
    where = f":{error.lineno}:{error.offset or 0}" if error.lineno else ""
    if error.lineno and source is not None and source.notebook is not None:
        cell, line = source.notebook.cell_of(text, error.lineno)
        where = f":cell {cell}:{line}:{error.offset or 0}"
    return f"{filename}{where}: syntax error: {error.msg}"


def unparsable_cells(source: SourceFile) -> list[str]:
    """`lesson.ipynb:cell 5:1:13: syntax error: ...` for each cell of a notebook that does not
    parse on its own, and is left out of the analysis (`Notebook.unparsable`)."""
    notebook = source.notebook
    if notebook is None:
        return []
    messages = []
    for cell, error in notebook.unparsable.items():
        where = f":{error.lineno}:{(error.offset or 0) + len(notebook.indent_of(cell))}"
        where = where if error.lineno else ""
        messages.append(
            f"{source.path}:cell {cell}{where}: syntax error: {error.msg} "
            "(the cell is left out of the analysis)"
        )
    return messages


def analyse_source(
    source: SourceFile,
    rules: list[Rule] | None = None,
    options: Options | None = None,
    plan_fixes: bool = True,
    parser=parse,
    project: Project | None | type[ON_DISK] = ON_DISK,
) -> FileResult:
    """Findings and the planned fixed text. With `plan_fixes=False` only the findings (each
    without its fix): what an editor needs on every keystroke, at a fraction of the cost,
    since planning re-analyses the file for every candidate edit. `parser` may be a
    `parse.ChunkParser` that reuses the parse of unchanged top-level statements. The
    modules of the `project` that the file imports are looked into (by default the project
    the file belongs to on disk; None: the file alone)."""
    rules = ALL_RULES if rules is None else rules
    result = FileResult(source=source, fixed_text=source.text)
    silenced, result.skipped = noqa_lines(source.text)
    if result.skipped:
        return result
    if project is ON_DISK:
        project = project_for(source.path)
    resolver = project.resolver_for(source.path) if project is not None else None
    if plan_fixes and parser is parse:  # each candidate fix's text is parsed again
        parser = ChunkParser()
    try:
        context = parse_context(source.text, str(source.path), options, parser, resolver, source)
        result.errors.extend(unparsable_cells(source))
        if resolver is not None:
            _note_dependencies(result, resolver, project)
        spellings = source_spellings(source.text)
        _detect(context, result, rules, silenced, spellings)
        if plan_fixes:
            result.fixed_text = _plan_fixes(context, result, rules, spellings)
            for finding in result.findings:
                _explain_missing_fix(finding, rules)
        result.models_built = context.models_built()
    finally:
        if resolver is not None:  # what it built for this analysis alone
            resolver.release()
    return result


def _note_dependencies(result: FileResult, resolver: Resolver, project: Project) -> None:
    """The project modules the analysis read (path -> digest) and those it looked for and
    did not find (path -> None), and the errors reading them gave."""
    result.dependencies = {str(path): digest for path, digest in resolver.used.items()}
    absent = resolver.absent | set(root_markers_absent(result.source.path, project.root))
    result.dependencies.update({str(path): None for path in sorted(absent)})
    result.errors.extend(resolver.errors)


def _detect(context: FileContext, result: FileResult, rules, silenced, spellings) -> None:
    """Every rule's findings, in source order, less those a `noqa` comment silences; a rule
    that fails is reported in `result.errors` and the others go on."""
    source = result.source
    for rule in rules:
        try:
            findings = rule.detect(context)
        except Exception as error:  # a broken rule must not take the other rules down
            result.errors.append(f"{source.path}: internal error in {rule.code}: {error!r}")
            continue
        for finding in findings:
            finding.message = respell(finding.message, spellings)
            first, last = source.position(finding.start)[0], source.position(finding.end)[0]
            if suppressed(finding.rule, first, last, silenced):
                result.suppressed += 1
            else:
                result.findings.append(finding)
    result.findings.sort(key=lambda f: (f.start, f.rule))


def _plan_fixes(
    context: FileContext, result: FileResult, rules: list[Rule], spellings: dict[str, str]
) -> str:
    """Each finding's fix and the fixed text: all fixes proven at once when they can be
    (`_planned_together`), else each fix proven on its own while it is planned, then
    combined (`_combine_fixes`). A rule whose planning fails loses its findings, and the
    failure is reported in `result.errors`."""
    together = _planned_together(context, result.findings, rules, spellings)
    if together is not None:
        return together
    failed: set[str] = set()
    by_code = {rule.code: rule for rule in rules}
    for finding in result.findings:
        if finding.rule in failed:
            continue
        try:
            _plan_one(context, by_code[finding.rule], finding, spellings)
        except Exception as error:
            failed.add(finding.rule)
            result.errors.append(f"{context.filename}: internal error in {finding.rule}: {error!r}")
    result.findings = [f for f in result.findings if f.rule not in failed]
    return _combine_fixes(context, result.findings, rules, result.errors)


def _plan_one(context: FileContext, rule: Rule, finding: Finding, spellings) -> None:
    finding.fix = _respelled(rule.fix(context, finding), spellings)
    finding.alternatives = tuple(_respelled(f, spellings) for f in finding.alternatives)


def _planned_together(
    context: FileContext, findings: list[Finding], rules: list[Rule], spellings
) -> str | None:
    """The fixed text when every finding's fix can be proven on one analysis: each rule
    plans its fix with its proof assumed (`FileContext.assume_proven`: no re-analysis per
    candidate edit), then the text with all the fixes is analysed once and each rule must
    accept its part of it, the test `_combine_fixes` makes of a combination. What is
    applied is proven as it is written. None, and nothing planned, for one finding (its own
    proof is that analysis), for the editor's further fixes (each is offered on its own),
    and when some fix is not safe, not found, needs the patched model to be planned
    (`NeedsAnalysis`) or is not accepted: then each fix is proven on its own."""
    if len(findings) < 2 or context.options.alternatives:
        return None
    by_code = {rule.code: rule for rule in rules}
    said = [(f.fix, f.alternatives, f.fix_unavailable) for f in findings]
    planned: list[Fix] = []
    context.assume_proven = True
    try:
        for finding in findings:
            fix = by_code[finding.rule].fix(context, finding)
            if fix is None or not fix.safe or finding.alternatives:
                break
            planned.append(_respelled(fix, spellings))
    except Exception:  # NeedsAnalysis, or a rule's failure: reported when planned again
        pass
    finally:
        context.assume_proven = False
        for finding, before in zip(findings, said, strict=True):  # planned again if need be
            finding.fix, finding.alternatives, finding.fix_unavailable = before
    if len(planned) < len(findings):
        return None
    for finding, fix in zip(findings, planned, strict=True):
        finding.fix = fix
    patched = _accepted(context, findings, by_code, None)
    if patched is None:
        for finding, before in zip(findings, said, strict=True):
            finding.fix = before[0]
        return None
    for finding in findings:
        finding.applied = True
    return patched.text


def _explain_missing_fix(finding: Finding, rules: list[Rule]) -> None:
    """A finding without a fix says why, in its message and in `fix_unavailable`; so does one
    whose only fix is unsafe (why no safe fix exists)."""
    if finding.fix is not None:
        if finding.fix.safe or not finding.fix_unavailable:
            finding.fix_unavailable = None
        else:  # only an unsafe fix: say why there is no safe one
            finding.message += f" (no safe fix: {finding.fix_unavailable})"
        return
    if finding.fix_unavailable is None:
        rule = next((r for r in rules if r.code == finding.rule), None)
        finding.fix_unavailable = rule.no_fix_reason if rule else "no fix is known"
    finding.message += f" (no automatic fix: {finding.fix_unavailable})"


def _respelled(fix: Fix | None, spellings: dict[str, str]) -> Fix | None:
    """Generated code names variables as `ast` does (NFKC): spell them as the author did."""
    if fix is None or not spellings:
        return fix
    edits = tuple(replace(e, text=respell(e.text, spellings)) for e in fix.edits)
    return replace(fix, edits=edits)


def _combine_fixes(
    context: FileContext, findings: list[Finding], rules: list[Rule], errors: list[str]
) -> str:
    """Apply fixes (unsafe ones only with `options.unsafe_fixes`), keeping each only if every
    rule still accepts the result: all of them at once first (one analysis of the patched
    file), else one by one, each kept only if it combines with those kept before it; a rule
    that fails while checking drops the fix and is reported in `errors`."""
    by_code = {rule.code: rule for rule in rules}
    candidates = [
        f for f in findings if f.fix is not None and (f.fix.safe or context.options.unsafe_fixes)
    ]  # an unsafe fix stays on the finding, offered, but is not applied
    if len(candidates) > 1:
        patched = _accepted(context, candidates, by_code, None)
        if patched is not None:
            for finding in candidates:
                finding.applied = True
            _drop_clashing_hidden(context, findings, candidates, by_code)
            return patched.text
    accepted: list[Finding] = []
    text = context.text
    for finding in candidates:
        patched = _accepted(context, accepted + [finding], by_code, errors)
        if patched is None:
            finding.fix = None
            finding.fix_unavailable = _clash_reason(context, finding, accepted)
            continue
        accepted.append(finding)
        finding.applied = True
        text = patched.text
    _drop_clashing_hidden(context, findings, accepted, by_code)
    return text


def _drop_clashing_hidden(
    context: FileContext, findings: list[Finding], accepted: list[Finding], by_code: dict
) -> None:
    """Without `--unsafe-fixes`, an unsafe fix is offered (`check` counts it as one
    `--unsafe-fixes` enables) only if it combines with the safe fixes applied: otherwise
    `--unsafe-fixes` would drop it as `_combine_fixes` does, and the finding says why. An
    editor, which offers each fix on its own (`alternatives`), keeps it."""
    if context.options.unsafe_fixes or context.options.alternatives or not accepted:
        return
    for finding in findings:
        if finding.fix is None or finding.fix.safe:
            continue
        if _accepted(context, accepted + [finding], by_code, None) is None:
            finding.fix = None
            finding.fix_unavailable = _clash_reason(context, finding, accepted)


def _clash_reason(context: FileContext, finding: Finding, accepted: list[Finding]) -> str:
    """Why a fix that is safe on its own was dropped, naming the fixes kept before it: each
    was planned on the file as it is, so once those are written, `apply` plans it again on
    the new text."""
    if not accepted:
        return "its fix, combined with the file's other fixes, could not be proven safe"
    named = sorted(
        {(f.rule, context.text.count("\n", 0, f.start) + 1) for f in accepted},
        key=lambda pair: (pair[1], pair[0]),
    )
    fixes = ", ".join(f"{rule} line {line}" for rule, line in named)
    return (
        f"its fix could not be proven safe together with the fix of {fixes} (each planned "
        "on the file as it is); run `loopfix apply` again once that one is written"
    )


def _accepted(
    context: FileContext, trial: list[Finding], by_code: dict, errors: list[str] | None
) -> FileContext | None:
    """The context of the text with every fix of `trial`, if each rule accepts its part of
    it; None if they clash or a rule refuses (a rule that fails is reported in `errors`)."""
    try:
        patched = context.with_edits([e for f in trial for e in f.fix.edits])  # None: clash
        if patched is not None and all(
            by_code[code].accepts(context, patched, [f for f in trial if f.rule == code])
            for code in sorted({f.rule for f in trial})
        ):
            return patched
    except Exception as error:  # a broken check must not take the other fixes down
        if errors is not None:
            errors.append(
                f"{context.filename}: internal error in {trial[-1].rule} checking its fix: "
                f"{error!r}"
            )
    return None
