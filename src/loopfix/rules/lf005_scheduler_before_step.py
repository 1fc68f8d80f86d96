"""LF005 lr-scheduler-before-optimizer-step: the learning-rate schedule starts one step late."""

from __future__ import annotations

import ast
import math

from loopfix.edits import Edit
from loopfix.rules.base import FileContext, Finding, Fix, Rule

DOCS = """\
## What it does
Finds an `lr_scheduler.step()` that runs before the `step()` of the optimizer it schedules in
the same loop iteration: earlier in the same block (a per-batch schedule such as `OneCycleLR`
stepped first), or at the start of an epoch whose batch loop steps the optimizer (the
convention of PyTorch before 1.1), also at the top of a function that runs an epoch (`def
train_epoch(...): scheduler.step(); for batch in loader: ...`). Calls are followed into the
functions and methods of the project: a scheduler stepped before `train_epoch(model,
optimizer)` steps the optimizer, and a call such as `trainer.update_learning_rate()` that steps
a scheduler on every call, made before `trainer.update(x, y)` steps its optimizer. Which
optimizer a scheduler drives is resolved from how it was built (`StepLR(optimizer, ...)`).

## Why is this bad?
Since PyTorch 1.1 a scheduler's `step()` must follow the optimizer's: called first, it skips
the first value of the schedule, so every optimizer step runs one schedule step (one batch,
or one epoch) ahead: warm-up starts from its second value, a decay comes one epoch early, and
the last value is never used. PyTorch warns at run time ("Detected call of
`lr_scheduler.step()` before `optimizer.step()`"), once, and training goes on.

## Example
```python
for epoch in range(epochs):
    scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
```

Use instead:
```python
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    scheduler.step()
```

## What the fix preserves
The fix moves the scheduler's `step()` (with the comment lines above it, unless the next line
is another statement of the block, which the comment then heads; with the `if` of a setting
around it that nothing in the loop changes, `if params['lr_decay']:`, which steps it in every
epoch or in none) to just after the
statement that steps its optimizer: after `optimizer.step()` (or the `if` / `scaler.step()`
holding it, or the call that steps it) for a per-iteration schedule, after the batch loop for
a per-epoch one. A call that steps the scheduler is moved whole (`lr =
trainer.update_learning_rate()`, when nothing it moves past reads `lr`), after the last
statement that steps an optimizer of the schedulers it steps (MUNIT's
`update_learning_rate()` steps the discriminator's and the generator's). The
correctness criterion, checked by verification on the learning rates each optimizer step
used: for every optimizer whose first step the original ran with its scheduler already
stepped, the patched run's first step uses the schedule's first value (the learning rate
right after the scheduler was built), and the sequence of learning rates the original used
(distinct values, in order) is the patched one's shifted by one schedule step; every other
optimizer steps with exactly the original's learning rates; the first
steps' gradients are unchanged, each optimizer's first step up to the first step whose
learning rate the fix changes (after it, the weights differ on purpose: a generator's first
gradients go through a discriminator just stepped with the other rate). The original must
show the effect: its first step already uses a later value.

## Fix safety
Safe by the criterion above: the schedule becomes the documented one, and nothing else moves.
A step under a test that the scheduler exists (`if self.lr_scheduler is not None:`, the
trainers' optional schedule) is a step whenever there is a schedule; the fix moves the `if`
with it. No fix is offered when a statement it would move past may leave the iteration (`if
epoch < start_epoch: continue`, which fast-forwards a resumed schedule; a batch skipped with
`continue`): the step would no longer run on those paths. Not reported: a scheduler stepped
with arguments (`ReduceLROnPlateau.step(val_loss)`), one stepped under any other condition
(`if epoch > 0: scheduler.step()`, which does follow an optimizer step), and one whose
optimizer is not known from how it was built, nor a step at the start of each epoch of a loop
after which the optimizer has already stepped (a warm-up epoch run before it: a loop over
the batches written out, also stepping the optimizer under another name (`o = opt`) or as a
`while` loop whose test holds when first reached (`n, warm` bound to `0` and `2` before
`while n < warm:`) and cannot leave before its step, or a
call of a function that steps it, however deep, or of a method of an object given it
(`Trainer(model, opt).warmup(loader)`), where the function holding the step runs it on every
call; one under an `if`, or over a part of the batches whose size is a setting
(`batches[:warmup]`), in the scope or in that function, may not run, and is still reported;
a branch in a function between them is not looked at). A called
function counts only when it steps the scheduler on every call (a statement of its own body,
after nothing that may return) and runs no backward or optimizer step itself; a method that
loops over its schedulers (`for s in self.schedulers: s.step()`) is not followed that far.

## References
- PyTorch docs, "How to adjust learning rate" (`torch.optim.lr_scheduler`): the order of
  `optimizer.step()` and `scheduler.step()` since 1.1.0
"""

