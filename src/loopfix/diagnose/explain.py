"""From what the instrumented run recorded (`child.py`'s report) to a `Diagnosis`: the error
in terms of the user's lines, then the static findings at those lines (any rule), each with
its fix (the diff `apply` would write) and, unless disabled, its verification verdict."""

from __future__ import annotations

from pathlib import Path

from loopfix.diagnose import (
    FREED,
    MULTI_PROCESS,
    RULES_FOR,
    SCHEDULER_WARNING,
    VERSION,
    Diagnosis,
    Options,
)


def explain(
    command: list[str], report: dict, stderr: str, timed_out: bool, options: Options, cwd: Path
) -> Diagnosis:
    diagnosis = _diagnosis(command, report, stderr, timed_out, options, cwd)
    diagnosis.run_pid = report.get("pid")
    return diagnosis


def _diagnosis(
    command: list[str], report: dict, stderr: str, timed_out: bool, options: Options, cwd: Path
) -> Diagnosis:
    error, facts = report.get("error"), report.get("explanation")
    sandbox = report.get("network", "")
    if report.get("kind") == "multi-process":
        return Diagnosis(command, "failed", MULTI_PROCESS, sandbox=sandbox)
    if facts is not None:
        lines = _explanation(facts, cwd)
        involved = _involved(facts)
        kind = facts.get("kind", "")
        summary = lines[0]
        diagnosis = Diagnosis(command, "diagnosed", summary, error, lines[1:], facts)
        diagnosis.sandbox = sandbox
        _attach_findings(diagnosis, involved, RULES_FOR.get(kind, ()), options, cwd)
        return diagnosis
    if error and (FREED in error or VERSION in error):
        summary = "the backward failed, but the run could not tell where (no instrumented call)"
        diagnosis = Diagnosis(command, "diagnosed", summary, error, sandbox=sandbox)
        files = {_key(b["line"]) for b in report.get("backwards", []) if b.get("line")}
        involved = {f: set() for f, _ in files}
        rules = RULES_FOR["freed graph" if FREED in error else "version"]
        _attach_findings(diagnosis, involved, rules, options, cwd)
        return diagnosis
    if error:
        summary = "the command failed for another reason (its own error below)"
        at = report.get("error_at")
        where = [f"raised at {_where(at, cwd)}"] if at else []
        return Diagnosis(command, "failed", summary, error, where, stderr=stderr, sandbox=sandbox)
    warned = [w for w in report.get("warnings", []) if SCHEDULER_WARNING in w["message"]]
    if warned:
        line = warned[0]["line"]
        where = _where(line, cwd) if line else "the run"
        summary = (
            f"torch warned that a learning-rate scheduler stepped before its optimizer ({where}):"
            " the schedule is one step ahead"
        )
        diagnosis = Diagnosis(command, "diagnosed", summary, sandbox=sandbox)
        involved = {_key(line)[0]: {_key(line)[1]}} if line else {}
        _attach_findings(diagnosis, involved, ("LF005",), options, cwd)
        return diagnosis
    ran = "stopped after the time limit" if timed_out else "ran without an autograd error"
    capped = " (stopped after the capped iterations)" if report.get("capped") else ""
    trained = _trained_files(report)
    diagnosis = Diagnosis(command, "clean", f"the command {ran}{capped}", sandbox=sandbox)
    _attach_findings(diagnosis, trained, (), options, cwd, silent_bugs=True)
    if diagnosis.findings:
        diagnosis.status = "diagnosed"
        diagnosis.summary += "; but loopfix check finds bugs that raise nothing in the code it ran"
    return diagnosis


# -- the explanation ---------------------------------------------------------------------------


def _explanation(facts: dict, cwd: Path) -> list[str]:
    backward = _where(facts["backward"], cwd)
    iteration = facts.get("iteration")
    if facts.get("kind") == "freed graph":
        lines = [
            f"Trying to backward through the graph a second time: the backward at {backward} "
            f"(iteration {iteration}) reached a graph an earlier backward had freed"
        ]
        variable = facts.get("variable")
        if variable:
            created = variable.get("created")
            made = f", built at {_where(created, cwd)} in iteration {variable.get('created_in')}"
            lines.append(
                f"`{variable['name']}` carries the old graph into iteration {iteration}: read at "
                f"{_where(variable['read_at'], cwd)}{made if created else ''}"
            )
        elif facts.get("created"):
            created = facts["created"]
            lines.append(
                f"the graph reached again was built at {_where(created['line'], cwd)} "
                f"({created['node']}) in iteration {created['iteration']}"
            )
        if facts.get("freed_by"):
            freed = facts["freed_by"]
            lines.append(
                f"the backward at {_where(freed['line'], cwd)} (iteration {freed['iteration']}) "
                "freed it (no retain_graph=True)"
            )
        return lines
    tensor = facts.get("tensor", {})
    shape = "x".join(str(s) for s in tensor.get("shape", [])) or "scalar"
    what = f"the parameter `{tensor['parameter']}`" if tensor.get("parameter") else "a tensor"
    if tensor.get("candidates"):
        names = ", ".join(f"`{n}`" for n in tensor["candidates"])
        what = f"a parameter (one of {names})"
    if tensor.get("output_of") and not tensor.get("parameter") and not tensor.get("candidates"):
        what = f"the output of {tensor['output_of'].removesuffix('Backward0')}"
    lines = [
        f"one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: the backward at {backward} (iteration {iteration}) needs {what} "
        f"[{shape}] at version {tensor.get('expected')}, and it is at version "
        f"{tensor.get('version')}"
    ]
    saved = facts.get("saved")
    if saved and saved.get("line"):
        lines.append(
            f"it was saved by the forward at {_where(saved['line'], cwd)} "
            f"(iteration {saved['iteration']})"
        )
    changed = facts.get("changed")
    if changed and changed.get("line"):
        by = "an optimizer step" if changed.get("by_step") else f"`{changed['operation']}`"
        lines.append(
            f"{by} changed it in place at {_where(changed['line'], cwd)} "
            f"(iteration {changed['iteration']})"
        )
    return lines


