"""LF003 backward-through-freed-graph: a second backward through a graph already freed."""

from __future__ import annotations

from loopfix.rules.base import FileContext, Finding
from loopfix.rules.update_checks import ReorderRule

DOCS = """\
## What it does
Finds a backward that goes through part of a graph that an earlier backward in the same
iteration already went through without `retain_graph=True`, for instance two losses that share
a sub-graph (a GAN discriminator output reused by the generator loss, a shared encoder, an
actor-critic trunk).

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

## Fix safety
As LF002: verification writes the rewrite only when the original really raises "Trying to
backward through the graph a second time" within the capped iterations. A finding whose
updates are not all directly in one block, or whose optimizers' parameters cannot be
resolved, is reported without a fix (the message says why).

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
            if not freed_by or site.statement is None:
                continue
            first = model.backward(min(freed_by))
            start, end = self.backward_range(context, site)
            message = (
                "this backward goes through a graph that the backward on line "
                f"{first.call.lineno} already freed (no retain_graph=True there)"
            )
            message += self.called_from(model, site)
            findings.append(Finding(self.code, self.name, message, start, end, detail=site))
        return findings
