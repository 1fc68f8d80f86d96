"""LF007 zero-grad-misplaced: gradients cleared where the step cannot use them, or never."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from loopfix.edits import Edit
from loopfix.rules.base import FileContext, Finding, Fix, Rule
from loopfix.rules.update_calls import called_name
from loopfix.rules.update_order import covers, optimizer_expression

DOCS = """\
## What it does
Finds an optimizer whose `zero_grad()` sits where its step cannot get the gradients meant for
it, in one loop iteration:
- **between the backward and the step**: `loss.backward(); optimizer.zero_grad();
  optimizer.step()`, so every step sees zero gradients. Not when a second backward may
  run after the `zero_grad()` and before the step (FGSM adversarial training's clean pass
  for the input gradient, then its adversarial loss; sharpness-aware minimisation's
  perturbed pass), written in the block or in a function it calls (`backprop(loss)`,
  `trainer.backward(loss)`, `torch.autograd.backward(...)`): there the clearing drops the
  first pass's weight gradients on purpose. Also when a function or method
  called there clears them whenever it runs and runs no backward itself (a callback's
  `on_after_backward(trainer)` that logs the gradient norm, then calls
  `trainer.optimizer.zero_grad()`): reported at the call, without a fix, as the function
  may have other callers. Not when the call clears them only on some calls (after an
  early `return`, under an `if`) or runs a step the model cannot place;
