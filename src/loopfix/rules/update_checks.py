"""What LF002 and LF003 share: the reorder fix, its static check and its oracle."""

from __future__ import annotations

from loopfix.edits import Edit
from loopfix.model.graphs import BackwardSite
from loopfix.rules import update_order
from loopfix.rules.base import Applicability, FileContext, Finding, Fix, Rule


class ReorderRule(Rule):
    """A rule whose fix runs every backward of the iteration before any optimizer step."""

    fix_title = "Run every backward of the iteration before the optimizer steps"

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        plan = update_order.plan_reorder(context, finding.detail.id)
        if isinstance(plan, update_order.RepeatedStep):
            single = self._single_step(context, finding)
            if single is not None:
                return single
        if isinstance(plan, update_order.NotReorderable):
            finding.fix_unavailable = str(plan)
            return None
        if not reorder_is_safe(context, plan.edits):
            finding.fix_unavailable = (
                "the reordered code would not reach exactly the graphs the original reached"
            )
            return None
        return Fix(self.fix_title, tuple(plan.edits))

    def _single_step(self, context: FileContext, finding: Finding) -> Fix | None:
        """The unsafe fix of "backward, step, backward, step" of one optimizer (the upstream
        answer): step it once, after every backward, with the gradients of all its losses."""
        plan = update_order.plan_reorder(context, finding.detail.id, drop_repeated=True)
        if isinstance(plan, update_order.NotReorderable) or not plan.dropped:
            return None
        if not reorder_is_safe(context, plan.edits):
            return None
        dropped = " and ".join(plan.dropped)
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
        if all(f.fix.safe for f in fixed):
            return reorder_is_safe(before, None, after)
        return repairs(before, after)

    def oracle(self, finding: Finding, runs) -> str:
        """The diagnosis holds (the original raises this rule's error within the capped
        iterations), then `reorder_oracle`."""
        original = runs.original
        error = original.error or ""
        if original.trace is None:
            return f"unverified: the original {original.error}"
        if self.predicted_error not in error or not error:
            if error:
                return f"unverified: the original failed otherwise: {error[:120]}"
            return f"not confirmed: the original did not fail within {runs.iterations} iterations"
        return reorder_oracle(runs)

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
    after = after if after is not None else before.with_edits(edits or [])
    if after is None:
        return False
    model = after.model
    for site in model.backwards():
        if model.freed_graph_reused_by(site.id) or model.stale_steps_before(site.id):
            return False
    if len(model.carried_graphs()) > len(before.model.carried_graphs()):
        return False
    return before.model.backward_signatures() == model.backward_signatures()


def reorder_oracle(runs) -> str:
    """The patched code computes every forward and every loss the original computed before
    it failed, bit for bit, in the same order (moving a step past a forward that reads its
    weights would change them); and the original, run with every optimizer update deferred
    and every graph kept (an instrumentation, not a change of the code), gives each optimizer
    the gradients it should step with: the patched code must step each optimizer with exactly
    those, and run all capped iterations."""
    from loopfix.verify.compare import (
        first_steps,
        forward_difference,
        loss_difference,
        step_difference,
    )

    reference, patched = runs.reference, runs.patched
    if reference is None or reference.trace is None or reference.error:
        reason = "was not made" if reference is None else reference.error
        return f"unverified: the reference run of the original {reason}"
    expected = first_steps(reference.events)
    if not expected:
        return "unverified: no optimizer stepped in the reference run"
    if patched.error:
        return f"not equivalent: the patched code raised {patched.error[:120]}"
    original = runs.original
    difference = (
        forward_difference(original.trace.get("forwards", []), patched.trace.get("forwards", []))
        or loss_difference(original.events, patched.events)
        or step_difference(expected, first_steps(patched.events))
    )
    return "equivalent" if difference is None else f"not equivalent: {difference}"


def repairs(before: FileContext, after: FileContext) -> bool:
    """No backward of `after` goes through a stale or freed graph, and nothing new is carried
    across iterations: what an unsafe fix must achieve."""
    model = after.model
    for site in model.backwards():
        if model.stale_steps_before(site.id) or model.freed_graph_reused_by(site.id):
            return False
    return len(model.carried_graphs()) <= len(before.model.carried_graphs())
