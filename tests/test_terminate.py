"""`kill <loopfix>` in the middle of a verification stops every process loopfix started: the
warm worker and the run it forked for the user's code (Linux: /proc). SIGTERM runs loopfix's
cleanup; after SIGKILL the worker sees its parent gone and stops the run itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus_cases import CORPUS

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")


def descendants(pid: int) -> set[int]:
    found, pending = set(), [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    pending.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_killing_verify_stops_the_worker_and_the_run(tmp_path, signum):
    buggy = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    # the user's run blocks long enough to be caught in the middle
    (tmp_path / "train.py").write_text("import time\ntime.sleep(120)\n" + buggy)
    loopfix = Path(sys.executable).with_name("loopfix")
    process = subprocess.Popen(
        [str(loopfix), "verify", "--device", "cpu", "train.py"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started: set[int] = set()
    deadline = time.monotonic() + 120
    while len(started) < 2 and time.monotonic() < deadline:  # the worker and its fork
        started |= descendants(process.pid)
        time.sleep(0.2)
    assert len(started) >= 2, "the verification run never started"
    time.sleep(1)
    os.kill(process.pid, signum)
    expected = 128 + signum if signum == signal.SIGTERM else -signum
    assert process.wait(timeout=30) == expected
    deadline = time.monotonic() + 10
    while any(map(alive, started)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in started if alive(pid)]
