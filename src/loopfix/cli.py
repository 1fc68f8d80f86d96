"""The `loopfix` command: check, verify, apply (with --dry-run / --interactive), rules,
explain, lsp.

Exit codes, as Ruff's: 0 nothing found, 1 findings (for `check`) or unfixed findings (for
`apply`), 2 a usage error, a bad setting, or a file that could not be read or parsed.
Settings come from `[tool.loopfix]` in the nearest `pyproject.toml`; flags override them.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import json
import os
import re
import shlex
import signal
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from loopfix import __version__
from loopfix.analysis import FileResult, analyse_source
from loopfix.config import Config, ConfigError, find_config, with_overrides
from loopfix.diff import source_diff
from loopfix.discover import python_files
from loopfix.ignore import repository_root
from loopfix.options import Options, RestrictStyle
from loopfix.project import ROOT_MARKERS
from loopfix.report import OutputFormat, render, statistics
from loopfix.rules import ALL_RULES, rule_by_code
from loopfix.scan import (
    NO_BACKWARD,
    FileReport,
    ScanSettings,
    default_jobs,
    finding_rows,
    scan,
)
from loopfix.source import SourceError, SourceFile

if TYPE_CHECKING:  # verification is imported by the commands that verify
    from loopfix.verify.harness import RunSettings
    from loopfix.verify.verifier import Verdict

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    help="Find and fix autograd bugs in PyTorch training loops.",
    pretty_exceptions_enable=False,
)


class VerifyFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


class Device(StrEnum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"
    mps = "mps"


PathsArgument = Annotated[
    list[Path], typer.Argument(help="Files or folders to analyse (folders are searched for .py).")
]
RestrictOption = Annotated[
    RestrictStyle | None,
    typer.Option(
        "--restrict-style",
        help="How a reordered backward is kept out of other optimizers' parameters: "
        "backward(inputs=...) or torch.autograd.grad accumulated into .grad.",
    ),
]
UnsafeFixesOption = Annotated[
    bool | None,
    typer.Option(
        "--unsafe-fixes/--no-unsafe-fixes",
        help="Also apply unsafe fixes ([-]): well-known repairs that change what the code "
        "computes on purpose (each says what in its title); verification reports the change.",
    ),
]
SelectOption = Annotated[
    str | None, typer.Option("--select", help="Rule codes or prefixes to run, comma-separated.")
]
IgnoreOption = Annotated[
    str | None, typer.Option("--ignore", help="Rule codes or prefixes to skip, comma-separated.")
]
ExcludeOption = Annotated[
    list[str] | None,
    typer.Option("--exclude", help="gitignore-style pattern of paths to skip (repeatable)."),
]
JobsOption = Annotated[
    int | None, typer.Option("--jobs", "-j", min=1, help="Files analysed in parallel.")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Analyse every file again; read and write no cache.")
]
CacheDirOption = Annotated[
    Path | None, typer.Option("--cache-dir", help="Where the analysis cache lives.")
]
DeviceOption = Annotated[
    Device | None,
    typer.Option("--device", help="Where verification runs: auto = CUDA, MPS, then CPU."),
]
IterationsOption = Annotated[
    int | None,
    typer.Option("--iterations", min=1, help="Iterations each verification run may take."),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option("--timeout", min=1, help="Seconds each verification run may take."),
]
PassEnvOption = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-env",
        help="Pass this environment variable to verification runs even though its name "
        "looks like a credential (repeatable).",
    ),
]
ScriptArgsOption = Annotated[
    str | None,
    typer.Option(
        "--script-args",
        help="The command line verification runs give the script, split as a shell would "
        '("--data tiny/ --epochs 1"); default: the defaults its parser declares, with '
        "made-up values for required arguments.",
    ),
]
PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="The interpreter that runs the project's code for verification (default: the "
        "active virtual environment, a .venv or venv at the project root, or loopfix's own). "
        "It needs torch; loopfix installs nothing into it.",
    ),
]
ExitZeroOption = Annotated[
    bool, typer.Option("--exit-zero", help="Exit 0 even when findings remain (errors: 2).")
]


@dataclasses.dataclass
class Run:
    """What every command shares: the settings in force and the files they select."""

    config: Config
    jobs: int
    cache: bool
    project_root: Path | None = None  # the nearest project folder above the paths given
    errors: int = 0
    messages: list[str] = dataclasses.field(default_factory=list)  # the errors, one line each

    def error(self, message: str) -> None:
        typer.echo(f"loopfix: error: {message}", err=True)
        self.errors += 1
        self.messages.append(message)

    def not_written(self, message: str) -> None:
        """A rewrite left out (it did not verify): an unfixed finding, not an error."""
        typer.echo(f"loopfix: {message}", err=True)

    @property
    def options(self) -> Options:
        return self.config.options()

    @property
    def run_settings(self) -> RunSettings:
        from loopfix.verify.harness import RunSettings

        config = self.config
        return RunSettings(
            device=config.device,
            iterations=config.iterations,
            timeout=config.timeout,
            pass_env=config.pass_env,
            python=config.interpreter(),
            script_args=config.script_args,
        )

    def cache_folder(self) -> str | None:
        """`cache-dir`, relative to the project root: the folder of the `pyproject.toml` the
        settings come from, else the nearest folder above the paths given with a
        `pyproject.toml`, `setup.py`, `setup.cfg` or `.git`, else the current folder (as
        Ruff); `--cache-dir` is taken as given."""
        if not self.cache:
            return None
        folder = Path(self.config.cache_dir)
        if not folder.is_absolute():
            folder = (self.config.root or self.project_root or Path.cwd()) / folder
        return str(folder)

    def reports(
        self, paths: list[Path], output_format: OutputFormat, plan_fixes: bool = True
    ) -> list[FileReport]:
        files = []
        for found in python_files(paths, self.config):
            if isinstance(found, str):
                self.error(found)
            else:
                files.append(found)
        named = frozenset(str(p.resolve()) for p in paths if p.is_file())
        settings = ScanSettings(self.config, self.cache_folder(), plan_fixes, named)
        with _progress(len(files), output_format) as advance:
            reports = list(scan(files, settings, self.jobs, advance))
        shown: set[str] = set()  # a broken module is named once, however many import it
        # a file without a backward pass is not analysed, so not parsed, when asked for: its
        # syntax error (seen because a checked file imports it) is the importer's warning
        checked = functools.cache(  # resolved only when some file has an error
            lambda: (
                {Path(found).resolve() for found in files}
                - {
                    Path(report.path).resolve()
                    for report in reports
                    if report.skipped == NO_BACKWARD
                }
            )
        )
        for report in reports:
            report.path = _display(Path(report.path))
            for message in report.errors:
                text = _shown(message)  # the file's own error and its importer's, one line
                if text in shown:
                    continue
                shown.add(text)
                if _names_another_file(message, checked()):
                    # a module a checked file imports, outside what was asked for (as Ruff,
                    # only the files asked for are errors): its importers were checked
                    # without it
                    typer.echo(f"loopfix: warning: {text} (imported)", err=True)
                else:
                    self.error(text)
        return reports

    def full_analysis(self, path: Path) -> FileResult | None:
        """A file's findings with their fixes, in this process (for apply and verify)."""
        try:
            source = SourceFile.read(path)
            result = analyse_source(source, self.config.rules_for(path), self.options)
        except SourceError as error:
            self.error(_shown(str(error)))
            return None
        return result


