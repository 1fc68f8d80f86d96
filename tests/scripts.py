"""Small training scripts in tests: run them for the truth, analyse them for the claim.

Scripts run in children forked from one warm server per test process (`_Server`), which has
imported torch and built an optimizer once (the first optimizer imports `torch._dynamo`:
about 3 s of every fresh interpreter's start on the CI machines). Each child runs the script
as `python script.py` would: `__main__`, its folder first on the import path, its own working
folder, its output captured; it cannot change the server, which only forks."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

TIMEOUT = 120  # seconds a script may run

SERVER = r"""
import json, os, runpy, signal, sys, traceback
import torch
torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=0.1)  # the lazy imports, once
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setsid()
            signal.alarm(request["timeout"])
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # not the server's requests
            with open(request["out"], "wb") as out, open(request["err"], "wb") as err:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            os.chdir(request["cwd"])
            sys.argv = request["argv"]
            if request["code"] is None:
                sys.path.insert(0, os.path.dirname(os.path.abspath(request["argv"][0])))
                runpy.run_path(request["argv"][0], run_name="__main__")
            else:
                sys.path.insert(0, "")
                exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    sys.stdout.write(json.dumps(code) + "\n")
    sys.stdout.flush()
"""


class _Server:
    """The warm server of this test process, started on first use."""

    process: subprocess.Popen | None = None

    @classmethod
    def run(cls, argv: list[str], cwd: Path, code: str | None) -> subprocess.CompletedProcess:
        if cls.process is None or cls.process.poll() is not None:
            environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
            cls.process = subprocess.Popen(
                [sys.executable, "-c", SERVER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=environment,
            )
            atexit.register(cls.process.kill)
        out, err = cwd / ".script-stdout", cwd / ".script-stderr"
        request = {"argv": argv, "cwd": str(cwd), "code": code, "timeout": TIMEOUT}
        request |= {"out": str(out), "err": str(err)}
        cls.process.stdin.write(json.dumps(request) + "\n")
        cls.process.stdin.flush()
        returncode = json.loads(cls.process.stdout.readline())
        stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        return subprocess.CompletedProcess(argv, returncode, stdout, stderr)


def run_python(argv: list[str], cwd: Path, code: str | None = None) -> subprocess.CompletedProcess:
    """`python ARGV...` run in `cwd` (with `code`: `python -c CODE ARGV...`)."""
    return _Server.run(argv, Path(cwd), code)


def run_script(source: str, tmp_path) -> subprocess.CompletedProcess:
    """`source` run as `train.py` in `tmp_path` by this interpreter (torch on CPU)."""
    script = tmp_path / "train.py"
    script.write_text(source)
    return run_python([str(script)], tmp_path)


def rules_reported(source: str) -> list[str]:
    """The rule of each finding `loopfix check` reports on `source`, in order."""
    text = textwrap.dedent(source).encode()
    return [f.rule for f in analyse_source(SourceFile.from_bytes("train.py", text)).findings]
