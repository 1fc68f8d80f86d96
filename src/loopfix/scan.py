"""Repository-scale analysis: every discovered file to a `FileReport`, in parallel, cached.

- A file that cannot hold a finding is skipped without being parsed (`loopfix.relevance`):
  every rule is about a backward pass, so a file is analysed when it says `backward` or
  `autograd`, is a model module whose classes change something in place (LF008 follows
  them), or imports from a project module a class or function that does autograd work.
  Reading problems, oversized files and NUL bytes are still reported.
- `jobs` worker processes analyse files in parallel (sequentially for small runs), each a
  contiguous range of the paths, so that one project's files and the modules they import
  are mostly loaded in one worker (`loopfix.parallel`).
- Python's cyclic garbage collector runs less often during a scan, and never over what the
  files analysed so far left for the next ones (`fewer_collections`).
- A persistent cache (`loopfix.cache`) maps (file content, loopfix version, settings) to the
  file's report, so unchanged files are not analysed again; a report also names the project
  modules its analysis looked into, with the digest of their text, and is used only while
  they match. In front of it, the manifest answers a file whose stamp (its status: times,
  size, inode) and whose modules' stamps are those of the last scan, without reading them.

A `FileReport` is plain data (it crosses processes and goes into the cache as JSON). `apply`
and `verify` re-analyse in process only the files whose report has a fix.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from loopfix import relevance
from loopfix.analysis import analyse_source, syntax_error_message, unparsable_cells
from loopfix.cache import Cache, Manifest, Stamp, stamp_of
from loopfix.config import Config
from loopfix.edits import apply_edits
from loopfix.notebook import cell_codes
from loopfix.parallel import mapped_in_parallel
from loopfix.project import disk_digest, forget_roots, project_for, trim_projects, unchanged
from loopfix.source import MAX_SOURCE_BYTES, SourceError, SourceFile

SEQUENTIAL_BELOW = 32  # files: fewer than this are not worth starting workers for
NO_BACKWARD = "no backward pass"  # why a file was not analysed
# Allocations between collections of the youngest generation, then the two older thresholds
# (Python's default: 700, 10, 10). A scan allocates and keeps the trees of the project modules
# it loads, hundreds of thousands of nodes, and with the default the collector runs every
# 700 of those allocations: a cold check of the real tree of `docs/figures.md` took 24.5 s
# with it and 20.1 s with 10,000, at the same peak memory (20,000: 1% faster, 40 MB more).
# mypy raises its threshold for the same reason (`mypy/build.py`, "Run gc less
# frequently, as otherwise we can spend a large fraction of cpu in gc"). Only cyclic garbage
# waits for the collector (a syntax tree is freed by reference counting); the findings on
# the corpus and that tree are the same with either threshold.
COLLECTION_THRESHOLDS = (10_000, 10, 10)


@dataclass
class FileReport:
    path: str
    findings: list[dict] = field(default_factory=list)
    changed: bool = False  # a fix is planned
    errors: list[str] = field(default_factory=list)
    suppressed: int = 0
    skipped: str | None = None  # why the file was not analysed ("no backward pass", "noqa")
    cached: bool = False
    # project modules the analysis looked into: path -> sha256 of their text then
    dependencies: dict[str, str | None] = field(default_factory=dict)
    # the file's stamp when it was read (`loopfix.cache`); None for a report the manifest gave
    stamp: Stamp | None = field(default=None, compare=False)


_LINE_REFERENCE = re.compile(r"\b(lines?) (\d+)(?: and (\d+))?")


def in_cells(message: str | None, source) -> str | None:
    """A message's line numbers (`line 61`, `lines 105 and 117`) as a notebook's cell and
    line (`cell 7 line 11`); unchanged for a `.py` file."""
    if message is None or source.notebook is None:
        return message

    def cell_line(number: str) -> tuple[int, int]:
        return source.notebook.cell_of(source.text, int(number))

    def replace(match: re.Match) -> str:
        first = cell_line(match.group(2))
        if match.group(3) is None:
            return f"cell {first[0]} line {first[1]}"
        second = cell_line(match.group(3))
        if first[0] == second[0]:
            return f"cell {first[0]} lines {first[1]} and {second[1]}"
        return f"cell {first[0]} line {first[1]} and cell {second[0]} line {second[1]}"

    return _LINE_REFERENCE.sub(replace, message)


def finding_rows(result) -> list[dict]:
    """The reported facts of each finding of a `FileResult`."""
    rows = []
    for finding in result.findings:
        cell, line, column = result.source.cell_position(finding.start)
        _, end_line, end_column = result.source.cell_position(finding.end)
        rows.append(
            {
                **({"cell": cell} if cell is not None else {}),  # a notebook's, from 1
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "rule": finding.rule,
                "name": finding.name,
                "message": in_cells(finding.message, result.source),
                # as Ruff counts it: fixed by `apply` with these settings (an unsafe fix only
                # with --unsafe-fixes); `fix_applicability` tells a hidden unsafe fix apart
                "fixable": finding.applied,
                "fix_applicability": finding.fix.applicability.value if finding.fix else None,
                "fix_title": in_cells(finding.fix.title if finding.fix else None, result.source),
                "fix_unavailable": in_cells(finding.fix_unavailable, result.source),
                "fix_edits": _edits(result, finding) if finding.applied else [],
            }
        )
    return rows


def _edits(result, finding) -> list[dict]:
    """The applied fix's edits as 1-based (line, column) ranges and their new text."""
    notebook = result.source.notebook
    if notebook is not None and notebook.indents:
        return _cell_edits(result, finding)
    edits = []
    for edit in finding.fix.edits:
        cell, line, column = result.source.cell_position(edit.start)
        _, end_line, end_column = result.source.cell_position(edit.end)
        edits.append(
            {
                **({"cell": cell} if cell is not None else {}),
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "text": edit.text,
            }
        )
    return edits


