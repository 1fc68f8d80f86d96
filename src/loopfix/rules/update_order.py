"""The fix LF002 and LF003 share: run every backward of an iteration before any step.

Within the block that holds an iteration's updates, the statements are re-ordered to:
the `zero_grad` calls (original order), then everything else that ran before the last step in
its original relative order (forwards, losses, backwards), then each step in original order
with the statements that belong to it (gradient clipping, `scaler.unscale_` and gradient
reads just before it; LR-scheduler steps and `scaler.update()` just after it), then the
statements that followed the last step. Comments and blank lines travel with their statement.

Each backward gets `retain_graph=True` exactly when a later backward of the block goes through
its graph, and `inputs=` restricted to the parameters of the optimizers whose window
(`zero_grad` .. `step`) contained it when it would otherwise reach parameters of another
optimizer. With no parameter changing during the iteration, every optimizer then steps with
exactly the gradients it stepped with in the original order, summed over the losses whose
backward ran inside its window.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from loopfix.edits import Edit, apply_edits
from loopfix.model import shapes
from loopfix.model.graphs import BackwardSite, UpdateSite
from loopfix.model.shapes import covers
from loopfix.model.symbols import dotted_name, parameters_of
from loopfix.options import RestrictStyle
from loopfix.rules.base import FileContext

GRADIENT_USERS = re.compile(r"\.grad\b|clip_grad_(norm|value)_|\.unscale_\(")


@dataclass
class Unit:
    """One statement of the block with the comment and blank lines above it."""

    statement: ast.stmt
    start: int
    end: int
    kind: str = "other"  # zero | backward | step | dropped | before_step | after_step | other
    update: UpdateSite | None = None
    called: bool = False  # the event runs inside a function the statement calls
    backward: BackwardSite | None = None
    attached_to: int | None = None  # index of the step unit it belongs to
    edits: list[Edit] = field(default_factory=list)
    guard: ast.If | None = None  # the `if` (without else) whose body the statement is in
    preamble: str = ""  # for a guard's first unit: the comment lines above the `if`
    outer_start: int = 0  # for a guard's first unit: where the `if` and its comments start
    own_window: bool = False  # a loop of whole updates: its zero_grad..step windows are inside


class NotReorderable(Exception):
    """The reorder cannot be planned exactly; the message says why, for the user."""


class RepeatedStep(NotReorderable):
    """One optimizer steps twice in the iteration: no reorder keeps both steps."""


@dataclass
class Plan:
    edits: list[Edit]
    # the statements the plan drops (step once) or runs again (recompute), as shown to users:
    # "`opt.step()` (line 18)"
    moved: list[str] = field(default_factory=list)
    # a backward now runs before a loop of whole updates that ran before it (its loss is
    # backwarded earlier than the loop's losses)
    across_loop: bool = False
    # a backward's `retain_variables=` is renamed `retain_graph=` (`renamed_retain_variables`)
    renames: bool = False


def plan_reorder(
    context: FileContext, backward_id: int, drop_repeated: bool = False
) -> Plan | NotReorderable:
    """A `Plan` of edits that reorder the updates around `backward_id`, or why that is not
    provably right (`str()` of it is a sentence for the finding's message). With
    `drop_repeated`, an optimizer that steps twice with only backwards between (no
    `zero_grad` of it) steps once, after every backward: the unsafe fix for "backward, step,
    backward, step"."""
    try:
        return _plan(context, backward_id, drop_repeated)
    except NotReorderable as reason:
        # without its traceback, nor the error it was raised while handling (and that one's
        # traceback): their frames hold `reason` and the file's whole context, a cycle only
        # the cyclic collector would free
        reason.__context__ = reason.__cause__ = None
        return reason.with_traceback(None)


def _plan(context: FileContext, backward_id: int, drop_repeated: bool) -> Plan:
    """Plan in the backward's own block; for a backward inside a helper function, where the
    helper is called (the helper's backward then keeps its arguments as they are)."""
    model = context.model
    statement = model.backward(backward_id).statement
    if statement is None:
        raise NotReorderable("the backward's own scope could not be located")
    owner, _ = model.block_of(statement)
    if _flattens(context, owner) and id(owner) in model.parents:
        statement = owner  # a backward guarded by an `if`: plan in the block around it
    try:
        return _plan_block(context, statement, drop_repeated)
    except NotReorderable as own_reason:
        anchor = model.reached_through_call(backward_id)
        if anchor is None:
            raise
        try:
            return _plan_block(context, anchor, drop_repeated)
        except NotReorderable:
            raise own_reason from None


def _plan_block(context: FileContext, statement: ast.stmt, drop_repeated: bool) -> Plan:
    model = context.model
    _, block = model.block_of(statement)
    units = _units(context, block)
    if units is None:
        raise NotReorderable("a statement of the iteration shares its lines with another")
    _classify(context, units)
    _check_guards(context.model, units)
    _refuse_hand_updates(context.model, units)
    dropped = _drop_repeated_steps(units) if drop_repeated else []
    _refuse_repeated_steps(units)
    _attach(context.model, units)
    windows = _windows(units)
    _plan_backward_arguments(context, units, windows)
    order = _new_order(units)
    if order == list(range(len(units))) and not any(u.edits for u in units):
        raise NotReorderable("no reorder of this block changes what the backwards reach")
    _check_conditions(context.model, units, order)
    _refuse_forwards_across_steps(context, units, order)
    _refuse_jumps_across_updates(context.model, units, order)
    text, newline = context.text, context.layout.newline
    pieces = [apply_edits(text[u.start : u.end], _shift(u.edits, -u.start)) for u in units]
    pieces = [p if p.endswith(("\n", "\r")) else p + newline for p in pieces]
    region = "".join(_guarded(context, units, pieces, order))
    if not text[: units[-1].end].endswith(("\n", "\r")):  # no final newline: keep it so
        region = region[: -len(newline)]
    described = [
        f"`{ast.unparse(units[i].statement)}` (line {units[i].statement.lineno})" for i in dropped
    ]
    start = units[0].outer_start if units[0].guard is not None else units[0].start
    position = {index: place for place, index in enumerate(order)}
    across = any(
        position[i] < position[s]
        for s, loop in enumerate(units)
        if loop.own_window
        for i, unit in enumerate(units)
        if i > s and unit.kind == "backward"
    )
    renames = any(_renames(edit) for unit in units for edit in unit.edits)
    return Plan([Edit(start, units[-1].end, region)], described, across, renames)


# ---------------------------------------------------------------------------- units
def _units(context: FileContext, block: list[ast.stmt]) -> list[Unit] | None:
    """The block's statements; the body of an `if` without `else` that holds updates is
    flattened into units guarded by it (each keeps its own, deeper, indentation)."""
    layout = context.layout
    units, cursor = [], None
    for statement in block:
        if not layout.stands_alone(statement):
            return None
        start = layout.line_start(statement.lineno)
        if cursor is not None:
            start = cursor  # blank and comment lines above travel with the statement
        end = layout.line_end(statement.end_lineno)
        if _flattens(context, statement):
            body = _units(context, statement.body)
            if body is None or any(u.guard is not None for u in body):
                return None
            for unit in body:
                unit.guard = statement
            if cursor is None:
                start = layout.leading_start(statement)
            body[0].preamble = context.text[start : layout.line_start(statement.lineno)]
            body[0].outer_start = start
            units += body
        else:
            units.append(Unit(statement, start, end))
        cursor = end
    if units and units[0].guard is None:
        units[0].start = layout.leading_start(units[0].statement)
    return units


def _flattens(context: FileContext, statement: ast.stmt) -> bool:
    """An `if` without `else` whose body runs an update or a backward, whose condition has no
    call (it reads the same wherever it is evaluated again) and whose header line holds
    nothing after the colon."""
    if not isinstance(statement, ast.If) or statement.orelse or not statement.body:
        return False
    if any(isinstance(n, ast.Call | ast.NamedExpr | ast.Await) for n in ast.walk(statement.test)):
        return False
    layout = context.layout
    header_end = layout.line_end(statement.test.end_lineno)
    after = context.text[layout.node_range(statement.test)[1] : header_end].strip()
    if not after.startswith(":") or after[1:].strip()[:1] not in ("", "#"):
        return False
    if statement.body[0].lineno == statement.test.end_lineno:
        return False
    model = context.model
    sites = {id(u.statement) for u in model.updates()}
    sites |= {id(b.statement) for b in model.backwards()}
    return any(id(s) in sites for s in statement.body)


def _check_guards(model, units: list[Unit]) -> None:
    """Guarded units may be re-emitted under copies of their `if` only when every path keeps
    the order: each optimizer's zero_grad and step share one guard, and every backward inside
    a window shares it too (what the condition reads: `_check_conditions`)."""
    if not any(u.guard is not None for u in units):
        return
    for index, unit in enumerate(units):
        if unit.kind != "step":
            continue
        opening = [
            i
            for i in range(index)
            if units[i].kind == "zero" and covers(units[i].update.modules, _modules(unit))
        ]
        start = index if unit.own_window else opening[-1] if opening else 0
        inside = [u for u in units[start : index + 1] if u.kind in ("zero", "backward", "step")]
        if any(u.guard is not unit.guard for u in inside):
            raise NotReorderable(
                f"an update inside the `if` on line {_guard_line(unit, inside)} shares an "
                "optimizer's zero_grad()..step() window with updates outside it"
            )


def _check_conditions(model, units: list[Unit], order: list[int]) -> None:
    """Each copy of an `if` must see the value the `if` saw: a statement that may change
    what the condition reads (`global_step = epoch * n + i`, `counts["d"] += 1`,
    `sched.step()`) must not lie inside the guarded body, and must stay on the side of
    every guarded statement it was on (before the `if`, or after it)."""
    position = {index: place for place, index in enumerate(order)}
    guards = {id(u.guard): u.guard for u in units if u.guard is not None}
    for guard in guards.values():
        guarded = [i for i, u in enumerate(units) if u.guard is guard]
        for x, unit in enumerate(units):
            if model.changes_condition(guard.test, [unit.statement]) is None:
                continue
            before = x < guarded[0]
            moved = unit.guard is guard or any(
                (position[x] < position[g]) != before for g in guarded
            )
            if moved:
                raise NotReorderable(
                    f"line {unit.statement.lineno} may change what the `if` on line "
                    f"{guard.lineno} tests, so its condition cannot be evaluated again"
                )


def _guard_line(unit: Unit, inside: list[Unit]) -> int:
    guard = unit.guard or next(u.guard for u in inside if u.guard is not None)
    return guard.lineno


def _guarded(context: FileContext, units: list[Unit], pieces: list[str], order: list[int]):
    """The pieces in the new order; consecutive units of one guard under a copy of its `if`
    header (the first copy keeps the comments that were above the `if`)."""
    layout, newline, started = context.layout, context.layout.newline, set()
    index = 0
    while index < len(order):
        guard = units[order[index]].guard
        if guard is None:
            yield pieces[order[index]]
            index += 1
            continue
        run = []
        while index < len(order) and units[order[index]].guard is guard:
            run.append(order[index])
            index += 1
        if id(guard) not in started:
            started.add(id(guard))
            yield next(u.preamble for u in units if u.guard is guard)
        start, end = layout.line_start(guard.lineno), layout.line_end(guard.test.end_lineno)
        header = context.text[start:end]
        yield header if header.endswith(("\n", "\r")) else header + newline
        yield from (pieces[i] for i in run)


def _classify(context: FileContext, units: list[Unit]) -> None:
    model = context.model
    by_statement_update = {id(u.statement): u for u in model.updates() if u.statement}
    by_statement_backward = {id(b.statement): b for b in model.backwards() if b.statement}
    for unit in units:
        sid = id(unit.statement)
        if sid in by_statement_update and _is_call_statement(unit.statement):
            unit.update = by_statement_update[sid]
            unit.kind = unit.update.kind if unit.update.kind == "step" else "zero"
        elif sid in by_statement_backward and _is_call_statement(unit.statement):
            unit.backward = by_statement_backward[sid]
            unit.kind = "backward"
        elif model.events_within(unit.statement):
            _classify_call(context, unit)
        elif _classify_update_loop(context, unit):
            pass
        elif _has_update_inside(unit.statement, by_statement_update, by_statement_backward):
            raise NotReorderable(
                f"an update inside the `{_keyword_of(unit.statement)}` on line "
                f"{unit.statement.lineno} makes the order of updates depend on run time"
            )
        elif GRADIENT_USERS.search(ast.unparse(unit.statement)):
            unit.kind = "before_step"
        elif _is_after_step(context, unit.statement):
            unit.kind = "after_step"
    for unit in units:
        if unit.kind == "step" and unit.update.modules is None:
            raise NotReorderable(
                f"the parameters `{_optimizer(unit)}` steps are not known from how it was built"
            )
    _check_clipping(units)


CLIPPING = ("clip_grad_norm_", "clip_grad_value_")


def _check_clipping(units: list[Unit]) -> None:
    """A clipping that travels with its step (`clip_grad_norm_(X.parameters(), c)` just before
    `opt.step()`) must clip only that optimizer's parameters: after the reorder, every
    backward of the block has run before it, so a clipping over other optimizers' parameters
    too (`net.parameters()` before the critic's step of an actor-critic) would take their
    gradients into its norm and change what the step uses."""
    waiting: list[Unit] = []
    for unit in units:
        if unit.kind == "before_step":
            waiting.append(unit)
        elif unit.kind == "step":
            for before in waiting:
                for call in _clippings(before.statement):
                    if not _clips_only(call, unit.update.modules):
                        raise NotReorderable(
                            f"`{ast.unparse(call)}` before `{_optimizer(unit)}.step()` would "
                            "also clip the gradients of the backwards moved before it"
                        )
            waiting = []


def _clippings(statement: ast.stmt) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(statement)
        if isinstance(node, ast.Call)
        and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in CLIPPING
    ]


