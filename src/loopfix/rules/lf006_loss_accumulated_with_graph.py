"""LF006 loss-accumulated-with-graph: a running total for logging keeps every step's graph."""

from __future__ import annotations

import ast

from loopfix.edits import Edit
from loopfix.model.shapes import TENSOR, UNKNOWN
from loopfix.rules.base import FileContext, Finding, Fix, Rule

DOCS = """\
## What it does
Finds a loss (or any tensor carrying autograd graph) added, in a training loop, to a total or a
list that outlives the iteration (`total_loss += loss`, `epoch_loss = epoch_loss + loss`,
`losses.append(loss)`), or to an entry of a dict or list that does (`epoch_losses["D"] +=
loss_d`, `history["loss"].append(loss)`, `history["train"]["loss"].append(loss)`), or to an
attribute of the instance in a method (`self.running_loss += loss` in a trainer's
`train_epoch`, after `loss.backward()` without `retain_graph=True`: no later backward can
go through it; also in a training-step method the loop calls on the same object,
`self.train_step(x, y)`, whose `loss.backward()` freed the loss's graph before it adds
`self.running_loss += loss`), when that total is only logged or averaged
afterwards: printed, formatted, passed to a logger or tracker, turned into a number with
`.item()` / `float()` or a function of `math` (`math.exp(cur_loss)`),
also after a reduction (`torch.stack(losses).mean().item()`, `sum(losses) / len(losses)`)
or through a loop over it (`for name, total in totals.items(): print(...)`: the loop
variable's reads decide). For a total kept on the instance, every read of an attribute of
that name anywhere in the file (another method, `trainer.running_loss` outside the class)
must only log it.
An evaluation function without a backward of its own (`evaluate()`, a trainer's
`validate()`) counts when the file's training code is known to call it with grad enabled
(not under `torch.no_grad()` or a context loopfix cannot see into, nor decorated with a
no-grad switch): there the total also keeps every batch's activations. A meter object
counts too: `meter.update(loss, n)` where the class's `update` adds its argument to an
attribute (`self.sum += val * n`, the `AverageMeter` of PyTorch's ImageNet example), in the
same file or imported from the project, when the meter is only reset,
printed or read for its attributes in logging.

## Why is this bad?
Adding a tensor that requires grad builds a new graph node that keeps the loss's whole graph
alive until the total is dropped: every iteration's graph nodes, and, where no backward freed
them (an evaluation loop without `torch.no_grad()`), the activations they saved. Memory and
time grow with every step (the graph of the sum grows by one node per step), and a later
`backward()` through the total goes through graphs the per-step backwards already freed
("Trying to backward through the graph a second time"). After a per-step backward the growth
is the graph's nodes only: small per step, but without bound.

## Example
```python
total_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total_loss += loss
print(f"mean loss {total_loss / len(loader):.4f}")
```

Use instead:
```python
    total_loss += loss.detach()
```
(and `meter.update(loss.detach(), n)` for a meter.)

## What the fix preserves
The added value is detached where it is added (`loss.detach()`): the same tensor values, on
the same device and of the same type, without the graph (`.item()` would also turn a tensor
into a number and synchronise with the GPU every step; the detach changes neither). Every
loss, gradient and step of the run is the same, and the total's values are the same; only the
`grad_fn` in a printed tensor disappears. Verification checks every recorded event of the whole
capped run, and that peak memory is not higher.

## Fix safety
Safe. Not reported when nothing reads the total, or when it is read for anything else than
logging or averaging (a
`backward()` through it, also after a reduction, as in full-batch training or gradient
accumulation by summing losses, `torch.stack(losses).mean().backward()`; a return; a call
loopfix cannot see into), or when the loop resets it in every iteration (a reset on a
schedule, `if batch_idx % log_interval == 0: total_loss = 0`, still keeps the graphs of every
iteration between two resets, and is reported). A loop over the networks or optimizers the
code built (`for i in range(len(netsD)):`, `zip(heads, optimizers)`, `.values()` of a
`ModuleDict`, `for i in range(self.num_D):` picking `self.netD[i]`) is not a loop of steps,
nor is a loop inside one that runs its own backward or optimizer step (micro-batches
accumulated before the step, a WGAN's critic iterations): a total added to there and reset
in every iteration of the loop around it (AttnGAN's `errD_total`) holds the graphs of one
step and is not reported; reset only once per epoch, it is. A meter is not
reported when it is a parameter or an attribute of `self` (other code may read it), when its
`update` also hands the value on or returns it to the caller, or when another method of it is
called for its result (`meter.total().backward()`) or hands what the meter holds to anything
else; a meter handed to another object (the ImageNet example's `ProgressMeter([losses,
top1])`) is not followed, so it is not reported.

## References
- PyTorch FAQ, "My model reports CUDA runtime error(2): out of memory": "Don't accumulate
  history across your training loop" (`total_loss += loss`)
"""


