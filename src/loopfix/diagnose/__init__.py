"""`loopfix diagnose`: run the user's own command instrumented, and explain the autograd error
it raises in terms of the user's source, then the static finding at those lines with its fix
and verification verdict.

The command runs in a child process (`child.py`) with the project's interpreter: the one the
command names (`python train.py` runs the `python` on the user's PATH) unless `--python` says
otherwise. It gets the sandbox of verification runs: no network unless `--allow-network`;
home, caches and the temporary folder redirected into a temporary folder. It runs in the
current folder, on the user's data, so it can write there as the command would. It stops
after `iterations` steps of its first optimizer, or after `timeout` seconds. What it prints
goes, line by line as it prints it, to `Options.output` (the command line shows it; an editor
does not).

Outcomes (`Diagnosis.status`), with the command's exit code:
- "diagnosed" (1): a backward failed ("backward through the graph a second time",
  "modified by an inplace operation") and is explained; or torch warned about the scheduler's
  order; or the run raised nothing but `loopfix check` finds a bug in the code it trained with;
- "clean" (0): it ran (to the end, or to the cap) and nothing was found;
- "failed" (2): the command could not be run, failed for another reason (its own error is
  shown), or starts several processes (`torchrun`, DDP spawn), which is out of scope.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

LAUNCHERS = frozenset(
    {"torchrun", "accelerate", "deepspeed", "mpirun", "mpiexec", "horovodrun", "srun",
     "lightning", "composer"}
)  # fmt: skip
DISTRIBUTED_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
PYTHON = re.compile(r"^python(\d+(\.\d+)?)?(\.exe)?$")
FREED = "backward through the graph a second time"
VERSION = "modified by an inplace operation"
SCHEDULER_WARNING = "lr_scheduler.step()` before `optimizer.step()"
# the rules whose bugs raise each error (the fallback when no finding sits on the lines)
RULES_FOR = {"freed graph": ("LF001", "LF003"), "version": ("LF002", "LF008", "LF001", "LF003")}
MULTI_PROCESS = (
    "multi-process launches (torchrun, accelerate, DDP spawn) are not supported yet: run one "
    "process's script directly, e.g. `loopfix diagnose -- python train.py ...`"
)


@dataclass
class Diagnosis:
    command: list[str]
    status: str  # "diagnosed" | "clean" | "failed"
    summary: str
    error: str | None = None
    explanation: list[str] = field(default_factory=list)  # human lines, with file:line
    facts: dict | None = None  # what the run recorded (the child's explanation)
    findings: list[dict] = field(default_factory=list)  # static findings at those lines
    note: str = ""  # when no rule matches: what a rule would need
    stderr: str = ""
    sandbox: str = ""
    run_pid: int | None = None  # the child process that ran the command
    verify_skipped: bool = False  # the fixes shown were not verified (--no-verify)

    @property
    def exit_code(self) -> int:
        return {"diagnosed": 1, "clean": 0}.get(self.status, 2)

    def as_json(self) -> dict:
        return {
            "command": self.command,
            "status": self.status,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "error": self.error,
            "explanation": self.explanation,
            "facts": self.facts,
            "findings": self.findings,
            "note": self.note or None,
            "sandbox": self.sandbox,
            "loopfix_pid": os.getpid(),  # user code never runs in this process
            "run_pid": self.run_pid,
        }


@dataclass
class Options:
    iterations: int = 5
    timeout: float = 300.0
    python: str | None = None
    allow_network: bool = False
    verify: bool = True
    # each line the command prints (its text, and whether on stderr), as it prints it
    output: Callable[[str, bool], None] | None = None


def diagnose(command: list[str], options: Options, cwd: Path | None = None) -> Diagnosis:
    """Run `command` instrumented in `cwd` (default: the current folder) and diagnose it."""
    cwd = cwd or Path.cwd()
    target = _python_target(command, options)
    if isinstance(target, Diagnosis):
        return target
    python, arguments = target
    with tempfile.TemporaryDirectory(prefix="loopfix-diagnose-") as workdir:
        report_file = Path(workdir) / "report.json"
        run = _run_child(python, arguments, report_file, options, cwd, Path(workdir))
        if isinstance(run, Diagnosis):
            run.command = command
            return run
        stderr, timed_out = run
        if not report_file.exists() and timed_out:
            summary = (
                f"the command was stopped after {options.timeout:g} s (--timeout) before it "
                "finished; it raised no autograd error until then"
            )
            return Diagnosis(command, "clean", summary, stderr=stderr)
        if not report_file.exists():
            summary = "the command could not be run"
            if "No module named 'torch'" in stderr:
                summary = (
                    f"{python} has no torch: activate the project's environment, or pass --python"
                )
            return Diagnosis(command, "failed", summary, error=_last_line(stderr), stderr=stderr)
        report = json.loads(report_file.read_text(encoding="utf-8"))
    from loopfix.diagnose.explain import explain

    diagnosis = explain(command, report, stderr, timed_out, options, cwd)
    diagnosis.verify_skipped = not options.verify
    return diagnosis


def _python_target(command: list[str], options: Options):
    """(interpreter, child arguments: the script or `-m module` and its arguments), or the
    Diagnosis of a command that cannot be instrumented."""
    if not command:
        return Diagnosis(command, "failed", "no command given (loopfix diagnose -- python ...)")
    program = os.path.basename(command[0])
    if program in LAUNCHERS:
        return Diagnosis(command, "failed", MULTI_PROCESS)
    if not PYTHON.match(program):
        summary = (
            f"`{command[0]}` is not a python command: give the python command line it runs "
            "(loopfix diagnose -- python train.py ...)"
        )
        return Diagnosis(command, "failed", summary)
    rest = list(command[1:])
    while (
        rest
        and rest[0] in ("-u", "-O", "-OO", "-B", "-X", "-W")
        or (rest and rest[0].startswith(("-X", "-W")) and len(rest[0]) > 2)
    ):
        flag = rest.pop(0)
        if flag in ("-X", "-W") and rest:
            rest.pop(0)
    if not rest or (rest[0].startswith("-") and rest[0] != "-m"):
        summary = "give a script or `-m module` to run (`-c` code cannot be instrumented)"
        return Diagnosis(command, "failed", summary)
    if rest[0] == "-m" and (len(rest) < 2 or rest[1] in DISTRIBUTED_MODULES):
        return Diagnosis(command, "failed", MULTI_PROCESS if len(rest) > 1 else "no module")
    python = options.python or shutil.which(command[0]) or command[0]
    return python, rest


def _run_child(python, arguments, report_file, options, cwd, workdir):
    from loopfix.verify import interpreter, sandbox

    child = [python, "-m", "loopfix.diagnose.child", str(report_file)]
    child += ["--iterations", str(options.iterations)]
    child += ["--allow-network"] if options.allow_network else []
    child += ["--", *arguments]
    env = dict(os.environ)
    own = interpreter.is_own(python)
    extra = [] if own else [interpreter.tracer_path()]
    env["PYTHONPATH"] = os.pathsep.join([*extra, *filter(None, [env.get("PYTHONPATH")])])
    env |= sandbox.environment(workdir)
    if options.output is not None:
        env.setdefault("PYTHONUNBUFFERED", "1")  # its lines shown as it prints them
    try:
        process = subprocess.Popen(
            child,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL if options.output is None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        return Diagnosis([], "failed", f"{python} cannot be run: {error}")
    kept: list[str] = []  # the end of its stderr
    readers = [threading.Thread(target=_read, args=(process.stderr, True, options, kept))]
    if process.stdout is not None:
        readers.append(threading.Thread(target=_read, args=(process.stdout, False, options)))
    for reader in readers:
        reader.daemon = True
        reader.start()
    timed_out = False
    try:
        process.wait(timeout=options.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        timed_out = True
    for reader in readers:  # the rest of its output (a process it left may hold the pipes)
        reader.join(timeout=5)
    return "".join(kept)[-STDERR_KEPT:], timed_out


STDERR_KEPT = 8000  # characters of the command's stderr kept for the diagnosis


def _read(stream: IO[bytes], stderr: bool, options: Options, kept: list[str] | None = None):
    """Pass each line of `stream` to `options.output` as it comes; keep the end in `kept`."""
    size = 0
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace")
        if options.output is not None:
            options.output(line.rstrip("\r\n"), stderr)
        if kept is not None:
            kept.append(line)
            size += len(line)
            while size > 2 * STDERR_KEPT and len(kept) > 1:
                size -= len(kept.pop(0))
    stream.close()


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
