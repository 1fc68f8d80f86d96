"""Which runnable piece of a file holds a finding: parsing only (no torch, no user code)."""

from __future__ import annotations

import ast


def loop_block_line(source: str, lines: set[int]) -> int | None:
    """The line of the one loop (module level or in the `__main__` block) holding `lines`."""
    tree = ast.parse(source)
    found = set()
    for line in lines:
        block = block_holding(tree, line)
        for statement in block or []:
            if statement.lineno <= line <= statement.end_lineno:
                found.add(statement.lineno)
    return found.pop() if len(found) == 1 else None


def block_holding(tree: ast.Module, line: int) -> list[ast.stmt] | None:
    """The statement list (the module's, or its `__main__` block's) whose `for` holds `line`."""
    for statement in tree.body:
        if not statement.lineno <= line <= statement.end_lineno:
            continue
        if isinstance(statement, ast.For):
            return tree.body
        if is_main_guard(statement):
            for inner in statement.body:
                if inner.lineno <= line <= inner.end_lineno and isinstance(inner, ast.For):
                    return statement.body
    return None


def is_main_guard(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.If)
        and isinstance(statement.test, ast.Compare)
        and ast.unparse(statement.test).replace("'", '"') == '__name__ == "__main__"'
    )


def enclosing_function(text: str, line: int) -> str | None:
    """`train` or `Trainer.fit`: the top-level function or method holding `line`."""
    tree = ast.parse(text)
    for node in tree.body:
        inside = node.lineno <= line <= (node.end_lineno or node.lineno)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and inside:
            return node.name
        if isinstance(node, ast.ClassDef) and inside:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    item.lineno <= line <= (item.end_lineno or item.lineno)
                ):
                    return f"{node.name}.{item.name}"
    return None


def is_runnable(text: str) -> bool:
    """Module-level code beyond definitions and imports, or a `__main__` block."""
    tree = ast.parse(text)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(
        not isinstance(s, definitions)
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in tree.body
    )
