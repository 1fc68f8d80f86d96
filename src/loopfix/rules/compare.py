"""Comparisons of recorded traces (see `trace.py`), bit for bit. No torch: traces come back
as `portable.Tensor`s, equal when their dtype, shape and bytes are."""

from __future__ import annotations

import re
from enum import StrEnum


class Outcome(StrEnum):
    """The first words of every verdict: the whole vocabulary (defined in `MEANINGS`); a
    verdict other than `equivalent` goes on after a colon with what was seen."""

    equivalent = "equivalent"
    intended = "changed as intended"
    different = "not equivalent"
    unconfirmed = "not confirmed"
    undecided = "unverified"


MEANINGS = {
    Outcome.equivalent: (
        "the original showed the bug, and the patched run keeps the rule's criterion on values "
        "and gradients (what was compared, over how many iterations, is named)"
    ),
    Outcome.intended: (
        "the original showed the bug, and the fix changed what it exists to change (an unsafe "
        "fix, or LF005's learning-rate schedule) and nothing else the rule keeps; the change is "
        "named"
    ),
    Outcome.different: (
        "the patched code raised an error the original did not, or computed something the "
        "rule promises to keep; the difference is named"
    ),
    Outcome.unconfirmed: (
        "the original run did not show the bug the rule reports; what was not seen is named"
    ),
    Outcome.undecided: (
        "the runs could not decide: no torch, a missing package, a run that could not be "
        "made, the original failing for another reason"
    ),
}
WRITTEN = (Outcome.equivalent, Outcome.intended)  # what `apply` writes

INTENDED = Outcome.intended.value  # the verdict's start for a fix that did its change


def outcome_of(verdict: str) -> Outcome:
    """The vocabulary word a verdict starts with."""
    for outcome in sorted(Outcome, key=len, reverse=True):
        if verdict == outcome or verdict.startswith(f"{outcome}:"):
            return outcome
    raise ValueError(f"a verdict outside the vocabulary: {verdict!r}")


def said(error: str) -> str:
    """An error as a verdict names it: its first line up to the end of its first sentence,
    never cut within it (`RuntimeError: Trying to backward through the graph a second time
    (or directly access saved tensors after they have already been freed).`); a first line
    that ends in a colon goes on with the next (`RuntimeError: Error(s) in loading
    state_dict for Net: Missing key(s) in state_dict: "fc.weight".`)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return error
    line = lines[0]
    if line.endswith(":") and len(lines) > 1:
        line = f"{line} {lines[1]}"
    end = re.search(r"\.\s+(?=[A-Z])", line)
    return line[: end.start() + 1] if end else line


def _error_kind(error: str) -> str:
    return re.sub(r"\d+", "N", said(error))


def new_error(original, patched) -> str | None:
    """The verdict on a patched run that raised an error the original did not raise (compared
    by their first sentences, numbers aside): refused whatever else the runs show."""
    if patched.skipped or not patched.error:
        return None
    if original.error and _error_kind(original.error) == _error_kind(patched.error):
        return None
    before = "raised another error" if original.error else "did not"
    if patched.timed_out:
        return f"{Outcome.different}: patched {patched.error}, original {before}"
    return f"{Outcome.different}: patched raised {said(patched.error)}, original {before}"


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


def original_raised(runs, errors: tuple[str, ...]) -> str | None:
    """The diagnosis of a rule whose bug is an error: None when the original raised one of
    `errors` within the capped iterations, else the verdict saying what was seen instead."""
    original = runs.original
    if original.trace is None:
        return f"{Outcome.undecided}: the original {said(original.error or 'left no trace')}"
    error = original.error or ""
    if any(expected in error for expected in errors):
        return None
    if error:
        return f"{Outcome.undecided}: the original failed otherwise: {said(error)}"
    return (
        f"{Outcome.unconfirmed}: the original did not raise '{errors[0]}' within "
        f"{runs.iterations} iterations"
    )


def stopped_before(runs, line: int) -> str | None:
    """The verdict when the original run stopped at its iteration cap before it reached the
    finding's line (`line`, as the user wrote it): no backward ran from that line or any
    later one (a script or notebook with an earlier training loop, whose steps the cap
    counts), so nothing was seen either way. None when the run was not capped, or a
    backward ran at or after the line (its loop ran: the line's branch was not taken)."""
    if runs.original.trace is None or not runs.original.trace.get("capped"):
        return None
    judged = runs.judged_lines(line, line)
    reached = [
        at
        for event in runs.original.events
        if event[0] == "backward" and len(event) > 9
        for at in event[9] or ()
    ]
    if not judged or any(at >= min(judged) for at in reached):
        return None
    return stopped_at_cap(runs, f"the code on line {line} ran: a loop before it used them")


def stopped_at_cap(runs, before: str) -> str:
    """The verdict when the original stopped at its iteration cap before `before` (what
    did not happen: `the code on line 12 ran`); `--iterations` runs more."""
    return (
        f"{Outcome.undecided}: the run stopped at its iteration cap ({runs.iterations} steps "
        f"of the first optimizer) before {before} (`--iterations` runs more)"
    )


def patched_raised(patched) -> str | None:
    return f"{Outcome.different}: patched raised {said(patched.error)}" if patched.error else None


def intended_change(runs) -> str:
    """The verdict on an unsafe fix, which changes what the code computes on purpose (the
    original showed the bug: its rule's `confirm`): the patched code must run every capped
    iteration, and the verdict names the first forward, loss or first step of an optimizer
    that now differs from the original's (or says that none did)."""
    original, patched = runs.original, runs.patched
    if patched.error:
        return patched_raised(patched)
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
    if original.error:
        return f"{Outcome.undecided}: the original raised {said(original.error)}"
    if patched.error:
        return patched_raised(patched)
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
    diagnosis = original_raised(runs, (error,))
    if diagnosis is not None:
        return diagnosis
    if reference is None or reference.trace is None or reference.error:
        why = "was not made" if reference is None else reference.error or "left no trace"
        return f"{Outcome.undecided}: the out-of-place reference run {said(why)}"
    if patched.error:
        return patched_raised(patched)
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
