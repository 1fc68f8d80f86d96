"""Verify the planned fixes of one file by running the original and the patched code.

For each unit (the smallest runnable piece that contains findings): one run of the original,
one of the patched file and, when a rule needs it, one reference run of the original with every
optimizer update deferred; each finding is then judged by its rule's oracle on its unit's runs.
Units, at level `live`:
- the script (module-level code or a `__main__` block) that makes its own data;
- a function or method that a `loopfix_fixtures.py` (beside the file or in a folder above it)
  can call: `fixture_train()` returns `(args, kwargs)` for `train`, and
  `fixture_Trainer_fit()` returns `(instance, args, kwargs)` for `Trainer.fit`. A fixture
  wins over the script, which may never reach that function.
- a function that nothing runs (no fixture, no module-level code or `__main__` block), called
  with arguments the harness builds (`replica.py`): `live` when it only takes numbers, `live
  (synthetic data)` when it takes its data, `replica` when models, optimizers or losses it takes
  are stand-ins of the same kinds. A method's instance is built the same way.
Code whose data is not on this machine (its original run fails with a data-access error before
its first backward) is run again with synthetic batches for its loop (`synthetic.py`): level
`live (synthetic data)`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from loopfix.analysis import FileResult
from loopfix.project import project_for
from loopfix.rules import Finding, rule_by_code
from loopfix.rules.compare import INTENDED
from loopfix.verify import interpreter
from loopfix.verify.harness import ChildRun, RunSettings, run_script
from loopfix.verify.units import (
    enclosing_function,
    is_runnable,
    loop_block_line,
    stand_in_plan,
)


@dataclass
class Runs:
    original: ChildRun
    patched: ChildRun
    reference: ChildRun | None  # the original with every step deferred and graph kept
    iterations: int
    retained: ChildRun | None = None  # the original with every graph kept, steps run
    cloned: ChildRun | None = None  # the original with every saved tensor copied when saved


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
    sandbox: str = "-"  # how the runs were cut from the network
    # a notebook's (cell from 1, line within it) for people; `line` counts the joined cells
    cell: tuple[int, int] | None = None

    @property
    def equivalent(self) -> bool:
        return self.verdict == "equivalent"

    @property
    def writable(self) -> bool:
        """Equivalent, or an unsafe fix (applied with --unsafe-fixes) that ran and changed
        what it says it changes."""
        return self.equivalent or self.verdict.startswith(INTENDED)

    def summary(self) -> str:
        where = f"line {self.line}"
        if self.cell is not None:
            where = f"cell {self.cell[0]} line {self.cell[1]}"
        return (
            f"{self.rule} {where}: {self.verdict} ({self.level}, {self.device}, "
            f"{self.iterations} iterations, {self.seconds:.1f} s)"
        )


SCRIPT = "__main__"
FIXTURES = "loopfix_fixtures.py"


def verify_file(result: FileResult, settings: RunSettings) -> list[Verdict]:
    return judge(result, collect_runs(result, settings))


def collect_runs(result: FileResult, settings: RunSettings) -> dict[str, Runs | str]:
    """The runs each unit's oracles need, or why a unit cannot be run. When the script never
    reaches a backward pass (a command line it was not given, say), the functions holding its
    findings are run on their own instead, with arguments the harness builds."""
    fixable = [f for f in result.findings if f.applied]
    units = {unit_of(result, f) for f in fixable}
    runs = {unit: _guarded_runs(result, unit, settings) for unit in sorted(units)}
    for finding in fixable:
        expected = rule_by_code(finding.rule).predicted_error
        if not _never_trained(runs.get(SCRIPT), expected):
            continue
        function = _function_of(result, finding)
        if unit_of(result, finding) == SCRIPT and function and function not in runs:
            runs[function] = _guarded_runs(result, function, settings)
    return runs


def judged_unit(result: FileResult, finding: Finding, units: dict) -> str:
    """The unit whose runs judge `finding`: its function when the script never trained
    (a script that failed at its first backward with the error the rule predicts did)."""
    unit = unit_of(result, finding)
    function = _function_of(result, finding)
    expected = rule_by_code(finding.rule).predicted_error
    if unit == SCRIPT and _never_trained(units.get(SCRIPT), expected) and function in units:
        return function
    return unit


def _never_trained(runs: Runs | str | None, expected: str = "") -> bool:
    if not isinstance(runs, Runs) or runs.original.events:
        return False
    return not (expected and expected in (runs.original.error or ""))


def _function_of(result: FileResult, finding: Finding) -> str | None:
    line = result.source.position(finding.start)[0]
    return enclosing_function(result.source.text, line)


def _guarded_runs(result: FileResult, unit: str, settings: RunSettings) -> Runs | str:
    try:
        return _runs(result, unit, settings)
    except Exception as error:  # a loopfix bug while preparing runs: this unit only
        return f"internal error while preparing the runs: {error!r}"


def judge(result: FileResult, units: dict[str, Runs | str]) -> list[Verdict]:
    verdicts = []
    for finding in (f for f in result.findings if f.applied):
        runs = units[judged_unit(result, finding, units)]
        if isinstance(runs, str):
            verdicts.append(_unverified(result, finding, runs))
            continue
        made = (runs.original, runs.patched, runs.reference, runs.retained, runs.cloned)
        seconds = sum(r.seconds for r in made if r is not None)
        verdicts.append(_verdict(result, finding, runs, seconds))
    return verdicts


def unit_of(result: FileResult, finding: Finding) -> str:
    """The function (`train`, `Trainer.fit`) around the finding when a fixture can call it or
    nothing else runs it, else the script."""
    text = result.source.text
    function = enclosing_function(text, result.source.position(finding.start)[0])
    if function is None:
        return SCRIPT
    if _fixture_for(result.source.path, function) is not None:
        return function
    if not is_runnable(text):
        return SCRIPT if entry_script(result) is not None else function
    return SCRIPT


def entry_script(result: FileResult) -> Path | None:
    """For a module that runs nothing itself: the project script that imports it (directly
    or through other project modules) and runs, from whose folder the module can be
    imported; what verification runs to execute the module's code as the project does."""
    if result.source.notebook is not None or not result.source.path.is_file():
        return None
    project = project_for(result.source.path)
    if project is None:
        return None
    module = result.source.path.resolve()
    for caller in project.callers_of(module):
        text = project.read(caller)
        try:
            runnable = text is not None and is_runnable(text)
        except SyntaxError:
            runnable = False
        if runnable and module.is_relative_to(caller.parent):
            return caller
    return None


