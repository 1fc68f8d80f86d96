"""Gradients handed from one module's parameters to another's: A3C's workers backpropagate
into a local copy of the model and give its gradients to the shared model, whose optimizer
steps (`for g, l in zip(shared.parameters(), local.parameters()): g._grad = l.grad`), in the
loop itself or in a function of the project it calls (`ensure_shared_grads(model,
shared_model)`).

Only the syntax is read here; which backward reaches the local module and which optimizer
steps the shared one are the loop model's facts (`LoopModel.gradient_handovers`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from loopfix.model.index import walk
from loopfix.model.symbols import (
    Symbols,
    dotted_name,
    parameter_defaults,
    parameters_of,
    project_callees,
)

GRADIENT_ATTRIBUTES = frozenset({"grad", "_grad"})


@dataclass(frozen=True)
class Handover:
    statement: ast.stmt  # the statement of the loop that hands them over (or calls what does)
    assignment: ast.Assign  # `g._grad = l.grad`
    source: str  # the module whose gradients are handed over, as the loop names it
    target: str  # the module whose parameters receive them
    # the project function the statement calls that hands them over (None: the loop does),
    # and the source and target as that function names them (its parameters)
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    own_source: str = ""
    own_target: str = ""
    # the hand-over stops once the target has gradients (`if shared_param.grad is not None:
    # return`): it relies on the target's `.grad` staying the source's own tensor
    once: bool = False


def handovers_in(
    statement: ast.stmt, symbols: Symbols, known_zero_grads: frozenset[int] = frozenset()
) -> list[Handover]:
    """The hand-overs `statement` makes: it is a `for` over two modules' parameters side by
    side that assigns one's `.grad` (or `._grad`) from the other's, or it calls a project
    function whose body does it with modules it is given (their paths are the arguments').
    A function that also clears or sets gradients is left out, unless what it does is a
    `zero_grad()` call among `known_zero_grads` (node ids): the loop model knows which
    parameters that call clears (MorvanZhou's `push_and_pull` zeroes the shared optimizer,
    backpropagates, hands the gradients over and steps, all in one helper)."""
    if isinstance(statement, ast.For):
        return [
            Handover(statement, assignment, source, target, once=once)
            for assignment, source, target, once in _handed_over(statement)
        ]
    if not (isinstance(statement, ast.Expr | ast.Assign) and isinstance(statement.value, ast.Call)):
        return []  # (`loss = push_and_pull(...)` hands over too)
    call, found = statement.value, []
    for function in project_callees(call.func, symbols):
        passed = _passed(function, call)
        handed = [
            (assignment, source, target, once and not _guard_ruled_out(n, function, call))
            for n in walk(function)
            if isinstance(n, ast.For)
            for assignment, source, target, once in _handed_over(n)
        ]
        handing = {id(assignment.targets[0]) for assignment, *_ in handed}
        if any(
            clears_gradients(n) and id(n) not in handing and id(n) not in known_zero_grads
            for n in walk(function)
        ):
            continue  # it clears or sets gradients besides (`p.grad = None`)
        for assignment, source, target, once in handed:
            if source in passed and target in passed:
                found.append(
                    Handover(
                        statement,
                        assignment,
                        passed[source],
                        passed[target],
                        function,
                        source,
                        target,
                        once,
                    )
                )
    return found


def _handed_over(loop: ast.For) -> list[tuple[ast.Assign, str, str, bool]]:
    """(assignment, source path, target path, once) for `for a, b in zip(A.parameters(),
    B.parameters()): a._grad = b.grad` (either order, `.grad` or `._grad` on either side, the value
    possibly copied: `b.grad.clone()`); `once`: the loop leaves when the target already
    has a gradient (`if b.grad is not None: return`, the guard of ikostrikov's and
    dgriff777's `ensure_shared_grads`)."""
    target, iterable = loop.target, loop.iter
    if not (
        isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
        and isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id == "zip"
        and len(iterable.args) == 2
    ):
        return []
    owners = [_parameters_of(argument) for argument in iterable.args]
    if None in owners:
        return []
    names = {element.id: owner for element, owner in zip(target.elts, owners, strict=True)}
    found: list[tuple[ast.Assign, str, str, bool]] = []
    for node in walk(loop):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        assigned = node.targets[0]
        if not (
            isinstance(assigned, ast.Attribute)
            and assigned.attr in GRADIENT_ATTRIBUTES
            and isinstance(assigned.value, ast.Name)
            and assigned.value.id in names
        ):
            continue
        read = _gradient_read(node.value)
        if read is not None and read in names and read != assigned.value.id:
            once = _leaves_once_given(loop, assigned.value.id)
            found.append((node, names[read], names[assigned.value.id], once))
    handing = {id(assignment.targets[0]) for assignment, *_ in found}
    if any(clears_gradients(n) and id(n) not in handing for n in walk(loop)):
        return []  # it also clears or sets gradients (`local_param.grad = None`)
    return found


def _leaves_once_given(loop: ast.For, name: str) -> bool:
    """The loop holds `if <name>.grad is not None: return` (or `break`; the test may add
    conditions with `and`): it hands nothing over once `name` has a gradient."""
    return _guard_conditions(loop, name) is not None


def _guard_conditions(loop: ast.For, name: str) -> list[ast.expr] | None:
    """The other conditions `and`-ed to the `_leaves_once_given` guard (`not gpu` in
    dgriff777's `if shared_param.grad is not None and not gpu: return`); None without the
    guard."""
    for node in walk(loop):
        if not (isinstance(node, ast.If) and node.body):
            continue
        if not isinstance(node.body[0], ast.Return | ast.Break):
            continue
        test = node.test
        tests = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        )
        if any(_has_gradient(t, name) for t in tests):
            return [t for t in tests if not _has_gradient(t, name)]
    return None


def _guard_ruled_out(loop: ast.For, function, call: ast.Call) -> bool:
    """Whether a condition of the guard is false for this call: a parameter (`gpu`, `not
    gpu`) the call gives a literal for, or leaves at a literal default (`gpu=True`: the
    guard never returns, the hand-over runs every time)."""
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    elements = loop.target.elts if isinstance(loop.target, ast.Tuple) else []
    guards = [_guard_conditions(loop, e.id) for e in elements if isinstance(e, ast.Name)]
    conditions = next((g for g in guards if g is not None), None)
    if not conditions:
        return False
    literals = {a.arg: d for a, d in parameter_defaults(function.args)}
    if names[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute):
        names = names[1:]
    literals.update(zip(names, call.args, strict=False))
    literals.update((k.arg, k.value) for k in call.keywords if k.arg)
    for condition in conditions:
        negated = isinstance(condition, ast.UnaryOp) and isinstance(condition.op, ast.Not)
        name = condition.operand if negated else condition
        value = literals.get(name.id) if isinstance(name, ast.Name) else None
        if isinstance(value, ast.Constant) and bool(value.value) == negated:
            return True
    return False


def _has_gradient(test: ast.expr, name: str) -> bool:
    """`name.grad is not None` (or `._grad`)."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and isinstance(test.left, ast.Attribute)
        and test.left.attr in GRADIENT_ATTRIBUTES
        and isinstance(test.left.value, ast.Name)
        and test.left.value.id == name
    )


def clears_gradients(node: ast.AST) -> bool:
    """`p.grad = ...`, `del p.grad`, `p.grad.zero_()`, `opt.zero_grad()`: a gradient set or
    cleared."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
        return node.attr in GRADIENT_ATTRIBUTES
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = node.func.attr
        return name == "zero_grad" or (name.endswith("_") and ".grad" in ast.unparse(node.func))
    return False


def _parameters_of(node: ast.expr) -> str | None:
    """`model` for `model.parameters()`."""
    owner = parameters_of(node)
    return dotted_name(owner) if owner is not None else None


def _gradient_read(value: ast.expr) -> str | None:
    """`l` for `l.grad`, `l.grad.clone()`, `l.grad.data`, `l.grad.detach().clone()`, and the
    same through `l._grad` (the attribute `.grad` reads)."""
    node = value
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        else:
            break
    if (
        isinstance(node, ast.Attribute)
        and node.attr in GRADIENT_ATTRIBUTES
        and isinstance(node.value, ast.Name)
    ):
        return node.value.id
    return None


def _passed(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> dict[str, str]:
    """Parameter name -> the path of the module the call passes it (names and attributes
    only, by position or keyword)."""
    parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
    if parameters[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute):
        parameters = parameters[1:]  # a method: the receiver is not among the arguments
    passed = {}
    for name, argument in zip(parameters, call.args, strict=False):
        path = dotted_name(argument)
        if path is not None:
            passed[name] = path
    for keyword in call.keywords:
        path = dotted_name(keyword.value) if keyword.arg else None
        if path is not None:
            passed[keyword.arg] = path
    return passed
