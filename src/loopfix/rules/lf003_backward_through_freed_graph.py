"""LF003 backward-through-freed-graph: a second backward through a graph already freed."""

from __future__ import annotations

import ast

from loopfix.rules import update_calls, update_order
from loopfix.rules.base import FileContext, Finding, Fix
from loopfix.rules.update_checks import ReorderRule, reorder_is_safe

RETAIN_TITLE = "Keep the shared graph: retain_graph=True"

DOCS = """\
## What it does
Finds a backward that goes through part of a graph that an earlier backward in the same
iteration already went through without `retain_graph=True`, for instance two losses that share
a sub-graph (a GAN discriminator output reused by the generator loss, a shared encoder, an
actor-critic trunk). A backward inside a function of another project module (an auxiliary
loss helper in `losses.py` that runs its own backward) is reported on the statement of the
file that calls it.

## Why is this bad?
A backward frees the intermediate results its graph saved. The second one raises "Trying to
backward through the graph a second time (or directly access saved tensors after they have
already been freed)".

## Example
```python
opt_d.zero_grad()
loss_d.backward()            # frees the shared graph
opt_d.step()
opt_g.zero_grad()
loss_g.backward()            # goes through it again
opt_g.step()
```

Use instead:
```python
opt_d.zero_grad()
opt_g.zero_grad()
loss_d.backward(retain_graph=True, inputs=list(net_d.parameters()))
loss_g.backward(inputs=list(net_g.parameters()))
opt_d.step()
opt_g.step()
```

## What the fix preserves
The same reordering as LF002, with the same criterion: each optimizer steps with the sum of the
gradients of the losses whose backward ran between its `zero_grad` and its `step`, taken with
respect to its own parameters, as if no parameter changed during the iteration; only the
backwards whose graph a later backward needs keep their graph (`retain_graph=True`). When the
iteration has no step between the two backwards, the fix only adds `retain_graph=True` where
it is needed.

When nothing between the backward that freed the graph and the one that needs it changes
what that graph saved (no step, or a step of weights it does not hold), the fix is only
`retain_graph=True` on the backward that freed it; it is judged against the original run with
every graph kept (`--retain-graphs` in the tracer): every loss, gradient and step of the whole
capped run must be equal.

## Fix safety
`retain_graph=True` and the reorder are **safe**. Where neither is exact (a regulariser applied
every few iterations after the main step of the same optimizer, as StyleGAN2's lazy R1), the
**unsafe** fix recomputes what the failing backward needs with a new forward just before its
first reader (inside the regulariser's `if`), as StyleGAN2 does: applied only with
`--unsafe-fixes`, verified by reporting what changes. As LF002: verification writes the
rewrite only when the original really raises "Trying to backward through the graph a second
time" within the capped iterations. A finding whose updates are not all directly in one block,
or whose optimizers' parameters cannot be resolved, is reported without a fix (the message
says why). So is one whose freed graph is a `torch.autograd.grad` whose gradients are part of
the failing backward's loss (an R1 or gradient penalty written without `create_graph=True`):
keeping the graph, or computing it again, would run with the penalty a constant, its
gradient lost; `create_graph=True`, which the author meant, changes the gradients. A
backward whose `retain_graph=` is a helper's parameter (`def backprop(loss, keep=False)`) is
followed with what each call passes, or the default; its finding has no fix either (the calls
that need the graph kept should pass True; rewriting the helper would ignore them all).

## References
- PyTorch docs, `torch.Tensor.backward` (`retain_graph`)
"""


