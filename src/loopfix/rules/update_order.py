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
from loopfix.model.graphs import BackwardSite, UpdateSite
from loopfix.model.symbols import dotted_name
from loopfix.options import RestrictStyle
from loopfix.rules.base import FileContext

GRADIENT_USERS = re.compile(r"\.grad\b|clip_grad_(norm|value)_|\.unscale_\(")


@dataclass
class Unit:
    """One statement of the block with the comment and blank lines above it."""

    statement: ast.stmt
    start: int
    end: int
    kind: str = "other"  # zero | backward | step | before_step | after_step | other
    update: UpdateSite | None = None
    backward: BackwardSite | None = None
    attached_to: int | None = None  # index of the step unit it belongs to
    edits: list[Edit] = field(default_factory=list)


def plan_reorder(context: FileContext, backward_id: int) -> list[Edit] | None:
    """Edits that reorder the updates around `backward_id`, or None when not provably right."""
    model = context.model
    statement = model.backward(backward_id).statement
    if statement is None:
        return None
    _, block = model.block_of(statement)
    units = _units(context, block)
    if units is None or not _classify(context, units):
        return None
    windows = _windows(units)
    if windows is None:
        return None
    if not _plan_backward_arguments(context, units, windows):
        return None
    order = _new_order(units)
    if order == list(range(len(units))) and not any(u.edits for u in units):
        return None
    text, newline = context.text, context.layout.newline
    pieces = [apply_edits(text[u.start : u.end], _shift(u.edits, -u.start)) for u in units]
    region = "".join(
        p if p.endswith(("\n", "\r")) else p + newline for p in (pieces[i] for i in order)
    )
    if not pieces[-1].endswith(("\n", "\r")):  # the file had no final newline: keep it so
        region = region[: -len(newline)]
    return [Edit(units[0].start, units[-1].end, region)]


# ---------------------------------------------------------------------------- units
def _units(context: FileContext, block: list[ast.stmt]) -> list[Unit] | None:
    layout = context.layout
    units, cursor = [], None
    for statement in block:
        if not layout.stands_alone(statement):
            return None
        start = layout.line_start(statement.lineno)
        if cursor is not None:
            start = cursor  # blank and comment lines above travel with the statement
        end = layout.line_end(statement.end_lineno)
        units.append(Unit(statement, start, end))
        cursor = end
    if units:
        units[0].start = layout.leading_start(units[0].statement)
    return units


def _classify(context: FileContext, units: list[Unit]) -> bool:
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
        elif _has_update_inside(unit.statement, by_statement_update, by_statement_backward):
            return False  # an update inside an `if`/loop: the order is not static
        elif GRADIENT_USERS.search(ast.unparse(unit.statement)):
            unit.kind = "before_step"
        elif _is_after_step(context, unit.statement):
            unit.kind = "after_step"
    if any(u.kind == "step" and u.update.modules is None for u in units):
        return False
    return _attach(units)


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


def _attach(units: list[Unit]) -> bool:
    """Gradient users go with the next step; schedulers and scaler.update with the previous."""
    steps = [i for i, u in enumerate(units) if u.kind == "step"]
    if not steps:
        return False
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
    return True


# ---------------------------------------------------------------------------- windows
def _windows(units: list[Unit]) -> dict[int, tuple[int, frozenset[str]]] | None:
    """For each step unit: (index of the zero_grad that opens its window, its modules)."""
    windows = {}
    for index, unit in enumerate(units):
        if unit.kind != "step":
            continue
        modules = unit.update.modules
        opening = [
            i
            for i in range(index)
            if units[i].kind == "zero" and _covers(units[i].update.modules, modules)
        ]
        if not opening:
            return None  # gradients accumulate across iterations: not this fix's business
        windows[index] = (opening[-1], modules)
    return windows


def _covers(zeroed: frozenset[str] | None, modules: frozenset[str]) -> bool:
    if zeroed is None:
        return False
    return all(any(m == z or m.startswith(z + ".") for z in zeroed) for m in modules)


def _owner(path: str | None, modules: frozenset[str]) -> bool:
    return path is not None and any(path == m or path.startswith(m + ".") for m in modules)


# ---------------------------------------------------------------------------- backward calls
def _plan_backward_arguments(context: FileContext, units: list[Unit], windows: dict) -> bool:
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
            return False
        reached = model.modules_reached_by(site.id)
        foreign = any(
            path is None or not any(_owner(path, m) for m in owners)
            for path in reached
            if path is None or any(_owner(path, m) for m in all_modules)
        )
        inputs = _inputs_expression(sorted({p for m in owners for p in m}))
        if foreign and context.options.restrict_style is RestrictStyle.autograd_grad:
            replacement = _autograd_grad_form(context, units[i], inputs, needs_retain)
            if replacement is None:
                return False
            units[i].edits = [replacement]
            continue
        edits, added = _retain_edits(layout, site, needs_retain)
        if edits is None:
            return False
        if foreign:
            added.append(f"inputs={inputs}")
        if added:
            edits.append(_append_keywords(layout, site.call, added))
        units[i].edits = edits
    return True


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


def _retain_edits(
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


def _append_keywords(layout, call: ast.Call, keywords: list[str]) -> Edit:
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


def _inputs_expression(modules: list[str]) -> str:
    if len(modules) == 1:
        return f"list({modules[0]}.parameters())"
    return "[" + ", ".join(f"*{m}.parameters()" for m in modules) + "]"


# ---------------------------------------------------------------------------- the new order
def _new_order(units: list[Unit]) -> list[int]:
    kinds = [u.kind for u in units]
    steps = [i for i, kind in enumerate(kinds) if kind == "step"]
    zeros = [i for i, kind in enumerate(kinds) if kind == "zero"]
    last_update = max(i for i, kind in enumerate(kinds) if kind in ("step", "zero", "backward"))
    # Statements before the first zero_grad stay where they are: the zero_grads only have to
    # come before the first backward.
    lead = [i for i in range(zeros[0]) if kinds[i] == "other"] if zeros else []
    middle = [
        i
        for i, kind in enumerate(kinds)
        if kind in ("other", "backward") and i < last_update and i not in lead
    ]
    tail = [i for i, kind in enumerate(kinds) if kind == "other" and i > last_update]
    updates = []
    for step in steps:
        attached = [i for i, u in enumerate(units) if u.attached_to == step]
        updates += [i for i in attached if kinds[i] == "before_step"]
        updates.append(step)
        updates += [i for i in attached if kinds[i] == "after_step"]
    order = lead + zeros + middle + updates + tail
    return order if sorted(order) == list(range(len(units))) else list(range(len(units)))


def _shift(edits: list[Edit], delta: int) -> list[Edit]:
    return [Edit(e.start + delta, e.end + delta, e.text) for e in edits]
