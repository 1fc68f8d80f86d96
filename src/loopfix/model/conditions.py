"""Tests a loop cannot change: every iteration takes the same side of them.

Training code tests its configuration more than once per iteration: `if args.aux:` where an
auxiliary output is computed and again where its loss is added, `if self.use_gan:` around a
discriminator's forward and around its loss. Following both sides of each `if` independently,
the loop model would read the output in an iteration that did not compute it, that is, the
previous iteration's (a graph freed by that iteration's backward). Here a test repeated in a
loop, built only from names and attributes that nothing in the loop assigns, is taken to have
one value for the whole loop: the interpreter runs the loop once with it true and once with it
false.

A call, a subscript or anything else that may change between two evaluations makes a test
not invariant. A method the loop calls that reassigns an attribute the test reads
(`self.flag = not self.flag` in a helper) is not seen.
"""

from __future__ import annotations

import ast
from collections import Counter as Tally

from loopfix.model.symbols import dotted_name

# at most this many invariant tests split one loop (2 ** n runs of it)
MAX_SPLIT_TESTS = 2

_PURE = (
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.Load,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
    ast.operator,
)


def unnegated(test: ast.expr) -> tuple[str, bool]:
    """The key of a test with its `not`s taken off (its syntax, wherever it appears), and
    whether an odd number of them was taken off."""
    flipped = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, flipped = test.operand, not flipped
    return ast.dump(test), flipped


def invariant_tests(loop: ast.For | ast.AsyncFor | ast.While) -> list[str]:
    """Keys of the tests (of `if` statements and conditional expressions) that appear at
    least twice in the loop (`not X` counts as X) and whose value nothing in the loop can
    change; the first `MAX_SPLIT_TESTS` of them in source order."""
    tests = [node.test for node in ast.walk(loop) if isinstance(node, ast.If | ast.IfExp)]
    if len(tests) < 2:
        return []
    tally = Tally(unnegated(test)[0] for test in tests)
    if max(tally.values()) < 2:
        return []
    assigned = _assigned_paths(loop)
    keys: list[str] = []
    for test in tests:
        key = unnegated(test)[0]
        if tally[key] < 2 or key in keys or not _invariant(test, assigned):
            continue
        keys.append(key)
    return keys[:MAX_SPLIT_TESTS]


def _invariant(test: ast.expr, assigned: set[str]) -> bool:
    if not all(isinstance(node, _PURE) for node in ast.walk(test)):
        return False
    if isinstance(test, ast.Constant):
        return False  # `while True:` and `if 0:` need no splitting
    for node in ast.walk(test):
        if isinstance(node, ast.Name | ast.Attribute):
            path = dotted_name(node)
            if path is None:
                return False
            if any(path == a or path.startswith(a + ".") for a in assigned):
                return False
    return True


def _assigned_paths(loop: ast.AST) -> set[str]:
    """Every name and attribute path the loop (its target included) stores to."""
    paths: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            path = dotted_name(node)
            if path is not None:
                paths.add(path)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            paths.add(node.name)
        elif isinstance(node, ast.alias):
            paths.add((node.asname or node.name).split(".")[0])
    return paths