def _run(
    paths: list[Path],
    *,
    select: str | None = None,
    ignore: str | None = None,
    exclude: list[str] | None = None,
    restrict_style: RestrictStyle | None = None,
    unsafe_fixes: bool | None = None,
    jobs: int | None = None,
    no_cache: bool = False,
    cache_dir: Path | None = None,
    device: Device | None = None,
    iterations: int | None = None,
    timeout: float | None = None,
    pass_env: list[str] | None = None,
    python: str | None = None,
    script_args: str | None = None,
) -> Run:
    """Settings from `[tool.loopfix]` with the given flags over them; a bad setting is a
    one-line error and exit 2."""
    flags = {
        "select": select.split(",") if select else None,
        "ignore": ignore.split(",") if ignore else None,
        "restrict-style": restrict_style.value if restrict_style else None,
        "unsafe-fixes": unsafe_fixes,
        "device": device.value if device else None,
        "iterations": iterations,
        "timeout": timeout,
        "pass-env": pass_env or None,
        "script-args": _command_line(script_args) if script_args else None,
        "python": os.path.abspath(python) if python and os.sep in python else python,
        "cache-dir": os.path.abspath(cache_dir) if cache_dir else None,
    }
    folder = _common_folder(paths)
    try:
        config = find_config(folder)
        given = {k: v for k, v in flags.items() if v is not None and v != []}
        config = with_overrides(config, given, "command line")
    except ConfigError as error:
        typer.echo(f"loopfix: error: {error}", err=True)
        raise typer.Exit(2) from None
    if exclude:
        extra = tuple(exclude)
        config = dataclasses.replace(config, exclude=config.exclude + extra)
    cache = not no_cache
    return Run(config, jobs or default_jobs(), cache, _project_root(folder) if cache else None)


