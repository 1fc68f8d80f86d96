"""The scan's worker processes (`loopfix.parallel`): results in order, each item computed
once, files of one range kept in one worker, the load balanced by stealing, and failures
raised in the parent."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from loopfix.parallel import WorkerDied, _cut, _take, mapped_in_parallel


def square(item: int) -> int:
    return item * item


def pid_of(item: int) -> int:
    time.sleep(0.002)
    return os.getpid()


@pytest.mark.parametrize("jobs", [1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 5, 64])
def test_results_come_in_item_order_each_computed_once(jobs, count):
    assert list(mapped_in_parallel(square, list(range(count)), jobs)) == [
        i * i for i in range(count)
    ]


def test_contiguous_items_stay_in_one_worker():
    """Items of one range (one project's files) go to one worker: along 400 equal items, the
    worker changes only where a range starts or a steal cut one (a few times; handing out
    chunks of 8 to alternate workers would change it at each of the 50 chunks)."""
    owners = list(mapped_in_parallel(pid_of, list(range(400)), 2))
    changes = sum(a != b for a, b in zip(owners, owners[1:], strict=False))
    assert len(set(owners)) == 2 and changes <= 20


def slow_at_front(item: int) -> int:
    time.sleep(0.02 if item < 10 else 0.0)
    return os.getpid()


def test_a_worker_whose_range_is_done_takes_work_from_a_busy_one():
    # the first worker's range starts with the slow items: the second, done with its own
    # range at once, must take part of the first range
    owners = list(mapped_in_parallel(slow_at_front, list(range(40)), 2))
    assert owners[19] != owners[0]


def test_ranges_are_contiguous_and_even():
    assert _cut(10, 3) == [0, 3, 3, 6, 6, 10]
    assert _cut(1, 2) == [0, 0, 0, 1]


def test_an_idle_worker_steals_the_back_half_of_the_largest_range():
    ranges, lock = [0, 10, 10, 10], threading.Lock()  # worker 1's range is empty
    assert _take(1, ranges, lock) == 5  # it takes [5, 10) of worker 0's range
    assert ranges == [0, 5, 6, 10]
    assert _take(0, ranges, lock) == 0 and ranges == [1, 5, 6, 10]
    ranges = [3, 3, 9, 10]  # one item left: the thief takes it
    assert _take(0, ranges, lock) == 9 and ranges == [10, 10, 9, 9]
    assert _take(0, ranges, lock) is None and _take(1, ranges, lock) is None


def fails_at_three(item: int) -> int:
    if item == 3:
        raise ValueError(f"bad item {item}")
    return item


def test_an_error_is_raised_at_its_item_after_the_results_before_it():
    results = mapped_in_parallel(fails_at_three, list(range(40)), 2)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="bad item 3"):
        next(results)


class Unpicklable(Exception):
    def __init__(self, a, b):  # pickling passes only `args` back: this cannot be rebuilt
        super().__init__(f"{a} {b}")


def raises_unpicklable(item: int) -> int:
    raise Unpicklable(item, "x")


def test_an_error_that_does_not_pickle_is_raised_by_name():
    with pytest.raises(RuntimeError, match="Unpicklable: 0 x"):
        list(mapped_in_parallel(raises_unpicklable, list(range(4)), 2))


def dies_at_five(item: int) -> int:
    if item == 5:
        os._exit(3)
    return item


def test_a_worker_that_dies_is_reported_not_waited_for():
    with pytest.raises(WorkerDied, match="exit code 3"):
        list(mapped_in_parallel(dies_at_five, list(range(10)), 2))


STOPPED_EARLY = """\
import signal, sys, time
from loopfix.parallel import mapped_in_parallel


def stop(signum, frame):  # what `loopfix.cli.main` installs: SIGTERM exits like Ctrl-C
    raise SystemExit(128 + signum)


def big(item):
    if item == 0:
        return b""
    time.sleep(0.5)  # the others' results pile up in the pipe, which nobody reads any more
    return b"x" * 1_000_000


signal.signal(signal.SIGTERM, stop)
results = mapped_in_parallel(big, list(range(40)), 2)
next(results)
time.sleep(2)  # the second worker has sent a result the pipe cannot hold, and works on
results.close()  # the workers are stopped with results still unsent
print("closed")
"""


def test_workers_stop_at_once_when_the_parent_stops_early(tmp_path):
    """A worker stopped with results still in its queue's buffer ends at once: it does not
    run the parent's SIGTERM handler (inherited by a forked worker), whose exit would wait
    for those results to reach a pipe that nobody reads, and the parent's join with it."""
    script = tmp_path / "stopped_early.py"
    script.write_text(STOPPED_EARLY)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "closed", run.stderr


def test_an_error_while_the_workers_stop_reaches_the_scan(tmp_path, monkeypatch):
    """The scan closes the workers' results itself once it has them all, so an error raised
    while they stop (SIGTERM reaching loopfix then) ends the scan; left to the garbage
    collector it would be printed as ignored and the run would end with a clean summary."""
    from loopfix import scan as scan_module
    from loopfix.config import Config

    def stopping(work, items, jobs):
        try:
            yield from (work(item) for item in items)
        finally:
            raise SystemExit(143)

    monkeypatch.setattr(scan_module, "mapped_in_parallel", stopping)
    for n in range(scan_module.SEQUENTIAL_BELOW):
        (tmp_path / f"train_{n}.py").write_text("import torch\nloss = torch.ones(1)\n")
    paths = sorted(tmp_path.glob("*.py"))
    settings = scan_module.ScanSettings(Config(), None)
    with pytest.raises(SystemExit):
        list(scan_module.scan(paths, settings, 2))
