"""Comparisons of recorded traces (see `trace.py`). Imports torch: verification path only."""

from __future__ import annotations

import torch


def first_iteration(events: list) -> list:
    """Events up to the first optimizer step (or the first backward when nothing steps)."""
    for index, event in enumerate(events):
        if event[0] == "step":
            return events[: index + 1]
    return events[:1]


def first_difference(original: list, patched: list) -> str | None:
    """Where the patched run's events stop matching every event the original recorded."""
    if len(patched) < len(original):
        return f"the patched run recorded {len(patched)} events, the original {len(original)}"
    for index, (a, b) in enumerate(zip(original, patched, strict=False)):
        if a[0] != b[0]:
            return f"event {index}: {a[0]} in the original, {b[0]} in the patched run"
        if a[0] == "backward" and not torch.equal(a[1], b[1]):
            return f"event {index}: loss {a[1].tolist()} != {b[1].tolist()}"
        difference = _gradient_difference(a[2], b[2])
        if difference:
            return f"event {index} ({a[0]}): {difference}"
    return None


def first_steps(events: list) -> dict[int, list]:
    """The gradients each optimizer stepped with the first time it stepped."""
    steps: dict[int, list] = {}
    for event in events:
        if event[0] == "step":
            steps.setdefault(event[3], event[2])
    return steps


def step_difference(reference: dict[int, list], patched: dict[int, list]) -> str | None:
    if reference.keys() != patched.keys():
        return f"optimizers {sorted(reference)} stepped in the reference, {sorted(patched)} here"
    for index, grads in reference.items():
        difference = _gradient_difference(grads, patched[index])
        if difference:
            return f"optimizer {index}: {difference}"
    return None


def _gradient_difference(expected: list, actual: list) -> str | None:
    if len(expected) != len(actual):
        return f"{len(expected)} gradients != {len(actual)}"
    for k, (a, b) in enumerate(zip(expected, actual, strict=True)):
        if (a is None) != (b is None) or (a is not None and not torch.equal(a, b)):
            return f"the gradient of parameter {k} differs"
    return None
