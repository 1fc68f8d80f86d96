"""LF002 step-before-backward: an optimizer step changes weights a later backward still needs."""

from __future__ import annotations

import ast

from loopfix.rules import update_calls
from loopfix.rules.base import FileContext, Finding
from loopfix.rules.update_checks import ReorderRule

DOCS = """\
## What it does
Finds a backward that goes through a graph built before an `optimizer.step()` (or
`scaler.step(optimizer)`) that updated, in place, parameters saved in that graph, within the
same iteration. Which parameters an optimizer owns is resolved from how it was constructed
(`Adam(model.parameters())`, lists, `+`, `itertools.chain`, param-group dicts, `self.opt_d`).

## Why is this bad?
The step changes the weights in place; the graph still refers to them. Autograd raises
"one of the variables needed for gradient computation has been modified by an inplace
operation ... is at version 2; expected version 1". Where it does not raise, the gradient mixes
activations of the old weights with the new ones. Typical shapes: GANs whose generator loss
reuses the discriminator output from before the discriminator's step, actor-critic with a
shared trunk, multi-task heads on a shared encoder with one optimizer each, coupled networks.

## Example
```python
opt_b.zero_grad()
loss_b.backward(retain_graph=True)
opt_b.step()
opt_a.zero_grad()
loss_a.backward()            # goes through weights opt_b just changed
opt_a.step()
```

Use instead:
```python
opt_b.zero_grad()
opt_a.zero_grad()
loss_b.backward(retain_graph=True, inputs=list(model_b.parameters()))
loss_a.backward(inputs=list(model_a.parameters()))
opt_b.step()
opt_a.step()
```

## What the fix preserves
Every module forward and every loss the original computed before it failed is computed again,
bit for bit and in the same order: the fix never moves a forward that reads weights a step
changes before that step, nor a step after a statement that reads what it changes (a module
handed to a helper, an object that may keep the module, as `ema.update()` of `ema = EMA(D,
0.9)`, or a tensor the optimizer steps itself: SAC's `alpha = log_alpha.exp()` after
`Adam([log_alpha])` steps); where the only reorder would, it offers no safe fix and says
why.
Every backward runs before any step. The correctness criterion: each optimizer steps with
exactly the gradients it would have stepped with in the original code if no parameter had
changed during the iteration, i.e. the sum of the gradients of the losses whose backward ran
between that optimizer's `zero_grad` and its `step`, with respect to its own parameters. So the
`zero_grad` calls come first, the backwards keep their order with `retain_graph=True` on exactly
those whose graph a later one needs, each backward is restricted with `inputs=` to the
parameters of the optimizers whose window contained it (otherwise its gradient would leak
into another optimizer's parameters: the popular "zero both, backward both, step both" is not
equivalent in general), then the steps in their original order. Gradient clipping,
`scaler.unscale_` and gradient reads stay just before their step (a clipping over more than
that optimizer's parameters, `clip_grad_norm_(net.parameters(), c)` before the critic's step
of an actor-critic, would see the gradients of the backwards moved before it: then there is
no safe fix, and the message says so); LR schedulers and
`scaler.update()` stay after it; comments move with their statement. With
`--restrict-style autograd-grad` the restriction is written as `torch.autograd.grad` over the
window's parameters, accumulated into `.grad` the way backward would, for code bases that
avoid `inputs=`. A backward that gets `inputs=` and still says `retain_variables=True` (the
keyword's name before PyTorch 0.4, which the PyTorch versions that have `inputs=` reject) has
it renamed `retain_graph=True`, which means the same; the fix's title says so.

## Other fixes
- **Deep mutual learning** (`for k in range(n)`: peer k's loss reads the other peers' outputs
  as targets, then `optimizers[k].step()`): the peers' outputs are detached where the loss
  reads them (`outputs[j].detach()`). Safe when each peer's `zero_grad` runs before its own
  backward in the loop: the gradient a peer's output received from another peer's loss was
  zeroed before that peer stepped, so every optimizer steps with the gradients of the
  reference run above.
- **Updates under an `if`** (`if i % n_critic == 0:` around the generator's update): the
  reorder runs inside the guarded structure, each guarded part under a copy of its `if`, when
  the condition has no call, every optimizer's `zero_grad`, backwards and `step` share one
  guard, and each copy sees what the `if` saw: no statement that may change what the
  condition reads (`global_step = epoch * n + i`, `counts["d"] += 1`, `sched.step()`, a call
  of a function of the file) is inside the guarded body or moves across the `if` (one before
  it that stays before every copy is fine).
- **A loop of whole updates** (a WGAN critic's `for _ in range(n_critic):` zero_grad,
  backward, step, with its weight clipping, then the generator's update reusing the critic's
  score from before that loop): the loop counts as one step of the optimizers it steps, so
  the block's other backwards (restricted with `inputs=` to their own optimizers' parameters)
  run before it and their steps after it. Only when every update and backward inside sits
  directly in the loop's body, each step there has its `zero_grad` before it, the loop's
  backwards reach only the parameters of the optimizers stepped inside, hand changes of
  weights inside touch only those, and no statement moved before the loop reads or binds a
  name the loop binds or reads. Verification then compares the losses in any order (the
  generator's is now backwarded before the critic's).

## Fix safety
The reorder and the detached peers are **safe** (`[*]`): verification must find every forward,
loss and first step equal to the criterion's, and the whole run's sequence of steps equal to
the reference's. The criterion is measured on the original run with every step deferred; when
a later forward of the same iteration reads what an earlier step changed (MADDPG: the second
agent's targets are softly copied from weights the first agent stepped), that run is not the
author's computation, and the rewrite is judged instead against the original run with every
saved tensor copied when saved (each backward then gets the gradients of the graph its
forward built, steps running as written): every step of the whole capped run, in order, with
exactly its gradients. Two well-known repairs change what the code computes on purpose; they are
**unsafe** (`[-]`), applied only with `--unsafe-fixes` (or chosen in the editor, where each is
its own code action), and verification reports what they change ("changed as intended: ...")
after the patched code ran every capped iteration:
- *Recompute after the step* (the PyTorch DCGAN example's idiom): the assignments that built
  what the failing loss reads from a forward of the stepped network run again just before
  their first reader after the step, so the later loss uses the updated weights. Offered as
  the fix when no reorder is exact (a forward that must see the step, one optimizer stepping
  twice), and otherwise as the editor's second code action. When the step and the failing
  backward run in a helper of the file called once per loss (`update(opt_model, model_loss)`
  then `update(opt_actor, actor_loss)`), the assignments are run again after the call that
  stepped, before the failing call.
- *Step once*: an optimizer stepped twice with only backwards between (no `zero_grad`) steps
  once, after every backward, with the gradients of all its losses summed (the editor's other
  code action for "backward, step, backward, step").

Forwards that ran after a step in the original now see the weights from before the step: that
is the criterion above, and the reason the original failed. Verification writes the rewrite
only when the original really raises the in-place version error within the capped iterations
(otherwise "not confirmed"): a step before a backward that does not save the stepped weights
(a single `Linear` applied to the raw input) is reported, but not rewritten.

The fix is offered only when every `zero_grad`, backward and step of the iteration sits
directly in one block, each optimizer's parameters are known (modules' `parameters()`, param
groups, chains, or named tensors such as SAC's `Adam([self.log_alpha])`), no weight is changed
by hand (`p.data.copy_(...)`) before the last step (a soft target update after it is fine),
and each step has its
`zero_grad` in the same block (gradient accumulation across iterations is left alone);
otherwise the finding has no fix, and its message says why.

## References
- PyTorch autograd mechanics: in-place operations and saved tensors
- PyTorch DCGAN example (recomputes the discriminator output after its step)
"""


