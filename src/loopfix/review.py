"""`loopfix apply --interactive`: each fix with its rule, explanation, verification verdict
and diff, and a question, as `git add -p` asks: yes, no, all (this and every later fix), quit
(write what was accepted so far, nothing more).

When only some of a file's fixes are accepted, that file's new text is their edits alone; it
is written only if re-analysis shows exactly those findings gone, and, unless verification is
off, only if it verifies again as a whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

import typer

from loopfix.analysis import FileResult, analyse_source
from loopfix.diff import source_diff
from loopfix.edits import apply_edits
from loopfix.rules import Finding, rule_by_code
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import Verdict, verify_file

ANSWERS = {"y": "yes", "n": "no", "a": "all", "q": "quit"}


def review(
    results: list[FileResult],
    verdicts: dict[int, list[Verdict]],
    settings: RunSettings | None,
    recheck: Callable[[SourceFile], FileResult] = analyse_source,
) -> list[FileResult]:
    """The results to write, as the user chose; `verdicts` gains entries for new results.
    `recheck` analyses a partly fixed text with the run's own rules and options."""
    chosen_results, accept_all = [], False
    for result in results:
        chosen: list[Finding] = []
        stop = False
        for finding in (f for f in result.findings if f.applied):
            if not accept_all:
                _show(result, finding, verdicts.get(id(result), []))
                answer = _ask()
                if answer == "quit":
                    stop = True
                    break
                if answer == "no":
                    continue
                accept_all = answer == "all"
            chosen.append(finding)
        subset = _subset(result, chosen, verdicts, settings, recheck)
        if subset is not None:
            chosen_results.append(subset)
        if stop:
            break
    return chosen_results


def _show(result: FileResult, finding: Finding, verdicts: list[Verdict]) -> None:
    line, column = result.source.position(finding.start)
    rule = rule_by_code(finding.rule)
    path = os.path.relpath(result.source.path)
    typer.echo(f"\n{path}:{line}:{column}: {finding.rule} {rule.name}")
    typer.echo(f"  {finding.message}")
    typer.echo(f"  Why: {rule.summary}. Fix: {finding.fix.title}.")
    verdict = next((v for v in verdicts if (v.line, v.rule) == (line, finding.rule)), None)
    typer.echo(f"  Verification: {verdict.summary() if verdict else 'not run (--no-verify)'}")
    alone = apply_edits(result.source.text, finding.fix.edits)
    typer.echo(source_diff(path.replace(os.sep, "/"), result.source, alone), nl=False)


def _ask() -> str:
    while True:
        answer = typer.prompt("Apply this fix [y,n,a,q]?", default="y", show_default=False)
        answer = answer.strip().lower()[:1]
        if answer in ANSWERS:
            return ANSWERS[answer]
        typer.echo("y - apply this fix, n - skip it, a - apply it and all later ones, q - quit")


def _subset(
    result: FileResult,
    chosen: list[Finding],
    verdicts: dict[int, list[Verdict]],
    settings: RunSettings | None,
    recheck: Callable[[SourceFile], FileResult],
) -> FileResult | None:
    fixable = [f for f in result.findings if f.applied]
    if not chosen:
        return None
    if len(chosen) == len(fixable):
        return result
    text = apply_edits(result.source.text, [e for f in chosen for e in f.fix.edits])
    findings = [
        f if any(f is c for c in chosen) else replace(f, fix=None, applied=False)
        for f in result.findings
    ]
    subset = FileResult(source=result.source, findings=findings, fixed_text=text)
    after = recheck(SourceFile.from_text(result.source.path, text))
    expected = sorted(f.rule for f in result.findings if all(f is not c for c in chosen))
    if sorted(f.rule for f in after.findings) != expected or after.errors:
        typer.echo(f"loopfix: {result.source.path}: those fixes do not stand alone; not written")
        return None
    verdicts[id(subset)] = verify_file(subset, settings) if settings is not None else []
    return subset
