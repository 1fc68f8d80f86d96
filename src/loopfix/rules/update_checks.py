"""What LF002 and LF003 share: the reorder fix, its static check and its oracle."""

from __future__ import annotations

import ast
from collections import Counter

from loopfix.edits import Edit
from loopfix.model.graphs import BackwardSite
from loopfix.rules import update_calls, update_order
from loopfix.rules.base import Applicability, FileContext, Finding, Fix, Rule

DETACH_PEERS = "Detach the other peers' outputs where this peer's loss reads them"
LOOP_FIX_TITLE = "Run the backwards before the loop of updates, and their steps after it"


class ReorderRule(Rule):
    """A rule whose fix runs every backward of the iteration before any optimizer step."""

    fix_title = "Run every backward of the iteration before the optimizer steps"

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        """The exact fix (detached peers, or the reorder); recomputing what the failing
        backward needs after the event (unsafe) is the fix when no exact one is known, and
        otherwise a second code action in the editor."""
        exact = self._exact_fix(context, finding)
        if exact is not None and exact.safe and not context.options.alternatives:
            return exact  # the recompute would only be the editor's second action
        recompute = self._recompute(context, finding)
        if exact is None or not exact.safe:
            if recompute is None:
                return exact
            if exact is not None:
                finding.alternatives = (exact,)
            return recompute
        finding.alternatives = (recompute,) if recompute is not None else ()
        return exact

    def needs_runs(self, finding: Finding) -> frozenset[str]:
        return frozenset({"deferred"})

    def event(self, context: FileContext, finding: Finding) -> tuple:
        """(the statement after which the failing backward's graph is unusable, the modules
        whose forwards must run again or None for every module it reaches, how to name it)."""
        raise NotImplementedError

    def _recompute(self, context: FileContext, finding: Finding) -> Fix | None:
        statement, modules, named = self.event(context, finding)
        if statement is None:
            return None
        plan = update_order.plan_recompute(context, finding.detail.id, statement, modules)
        if isinstance(plan, update_order.NotReorderable):
            return None
        patched = context.with_edits(plan.edits)
        if patched is None or not repairs(context, patched):
            return None
        # A backward kept its graph for the loss now rebuilt: let that graph go.
        (insert,) = plan.edits
        released = [e for f in _needless_retains(patched) for e in f.fix.edits]
        if released and all(e.end <= insert.start for e in released):
            plan.edits += released
        again = " and ".join(plan.moved)
        return Fix(
            f"Recompute {again} after {named}",
            tuple(plan.edits),
            Applicability.unsafe,
            f"the later loss is built by a new forward after {named} (as the PyTorch DCGAN "
            "example and StyleGAN2's lazy regularisation do), with the weights as they are "
            "then, not from the forward that ran before it",
        )

    def _exact_fix(self, context: FileContext, finding: Finding) -> Fix | None:
        if update_calls.anchor_of(context, finding.detail) is not None:
            return self._call_move(context, finding)
        peers = detach_peers(context, finding)
        if isinstance(peers, str):  # a peer loop: no reorder of one iteration helps either
            finding.fix_unavailable = peers
            return None
        if peers is not None:
            return peers
        plan = update_order.plan_reorder(context, finding.detail.id)
        if isinstance(plan, update_order.RepeatedStep):
            single = self._single_step(context, finding)
            if single is not None:
                return single
        if isinstance(plan, update_order.NotReorderable):
            moved = self._call_move(context, finding)  # a helper of this file per optimizer
            if moved is not None:
                return moved
            finding.fix_unavailable = str(plan)
            return None
        if not reorder_is_safe(context, plan.edits):
            finding.fix_unavailable = (
                "the reordered code would not reach exactly the graphs the original reached"
            )
            return None
        title = LOOP_FIX_TITLE if plan.across_loop else self.fix_title
        title += update_order.RENAME_NOTE if plan.renames else ""
        return Fix(title, tuple(plan.edits))

    def _call_move(self, context: FileContext, finding: Finding) -> Fix | None:
        """A whole update call of another module's helper, moved before the update calls
        whose steps its graph must not see (`update_calls`)."""
        plan = update_calls.plan_call_move(context, finding.detail)
        if isinstance(plan, str):
            finding.fix_unavailable = plan
            return None
        if not reorder_is_safe(context, plan):
            finding.fix_unavailable = (
                "the reordered calls would not reach exactly the graphs the original reached"
            )
            return None
        return Fix(update_calls.FIX_TITLE, tuple(plan))

    def _single_step(self, context: FileContext, finding: Finding) -> Fix | None:
        """The unsafe fix of "backward, step, backward, step" of one optimizer (the upstream
        answer): step it once, after every backward, with the gradients of all its losses."""
        plan = update_order.plan_reorder(context, finding.detail.id, drop_repeated=True)
        if isinstance(plan, update_order.NotReorderable) or not plan.moved:
            return None
        if not reorder_is_safe(context, plan.edits):
            return None
        dropped = " and ".join(plan.moved)
        return Fix(
            f"Step once, after every backward (drops {dropped})",
            tuple(plan.edits),
            Applicability.unsafe,
            f"drops {dropped}: the optimizer steps once per iteration, with the gradients of "
            "every loss summed, where the original stepped between the backwards",
        )

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        """A safe fix keeps every backward's reach exactly; an unsafe one (applied with
        --unsafe-fixes) changes what the code computes, and must only leave no backward
        through a stale or freed graph."""
        if all(f.fix.safe and f.fix.title != DETACH_PEERS for f in fixed):
            return reorder_is_safe(before, None, after)
        return repairs(before, after)

    compares = (
        "every forward output and loss the original ran, each optimizer's first step against "
        "the original with every step deferred, and the order of every step"
    )

    def compared(self, finding: Finding) -> str:
        if finding.fix is not None and finding.fix.title == update_calls.FIX_TITLE:
            return (
                "every forward output and loss the original ran, and each optimizer's first "
                "step against the original with every step deferred"
            )
        if finding.fix is not None and finding.fix.title.startswith(LOOP_FIX_TITLE):
            return (
                "every forward output the original ran, every loss it ran (in any order), "
                "each optimizer's first step against the original with every step deferred, "
                "and the order of every step"
            )
        return super().compared(finding)

    def oracle(self, finding: Finding, runs) -> str:
        """Once `confirm` saw this rule's error in the original: `reorder_oracle` (or the
        call move's)."""
        if finding.fix is not None and finding.fix.title == update_calls.FIX_TITLE:
            return update_calls.call_move_oracle(runs)
        fixed = finding.fix is not None and finding.fix.title.startswith(LOOP_FIX_TITLE)
        return reorder_oracle(runs, any_order=fixed)

    def confirm(self, finding: Finding, runs) -> str | None:
        """The original raises this rule's error within the capped iterations."""
        return self.diagnosis(runs)

    def diagnosis(self, runs) -> str | None:
        """Why the verdict cannot be "equivalent" when the original does not raise this
        rule's error within the capped iterations; None when it does."""
        from loopfix.rules.compare import original_raised

        return original_raised(runs, (self.predicted_error,))

    @staticmethod
    def called_from(model, site: BackwardSite) -> str:
        """For a backward inside a helper: where the helper's call makes it fail."""
        anchor = model.reached_through_call(site.id)
        return "" if anchor is None else f", when called from line {anchor.lineno}"

    @staticmethod
    def backward_range(context: FileContext, site: BackwardSite) -> tuple[int, int]:
        """Where a finding about a backward call is reported."""
        return context.layout.node_range(site.call)