WARNING = "Detected call of `lr_scheduler.step()` before `optimizer.step()`"
LOOPS = ast.For | ast.While | ast.AsyncFor
DEFINITIONS = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class SchedulerBeforeStep(Rule):
    code = "LF005"
    name = "lr-scheduler-before-optimizer-step"
    summary = "An LR scheduler steps before its optimizer, shifting the schedule by one step"
    docs = DOCS
    no_fix_reason = "the scheduler's step cannot be moved after its optimizer's alone"

    def detect(self, context: FileContext) -> list[Finding]:
        model, findings = context.model, []
        for site, statement, optimizers in self._scheduler_steps(context):
            # `if scheduler is not None: scheduler.step()` steps whenever there is a schedule
            # `if params['lr_decay']: lr_scheduler.step()`: every epoch or none, as the setting
            statement = (
                model.existence_guard(statement) or model.setting_guard(statement) or statement
            )
            owner, block = model.block_of(statement)
            if not isinstance(owner, LOOPS | ast.FunctionDef | ast.AsyncFunctionDef):
                continue  # guarded, or at module level outside a loop: it may follow a step
            # a call stepping several schedulers goes after the last of their optimizers'
            # steps (`update_learning_rate()` before `dis_update(...)` and `gen_update(...)`)
            found = [self._stepping_statement(context, block, statement, o) for o in optimizers]
            anchors = [a for a in found if a is not None]
            anchor = max(anchors, key=block.index) if anchors else None
            # an optimizer of its schedulers seen stepping nowhere in the block (a step the
            # model does not follow: `getattr(self, "gen_opt").step()`): where it would go
            # after that step is not known
            unplaced = [
                o
                for o, a in zip(optimizers, found, strict=True)
                if a is None and not self._stepped_earlier(context, block, statement, o)
            ]
            if anchor is None or not _movable(context, block, statement, anchor):
                continue
            warmed = [
                o
                for o in optimizers
                if isinstance(owner, LOOPS) and self._stepped_before(context, owner, o)
            ]
            if len(warmed) == len(optimizers):
                continue  # a warm-up epoch before the loop: the first step follows its step
            # moved, the call would put off the schedule of an optimizer warmed up before
            unplaced += warmed
            if isinstance(anchor, LOOPS):
                where = (
                    f"at the start of each epoch, before the batch loop on line "
                    f"{anchor.lineno} steps its optimizer"
                )
            elif model.effects_within(anchor) and isinstance(anchor, ast.Expr | ast.Assign):
                where = f"before `{ast.unparse(anchor.value)}` steps its optimizer"
            else:
                where = f"before its optimizer steps (line {anchor.lineno})"
            stepped = "runs" if site is not None else "steps a scheduler"
            site = site if site is not None else statement.value
            message = (
                f"`{ast.unparse(site)}` {stepped} {where}: the learning-rate schedule skips "
                "its first value and runs one step ahead"
            )
            start, end = context.layout.node_range(site)
            detail = (statement, anchor, _leaving(context, block, statement, anchor), unplaced)
            findings.append(Finding(self.code, self.name, message, start, end, detail=detail))
        return findings

    @staticmethod
    def _scheduler_steps(context: FileContext):
        """(the `scheduler.step()` call or None, the statement to move, the optimizers'
        paths) for every scheduler step of the scope without arguments on a known optimizer,
        and for every statement calling a function of the file that steps schedulers on each
        call and does nothing else the order of updates depends on
        (`trainer.update_learning_rate()`: the optimizers of every scheduler it steps)."""
        model = context.model
        for call, statement, optimizer, given in model.scheduler_steps():
            if not given and optimizer is not None:
                yield call, statement, (optimizer,)
        stepped: dict[int, tuple[ast.stmt, list[str]]] = {}
        for effect in model.called_effects("schedule"):
            if effect.given or effect.target is None:
                continue
            _, targets = stepped.setdefault(id(effect.statement), (effect.statement, []))
            if effect.target not in targets:
                targets.append(effect.target)
        for statement, targets in stepped.values():
            effects = model.effects_within(statement)
            if model.events_within(statement) or any(e.kind == "step" for e in effects):
                continue  # it steps an optimizer or runs a backward itself
            if not isinstance(statement, ast.Expr | ast.Assign):
                continue
            if not isinstance(statement.value, ast.Call):
                continue
            yield None, statement, tuple(targets)

    @staticmethod
    def _stepping_statement(context: FileContext, block, statement, optimizer: str):
        """The first later statement of `block` that steps `optimizer` (itself or inside),
        or calls a function of the file that does (`train_epoch(model, optimizer)`)."""
        model = context.model
        steps = _step_statements(context, optimizer)
        for later in block[block.index(statement) + 1 :]:
            if any(later in model.enclosing_statements(s) for s in steps):
                return later
        return None

    @staticmethod
    def _stepped_earlier(context: FileContext, block, statement, optimizer: str) -> bool:
        """Whether a statement of `block` before `statement` steps `optimizer`."""
        model = context.model
        steps = _step_statements(context, optimizer)
        return any(
            earlier in model.enclosing_statements(s)
            for earlier in block[: block.index(statement)]
            for s in steps
        )

    @staticmethod
    def _stepped_before(context: FileContext, loop: ast.stmt, optimizer: str) -> bool:
        """The optimizer steps in a statement before `loop` in the block that holds it
        (`run_epoch(model, optimizer, loader)` as a warm-up epoch, or a warm-up loop over
        the batches written out), or in one around it: a statement of that block, or one
        inside loops over the batches there, not one under a branch or in a loop over
        `batches[:warmup]`, which may not run (verification tells)."""
        model = context.model
        steps = _step_statements(context, optimizer, every_call=True)
        for enclosing in model.enclosing_statements(loop):
            if id(enclosing) not in model.parents or isinstance(enclosing, DEFINITIONS):
                break  # what runs before, in the function (or module body) that holds it
            _, block = model.block_of(enclosing)
            earlier = [s for s in block[: block.index(enclosing)] if not isinstance(s, DEFINITIONS)]
            if any(_runs_in(model, step, statement) for step in steps for statement in earlier):
                return True
        return False

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        statement, anchor, leaving, unplaced = finding.detail
        if unplaced:
            finding.fix_unavailable = (
                f"it also steps the scheduler of `{unplaced[0]}`, whose optimizer steps "
                "before the loop or where loopfix does not see it: moving the call would "
                "change that schedule too"
            )
            return None
        if leaving is not None:
            finding.fix_unavailable = (
                f"line {leaving.lineno} may leave the iteration before its optimizer steps, "
                "so a step moved after it would no longer run on that path"
            )
            return None
        extra = _does_more(context, statement)
        if extra is not None:
            finding.fix_unavailable = (
                f"`{ast.unparse(extra).strip()}` (line {extra.lineno}), in the function it "
                "calls, may do more than step the schedule: moved, it would run later too"
            )
            return None
        layout = context.layout
        if not (layout.stands_alone(statement) and layout.stands_alone(anchor)):
            return None
        start, end = layout.moved_start(statement), layout.line_end(statement.end_lineno)
        moved = context.text[start:end].rstrip("\r\n").splitlines()
        indent = layout.indent(statement)
        lines = [line[len(indent) :] if line.startswith(indent) else line for line in moved]
        edits = [Edit(start, end, ""), layout.insert_after(anchor, lines)]
        if not context.proven(edits, lambda patched: not self.detect(patched)):
            return None
        return Fix("Step the scheduler after its optimizer", tuple(edits))

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self.removes(before, after, len(fixed))

    compares = (
        "the learning rate of every step of every optimizer, and each optimizer's first "
        "step's gradients up to the first step whose learning rate changed"
    )

    def confirm(self, finding: Finding, runs) -> str | None:
        """The original's scheduler really stepped before its optimizer's first step (of
        some optimizer: the first to step may have no schedule, or its own in order)."""
        from loopfix.rules.compare import Outcome, said

        original = runs.original
        if original.trace is None or original.error:
            return f"{Outcome.undecided}: the original raised {said(original.error)}"
        before = _rates_by_optimizer(original.events)
        if not before:
            return f"{Outcome.unconfirmed}: no optimizer step recorded a learning rate"
        if not any(rates[0][2] for rates in before.values()):
            first_lr = next(iter(before.values()))[0][0]
            return (
                f"{Outcome.unconfirmed}: no scheduler had stepped before its optimizer's "
                f"first step (the first step's learning rate was {first_lr:g})"
            )
        return None

    def oracle(self, finding: Finding, runs) -> str:
        """For every optimizer whose first step the original ran with its scheduler already
        stepped: the patched run's first step runs with the scheduler where it was built and
        uses the schedule's first value (within 1e-9, as schedules compute it in floating
        point), and the original's learning rates (distinct values in order) are the patched
        run's shifted by one. Every other optimizer steps with exactly the original's rates.
        The first steps' gradients are the original's up to the first step whose rate
        changed. The fix changes the learning rates on purpose: "changed as intended",
        naming the first step's rate."""
        from loopfix.rules.compare import INTENDED, patched_raised, step_difference

        original, patched = runs.original, runs.patched
        if patched.trace is None or patched.error:
            return patched_raised(patched) or "unverified: the patched run left no trace"
        before = _rates_by_optimizer(original.events)
        after = _rates_by_optimizer(patched.events)
        shifted = []
        for index, old_rates in before.items():
            new_rates = after.get(index)
            if not new_rates:
                return f"not equivalent: optimizer {index} did not step in the patched run"
            if old_rates[0][2] == 0:
                old, new = [r[0] for r in old_rates], [r[0] for r in new_rates]
                shared = min(len(old), len(new))
                if old[:shared] != new[:shared]:
                    return (
                        f"not equivalent: optimizer {index}'s learning rates {new[:4]} are not "
                        f"the original's {old[:4]}"
                    )
                continue
            problem = _shifted(index, old_rates, new_rates)
            if problem is not None:
                return f"not equivalent: {problem}"
            shifted.append((index, old_rates[0], new_rates[0]))
        difference = step_difference(*_steps_before_rates_differ(original.events, patched.events))
        if difference is not None:
            return f"not equivalent: {difference}"
        if not shifted:
            return "unverified: no optimizer's schedule was ahead in the original"
        index, (first_lr, _, ahead), (patched_first, _, _) = shifted[0]
        return (
            f"{INTENDED}: the first step uses the schedule's first learning rate "
            f"{patched_first:g} (the original's first step used {first_lr:g}, its scheduler "
            f"{ahead} step(s) ahead); the later rates are the original's one step later"
        )


