"""LF009 gradient-leak: one optimizer's backward adds gradients another optimizer steps with."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from loopfix.rules.base import FileContext, Finding, Fix, Rule
from loopfix.rules.update_order import (
    append_keywords,
    covers,
    optimizer_expression,
    renamed_retain_variables,
    titled_with_rename,
)

DOCS = """\
## What it does
Finds, in one loop iteration, a backward that belongs to one optimizer and whose graph also
reaches the parameters of a second optimizer, which then steps without clearing them: the
second optimizer steps with the sum of its own loss's gradients and the first loss's. The
classic case is a GAN whose discriminator loss reads the generator's output without
`.detach()` while both optimizers' gradients are cleared only at the top of the iteration
(often after `retain_graph=True` was added to silence "Trying to backward through the graph
a second time"); in a VQGAN-style loop, the discriminator's loss flows into the autoencoder.

A backward belongs to an optimizer by the code's own pairing: the `zero_grad()` calls right
before it (with no other backward between) clear exactly one optimizer's gradients, or, with
none, the steps right after it are exactly one optimizer's. Reported only when the two
optimizers play an adversarial game on the first one's network: the leaking loss reaches the
second optimizer's modules only behind the first one's (the discriminator's loss reaches the
generator through the discriminator's input; a loss function given the networks, `d_loss(D,
real, fake)`, is read with its parameters bound to what the call passes when its body is
plain assignments and returns, and otherwise may use them any way), and the second
optimizer's own loss goes through the first one's network too (the generator's loss through
the discriminator). A loss meant to
train both networks in another way (an autoencoder's reconstruction through the decoder, a
VAE's, an auxiliary task's, a domain-adversarial loss through a gradient reversal layer) does
not have that shape and is not reported. Also required: both pairings are unique, the two
optimizers share no module, the second optimizer was cleared earlier in the iteration and not
between the leaking backward and its step (a `zero_grad()` may be made by a function or
method the iteration calls, StarGAN's `self.reset_grad()`, when it is a statement of that
function's own body; a called function that steps, or clears under a condition or further
down, leaves the iteration unreported), the backward restricts nothing (`inputs=`, also by
position or `**kwargs`), and the loop neither switches `requires_grad` (as pix2pix's
`set_requires_grad` does), nor clears gradients by hand (`p.grad = None`, a helper), nor
changes them on their way (a tensor's `register_hook`, a custom `torch.autograd.Function`: a
gradient reversal layer, in the loop, a function it calls or a module's method).

## Why is this bad?
`backward()` adds into `.grad` of every parameter its graph reaches. The generator is then
updated partly to help the discriminator (the opposite of its objective), or the autoencoder to
please the discriminator; nothing raises, training just goes wrong.

## Example
```python
for real in loader:
    optimizer_d.zero_grad()
    optimizer_g.zero_grad()
    fake = generator(torch.randn(real.size(0), 16))
    d_loss = bce(discriminator(real), ones) + bce(discriminator(fake), zeros)
    d_loss.backward(retain_graph=True)
    optimizer_d.step()
    g_loss = bce(discriminator(fake), ones)
    g_loss.backward()
    optimizer_g.step()
```

Use instead:
```python
    params_d = [p for group in optimizer_d.param_groups for p in group["params"]]
    d_loss.backward(retain_graph=True, inputs=params_d)
```

## What the fix preserves
The leaking backward is restricted to its own optimizer's parameters
(`d_loss.backward(inputs=[p for group in optimizer_d.param_groups for p in group["params"]])`,
`inputs=` as in `torch.Tensor.backward`): its optimizer gets exactly the gradients it got
before, and the other optimizer steps with the gradients of its own loss alone. Every loss is
unchanged. Verification runs both versions and follows which backwards each step's gradients
came from: in the original some backward's gradients are used by two optimizers' steps; in
the patched run none is, over the whole capped run, and the first iteration's losses and the
leaking backward's own optimizer's first step are bit for bit the original's.

## Fix safety
Safe by the criterion above (in an adversarial pair, each backward's gradients are meant only
for the optimizer it belongs to).

## Known problems
Where an adversarial pair is meant to share gradients (rare: a generator trained with the
discriminator's loss as well as its own), the reading above is wrong; say so with
`# noqa: LF009`. Missed: a leak into a probe or head that does not feed back (a linear probe
trained on an undetached encoder output), a model returning a tuple, updates split into methods,
an `n_critic` inner loop, and optimizers over raw tensors.