def _clips_only(call: ast.Call, modules: frozenset[str]) -> bool:
    """The clipping's parameters (`X.parameters()`) lie within the modules `modules`."""
    owner = parameters_of(call.args[0]) if call.args else None
    path = dotted_name(owner) if owner is not None else None
    return path is not None and any(shapes.within(path, module) for module in modules)


def _classify_update_loop(context: FileContext, unit: Unit) -> bool:
    """A `for` whose body runs whole updates of its own optimizers (a WGAN critic's
    `for _ in range(n_critic):` zero_grad, backward and step) counts as one step of those
    optimizers that opens and closes its own windows: the block's other backwards may run
    before it. Only when every update and backward inside sits directly in the body, each
    step has its zero_grad before it there and each backward lies in such a window, and the
    backwards inside reach only the parameters of the optimizers stepped inside (nothing
    leaks into an optimizer whose zero_grad the reorder moves before the loop). False when
    the loop is not made of whole updates; why not, raised, when it is and breaks one of
    those conditions."""
    model, loop = context.model, unit.statement
    if not isinstance(loop, ast.For) or loop.orelse:
        return False
    body = {id(s) for s in loop.body}
    updates = [u for u in model.updates() if _inside(model, u.statement, loop)]
    backwards = [b for b in model.backwards() if _inside(model, b.statement, loop)]
    if not updates or any(id(e.statement) not in body for e in [*updates, *backwards]):
        return False
    if any(not _is_call_statement(e.statement) for e in [*updates, *backwards]):
        return False
    if any(model.events_within(s) for s in loop.body):
        return False
    steps = [u for u in updates if u.kind == "step"]
    if not steps or any(u.modules is None for u in updates):
        return False
    position = {id(s): i for i, s in enumerate(loop.body)}
    windows = []
    for step in steps:
        opened = [
            position[id(z.statement)]
            for z in updates
            if z.kind == "zero_grad"
            and position[id(z.statement)] < position[id(step.statement)]
            and covers(z.modules, step.modules)
        ]
        if not opened:
            raise NotReorderable(
                f"`{step.target}` steps inside the `for` on line {loop.lineno} without a "
                "zero_grad() before it in the loop's body"
            )
        windows.append((max(opened), position[id(step.statement)]))
    stepped = frozenset().union(*(s.modules for s in steps))
    for site in backwards:
        at = position[id(site.statement)]
        if not any(zero < at < step for zero, step in windows):
            raise NotReorderable(
                f"the backward on line {site.call.lineno} runs outside the zero_grad()..step() "
                f"windows of the `for` on line {loop.lineno}"
            )
        foreign = sorted(
            str(path) for path in model.modules_reached_by(site.id) if not _owner(path, stepped)
        )
        if foreign:
            raise NotReorderable(
                f"the backward on line {site.call.lineno}, inside the `for` on line "
                f"{loop.lineno}, also reaches `{foreign[0]}`, which no optimizer stepped in "
                "that loop owns (its gradient would reach another optimizer's step); detach "
                "what it reads from it to have the updates reordered around the loop"
            )
    first = steps[0]
    unit.kind, unit.own_window = "step", True
    unit.update = UpdateSite(first.id, "step", first.call, loop, first.target, stepped, ())
    return True


