"""Run a script under `loopfix.verify.trace` in a child process and load what it recorded.

The child is forked from the harness's warm worker (torch already imported), as verification
runs are: the same tracer and sandbox, without paying torch's import for every script."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loopfix.verify.harness import RunSettings, added_folders, run_script

# no iteration cap that a corpus script could reach: the whole script runs
WHOLE = RunSettings(device="cpu", iterations=100_000)


@dataclass
class Run:
    returncode: int
    stderr: str
    events: list
    error: str | None


def run_traced(script: Path, workdir: Path, timeout: float = 180, defer_steps=False) -> Run:
    """`workdir` is kept for the callers' signature; each run has its own temporary copy."""
    settings = RunSettings(device=WHOLE.device, iterations=WHOLE.iterations, timeout=timeout)
    home = script.parent.resolve()
    code = script.read_bytes()
    # the folders the script adds to its import path, as verification runs it
    before, after = added_folders(code.decode(), home)
    folders = (*before, home, *after)
    child = run_script(
        code, script.name, home, settings, defer_steps=defer_steps, import_path=folders
    )
    trace = child.trace or {"events": [], "error": child.error or "no trace"}
    code = child.returncode if child.returncode is not None else -1  # None: timed out
    return Run(code, child.stderr, trace["events"], trace["error"])