## References
- PyTorch DCGAN tutorial (`fake.detach()` for the discriminator's loss)
"""


@dataclass
class Leak:
    backward: object  # BackwardSite that leaks
    owner: str  # the optimizer it belongs to
    step: object  # UpdateSite: the other optimizer's step that uses the leak
    own: object  # BackwardSite: the other optimizer's own backward
    owner_modules: frozenset[str]  # the modules whose parameters the owner steps
    owner_expression: str = ""  # how the code names the owner optimizer (`optimizer_d`)


class GradientLeak(Rule):
    code = "LF009"
    name = "gradient-leak"
    summary = "A backward adds gradients that another optimizer steps with"
    docs = DOCS
    no_fix_reason = "the other optimizer's gradients cannot be cleared before its own backward"

    def detect(self, context: FileContext) -> list[Finding]:
        findings = []
        for leak in _leaks(context.model):
            call = leak.backward.call
            start, end = context.layout.node_range(call)
            optimizer = optimizer_expression(leak.step)
            message = (
                f"`{ast.unparse(call)}` belongs to `{leak.owner}`, but its graph also reaches "
                f"the parameters `{optimizer}` steps at line {leak.step.call.lineno} without "
                "clearing them: that step uses both losses' gradients"
            )
            findings.append(Finding(self.code, self.name, message, start, end, detail=leak))
        return findings

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        leak: Leak = finding.detail
        optimizer = leak.owner_expression
        inputs = f'[p for group in {optimizer}.param_groups for p in group["params"]]'
        call = leak.backward.call
        edits = [append_keywords(context.layout, call, [f"inputs={inputs}"])]
        edits += renamed_retain_variables(context.layout, call, edits)
        if not context.proven(edits, lambda patched: self.removes(context, patched)):
            return None
        title = f"Restrict the backward to `{optimizer}`'s parameters (`inputs=`)"
        return Fix(titled_with_rename(title, edits), tuple(edits))

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self.removes(before, after, len(fixed))

    compares = (
        "which backwards each optimizer step's gradients came from, the first iteration's "
        "losses and each optimizer's first step"
    )

    def confirm(self, finding: Finding, runs) -> str | None:
        """Some backward's gradients fed two optimizers' steps in the original run."""
        from loopfix.rules.compare import Outcome, said

        if runs.original.error:
            return f"{Outcome.undecided}: the original raised {said(runs.original.error)}"
        if not shared_backwards(runs.original.events):
            return (
                f"{Outcome.unconfirmed}: no backward's gradients reached two optimizers' steps "
                f"in the original ({runs.iterations} iterations)"
            )
        return None

    def oracle(self, finding: Finding, runs) -> str:
        """Some backward's gradients feed two optimizers' steps in the original (`confirm`)
        and none in the patched run; the first iteration's losses and the first optimizer's
        first step are unchanged."""
        from loopfix.rules.compare import patched_raised

        original, patched = runs.original, runs.patched
        if patched.error:
            return patched_raised(patched)
        shared = shared_backwards(original.events)
        remaining = shared_backwards(patched.events)
        if remaining:
            return "not equivalent: a backward's gradients still reach two optimizers' steps"
        first, optimizers = min(shared.items())
        losses = [e[1] for e in original.events[: first + 1] if e[0] == "backward"]
        again = [e[1] for e in patched.events if e[0] == "backward"][: len(losses)]
        if losses != again:
            return "not equivalent: the first iteration's losses differ"
        changed = [o for o in optimizers if _first_step(original, o) != _first_step(patched, o)]
        if len(changed) != len(optimizers) - 1:
            return (
                "not equivalent: the optimizer the leaking backward belongs to must step as "
                "before, and only the other one differently"
            )
        return "equivalent"


def _first_step(run, optimizer: int):
    """The gradients of the optimizer's first step, as bytes (None: it never stepped)."""
    event = next((e for e in run.events if e[0] == "step" and e[3] == optimizer), None)
    if event is None:
        return None
    return [None if g is None else (g.dtype, tuple(g.shape), g.data) for g in event[2]]


def shared_backwards(events: list) -> dict[int, list[int]]:
    """Backward events (by index) whose gradients two or more optimizers stepped with, and
    those optimizers in the order they stepped: each parameter's gradient is traced to the
    backwards that added to it since it last started from nothing."""
    sources: dict[int, set[int]] = {}
    used: dict[int, list[int]] = {}
    for index, event in enumerate(events):
        if event[0] == "backward" and len(event) > 6:
            started = set(event[6])
            for position in event[4]:
                if position in started:
                    sources[position] = {index}
                else:
                    sources.setdefault(position, set()).add(index)
        elif event[0] == "step" and len(event) > 5:
            for position in event[5]:
                for backward in sources.get(position, ()):
                    optimizers = used.setdefault(backward, [])
                    if event[3] not in optimizers:
                        optimizers.append(event[3])
    return {b: optimizers for b, optimizers in used.items() if len(optimizers) > 1}


# -- detection --------------------------------------------------------------------------------


def _leaks(model) -> list[Leak]:
    found = []
    updates = [u for u in model.updates() if u.statement is not None]
    for loop_id in model.observations.loops:
        if _by_design(model, loop_id):
            continue
        blocks: dict[int, list] = {}
        for backward in model.backwards():
            if backward.statement is not None and backward.loops[-1:] == (loop_id,):
                _, block = model.block_of(backward.statement)
                blocks[id(block)] = block
        for block in blocks.values():
            found += _leaks_in(model, block, updates, loop_id)
    # a training-step function or method outside any loop of its own (`trainer.step(real,
    # noise)` called from the caller's loop): its body is the iteration
    for function, block in _step_bodies(model).values():
        if _by_design(model, function):
            continue
        found += _leaks_in(model, block, updates, function)
    return found


def _by_design(model, region) -> bool:
    """The iteration decides which parameters get which gradients itself: it switches
    `requires_grad`, clears gradients by hand, or reverses them on their way (a gradient
    reversal layer trains a feature extractor against a domain head on purpose)."""
    return (
        model.toggles_requires_grad(region)
        or model.clears_gradients_by_hand_directly(region)
        or model.reverses_gradients(region)
        or model.calls_unplaced_updates(region)
    )


def _step_bodies(model) -> dict[int, tuple]:
    """Function id -> (the function, its body) for the functions whose own body (outside any
    loop) holds backwards."""
    bodies: dict[int, tuple] = {}
    for backward in model.backwards():
        if backward.statement is None or backward.loops:
            continue
        function = model.function_around(backward.statement)
        owner, block = model.block_of(backward.statement)
        if function is not None and owner is function:
            bodies[id(function)] = (function, block)
    return bodies


def _leaks_in(model, block: list, updates: list, region) -> list[Leak]:
    here = {id(s): i for i, s in enumerate(block)}
    steps = [u for u in updates if u.kind == "step" and u.modules and id(u.statement) in here]
    zeros = [u for u in updates if u.kind == "zero_grad" and id(u.statement) in here]
    zeros += [z for s in block for z in model.zero_grads_called(s) or ()]  # `self.zero_all()`
    backwards = sorted(
        (b for b in model.backwards() if b.statement is not None and id(b.statement) in here),
        key=lambda b: here[id(b.statement)],
    )
    if len({s.target for s in steps}) < 2 or len(backwards) < 2:
        return []
    at = {id(site): here[id(site.statement)] for site in [*steps, *zeros, *backwards]}
    owners = {b.id: _owner(b, backwards, steps, zeros, at) for b in backwards}
    found = []
    for backward in backwards:
        owner = owners[backward.id]
        if owner is None or not _deposits(backward):
            continue
        if backward.statement is None:
            continue
        owner_modules = _modules_of(owner, steps)
        reached = [p for p in model.modules_reached_by(backward.id) if p is not None]
        known = {m for s in steps for m in s.modules} | set(reached)
        direct = model.exposed_modules(backward.id, region, known)
        if direct is None:
            continue
        for step in steps:
            if step.target == owner or at[id(step)] <= at[id(backward)]:
                continue
            if _overlaps(step.modules, owner_modules) or not _overlaps(step.modules, reached):
                continue
            if _overlaps(step.modules, direct):
                continue  # a loss written for both networks (BicycleGAN's encoder+generator)
            leak = _leak(backward, owner, step, backwards, zeros, owners, at, steps, model, block)
            if leak is not None:
                found.append(leak)
    return found


def _leak(backward, owner, step, backwards, zeros, owners, at, steps, model, block) -> Leak | None:
    """The leak of `backward` into `step`'s optimizer, when that optimizer was cleared earlier
    in the iteration, not between the backward and its step, and has a backward of its own
    between its clearing and its step."""
    clears = [z for z in zeros if _clears(z, step)]
    if any(at[id(backward)] < at[id(z)] < at[id(step)] for z in clears):
        return None
    between = block[at[id(backward)] + 1 : at[id(step)]]
    keep = {owner, *_modules_of(owner, steps)}
    victims = {step.target, *(m.split(".")[0] for m in step.modules)}
    if model.may_clear_gradients(between, keep, victims):
        return None  # cleared some other way (`reset(G)`, a wrapper's zero_grad, p.grad)
    earlier = [z for z in clears if at[id(z)] < at[id(backward)]]
    if not earlier:
        return None
    owner_modules = _modules_of(owner, steps)
    own = next(
        (
            b
            for b in backwards
            if b is not backward
            and max(at[id(z)] for z in earlier) < at[id(b)] < at[id(step)]
            and owners[b.id] == step.target
            # an adversarial pair: the second optimizer's own loss goes through the first's
            # network too (a generator's loss through the discriminator)
            and _overlaps(owner_modules, [p for p in model.modules_reached_by(b.id) if p])
        ),
        None,
    )
    if own is None:
        return None
    owner_step = next(s for s in steps if s.target == owner)
    return Leak(backward, owner, step, own, owner_modules, optimizer_expression(owner_step))


def _owner(backward, backwards, steps, zeros, at) -> str | None:
    """The optimizer the backward belongs to: the one the `zero_grad()` calls right before it
    clear when they clear exactly one, else the one the steps right after it step when they
    step exactly one; None otherwise."""
    position = at[id(backward)]
    earlier = [at[id(b)] for b in backwards if at[id(b)] < position]
    later = [at[id(b)] for b in backwards if at[id(b)] > position]
    start, end = max(earlier, default=-1), min(later, default=1 << 30)
    cleared = {
        s.target for z in zeros if start < at[id(z)] < position for s in steps if _clears(z, s)
    }
    if len(cleared) == 1:
        return next(iter(cleared))
    stepped = {s.target for s in steps if position < at[id(s)] < end}
    return next(iter(stepped)) if len(stepped) == 1 else None


def _clears(zero, step) -> bool:
    return zero.target == step.target or covers(zero.modules, step.modules)


def _modules_of(target: str, steps: list) -> frozenset[str]:
    return frozenset(m for s in steps if s.target == target for m in s.modules)


def _overlaps(modules, paths) -> bool:
    from loopfix.model import shapes

    return any(shapes.within(p, m) or shapes.within(m, p) for p in paths for m in modules)


def _deposits(backward) -> bool:
    """A `.backward()` / `torch.autograd.backward` without `inputs=` (autograd.grad adds
    into nothing)."""
    call = backward.call
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return False
    if call.func.attr != "backward" or len(call.args) >= 4:  # `inputs` given by position
        return False
    return not any(k.arg in ("inputs", None) for k in call.keywords)  # or via `**kwargs`
