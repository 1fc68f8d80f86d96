"""The reorder of whole update calls: `update_params(opt, loss)` helpers that each run one
optimizer's `zero_grad()`, backward and `step()`.

When such a call's backward fails because an earlier update call stepped weights its graph
saved (soft actor-critic's policy update after its critics'), the exact fix cannot split the
helper; it moves the failing call, whole, before the earliest update call whose step it must
not see. That is exact when every call it moves over is itself a whole update that zeroes
its own optimizer's gradients first (so what the moved backward leaves in their parameters'
`.grad` is cleared before it is used) and whose backward does not reach the weights the moved
call steps (the re-analysis of the patched text checks that no backward meets a stale or
freed graph and that each backward reaches exactly the graphs it reached before).
"""

from __future__ import annotations

import ast

from loopfix.edits import Edit
from loopfix.model.graphs import BackwardSite
from loopfix.rules.base import FileContext

FIX_TITLE = "Run this update before the updates whose steps its graph needs"


def anchor_of(context: FileContext, site: BackwardSite) -> ast.stmt | None:
    """The statement of this file whose call reaches a backward of another module's helper
    through a stale or freed graph; None for a backward of this file's own scopes."""
    if site.statement is not None:
        return None
    model = context.model
    anchor = model.reached_through_call(site.id)
    if anchor is None or id(anchor) not in model.parents:
        return None
    # only when a step that fails it ran in an earlier statement of this block: a helper
    # whose own step breaks its own backward (`trainer.train(batch)`) is its module's finding
    stale = model.stale_steps_before(site.id)
    _, block = model.block_of(anchor)
    for statement in block:
        if statement is anchor:
            return None
        events = model.events_within(statement)
        if any(kind == "update" and event in stale for kind, event, _ in events):
            return anchor
    return None


def plan_call_move(context: FileContext, site: BackwardSite) -> list[Edit] | str:
    """Edits that move the update call reaching `site` before the earliest consecutive
    update call whose step made its graph stale, or why there are none."""
    model, layout = context.model, context.layout
    anchor = model.reached_through_call(site.id)
    if anchor is None or model.update_call(anchor) is None:
        return (
            "the function called here does not run one optimizer's whole update "
            "(zero_grad, then backward, then step) and nothing else"
        )
    _, block = model.block_of(anchor)
    position = next(i for i, s in enumerate(block) if s is anchor)
    stale = model.stale_steps_before(site.id)
    target = None
    for index in range(position - 1, -1, -1):
        statement = block[index]
        if model.update_call(statement) is None:
            break
        events = model.events_within(statement)
        if any(kind == "update" and event in stale for kind, event, _ in events):
            target = statement
    if target is None:
        return "the step its graph needs is not in an update call just before it"
    if not (layout.stands_alone(anchor) and layout.stands_alone(target)):
        return "the update calls share a line with other statements"
    start, end = layout.leading_start(anchor), layout.line_end(anchor.end_lineno)
    text = context.text[start:end]
    if not text.endswith(("\n", "\r")):
        return "the update call ends the file without a line break"
    at = layout.leading_start(target)
    return [Edit(at, at, text), Edit(start, end, "")]


def call_move_oracle(runs) -> str:
    """The patched code computes every forward the original computed, bit for bit and in the
    same order, and every loss the original backwarded (in another order: the moved call's
    backward now runs first); each optimizer that steps in the first iteration steps with
    exactly the gradients of the original run with every step deferred (the gradients the
    author meant: no parameter changed during the iteration), and every optimizer steps as
    often over the capped run. Optimizers are matched by the parameters they own (the trace
    numbers them in the order they first step, which the move changes)."""
    from loopfix.verify.compare import (
        first_iteration_steps,
        forward_difference,
        loss_multiset_difference,
        step_difference,
    )

    reference, patched, original = runs.reference, runs.patched, runs.original
    if reference is None or reference.trace is None or reference.error:
        reason = "was not made" if reference is None else reference.error
        return f"unverified: the reference run of the original {reason}"
    if patched.error:
        return f"not equivalent: the patched code raised {patched.error[:120]}"
    expected = _by_parameters(first_iteration_steps, reference.events)
    if not expected:
        return "unverified: no optimizer stepped in the reference run"
    stepped = _by_parameters(_first_steps, patched.events)
    difference = (
        forward_difference(original.trace.get("forwards", []), patched.trace.get("forwards", []))
        or loss_multiset_difference(original.events, patched.events)
        or step_difference(expected, {k: v for k, v in stepped.items() if k in expected})
        or _step_count_difference(reference.events, patched.events)
    )
    return "equivalent" if difference is None else f"not equivalent: {difference}"


def _owner_key(event) -> tuple:
    """A step event's optimizer, named by the positions of the parameters it owns."""
    return tuple(event[5]) if len(event) > 5 else (event[3],)


def _first_steps(events: list) -> dict:
    steps: dict = {}
    for event in events:
        if event[0] == "step":
            steps.setdefault(event[3], event)
    return steps


def _by_parameters(select, events: list) -> dict:
    """`select(events)` (optimizer index -> gradients, or -> event) keyed by the parameters
    each optimizer owns."""
    owners = {e[3]: _owner_key(e) for e in events if e[0] == "step"}
    chosen = select(events)
    return {
        owners[index]: value[2] if isinstance(value, tuple) else value
        for index, value in chosen.items()
    }


def _step_count_difference(reference: list, patched: list) -> str | None:
    """Whether each optimizer steps as often over the whole capped run as in `reference`."""
    counts: dict[tuple, list[int]] = {}
    for side, events in enumerate((reference, patched)):
        for event in events:
            if event[0] == "step":
                counts.setdefault(_owner_key(event), [0, 0])[side] += 1
    for expected, actual in counts.values():
        if expected != actual:
            return f"an optimizer stepped {actual} times, {expected} in the reference"
    return None
