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

The original run is the evidence that the bug is there: the expression a finding spans is
wrapped in a probe where its rule asks for one (`Rule.probe`: does the value hold a graph, one
a backward already went through?), which returns the value unchanged and keeps every line
where it was. When a file's fixes come from several rules, each rule's findings are judged
against the original with the *other* rules' fixes applied (and the patched file holds them
all): each oracle sees only the change of its own rule, by its own criterion.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from loopfix.analysis import FileResult
from loopfix.edits import Edit, apply_edits
from loopfix.project import project_for
from loopfix.rules import Finding, rule_by_code
from loopfix.rules.compare import WRITTEN, Outcome, outcome_of, said
from loopfix.scan import in_cells
from loopfix.verify import interpreter
from loopfix.verify.harness import (
    ChildRun,
    RunSettings,
    added_folders,
    module_import_path,
    package_of,
    run_script,
)
from loopfix.verify.units import (
    Parameter,
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
    # a finding's start (an offset of the file's text) -> the number of its probe
    probes: dict[int, int] = field(default_factory=dict)
    text: str = ""  # the file's text
    # the other rules' edits in what `original` ran (see `by_rule`), and what that is called
    moved: tuple[Edit, ...] = ()
    against: str = ""
    # a rule's code -> its runs, when a file's fixes come from several rules: the original
    # runs with the other rules' fixes applied (the patched run is the same)
    by_rule: dict[str, Runs] = field(default_factory=dict)

    def probed(self, finding: Finding) -> dict | None:
        """What the probe on `finding`'s expression recorded in the original run (`seen`,
        `graph`, `backwarded` counts), or None when none was placed."""
        number = self.probes.get(finding.start)
        if number is None or self.original.trace is None:
            return None
        recorded = self.original.trace.get("probes", [])
        found = next((p for p in recorded if p["probe"] == number), None)
        return found or {"probe": number, "seen": 0, "graph": 0, "backwarded": 0}

    def original_line(self, offset: int) -> int:
        """The line of `offset` in the file as the user wrote it."""
        return self.text.count("\n", 0, offset) + 1

    def judged_lines(self, first: int, last: int) -> set[int]:
        """Lines `first`..`last` of the file, numbered as in the text the original ran."""
        starts = [0] + [i + 1 for i, c in enumerate(self.text) if c == "\n"]
        lines = set()
        for line in range(first, last + 1):
            offset = _moved(starts[min(line, len(starts)) - 1], self.moved)
            if offset is not None:
                lines.add(apply_edits(self.text, self.moved).count("\n", 0, offset) + 1)
        return lines


@dataclass
class Verdict:
    rule: str
    line: int
    column: int
    original: str
    patched: str
    verdict: str  # a word of `Outcome`, then (but for "equivalent") ": " and what was seen
    level: str
    device: str
    iterations: int
    seconds: float
    sandbox: str = "-"  # how the runs were cut from the network
    # a notebook's (cell from 1, line within it) for people; `line` counts the joined cells
    cell: tuple[int, int] | None = None
    compared: str = ""  # what the oracle compared (over `iterations`)
    against: str = ""  # what the patched run was compared with, when not the plain original

    @property
    def outcome(self) -> Outcome:
        return outcome_of(self.verdict)

    @property
    def equivalent(self) -> bool:
        return self.outcome is Outcome.equivalent

    @property
    def writable(self) -> bool:
        """Equivalent, or changed as intended (an unsafe fix applied with --unsafe-fixes, or
        a fix whose purpose is to change a value): what `apply` writes."""
        return self.outcome in WRITTEN

    @property
    def where(self) -> str:
        if self.cell is None:
            return f"line {self.line}"
        return f"cell {self.cell[0]} line {self.cell[1]}"

    def summary(self) -> str:
        """One line, never cut: the rule, where, the verdict, how it ran, what was compared."""
        compared = f"compared {self.compared}" if self.iterations else "nothing compared"
        return (
            f"{self.rule} {self.where}: {self.verdict} ({self.level}, {self.device}, "
            f"{self.iterations} iterations, {self.seconds:.1f} s; {compared}"
            f"{f', against {self.against}' if self.against else ''})"
        )


def _moved(offset: int, edits) -> int | None:
    """Where `offset` of a text is once `edits` are applied (None: an edit replaces it)."""
    shift = 0
    for edit in edits:
        if edit.start < offset < edit.end:
            return None
        if edit.end <= offset:
            shift += len(edit.text) - (edit.end - edit.start)
    return offset + shift


PROBE = "__loopfix_probe__"
MAX_PROBES = 16


def probed_text(text: str, spans: dict[int, tuple]) -> tuple[str, dict[int, int]]:
    """`text` with each span (key: a finding's start) that is an expression wrapped in
    `__loopfix_probe__(number, ...)`, on the same lines; and the numbers given. A span may
    name a third element, an expression to watch instead (`__loopfix_probe__(number, ...,
    lambda: meter.sum)`). A span that is not an expression in a load position (the wrapped
    text would not parse) is left alone."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return text, {}
    numbers: dict[int, int] = {}
    chosen = sorted(spans.items(), key=lambda item: item[1][0], reverse=True)[:MAX_PROBES]
    for key, (start, end, *watched) in chosen:
        expression = text[start:end]
        if "\n" in expression or not expression.strip():
            continue
        number = len(numbers)
        watch = f", lambda: {watched[0]}" if watched and watched[0] else ""
        trial = f"{text[:start]}{PROBE}({number}, {expression}{watch}){text[end:]}"
        try:
            ast.parse(expression, mode="eval")
            ast.parse(trial)
        except (SyntaxError, ValueError):
            continue
        text, numbers[key] = trial, number
    return text, numbers


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
        unit = judged_unit(result, finding, units)
        runs = units[unit]
        if isinstance(runs, str):
            verdicts.append(_unverified(result, finding, runs))
            continue
        failed = _failed_both_ways(units, unit) if unit != unit_of(result, finding) else None
        if failed is not None:
            compared = "nothing (no run reached a backward)"
            verdicts.append(_unverified(result, finding, failed, compared))
            continue
        runs = runs.by_rule.get(finding.rule, runs)
        made = (runs.original, runs.patched, runs.reference, runs.retained, runs.cloned)
        seconds = sum(r.seconds for r in made if r is not None)
        verdicts.append(_verdict(result, finding, runs, seconds))
    return verdicts


def _failed_both_ways(units: dict[str, Runs | str], function: str) -> str | None:
    """When the script raised before its first backward and `function`, run alone in its
    place with arguments the harness made up, raised before its first backward too: both
    errors, the script's first (it is the user's own; the other may come from an argument
    made up wrong). None when the function's run trained."""
    script, alone = units.get(SCRIPT), units[function]
    if not isinstance(script, Runs) or not isinstance(alone, Runs):
        return None
    if alone.original.events or not alone.original.error or not script.original.error:
        return None
    return (
        f"the script raised {said(script.original.error)} before its first backward; "
        f"`{function}`, run alone with arguments loopfix made up, raised "
        f"{said(alone.original.error)}"
    )


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
    run: dict = dict(call=None if unit == SCRIPT else unit, graphs=_records_graphs(result))
    run["package"] = package_of(path, result.source.text)
    if unit == SCRIPT and not is_runnable(result.source.text):
        entry = entry_script(result)
        if entry is None:
            return f"nothing runs it: no module-level code or __main__ block, and no {FIXTURES}"
        return _entry_runs(result, entry, settings)
    if unit != SCRIPT:  # a function or method of a module: run as the project imports it
        run["import_path"] = module_import_path(path)
        run["fixture"] = _fixture_for(path, unit)
        plan = stand_in_plan(result.source.text, unit) if run["fixture"] is None else None
        if plan is not None and plan.unbuildable:
            return _unbuildable(unit, plan.unbuildable[0])
        if plan is not None and plan.needs_data and not plan.stands_in:
            run["synthetic_loop"] = _loop_line(result, unit)  # its data is an argument: make some

    before, after = added_folders(result.source.text, home)
    if before or after:  # `sys.path.append("../lib")`, read from the script's folder
        run["import_path"] = (*before, *run.get("import_path", (home,)), *after)

    def run_text(text: str, **how) -> ChildRun:
        return run_script(result.source.runnable(text), name, home, settings, **how, **run)

    probed, numbers = _probed(result, ())
    original = run_text(probed)
    if _needs_synthetic_data(original) and "synthetic_loop" not in run:
        loop = _loop_line(result, unit)
        if loop is None:
            return "its data is not on this machine, and no single loop to feed"
        run["synthetic_loop"] = loop  # the data is not here: feed the loop synthetic batches
        original = run_text(probed)
    if original.timed_out and not original.events:
        return _timed_out(original, settings)
    return _judged_runs(result, run_text, original, numbers, settings)