def _command_line(text: str) -> list[str]:
    """`--script-args`, split as a POSIX shell splits it; a quote left open is a one-line
    error and exit 2."""
    try:
        return shlex.split(text)
    except ValueError as error:
        typer.echo(f"loopfix: error: --script-args: {error}", err=True)
        raise typer.Exit(2) from None


SHARED_OPTIONS = (
    "select",
    "ignore",
    "exclude",
    "restrict_style",
    "unsafe_fixes",
    "jobs",
    "no_cache",
    "cache_dir",
    "device",
    "iterations",
    "timeout",
    "pass_env",
    "python",
    "script_args",
)


def _run_from(arguments: dict) -> Run:
    """`_run` from a command's arguments (its `locals()`): the options commands share."""
    shared = {name: arguments[name] for name in SHARED_OPTIONS if name in arguments}
    return _run(arguments["paths"], **shared)


def _common_folder(paths: list[Path]) -> Path:
    folders = [os.path.abspath(p if p.is_dir() else p.parent) for p in paths] or [os.getcwd()]
    try:
        return Path(os.path.commonpath(folders))
    except ValueError:
        return Path.cwd()


def _project_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` that holds a project marker, or None."""
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in ROOT_MARKERS):
            return candidate
    return None


def _display(path: Path) -> str:
    """`path` relative to the current folder when it is inside it, else as given."""
    if not path.is_absolute() and ".." not in path.parts:
        return os.fspath(path)  # what relpath gives, without two calls to getcwd per file
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def _names_another_file(message: str, checked: set[Path]) -> bool:
    """Whether an error message (`path:line:col: ...`) is about an existing file that is not
    one of the `checked` ones (resolved paths)."""
    where = message.partition(": ")[0]
    path = Path(re.sub(r"(:\d+)+$", "", where))
    return path.is_file() and path.resolve() not in checked


def _shown(message: str) -> str:
    """An error message with its leading path shown as the other output shows paths."""
    path, separator, rest = message.partition(": ")
    return f"{_display(Path(path))}{separator}{rest}" if separator else message


class _progress:
    """A progress bar on stderr for long runs on a terminal; nothing in pipes or CI."""

    def __init__(self, total: int, output_format: OutputFormat) -> None:
        self.enabled = (
            total >= 200
            and sys.stderr.isatty()
            and not os.environ.get("CI")
            and output_format is OutputFormat.text
        )
        self.total = total

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.progress import Progress

        self.bar = Progress(transient=True)
        self.bar.start()
        task = self.bar.add_task("loopfix", total=self.total)
        return lambda count: self.bar.advance(task, count)

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self.bar.stop()


def _rows(reports: list[FileReport]) -> list[dict]:
    return [{"path": report.path, **row} for report in reports for row in report.findings]


OptionalPathsArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Files or folders to analyse (default: the current folder); `-` reads the source "
        "from standard input (with --stdin-filename).",
        show_default=False,
    ),
]
StdinFilenameOption = Annotated[
    Path | None,
    typer.Option(
        "--stdin-filename",
        help="The path the source read from standard input (`-`) stands for: settings, "
        "noqa comments, per-file-ignores and the project's imports apply by it.",
    ),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loopfix {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version_flag: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print loopfix's version.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Find and fix autograd bugs in PyTorch training loops."""


@app.command()
def check(
    paths: OptionalPathsArgument = None,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "--output-format", help="Output format.")
    ] = OutputFormat.text,
    output_file: Annotated[
        Path | None,
        typer.Option("--output-file", "-o", help="Write the report to this file, not stdout."),
    ] = None,
    stdin_filename: StdinFilenameOption = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only the findings: no summary on stderr.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also name each file skipped, and why.")
    ] = False,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    exclude: ExcludeOption = None,
    restrict_style: RestrictOption = None,
    unsafe_fixes: UnsafeFixesOption = None,
    jobs: JobsOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    exit_zero: ExitZeroOption = False,
    show_statistics: Annotated[
        bool, typer.Option("--statistics", help="Print a count per rule instead of findings.")
    ] = False,
    findings_only: Annotated[
        bool,
        typer.Option(
            "--findings-only",
            help="Report findings without planning their fixes: several times faster on "
            "training code, no [*] markers.",
        ),
    ] = False,
) -> None:
    """Report autograd bugs; `[*]` marks findings that `loopfix apply` can fix."""
    paths = paths or [Path(".")]
    run = _run_from(locals())
    if paths == [Path("-")]:
        reports = [_stdin_report(run, stdin_filename, plan_fixes=not findings_only)]
    else:
        reports = run.reports(paths, output_format, plan_fixes=not findings_only)
    rows = _rows(reports)
    if show_statistics:
        report = statistics(rows, output_format is OutputFormat.json)
    else:
        base = repository_root(Path.cwd()) or Path.cwd()
        report = render(rows, output_format, base, run.messages)
    if output_file is not None:
        output_file.write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
    text = output_format is OutputFormat.text and not quiet
    if verbose:
        for skipped in (r for r in reports if r.skipped):
            typer.echo(f"loopfix: skipped {skipped.path}: {skipped.skipped}", err=True)
    if text and not reports and not run.errors:
        typer.echo("warning: No Python files found under the given path(s)", err=True)
    if text and rows:
        fixes = "" if findings_only else _fix_counts(rows, run.config.unsafe_fixes)
        typer.echo(f"Found {len(rows)} finding(s){fixes}.", err=True)
    elif text and reports and not run.errors and not show_statistics and output_file is None:
        typer.echo("All checks passed!")
    elif text and run.errors and not show_statistics:
        # the other files were checked: say so, or a broken file hides that they passed
        typer.echo(f"No findings; {run.errors} error(s) above.", err=True)
    raise typer.Exit(2 if run.errors else 1 if rows and not exit_zero else 0)


def _stdin_report(run: Run, filename: Path | None, plan_fixes: bool) -> FileReport:
    """The report of the source on standard input, as the file `filename` (settings, noqa and
    the project's imports apply by that path)."""
    source = _stdin_source(run, filename)
    try:
        result = analyse_source(source, run.config.rules_for(source.path), run.options, plan_fixes)
    except SourceError as error:
        run.error(_shown(str(error)))
        return FileReport(_display(source.path))
    for message in result.errors:
        run.error(_shown(message))
    return FileReport(_display(source.path), findings=finding_rows(result), changed=result.changed)


def _stdin_source(run: Run, filename: Path | None) -> SourceFile:
    if filename is None:
        run.error("reading standard input (`-`) needs --stdin-filename PATH")
        raise typer.Exit(2)
    try:
        return SourceFile.from_bytes(filename, sys.stdin.buffer.read())
    except SourceError as error:
        run.error(_shown(str(error)))
        raise typer.Exit(2) from None


def _fix_counts(rows: list[dict], unsafe_enabled: bool) -> str:
    """ "; 2 fixable with `loopfix apply` (1 hidden fix can be enabled with `--unsafe-fixes`)"."""
    fixable = sum(row["fixable"] for row in rows)
    if unsafe_enabled:
        unsafe = sum(row["fixable"] and row["fix_applicability"] == "unsafe" for row in rows)
        return f"; {fixable} fixable with `loopfix apply --unsafe-fixes` ({unsafe} unsafe)"
    hidden = sum(not row["fixable"] and row["fix_applicability"] == "unsafe" for row in rows)
    note = f" ({hidden} hidden fix(es) can be enabled with `--unsafe-fixes`)" if hidden else ""
    return f"; {fixable} fixable with `loopfix apply`{note}"


def _verify_help() -> str:
    """`loopfix verify --help`: what it does, and each word a verdict starts with."""
    from loopfix.rules.compare import MEANINGS

    words = "\n\n".join(f"{word}: {meaning}." for word, meaning in MEANINGS.items())
    return (
        "Run the original and the patched code of every planned fix, and judge each rewrite."
        "\n\nThis executes the project's own code (as running its tests would), in child "
        "processes from temporary copies. Each verdict is one line: the verdict, what was "
        "compared over how many iterations, what the original and the patched run did. "
        "Exit 0 when every rewrite is equivalent or changed as intended (what `apply` "
        f"writes), 1 otherwise.\n\nA verdict starts with one of:\n\n{words}"
    )


@app.command(help=_verify_help())
def verify(
    paths: PathsArgument,
    output_format: Annotated[
        VerifyFormat, typer.Option("--format", help="Output format.")
    ] = VerifyFormat.text,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    exclude: ExcludeOption = None,
    restrict_style: RestrictOption = None,
    unsafe_fixes: UnsafeFixesOption = None,
    jobs: JobsOption = None,
    no_cache: NoCacheOption = False,
    device: DeviceOption = None,
    iterations: IterationsOption = None,
    timeout: TimeoutOption = None,
    pass_env: PassEnvOption = None,
    python: PythonOption = None,
    script_args: ScriptArgsOption = None,
) -> None:
    from loopfix.report import verdict_line, verdict_row, verdicts_sarif
    from loopfix.verify.verifier import verify_file

    run = _run_from(locals())
    reports = run.reports(paths, OutputFormat.json)
    results = _changed_results(run, reports)
    rows = []
    for result in results:
        for verdict in verify_file(result, run.run_settings):
            rows.append(verdict_row(_display(result.source.path), verdict))
    if not results and output_format is VerifyFormat.text:
        where = reports[0].path if len(reports) == 1 else f"the {len(reports)} files checked"
        typer.echo(
            f"No planned rewrite to verify in {where} (no finding has a fix that apply would "
            "write)."
        )
    if output_format is VerifyFormat.json:
        typer.echo(json.dumps(rows, indent=2))
    elif output_format is VerifyFormat.sarif:
        typer.echo(json.dumps(verdicts_sarif(rows, Path.cwd()), indent=2))
    else:
        for row in rows:
            typer.echo(verdict_line(row))
    failed = any(not row["written"] for row in rows)
    raise typer.Exit(2 if run.errors else 1 if failed else 0)


def _writable(run: Run, results: list[FileResult]) -> list[FileResult]:
    """The results whose fixed text the file can take (a notebook's fix may not)."""
    kept = []
    for result in results:
        try:
            result.fixed_bytes  # noqa: B018 - computed to see whether it can be
        except SourceError as error:
            reason = str(error).split(": ", 1)[-1]  # the message starts with the path
            run.not_written(f"{_display(result.source.path)}: not written: {reason}")
            continue
        kept.append(result)
    return kept


def _changed_results(run: Run, reports: list[FileReport]) -> list[FileResult]:
    """Full analyses (with fixes) of the files whose reports plan a fix."""
    results = []
    for report in reports:
        if report.changed:
            result = run.full_analysis(Path(report.path))
            if result is not None and result.changed:
                results.append(result)
    return results


@app.command()
def apply(
    paths: OptionalPathsArgument = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", "--diff", help="Print the diff; write nothing.")
    ] = False,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive", "-i", help="Review each fix: yes / no / all / quit, like git add -p."
        ),
    ] = False,
    no_verify: Annotated[
        bool,
        typer.Option("--no-verify", help="Write without running the original and patched code."),
    ] = False,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    exclude: ExcludeOption = None,
    restrict_style: RestrictOption = None,
    unsafe_fixes: UnsafeFixesOption = None,
    jobs: JobsOption = None,
    no_cache: NoCacheOption = False,
    device: DeviceOption = None,
    iterations: IterationsOption = None,
    timeout: TimeoutOption = None,
    pass_env: PassEnvOption = None,
    python: PythonOption = None,
    script_args: ScriptArgsOption = None,
    stdin_filename: StdinFilenameOption = None,
    show_fixes: Annotated[
        bool, typer.Option("--show-fixes", help="List each fix written, per file, as Ruff does.")
    ] = False,
    exit_zero: ExitZeroOption = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="No summary on stderr (errors and refusals still)."),
    ] = False,
) -> None:
    """Rewrite the files to fix what `check` reports, after verifying each rewrite.

    A file is written only when every rewrite in it verifies as equivalent (an unsafe fix,
    applied with `--unsafe-fixes`: when it runs and changes what it says it changes);
    `--no-verify` skips verification (which runs the project's code in child processes).
    """
    from loopfix.verify.verifier import verify_file

    paths = paths or [Path(".")]
    run = _run_from(locals())
    if paths == [Path("-")]:
        _apply_stdin(run, stdin_filename, no_verify, exit_zero)
    reports = run.reports(paths, OutputFormat.text)
    results = _writable(run, _changed_results(run, reports))
    settings = run.run_settings
    verdicts = {id(r): [] if no_verify else verify_file(r, settings) for r in results}
    say = _silent if quiet else functools.partial(typer.echo, err=True)
    if no_verify and results:
        say("Verification skipped (--no-verify).")
    if interactive and not dry_run:
        from loopfix.review import review

        def recheck(source: SourceFile) -> FileResult:
            return analyse_source(source, run.config.rules_for(source.path), run.options)

        results = review(results, verdicts, None if no_verify else settings, recheck)
    rejected = [r for r in results if not all(v.writable for v in verdicts.get(id(r), []))]
    for result in rejected:
        for verdict in verdicts[id(result)]:
            if not verdict.writable:
                run.not_written(f"{_display(result.source.path)}: not written: {verdict.summary()}")
    accepted = [r for r in results if all(r is not x for x in rejected)]
    rows = [row for report in reports for row in report.findings]
    no_fix = sum(row["fix_applicability"] is None for row in rows)
    hidden = sum(row["fix_applicability"] is not None and not row["fixable"] for row in rows)
    judged = [v for result in rejected for v in verdicts[id(result)] if not v.writable]
    wrong = sum(v.outcome == "not equivalent" for v in judged)
    unconfirmed = sum(v.outcome == "not confirmed" for v in judged)
    unverified = len(judged) - wrong - unconfirmed
    unfixed = no_fix + hidden + sum(f.applied for result in rejected for f in result.findings)
    if not results and not rows and not run.errors:
        say("Nothing to fix: all checks passed.")
    elif dry_run:  # the diff shows what `apply` would write: rewrites that verified
        _print_diffs(accepted, verdicts)
        shown = [r for r in accepted if r.changed]
        would = sum(f.applied for r in shown for f in r.findings)
        say(f"Would fix {would} finding(s) in {len(shown)} file(s).")
    else:
        from loopfix.refactor import PlannedChange, apply_changes  # rope: only when writing

        changes = [PlannedChange(r.source.path, r.source.data, r.fixed_bytes) for r in accepted]
        written, write_errors = apply_changes(changes)
        for message in write_errors:
            run.error(message)
        written_paths = {c.path for c in written}
        for result in (r for r in accepted if r.source.path in written_paths):
            judged = verdicts.get(id(result)) or []
            said = "; ".join(v.summary() for v in judged) or "not verified (--no-verify)"
            say(f"loopfix: wrote {_display(result.source.path)}: {said}")
            if show_fixes:
                typer.echo(f"- {_display(result.source.path)}:")
                for finding in (f for f in result.findings if f.applied):
                    line = result.source.position(finding.start)[0]
                    typer.echo(f"    {finding.rule} line {line}: {finding.fix.title}")
        fixed = sum(
            f.applied for r in accepted for f in r.findings if r.source.path in written_paths
        )
        say(f"Fixed {fixed} finding(s) in {len(written)} file(s).")
    if no_fix:
        say(f"{no_fix} finding(s) have no automatic fix.")
    if hidden:
        say(
            f"{hidden} finding(s) have only an unsafe fix, which changes what the code "
            "computes: `--unsafe-fixes` applies it."
        )
    if wrong:
        say(f"{wrong} fix(es) changed what the code computes: not written.")
    if unconfirmed:
        say(
            f"{unconfirmed} fix(es) were not written: the original run did not show the bug "
            "(`--no-verify` writes them unverified)."
        )
    if unverified:
        say(
            f"{unverified} fix(es) could not be verified by running the code and were not "
            "written (`--no-verify` writes them unverified)."
        )
    raise typer.Exit(2 if run.errors else 1 if unfixed and not exit_zero else 0)


def _silent(*args, **kwargs) -> None:
    """`-q`: the summary lines are not shown."""


def _apply_stdin(run: Run, filename: Path | None, no_verify: bool, exit_zero: bool) -> None:
    """The fixed source of standard input on standard output (as a formatter's fixer hook
    expects): the rewrites that verified, else the source unchanged; the verdicts on stderr.
    Exits."""
    from loopfix.verify.verifier import verify_file

    source = _stdin_source(run, filename)
    try:
        result = analyse_source(source, run.config.rules_for(source.path), run.options)
    except SourceError as error:
        run.error(_shown(str(error)))
        sys.stdout.write(source.text)
        raise typer.Exit(2) from None
    verdicts = [] if no_verify or not result.changed else verify_file(result, run.run_settings)
    for verdict in verdicts:
        typer.echo(f"loopfix: {_display(source.path)}: {verdict.summary()}", err=True)
    written = result.changed and all(v.writable for v in verdicts)
    sys.stdout.write(result.fixed_text if written else source.text)
    unfixed = [f for f in result.findings if not (written and f.applied)]
    raise typer.Exit(2 if run.errors else 1 if unfixed and not exit_zero else 0)


def _print_diffs(results, verdicts: dict[int, list[Verdict]]) -> None:
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    for result in results:
        path = _display(result.source.path).replace(os.sep, "/").lstrip("/")
        diff = source_diff(path, result.source, result.fixed_text)
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
    width = max(len(rule.name) for rule in ALL_RULES)
    for rule in ALL_RULES:
        typer.echo(f"{rule.code}  {rule.name:<{width}}  {rule.summary}")


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule code, e.g. LF001.")]) -> None:
    """Print a rule's documentation."""
    rule = rule_by_code(code)
    if rule is None:
        typer.echo(f"loopfix: error: unknown rule {code!r}; `loopfix rules` lists them", err=True)
        raise typer.Exit(2)
    typer.echo(f"# {rule.code} {rule.name}\n\n{rule.summary}.\n\n{rule.docs}")


class DiagnoseFormat(StrEnum):
    text = "text"
    json = "json"


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def diagnose(
    command: Annotated[
        list[str], typer.Argument(help="The command to run, after `--` (python SCRIPT ...).")
    ],
    iterations: Annotated[
        int, typer.Option(help="Stop after this many steps of the first optimizer.")
    ] = 5,
    timeout: Annotated[float, typer.Option(help="Stop the command after this many seconds.")] = 300,
    python: PythonOption = None,
    allow_network: Annotated[
        bool, typer.Option("--allow-network", help="Let the command reach the network.")
    ] = False,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Do not verify the fixes it prints.")
    ] = False,
    output_format: Annotated[
        DiagnoseFormat, typer.Option("--format", "--output-format", help="Output format.")
    ] = DiagnoseFormat.text,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Hide what the command itself prints.")
    ] = False,
) -> None:
    """Run a training command instrumented and explain the autograd error it raises.

    `loopfix diagnose -- python train.py --epochs 1` runs the command in a child process (the
    `python` it names, or --python), capped at --iterations optimizer steps and --timeout
    seconds, in the sandbox of verification runs: no network unless --allow-network, home
    and caches redirected to a temporary folder. What the command prints is shown as it runs,
    each line after `| ` (on stderr with --format json; --quiet hides it). It runs in the
    current folder on your data, so it may write files there as the command would. When a
    backward fails ("backward through the graph a second time", "modified by an inplace
    operation") it says which backward, step or in-place operation caused it and where, then
    prints the static finding at those lines with its fix and verification verdict. Exit 0:
    the command ran clean; 1: a diagnosis was made; 2: the command could not be run or failed
    for another reason. Multi-process launches (torchrun, DDP spawn) are not supported yet.
    """
    from loopfix.diagnose import Options
    from loopfix.diagnose import diagnose as run_diagnosis

    shown = None if quiet else _CommandOutput(output_format is DiagnoseFormat.json)
    options = Options(
        iterations, timeout, python, allow_network, verify=not no_verify, output=shown
    )
    diagnosis = run_diagnosis(list(command), options)
    if output_format is DiagnoseFormat.json:
        typer.echo(json.dumps(diagnosis.as_json(), indent=2))
    else:
        if shown is not None and shown.lines:
            typer.echo("")  # the command's output, then the diagnosis
        _print_diagnosis(diagnosis, output_shown=shown is not None)
    raise typer.Exit(diagnosis.exit_code)


class _CommandOutput:
    """What the diagnosed command prints, shown as it prints it: each line after `| `, dimmed
    on a terminal; its stdout on stdout and its stderr on stderr, or all on stderr when stdout
    is a JSON report."""

    def __init__(self, all_on_stderr: bool) -> None:
        self.all_on_stderr = all_on_stderr
        self.lines = 0

    def __call__(self, line: str, stderr: bool) -> None:
        err = stderr or self.all_on_stderr
        stream = sys.stderr if err else sys.stdout
        dim = stream.isatty() and "NO_COLOR" not in os.environ
        typer.secho(f"| {line}", err=err, dim=dim or None)
        self.lines += 1


def _print_diagnosis(diagnosis, output_shown: bool = False) -> None:
    typer.echo(f"loopfix diagnose: {diagnosis.summary}")
    for line in diagnosis.explanation:
        typer.echo(f"  {line}")
    if diagnosis.status == "failed" and diagnosis.error:
        typer.echo(f"the command's error: {diagnosis.error}")
        tail = [line for line in diagnosis.stderr.strip().splitlines()[-12:] if line.strip()]
        for line in tail[:-1] if not output_shown else ():  # shown as it ran otherwise
            typer.echo(f"  | {line}")
    at_lines = [row for row in diagnosis.findings if row.get("at_the_lines", True)]
    if diagnosis.findings:
        typer.echo("")
        typer.echo(
            "loopfix check at these lines:"
            if at_lines
            else "loopfix check, the rules behind this error in these files:"
        )
    for index, row in enumerate(diagnosis.findings):
        marker = " [*]" if row["fixable"] else ""
        if at_lines and not row.get("at_the_lines", True) and index == len(at_lines):
            typer.echo("also, the same kind of bug elsewhere in the file:")
        typer.echo(
            f"{row['path']}:{row['line']}:{row['column']}: {row['rule']}{marker} {row['message']}"
        )
        if row["fix"]:
            typer.echo(f"  fix: {row['fix']}")
        elif row["no_fix"]:
            typer.echo(f"  no automatic fix: {row['no_fix']}")
        if row.get("verdict"):
            typer.echo(f"  verify: {row['verdict']}")
        elif row["fix"] and diagnosis.verify_skipped:
            typer.echo("  verify: not run (--no-verify)")
        if row.get("diff"):
            typer.echo(row["diff"].rstrip("\n"))
    if diagnosis.note:
        typer.echo(f"note: {diagnosis.note}")
    if diagnosis.sandbox:
        cut = (
            "network allowed"
            if diagnosis.sandbox == "allowed"
            else f"no network: {diagnosis.sandbox}"
        )
        typer.echo(f"(the command ran sandboxed; {cut}; home and caches in a temporary folder)")


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
    # `kill` (SIGTERM) exits like Ctrl-C does: cleanup runs, so the verification worker and
    # its run stop with loopfix and no half-written file is left (writes are atomic)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        app()
    finally:
        # the process ends here: Python's shutdown would run the cyclic garbage collector
        # over everything a check keeps until its end (the project's trees, symbols and
        # models: 4 s of a 22 s check of a 1,800-file tree); frozen objects are left to the
        # operating system, and exit handlers and buffered output still run as before
        gc.freeze()


def _terminate(signum: int, frame) -> None:
    raise SystemExit(128 + signum)