_EVENT_NAMES = {"backward": "a backward", "step": "an optimizer step", "zero_grad": "a zero_grad"}


def _events_said(kinds: list[str]) -> str:
    """`["zero_grad", "backward", "step"]` -> "a zero_grad, a backward and an optimizer
    step", each kind once, in order."""
    said = [_EVENT_NAMES.get(kind, kind) for kind in dict.fromkeys(kinds)] or ["autograd work"]
    return ", ".join(said[:-1]) + f" and {said[-1]}" if len(said) > 1 else said[0]


def _inside(model, statement: ast.stmt | None, outer: ast.stmt) -> bool:
    if statement is None:
        return False
    return any(s is outer for s in model.enclosing_statements(statement)[1:])


def _classify_call(context: FileContext, unit: Unit) -> None:
    """A statement calling a function of the file that runs one backward or one update counts
    as that event, where it is called; the event itself cannot be edited from here."""
    model = context.model
    events = model.events_within(unit.statement)
    line = unit.statement.lineno
    kinds = [model.update(i).kind if kind == "update" else kind for kind, i, _ in events]
    if not _is_call_statement(unit.statement):
        raise NotReorderable(
            f"the statement on line {line} runs {_events_said(kinds)} inside a function it "
            "calls, and is not a call alone that a reorder could move"
        )
    modules = [m for _, _, m in events]
    unit.called = True
    if set(kinds) == {"zero_grad"} and None not in modules:
        # `self.reset_grad()` zeroing every optimizer (StarGAN): one zero_grad of them all
        unit.kind = "zero"
        zeroed = frozenset().union(*modules)
        unit.update = UpdateSite(-1, "zero_grad", None, unit.statement, None, zeroed, ())
    elif len(events) > 1:
        raise NotReorderable(
            f"the call on line {line} runs {_events_said(kinds)} inside a function, which a "
            "reorder cannot take apart"
        )
    elif kinds[0] == "backward":
        unit.kind, unit.backward = "backward", model.backward(events[0][1])
    else:
        update = model.update(events[0][1])
        unit.kind = "step" if update.kind == "step" else "zero"
        unit.update = UpdateSite(
            update.id, update.kind, update.call, unit.statement, update.target, modules[0], ()
        )


