"""Run user code in a child process, from a temporary copy, and collect its trace.

Where forking is safe (CPU runs, no GPU on the machine), runs go through one warm fork server
per loopfix invocation (`worker.py`), so torch is imported once; otherwise each run is a fresh
`python -m loopfix.verify.trace`. Both give the same isolation:

this is the only place loopfix runs a project's code, and never in its own process: each run is
a child in its own session (so a timeout kills the whole process group), with a memory limit
on CPU-only machines, its output captured, its working folder a temporary directory (the
project's folder is only importable, never the cwd), and environment variables that look like
credentials removed.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from loopfix.project import sys_path_entries
from loopfix.verify import interpreter, portable, sandbox

CREDENTIALS = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|CREDENTIAL|AUTH", re.I)


@dataclass(frozen=True)
class RunSettings:
    device: str = "auto"
    iterations: int = 3
    timeout: float = 120.0
    memory_limit: int = 8 << 30  # bytes of address space, applied on CPU-only machines
    warm: bool = True  # share one fork server where that is safe
    pass_env: tuple[str, ...] = ()  # credential-looking variables the user lets through
    python: str = sys.executable  # the interpreter that runs the project's code
    # the script's command line (empty: its parser's defaults and made-up required values)
    script_args: tuple[str, ...] = ()

    @property
    def own_python(self) -> bool:
        return interpreter.is_own(self.python)


@dataclass
class ChildRun:
    returncode: int | None
    stderr: str
    seconds: float
    timed_out: bool = False
    trace: dict | None = field(default=None, repr=False)
    skipped: str = ""  # why this run was not made (then it is no evidence either way)

    @property
    def error(self) -> str | None:
        if self.skipped:
            return self.skipped
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
    code: bytes,
    name: str,
    home: Path,
    settings: RunSettings,
    *,
    defer_steps: bool = False,
    retain_graphs: bool = False,
    clone_saved: bool = False,
    graphs: bool = False,
    call: str | None = None,
    fixture: Path | None = None,
    synthetic_loop: int | None = None,
    overlay: dict[str, bytes] | None = None,
    package: tuple[str, Path] | None = None,
    import_path: tuple[Path, ...] | None = None,
) -> ChildRun:
    """Run `code` as the script `name` of the folder `home`, in a temporary copy; or, with
    `call`, call that function of it with the `fixture`'s arguments or, without one, with
    arguments the harness builds. `overlay`: modules of the project (paths relative to
    `home`) that the run imports in another version (an entry script run to verify a
    change to a module it imports). `graphs`: record which earlier backwards' graphs each
    backward goes through again (see `trace.py`). `package`: (the package the script is a
    module of, the folder that holds that package's top level), for relative imports.
    `import_path`: the folders its absolute imports are looked up in (`home` alone by
    default; see `module_import_path`)."""
    with tempfile.TemporaryDirectory(prefix="loopfix-verify-") as workdir:
        script, trace_file = Path(workdir) / name, Path(workdir) / ".loopfix-trace.pt"
        script.write_bytes(code)
        for relative, text in (overlay or {}).items():
            _overlay_module(Path(workdir), home, relative, text)
        argv = ["--defer-steps"] if defer_steps else []
        argv += ["--retain-graphs"] if retain_graphs else []
        argv += ["--clone-saved"] if clone_saved else []
        argv += ["--graphs"] if graphs else []
        argv += ["--iterations", str(settings.iterations), "--device", settings.device]
        if call is not None:
            argv += ["--call", call]
        if fixture is not None:
            argv += ["--fixture", str(fixture)]
        if synthetic_loop is not None:
            argv += ["--synthetic-loop", str(synthetic_loop)]
        if package is not None:
            argv += ["--package", package[0], str(package[1])]
        argv += [str(trace_file), str(script), *settings.script_args]
        folders = import_path or (home,)
        if settings.warm and _fork_is_safe(settings):
            run = _WORKER.run(argv, Path(workdir), folders, settings)
            if run is not None:
                run.trace = _load(trace_file) if trace_file.exists() and not run.timed_out else None
                return run
        command = [settings.python, "-m", "loopfix.verify.trace", *argv]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=_child_environment(folders, settings, Path(workdir)),
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


def _overlay_module(workdir: Path, home: Path, relative: str, text: bytes) -> None:
    """Put `text` where the run imports the module `relative` (to `home`) from: the script's
    folder comes first on the import path. A module inside a package takes its whole
    top-level package with it (its Python files), since Python imports a package from one
    folder only."""
    parts = Path(relative).parts
    if len(parts) > 1:
        package = home / parts[0]
        for source in sorted(package.rglob("*.py"))[:MAX_OVERLAY_FILES]:
            target = workdir / source.relative_to(home)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    target = workdir / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text)


MAX_OVERLAY_FILES = 2000


def _load(trace_file: Path) -> dict | None:
    return portable.load(trace_file)


def _child_environment(
    folders: tuple[Path, ...], settings: RunSettings, workdir: Path
) -> dict[str, str]:
    """The parent's variables less credentials, the sandbox's (home, caches and temporary
    folder inside `workdir`, offline switches), and an import path with the project's
    `folders` (and, for another interpreter, the folder that holds only the tracer)."""
    env = {
        k: v for k, v in os.environ.items() if not CREDENTIALS.search(k) or k in settings.pass_env
    }
    tracer = [] if settings.own_python else [interpreter.tracer_path()]
    inherited = [] if not settings.own_python else [env.get("PYTHONPATH")]
    paths = [*tracer, *map(str, folders), *filter(None, inherited)]
    env |= {"PYTHONPATH": os.pathsep.join(paths), "PYTHONHASHSEED": "0"}
    env |= sandbox.environment(workdir)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _may_use_gpu(settings: RunSettings) -> bool:
    if settings.device in ("cuda", "mps"):
        return True
    return settings.device == "auto" and (Path("/dev/nvidia0").exists() or sys.platform == "darwin")


def _fork_is_safe(settings: RunSettings) -> bool:
    """CUDA and MPS do not survive a fork, and macOS frameworks dislike it."""
    return not _may_use_gpu(settings) and sys.platform.startswith("linux")


def _memory_limit(settings: RunSettings):
    """A cap on address space; not on GPU machines, where drivers reserve huge ranges."""
    if _may_use_gpu(settings) or settings.memory_limit <= 0:
        return None

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (settings.memory_limit, settings.memory_limit))

    return limit


class _Worker:
    """The warm fork server, started on first use and shut down with loopfix."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.python: str | None = None

    def run(self, argv: list[str], workdir: Path, folders: tuple[Path, ...], settings):
        stderr_file = workdir / ".loopfix-stderr.txt"
        request = {
            "argv": argv,
            "cwd": str(workdir),
            "path": [str(folder) for folder in folders],
            "env": _child_environment(folders, settings, workdir),
            "timeout": settings.timeout,
            "memory_limit": settings.memory_limit if not _may_use_gpu(settings) else 0,
            "stderr": str(stderr_file),
        }
        try:
            process = self._started(settings)
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
        except (OSError, ValueError):
            self.stop()
            return None  # the caller falls back to a fresh process
        stderr = stderr_file.read_text(errors="replace")[-4000:] if stderr_file.exists() else ""
        return ChildRun(answer["returncode"], stderr, answer["seconds"], answer["timed_out"])

    def _started(self, settings: RunSettings) -> subprocess.Popen:
        if self.python != settings.python:
            self.stop()  # one warm server per interpreter
        if self.process is None or self.process.poll() is not None:
            env = {k: v for k, v in os.environ.items() if not CREDENTIALS.search(k)}
            env.setdefault("OMP_NUM_THREADS", "1")
            if not settings.own_python:
                env["PYTHONPATH"] = interpreter.tracer_path()
            self.python = settings.python
            self.process = subprocess.Popen(
                [settings.python, "-m", "loopfix.verify.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
                start_new_session=True,
            )
            atexit.register(self.stop)
        return self.process

    def stop(self) -> None:
        """An idle worker exits at the end of its input; a busy one is terminated, which
        kills the run it forked (in a session of its own, out of the worker's group)."""
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
        self.process = None


_WORKER = _Worker()


def module_import_path(path: Path) -> tuple[Path, ...]:
    """Where the absolute imports of the module at `path` resolve when the project runs it:
    a module of a package (its folder holds an `__init__.py`) is imported by an entry script
    beside the top-level package (`python main.py` importing `models.classifier`), so the
    folder that holds that package comes first (its `import utils` is the project's
    `utils.py`, not a `models/utils/` package beside the module), then the module's own
    folder; any other module: its own folder."""
    own = path.resolve().parent
    top = _packages_above(own)[1]
    return (top, own) if top != own else (own,)


def added_folders(text: str, home: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The folders a script puts on its import path by a relative literal
    (`sys.path.append("../lib")`, `sys.path.insert(0, "..")`, `os.path.join(
    os.path.dirname(__file__), "model")`: `sys_path_entries`), taken from its own folder
    `home`: (those searched before `home`, those searched after it). Python reads a bare
    entry from the working folder at import time, and the run's is a temporary one (as is
    the copy `__file__` names), so where the author runs the script from has to be assumed;
    its own folder is the one from which the entry names a folder that exists (it is kept
    only then). Absolute entries need nothing: they name the same folder from anywhere."""
    found: list[Path] = []

    def existing(entries: tuple[str, ...]) -> tuple[Path, ...]:
        kept = []
        for entry in entries:
            folder = (home / entry).resolve()
            if folder.is_dir() and folder not in found:
                found.append(folder)
                kept.append(folder)
        return tuple(kept)

    before, after = sys_path_entries(text)
    return existing(before), existing(after)


def _packages_above(folder: Path) -> tuple[list[str], Path]:
    """The names of the packages from the top-level one down to `folder` (each folder with an
    `__init__.py`), and the folder that holds the top-level one (`folder` itself when it is
    no package)."""
    parts: list[str] = []
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return parts, folder


def package_of(path: Path, text: str) -> tuple[str, Path] | None:
    """(dotted package, the folder holding its top level) of a module with a relative
    import (`from .utils import x`), found by the folders with an `__init__.py` above it;
    None for a module without one or outside a package. Python resolves such an import
    only in a module run as part of its package (`python -m package.module`)."""
    if not re.search(r"^\s*from\s+\.", text, re.MULTILINE):
        return None
    parts, folder = _packages_above(path.resolve().parent)
    return (".".join(parts), folder) if parts else None