def _unbuildable(unit: str, parameter: Parameter) -> str:
    """Why `unit` cannot be called with made-up arguments: `parameter` is an object of the
    author's whose own method it calls."""
    return (
        f"nothing to call {unit} with: its argument `{parameter.name}` is an object whose "
        f"method `{parameter.method}` it calls, which loopfix cannot make up; a "
        f"`fixture_{unit.replace('.', '_')}` in {FIXTURES} gives it one"
    )


def _records_graphs(result: FileResult) -> bool:
    return any(rule_by_code(f.rule).records_graphs for f in result.findings if f.applied)


def _probed(result: FileResult, moved: tuple[Edit, ...]) -> tuple[str, dict[int, int]]:
    """The file's text with the `moved` edits (other rules' fixes) applied and a probe on
    each applied finding whose rule asks for one (keyed by the finding's start)."""
    spans = {}
    for finding in result.findings:
        watched = rule_by_code(finding.rule).probe(finding) if finding.applied else False
        if watched is False:
            continue
        start, end = finding.start, finding.end
        if watched is not True:  # a node of the file's tree
            start = result.source.offset(watched.lineno, watched.col_offset)
            end = result.source.offset(watched.end_lineno, watched.end_col_offset)
        start, end = _moved(start, moved), _moved(end, moved)
        if start is not None and end is not None:
            spans[finding.start] = (start, end, rule_by_code(finding.rule).watch(finding))
    return probed_text(apply_edits(result.source.text, moved), spans)