class BackwardThroughFreedGraph(ReorderRule):
    code = "LF003"
    name = "backward-through-freed-graph"
    summary = "A backward goes through a graph an earlier backward already freed"
    docs = DOCS
    predicted_error = "Trying to backward through the graph a second time"
    fix_title = "Keep the shared graph and run every backward before the steps"

    def detect(self, context: FileContext) -> list[Finding]:
        model, findings = context.model, []
        for site in model.backwards():
            freed_by = model.freed_graph_reused_by(site.id)
            if not freed_by:
                continue
            first = model.backward(min(freed_by))
            if site.statement is None:  # a helper of another module: where it is called
                found = self._in_called_helper(context, site, first)
                findings += [found] if found is not None else []
                continue
            start, end = self.backward_range(context, site)
            # the same call, in a loop of this scope, freed it in an earlier iteration (a
            # graph carried across); a helper's backward reached twice is another call
            carried = first.call is site.call and site.loops
            carried = carried and model.reached_through_call(site.id) is None
            earlier = " in an earlier iteration" if carried else ""
            message = (
                "this backward goes through a graph that the backward on line "
                f"{first.call.lineno} already freed{earlier} (no retain_graph=True there)"
            )
            message += self.called_from(model, site)
            findings.append(Finding(self.code, self.name, message, start, end, detail=site))
        return findings

    def _in_called_helper(self, context: FileContext, site, first) -> Finding | None:
        """A backward inside a function of another module (`aux_loss(phi)` of `losses.py`)
        that goes through a graph a backward of this file freed: reported on the statement of
        this file that calls it (the other module's lines are not this file's)."""
        anchor = context.model.reached_through_call(site.id)
        if anchor is None or first.statement is None or id(anchor) not in context.model.parents:
            return None
        start, end = context.layout.node_range(anchor)
        call = update_calls.called_name(anchor)
        called = f"`{ast.unparse(call.func)}`" if isinstance(call, ast.Call) else "the call"
        message = (
            f"the backward inside {called} goes through a graph that the backward on line "
            f"{first.call.lineno} already freed (no retain_graph=True there)"
        )
        return Finding(self.code, self.name, message, start, end, detail=site)

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        """No fix where the freed graph is a `torch.autograd.grad` whose gradients are part
        of the failing backward's loss: keeping the graph (or computing again what it
        needs) runs with the penalty a constant, which hides the mistake."""
        model = context.model
        freeing = sorted(model.freed_graph_reused_by(finding.detail.id))
        penalty = _differentiated_gradients(model, freeing, finding.detail)
        if penalty is not None:
            finding.fix_unavailable = (
                f"the gradients `torch.autograd.grad` returns on line {penalty.call.lineno} "
                "are part of this backward's loss: with retain_graph=True they would add "
                "nothing to its gradients; a gradient penalty needs create_graph=True there"
            )
            return None
        passed = _retain_passed_in(model, freeing)
        if passed is not None:
            site, keyword = passed
            finding.fix_unavailable = (
                f"the backward on line {site.call.lineno} takes `retain_graph` from "
                f"`{ast.unparse(keyword.value)}`: the calls that need the graph kept should "
                "pass True (a rewrite there would ignore what every other call passes)"
            )
            return None
        return super().fix(context, finding)

    def event(self, context: FileContext, finding: Finding):
        """The backward that freed the graph (the recompute goes after it and after any step
        before the graph's next reader), and how the code calls it."""
        first = context.model.backward(min(context.model.freed_graph_reused_by(finding.detail.id)))
        return first.statement, None, f"the backward on line {first.call.lineno}"

    def needs_runs(self, finding: Finding) -> frozenset[str]:
        if finding.fix is not None and finding.fix.title.startswith(RETAIN_TITLE):
            return frozenset({"retained"})
        return super().needs_runs(finding)

    def compared(self, finding: Finding) -> str:
        if finding.fix is not None and finding.fix.title.startswith(RETAIN_TITLE):
            return (
                "every forward output, loss, gradient and optimizer step against the original "
                "with every graph kept"
            )
        return super().compared(finding)

    def oracle(self, finding: Finding, runs) -> str:
        """The retain fix: the patched run records exactly the events (losses, gradients,
        steps) and forwards of the original run with every graph kept, over every capped
        iteration. Otherwise the reorder's oracle."""
        if not finding.fix.title.startswith(RETAIN_TITLE):
            return super().oracle(finding, runs)
        from loopfix.rules.compare import (
            first_difference,
            forward_difference,
            patched_raised,
            said,
        )

        retained, patched = runs.retained, runs.patched
        if retained is None or retained.trace is None or retained.error:
            reason = "was not made" if retained is None else said(retained.error)
            return f"unverified: the run of the original with every graph kept {reason}"
        if patched.error:
            return patched_raised(patched)
        difference = forward_difference(
            retained.trace.get("forwards", []), patched.trace.get("forwards", [])
        ) or first_difference(retained.events, patched.events)
        if difference is None and len(patched.events) != len(retained.events):
            difference = "the runs recorded different numbers of events"
        return "equivalent" if difference is None else f"not equivalent: {difference}"

    def _exact_fix(self, context: FileContext, finding: Finding) -> Fix | None:
        """`retain_graph=True` on the backwards that freed the graph, when that alone leaves
        no backward through a freed or stale graph (gradients do not depend on it); otherwise
        the reorder. A backward that frees the graph it then fails on (a helper's, or a loop's
        over the losses) keeps its graph every time it runs: memory, not gradients."""
        model, edits = context.model, []
        freeing = sorted(model.freed_graph_reused_by(finding.detail.id))
        if _changed_by_hand_between(model, freeing, finding.detail):
            return super()._exact_fix(context, finding)
        for backward_id in freeing:
            site = model.backward(backward_id)
            retain, added = update_order.retain_edits(context.layout, site, True)
            if retain is None or site.statement is None:
                break
            if added:
                retain.append(update_order.append_keywords(context.layout, site.call, added))
            edits += retain
        else:
            if edits and reorder_is_safe(context, edits):
                lines = ", ".join(str(model.backward(b).call.lineno) for b in freeing)
                return Fix(
                    f"Keep the shared graph: retain_graph=True on line {lines}", tuple(edits)
                )
        return super()._exact_fix(context, finding)