def _step_named(model, step, statement: ast.stmt | None, steps: set[int]) -> str:
    """How a message names the step: `opt.step()` (line 12) where this file holds it; a step
    in a function of another module, by the call of this file that ran it (`optim.step()`
    in the call on line 79), as its line is the other file's."""
    call = f"`{ast.unparse(step.call)}`"
    if step.statement is not None:
        return f"{call} (line {step.call.lineno})"
    caller = update_calls.stepping_statement(model, statement, steps) if statement else None
    return f"{call} (in the call on line {caller.lineno})" if caller is not None else call


class StepBeforeBackward(ReorderRule):
    code = "LF002"
    name = "step-before-backward"
    summary = "An optimizer step changes weights that a later backward's graph still needs"
    docs = DOCS
    predicted_error = "modified by an inplace operation"

    def detect(self, context: FileContext) -> list[Finding]:
        model, findings = context.model, []
        for site in model.backwards():
            steps = model.stale_steps_before(site.id)
            if not steps or model.freed_graph_reused_by(site.id):
                continue  # a freed graph fails first: that is LF003
            anchor = update_calls.anchor_of(context, site)
            if site.statement is None and anchor is None:
                continue
            step = model.update(min(steps))
            stepped = _step_named(model, step, anchor or site.statement, steps)
            if anchor is not None:  # a helper of another module: reported where it is called
                start, end = context.layout.node_range(anchor)
                call = update_calls.called_name(anchor)
                called = ast.unparse(getattr(call, "func", anchor))
                message = (
                    f"the backward inside `{called}` goes through weights that {stepped} "
                    "already changed in place"
                    if isinstance(anchor, ast.Expr | ast.Assign) and isinstance(call, ast.Call)
                    else "a backward called from here goes through weights an optimizer "
                    "step already changed in place"
                )
                findings.append(Finding(self.code, self.name, message, start, end, detail=site))
                continue
            start, end = self.backward_range(context, site)
            message = f"this backward goes through weights that {stepped} already changed in place"
            message += self.called_from(model, site)
            findings.append(Finding(self.code, self.name, message, start, end, detail=site))
        return findings

    def needs_runs(self, finding: Finding) -> frozenset[str]:
        """Also the original with every saved tensor copied when saved, which judges a
        reorder over the whole run when the deferred-steps reference cannot (see
        `reorder_oracle`)."""
        runs = super().needs_runs(finding)
        return runs | {"cloned"} if finding.fix is not None and finding.fix.safe else runs

    def event(self, context: FileContext, finding: Finding):
        """The step that changed the weights, what it changed, and how the code calls it."""
        step = context.model.update(min(context.model.stale_steps_before(finding.detail.id)))
        return step.statement, step.modules, f"`{ast.unparse(step.call)}`"