def _cell_edits(result, finding) -> list[dict]:
    """A notebook's fix as one edit per cell it changes, in the cell's own lines: the
    smallest range where the cell's source and the source `apply` writes differ. (A cell
    indented as a whole is analysed without its indentation; the text a fix inserts there is
    indented again only where it lands on a line, so its edits cannot be shifted one by one.)"""
    notebook = result.source.notebook
    before = cell_codes(result.source.text, notebook)
    after = cell_codes(apply_edits(result.source.text, finding.fix.edits), notebook)
    edits = []
    for cell in sorted(set(before) | set(after)):
        old, new = before.get(cell, ""), after.get(cell, "")
        if old == new:
            continue
        start = len(os.path.commonprefix([old, new]))
        shared = len(os.path.commonprefix([old[start:][::-1], new[start:][::-1]]))
        line, column = _line_column(old, start)
        end_line, end_column = _line_column(old, len(old) - shared)
        edits.append(
            {
                "cell": cell,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "text": new[start : len(new) - shared],
            }
        )
    return edits


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and character column of `offset` in `text`."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


@dataclass(frozen=True)
class ScanSettings:
    config: Config
    cache_folder: str | None  # None: no cache
    plan_fixes: bool = True  # False: findings only (no `[*]`), several times faster
    # files the user named (resolved paths): always parsed, so a syntax error is reported
    # even when the file has no backward pass
    named: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return self.config.key() + ("" if self.plan_fixes else " findings-only")


def analyse_path(path: Path, settings: ScanSettings) -> FileReport:
    """One file's report: from the cache when its content was seen with these settings."""
    looked_up = _look_up(path, settings)
    if isinstance(looked_up, FileReport):
        return looked_up
    data, cache, key, rules, named, stamp = looked_up
    shown = str(path)
    consulted: set[Path] = set()
    if not _relevant(path, data, consulted):
        problems = _syntax_errors(path, data) if named else []
        if problems:
            return FileReport(shown, errors=problems)
        report = FileReport(shown, skipped=NO_BACKWARD, dependencies=_digests(consulted))
    else:
        report = _analyse(path, data, settings.config, rules, settings.plan_fixes)
        _between_files()
    if cache is not None and not report.errors:  # messages name the path; errors are cheap
        cache.put(key, _stored(report))
    report.stamp = stamp
    return report


def _stored(report: FileReport) -> dict:
    """What the cache keeps of a report: all but where and when it was read."""
    return {k: v for k, v in asdict(report).items() if k not in ("path", "cached", "stamp")}


def known_report(path: Path, settings: ScanSettings) -> FileReport | None:
    """The file's report when no analysis is needed (it is in the cache, unchanged with
    what it depends on, or it cannot be read), else None."""
    looked_up = _look_up(path, settings)
    return looked_up if isinstance(looked_up, FileReport) else None