def _shifted(index: int, old_rates: list, new_rates: list) -> str | None:
    """Why optimizer `index`'s patched rates are not the schedule from its start with the
    original's rates one step later, or None."""
    patched_first, patched_start, patched_ahead = new_rates[0]
    if patched_ahead != 0:
        return (
            f"optimizer {index}'s patched first step came {patched_ahead} scheduler step(s) "
            "after the schedule's start"
        )
    if not math.isclose(patched_first, patched_start, rel_tol=1e-9):
        return (
            f"optimizer {index}'s patched first step used {patched_first}, not the "
            f"schedule's first value {patched_start}"
        )
    old, new = _distinct([r[0] for r in old_rates]), _distinct([r[0] for r in new_rates])
    shared = min(len(old), len(new) - 1)
    if old[:shared] != new[1 : shared + 1]:
        return f"optimizer {index}'s learning rates {new[:4]} are not {old[:4]} one step later"
    return None


def _steps_before_rates_differ(original: list, patched: list) -> tuple[dict, dict]:
    """The gradients of each optimizer's first step in both runs, step by step in order, up
    to and including the first step whose learning rates differ: its gradients were computed
    before it, on the same weights; every later one runs on weights it changed otherwise."""
    before: dict[int, list] = {}
    after: dict[int, list] = {}
    original_steps = [e for e in original if e[0] == "step"]
    patched_steps = [e for e in patched if e[0] == "step"]
    for old, new in zip(original_steps, patched_steps, strict=False):
        if old[3] != new[3]:
            break  # another optimizer: the order of steps differs (compared as the oracle says)
        before.setdefault(old[3], old[2])
        after.setdefault(new[3], new[2])
        if [r[0] for r in old[4]] != [r[0] for r in new[4]]:
            break
    return before, after