def _refuse_forwards_across_steps(context: FileContext, units: list[Unit], order: list[int]):
    """A forward that ran after a step must still see the weights that step wrote: moving it
    before the step (or the step after it) would change what it computes, and every later
    value with it (a world model stepped before the rollout that uses it)."""
    position = {index: place for place, index in enumerate(order)}
    for s, step in enumerate(units):
        if step.kind != "step":
            continue
        for i, unit in enumerate(units):
            if i <= s or position[i] > position[s]:
                continue  # it ran before the step, or still runs after it
            called = context.model.modules_called_by(unit.statement)
            # a use of a stepped tensor (`log_alpha.exp()`) is named below, as what it reads
            forwards = [p for p in called if p is None or p[:1] != shapes.TENSOR_PATH]
            if any(path is None or _owner(path, step.update.modules) for path in forwards):
                raise NotReorderable(
                    f"line {unit.statement.lineno} runs a forward of weights that "
                    f"`{_optimizer(step)}` (line {step.statement.lineno}) has just stepped; "
                    "moving it before the step would change what it computes"
                )
            group = [step.statement] + [u.statement for u in units if u.attached_to == s]
            shared = next(
                (n for g in group if (n := _shared_name(context.model, unit.statement, g))), None
            )
            if step.own_window and shared is not None:
                raise NotReorderable(
                    f"line {unit.statement.lineno} and the `for` on line "
                    f"{step.statement.lineno} both use `{shared}`, which one of them binds; "
                    "running it before the loop would change what it reads"
                )
            named = _names_owned(unit.statement, step.update.modules)
            if named is not None:  # `ema_update(teacher, student)`: it reads the weights
                raise NotReorderable(
                    f"line {unit.statement.lineno} uses `{named}`, whose weights "
                    f"`{_optimizer(step)}` (line {step.statement.lineno}) has just stepped; "
                    "moving the step after it would change what it reads"
                )
            holders = context.model.holders_of(step.update.modules)
            used = _names_owned(unit.statement, holders) if holders else None
            if used is not None:  # `ema.update()` of `ema = EMA(D, 0.9)`: it may read them
                holder = next(h for h in sorted(holders) if shapes.within(used, h))
                raise NotReorderable(
                    f"line {unit.statement.lineno} uses `{holder}`, which keeps weights "
                    f"`{_optimizer(step)}` (line {step.statement.lineno}) has just stepped; "
                    "moving the step after it could change what it reads"
                )


def _shared_name(model, statement: ast.stmt, loop: ast.stmt) -> str | None:
    """A name `statement` reads that `loop` binds, or binds that `loop` reads."""
    return _reads_bound(model, statement, loop) or _reads_bound(model, loop, statement)


def _reads_bound(model, reader: ast.stmt, binder: ast.stmt) -> str | None:
    """A name `binder` binds that `reader` reads."""
    for node in ast.walk(binder):
        stored = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
        if stored and model.reads(reader, node.id):
            return node.id
    return None


def _names_owned(statement: ast.stmt, modules: frozenset[str]) -> str | None:
    """The first module (or parameter) of `modules` that `statement` names: passed to a
    helper (an EMA of the weights, a copy into a target network), read through
    `.parameters()`, `.state_dict()` or `.data`; or a tensor an optimizer steps itself
    (`shapes.TENSOR_PATH`), read in any way (SAC's `alpha = log_alpha.exp()`)."""
    tensors = [m.removeprefix(shapes.TENSOR_PATH) for m in modules if m[:1] == shapes.TENSOR_PATH]
    for node in ast.walk(statement):
        if isinstance(node, ast.Name | ast.Attribute):
            dotted = dotted_name(node)
            if dotted is None:
                continue
            if _owner(dotted, modules):
                return dotted
            tensor = next((t for t in tensors if shapes.within(dotted, t)), None)
            if tensor is not None:
                return tensor
    return None


def _refuse_jumps_across_updates(model, units: list[Unit], order: list[int]) -> None:
    """A statement that may leave the iteration early (`continue`, `break`, `return`, `raise`)
    must keep its place relative to every update: a step moved below `if ...: continue`
    would be skipped on the iterations that continue."""
    position = {index: place for place, index in enumerate(order)}
    updates = [i for i, u in enumerate(units) if u.kind in ("zero", "backward", "step")]
    for i, unit in enumerate(units):
        if not model.may_leave_iteration(unit.statement):
            continue
        for j in updates:
            if (i < j) != (position[i] < position[j]):
                raise NotReorderable(
                    f"line {unit.statement.lineno} may leave the iteration early; moving "
                    f"line {units[j].statement.lineno} across it would change when it runs"
                )


