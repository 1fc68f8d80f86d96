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
from collections.abc import Callable

from loopfix.model import shapes
from loopfix.model.index import child_nodes, walk
from loopfix.model.symbols import dotted_name

# a project function a call runs (`d_loss` in `d_loss(D, real, fake)`), or None
Callee = Callable[[ast.expr], "ast.FunctionDef | None"]


def exposed_modules(
    statements: list[ast.stmt], loss: ast.expr, modules: set[str], callee: Callee | None = None
) -> set[str] | None:
    """The paths among `modules` that `loss` depends on directly, after `statements` (in
    order); None when the loss's value is not built in them (a helper's result, an
    argument). With `callee`, a project function given a module (`d_loss(D, real, fake)`)
    is read with its parameters bound to what the call passes, when its body is straight
    assignments and returns; any other call given a module may use it any way."""
    exposed: dict[str, set[str]] = {}
    for statement in statements:
        _bind(statement, exposed, modules, callee)
    if isinstance(loss, ast.Name) and loss.id not in exposed:
        return None
    return _exposed(loss, exposed, modules, callee)


def _bind(
    statement: ast.stmt, exposed: dict[str, set[str]], modules: set[str], callee: Callee | None
) -> None:
    if isinstance(statement, ast.Assign):
        value = _exposed(statement.value, exposed, modules, callee)
        for target in statement.targets:
            for node in walk(target):
                if isinstance(node, ast.Name):
                    exposed[node.id] = set(value)
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        value = _exposed(statement.value, exposed, modules, callee)
        exposed[statement.target.id] = exposed.get(statement.target.id, set()) | value
    elif (
        isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and statement.value is not None
    ):
        exposed[statement.target.id] = _exposed(statement.value, exposed, modules, callee)


def _exposed(
    node: ast.AST, exposed: dict[str, set[str]], modules: set[str], callee: Callee | None = None
) -> set[str]:
    if isinstance(node, ast.Name):
        return set(exposed.get(node.id, ()))
    if isinstance(node, ast.Call):
        module = _module_called(node.func, modules)
        if module is not None:
            return {module}
        if any(_names_module(a, modules) for a in [*node.args, *(k.value for k in node.keywords)]):
            function = callee(node.func) if callee is not None else None
            through = _through(function, node, exposed, modules) if function else None
            # a function given a module may call it any way: all direct
            return set(modules) if through is None else through
    found: set[str] = set()
    for child in child_nodes(node):
        found |= _exposed(child, exposed, modules, callee)
    return found


def _through(
    function: ast.FunctionDef, call: ast.Call, exposed: dict[str, set[str]], modules: set[str]
) -> set[str] | None:
    """What a call of a loss function depends on directly: its body read with each
    parameter bound to what the call passes (a module given is that module; anything else,
    what the argument depends on directly). None when the call or the body is not that
    plain (a `*args`, a default, a branch, a loop, a call given a module in its turn)."""
    arguments = function.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args]
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    given = dict(zip(names, call.args, strict=False)) | {k.arg: k.value for k in call.keywords}
    if len(call.args) > len(names) or set(given) != set(names):
        return None
    aliases: dict[str, str] = {}  # parameter -> the module path it is given
    local: dict[str, set[str]] = {}
    for name, value in given.items():
        path = dotted_name(value)
        if path is not None and any(shapes.within(path, m) for m in modules):
            aliases[name] = path
        else:
            local[name] = _exposed(value, exposed, modules)
    inner = set(aliases) | modules
    for node in walk(function):
        if isinstance(node, ast.Call) and _module_called(node.func, inner) is None:
            passed = [*node.args, *(k.value for k in node.keywords)]
            if any(_names_module(a, inner) for a in passed):
                return None  # a call given the modules in its turn: any way
    found: set[str] = set()
    for statement in function.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # the docstring
        if isinstance(statement, ast.Return) and statement.value is not None:
            returned = _exposed(statement.value, local, inner)
        elif isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
            _bind(statement, local, inner, None)
            continue
        else:
            return None
        found |= {_renamed(m, aliases) for m in returned}
    return {m for m in found if any(shapes.within(m, known) for known in modules)}


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


def _renamed(path: str, aliases: dict[str, str]) -> str:
    """A path in the function's terms (`D.enc`, `D` a parameter given `netD`) in the caller's
    (`netD.enc`)."""
    root, dot, rest = path.partition(".")
    return aliases[root] + dot + rest if root in aliases else path
