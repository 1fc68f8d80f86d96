"""The `loopfix` command: check, apply (with --dry-run), rules, explain.

Exit codes, as Ruff's: 0 nothing found, 1 findings (for `check`) or unfixed findings (for
`apply`), 2 a usage error or a file that could not be read or parsed.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from loopfix import __version__
from loopfix.analysis import FileResult, analyse_source
from loopfix.diff import unified_diff
from loopfix.discover import python_files
from loopfix.options import Options, RestrictStyle
from loopfix.refactor import PlannedChange, apply_changes
from loopfix.rules import ALL_RULES, rule_by_code
from loopfix.source import SourceError, SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Find and fix autograd bugs in PyTorch training loops.",
    pretty_exceptions_enable=False,
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


PathsArgument = Annotated[
    list[Path], typer.Argument(help="Files or folders to analyse (folders are searched for .py).")
]


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def _error(message: str) -> None:
    typer.echo(f"loopfix: error: {message}", err=True)


RestrictOption = Annotated[
    RestrictStyle,
    typer.Option(
        "--restrict-style",
        help="How a reordered backward is kept out of other optimizers' parameters: "
        "backward(inputs=...) or torch.autograd.grad accumulated into .grad.",
    ),
]


class Device(StrEnum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"
    mps = "mps"


DeviceOption = Annotated[
    Device, typer.Option("--device", help="Where verification runs: auto = CUDA, MPS, then CPU.")
]
IterationsOption = Annotated[
    int, typer.Option("--iterations", min=1, help="Iterations each verification run may take.")
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", min=1, help="Seconds each verification run may take.")
]
PassEnvOption = Annotated[
    list[str],
    typer.Option(
        "--pass-env",
        help="Pass this environment variable to verification runs even though its name "
        "looks like a credential (repeatable).",
    ),
]


def _analyse(paths: list[Path], options: Options | None = None) -> tuple[list[FileResult], int]:
    """Analyse every file; report unreadable ones and count them as errors."""
    results, errors = [], 0
    for found in python_files(paths):
        if isinstance(found, str):
            _error(found)
            errors += 1
            continue
        try:
            result = analyse_source(SourceFile.read(found), options=options)
        except SourceError as error:
            _error(str(error).replace(str(found), _display(found), 1))
            errors += 1
            continue
        except Exception as error:  # a loopfix bug on one file must not stop the others
            _error(f"{_display(found)}: internal error: {error!r}")
            errors += 1
            continue
        for message in result.errors:
            _error(message)
            errors += 1
        results.append(result)
    return results, errors


def _finding_rows(result: FileResult) -> list[dict]:
    rows = []
    for finding in result.findings:
        line, column = result.source.position(finding.start)
        end_line, end_column = result.source.position(finding.end)
        rows.append(
            {
                "path": _display(result.source.path),
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "rule": finding.rule,
                "name": finding.name,
                "message": finding.message,
                "fixable": finding.fixable,
                "fix_title": finding.fix.title if finding.fix else None,
            }
        )
    return rows


@app.command()
def check(
    paths: PathsArgument,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="Output format.")
    ] = OutputFormat.text,
    restrict_style: RestrictOption = RestrictStyle.inputs,
) -> None:
    """Report autograd bugs; `[*]` marks findings that `loopfix apply` can fix."""
    results, errors = _analyse(paths, Options(restrict_style=restrict_style))
    rows = [row for result in results for row in _finding_rows(result)]
    if output_format is OutputFormat.json:
        typer.echo(json.dumps(rows, indent=2))
    else:
        for row in rows:
            marker = " [*]" if row["fixable"] else ""
            typer.echo(
                f"{row['path']}:{row['line']}:{row['column']}: {row['rule']}{marker} "
                f"{row['message']}"
            )
        fixable = sum(row["fixable"] for row in rows)
        if rows:
            typer.echo(
                f"Found {len(rows)} finding(s); {fixable} fixable with `loopfix apply`.", err=True
            )
    raise typer.Exit(2 if errors else 1 if rows else 0)


@app.command()
def verify(
    paths: PathsArgument,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="Output format.")
    ] = OutputFormat.text,
    device: DeviceOption = Device.auto,
    iterations: IterationsOption = 3,
    timeout: TimeoutOption = 120.0,
    restrict_style: RestrictOption = RestrictStyle.inputs,
    pass_env: PassEnvOption = None,
) -> None:
    """Run the original and the patched code of every planned fix, and judge each rewrite.

    This executes the project's own code (as running its tests would), in child processes
    from temporary copies. Exit 0 when every rewrite is equivalent, 1 otherwise.
    """
    results, errors = _analyse(paths, Options(restrict_style=restrict_style))
    settings = RunSettings(
        device=device.value,
        iterations=iterations,
        timeout=timeout,
        pass_env=tuple(pass_env or ()),
    )
    rows = []
    for result in results:
        for verdict in verify_file(result, settings):
            rows.append({"path": _display(result.source.path), **asdict(verdict)})
    if output_format is OutputFormat.json:
        typer.echo(json.dumps(rows, indent=2))
    else:
        for row in rows:
            typer.echo(
                f"{row['path']}:{row['line']}:{row['column']}: {row['rule']} {row['verdict']}"
                f" | original: {row['original']} | patched: {row['patched']}"
                f" | {row['level']}, {row['device']}, {row['iterations']} iterations,"
                f" {row['seconds']:.1f} s"
            )
    failed = any(row["verdict"] != "equivalent" for row in rows)
    raise typer.Exit(2 if errors else 1 if failed else 0)


@app.command()
def apply(
    paths: PathsArgument,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", "--diff", help="Print the diff; write nothing.")
    ] = False,
    no_verify: Annotated[
        bool,
        typer.Option("--no-verify", help="Write without running the original and patched code."),
    ] = False,
    device: DeviceOption = Device.auto,
    iterations: IterationsOption = 3,
    timeout: TimeoutOption = 120.0,
    restrict_style: RestrictOption = RestrictStyle.inputs,
    pass_env: PassEnvOption = None,
) -> None:
    """Rewrite the files to fix what `check` reports, after verifying each rewrite.

    A file is written only when every rewrite in it verifies as equivalent; `--no-verify`
    skips verification (which runs the project's code in child processes).
    """
    results, errors = _analyse(paths, Options(restrict_style=restrict_style))
    settings = RunSettings(
        device=device.value,
        iterations=iterations,
        timeout=timeout,
        pass_env=tuple(pass_env or ()),
    )
    verdicts = {id(r): [] if no_verify else verify_file(r, settings) for r in results if r.changed}
    if no_verify and any(r.changed for r in results):
        typer.echo("Verification skipped (--no-verify).", err=True)
    rejected = [r for r in results if r.changed and not all(v.equivalent for v in verdicts[id(r)])]
    for result in rejected:
        for verdict in verdicts[id(result)]:
            if not verdict.equivalent:
                _error(f"{_display(result.source.path)}: not written: {verdict.summary()}")
    changes = [
        PlannedChange(result.source.path, result.source.data, result.fixed_bytes)
        for result in results
        if result.changed and all(result is not r for r in rejected)
    ]
    unfixed = sum(not f.fixable for result in results for f in result.findings)
    unfixed += sum(f.fixable for result in rejected for f in result.findings)
    if dry_run:
        _print_diffs((r for r in results if r.changed), verdicts)
    else:
        written, write_errors = apply_changes(changes)
        for message in write_errors:
            _error(message)
        errors += len(write_errors)
        fixed = sum(
            f.fixable
            for r in results
            for f in r.findings
            if r.source.path in {c.path for c in written}
        )
        typer.echo(f"Fixed {fixed} finding(s) in {len(written)} file(s).", err=True)
    if unfixed:
        typer.echo(f"{unfixed} finding(s) have no safe automatic fix.", err=True)
    raise typer.Exit(2 if errors else 1 if unfixed else 0)


def _print_diffs(results, verdicts: dict[int, list]) -> None:
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    for result in results:
        path = _display(result.source.path).replace(os.sep, "/").lstrip("/")
        diff = unified_diff(path, result.source.text, result.fixed_text)
        # Lines before a diff header are commentary to `git apply` and `patch`.
        diff = "".join(f"# verify: {v.summary()}\n" for v in verdicts[id(result)]) + diff
        if not colour:
            sys.stdout.write(diff)
            continue
        for line in diff.splitlines(keepends=True):
            style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1])
            if line.startswith(("+++", "---", "diff ")):
                style = None
            typer.secho(line, fg=style, nl=False, bold=line.startswith("diff "))
    sys.stdout.flush()


@app.command("rules")
def list_rules() -> None:
    """List the rules."""
    for rule in ALL_RULES:
        typer.echo(f"{rule.code}  {rule.name:<28} {rule.summary}")


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule code, e.g. LF001.")]) -> None:
    """Print a rule's documentation."""
    rule = rule_by_code(code)
    if rule is None:
        _error(f"unknown rule {code!r}; `loopfix rules` lists them")
        raise typer.Exit(2)
    typer.echo(f"# {rule.code} {rule.name}\n\n{rule.summary}.\n\n{rule.docs}")


@app.command()
def lsp() -> None:
    """Run the language server on stdio (diagnostics, quick fixes, a verify command)."""
    from loopfix.lsp.server import main as serve

    serve()


@app.command()
def version() -> None:
    """Print loopfix's version."""
    typer.echo(__version__)


def main() -> None:
    app()
