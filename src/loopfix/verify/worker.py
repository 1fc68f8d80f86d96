"""A warm fork server for verification runs: torch is imported once per loopfix invocation.

    python -m loopfix.verify.worker

Reads one JSON request per line on stdin and answers one JSON line on stdout. For each request
it forks; the child starts its own session, takes the requested environment, working folder,
import path and memory limit, sends its stderr to a file, runs the tracer (`trace.main`) and
exits. The worker waits with the request's timeout and kills the child's whole process group
when it runs over. User code only ever runs in those forked children, never in the worker,
and never in loopfix's own process. The worker never touches CUDA, which cannot survive a fork.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sys
import time

import torch  # the point of the worker: imported once, inherited by every fork

from loopfix.verify import trace

PARENT = os.getppid()  # the loopfix process that started the worker
RUNNING: int | None = None  # the forked run in progress (its process group)


def warm_up() -> None:
    """Trigger torch's lazy imports (the first optimizer pulls in much of torch._dynamo) so
    that forks inherit them. CPU only: no device, and no thread pool is started."""
    parameter = torch.nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    (parameter * 2).sum().backward()
    optimizer.step()


def serve() -> None:
    signal.signal(signal.SIGTERM, _stop_running)
    warm_up()
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.write(json.dumps(run(request)) + "\n")
        sys.stdout.flush()


def run(request: dict) -> dict:
    global RUNNING
    started = time.monotonic()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked child
        _child(request)
    RUNNING = child
    deadline = started + request["timeout"]
    while True:
        finished, status = os.waitpid(child, os.WNOHANG)
        if finished:
            code = os.waitstatus_to_exitcode(status)
            return {"returncode": code, "timed_out": False, "seconds": time.monotonic() - started}
        if time.monotonic() > deadline:
            os.killpg(child, signal.SIGKILL)
            os.waitpid(child, 0)
            return {"returncode": None, "timed_out": True, "seconds": time.monotonic() - started}
        if os.getppid() != PARENT:  # loopfix was killed: stop its run and go too
            _stop_running()
        time.sleep(0.01)


def _stop_running(*_) -> None:
    """Kill the run in progress (its own session: the whole group) and exit."""
    if RUNNING is not None:
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.killpg(RUNNING, signal.SIGKILL)
    os._exit(1)


def _child(request: dict) -> None:  # pragma: no cover - runs in the forked child
    code = 1
    try:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:0] = [request["cwd"], *request["path"]]
        if request["memory_limit"]:
            limit = request["memory_limit"]
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        stderr = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(stderr, 2)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        code = trace.main(request["argv"])
    except BaseException:  # noqa: BLE001 - whatever happens, the child must exit here
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    serve()