def _differentiated_gradients(model, freeing: list[int], site):
    """The freeing backward that is a `torch.autograd.grad` whose result reaches the failing
    backward's loss (an R1 or gradient penalty written without `create_graph=True`), or
    None. Keeping its graph would make the run pass with the penalty a constant: the fix
    that keeps what the author meant is `create_graph=True`, which changes the gradients."""
    for backward_id in freeing:
        first = model.backward(backward_id)
        functional = isinstance(first.call.func, ast.Attribute) and first.call.func.attr == "grad"
        if (
            functional
            and first.statement is not None
            and site.statement is not None
            and model.feeds(first.statement, site.statement)
        ):
            return first
    return None


def _retain_passed_in(model, freeing: list[int]):
    """(the freeing backward, its `retain_graph=` keyword) when the keyword is not a literal
    (`loss.backward(retain_graph=keep)` in a helper whose callers say whether to keep)."""
    for backward_id in freeing:
        site = model.backward(backward_id)
        keyword = next((k for k in site.call.keywords if k.arg == "retain_graph"), None)
        if keyword is not None and not isinstance(keyword.value, ast.Constant):
            return site, keyword
    return None


def _changed_by_hand_between(model, freeing: list[int], site) -> bool:
    """Whether a statement between the first freeing backward and the failing one (in the
    failing backward's block) changes weights in place outside an optimizer: the kept graph
    would then mix old and new weights. A backward of another module's helper fails where
    this file calls the helper."""
    failing = site.statement or model.reached_through_call(site.id)
    if failing is None or id(failing) not in model.parents:
        return True
    _, block = model.block_of(failing)
    end = block.index(failing)
    starts = [
        block.index(model.backward(b).statement)
        for b in freeing
        if model.backward(b).statement in block
    ]
    between = block[min(starts) + 1 : end] if starts else block[:end]
    return any(model.updates_weights_by_hand(statement) for statement in between)