- **every micro-batch of an accumulation**: `optimizer.zero_grad()` at the top of each
  iteration while the step runs only under a schedule over the loop's iterations, so each
  step uses the last micro-batch's gradient alone. A schedule takes a remainder of a name or
  attribute (`if (i + 1) % accumulation == 0:`, `if self.global_step % k == 0:`), compares a
  count the loop sets back (`if micro == k: ...; micro = 0`), tests a count's membership
  (`if i in update_steps:`) or hands a count to a function (`if is_update_step(i, k):`, one
  of the project only when what it returns is such a schedule); a
  count is the loop's target, a name it adds to or one computed from a count (`global_step
  = epoch * len(loader) + i`), and a name bound to a schedule is one (`do_step = (i + 1) %
  k == 0`). A step skipped on
  purpose is not one: on a bad batch (`if torch.isfinite(loss):`, `if not found_inf:`), a
  gradient spike (`if norm < limit:`), a strong discriminator (`if d_accuracy < 0.8:`), a
  frozen phase (`if epoch >= unfreeze_at:`, `if i >= warm_up:`, also behind a function
  returning it), a batch held out every k-th iteration (`if i % k != k - 1:`, `if i %
  k:`, `i % k < k - 1`, `(i + 1) % k > 0`, `not (i % k == k - 1)`, also bound to a name: a
  step in all but one iteration in k; a remainder tested for membership, `i % k in (0,
  1)`, is not read as one in k either); there the next
  `zero_grad()` must clear the skipped batch's gradients;
- **every iteration of an inner accumulation loop**: `optimizer.zero_grad()` at the top of a
  loop over micro-batches that backpropagates each one (`for micro_step in range(k):`,
  nanoGPT's shape), while the step runs once after that loop: each step uses the last
  micro-batch's gradient alone. Not when the inner loop steps those weights itself, a
  backward through them runs outside it, the `zero_grad()` is guarded (`if micro_step ==
  0:`), or the inner loop reads or writes `.grad` (per-sample gradients clipped by hand,
  gradient surgery over tasks), itself or in a function it calls. Also when a function the
  inner loop calls clears them before its backward (`backward_micro_batch(model, x)` whose
  body runs `model.zero_grad()`, then `loss.backward()`): reported at the call, without a
  fix, as the function may have other callers;
- **never**: the optimizer steps in every iteration and nothing in the loop clears its
  gradients, so they pile up across iterations (not reported when the step is guarded, as in
  a deliberate accumulation, or when the loop clears gradients another way:
  `p.grad = None`, a helper, a module's `zero_grad()`). Also when the backward and the step
  run in functions or methods the loop calls (`train_step(model, opt, x, y)`,
  `trainer.backward(x, y); trainer.update()`): then nothing the loop runs may call any
  `zero_grad()` (followed four calls deep, and wherever the analysis followed the calls) or
  set gradients by hand, nor call a method by a name chosen at run time (a callback list);
  the module, and those of the functions that step, must not name a way of clearing them
  anywhere (`opt.zero_grad` kept in a name, `getattr(opt, "zero_grad")`, a property, a
  decorator, an optimizer hook), the optimizer must not be made again in the loop, and the
  statement must step once (not a comprehension over batches). An optimizer given a step
  hook where it is built (`register_step_post_hook(clear)`), or of a project class whose
  own methods clear its gradients (a `step()` that calls `self.zero_grad()`), is not one
  whose clearing the model follows: nothing is reported for it; nor when the module, or a
  function it calls, registers a hook that may clear them (a step hook on the optimizer
  it is given, `heavy_ball(optimizer, 0.9)`; the global
  `register_optimizer_step_post_hook`; a module's forward pre-hook calling `zero_grad()`),
  a method called by name on a callback list clears them (`for cb in callbacks:
  cb.on_batch_begin()`), or the loop calls a name bound to what a project function
  returns from a module that names a way of clearing (`clear = hooks.make_clear(model)`,
  a `functools.partial`).
- **never, for gradients handed to another model**: an A3C worker backpropagates into its
  local copy of the model, hands the gradients to the shared model's parameters (`for g, l in
  zip(shared.parameters(), local.parameters()): g._grad = l.grad`, in the loop or in a
  function it calls, `ensure_shared_grads(local, shared)`) and steps the shared model's
  optimizer (a `torch.optim` one or a subclass, `SharedAdam`), but nothing in the loop clears
  the local gradients. The worker may be a function started as a process or thread
  (`mp.Process(target=train, args=(global_model, rank))`, `mp` the module or a context
  from its `get_context("spawn")`) or such a class's `run()`.
  `optimizer.zero_grad()` over the shared model sets its `.grad` to None (the default since
  PyTorch 2.0) and leaves the local `.grad` to pile up. Not when the loop, or a function it
  calls, touches gradients otherwise (a gradient only measured, `p.grad.norm().item()` for
  a log, does not count) or names a `zero_grad` (the local model's, a
  `sync(local, shared)` helper that clears them, `local_param.grad = None` in the hand-over,
  `torch._foreach_zero_`, a bound `clear = model.zero_grad`, a function handed to
  `local.apply(drop_grads)`, a class used as `with LocalUpdate(local):` whose `__exit__`
  does), when the shared optimizer may zero in place (`zero_grad(set_to_none=False)` or a
  flag not written `True`, or arguments spread from a dict, which also zeroes a local
  `.grad` it shares; a project optimizer with its own `zero_grad`), when the loop builds the
  local model again (its new parameters have no gradients) or loads its state with
  `load_state_dict(state, assign=True)` (new parameters too), or when an optimizer steps
  the local model itself. The hand-over may also be done whole by a
  function the loop calls, in this module or another (MorvanZhou's `push_and_pull(opt,
  lnet, gnet, ...)`: zero the shared optimizer, backward, hand over, step; its result kept
  or not), when each `zero_grad()` it calls is one the model knows and none clears the
  local gradients.
- **handed over once, then stale**: the hand-over stops once the shared parameter has a
  gradient (`if shared_param.grad is not None: return`, ikostrikov's and dgriff777's
  `ensure_shared_grads`), nothing in the loop clears the shared gradients, and the loop
  clears the local ones with `zero_grad()`. The guard relied on the shared `.grad` staying
  the local tensor, zeroed in place and refilled by each backward; since PyTorch 2.0
  `zero_grad()` sets the local `.grad` to None, the next backward writes a new tensor, and
  the shared model keeps the first iteration's: every later step uses it again. Not when
  another condition of the guard is false for the call (dgriff777's `if shared_param.grad
  is not None and not gpu: return` called with `gpu=True`, or a default that makes it so:
  the guard never returns), nor when something the loop calls clears the shared gradients
  (`p._grad = None` in a helper of another module); with `gpu=gpu_id >= 0` the guard holds
  on a CPU run, which is dgriff777's default, and it is reported.

## Why is this bad?
`backward()` adds to `.grad`; `zero_grad()` clears it. Cleared between backward and step, the
step does nothing useful (momentum and weight decay still move the weights). Cleared every
micro-batch, gradient accumulation silently becomes training on the last micro-batch. Never
cleared, every step uses the sum of all past gradients. None of these raises.

## Example
```python
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    (criterion(model(x), y) / accumulation).backward()
    if (i + 1) % accumulation == 0:
        optimizer.step()
```

Use instead:
```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accumulation).backward()
    if (i + 1) % accumulation == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## What the fix preserves
The fix moves (or adds) one `zero_grad()`: before the iteration's first backward when it sat
between backward and step or was missing (for a step in a called function, the optimizer as
the loop names it, `tr.opt.zero_grad()`, before the statement that runs the first backward);
right after the guarded step for an accumulation; just before the inner loop for an inner
accumulation loop; for gradients handed to another model, `local.zero_grad()` right after
the step that used them (after a step guarded for accumulation, too, so the window stays;
after the call, for a function that hands over and steps); for a hand-over made once,
`local.zero_grad(set_to_none=False)`, which zeroes the tensor both models share in place,
as `zero_grad()` did before PyTorch 2.0.
The correctness criterion, checked by verification on the gradients of the patched run:
every optimizer step uses the gradients accumulated since the previous step, starting from
zero: the first backward after a step starts from cleared gradients, the later ones before
the next step add to them, and the step sees non-zero gradients; a step over gradients
handed from another model's parameters does not use, bit for bit, the gradients of its
previous step after a backward of its own (a stale hand-over). The original must break
that rule within the capped iterations, and the first loss must be the same.