def _involved(facts: dict) -> dict[str, set[int]]:
    """Each file the explanation names, with its lines."""
    places = [facts.get("backward")]
    for key in ("variable", "created", "freed_by", "saved", "changed"):
        value = facts.get(key) or {}
        places += [value.get("line"), value.get("read_at"), value.get("created")]
    involved: dict[str, set[int]] = {}
    for place in places:
        if isinstance(place, dict) and "path" in place:
            path, line = _key(place)
            involved.setdefault(path, set()).add(line)
    return involved


def _trained_files(report: dict) -> dict[str, set[int]]:
    files: dict[str, set[int]] = {}
    for event in [*report.get("backwards", []), *report.get("steps", [])]:
        if event.get("line"):
            path, line = _key(event["line"])
            files.setdefault(path, set()).add(line)
    return files


def _key(place: dict) -> tuple[str, int]:
    return str(Path(place["path"]).resolve()), int(place["line"])


def _where(place: dict | None, cwd: Path) -> str:
    if not place:
        return "?"
    path = Path(place["path"])
    try:
        shown = path.resolve().relative_to(cwd.resolve())
    except ValueError:
        shown = path
    return f"{shown}:{place['line']}"


# -- the static findings -----------------------------------------------------------------------


def _attach_findings(
    diagnosis: Diagnosis,
    involved: dict[str, set[int]],
    fallback_rules: tuple[str, ...],
    options: Options,
    cwd: Path,
    silent_bugs: bool = False,
) -> None:
    """The findings of `loopfix check` on the lines involved, then the other findings of the
    rules that raise this error in the files involved, with fix and verdict."""
    from loopfix.analysis import analyse_source
    from loopfix.diff import unified_diff
    from loopfix.source import SourceFile

    for path, lines in sorted(involved.items()):
        file = Path(path)
        if not file.is_file() or file.suffix != ".py":
            continue
        try:
            result = analyse_source(SourceFile.read(file))
        except (OSError, ValueError, SyntaxError):
            continue
        at_lines = [f for f in result.findings if _line_of(result, f) in lines]
        # then the other findings of the rules behind this error: the next failure to come
        also = [f for f in result.findings if f.rule in fallback_rules and f not in at_lines]
        chosen = at_lines + also
        if silent_bugs:  # a clean run: only the rules whose bugs raise nothing
            from loopfix.rules import CRASHING_RULES

            chosen = [f for f in result.findings if f.rule not in CRASHING_RULES]
        if not chosen:
            continue
        verdicts = _verdicts(result, options) if options.verify else {}
        shown = _shown_path(file, cwd)
        diff = unified_diff(shown, result.source.text, result.fixed_text) if result.changed else ""
        for finding in chosen:
            line, column = result.source.position(finding.start)
            row = {
                "path": shown,
                "line": line,
                "column": column,
                "rule": finding.rule,
                "name": finding.name,
                "message": finding.message,
                "fix": finding.fix.title if finding.fix else None,
                "fixable": finding.applied,
                "no_fix": finding.fix_unavailable if finding.fix is None else None,
                "verdict": verdicts.get((finding.rule, line)),
                "at_the_lines": finding in at_lines,
            }
            diagnosis.findings.append(row)
        if diff:
            diagnosis.findings[-1]["diff"] = diff
    if not diagnosis.findings and diagnosis.status == "diagnosed":
        diagnosis.note = (
            "no loopfix rule reports these lines: the static analysis misses this error, "
            "either because it comes through code loopfix does not follow (a registry, a "
            "factory in another package, a library module) or because no rule knows this form "
            "of it; the lines above are where it arises"
        )


def _line_of(result, finding) -> int:
    return result.source.position(finding.start)[0]


def _verdicts(result, options: Options) -> dict[tuple[str, int], str]:
    import sys

    from loopfix.verify.harness import RunSettings
    from loopfix.verify.verifier import verify_file

    python = options.python or sys.executable
    settings = RunSettings(device="auto", iterations=3, timeout=180, python=python)
    try:
        return {(v.rule, v.line): v.verdict for v in verify_file(result, settings)}
    except Exception as error:  # noqa: BLE001 - a diagnosis stands without its verdicts
        return {("", 0): f"verification failed: {error}"}


def _shown_path(path: Path, cwd: Path) -> str:
    try:
        return str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return str(path)
