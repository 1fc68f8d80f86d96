"""Verify the planned fixes of one file by running the original and the patched code.

One run of the original, one of the patched file and, when a rule needs it, one reference run
of the original with every optimizer update deferred; every finding of the file is then judged
by its rule's oracle on those runs. Scripts (module-level code or a `__main__` block) that make
their own data run as they are: level `live`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from loopfix.analysis import FileResult
from loopfix.rules import Finding, rule_by_code
from loopfix.verify.harness import ChildRun, RunSettings, run_script

REFERENCE_RULES = {"LF002", "LF003"}


@dataclass
class Runs:
    original: ChildRun
    patched: ChildRun
    reference: ChildRun | None
    iterations: int


@dataclass
class Verdict:
    rule: str
    line: int
    column: int
    original: str
    patched: str
    verdict: str
    level: str
    device: str
    iterations: int
    seconds: float

    @property
    def equivalent(self) -> bool:
        return self.verdict == "equivalent"

    def summary(self) -> str:
        return (
            f"{self.rule} line {self.line}: {self.verdict} ({self.level}, {self.device}, "
            f"{self.iterations} iterations, {self.seconds:.1f} s)"
        )


def verify_file(result: FileResult, settings: RunSettings) -> list[Verdict]:
    runs = collect_runs(result, settings)
    return judge(result, runs)


def collect_runs(result: FileResult, settings: RunSettings) -> Runs | str | None:
    """The runs the file's oracles need; None when nothing is fixable, or why none can be
    made."""
    findings = [f for f in result.findings if f.fixable]
    if not findings:
        return None
    if not _is_runnable(result.source.text):
        return "no module-level code or __main__ block to run"
    path = result.source.path
    name, home = path.name, path.resolve().parent
    original = run_script(result.source.data, name, home, settings)
    patched = run_script(result.fixed_bytes, name, home, settings)
    reference = None
    if any(f.rule in REFERENCE_RULES for f in findings):
        reference = run_script(result.source.data, name, home, settings, defer_steps=True)
    return Runs(original, patched, reference, settings.iterations)


def judge(result: FileResult, runs: Runs | str | None) -> list[Verdict]:
    findings = [f for f in result.findings if f.fixable]
    if runs is None:
        return []
    if isinstance(runs, str):
        return [_unverified(result, f, runs) for f in findings]
    made = (runs.original, runs.patched, runs.reference)
    seconds = sum(r.seconds for r in made if r is not None)
    return [_verdict(result, f, runs, seconds) for f in findings]


def _verdict(result: FileResult, finding: Finding, runs: Runs, seconds: float) -> Verdict:
    rule = rule_by_code(finding.rule)
    verdict = rule.oracle(finding, runs)
    line, column = result.source.position(finding.start)
    trace = runs.patched.trace or runs.original.trace or {}
    unverified = verdict.startswith("unverified")
    return Verdict(
        rule=finding.rule,
        line=line,
        column=column,
        original=describe(runs.original),
        patched=describe(runs.patched),
        verdict=verdict,
        level="unverified" if unverified else "live",
        device=trace.get("device", "?"),
        iterations=(runs.patched.trace or {}).get("iterations", 0),
        seconds=seconds,
    )


def describe(run: ChildRun) -> str:
    if run.error:
        return f"raised {run.error.splitlines()[0][:120]}"
    capped = run.trace.get("capped") if run.trace else False
    return "ran (capped)" if capped else "ran to the end"


def _unverified(result: FileResult, finding: Finding, reason: str) -> Verdict:
    line, column = result.source.position(finding.start)
    return Verdict(
        finding.rule, line, column, "-", "-", f"unverified: {reason}", "unverified", "-", 0, 0.0
    )


def _is_runnable(text: str) -> bool:
    """Module-level code beyond definitions and imports, or a `__main__` block."""
    tree = ast.parse(text)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(
        not isinstance(s, definitions)
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in tree.body
    )