def _look_up(path: Path, settings: ScanSettings):
    """The file's report from the manifest or the cache, or its read error, else what
    analysing it needs: (its bytes, the cache, the cache key, its rules, whether it was
    named, its stamp when read)."""
    shown = str(path)
    try:
        status = os.stat(path)
    except OSError as error:
        return FileReport(shown, errors=[f"{path}: cannot read: {error.strerror or error}"])
    stamp = stamp_of(status)
    rules = settings.config.rules_for(path)
    codes = repr([r.code for r in rules])
    named = bool(settings.named) and str(path.resolve()) in settings.named
    if _manifest is not None:  # a scan with a cache
        known = _from_store(_manifest.report(path, stamp, codes), shown, None, named)
        if known is not None:
            return known
    try:
        if status.st_size > MAX_SOURCE_BYTES:
            return FileReport(shown, errors=[_read_error(path)])
        data = path.read_bytes()
    except OSError as error:
        return FileReport(shown, errors=[f"{path}: cannot read: {error.strerror or error}"])
    if b"\x00" in data:
        return FileReport(shown, errors=[f"{path}: contains NUL bytes; not a Python source file"])
    cache = Cache(Path(settings.cache_folder)) if settings.cache_folder else None
    # where the file is decides what its imports resolve to: two copies are two entries
    key = cache.key(data, settings.key + codes + os.path.abspath(path)) if cache else ""
    hit = _from_store(cache.get(key) if cache is not None else None, shown, stamp, named)
    if hit is not None and _unchanged(hit.dependencies):
        return hit
    return data, cache, key, rules, named, stamp


def _from_store(stored: dict | None, shown: str, stamp: Stamp | None, named: bool):
    """The report the cache or the manifest stored, None when there is none or it does not
    answer: a file named on the command line and skipped is parsed again, for its syntax
    error, and a damaged entry is a miss."""
    if not isinstance(stored, dict) or (named and stored.get("skipped") == NO_BACKWARD):
        return None
    try:
        report = FileReport(shown, **stored, cached=True, stamp=stamp)
    except TypeError:
        return None
    return report if _well_formed(report) else None


# what every finding row holds (`finding_rows`), with the type each consumer reads
_FINDING_FIELDS = {
    "line": int, "column": int, "end_line": int, "end_column": int, "rule": str, "name": str,
    "message": str, "fixable": bool, "fix_applicability": (str, type(None)),
    "fix_title": (str, type(None)), "fix_unavailable": (str, type(None)), "fix_edits": list,
}  # fmt: skip


def _well_formed(report: FileReport) -> bool:
    """Whether a stored report has the fields and types a fresh one has (a damaged or
    hand-edited cache file is a miss, never a crash)."""
    findings, dependencies = report.findings, report.dependencies
    return (
        isinstance(findings, list)
        and all(
            isinstance(row, dict)
            and all(isinstance(row.get(k), t) for k, t in _FINDING_FIELDS.items())
            for row in findings
        )
        and isinstance(report.errors, list)
        and all(isinstance(e, str) for e in report.errors)
        and type(report.suppressed) is int
        and type(report.changed) is bool
        and isinstance(report.skipped, str | None)
        and isinstance(dependencies, dict)  # a digest of another type is only out of date
    )


# during a scan, what the last scans with its settings reported (`loopfix.cache`): it also
# reads each dependency once per scan, and only when its stamp changed
_manifest: Manifest | None = None


def _unchanged(dependencies: dict[str, str | None]) -> bool:
    """`project.unchanged`; during a scan, each module is read and digested once."""
    if _manifest is None:
        return unchanged(dependencies)
    return all(_manifest.module_digest(path) == digest for path, digest in dependencies.items())


def _syntax_errors(path: Path, data: bytes) -> list[str]:
    """The one-line errors of a named file that does not decode or parse (a notebook is read
    as its cells, as the analysis reads it, so IPython magics are no syntax errors; each of
    its cells that does not parse alone is one)."""
    try:
        source = SourceFile.from_bytes(path, data)
        ast.parse(source.text, filename=str(path))
    except SourceError as error:
        return [str(error)]
    except SyntaxError as error:
        return [syntax_error_message(error, str(path), source.text, source)]
    except (ValueError, RecursionError, MemoryError) as error:
        return [f"{path}: {error}"]
    return unparsable_cells(source)


def _relevant(path: Path, data: bytes, consulted: set[Path]) -> bool:
    """Whether a file can hold a finding (see `loopfix.relevance`): it mentions a backward
    pass, it is a model module that changes something in place (itself, or through a
    function it imports from a project module), or what it imports from a project module
    does autograd work (the update helper in `utils.py` of an agent that never says
    `backward` itself)."""
    text = data.decode("latin-1")  # the tests read ASCII words and indentation
    if relevance.mentions_autograd(text):
        return True
    if path.suffix == ".ipynb":  # its code cells, not their JSON strings
        try:
            text = SourceFile.from_bytes(path, data).text
        except SourceError:
            return True  # analysed, so that the problem is reported
    if relevance.changes_in_place(text):
        return True
    if "import" not in text:
        return False
    project = project_for(path)
    if project is None:
        return False
    if project.imports_autograd(path, consulted):
        return True
    return "def forward" in text and project.imports_in_place(path, consulted)


def _digests(paths: set[Path]) -> dict[str, str | None]:
    """path -> digest of the project modules a decision read, None for one not there (a
    skipped file is analysed again once `utils.py` it imports from starts doing autograd
    work, or is written)."""
    return {str(path): disk_digest(path) for path in sorted(paths)}


