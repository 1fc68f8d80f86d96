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
not invariant, and so does anything in the loop that hands a name the test reads to other
code: a method called on it or its attributes (`model.train()`, `self.toggle()`), the name
passed or bound whole (`toggle(cfg)`, `setattr(cfg, ...)`, `alias = cfg`), or a function of
the module declaring it `global`; and a store in the loop to an attribute of that name (on
any object: an alias made before the loop) or to another attribute of the object the test
reads (a property may derive from it). Changes through `exec` or `globals()` are not seen.
"""

from __future__ import annotations

import ast
from collections import Counter as Tally

from loopfix.model.index import walk
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


def invariant_tests(
    loop: ast.For | ast.AsyncFor | ast.While, rebound: frozenset[str] = frozenset()
) -> list[str]:
    """Keys of the tests (of `if` statements and conditional expressions) that appear at
    least twice in the loop (`not X` counts as X) and whose value nothing in the loop can
    change; the first `MAX_SPLIT_TESTS` of them in source order. `rebound`: the names some
    function of the module declares `global` (a call may rebind them)."""
    tests = [node.test for node in walk(loop) if isinstance(node, ast.If | ast.IfExp)]
    if len(tests) < 2:
        return []
    tally = Tally(unnegated(test)[0] for test in tests)
    if max(tally.values()) < 2:
        return []
    assigned = _assigned_paths(loop)
    exposed = _exposed_roots(loop) | rebound
    keys: list[str] = []
    for test in tests:
        key = unnegated(test)[0]
        if tally[key] < 2 or key in keys or not _invariant(test, assigned, exposed):
            continue
        keys.append(key)
    return keys[:MAX_SPLIT_TESTS]


def _invariant(test: ast.expr, assigned: set[str], exposed: set[str]) -> bool:
    if not all(isinstance(node, _PURE) for node in walk(test)):
        return False
    if isinstance(test, ast.Constant):
        return False  # `while True:` and `if 0:` need no splitting
    # an attribute the loop sets on anything (`alias.aux = False`, `tr.step += 1`): a test
    # of that attribute on any object, or of any attribute of that object (a property), may
    # read it
    stored = [a.split(".") for a in assigned if "." in a]
    stored_roots, stored_attributes = {a[0] for a in stored}, {a[-1] for a in stored}
    for node in walk(test):
        if isinstance(node, ast.Name | ast.Attribute):
            path = dotted_name(node)
            if path is None or path.split(".")[0] in exposed:
                return False
            if any(path == a or path.startswith(a + ".") for a in assigned):
                return False
        if isinstance(node, ast.Attribute) and (
            node.attr in stored_attributes or path.split(".")[0] in stored_roots
        ):
            return False
    return True


def _exposed_roots(loop: ast.AST) -> set[str]:
    """Names whose objects the loop hands to code that may change them: a method called on
    them or on one of their attributes (`model.train()`, `self.toggle()`, `flags.pop()`), or
    the name used whole (`toggle(cfg)`, `setattr(cfg, ...)`, `vars(args)`, `alias = cfg`).
    Reading an attribute (`args.lr`) exposes nothing."""
    bases: set[int] = set()  # names read only for an attribute, or tested
    exposed: set[str] = set()
    for node in walk(loop):
        if isinstance(node, ast.Attribute):
            bases.add(id(node.value))
        elif isinstance(node, ast.If | ast.IfExp | ast.While) and node is not loop:
            bases |= {id(n) for n in walk(node.test) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            path = dotted_name(node.func.value)
            if path is not None:
                exposed.add(path.split(".")[0])
    for node in walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in bases:
            exposed.add(node.id)
    return exposed


def _assigned_paths(loop: ast.AST) -> set[str]:
    """Every name and attribute path the loop (its target included) stores to."""
    paths: set[str] = set()
    for node in walk(loop):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            path = dotted_name(node)
            if path is not None:
                paths.add(path)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            paths.add(node.name)
        elif isinstance(node, ast.alias):
            paths.add((node.asname or node.name).split(".")[0])
    return paths
