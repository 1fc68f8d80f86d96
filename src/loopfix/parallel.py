"""Worker processes for a scan: each file goes to the worker most likely to have loaded the
project modules it imports already.

The files of one project sit together in path order and import the same project modules,
which a worker parses and models once and keeps (`loopfix.project`). Handing out files in
small chunks to whichever worker is free makes every worker load nearly every project: on
the real tree of `docs/figures.md`, two workers parsed 2,945 files between them where one
process parses 2,000. So the paths are cut into one contiguous range per worker; a worker
takes files from the front of its own range, and one whose range is empty takes the back
half of the largest range left (work stealing, as in Cilk's and Rayon's schedulers), which
keeps the load balanced when the costly files bunch together in one range.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import queue
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

POLL_SECONDS = 0.5  # how often the parent looks whether a worker died while it waits


class WorkerDied(RuntimeError):
    """A worker process ended without sending the results of the items it had taken
    (killed, out of memory, or a crash in native code)."""


def mapped_in_parallel(
    work: Callable[[Item], Result], items: Sequence[Item], jobs: int
) -> Iterator[Result]:
    """`work(item)` for each of `items`, in their order, computed in `jobs` worker processes
    (forked on Linux, so `work` and `items` need not be picklable there; elsewhere they are
    pickled, and so is each result everywhere). An exception raised by `work` is raised
    here, at its item; the workers are stopped when the iterator is closed or fails.

    Raises `WorkerDied` when a worker ends without sending a result it owes."""
    context = multiprocessing.get_context("fork" if _forks() else None)
    ranges = context.Array("q", _cut(len(items), jobs), lock=False)  # start, end per worker
    lock, results = context.Lock(), context.Queue()
    workers = [
        context.Process(
            target=_worker,
            args=(k, work, items, ranges, lock, results, gc.get_threshold()),
            daemon=True,
        )
        for k in range(jobs)
    ]
    for worker in workers:
        worker.start()
    try:
        yield from _in_order(len(items), results, workers)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
        for worker in workers:
            worker.join()
        results.close()


def _forks() -> bool:
    return sys.platform == "linux"


def _cut(count: int, jobs: int) -> list[int]:
    """[start, end] of each worker's range: `count` items in `jobs` contiguous ranges whose
    lengths differ by at most one."""
    bounds = [count * k // jobs for k in range(jobs + 1)]
    return [value for k in range(jobs) for value in (bounds[k], bounds[k + 1])]


def _take(k: int, ranges, lock) -> int | None:
    """The index of the next item for worker `k`: the front of its range; when that is
    empty, it first makes the back half of the largest range left its own. None when no
    item is left."""
    with lock:
        if ranges[2 * k] >= ranges[2 * k + 1]:
            sizes = [ranges[2 * j + 1] - ranges[2 * j] for j in range(len(ranges) // 2)]
            victim = max(range(len(sizes)), key=sizes.__getitem__)
            if sizes[victim] <= 0:
                return None
            middle = ranges[2 * victim] + sizes[victim] // 2
            ranges[2 * k], ranges[2 * k + 1] = middle, ranges[2 * victim + 1]
            ranges[2 * victim + 1] = middle
        index = ranges[2 * k]
        ranges[2 * k] = index + 1
        return index


def _worker(k, work, items, ranges, lock, results, thresholds) -> None:
    # Stopped by the parent (`terminate`, SIGTERM), a worker ends at once. A forked worker
    # inherits the parent's handlers, and `loopfix.cli` makes SIGTERM raise SystemExit; the
    # exit that follows waits until the queue's buffer has reached the pipe, which the
    # parent no longer reads while it joins the worker: both would wait for good. Ctrl-C
    # reaches the whole process group: the parent handles it and stops the workers.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*thresholds)  # a spawned worker starts with Python's defaults
    while (index := _take(k, ranges, lock)) is not None:
        try:
            results.put((index, True, work(items[index])))
        except Exception as error:  # raised in the parent at its item
            results.put((index, False, _sendable(error)))
    results.close()
    results.join_thread()  # every result is in the pipe before the process ends


def _sendable(error: Exception) -> Exception:
    """The error itself when it pickles (the queue pickles in a thread of its own, where a
    failure would lose the result), else a RuntimeError that names it."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error


def _in_order(count: int, results, workers) -> Iterator:
    """The results as they arrive, yielded in item order (later ones wait in `arrived`)."""
    arrived: dict[int, tuple[bool, object]] = {}
    for expected in range(count):
        while expected not in arrived:
            try:
                index, ok, value = results.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if any(w.exitcode not in (None, 0) for w in workers) or all(
                    w.exitcode is not None for w in workers
                ):
                    _drain(results, arrived)
                    if expected not in arrived:
                        raise WorkerDied(_died_message(workers)) from None
                continue
            arrived[index] = (ok, value)
        ok, value = arrived.pop(expected)
        if not ok:
            raise value
        yield value


def _drain(results, arrived: dict) -> None:
    """What is still in the pipe after a worker ended (sent just before it ended)."""
    while True:
        try:
            index, ok, value = results.get(timeout=POLL_SECONDS)
        except queue.Empty:
            return
        arrived[index] = (ok, value)


def _died_message(workers) -> str:
    codes = ", ".join(str(w.exitcode) for w in workers if w.exitcode not in (None, 0))
    return f"a worker process ended without its results (exit code {codes or 0})"