def _judged_runs(
    result: FileResult,
    run_text: Callable[..., ChildRun],
    original: ChildRun,
    numbers: dict[int, int],
    settings: RunSettings,
) -> Runs:
    """The patched run and the runs each rule's oracle needs: of the original when one rule
    made the file's fixes; with several, per rule, of the original with the other rules'
    fixes applied."""
    applied = [f for f in result.findings if f.applied]
    patched = run_text(result.fixed_text)
    codes = sorted({f.rule for f in applied})
    text = result.source.text
    runs = Runs(original, patched, None, settings.iterations, probes=numbers, text=text)
    if len(codes) <= 1:
        runs.reference, runs.retained, runs.cloned = _oracle_runs(applied, run_text, text)
        return runs
    for code in codes:
        others = [f for f in applied if f.rule != code]
        moved = tuple(sorted(e for f in others for e in f.fix.edits))
        probed, own_numbers = _probed(result, moved)
        extra = _oracle_runs([f for f in applied if f.rule == code], run_text, probed)
        named = ", ".join(f"{f.rule} {_where(result, f)}" for f in others)
        runs.by_rule[code] = Runs(
            run_text(probed),
            patched,
            extra[0],
            settings.iterations,
            *extra[1:],
            probes=own_numbers,
            text=text,
            moved=moved,
            against=f"the original with the file's other fixes ({named})",
        )
    return runs


def _where(result: FileResult, finding: Finding) -> str:
    cell = _cell(result, finding)
    if cell is not None:
        return f"cell {cell[0]} line {cell[1]}"
    return f"line {result.source.position(finding.start)[0]}"


