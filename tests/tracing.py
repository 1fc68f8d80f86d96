"""Run a script in a child process under `loopfix.verify.trace` and load what it recorded."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import torch


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
    trace = torch.load(trace_file, weights_only=True)
    return Run(completed.returncode, completed.stderr, trace["events"], trace["error"])


def first_iteration(events: list) -> list:
    """Events up to the first optimizer step (or the first backward when nothing steps)."""
    for index, event in enumerate(events):
        if event[0] == "step":
            return events[: index + 1]
    return events[:1]


def first_difference(original: list, patched: list) -> str | None:
    """Where the patched run's events stop matching every event the original recorded."""
    if len(patched) < len(original):
        return f"patched run recorded {len(patched)} events, original {len(original)}"
    for index, (a, b) in enumerate(zip(original, patched, strict=False)):
        if a[0] != b[0]:
            return f"event {index}: {a[0]} in the original, {b[0]} in the patched run"
        if a[0] == "backward":
            if not torch.equal(a[1], b[1]):
                return f"event {index}: loss {a[1]} != {b[1]}"
            grads_a, grads_b = a[2], b[2]
        else:
            grads_a, grads_b = a[2], b[2]
        if len(grads_a) != len(grads_b):
            return f"event {index}: {len(grads_a)} gradients != {len(grads_b)}"
        for k, (ga, gb) in enumerate(zip(grads_a, grads_b, strict=True)):
            if (ga is None) != (gb is None) or (ga is not None and not torch.equal(ga, gb)):
                return f"event {index}: gradient {k} differs"
    return None


def first_steps(events: list) -> dict[int, list]:
    """The gradients each optimizer stepped with the first time it stepped."""
    steps = {}
    for event in events:
        if event[0] == "step":
            steps.setdefault(event[3], event[2])
    return steps


def step_difference(reference: dict[int, list], patched: dict[int, list]) -> str | None:
    if reference.keys() != patched.keys():
        return f"optimizers {sorted(reference)} stepped in the reference, {sorted(patched)} here"
    for index, grads in reference.items():
        other = patched[index]
        if len(grads) != len(other):
            return f"optimizer {index}: {len(grads)} gradients != {len(other)}"
        for k, (a, b) in enumerate(zip(grads, other, strict=True)):
            if (a is None) != (b is None) or (a is not None and not torch.equal(a, b)):
                return f"optimizer {index}: gradient of parameter {k} differs"
    return None