class LossAccumulatedWithGraph(Rule):
    code = "LF006"
    name = "loss-accumulated-with-graph"
    summary = "A running total for logging keeps every iteration's autograd graph alive"
    docs = DOCS
    no_fix_reason = "the added value cannot be detached where it is added"

    def detect(self, context: FileContext) -> list[Finding]:
        model, findings = context.model, []
        records = model.accumulations()
        for statement, added, key, loop_id in records:
            if not model.may_total(key, loop_id, added):
                continue
            same = [r[0] for r in records if r[2] == key and r[3] == loop_id]
            steps = model.step_loop(loop_id)  # past a loop over the discriminators
            writers = [w for w in model.writers(steps, key) if w not in same]
            adding = [w for w in writers if model.adds_to(w, key)]  # `stats["n"] += 1`
            resets = [w for w in writers if w not in adding]
            if any(not model.on_schedule(w, steps) for w in resets):
                continue  # the loop starts it afresh in each step
            if not model.only_logged(key, loop_id, same + adding):
                continue
            start, end = context.layout.node_range(added)
            until = f" until line {resets[0].lineno} resets it" if resets else ""
            message = (
                f"`{key}` keeps the autograd graph of every iteration's "
                f"`{ast.unparse(added)}` alive (memory grows each step{until}), and it is "
                "only logged: add the value detached"
            )
            detail = (statement, added)
            findings.append(Finding(self.code, self.name, message, start, end, detail=detail))
        return findings + self._in_called_steps(context) + self._through_methods(context)

    def _in_called_steps(self, context: FileContext) -> list[Finding]:
        """`self.total += loss` in a training-step method the loop calls on its own object
        (`self.step(x, y)` in `train`), after `loss.backward()` freed the loss's graph."""
        model, findings = context.model, []
        records = model.called_totals()
        for call, statement, added, key, loop_id in records:
            steps = model.step_loop(loop_id)
            same = [r for r in records if r[3] == key and r[4] == loop_id]
            calls = [r[0] for r in same]
            if any(w not in calls for w in model.writers(steps, key)):
                continue  # the loop also sets it itself (a reset each step, another total)
            if not model.only_logged(key, loop_id, calls + [r[1] for r in same]):
                continue
            start, end = context.layout.node_range(added)
            message = (
                f"`{key}` keeps the autograd graph of every iteration's "
                f"`{ast.unparse(added)}` alive (memory grows each step), added in "
                f"`{ast.unparse(call).strip()}`, and it is only logged: add the value detached"
            )
            detail = (statement, added)
            findings.append(Finding(self.code, self.name, message, start, end, detail=detail))
        return findings

    def _through_methods(self, context: FileContext) -> list[Finding]:
        """`meter.update(loss, n)` whose method adds its argument to `meter.sum` (the ImageNet
        example's `AverageMeter`): the meter is the total, the call's argument the value."""
        model, findings, seen = context.model, [], set()
        effects = model.called_effects("accumulate")
        for effect in effects:
            statement, key, loop_id = effect.statement, effect.target, effect.loop_id
            if id(statement) in seen:
                continue
            root = key.partition(".")[0]
            if not isinstance(statement, ast.Expr) or statement.value is not effect.call:
                continue  # the call's result is used: what it returns may hold the graph
            if root == "self" or root in model.scope_parameters(loop_id):
                continue  # an object that outlives the scope: other code may read it
            if loop_id not in model.observations.loops:
                continue
            same = [e.statement for e in effects if e.target.partition(".")[0] == root]
            steps = model.step_loop(loop_id)
            writers = model.writers(steps, key) + model.writers(steps, root)
            if any(w not in same for w in writers):
                continue  # the loop starts it afresh in each step
            if not model.only_logged(root, loop_id, same):
                continue
            kept = [e for e in model.effects_within(statement) if e.kind == "keeps"]
            if not kept or any(e.handed_on for e in kept) or model.events_within(statement):
                continue  # the method also hands the value on, or runs a backward or a step
            added = effect.argument
            start, end = context.layout.node_range(added)
            message = (
                f"`{ast.unparse(effect.call.func)}` adds `{ast.unparse(added)}` to `{key}`, "
                "which keeps the autograd graph of every iteration alive (memory grows each "
                "step), and it is only logged: pass the value detached"
            )
            detail = (statement, added, key)
            seen.add(id(statement))
            findings.append(Finding(self.code, self.name, message, start, end, detail=detail))
        return findings

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        statement, added = finding.detail[:2]
        if len(finding.detail) == 3 and isinstance(added, ast.Name):
            shape = context.model.shape_before(statement, added.id)
            if shape is not None and shape != TENSOR:  # `tracker.update(losses)` of a dict
                known = "not known to be" if shape == UNKNOWN else "not"
                finding.fix_unavailable = (
                    f"`{added.id}` is {known} a tensor: detach what the method adds, inside it"
                )
                return None
        if isinstance(added, ast.List | ast.Tuple):  # `history += [loss]`: the item, detached
            if len(added.elts) != 1 or isinstance(added.elts[0], ast.Starred):
                return None  # which items hold the graph is not known
            added = added.elts[0]
        start, end = context.layout.node_range(added)
        simple = isinstance(added, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
        text = context.text[start:end]
        edit = Edit(end, end, ".detach()") if simple else Edit(start, end, f"({text}).detach()")
        if not context.proven([edit], lambda patched: self.removes(context, patched)):
            return None
        return Fix(f"Add `{text}` detached", (edit,))

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self.removes(before, after, len(fixed))

    compares = "every loss, gradient and optimizer step, and peak memory"

    def probe(self, finding: Finding) -> bool:
        return True  # the value added to the total or history

    def watch(self, finding: Finding) -> str | None:
        """For a meter (`meter.update(loss, n)`): the total it keeps (`meter.sum`), whose
        graph the probe records instead of the value handed to it; the method may turn the
        value into a number first."""
        return finding.detail[2] if len(finding.detail) == 3 else None

    def confirm(self, finding: Finding, runs) -> str | None:
        """The value added to the total (or history, or meter) held a graph (`grad_fn`) at
        least once in the original run."""
        from loopfix.rules.compare import Outcome, said, stopped_at_cap

        if runs.original.error:
            return f"{Outcome.undecided}: the original raised {said(runs.original.error)}"
        seen = runs.probed(finding)
        if seen is None:
            return f"{Outcome.undecided}: the value added could not be watched in the original"
        line = runs.original_line(finding.start)
        capped = bool(runs.original.trace and runs.original.trace.get("capped"))
        if not seen["seen"] and capped:  # an evaluation after the epoch
            return stopped_at_cap(runs, f"the accumulation on line {line} ran")
        if not seen["seen"]:
            return f"{Outcome.unconfirmed}: the original never ran the accumulation on line {line}"
        if not seen["graph"]:
            watched = self.watch(finding)
            what = f"`{watched}`" if watched else f"the value accumulated on line {line}"
            return (
                f"{Outcome.unconfirmed}: {what} held no graph in the original run "
                f"({seen['seen']} times)"
            )
        return None

    def oracle(self, finding: Finding, runs) -> str:
        """Every loss, gradient and step of the whole capped run is the same, and peak memory
        is not higher (5% and 16 MiB of slack for noise)."""
        from loopfix.rules.compare import same_whole_run

        return same_whole_run(runs)