def reorder_is_safe(
    before: FileContext, edits: list[Edit] | None, after: FileContext | None = None
) -> bool:
    """After the reorder no backward goes through a freed or stale graph, nothing new is
    carried across iterations, and every backward reaches the graph it reached before."""
    if after is None:
        return before.proven(edits or [], lambda patched: reorder_is_safe(before, None, patched))
    model = after.model
    for site in model.backwards():
        if model.freed_graph_reused_by(site.id) or model.stale_steps_before(site.id):
            return False
    if len(model.carried_graphs()) > len(before.model.carried_graphs()):
        return False
    old, new = before.model.backward_signatures(), model.backward_signatures()
    return old == new or _reaches(before.model) == _reaches(model)


def _reaches(model) -> Counter:
    """Each backward's signature (what its graph reaches), keyed by the loss it is called
    on: a reorder may move a backward past another's (the generator's before the critic's
    loop of updates), but each loss must reach what it reached."""
    signatures = model.backward_signatures()
    return Counter(
        (ast.unparse(site.call.func), signatures.get(site.id)) for site in model.backwards()
    )


def _first(steps: dict, expected: dict) -> dict:
    """The patched run's first steps of the optimizers the reference compares."""
    return {index: grads for index, grads in steps.items() if index in expected}


def reorder_oracle(runs, any_order: bool = False) -> str:
    """The patched code computes every forward and every loss the original computed before
    it failed, bit for bit, in the same order (moving a step past a forward that reads its
    weights would change them). The original, run with every optimizer update deferred and
    every graph kept (an instrumentation, not a change of the code), gives each optimizer that
    steps in the first iteration the gradients it should step with: the patched code must step
    it with exactly those. It must run all capped iterations, and step the optimizers in the
    sequence the reference run did over all of them (a step moved into or out of an `if`
    changes that sequence). With `any_order` (a backward moved before a loop of whole
    updates), the losses may be backwarded in another order, each as often."""
    from loopfix.rules.compare import (
        first_iteration_steps,
        first_steps,
        forward_difference,
        loss_difference,
        loss_multiset_difference,
        patched_raised,
        said,
        step_difference,
        step_order_difference,
    )

    reference, patched = runs.reference, runs.patched
    if reference is None or reference.trace is None or reference.error:
        reason = "was not made" if reference is None else reference.error
        return f"unverified: the reference run of the original {said(reason)}"
    expected = first_iteration_steps(reference.events)
    if not expected:
        return "unverified: no optimizer stepped in the reference run"
    if patched.error:
        return patched_raised(patched)
    original = runs.original
    difference = forward_difference(
        original.trace.get("forwards", []), patched.trace.get("forwards", [])
    ) or (loss_multiset_difference if any_order else loss_difference)(
        original.events, patched.events
    )
    if difference is None:
        steps = step_difference(expected, _first(first_steps(patched.events), expected))
        difference = steps or step_order_difference(reference.events, patched.events)
        copied = copied_steps_difference(runs)
        if steps is not None and copied == "":
            difference = None
        elif difference is None and copied:
            difference = f"against the original with saved tensors copied, {copied}"
    return "equivalent" if difference is None else f"not equivalent: {difference}"