def _rates_by_optimizer(events: list) -> dict[int, list[tuple[float, float, int]]]:
    """Per optimizer (in the order they first step), per step: (learning rate, the
    schedule's first value, how many scheduler steps had run beyond its start) of the first
    parameter group (a `StepLR` that decays every 3 epochs shows the shift in the count
    before it shows it in the rate)."""
    rates: dict[int, list[tuple[float, float, int]]] = {}
    for event in events:
        if event[0] == "step" and len(event) > 4 and event[4]:
            rate = tuple(event[4][0])
            rates.setdefault(event[3], []).append(rate if len(rate) == 3 else (*rate, 0))
    return rates


def _distinct(values: list) -> list:
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


def _step_statements(
    context: FileContext, optimizer: str, every_call: bool = False
) -> list[ast.stmt]:
    """The statements of the scope that step `optimizer`, themselves or by a call (also of
    a method of an object the scope gave it to: `trainer.warmup(loader)` stepping the
    `self.opt` of `trainer = Trainer(model, opt)`). With `every_call`, a call only where the
    function holding the step steps on every call (`_steps_whenever_run`)."""
    model = context.model
    steps = [
        u.statement
        for u in model.updates()
        if u.kind == "step" and u.target == optimizer and u.statement is not None
    ]
    called = [e for e in model.called_effects("step") if optimizer in (e.target, e.known_as)]
    if every_call:
        called = [e for e in called if _steps_whenever_run(context, e.call)]
    return steps + [e.statement for e in called]


