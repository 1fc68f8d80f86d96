"""Run a script in a child process under `loopfix.verify.trace` and load what it recorded."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from loopfix.verify import portable


@dataclass
class Run:
    returncode: int
    stderr: str
    events: list
    error: str | None


def run_traced(script: Path, workdir: Path, timeout: float = 180, defer_steps=False) -> Run:
    trace_file = workdir / f"{script.parent.name}-{script.stem}-{int(defer_steps)}.trace"
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "loopfix.verify.trace",
            *(["--defer-steps"] if defer_steps else []),
            str(trace_file),
            str(script),
        ],
        cwd=script.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    trace = portable.load(trace_file)
    return Run(completed.returncode, completed.stderr, trace["events"], trace["error"])
