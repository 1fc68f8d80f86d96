"""A `loopfix apply` killed at any moment leaves every file wholly old or wholly new.

Real runs over many files, killed with SIGKILL: once as soon as the first file has been
written (in the middle of the writes), and at random moments of a run. A second apply then
finishes the job.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus_cases import CORPUS

BUGGY = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
FIXED = (CORPUS / "lf001_gru_state_init_once" / "after.py").read_text()
FILES = 150
PADDING = "# " + "a long comment line to make every write take a little while " * 2 + "\n"


def padded(text: str, index: int) -> str:
    return f"# file {index}\n" + PADDING * 400 + text


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("template")
    for index in range(FILES):
        (folder / f"train_{index:03}.py").write_text(padded(BUGGY, index))
    return folder


def start_apply(folder: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "loopfix", "apply", "--no-verify", str(folder)]
    return subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def assert_each_file_old_or_new(folder: Path) -> tuple[int, int]:
    old = new = 0
    for index in range(FILES):
        text = (folder / f"train_{index:03}.py").read_text()
        if text == padded(BUGGY, index):
            old += 1
        else:
            assert text == padded(FIXED, index), f"train_{index:03}.py is half-written"
            new += 1
    return old, new


def finish_and_check(folder: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "loopfix", "apply", "--no-verify", str(folder)], check=False
    )
    assert assert_each_file_old_or_new(folder) == (0, FILES)
    leftovers = [p.name for p in folder.iterdir() if p.suffix == ".py" and "train_" not in p.name]
    assert leftovers == []


def kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_killed_right_after_the_first_write(template, tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(template, folder)
    first = folder / "train_000.py"
    started = first.stat().st_mtime_ns
    process = start_apply(folder)
    deadline = time.monotonic() + 120
    while first.stat().st_mtime_ns == started and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.0005)
    kill(process)
    old, new = assert_each_file_old_or_new(folder)
    print(f"killed after the first write: {new} new, {old} old")
    finish_and_check(folder)


def test_killed_at_random_moments(template, tmp_path):
    full = tmp_path / "timing"
    shutil.copytree(template, full)
    started = time.monotonic()
    start_apply(full).wait()
    duration = time.monotonic() - started
    assert assert_each_file_old_or_new(full) == (0, FILES)
    moments = random.Random(7).sample(range(1000), 3)
    for trial, moment in enumerate(moments):
        folder = tmp_path / f"repo{trial}"
        shutil.copytree(template, folder)
        process = start_apply(folder)
        time.sleep(duration * (0.5 + moment / 2000))  # the writes come at the end of a run
        kill(process)
        assert_each_file_old_or_new(folder)
        finish_and_check(folder)