## Fix safety
Safe by the criterion above (it is what an optimizer step means). Verification judges it only
for a loop with one optimizer; with several, the verdict is "unverified".

## References
- PyTorch docs, `torch.optim.Optimizer.zero_grad` and "Zeroing out gradients in PyTorch"
"""


@dataclass
class Misplaced:
    # "between" | "between_call" | "accumulation" | "inner" | "inner_call" | "missing" |
    # "handover" | "stale"
    kind: str
    step: object  # UpdateSite of the step
    zero: object | None  # UpdateSite of the zero_grad (None: missing)
    anchor: ast.stmt  # where the zero_grad goes
    # a step inside a function the loop calls: the optimizers' paths as the loop names them
    optimizers: tuple[str, ...] = ()
    # gradients handed to another module's parameters: the module whose `.grad` piles up
    cleared: str = ""


class ZeroGradMisplaced(Rule):
    code = "LF007"
    name = "zero-grad-misplaced"
    summary = "An optimizer's gradients are cleared where its step cannot use them, or never"
    docs = DOCS
    no_fix_reason = "the zero_grad() cannot be moved alone"

    def detect(self, context: FileContext) -> list[Finding]:
        model, findings = context.model, []
        updates = model.updates()
        steps = [u for u in updates if u.kind == "step" and u.modules and u.statement]
        for step in steps:
            if not step.loops or step.loops[-1] not in model.observations.loops:
                continue
            loop_id = step.loops[-1]
            if model.clears_gradients_by_hand(loop_id):
                # the gradients cleared through calls only: what they run is known
                if not model.clears_gradients_by_hand_directly(loop_id):
                    found = self._zeroed_by_call_between(model, step) or (
                        self._zeroed_by_call_per_inner_iteration(model, step, loop_id)
                    )
                    if found is not None:
                        findings.append(self._finding(context, found))
                continue
            found = self._misplaced(context, step, updates, loop_id)
            if found is not None:
                findings.append(self._finding(context, found))
        for loop_id in model.observations.loops:
            called = model.uncleared_called_steps(loop_id)
            if called is not None:
                findings.append(self._called_finding(context, *called))
            for handover in model.gradient_handovers(loop_id):
                found = self._handed_over(model, handover, updates, loop_id)
                if found is not None:
                    findings.append(self._handover_finding(context, handover, found))
        return findings

    def _handed_over(self, model, handover, updates, loop_id: int) -> Misplaced | None:
        """A3C's hand-over (`shared_param._grad = local_param.grad`): the loop backpropagates
        into the source module, an optimizer over the target steps in it, and no `zero_grad()`
        in it clears the source's gradients. Not when an optimizer steps the source itself,
        when a `zero_grad()` may zero in place a `.grad` the target shares with the source
        (`set_to_none=False`), or when the backward runs in a loop inside this one. A
        hand-over made once (`if shared.grad is not None: return`) that nothing takes back
        is judged by `_stale`; one done whole by a function the loop calls, by
        `_handed_over_by_function`."""
        source, target = handover.source, handover.target
        # (a function of another module the loop calls records its updates and backwards
        # in the loop's terms, with no statement of its own)
        here = [u for u in updates if loop_id in u.loops]
        steps = [
            u
            for u in here
            if u.kind == "step"
            and u.modules
            and u.loops[-1] == loop_id
            and _owned(target, u.modules)
        ]
        stepping_source = any(
            u.kind == "step" and u.modules and _clears_some(u.modules, source) for u in updates
        )
        if stepping_source:
            return None
        backwards = [
            b
            for b in model.backwards()
            if b.loops and b.loops[-1] == loop_id and _reaches(model, b, source)
        ]
        zeros = [u for u in here if u.kind == "zero_grad"]
        if handover.once and not any(z.modules and _clears_some(z.modules, target) for z in zeros):
            # handed over once and never taken back: the target's `.grad` is the source's
            # own tensor from then on, as long as nothing sets the source's to None
            stale = _stale(handover, zeros, steps, backwards)
            return Misplaced("stale", steps[0], stale, stale.statement) if stale else None
        if not _none_clears(here, source):
            return None
        if not steps and handover.function is not None:
            return self._handed_over_by_function(model, handover)
        if not steps or not backwards:
            return None
        # cleared right after the step (after the call that steps): a step guarded for
        # accumulation keeps its window
        anchor = steps[0].statement  # None: the step is in a function of another module
        if anchor is None and handover.function is not None:
            anchor = handover.statement  # the call that hands over and steps
        if anchor is None:
            return None
        return Misplaced("handover", steps[0], None, anchor, cleared=source)

    def _handed_over_by_function(self, model, handover) -> Misplaced | None:
        """The function the loop calls backpropagates, hands the gradients over and steps
        (MorvanZhou's `push_and_pull(opt, lnet, gnet, ...)`), and neither it nor the loop
        clears the source's: each call's step uses every earlier call's gradients too. Read
        from the function's own run, in its parameters' names; the fix clears the source
        right after the call, in the loop."""
        function, source = handover.function, handover.own_source
        inside = model.updates_within(function)
        steps = [
            u
            for u in inside
            if u.kind == "step" and u.modules and _owned(handover.own_target, u.modules)
        ]
        if not steps or any(
            u.kind == "step" and (u.modules is None or _clears_some(u.modules, source))
            for u in inside
        ):
            return None
        if not _none_clears(inside, source):
            return None
        if not any(_reaches(model, b, source) for b in model.backwards_within(function)):
            return None
        return Misplaced("handover", steps[0], None, handover.statement, cleared=handover.source)

    def _handover_finding(self, context: FileContext, handover, found: Misplaced) -> Finding:
        if found.kind == "stale":
            return self._stale_finding(context, handover, found)
        source, target = found.cleared, handover.target
        step = ast.unparse(found.step.call)
        where, stepped = "the loop", f"(line {found.step.call.lineno})"
        if handover.function is not None:
            where = f"the loop or `{handover.function.name}`"
            if found.step.statement is None:  # recorded from a function of another module
                stepped = f"in `{handover.function.name}`"
        message = (
            f"`{source}`'s gradients are handed to `{target}`'s parameters, but nothing in "
            f"{where} clears `{source}`'s: `{step}` {stepped} uses the "
            f"sum of every past iteration's gradients (a `zero_grad()` over `{target}` sets "
            f"its `.grad` to None, PyTorch's default since 2.0, and leaves `{source}`'s)"
        )
        start, end = context.layout.node_range(_handover_node(handover))
        return Finding(self.code, self.name, message, start, end, detail=found)

    def _stale_finding(self, context: FileContext, handover, found: Misplaced) -> Finding:
        """A hand-over made only while the target has no gradient, and a `zero_grad()` that
        sets the source's to None: the target keeps the first iteration's tensor."""
        source, target = handover.source, handover.target
        zero, step = ast.unparse(found.zero.call), ast.unparse(found.step.call)
        by = f"`{handover.function.name}`" if handover.function is not None else "the loop"
        message = (
            f"{by} hands `{source}`'s gradients to `{target}` only while `{target}`'s `.grad` "
            f"is None, and `{zero}` (line {found.zero.call.lineno}) sets `{source}`'s `.grad` "
            f"to None (PyTorch's default since 2.0) instead of zeroing the tensor `{target}` "
            f"holds: from the second iteration on, `{step}` uses the first iteration's "
            "gradients"
        )
        start, end = context.layout.node_range(_handover_node(handover))
        return Finding(self.code, self.name, message, start, end, detail=found)

    def _called_finding(self, context: FileContext, backward, stepping, optimizers) -> Finding:
        """A function called in the loop steps optimizers after a backward (`train_step(model,
        opt, x, y)`, `trainer.update()`), and nothing the loop runs clears the gradients."""
        call = called_name(stepping)
        named = ", ".join(f"`{o}`" for o in optimizers)
        message = (
            f"`{ast.unparse(call.func)}` steps {named} every iteration, but nothing in the "
            "loop clears the gradients: they pile up across iterations"
        )
        start, end = context.layout.node_range(call)
        found = Misplaced("missing", None, None, backward, optimizers=tuple(optimizers))
        return Finding(self.code, self.name, message, start, end, detail=found)

    def _misplaced(self, context: FileContext, step, updates, loop_id: int) -> Misplaced | None:
        model = context.model
        loop = model.loop(loop_id)
        zeros = [
            u
            for u in updates
            if u.kind == "zero_grad"
            and u.statement is not None
            and loop_id in u.loops
            and covers(u.modules, step.modules)
        ]
        owner, block = model.block_of(step.statement)
        backwards = [
            b
            for b in model.backwards()
            if b.statement is not None
            and loop_id in b.loops
            and any(
                p is not None and _owned(p, step.modules) for p in model.modules_reached_by(b.id)
            )
        ]
        if not backwards:
            return None
        here = {id(s): i for i, s in enumerate(block)}
        own_backs = [b for b in backwards if id(b.statement) in here]
        own_zeros = [z for z in zeros if id(z.statement) in here]
        at = here[id(step.statement)]
        for zero in own_zeros:  # backward, zero_grad, step: no backward after the zero
            z = here[id(zero.statement)]
            before_zero = [b for b in own_backs if here[id(b.statement)] < z]
            after_zero = [b for b in own_backs if z < here[id(b.statement)] < at]
            earlier_steps = [
                u
                for u in updates
                if u.kind == "step"
                and id(u.statement) in here
                and here[id(u.statement)] < z
                and covers(u.modules, step.modules)
            ]
            if after_zero or any(model.may_backpropagate(s) for s in block[z + 1 : at]):
                continue  # a second backward (FGSM, SAM) for the step: cleared on purpose
            if before_zero and z < at and not earlier_steps:
                first = min(before_zero, key=lambda b: here[id(b.statement)])
                return Misplaced("between", step, zero, first.statement)
        # any zero_grad in the loops around the step that clears some of its parameters
        # (`decoder.zero_grad(); encoder.zero_grad()` for one optimizer over both)
        anywhere = [
            u
            for u in updates
            if u.kind == "zero_grad"
            and any(loop in u.loops for loop in step.loops)
            and (u.modules is None or _overlaps(u.modules, step.modules))
        ]
        if owner is loop and not anywhere and not model.may_clear_elsewhere(loop_id):
            first = min(own_backs, key=lambda b: here[id(b.statement)], default=None)
            if first is not None and here[id(first.statement)] < at:
                return Misplaced("missing", step, None, first.statement)
        guarded = isinstance(owner, ast.If) and not owner.orelse and owner in loop.body
        if guarded and _tests_finite(owner.test):
            guarded = False  # a bad batch's step skipped (`if torch.isfinite(loss):`)
        if guarded and not model.steps_every_kth(owner.test, loop_id):
            # a step skipped on purpose (a bad batch: `if not found_inf:`, a gradient
            # spike, a strong discriminator, a frozen phase): the top-of-loop `zero_grad()`
            # is what drops the skipped batch's gradients
            guarded = False
        inside = [b for b in backwards if owner in model.enclosing_statements(b.statement)]
        other_steps = [
            u
            for u in updates
            if u.kind == "step"
            and u is not step
            and u.statement is not None
            and loop_id in u.loops
            and _overlaps(u.modules or frozenset(), step.modules)
        ]
        if guarded and (inside or other_steps):
            guarded = False  # a branch with its own update (a warm-up), not an accumulation
        if guarded and not any(owner in model.enclosing_statements(z.statement) for z in zeros):
            body = {id(s): i for i, s in enumerate(loop.body)}
            top_zeros = [z for z in zeros if id(z.statement) in body]
            top_backs = [b for b in backwards if id(b.statement) in body]
            for zero in top_zeros:
                backs_after = [
                    b
                    for b in top_backs
                    if body[id(zero.statement)] < body[id(b.statement)] < body[id(owner)]
                ]
                if backs_after and body[id(zero.statement)] < body[id(owner)]:
                    return Misplaced("accumulation", step, zero, step.statement)
        return self._zeroed_per_inner_iteration(model, step, zeros, backwards, loop_id)

    def _zeroed_per_inner_iteration(
        self, model, step, zeros, backwards, loop_id: int
    ) -> Misplaced | None:
        """`for micro in range(k): optimizer.zero_grad(); loss.backward()` in the loop that
        steps once after it: each inner iteration clears the gradients of the micro-batch
        before it. Not when the inner loop steps too, when a backward of the step's modules
        runs outside it, or when it handles gradients by hand (per-sample gradients read
        between a backward and the next `zero_grad()`)."""
        where = _step_in_body(model, step, loop_id)
        if where is None:
            return None
        for zero in zeros:
            if len(zero.loops) < 2 or zero.loops[-2] != loop_id:
                continue  # not directly inside a loop nested in the step's
            inner_id = zero.loops[-1]
            inner = model.loop(inner_id)
            owner, block = model.block_of(zero.statement)
            if owner is not inner or block is not inner.body:
                continue  # guarded (`if micro == 0: optimizer.zero_grad()`)
            if not _accumulates_in(model, step, where, inner_id, backwards):
                continue
            body = {id(s): i for i, s in enumerate(inner.body)}
            if any(
                id(b.statement) in body and body[id(b.statement)] > body[id(zero.statement)]
                for b in backwards
            ):
                return Misplaced("inner", step, zero, inner)
        return None

    def _zeroed_by_call_between(self, model, step) -> Misplaced | None:
        """`loss.backward(); callback.on_after_backward(self); optimizer.step()`: a statement
        of the step's block calls functions that clear the step's gradients whenever it runs
        (`LoopModel.zero_grads_called`) and run no backward, after a backward through them
        and with no backward, step or other clearing after it before the step: every step
        sees zero gradients. Reported at the call, without a fix."""
        _, block = model.block_of(step.statement)
        reaching = {b.id for b in _reaching(model, step)}
        backpropagated, found = False, None
        for statement in block[: block.index(step.statement)]:
            runs = model.gradient_work(statement, reaching, step.modules)
            if runs == {"called zero_grad"} and backpropagated:
                zeros = model.zero_grads_called(statement)
                zero = next(z for z in zeros if covers(z.modules, step.modules))
                found = Misplaced("between_call", step, zero, statement)
            elif runs - {"backward"}:
                backpropagated, found = False, None  # the gradients were used or cleared
            elif runs:
                backpropagated, found = True, None
        return found

    def _zeroed_by_call_per_inner_iteration(self, model, step, loop_id: int) -> Misplaced | None:
        """`for micro in range(k): backward_micro_batch(model, x)` in the loop that steps once
        after it, where the function called clears the step's gradients and then runs a
        backward through them: each call clears the micro-batch before it. The same guards
        as `_zeroed_per_inner_iteration`, the backwards found through the calls."""
        where = _step_in_body(model, step, loop_id)
        if where is None:
            return None
        reaching = [b for b in _reaching(model, step) if loop_id in b.loops]
        for inner_id, inner in model.observations.loops.items():
            if id(inner) not in where[0]:
                continue  # not a loop of the step's loop body
            if not _accumulates_in(model, step, where, inner_id, reaching):
                continue
            for statement in inner.body:
                zero = _clears_then_backpropagates(model, statement, step, reaching)
                if zero is not None:
                    return Misplaced("inner_call", step, zero, statement)
        return None

    def _finding(self, context: FileContext, found: Misplaced) -> Finding:
        step = ast.unparse(found.step.call)
        if found.kind == "between":
            node = found.zero.call
            message = (
                f"`{ast.unparse(node)}` runs between the backward (line "
                f"{found.anchor.lineno}) and `{step}` (line {found.step.call.lineno}): every "
                "step sees zero gradients"
            )
        elif found.kind == "accumulation":
            node = found.zero.call
            message = (
                f"`{ast.unparse(node)}` clears the gradients of every micro-batch while "
                f"`{step}` (line {found.step.call.lineno}) only runs under its `if`: each step "
                "uses the last micro-batch's gradient alone"
            )
        elif found.kind == "inner":
            node = found.zero.call
            message = (
                f"`{ast.unparse(node)}` clears the gradients at every iteration of the loop "
                f"on line {found.anchor.lineno} while `{step}` (line "
                f"{found.step.call.lineno}) runs once after it: each step uses the last "
                "micro-batch's gradient alone"
            )
        elif found.kind == "between_call":
            called = getattr(called_name(found.anchor), "func", found.anchor)
            message = (
                f"`{ast.unparse(called)}` clears the gradients (its "
                f"`{ast.unparse(found.zero.call)}`) between the backward and `{step}` (line "
                f"{found.step.call.lineno}): every step sees zero gradients"
            )
            node = found.anchor
        elif found.kind == "inner_call":
            called = getattr(called_name(found.anchor), "func", found.anchor)
            inner, _ = context.model.block_of(found.anchor)
            message = (
                f"`{ast.unparse(called)}` clears the gradients (its "
                f"`{ast.unparse(found.zero.call)}`) at every iteration of the loop on line "
                f"{inner.lineno} before its backward, "
                f"while `{step}` (line {found.step.call.lineno}) runs once after that loop: "
                "each step uses the last micro-batch's gradient alone"
            )
            node = found.anchor
        else:
            node = found.step.call
            message = (
                f"`{step}` steps every iteration, but nothing in the loop clears its "
                "gradients: they pile up across iterations"
            )
        start, end = context.layout.node_range(node)
        return Finding(self.code, self.name, message, start, end, detail=found)

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        found: Misplaced = finding.detail
        layout = context.layout
        if found.kind == "inner_call":
            finding.fix_unavailable = (
                "the zero_grad() is inside the function called, which may have other callers: "
                "clear the gradients once before the loop and take it out of the function"
            )
            return None
        if found.kind == "between_call":
            finding.fix_unavailable = (
                "the zero_grad() is inside the function called, which may have other callers: "
                "take it out of the function and clear the gradients before the backward"
            )
            return None
        if not layout.stands_alone(found.anchor):
            return None
        if found.kind == "stale":
            call = found.zero.call
            start, end = layout.node_range(call)
            if call.args or call.keywords or context.text[end - 1] != ")":
                return None
            edits = [Edit(end - 1, end - 1, "set_to_none=False")]
            title = f"Zero the gradients in place: `{ast.unparse(call.func)}(set_to_none=False)`"
        elif found.kind == "handover":
            lines = [f"{found.cleared}.zero_grad()"]
            edits = [layout.insert_after(found.anchor, lines)]
            title = f"Clear `{found.cleared}`'s gradients after the step: `{lines[0]}`"
        elif found.kind == "missing":
            named = found.optimizers or (optimizer_expression(found.step),)
            lines = [f"{optimizer}.zero_grad()" for optimizer in named]
            edits = [layout.insert_before(found.anchor, lines)]
            title = f"Clear the gradients before the backward: `{'; '.join(lines)}`"
        else:
            zero = found.zero.statement
            if not layout.stands_alone(zero):
                return None
            start, end = layout.leading_start(zero), layout.line_end(zero.end_lineno)
            indent = layout.indent(zero)
            lines = [
                line[len(indent) :] if line.startswith(indent) else line
                for line in context.text[start:end].rstrip("\r\n").splitlines()
            ]
            if found.kind == "between":
                moved = layout.insert_before(found.anchor, lines)
                title = "Clear the gradients before the backward, not before the step"
            elif found.kind == "inner" and _cleared_just_before(context.model, found.anchor, zero):
                edits = [Edit(start, end, "")]  # `opt.zero_grad()` already runs before the loop
                if not context.proven(edits, lambda patched: self.removes(context, patched)):
                    return None
                return Fix("Clear the gradients once, before the accumulating loop", tuple(edits))
            elif found.kind == "inner":
                moved = layout.insert_before(found.anchor, lines)
                title = "Clear the gradients once, before the accumulating loop"
            else:
                moved = layout.insert_after(found.anchor, lines)
                title = "Clear the gradients after the accumulated step"
            edits = [Edit(start, end, ""), moved]
        if not context.proven(edits, lambda patched: self.removes(context, patched)):
            return None
        return Fix(title, tuple(edits))

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self.removes(before, after, len(fixed))

    compares = (
        "the gradients every optimizer step used (those accumulated since the previous step, "
        "from zero) and the first loss"
    )

    def confirm(self, finding: Finding, runs) -> str | None:
        """Some step of the original did not use exactly the gradients accumulated since the
        previous step, starting from zero."""
        from loopfix.rules.compare import Outcome, said

        if runs.original.error:
            return f"{Outcome.undecided}: the original raised {said(runs.original.error)}"
        if _broken_window(runs.original.events) is None:
            return (
                f"{Outcome.unconfirmed}: every step of the original used the gradients "
                f"accumulated since the previous step, from zero ({runs.iterations} iterations)"
            )
        return None

    def oracle(self, finding: Finding, runs) -> str:
        """One optimizer; the patched run keeps the accumulation rule (see the docs) over
        every capped iteration; the first loss is the same."""
        from loopfix.rules.compare import patched_raised

        original, patched = runs.original, runs.patched
        if patched.error:
            return patched_raised(patched)
        if {e[3] for e in patched.events if e[0] == "step"} - {0}:
            return "unverified: the loop steps more than one optimizer"
        broken = _broken_window(patched.events)
        if broken is not None:
            return f"not equivalent: {broken}"
        first = [e[1] for e in original.events if e[0] == "backward"][:1]
        if first != [e[1] for e in patched.events if e[0] == "backward"][:1]:
            return "not equivalent: the first loss differs"
        return "equivalent"


def _broken_window(events: list) -> str | None:
    """Where a run breaks "each step uses the gradients accumulated since the previous step,
    starting from zero" (None: it keeps it)."""
    window: list[bool] = []
    reached: set[int] = set()
    previous: dict[int, list] = {}  # optimizer -> the gradients of its last step
    steps = 0
    for event in events:
        if event[0] == "backward" and len(event) > 5:
            window.append(bool(event[5]))
            reached.update(event[4])
        elif event[0] == "step":
            steps += 1
            if not window:
                return f"step {steps} came without a backward since the previous step"
            if not window[0]:
                return f"step {steps}'s gradients did not start from zero (they piled up)"
            if not all(not fresh for fresh in window[1:]):
                return f"step {steps} used only the last of {len(window)} backwards"
            grads = [g for g in event[2] if g is not None]
            if all(g.data == bytes(len(g.data)) for g in grads):  # none, or all zeros
                return f"step {steps} saw zero gradients"
            handed = len(event) > 5 and reached and not reached & set(event[5])
            if handed and previous.get(event[3]) == grads:
                # its weights' gradients came from another module's (an A3C hand-over), and
                # are bit for bit those of its previous step, after a backward of their own
                return f"step {steps} used the same gradients as the step before (stale)"
            previous[event[3]] = grads
            window, reached = [], set()
    return None


def _step_in_body(model, step, loop_id: int) -> tuple | None:
    """The ids of the statements of the step's loop's body (to their place), and the one
    holding the step; None when none holds it."""
    tops = {id(s): i for i, s in enumerate(model.loop(loop_id).body)}
    step_top = _top_statement(model, step.statement, tops)
    return None if step_top is None else (tops, step_top)


def _accumulates_in(model, step, where: tuple, inner_id: int, backwards: list) -> bool:
    """Whether the loop `inner_id`, in the body of the step's loop (`where`:
    `_step_in_body`), runs before the step, holds every one of
    `backwards` (those reaching the step's weights), does not step those weights itself and
    does not handle gradients by hand (`LoopModel.handles_gradients`)."""
    tops, step_top = where
    inner_top = _top_statement(model, model.loop(inner_id), tops)
    if inner_top is None or tops[id(inner_top)] >= tops[id(step_top)]:
        return False  # the inner loop runs after the step
    if not backwards or any(inner_id not in b.loops for b in backwards):
        return False
    stepped_inside = any(
        u.kind == "step"
        and inner_id in u.loops
        and _overlaps(u.modules or frozenset(), step.modules)
        for u in model.updates()
    )
    return not stepped_inside and not model.handles_gradients(inner_id)


def _clears_then_backpropagates(model, statement: ast.stmt, step, reaching) -> object | None:
    """The zero_grad (an `UpdateSite`) that a function `statement` calls runs on the step's
    parameters, unguarded in the function's body, followed in the same call by one of the
    `reaching` backwards; else None."""
    events = model.events_within(statement)
    backwards = {b.id for b in reaching}
    for number, (kind, event, _) in enumerate(events):
        if kind != "update":
            continue
        zero = model.update(event)
        if zero.kind != "zero_grad" or not covers(zero.modules, step.modules):
            continue
        chain = model.chain_in_callee(zero.call)
        if chain is None or len(chain) != 1:
            continue  # not a statement of the function's body: guarded (`if first:`), or unknown
        if any(k == "backward" and e in backwards for k, e, _ in events[number + 1 :]):
            return zero
    return None


def _reaching(model, step) -> list:
    """The backwards whose graphs reach a module the step updates."""
    return [
        b
        for b in model.backwards()
        if any(p is not None and _owned(p, step.modules) for p in model.modules_reached_by(b.id))
    ]


def _top_statement(model, statement: ast.stmt, tops: dict[int, int]) -> ast.stmt | None:
    """The statement of a loop's body (`tops`: their ids) that holds `statement`."""
    return next((s for s in model.enclosing_statements(statement) if id(s) in tops), None)


def _handover_node(handover) -> ast.AST:
    """Where a hand-over finding points: the assignment in the loop, or the call of the
    function that makes it."""
    inline = isinstance(handover.statement, ast.For)
    return handover.assignment if inline else handover.statement


def _stale(handover, zeros, steps, backwards):
    """The `zero_grad()` that makes a hand-over guarded by `if shared.grad is not None:
    return` stale (dgriff777's rl_a3c_pytorch): the loop's only clearing of the source, with
    `.grad` set to None (PyTorch's default since 2.0), so the next backward writes a new
    tensor the target never gets; None when that is not the loop (a clearing the model does
    not know, one that zeroes in place, the hand-over in a function that clears too)."""
    if not steps or not backwards or any(z.modules is None for z in zeros):
        return None
    clearing = [z for z in zeros if _clears_some(z.modules, handover.source)]
    if len(clearing) != 1 or clearing[0].statement is None or _keeps_tensors(clearing[0].call):
        return None
    return clearing[0]


def _none_clears(updates, source: str) -> bool:
    """No `zero_grad()` among `updates` clears (or may clear) the gradients of `source`: each
    knows what it clears, and none zeroes in place a `.grad` the source may share."""
    for zero in (u for u in updates if u.kind == "zero_grad"):
        if zero.modules is None or _clears_some(zero.modules, source):
            return False  # clears the source's gradients (or maybe does)
        if _keeps_tensors(zero.call):
            return False  # `zero_grad(set_to_none=False)`: zeroes a shared `.grad` too
    return True


def _reaches(model, backward, source: str) -> bool:
    """The backward pass reaches the parameters of `source` (or of a part of it: the
    submodules its forward ran, `lnet.pi1`)."""
    return any(
        p is not None and (_clears_some({p}, source) or _owned(p, {source}))
        for p in model.modules_reached_by(backward.id)
    )


def _clears_some(zeroed, path: str) -> bool:
    """What `zeroed` clears holds `path` or a part of it."""
    return _owned(path, zeroed) or _overlaps({path}, zeroed)


def _keeps_tensors(call: ast.Call) -> bool:
    """`zero_grad(set_to_none=False)` (or `zero_grad(False)`, or a flag not written as
    `True`, or arguments spread from a dict, `**kwargs`): it may zero each `.grad` in
    place, a local one it shares too."""
    flags = [k.value for k in call.keywords if k.arg in ("set_to_none", None)] + call.args[:1]
    return any(not (isinstance(f, ast.Constant) and f.value is True) for f in flags)


def _overlaps(zeroed, modules) -> bool:
    """Some of `modules` lie within what `zeroed` clears."""
    return any(_owned(m, zeroed) for m in modules)


def _owned(path: str, modules) -> bool:
    from loopfix.model import shapes

    return any(shapes.within(path, m) for m in modules)


FINITE_TESTS = frozenset({"isfinite", "isnan", "isinf", "isneginf", "isposinf"})


def _tests_finite(test: ast.expr) -> bool:
    """`torch.isfinite(loss)`, `not math.isnan(loss.item())`: a step skipped on a bad loss,
    whose gradients the next `zero_grad()` must clear, not an accumulation."""
    return any(
        isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in FINITE_TESTS
        for node in ast.walk(test)
    )


def _cleared_just_before(model, loop: ast.stmt, zero: ast.stmt) -> bool:
    """Whether the block holding `loop` already runs the same clearing as `zero` (`zero` as
    written: `optimizer_D1.zero_grad()`) before it, with no backward between the two: then
    the fix only takes the clearing out of the loop."""
    _, block = model.block_of(loop)
    wanted = ast.unparse(zero)
    for statement in reversed(block[: block.index(loop)]):
        if ast.unparse(statement) == wanted:
            return True
        if model.may_backpropagate(statement):
            return False
    return False