def _read_error(path: Path) -> str:
    try:
        SourceFile.read(path)
    except SourceError as error:
        return str(error)
    return f"{path}: too large"


def _analyse(path: Path, data: bytes, config: Config, rules, plan_fixes: bool) -> FileReport:
    try:
        source = SourceFile.from_bytes(path, data)
        options = config.options()
        result = analyse_source(source, rules, options, plan_fixes)
    except SourceError as error:
        return FileReport(str(path), errors=[str(error)])
    except Exception as error:  # a loopfix bug on one file must not stop the others
        return FileReport(str(path), errors=[f"{path}: internal error: {error!r}"])
    return FileReport(
        str(path),
        findings=finding_rows(result),
        changed=result.changed,
        errors=list(result.errors),
        suppressed=result.suppressed,
        skipped="noqa" if result.skipped else None,
        dependencies=dict(result.dependencies),
    )


def scan(
    paths: list[Path],
    settings: ScanSettings,
    jobs: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[FileReport]:
    """Reports for `paths` (files), in their order; `progress(n)` after each n files. With
    several `jobs`, the files the cache answers are read here first and only the others go
    to the worker processes (a warm run starts none)."""
    global _manifest
    forget_roots()
    folder = settings.cache_folder
    _manifest = Manifest(Path(folder), settings.key) if folder else None
    try:
        with fewer_collections():
            for report in _scanned(paths, settings, jobs, progress):
                _record(report, settings)
                yield report
        if _manifest is not None:
            _manifest.save()
    finally:
        _manifest = None  # a module may change before the next scan


def _record(report: FileReport, settings: ScanSettings) -> None:
    """Keep a report made or read by content this scan in the manifest."""
    if _manifest is None or report.stamp is None or report.errors:
        return
    path = Path(report.path)
    codes = repr([r.code for r in settings.config.rules_for(path)])
    stored = _stored(report)
    _manifest.record(path, report.stamp, codes, stored, stored.pop("dependencies"))


_freezing = False  # inside `fewer_collections`: what outlives a file's analysis is frozen


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often inside the block (`COLLECTION_THRESHOLDS`)
    and over less: after each file's analysis, what is still alive is frozen (`gc.freeze`)
    out of the collector's sight (`_between_files`). Worker processes forked inside it do
    the same. The thresholds are restored after, and what was frozen is handed back to the
    collector."""
    global _freezing
    before, was_freezing = gc.get_threshold(), _freezing
    gc.set_threshold(*COLLECTION_THRESHOLDS)
    _freezing = True
    try:
        yield
    finally:
        _freezing = was_freezing
        gc.set_threshold(*before)
        if not was_freezing:
            gc.unfreeze()


def _between_files() -> None:
    """Drop the project modules once too many are kept (`trim_projects`); inside a scan,
    freeze every object still alive. Those are the parsed project modules and the caches
    the next files reuse: hundreds of thousands of objects that each collection of an
    older generation would otherwise traverse again, although none of them is garbage. That
    is sound because nothing a scan drops is held in a reference cycle, so reference
    counting frees it, frozen or not: an analysis leaves no cyclic garbage, and the symbols
    of modules that import each other are emptied when the analysis or the module ends
    (`Symbols.forget`; `tests/test_complexity.py`)."""
    trim_projects()
    if _freezing:
        gc.freeze()


def _scanned(paths, settings: ScanSettings, jobs: int, progress) -> Iterator[FileReport]:
    if jobs <= 1 or len(paths) < SEQUENTIAL_BELOW:
        for path in paths:
            yield analyse_path(path, settings)
            if progress:
                progress(1)
        return
    known = [known_report(path, settings) for path in paths]
    missing = [path for path, report in zip(paths, known, strict=True) if report is None]
    # closed here, not when collected: an error while the workers stop (a SIGTERM that
    # reaches loopfix then) is raised, not printed as ignored before a clean summary
    with contextlib.closing(_analysed(missing, settings, jobs)) as fresh:
        for report in known:
            yield report if report is not None else next(fresh)
            if progress:
                progress(1)


def _analysed(paths: list[Path], settings: ScanSettings, jobs: int) -> Iterator[FileReport]:
    """`analyse_path` of each of `paths`, in their order, in `jobs` worker processes, each
    file in the worker most likely to have loaded its imports already (`loopfix.parallel`)."""
    if len(paths) < SEQUENTIAL_BELOW:
        yield from (analyse_path(path, settings) for path in paths)
        return
    work = functools.partial(_analyse_in_worker, settings=settings)
    yield from mapped_in_parallel(work, paths, jobs)


def _analyse_in_worker(path: Path, settings: ScanSettings) -> FileReport:
    return analyse_path(path, settings)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