def _refuse_hand_updates(model, units: list[Unit]) -> None:
    """Weights changed in place outside an optimizer (`p.data -= lr * p.grad`, an update
    under `torch.no_grad()`) are a step the model does not see: no reorder is planned. Unless
    it comes after every backward and step of the block (a soft update of target networks at
    the end of an update): the reorder moves nothing across it."""
    events = [i for i, u in enumerate(units) if u.kind in ("zero", "backward", "step")]
    last = max(events, default=-1)
    stepped = [u.update.modules for u in units if u.kind == "step" and not u.own_window]
    for unit in units[: last + 1]:
        if unit.own_window and all(
            _names_owned(s, unit.update.modules) is not None
            and not any(_names_owned(s, other) for other in stepped)
            for s in unit.statement.body
            if model.updates_weights_by_hand(s)
        ):
            continue  # WGAN's clipping of the critic's own weights in its loop of updates
        if model.updates_weights_by_hand(unit.statement):
            raise NotReorderable(
                f"line {unit.statement.lineno} changes weights in place outside an optimizer"
            )


def _optimizer(unit: Unit) -> str:
    """How the code names the optimizer a step or zero_grad unit updates (`optimizers[k]`)."""
    call = unit.update.call
    known = unit.update.target is not None
    if not known and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        return ast.unparse(call.args[0] if call.args else call.func.value)
    return str(unit.update.target)


def _keyword_of(statement: ast.stmt) -> str:
    return type(statement).__name__.lower().replace("asyncfor", "for")


def _refuse_repeated_steps(units: list[Unit]) -> None:
    """Two steps of one optimizer in an iteration: the second used gradients computed after
    the first had changed the weights, so no order of backwards before steps reproduces it."""
    seen: dict[frozenset, Unit] = {}
    for unit in units:
        if unit.kind != "step":
            continue
        modules = unit.update.modules
        for other_modules, other in seen.items():
            if any(
                _owner(m, other_modules) or _owner(o, modules)
                for m in modules
                for o in other_modules
            ):
                first, second = _optimizer(other), _optimizer(unit)
                who = f"`{first}` steps" if first == second else f"`{first}` and `{second}` step"
                raise RepeatedStep(
                    f"{who} the same parameters twice in one iteration (lines "
                    f"{other.statement.lineno} and {unit.statement.lineno}); the second step "
                    "used gradients of weights the first had changed, which no reorder can "
                    "reproduce"
                )
        seen[modules] = unit


def _drop_repeated_steps(units: list[Unit]) -> list[int]:
    """Mark every step but the last of an optimizer stepping twice in a row, with backwards
    and forwards but no `zero_grad` of it between, as dropped; the units dropped. A step with
    a gradient user just before it or a scheduler just after it is kept (nothing dropped)."""
    last: dict[str, int] = {}
    dropped = []
    for index, unit in enumerate(units):
        if unit.kind == "zero":
            last = {
                t: i for t, i in last.items() if not covers(unit.update.modules, _modules(units[i]))
            }
        if unit.kind != "step" or unit.called or unit.own_window:
            continue
        target = unit.update.target
        earlier = last.get(target)
        if earlier is not None and not _has_companions(units, earlier):
            units[earlier].kind = "dropped"
            dropped.append(earlier)
        last[target] = index
    return dropped


def _modules(unit: Unit) -> frozenset[str]:
    return unit.update.modules or frozenset()


def _has_companions(units: list[Unit], index: int) -> bool:
    """A gradient user right before the step, or a scheduler / scaler.update right after."""
    before = index > 0 and units[index - 1].kind == "before_step"
    after = index + 1 < len(units) and units[index + 1].kind == "after_step"
    return before or after


def _is_call_statement(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)


def _has_update_inside(statement: ast.stmt, updates: dict, backwards: dict) -> bool:
    if not isinstance(statement, ast.stmt) or _is_call_statement(statement):
        return False
    return any(
        id(node) in updates or id(node) in backwards
        for node in ast.walk(statement)
        if node is not statement
    )


def _is_after_step(context: FileContext, statement: ast.stmt) -> bool:
    """`scheduler.step()` or `scaler.update()`."""
    if not _is_call_statement(statement):
        return False
    func = statement.value.func
    if not isinstance(func, ast.Attribute):
        return False
    receiver = dotted_name(func.value)
    shape = context.model.shape_before(statement, receiver) if receiver else None
    if func.attr == "update" and shape == ("scaler",):
        return True
    return func.attr == "step" and isinstance(shape, tuple) and shape[0] == "scheduler"


def _attach(model, units: list[Unit]) -> None:
    """Gradient users go with the next step; schedulers and scaler.update with the previous."""
    steps = [i for i, u in enumerate(units) if u.kind == "step"]
    if not steps:
        raise NotReorderable(
            "the backward and the optimizer steps are not statements of one block (one is "
            "inside a branch, a `with`, a loop or a function): no reorder of a block moves them"
        )
    for index, unit in enumerate(units):
        if unit.kind == "before_step":
            later = [s for s in steps if s > index]
            unit.attached_to = later[0] if later else None
            if unit.attached_to is None:
                unit.kind = "other"
        elif unit.kind == "after_step":
            earlier = [s for s in steps if s < index]
            unit.attached_to = earlier[-1] if earlier else None
            if unit.attached_to is None:
                unit.kind = "other"
    _attach_to_loops(model, units, steps)


def _attach_to_loops(model, units: list[Unit], steps: list[int]) -> None:
    """A statement after a loop of whole updates that reads what the loop bound (the
    critic's `print(errD.item())`) stays right after the loop, with the statements after it
    that read what it binds."""
    for step in steps:
        if not units[step].own_window:
            continue
        group = [units[step].statement]
        for index in range(step + 1, len(units)):
            unit = units[index]
            if unit.kind != "other":
                continue
            if any(_reads_bound(model, unit.statement, g) for g in group):
                unit.kind, unit.attached_to = "after_step", step
                group.append(unit.statement)


