"""Which modules a loss depends on directly, not only through another module's input.

`d_loss = bce(D(real)) + bce(D(G(z)))` depends on `D` directly and on `G` only behind `D`: its
gradient reaches `G` as feedback through `D`'s input. `loss = l1(G(x), y) + bce(D(G(x)))`
depends on `G` directly. LF009 tells a loss written for one network from a loss meant for
both by this: a backward paired with one optimizer leaks into another only when it reaches
that other optimizer's modules solely behind its own.

A small forward pass over the statements of the loop before the backward, binding each name to
the module paths its value depends on directly: a call of a module (`D(x)`,
`D.compute_loss(x)`) depends directly on that module alone; a call that is given a module
(`compute_losses(G, D, batch)`) may use it any way, so on every module; any other expression
on what its parts do.
"""

from __future__ import annotations

import ast

from loopfix.model import shapes
from loopfix.model.index import walk
from loopfix.model.symbols import dotted_name


def exposed_modules(
    statements: list[ast.stmt], loss: ast.expr, modules: set[str]
) -> set[str] | None:
    """The paths among `modules` that `loss` depends on directly, after `statements` (in
    order); None when the loss's value is not built in them (a helper's result, an
    argument)."""
    exposed: dict[str, set[str]] = {}
    for statement in statements:
        _bind(statement, exposed, modules)
    if isinstance(loss, ast.Name) and loss.id not in exposed:
        return None
    return _exposed(loss, exposed, modules)


def _bind(statement: ast.stmt, exposed: dict[str, set[str]], modules: set[str]) -> None:
    if isinstance(statement, ast.Assign):
        value = _exposed(statement.value, exposed, modules)
        for target in statement.targets:
            for node in walk(target):
                if isinstance(node, ast.Name):
                    exposed[node.id] = set(value)
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        value = _exposed(statement.value, exposed, modules)
        exposed[statement.target.id] = exposed.get(statement.target.id, set()) | value
    elif (
        isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and statement.value is not None
    ):
        exposed[statement.target.id] = _exposed(statement.value, exposed, modules)


def _exposed(node: ast.AST, exposed: dict[str, set[str]], modules: set[str]) -> set[str]:
    if isinstance(node, ast.Name):
        return set(exposed.get(node.id, ()))
    if isinstance(node, ast.Call):
        module = _module_called(node.func, modules)
        if module is not None:
            return {module}
        if any(_names_module(a, modules) for a in [*node.args, *(k.value for k in node.keywords)]):
            return set(modules)  # a function given a module may call it any way: all direct
    found: set[str] = set()
    for child in ast.iter_child_nodes(node):
        found |= _exposed(child, exposed, modules)
    return found


def _names_module(node: ast.expr, modules: set[str]) -> bool:
    name = dotted_name(node)
    return name is not None and any(shapes.within(name, m) for m in modules)


def _module_called(func: ast.expr, modules: set[str]) -> str | None:
    """`D(x)` -> "D"; `D.compute_loss(x)` -> "D"; `self.nets[k](x)` -> "self.nets" ..."""
    for candidate in (func, getattr(func, "value", None)):
        name = dotted_name(candidate) if candidate is not None else None
        if name is None:
            continue
        for module in modules:
            if shapes.within(name, module):
                return name
    return None
