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
import builtins

from loopfix.edits import Edit
from loopfix.model.graphs import BackwardSite
from loopfix.model.index import walk
from loopfix.rules.base import FileContext

FIX_TITLE = "Run this update before the updates whose steps its graph needs"


def anchor_of(context: FileContext, site: BackwardSite) -> ast.stmt | None:
    """The statement of this file whose call reaches a backward of another module's helper
    through a stale or freed graph; None for a backward of this file's own scopes."""
    return update_anchor(context.model, site) if site.statement is None else None


def update_anchor(model, site: BackwardSite) -> ast.stmt | None:
    """The calling statement through which the backward meets weights a step in an earlier
    statement of the same block changed: the update call itself (`update_params(policy_optim,
    policy_loss)`) rather than a call of the method that makes it (`self.learn_sac()`). A
    helper whose own step breaks its own backward (`trainer.train(batch)`) has none: it is
    its module's finding, not its caller's."""
    stale = model.stale_steps_before(site.id)
    anchors = [a for a in model.call_anchors(site.id) if id(a) in model.parents]
    anchors.sort(key=lambda a: model.update_call(a) is None)
    for anchor in anchors:
        if stepping_statement(model, anchor, stale) is not None:
            return anchor
    return None


def stepping_statement(model, statement: ast.stmt, steps: set[int]) -> ast.stmt | None:
    """The nearest statement before `statement` whose call runs one of the updates `steps`:
    in its block, or in a block around it in its scope (a delayed update `if it % 2 == 0:
    optimize(actor_opt, actor_loss)` after the call that stepped the critic)."""
    while id(statement) in model.parents:
        owner, block = model.block_of(statement)
        earlier = block[: next(i for i, s in enumerate(block) if s is statement)]
        for candidate in reversed(earlier):
            if _steps_one_of(model, candidate, steps):
                return candidate
        if not isinstance(owner, ast.stmt) or isinstance(owner, _SCOPES):
            return None
        statement = owner
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _steps_one_of(model, statement: ast.stmt, steps: set[int]) -> bool:
    """Whether a function `statement` calls runs one of the updates `steps`."""
    return any(kind == "update" and e in steps for kind, e, _ in model.events_within(statement))


def plan_call_move(context: FileContext, site: BackwardSite) -> list[Edit] | str:
    """Edits that move the update call reaching `site` before the earliest consecutive
    update call whose step made its graph stale, or why there are none."""
    model, layout = context.model, context.layout
    anchor = update_anchor(model, site)
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
        if _steps_one_of(model, statement, stale):
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
    often over the capped run. Where the deferred reference differs because a forward after a
    step read what it changed, every optimizer must instead step with the gradients, step by
    step, of the original run with every saved tensor copied when saved. Optimizers are
    matched by the parameters they own (the trace numbers them in the order they first step,
    which the move changes)."""
    from loopfix.rules.compare import (
        first_iteration_steps,
        forward_difference,
        loss_multiset_difference,
        patched_raised,
        said,
        step_difference,
    )

    reference, patched, original = runs.reference, runs.patched, runs.original
    if reference is None or reference.trace is None or reference.error:
        reason = "was not made" if reference is None else reference.error
        return f"unverified: the reference run of the original {said(reason)}"
    if patched.error:
        return patched_raised(patched)
    expected = _by_parameters(first_iteration_steps, reference.events)
    if not expected:
        return "unverified: no optimizer stepped in the reference run"
    stepped = _by_parameters(_first_steps, patched.events)
    difference = forward_difference(
        original.trace.get("forwards", []), patched.trace.get("forwards", [])
    ) or loss_multiset_difference(original.events, patched.events)
    if difference is None:
        deferred = step_difference(expected, {k: v for k, v in stepped.items() if k in expected})
        if deferred is not None:
            # a forward after a step read what it changed (a latent model updated first):
            # deferring every step is not the author's computation; the original with every
            # saved tensor copied is, step by step, for each optimizer
            copied = _cloned_difference(runs)
            difference = deferred if copied is None else (copied or None)
        difference = difference or _step_count_difference(reference.events, patched.events)
    return "equivalent" if difference is None else f"not equivalent: {difference}"


def _has_cloned(runs) -> bool:
    cloned = getattr(runs, "cloned", None)
    return cloned is not None and cloned.trace is not None and not cloned.error


def _cloned_difference(runs) -> str | None:
    """ "" when every optimizer steps with the same gradients, step after step, as in the
    original run with every saved tensor copied when saved; None when that run was not
    made; else where they differ."""
    if not _has_cloned(runs):
        return None
    expected, actual = _steps_by_owner(runs.cloned.events), _steps_by_owner(runs.patched.events)
    if expected.keys() != actual.keys():
        return "other optimizers stepped than in the original with saved tensors copied"
    for owner, grads in expected.items():
        if len(grads) != len(actual[owner]):
            return "an optimizer stepped another number of times than in the copied run"
        for number, (a, b) in enumerate(zip(grads, actual[owner], strict=True)):
            if a != b:
                return f"step {number} of an optimizer: other gradients than in the copied run"
    return ""


def _steps_by_owner(events: list) -> dict:
    steps: dict = {}
    for event in events:
        if event[0] == "step":
            steps.setdefault(_owner_key(event), []).append(event[2])
    return steps


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


def called_name(statement: ast.stmt) -> ast.Call | ast.stmt:
    """The call of a statement that runs a project function (`agent.update_actor(...)`, not
    the `print` around it): its first call that is not of a Python builtin; the statement
    itself when it holds no call."""
    first = None
    for node in walk(statement):
        if isinstance(node, ast.Call):
            first = first or node
            if not (isinstance(node.func, ast.Name) and hasattr(builtins, node.func.id)):
                return node
    return first or statement
