"""Comparisons of recorded traces (see `trace.py`), bit for bit. No torch: traces come back
as `portable.Tensor`s, equal when their dtype, shape and bytes are."""

from __future__ import annotations

INTENDED = "changed as intended"  # the verdict's start for an unsafe fix that did its change


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
        if a[0] == "backward" and a[1] != b[1]:
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


def first_iteration_steps(events: list) -> dict[int, list]:
    """The gradients each optimizer stepped with in the first iteration: its first step, for
    the optimizers that step before any optimizer steps a second time. A later first step (an
    update every n iterations) ran on weights that earlier iterations changed, which a
    reference run with deferred steps never changes: not comparable."""
    steps: dict[int, list] = {}
    for event in events:
        if event[0] != "step":
            continue
        if event[3] in steps:
            break
        steps[event[3]] = event[2]
    return steps


def step_order_difference(reference: list, patched: list) -> str | None:
    """Whether the optimizers step in the same sequence over the whole capped run (which
    optimizer, how often, in which order): a rewrite that moved a step into or out of an `if`
    changes it from the first iteration where the condition differs, where the gradients of
    later iterations (run on other weights) are not comparable."""
    expected = [event[3] for event in reference if event[0] == "step"]
    actual = [event[3] for event in patched if event[0] == "step"]
    if expected == actual:
        return None
    common = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    return (
        f"the optimizers stepped in another order or number of times from step {common} "
        f"(reference: {expected[common : common + 4]}, patched: {actual[common : common + 4]})"
    )


def step_difference(reference: dict[int, list], patched: dict[int, list]) -> str | None:
    if reference.keys() != patched.keys():
        return f"optimizers {sorted(reference)} stepped in the reference, {sorted(patched)} here"
    for index, grads in reference.items():
        difference = _gradient_difference(grads, patched[index])
        if difference:
            return f"optimizer {index}: {difference}"
    return None


def every_step_difference(reference: list, patched: list) -> str | None:
    """Whether the patched run steps the same optimizers in the same order with exactly the
    reference's gradients, over the whole capped run."""
    expected = [(e[3], e[2]) for e in reference if e[0] == "step"]
    actual = [(e[3], e[2]) for e in patched if e[0] == "step"]
    if len(expected) != len(actual):
        return f"{len(expected)} steps in the reference, {len(actual)} here"
    for number, ((index, grads), (other, patched_grads)) in enumerate(
        zip(expected, actual, strict=True)
    ):
        if index != other:
            return f"step {number}: optimizer {index} in the reference, {other} here"
        difference = _gradient_difference(grads, patched_grads)
        if difference:
            return f"step {number} (optimizer {index}): {difference}"
    return None


def _gradient_difference(expected: list, actual: list) -> str | None:
    if len(expected) != len(actual):
        return f"{len(expected)} gradients != {len(actual)}"
    for k, (a, b) in enumerate(zip(expected, actual, strict=True)):
        if a != b:
            return f"the gradient of parameter {k} differs"
    return None


def forward_difference(original: list, patched: list) -> str | None:
    """Whether the patched run reproduces, in order and bit for bit, every outermost module
    forward the original ran before it stopped (`trace["forwards"]`): a rewrite may move
    backwards and steps, never what a forward computes."""
    if len(patched) < len(original):
        return f"the patched run ran {len(patched)} forwards, the original {len(original)}"
    for index, ((module, output), (other, patched_output)) in enumerate(
        zip(original, patched, strict=False)
    ):
        if module != other:
            return f"forward {index}: module {module} in the original, {other} in the patched run"
        if not _same_output(output, patched_output):
            return f"forward {index} (module {module}) computed a different output"
    return None


def loss_difference(original: list, patched: list) -> str | None:
    """The loss of each backward the original ran, in order, equals the patched run's."""
    before = [e[1] for e in original if e[0] == "backward"]
    after = [e[1] for e in patched if e[0] == "backward"]
    if len(after) < len(before):
        return f"the patched run ran {len(after)} backwards, the original {len(before)}"
    for index, (a, b) in enumerate(zip(before, after, strict=False)):
        if a != b:
            return f"backward {index}: loss {a.tolist()} != {b.tolist()}"
    return None