# ---------------------------------------------------------------------------- windows
def _windows(units: list[Unit]) -> dict[int, tuple[int, frozenset[str]]]:
    """For each step unit: (index of the zero_grad that opens its window, its modules)."""
    windows = {}
    for index, unit in enumerate(units):
        if unit.kind != "step":
            continue
        modules = unit.update.modules
        if unit.own_window:  # a loop of whole updates: no backward of the block is inside
            windows[index] = (index, modules)
            continue
        opening = [
            i
            for i in range(index)
            if units[i].kind == "zero" and covers(units[i].update.modules, modules)
        ]
        if not opening:
            raise NotReorderable(_no_window(units, index))
        windows[index] = (opening[-1], modules)
    return windows


def _no_window(units: list[Unit], index: int) -> str:
    """Why the step at `index` has no update window: its gradients are cleared only after it
    in the block (`step(); zero_grad()`, which clears them for the next iteration as well), or
    nowhere in it (cleared by code outside the block, such as a `process()` method the
    caller runs first, or accumulating across iterations: not this fix's business)."""
    unit = units[index]
    closing = [
        later
        for later in units[index + 1 :]
        if later.kind == "zero" and covers(later.update.modules, unit.update.modules)
    ]
    if closing:
        return (
            f"`{_optimizer(unit)}`'s gradients are cleared after its step (line "
            f"{closing[0].statement.lineno}) rather than before it in the same block, and the "
            "reorder needs the zero_grad() that starts its update"
        )
    return (
        f"`{_optimizer(unit)}` steps without a zero_grad() before it in the same block (its "
        "gradients are cleared elsewhere, as by a method called before this one, or "
        "accumulate across iterations), and the reorder needs the zero_grad() that starts "
        "its update"
    )


def _owner(path: str | None, modules: frozenset[str]) -> bool:
    return path is not None and any(shapes.within(path, m) for m in modules)


# ---------------------------------------------------------------------------- backward calls
def _plan_backward_arguments(context: FileContext, units: list[Unit], windows: dict) -> None:
    model, layout = context.model, context.layout
    backward_units = [i for i, u in enumerate(units) if u.kind == "backward"]
    later_reach = {
        i: {
            consumer
            for j in backward_units
            if j > i
            for consumer in model.observations.reached_consumers.get(units[j].backward.id, ())
        }
        for i in backward_units
    }
    all_modules = [modules for _, modules in windows.values()]
    for i in backward_units:
        site = units[i].backward
        needs_retain = site.id in later_reach[i]
        owners = [modules for step, (zero, modules) in windows.items() if zero < i < step]
        if not owners:
            raise NotReorderable(
                f"the backward on line {site.call.lineno} runs outside every optimizer's "
                "zero_grad()..step() window"
            )
        reached = model.modules_reached_by(site.id)
        foreign = any(
            path is None or not any(_owner(path, m) for m in owners)
            for path in reached
            if path is None or any(_owner(path, m) for m in all_modules)
        )
        inputs = inputs_expression(sorted({p for m in owners for p in m}))
        if foreign and context.options.restrict_style is RestrictStyle.autograd_grad:
            replacement = _autograd_grad_form(context, units[i], inputs, needs_retain)
            if replacement is None:
                raise NotReorderable(
                    f"the backward on line {site.call.lineno} cannot be written as "
                    "torch.autograd.grad (--restrict-style autograd-grad)"
                )
            units[i].edits = [replacement]
            continue
        if units[i].called:
            if needs_retain and site.retain is not True or foreign:
                raise NotReorderable(
                    f"the backward on line {site.call.lineno}, inside the function called on "
                    f"line {units[i].statement.lineno}, would need retain_graph or inputs"
                )
            continue
        edits, added = retain_edits(layout, site, needs_retain)
        if edits is None:
            raise NotReorderable(
                f"the retain_graph argument on line {site.call.lineno} cannot be removed alone"
            )
        if foreign and any(k.arg == "inputs" for k in site.call.keywords):
            raise NotReorderable(
                f"the backward on line {site.call.lineno} already restricts its inputs"
            )
        if foreign:
            added.append(f"inputs={inputs}")
        if added and edits and not needs_retain:
            # the retain keyword goes and the new ones take its place (appended after its
            # removal, they would make `backward(, inputs=...)` of `backward(retain_graph=True)`)
            start, end = layout.node_range(site.retain_keyword)
            edits = [Edit(start, end, ", ".join(added))]
        elif added:
            edits += [append_keywords(layout, site.call, added)]
            edits += renamed_retain_variables(layout, site.call, edits)
        units[i].edits = edits


def _autograd_grad_form(
    context: FileContext, unit: Unit, inputs: str, needs_retain: bool
) -> Edit | None:
    """`loss.backward()` as `torch.autograd.grad` over the window's parameters, accumulated
    into `.grad` exactly as backward would (the opt-in style for code that avoids `inputs=`)."""
    call = unit.backward.call
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "backward"):
        return None
    if call.args or any(k.arg not in ("retain_graph", "inputs") for k in call.keywords):
        return None
    if context.model.symbols.imports.get("torch") != "torch":
        return None
    layout = context.layout
    start, end = layout.node_range(call.func.value)
    loss = layout.text[start:end]
    names = [n for n in ("grads", "param", "grad") if n not in context.model.names_in_use()]
    if len(names) < 3:
        return None
    grads, param, grad = names
    retain = ", retain_graph=True" if needs_retain else ""
    indent, unit_indent = layout.indent(unit.statement), layout.indent_unit(unit.statement, None)
    accumulate = f"{grad} if {param}.grad is None else {param}.grad + {grad}"
    lines = [
        f"{grads} = torch.autograd.grad({loss}, {inputs}{retain}, allow_unused=True)",
        f"for {param}, {grad} in zip({inputs}, {grads}):",
        f"{unit_indent}if {grad} is not None:",
        f"{unit_indent * 2}{param}.grad = {accumulate}",
    ]
    newline = layout.newline
    text = (newline + indent).join(lines)
    statement_start, statement_end = layout.node_range(unit.statement)
    return Edit(statement_start, statement_end, text)


