"""Definite binding: whether a name is bound on every path that reaches a statement, the
first pass of every loop around it included (where a fix may insert code that reads it)."""

from __future__ import annotations

import ast

from loopfix.model.counters import loop_counter


def bound_before(model, statement: ast.stmt, name: str) -> bool:
    """`name` (a plain name; an attribute path is taken as bound) is bound on every path to
    `statement`: by a statement before it in its block or in an enclosing block (a loop's body
    counts only before the statement, as on its first pass), or as a parameter."""
    if "." in name or "[" in name:
        return True
    current = statement
    while id(current) in model.parents:
        owner, block = model.parents[id(current)]
        if any(_binds(s, name) for s in block[: block.index(current)]):
            return True
        counter = loop_counter(owner) if block is getattr(owner, "body", None) else None
        if counter is not None and any(
            isinstance(s, ast.If)
            and counter.first_of(s.test) is True
            and any(_binds(b, name) for b in s.body)
            for s in block[: block.index(current)]
        ):
            return True  # `if t == 0: h = zeros(...)`: bound on the first pass, kept after
        if isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return name in parameter_names(owner)
        if isinstance(owner, ast.If) and _tests_unbound(owner.test, name) and block is owner.orelse:
            return True  # the `else` of `if "h" not in locals():`
        if not isinstance(owner, ast.stmt):
            return False
        current = owner
    return False


def _binds(statement: ast.stmt, name: str) -> bool:
    """Whether running `statement` binds `name` on every path through it."""
    if isinstance(statement, ast.Assign):
        return any(_target_binds(t, name) for t in statement.targets)
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        return _target_binds(statement.target, name)
    if isinstance(statement, ast.With | ast.AsyncWith):
        items = any(
            i.optional_vars is not None and _target_binds(i.optional_vars, name)
            for i in statement.items
        )
        return items or any(_binds(s, name) for s in statement.body)
    if isinstance(statement, ast.If):
        if _tests_unbound(statement.test, name):  # `if "h" not in locals(): h = ...`
            return any(_binds(s, name) for s in statement.body)
        return any(_binds(s, name) for s in statement.body) and any(
            _binds(s, name) for s in statement.orelse
        )
    if isinstance(statement, ast.Try):
        body = any(_binds(s, name) for s in statement.body + statement.orelse)
        return body and all(any(_binds(s, name) for s in h.body) for h in statement.handlers)
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return statement.name == name
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return any((a.asname or a.name.split(".")[0]) == name for a in statement.names)
    if isinstance(statement, ast.Global | ast.Nonlocal):
        return name in statement.names  # bound elsewhere: not this function's to decide
    return False


def _target_binds(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Tuple | ast.List):
        return any(_target_binds(e, name) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _target_binds(target.value, name)
    return False


def _tests_unbound(test: ast.expr, name: str) -> bool:
    """`"h" not in locals()` (or `globals()`, `vars()`, `dir()`)."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.NotIn)
        and isinstance(test.left, ast.Constant)
        and test.left.value == name
        and isinstance(test.comparators[0], ast.Call)
        and getattr(test.comparators[0].func, "id", None) in ("locals", "globals", "vars", "dir")
    )


def parameter_names(function) -> set[str]:
    """Every parameter name of `function`: positional, keyword-only, `*args`, `**kwargs`."""
    args = function.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return set(names)