def _timed_out(original: ChildRun, settings: RunSettings) -> Runs:
    """The other runs would spend the time limit the same way (a script that fills a replay
    buffer for hours first): judged by a function's runs, or unverified."""
    why = f"the original reached no backward in {original.seconds:.0f} s (--timeout)"
    skipped = ChildRun(None, "", 0.0, skipped=why)
    return Runs(original, skipped, None, settings.iterations, None, None)


def _oracle_runs(findings: list[Finding], run_text, text: str) -> tuple:
    """(reference, retained, cloned): the instrumented runs of the original (`text`, run by
    `run_text(text, **how)`) that the oracles of `findings` need, None where none needs it."""
    needed = set().union(*(rule_by_code(f.rule).needs_runs(f) for f in findings))
    reference = run_text(text, defer_steps=True) if "deferred" in needed else None
    retained = run_text(text, retain_graphs=True) if "retained" in needed else None
    cloned = run_text(text, clone_saved=True) if "cloned" in needed else None
    return reference, retained, cloned


def _entry_runs(result: FileResult, entry: Path, settings: RunSettings) -> Runs | str:
    """The runs of the project's `entry` script with the module in its original and its
    patched version (each oracle's extra runs too)."""
    relative = result.source.path.resolve().relative_to(entry.parent).as_posix()
    code = entry.read_bytes()
    home = entry.parent
    graphs = _records_graphs(result)

    def with_module(text: str, **options) -> ChildRun:
        overlay = {relative: result.source.runnable(text)}
        return run_script(
            code, entry.name, home, settings, overlay=overlay, graphs=graphs, **options
        )

    probed, numbers = _probed(result, ())
    original = with_module(probed)
    if _needs_synthetic_data(original):
        return f"{entry.name}, which runs it, needs data that is not on this machine"
    if original.timed_out and not original.events:
        return _timed_out(original, settings)
    return _judged_runs(result, with_module, original, numbers, settings)


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
    if missing and outcome_of(verdict) not in WRITTEN:
        verdict = (
            f"unverified: missing package {missing} "
            "(install the project's dependencies or pass --python)"
        )
    unverified = outcome_of(verdict) is Outcome.undecided
    made_up = [
        kind
        for kind, fact in (
            ("synthetic data", "synthetic"),
            ("synthetic weights", "synthetic_weights"),
            (".cuda() on the CPU", "cuda_on_cpu"),
            ("worker processes run in turn, in one process", "workers_here"),
        )
        if trace.get(fact)
    ]
    level = f"live ({', '.join(made_up)})" if made_up else "live"
    level = "replica" if trace.get("replica") else level
    iterations = (runs.patched.trace or {}).get("iterations", 0)
    return Verdict(
        rule=finding.rule,
        line=line,
        column=column,
        original=in_cells(describe(runs.original), result.source),
        patched=in_cells(describe(runs.patched), result.source),
        verdict=in_cells(verdict, result.source),
        level="unverified" if unverified else level,
        device=trace.get("device", "?"),
        iterations=iterations,
        seconds=seconds,
        sandbox=trace.get("sandbox", "-"),
        cell=_cell(result, finding),
        compared=rule.compared(finding),
        against=runs.against,
    )


def _count(iterations: int) -> str:
    return "1 iteration" if iterations == 1 else f"{iterations} iterations"


def _cell(result: FileResult, finding: Finding) -> tuple[int, int] | None:
    cell, line, _ = result.source.cell_position(finding.start)
    return None if cell is None else (cell, line)


def describe(run: ChildRun) -> str:
    """What a run did, in a few words: the error it raised (its first sentence, whole) after
    how many completed iterations, or how far it ran."""
    if run.skipped:
        return f"not run: {run.skipped}"
    done = _count((run.trace or {}).get("iterations", 0))
    if run.timed_out:
        return run.error
    if run.error:
        return f"raised {said(run.error)} (after {done})"
    capped = run.trace.get("capped") if run.trace else False
    return f"ran {done} (capped)" if capped else f"ran to the end ({done})"


def _unverified(
    result: FileResult, finding: Finding, reason: str, compared: str = "nothing (no run was made)"
) -> Verdict:
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
        compared=compared,
    )