def loss_multiset_difference(original: list, patched: list) -> str | None:
    """Each loss the original backwarded is among the patched run's backwards, as often, in
    any order (whole update calls moved before one another)."""
    remaining = [e[1] for e in patched if e[0] == "backward"]
    for index, loss in enumerate(e[1] for e in original if e[0] == "backward"):
        match = next((i for i, other in enumerate(remaining) if other == loss), None)
        if match is None:
            return (
                f"the original's backward {index} (loss {loss.tolist()}) is not among the "
                "patched run's"
            )
        remaining.pop(match)
    return None


def lost_reach(events: list) -> str | None:
    """Whether a backward reaches fewer parameters than the first backward from the same line
    of code did: a cut that removed a path from a loss to the parameters that produced it in
    its own iteration (a truncation may only cut paths into earlier iterations)."""
    first: dict[int | None, frozenset] = {}
    for event in events:
        if event[0] != "backward" or len(event) < 5:
            continue
        line, reached = event[3], frozenset(event[4])
        if line not in first:
            first[line] = reached
        elif not first[line] <= reached:
            lost = len(first[line] - reached)
            return (
                f"the backward on line {line} no longer reaches {lost} parameter(s) it reached "
                "in the first iteration"
            )
    return None


def _same_output(a, b) -> bool:
    return a == b


def intended_change(runs, predicted_error: str) -> str:
    """The verdict on an unsafe fix, which changes what the code computes on purpose: the
    original must show the bug (raise `predicted_error` when one is given), the patched code
    must run every capped iteration, and the verdict names the first forward, loss or first
    step of an optimizer that now differs from the original's (or says that none did)."""
    original, patched = runs.original, runs.patched
    if original.trace is None:
        return f"unverified: the original {original.error}"
    error = original.error or ""
    if predicted_error and predicted_error not in error:
        if error:
            return f"unverified: the original failed otherwise: {error[:120]}"
        return f"not confirmed: the original did not fail within {runs.iterations} iterations"
    if patched.error:
        return f"not equivalent: the patched code raised {patched.error[:120]}"
    difference = (
        forward_difference(
            original.trace.get("forwards", []), (patched.trace or {}).get("forwards", [])
        )
        or loss_difference(original.events, patched.events)
        or step_difference(first_steps(original.events), first_steps(patched.events))
    )
    return f"{INTENDED}: {difference or 'nothing differs before the original failed'}"


def same_whole_run(runs) -> str:
    """The verdict for a fix that must change nothing the run computes (LF004, LF006): every
    loss, gradient and step of the whole capped run is the same, and peak memory is not
    higher (5% and 16 MiB of slack for noise)."""
    original, patched = runs.original, runs.patched
    if original.error or patched.error:
        which = "original" if original.error else "patched code"
        return f"unverified: the {which} raised {(original.error or patched.error)[:120]}"
    difference = first_difference(original.events, patched.events)
    if difference is None and len(patched.events) != len(original.events):
        difference = "the runs recorded different numbers of events"
    if difference is not None:
        return f"not equivalent: {difference}"
    before, after = original.trace["peak_memory"], patched.trace["peak_memory"]
    if after > before * 1.05 + (16 << 20):
        return f"not equivalent: peak memory rose from {before >> 20} to {after >> 20} MiB"
    return "equivalent"


def same_as_out_of_place(runs, error: str) -> str:
    """The verdict for an in-place change made out-of-place (LF008): the original fails with
    `error`; every module forward and event it recorded before failing is the patched run's
    too; and the patched run completes with every loss, gradient and step of the whole capped
    run equal to the reference's: the original run with every saved tensor copied when it was
    saved, which computes what out-of-place operations throughout would."""
    original, patched, reference = runs.original, runs.patched, runs.cloned
    if error not in (original.error or ""):
        return f"not confirmed: the original did not fail with '{error}'"
    if reference is None or reference.trace is None or reference.error:
        why = "was not made" if reference is None else reference.error or "left no trace"
        return f"unverified: the out-of-place reference run {why[:120]}"
    if patched.error:
        return f"not equivalent: the patched code raised {patched.error[:120]}"
    forwards = [run.trace.get("forwards", []) for run in (original, reference, patched)]
    difference = forward_difference(forwards[0], forwards[2]) or first_difference(
        original.events, patched.events
    )
    if difference is not None:
        return f"not equivalent: before the original failed, {difference}"
    difference = forward_difference(forwards[1], forwards[2]) or first_difference(
        reference.events, patched.events
    )
    if difference is None and len(patched.events) != len(reference.events):
        difference = "the runs recorded different numbers of events"
    if difference is not None:
        return f"not equivalent: against the out-of-place reference, {difference}"
    return "equivalent"