def _steps_whenever_run(context: FileContext, step: ast.Call) -> bool:
    """Whether the function of the project holding the `step` call runs it on every call:
    under `with` blocks and loops over the batches only (not under `if self.warm:`, nor in
    a loop over `loader[:n]`). Only that function is looked at, not the calls leading to it;
    a `while` there runs only when its test is a literal true (`while True:`)."""
    chain = context.model.chain_in_callee(step)
    if chain is None:
        return False
    return all(
        _runs_body(s, holder, isinstance(s.test, ast.Constant) and bool(s.test.value))
        if isinstance(s, ast.While)
        else _runs_body(s, holder)
        for s, holder in zip(chain, chain[1:], strict=False)
    )


def _runs_in(model, step: ast.stmt, statement: ast.stmt) -> bool:
    """Whether `step` is `statement` or inside it under `with` blocks, loops over the
    batches and `while` loops whose test holds when first reached only (those run their
    body; a branch, a `try` or a loop over a part of the batches whose size is a setting
    may not)."""
    chain = model.enclosing_statements(step)  # innermost first
    if statement not in chain:
        return False
    outer = chain[1 : chain.index(statement) + 1]
    return all(
        _runs_body(s, holder, isinstance(s, ast.While) and model.enters(s))
        for s, holder in zip(outer, chain, strict=False)
    )


def _runs_body(statement: ast.stmt, holder: ast.stmt, enters: bool = False) -> bool:
    """Whether `statement` runs `holder`, a statement of its body, at least once: a `with`
    block, a loop over the batches, or a `while` loop that `enters` and cannot leave before
    `holder`."""
    if isinstance(statement, ast.With | ast.AsyncWith) or _iterates(statement):
        return True
    return isinstance(statement, ast.While) and enters and not _may_leave(statement, holder)


def _may_leave(loop: ast.While, holder: ast.stmt | None = None) -> bool:
    """A `break`, `continue` or `return` in the loop's body (outside loops nested in it)
    before `holder`, the statement of its body that holds the step, or in it: the step in
    its first pass may not run. One after it (`opt.step(); n += 1; if n >= warm: break`)
    leaves only once the step ran. Without `holder`, anywhere in the body."""
    body = loop.body
    if holder is not None and holder in body:
        body = body[: body.index(holder)] + ([] if _is_step_only(holder) else [holder])
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break | ast.Continue | ast.Return):
            return True
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            todo += node.orelse  # a `break` in a nested loop leaves only that loop
            continue
        if not isinstance(node, DEFINITIONS):
            todo += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return False


