"""Items of a local list stored and read back by the same index name.

The model keeps a list as one value: every graph any of its items holds. Training code that
writes one item per pass and reads it back at once (`losses[i] = mse(model(x[i]), y[i])`
then `(losses[i] / n).backward()`, continual learning's per-context losses) would otherwise
backward the graphs of the items earlier passes stored, which their own backwards freed:
a graph "carried" from one pass to the next that the code never reads again.

So an item stored into a list of the running scope's own under a name (`xs[i] = value`, not
`xs[i] += value`, nor `xs[0]` or `self.xs[i]`), a name that nothing in its module hands on
as a reference (`_escapes`: bound to another name, passed to a call, kept in an object or a
display, returned, declared `global`, or read in a nested function or lambda), is kept as
that item, under its own key in
the environment (`xs[=i]`), and a read of `xs[i]` gives it back while neither the list nor
the index has changed since. The list has changed when its value in the environment is no
longer the value the store left (anything else done to it makes a new value: another item
stored, `append`, a backward or a step that changed a graph it holds, the join of two paths
of which only one stored the item); it is also forgotten when the list is handed to code
that may reorder or write it (`random.shuffle(xs)`, `alias = xs`, `xs.pop(0)`, `del xs[0]`,
`xs.clear()`). The index has changed when it is bound again: each binding of an index name
is a new value, so a join with a path that rebound it does not look unchanged.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from loopfix.model.graphs import Env, Value
from loopfix.model.index import walk

SLOT = "[="  # the key of an item: `f"{list key}[={index key}]"`, below the list's own key


@dataclass
class ItemSlots:
    """The items stored by index name in one interpreter's run, by list and by index."""

    by_list: dict[str, set[str]] = field(default_factory=dict)  # list key -> its item keys
    by_index: dict[str, set[str]] = field(default_factory=dict)  # index key -> item keys
    # item key -> the list's and the index's values just after the item was stored
    stored_with: dict[str, tuple[Value, Value]] = field(default_factory=dict)
    # (id of a module's tree, a name) -> whether the module hands the name on (`_escapes`)
    escaping: dict[tuple[int, str], bool] = field(default_factory=dict)

    def kept_alone(self, tree: ast.Module | None, name: str) -> bool:
        """Whether the list a name holds in `tree`'s code has no other reference there."""
        if tree is None:
            return False
        key = (id(tree), name)
        if key not in self.escaping:
            self.escaping[key] = _escapes(tree, name)
        return not self.escaping[key]

    def store(self, key: str, index_key: str | None, value: Value, env: Env) -> None:
        """`xs[i] = value` was just bound into the list at `key` (its value in `env`)."""
        index = env.get(index_key) if index_key is not None else None
        if index is None:  # an index the scope does not bind: nothing to compare later
            return
        slot = f"{key}{SLOT}{index_key}]"
        env[slot] = value
        self.by_list.setdefault(key, set()).add(slot)
        self.by_index.setdefault(index_key, set()).add(slot)
        self.stored_with[slot] = (env[key], index)

    def read(self, key: str, index_key: str | None, env: Env) -> Value | None:
        """The item `xs[i]` holds, when stored by this index into this list as it still is;
        else None (the read takes the whole list's graphs)."""
        slot = f"{key}{SLOT}{index_key}]"
        value = env.get(slot)
        if value is None:
            return None
        container, index = self.stored_with[slot]
        if env.get(key) is not container or env.get(index_key) is not index:
            return None
        return value

    def forget(self, key: str, env: Env) -> None:
        """The list at `key` may have changed where the model does not follow it."""
        for slot in self.by_list.get(key, ()):
            env.pop(slot, None)

    def rebound_index(self, index_key: str, value: Value, env: Env) -> Value:
        """The index name is bound again: its items are forgotten, and the value it is bound
        to is a new object, so that no path that rebound it joins into the same value."""
        for slot in self.by_index[index_key]:
            env.pop(slot, None)
        return Value(value.graphs, value.shape, value.parts, value.item_parts)


# calls that read a list they are given and keep no reference to it
READING_CALLS = frozenset(
    {"len", "sum", "min", "max", "any", "all", "sorted", "list", "tuple", "enumerate", "zip"}
    | {"iter", "reversed", "print", "str", "repr", "stack", "cat", "mean"}
)
_DISPLAYS = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred)
_HANDED_ON = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Yield, ast.YieldFrom)


def _escapes(tree: ast.Module, name: str) -> bool:
    """Whether some code of the module may hold the list `name` holds under another name:
    `name` is bound whole to something else (`alias = xs`, `self.items = xs`), passed to a
    call other than one of `READING_CALLS` (`Log(xs)`, `fill(xs)`), put in a display
    (`[xs, ys]`), returned or yielded, declared `global` or `nonlocal`, or read in a
    function nested in another function or in a lambda (a closure). Any code of the module
    counts, whichever function it is in."""
    for node in walk(tree):
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return True
        if isinstance(node, ast.Lambda) and _mentions(node, name):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in walk(node):
                nested = inner is not node and isinstance(
                    inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                )
                if nested and _mentions(inner, name):
                    return True
        if isinstance(node, _HANDED_ON) and _is_name(node.value, name):
            return True
        if isinstance(node, _DISPLAYS):
            items = [*node.keys, *node.values] if isinstance(node, ast.Dict) else []
            items = items or getattr(node, "elts", None) or [getattr(node, "value", None)]
            if any(_is_name(item, name) for item in items):
                return True
        if isinstance(node, ast.Call) and _call_name(node.func) not in READING_CALLS:
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if any(_is_name(argument, name) for argument in arguments):
                return True
    return False


def _is_name(node: ast.AST | None, name: str) -> bool:
    """`node` reads `name` (a display's target `xs, ys = ...` stores it: no reference)."""
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)


def _mentions(node: ast.AST, name: str) -> bool:
    return any(_is_name(inner, name) for inner in walk(node))


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None