def retain_edits(
    layout, site: BackwardSite, needs_retain: bool
) -> tuple[list[Edit] | None, list[str]]:
    """(edits to the existing retain_graph keyword, keywords to append)."""
    keyword = site.retain_keyword
    if needs_retain:
        if site.retain is True:
            return [], []
        if keyword is not None:
            start, end = layout.node_range(keyword.value)
            return [Edit(start, end, "True")], []
        return [], ["retain_graph=True"]
    if keyword is None:
        return [], []
    removal = layout.remove_keyword(site.call, keyword)
    return (None, []) if removal is None else ([removal], [])


def append_keywords(layout, call: ast.Call, keywords: list[str]) -> Edit:
    """Insert keyword arguments at the end of `call`, before its closing parenthesis."""
    _, end = layout.node_range(call)
    close = end - 1
    text = ", ".join(keywords)
    before = layout.text[layout.node_range(call.func)[1] : close].rstrip()
    if before.endswith("("):
        return Edit(close, close, text)
    if before.endswith(","):
        return Edit(close, close, text if layout.text[close - 1].isspace() else " " + text)
    return Edit(close, close, ", " + text)


# what a fix's title adds when it renames `retain_variables=` (`titled_with_rename`)
RENAME_NOTE = "; renames the pre-0.4 `retain_variables=` to `retain_graph=`"


def titled_with_rename(title: str, edits) -> str:
    """`title`, with `RENAME_NOTE` when one of `edits` is a `renamed_retain_variables` edit:
    the rename is not what the finding is about, so the title says it."""
    return title + RENAME_NOTE if any(map(_renames, edits)) else title


def _renames(edit: Edit) -> bool:
    return edit.text == "retain_graph" and edit.end - edit.start == len("retain_variables")


def renamed_retain_variables(layout, call: ast.Call, edits: list[Edit]) -> list[Edit]:
    """The edit renaming `retain_variables=` (its name before PyTorch 0.4) to
    `retain_graph=` in a backward call that gets new keywords and keeps it: `inputs=`
    exists from PyTorch 1.8, which knows only the new name. Empty when there is none."""
    keyword = next((k for k in call.keywords if k.arg == "retain_variables"), None)
    if keyword is None:
        return []
    start = layout.node_range(keyword)[0]
    end = start + len("retain_variables")
    if any(edit.start < end and start < edit.end for edit in edits):
        return []  # the keyword is removed
    return [Edit(start, end, "retain_graph")]


def optimizer_expression(step) -> str:
    """How the code names the stepped optimizer: `opt` in `opt.step()` or
    `scaler.step(opt)`."""
    func = step.call.func
    if isinstance(func, ast.Attribute) and func.attr == "step" and step.call.args:
        return ast.unparse(step.call.args[0])
    return ast.unparse(func.value) if isinstance(func, ast.Attribute) else str(step.target)


def inputs_expression(modules: list[str]) -> str:
    """The parameters of `modules` (paths as the code names them; a tensor's path marked
    with `shapes.TENSOR_PATH`) as a list expression."""
    if len(modules) == 1 and not modules[0].startswith(shapes.TENSOR_PATH):
        return f"list({modules[0]}.parameters())"
    items = [
        m.removeprefix(shapes.TENSOR_PATH)
        if m.startswith(shapes.TENSOR_PATH)
        else f"*{m}.parameters()"
        for m in modules
    ]
    return "[" + ", ".join(items) + "]"


# ---------------------------------------------------------------------------- the new order
def _new_order(units: list[Unit]) -> list[int]:
    kinds = [u.kind for u in units]
    steps = [i for i, kind in enumerate(kinds) if kind == "step"]
    zeros = [i for i, kind in enumerate(kinds) if kind == "zero"]
    last_update = max(
        i for i, kind in enumerate(kinds) if kind in ("step", "zero", "backward", "dropped")
    )
    # Statements before the first zero_grad stay where they are: the zero_grads only have to
    # come before the first backward.
    lead = [i for i in range(zeros[0]) if kinds[i] == "other"] if zeros else []
    # A guarded zero_grad stays with its guard's statements, before its window's backwards
    # (the other windows' backwards are restricted with inputs= and cannot leak into it).
    guarded_zeros = [i for i in zeros if units[i].guard is not None]
    zeros = [i for i in zeros if i not in guarded_zeros]
    middle = [
        i
        for i, kind in enumerate(kinds)
        if (kind in ("other", "backward") or i in guarded_zeros)
        and i < last_update
        and i not in lead
    ]
    tail = [i for i, kind in enumerate(kinds) if kind == "other" and i > last_update]
    updates = []
    for step in steps:
        attached = [i for i, u in enumerate(units) if u.attached_to == step]
        updates += [i for i in attached if kinds[i] == "before_step"]
        updates.append(step)
        updates += [i for i in attached if kinds[i] == "after_step"]
    order = lead + zeros + middle + updates + tail
    dropped = [i for i, kind in enumerate(kinds) if kind == "dropped"]
    if sorted(order + dropped) != list(range(len(units))):
        return list(range(len(units)))
    return order


def _shift(edits: list[Edit], delta: int) -> list[Edit]:
    return [Edit(e.start + delta, e.end + delta, e.text) for e in edits]