def _is_step_only(statement: ast.stmt) -> bool:
    """A statement that is a call and nothing else (`opt.step()`, `train_step(...)`)."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)


def _iterates(loop: ast.stmt) -> bool:
    """A `for` over the batches (`for x, y in loader`), which runs its body; not over a slice
    or a `range` whose bound is a setting (`batches[:warmup]`, `range(warmup_steps)`), which
    may be empty, nor a `while` (`LoopModel.enters` tells whether one runs)."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return False
    source = loop.iter
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Name):
        if source.func.id == "enumerate" and source.args:
            source = source.args[0]
        elif source.func.id in {"range", "islice"}:
            return all(
                isinstance(a, ast.Constant) and isinstance(a.value, int) and a.value > 0
                for a in source.args[-1:]
            )
    return not (isinstance(source, ast.Subscript) and isinstance(source.slice, ast.Slice))


def _leaving(context: FileContext, block, statement: ast.stmt, anchor: ast.stmt):
    """The first statement the move would pass that may leave the iteration (`if epoch <
    start_epoch: continue` fast-forwarding a resumed schedule, a batch skipped with
    `continue`): moved after it, the step would no longer run on those paths."""
    passed = block[block.index(statement) + 1 : block.index(anchor) + 1]
    return next((s for s in passed if context.model.may_leave_iteration(s)), None)


LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "log", "print"})


def _does_more(context: FileContext, statement: ast.stmt) -> ast.stmt | None:
    """For a statement calling a function that steps a scheduler (`tr.new_epoch()`): the
    first statement of that function that may do something besides the step, a log line or
    a read it returns (`model.train()`, `sampler.set_epoch(epoch)`, `self.epoch += 1`);
    None when it does nothing else, or `statement` steps the scheduler itself."""
    model = context.model
    calls = [e.call for e in model.effects_within(statement) if e.kind == "schedule"]
    if not calls:
        return None
    function = model.function_called_for(statement, calls[0])
    if function is None:
        return statement  # not found: it cannot be told apart
    for line in function.body:
        if not _only_schedules(line, calls):
            return line
    return None


def _only_schedules(line: ast.stmt, steps: list[ast.Call]) -> bool:
    """A docstring, `pass`, the scheduler's step, a log line, a local name bound or a value
    returned by an expression that calls nothing but builtins; or an `if` that calls
    nothing in its test, around such lines (`if self.dis_scheduler is not None:`)."""
    if isinstance(line, ast.Pass):
        return True
    if isinstance(line, ast.If):
        calls_in_test = any(isinstance(n, ast.Call) for n in ast.walk(line.test))
        branches = [*line.body, *line.orelse]
        return not calls_in_test and all(_only_schedules(b, steps) for b in branches)
    if isinstance(line, ast.Expr):
        value = line.value
        if isinstance(value, ast.Constant) or any(value is step for step in steps):
            return True
        return isinstance(value, ast.Call) and _logs(value)
    if isinstance(line, ast.Return | ast.Assign | ast.AnnAssign):
        if isinstance(line, ast.Assign | ast.AnnAssign):
            targets = line.targets if isinstance(line, ast.Assign) else [line.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return False
        return line.value is None or not any(
            isinstance(n, ast.Call) and not _builtin(n) for n in ast.walk(line.value)
        )
    return False


def _logs(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name in LOG_METHODS


def _builtin(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in {
        "float",
        "int",
        "len",
        "round",
        "str",
        "min",
        "max",
        "abs",
        "bool",
        "list",
        "tuple",
    }


def _movable(context: FileContext, block, statement: ast.stmt, anchor: ast.stmt) -> bool:
    """A statement moved after `anchor` must not bind a name the statements it moves past
    read (`lr = trainer.update_learning_rate()` before a `trainer.update(x, y, lr)`)."""
    if not isinstance(statement, ast.Assign):
        return True
    targets = statement.targets
    if not all(isinstance(t, ast.Name) for t in targets):
        return False
    passed = block[block.index(statement) + 1 : block.index(anchor) + 1]
    return not any(context.model.reads(s, t.id) for s in passed for t in targets)