def _runs(result: FileResult, unit: str, settings: RunSettings) -> Runs | str:
    unusable = interpreter.missing_torch(settings.python)
    if unusable is not None:
        return unusable
    path = result.source.path
    name, home = path.name, path.resolve().parent
    if result.source.notebook is not None:
        name = path.stem + ".py"  # its cells, joined, run as a script
    original_code = result.source.runnable(result.source.text)
    run: dict = dict(call=None if unit == SCRIPT else unit)
    if unit == SCRIPT and not is_runnable(result.source.text):
        entry = entry_script(result)
        if entry is None:
            return f"nothing runs it: no module-level code or __main__ block, and no {FIXTURES}"
        return _entry_runs(result, entry, settings)
    if unit != SCRIPT:
        run["fixture"] = _fixture_for(path, unit)
        plan = stand_in_plan(result.source.text, unit) if run["fixture"] is None else None
        if plan is not None and plan.needs_data and not plan.stands_in:
            run["synthetic_loop"] = _loop_line(result, unit)  # its data is an argument: make some
    original = run_script(original_code, name, home, settings, **run)
    if _needs_synthetic_data(original) and "synthetic_loop" not in run:
        loop = _loop_line(result, unit)
        if loop is None:
            return "its data is not on this machine, and no single loop to feed"
        run["synthetic_loop"] = loop  # the data is not here: feed the loop synthetic batches
        original = run_script(original_code, name, home, settings, **run)
    if original.timed_out and not original.events:
        return _timed_out(original, settings)
    patched = run_script(result.source.runnable(result.fixed_text), name, home, settings, **run)
    reference, retained, cloned = _oracle_runs(
        result, lambda **how: run_script(original_code, name, home, settings, **how, **run)
    )
    return Runs(original, patched, reference, settings.iterations, retained, cloned)


def _timed_out(original: ChildRun, settings: RunSettings) -> Runs:
    """The other runs would spend the time limit the same way (a script that fills a replay
    buffer for hours first): judged by a function's runs, or unverified."""
    why = f"the original reached no backward in {original.seconds:.0f} s (--timeout)"
    skipped = ChildRun(None, "", 0.0, skipped=why)
    return Runs(original, skipped, None, settings.iterations, None, None)


def _oracle_runs(result: FileResult, run_original) -> tuple:
    """(reference, retained, cloned): the instrumented runs of the original that the
    applied findings' oracles need (`run_original(**how)`), None where none needs it."""
    needed = set().union(
        *(rule_by_code(f.rule).needs_runs(f) for f in result.findings if f.applied)
    )
    reference = run_original(defer_steps=True) if "deferred" in needed else None
    retained = run_original(retain_graphs=True) if "retained" in needed else None
    cloned = run_original(clone_saved=True) if "cloned" in needed else None
    return reference, retained, cloned