# ---------------------------------------------------------------------------- recompute
def plan_recompute(
    context: FileContext,
    backward_id: int,
    event: ast.stmt,
    modules: frozenset[str] | None,
) -> Plan | NotReorderable:
    """An unsafe fix: build again, after `event` (the step that changed `modules`, or the
    backward that freed the graph) and just before its first reader, everything the failing
    backward's loss reads that was built before the event from a forward of those modules
    (by default, the modules the backward reaches): the DCGAN idiom of recomputing the
    discriminator's output after its step, StyleGAN2's lazy regulariser recomputing its forward,
    a multi-task loss recomputing the shared encoder's features. Only whole assignments in the
    event's own block are copied, and only when nothing else between them and the event
    rebinds what they read or write. When the event and the backward both run in a helper
    of the file, the event is the helper's call that ran it last before the failing call."""
    model = context.model
    backward = model.backward(backward_id)
    if backward.statement is None or id(event) not in model.parents:
        return NotReorderable("the backward or the event could not be located")
    _, block = model.block_of(event)
    anchor = next((s for s in model.enclosing_statements(backward.statement) if s in block), None)
    if anchor is None or block.index(anchor) <= block.index(event):
        # both inside a helper (`update(opt, loss)` called twice): recompute where it is called
        called = _called_event(model, backward_id, event)
        if called is not None:
            event, anchor, modules = called
            _, block = model.block_of(event)
    if anchor is None or block.index(anchor) <= block.index(event):
        return NotReorderable("the backward does not follow the event in its block")
    at = block.index(event)
    later = block[at + 1 : block.index(anchor) + 1]
    reached = modules or frozenset(p for p in model.modules_reached_by(backward_id) if p)
    copies = _recomputed(context, block[:at], later, reached)
    if not copies or not all(context.layout.stands_alone(s) for s in copies):
        return NotReorderable("no forward the backward needs can be run again after it")
    names = {t for s in copies for t in _targets(s)}
    reader = _first_reader(context, later, names)
    rebinding = next((s for s in later if s is not reader and _assigns(s, names)), None)
    if rebinding is not None and rebinding.lineno < reader.lineno:
        return NotReorderable(
            f"line {rebinding.lineno} binds again what the forward to run again binds"
        )
    layout = context.layout
    lines = [layout.text[slice(*layout.node_range(s))] for s in copies]
    described = [f"`{ast.unparse(s)}` (line {s.lineno})" for s in copies]
    return Plan([layout.insert_before(reader, lines)], described)


def _called_event(model, backward_id: int, event: ast.stmt):
    """For a backward and an event (a step, a freeing backward) inside a helper of the file
    (`update(opt_model, model_loss)`, then `update(opt_actor, actor_loss)`): (the last call
    before the failing one, in the caller's block, that ran the event; the failing call;
    the modules the event touched there, as the caller names them), or None."""
    anchor = model.reached_through_call(backward_id)
    if anchor is None or id(anchor) not in model.parents:
        return None
    _, block = model.block_of(anchor)
    ids = [("update", u.id) for u in model.updates() if u.statement is event]
    ids += [("backward", b.id) for b in model.backwards() if b.statement is event]
    if len(ids) != 1:
        return None
    found = None
    for statement in block[: block.index(anchor)]:
        ran = [m for kind, i, m in model.events_within(statement) if (kind, i) == ids[0]]
        if ran:
            found = (statement, anchor, ran[-1] if ids[0][0] == "update" else None)
    return found


def _targets(statement: ast.stmt) -> list[str]:
    """The names a single-target assignment binds (`x = ...`, `a, b = ...`), else none."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return []
    target = statement.targets[0]
    elements = target.elts if isinstance(target, ast.Tuple) else [target]
    if not all(isinstance(e, ast.Name) for e in elements):
        return []
    return [e.id for e in elements]


def _recomputed(
    context: FileContext, before: list[ast.stmt], later: list[ast.stmt], reached: frozenset
) -> list[ast.stmt]:
    """The assignments before the event that `later` needs rebuilt: those running a forward
    of `reached` modules or reading what such an assignment bound, which `later` (or another
    rebuilt one) reads; none when something else in between rebinds their names."""
    model = context.model
    tainted: list[ast.stmt] = []
    names: set[str] = set()
    for statement in before:
        targets = _targets(statement)
        called = model.modules_called_by(statement)
        forward = any(_owner(path, reached) for path in called)
        if targets and (forward or any(model.reads(statement, n) for n in names)):
            tainted.append(statement)
            names |= set(targets)
    needed = _read_before_bound(model, later, names)
    chosen: list[ast.stmt] = []
    for statement in reversed(tainted):
        targets = set(_targets(statement))
        if needed & targets:
            chosen.insert(0, statement)
            # what it binds is rebuilt by it: an earlier assignment of those names is not
            # needed again (`G_ = G(z_)` written twice in the iteration runs once more)
            needed -= targets
            needed |= {n for n in names if model.reads(statement.value, n)}
    for statement in chosen:
        guarded = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
        rest = before[before.index(statement) + 1 :]
        if any(s not in chosen and _assigns(s, guarded) for s in rest):
            return []
    return chosen


def _read_before_bound(model, statements: list[ast.stmt], names: set[str]) -> set[str]:
    """The names of `names` that `statements` read before one of them binds it again (the
    generator's `pred_fake, feats_fake = netD(fake)` after the critic's step makes the
    critic's `pred_fake` from before it no longer needed)."""
    read, bound = set(), set()
    for statement in statements:
        read |= {n for n in names - bound if model.reads(statement, n)}
        bound |= {n for n in names if _assigns(statement, {n})}
    return read


def _first_reader(context: FileContext, later: list[ast.stmt], names: set[str]) -> ast.stmt:
    """The first statement of `later` that reads one of `names`; inside an `if` body when
    only the body reads them (the lazy regulariser recomputes under its own `if`)."""
    model = context.model
    for statement in later:
        if not any(model.reads(statement, n) for n in names):
            continue
        guard = isinstance(statement, ast.If) and not statement.orelse
        if guard and not any(model.reads(statement.test, n) for n in names):
            return _first_reader(context, statement.body, names)
        return statement
    return later[-1]


def _assigns(statement: ast.stmt, names: set[str]) -> bool:
    return any(
        isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names
        for n in ast.walk(statement)
    )