def copied_steps_difference(runs) -> str | None:
    """Where the patched run's steps leave the original run with every saved tensor copied
    when saved (`runs.cloned`): each backward there gets the gradients of the graph its
    forward built, with the steps running as written, which is what a reorder computes. It
    judges every step of the whole capped run, in order: "" when they all match, None when
    that run was not made or failed.

    Deferring every step is not the author's computation when a forward after a step reads
    what it changed (another agent's update in the same iteration reads targets softly copied
    from stepped weights); then this run stands in for it. And the deferred reference sees
    only the first iteration: a moved step that a later iteration would notice (an average
    of the weights taken before the step instead of after) shows here."""
    from loopfix.rules.compare import every_step_difference

    cloned, patched = getattr(runs, "cloned", None), runs.patched
    if cloned is None or cloned.trace is None or cloned.error or not cloned.events:
        return None
    return every_step_difference(cloned.events, patched.events) or ""


def repairs(before: FileContext, after: FileContext) -> bool:
    """No backward of `after` goes through a stale or freed graph, and nothing new is carried
    across iterations: what an unsafe fix must achieve."""
    model = after.model
    for site in model.backwards():
        if model.stale_steps_before(site.id) or model.freed_graph_reused_by(site.id):
            return False
    return len(model.carried_graphs()) <= len(before.model.carried_graphs())


def detach_peers(context: FileContext, finding: Finding) -> Fix | str | None:
    """Deep mutual learning's fix: in a loop that updates one element of a container of
    models per iteration (`for k in range(n): ... optimizers[k].step()`), the loss reads other
    elements' outputs (`outputs[j]`) as targets; `.detach()` them there. Safe when each
    iteration zeroes its own optimizer before its backward: the gradient a peer's output
    received was then zeroed before that peer stepped, so every optimizer steps with the
    gradients it stepped with in the original run (were no weight changed in between).
    None when the backward's loop reads no peers; why not, when it does and cannot."""
    model, site = context.model, finding.detail
    if not site.loops or site.statement is None:
        return None
    reads = model.peer_reads_within(model.loop(site.loops[-1]))
    if not reads:
        return None
    if not all(isinstance(r, ast.Subscript) for r in reads):
        return "the loss reads the whole list of the peers' outputs"
    statements = {id(r): _statement_of(model, r, site) for r in reads}
    if not all(model.reads_another_element(r, statements[id(r)]) for r in reads):
        return (
            "the loss reads the outputs with an index that may be the peer's own "
            "(detaching it there would cut the peer's own gradient)"
        )
    if not _zeroes_before_backward(model, site):
        return (
            "the peers' gradients are not zeroed before each peer's backward, so detaching "
            "their outputs would change what the peers step with"
        )
    layout = context.layout
    edits = [Edit(end, end, ".detach()") for end in (layout.node_range(r)[1] for r in reads)]
    patched = context.with_edits(edits)
    if patched is None or not repairs(context, patched):
        return "detaching the peers' outputs would not remove every stale or freed graph"
    return Fix(DETACH_PEERS, tuple(edits))


def _zeroes_before_backward(model, site: BackwardSite) -> bool:
    """Every step in the backward's block has a zero_grad covering it before the backward."""
    _, block = model.block_of(site.statement)
    position = block.index(site.statement)
    updates = [u for u in model.updates() if u.statement in block]
    zeros = [u for u in updates if u.kind == "zero_grad" and block.index(u.statement) < position]
    steps = [u for u in updates if u.kind == "step"]
    return bool(steps) and all(
        step.modules is not None
        and any(update_order.covers(z.modules, step.modules) for z in zeros)
        for step in steps
    )


def _needless_retains(context: FileContext) -> list[Finding]:
    """LF004's findings with their fixes, on a text a fix has just made."""
    from loopfix.rules.lf004_needless_retain_graph import NeedlessRetainGraph

    rule = NeedlessRetainGraph()
    findings = rule.detect(context)
    for finding in findings:
        finding.fix = rule.fix(context, finding)
    return [f for f in findings if f.fix is not None]


def _statement_of(model, read: ast.expr, site: BackwardSite) -> ast.stmt:
    """The innermost statement of the backward's loop that holds `read`."""
    loop = model.loop(site.loops[-1])
    best = loop
    for node in ast.walk(loop):  # breadth first: later matches are deeper
        spans = isinstance(node, ast.stmt) and node.lineno <= read.lineno <= node.end_lineno
        if spans and any(read is n for n in ast.walk(node)):
            best = node
    return best
