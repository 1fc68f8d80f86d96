"""Run user code in a child process, from a temporary copy, and collect its trace.

This is the only place loopfix runs a project's code, and never in its own process: each run
is a fresh `python -m loopfix.verify.trace` in its own session (so a timeout kills the whole
process group), with a memory limit on CPU-only machines, its output captured, its working
folder a temporary directory (the project's folder is only importable, never the cwd), and
environment variables that look like credentials removed.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CREDENTIALS = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|CREDENTIAL|AUTH", re.I)


@dataclass(frozen=True)
class RunSettings:
    device: str = "auto"
    iterations: int = 3
    timeout: float = 120.0
    memory_limit: int = 8 << 30  # bytes of address space, applied on CPU-only machines


@dataclass
class ChildRun:
    returncode: int | None
    stderr: str
    seconds: float
    timed_out: bool = False
    trace: dict | None = field(default=None, repr=False)

    @property
    def error(self) -> str | None:
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        if self.trace is None:
            tail = self.stderr.strip().splitlines()[-1:] or [f"exit status {self.returncode}"]
            return f"crashed before saving its trace: {tail[0]}"
        return self.trace["error"]

    @property
    def events(self) -> list:
        return self.trace["events"] if self.trace else []


def run_script(
    code: bytes, name: str, home: Path, settings: RunSettings, *, defer_steps: bool = False
) -> ChildRun:
    """Run `code` as the script `name` of the folder `home`, in a temporary copy."""
    with tempfile.TemporaryDirectory(prefix="loopfix-verify-") as workdir:
        script, trace_file = Path(workdir) / name, Path(workdir) / ".loopfix-trace.pt"
        script.write_bytes(code)
        command = [sys.executable, "-m", "loopfix.verify.trace"]
        command += ["--defer-steps"] if defer_steps else []
        command += ["--iterations", str(settings.iterations), "--device", settings.device]
        command += [str(trace_file), str(script)]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=_child_environment(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_memory_limit(settings),
        )
        timed_out = False
        try:
            _, stderr = process.communicate(timeout=settings.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            _, stderr = process.communicate()
            timed_out = True
        seconds = time.monotonic() - started
        trace = _load(trace_file) if trace_file.exists() and not timed_out else None
        text = stderr.decode("utf-8", errors="replace")[-4000:]
        return ChildRun(process.returncode, text, seconds, timed_out, trace)


def _load(trace_file: Path) -> dict | None:
    import torch  # verification path only

    try:
        return torch.load(trace_file, weights_only=True)
    except Exception:  # a half-written trace: the child died while saving
        return None


def _child_environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not CREDENTIALS.search(k)}
    paths = [str(home), *filter(None, [env.get("PYTHONPATH")])]
    env |= {"PYTHONPATH": os.pathsep.join(paths), "PYTHONHASHSEED": "0"}
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _memory_limit(settings: RunSettings):
    """A cap on address space; not on GPU machines, where drivers reserve huge ranges."""
    gpu = settings.device in ("cuda", "mps") or (
        settings.device == "auto" and Path("/dev/nvidia0").exists()
    )
    if gpu or settings.memory_limit <= 0:
        return None

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (settings.memory_limit, settings.memory_limit))

    return limit