def _entry_runs(result: FileResult, entry: Path, settings: RunSettings) -> Runs | str:
    """The runs of the project's `entry` script with the module in its original and its
    patched version (each oracle's extra runs too)."""
    relative = result.source.path.resolve().relative_to(entry.parent).as_posix()
    code = entry.read_bytes()
    home = entry.parent

    def with_module(text: str, **options) -> ChildRun:
        overlay = {relative: result.source.runnable(text)}
        return run_script(code, entry.name, home, settings, overlay=overlay, **options)

    original = with_module(result.source.text)
    if _needs_synthetic_data(original):
        return f"{entry.name}, which runs it, needs data that is not on this machine"
    if original.timed_out and not original.events:
        return _timed_out(original, settings)
    patched = with_module(result.fixed_text)
    reference, retained, cloned = _oracle_runs(
        result, lambda **how: with_module(result.source.text, **how)
    )
    return Runs(original, patched, reference, settings.iterations, retained, cloned)


def _needs_synthetic_data(run: ChildRun) -> bool:
    """The original failed to reach its first backward because its data is not here."""
    return bool(run.trace and run.trace.get("data_error") and not run.events)


def _loop_line(result: FileResult, unit: str) -> int | None:
    """The one loop (at the top of the module, its `__main__` block, or a function) that
    holds every fixable finding of `unit`; parsing only, no torch."""
    lines = set()
    for finding in (f for f in result.findings if f.applied):
        holder = unit_of(result, finding)
        if unit != SCRIPT and holder == SCRIPT:  # a function run in place of the script
            holder = _function_of(result, finding) or SCRIPT
        if holder == unit:
            lines.add(result.source.position(finding.start)[0])
    return loop_block_line(result.source.text, lines)


def _fixture_for(path: Path, unit: str) -> Path | None:
    """The nearest loopfix_fixtures.py above `path` that defines `fixture_<unit>`."""
    wanted = "fixture_" + unit.replace(".", "_")
    for folder in path.resolve().parents:
        candidate = folder / FIXTURES
        if candidate.is_file():
            try:
                tree = ast.parse(candidate.read_text())
            except (SyntaxError, UnicodeDecodeError, OSError):
                return None
            names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            return candidate if wanted in names else None
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists():
            break
    return None


def _verdict(result: FileResult, finding: Finding, runs: Runs, seconds: float) -> Verdict:
    rule = rule_by_code(finding.rule)
    verdict = rule.judge(finding, runs)
    if runs.patched.skipped:
        verdict = f"unverified: {runs.patched.skipped}"
    line, column = result.source.position(finding.start)
    trace = runs.patched.trace or runs.original.trace or {}
    missing = (runs.original.trace or {}).get("missing_package")
    if missing and not verdict.startswith("equivalent"):
        verdict = (
            f"unverified: missing package {missing} "
            "(install the project's dependencies or pass --python)"
        )
    unverified = verdict.startswith("unverified")
    made_up = [
        kind
        for kind, fact in (
            ("synthetic data", "synthetic"),
            ("synthetic weights", "synthetic_weights"),
        )
        if trace.get(fact)
    ]
    level = f"live ({', '.join(made_up)})" if made_up else "live"
    level = "replica" if trace.get("replica") else level
    return Verdict(
        rule=finding.rule,
        line=line,
        column=column,
        original=describe(runs.original),
        patched=describe(runs.patched),
        verdict=verdict,
        level="unverified" if unverified else level,
        device=trace.get("device", "?"),
        iterations=(runs.patched.trace or {}).get("iterations", 0),
        seconds=seconds,
        sandbox=trace.get("sandbox", "-"),
        cell=_cell(result, finding),
    )


def _cell(result: FileResult, finding: Finding) -> tuple[int, int] | None:
    cell, line, _ = result.source.cell_position(finding.start)
    return None if cell is None else (cell, line)


def describe(run: ChildRun) -> str:
    if run.skipped:
        return f"not run: {run.skipped}"
    if run.error:
        return f"raised {run.error.splitlines()[0][:120]}"
    capped = run.trace.get("capped") if run.trace else False
    return "ran (capped)" if capped else "ran to the end"


def _unverified(result: FileResult, finding: Finding, reason: str) -> Verdict:
    line, column = result.source.position(finding.start)
    return Verdict(
        finding.rule,
        line,
        column,
        "-",
        "-",
        f"unverified: {reason}",
        "unverified",
        "-",
        0,
        0.0,
        cell=_cell(result, finding),
    )
