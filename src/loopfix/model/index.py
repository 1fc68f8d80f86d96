"""One walk over a module's tree that gathers what building the loop model needs to know
before it interprets anything: imports and module evidence (for `symbols`), every function
with the class it belongs to, the block that holds each statement, the words (names,
attribute names, keyword names) each scope mentions, and how often each name is bound.

A single iterative pass instead of several `ast.walk`s: on a 2,000-line file this is most of
what detection costs, since the interpreter only runs the scopes that can hold a finding.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
BLOCK_OWNERS = (ast.mod, ast.stmt, ast.excepthandler, ast.match_case)
# nodes with nothing below them that the index needs: operators, contexts, constants
OPERATOR_KINDS = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)
LEAVES = frozenset(
    {ast.Constant, ast.Pass, ast.Break, ast.Continue}
    | {kind for base in OPERATOR_KINDS for kind in base.__subclasses__()}
)

# fields that never hold a node (names, numbers, flags), by the grammar in Python's `ast`
# docs; `names` holds nodes only in imports (`alias`), and strings in `global` and `nonlocal`
SCALAR_FIELDS = frozenset(
    {"id", "attr", "arg", "name", "module", "level", "type_comment", "kind", "conversion",
     "is_async", "simple", "tag"}
)  # fmt: skip


class _NodeFields(dict):
    """Node class -> the fields that may hold nodes, in `_fields` order (the walks below look
    only there: most of a tree's fields are names and flags)."""

    def __missing__(self, kind: type) -> tuple[str, ...]:
        imports = kind in (ast.Import, ast.ImportFrom)
        fields = tuple(
            f for f in kind._fields if f not in SCALAR_FIELDS and (f != "names" or imports)
        )
        self[kind] = fields
        return fields


NODE_FIELDS = _NodeFields()


@dataclass
class TreeIndex:
    imports: list[ast.Import | ast.ImportFrom] = field(default_factory=list)
    attribute_calls: list[ast.Call] = field(default_factory=list)  # calls like `x.train()`
    functions: list[tuple[ast.ClassDef | None, ast.FunctionDef]] = field(default_factory=list)
    parents: dict[int, tuple[ast.AST, list[ast.stmt]]] = field(default_factory=dict)
    words: dict[int, set[str]] = field(default_factory=dict)  # scope id -> words it mentions
    names: dict[str, set[str]] = field(default_factory=dict)  # function name -> its words
    # `out, h = model(x, h)`: a call fed one of the names it assigns (a recurrent step)
    recurrent_calls: list[ast.Call] = field(default_factory=list)
    # `mp = multiprocessing.get_context("spawn")`: a name bound to what a `get_context` returns
    context_bindings: list[ast.Assign] = field(default_factory=list)
    stores: dict[str, int] = field(default_factory=dict)  # name -> bindings (parameters too)
    # names `global` and `nonlocal` statements name: a call of the function may rebind them
    declared_global: set[str] = field(default_factory=set)
    attributes: set[str] = field(default_factory=set)  # every attribute name the module reads


Pieces = dict[int, tuple[ast.stmt, "TreeIndex"]]  # statement id -> (statement, its index)


def index_tree(tree: ast.Module, pieces: Pieces | None = None, parents: bool = True) -> TreeIndex:
    """The module's index. With `pieces` (a `ChunkParser`'s, which reuses the top-level
    statements an edit did not touch: every keystroke in an editor, every patched text a fix
    is proven on), it is put together from each top-level statement's, each indexed once
    as the only statement of a module: nothing in a statement's entries depends on the
    statements around it. `parents=False` leaves out the block of each statement, which
    only the analysed file's model asks (a project module it imports is indexed without)."""
    if pieces is None:
        return _sorted(_walk_index(tree, parents))
    index = TreeIndex(words={id(tree): set()})
    module_words = index.words[id(tree)]
    for statement in tree.body:
        piece = _piece(statement, pieces)
        module_words |= piece.words[_MODULE]
        for key, words in piece.words.items():
            if key != _MODULE:
                index.words[key] = set(words)  # callers may add to them: this index's own
        index.parents.update(piece.parents)
        index.parents[id(statement)] = (tree, tree.body)
        for name, count in piece.stores.items():
            index.stores[name] = index.stores.get(name, 0) + count
        index.attributes |= piece.attributes
        index.declared_global |= piece.declared_global
        index.attribute_calls += piece.attribute_calls
        index.recurrent_calls += piece.recurrent_calls
        index.context_bindings += piece.context_bindings
        index.imports += piece.imports
        index.functions += piece.functions
    return _sorted(index)


def _sorted(index: TreeIndex) -> TreeIndex:
    """`imports` and `functions` in `ast.walk`'s order, and the words of each function name."""
    index.imports = [entry[-1] for entry in sorted(index.imports, key=lambda e: e[:3])]
    index.functions = [entry[-2:] for entry in sorted(index.functions, key=lambda e: e[:3])]
    for _, function in index.functions:
        index.names.setdefault(function.name, set()).update(index.words[id(function)])
    return index


_MODULE = -1  # a piece's key for the words of the module scope
MAX_PIECES = 8192
# facts of the statements a `ChunkParser` gives back, kept across one document's analyses
# (loops' facts, saved-tensor results) before the table starts afresh
MAX_KEPT = 8192


def kept_fact(kept: dict | None, question: str, node: ast.AST, compute, inputs=()):
    """`compute()`, a fact of `node` (and of `inputs`, compared by value), as an earlier
    analysis of the same document found it while `node` is the same object: `kept` is a
    `ChunkParser`'s, and the parser gives back the statements an edit did not touch.
    Without `kept`, computed afresh."""
    if kept is None:
        return compute()
    found = kept.get((question, id(node)))
    if found is None or found[0] is not node or found[1] != inputs:
        found = keep(kept, (question, id(node)), (node, inputs, compute()))
    return found[2]


def keep(kept: dict, key: tuple, entry: tuple):
    """Put `entry` in `kept` (a table that starts afresh once it holds `MAX_KEPT`)."""
    if len(kept) >= MAX_KEPT:
        kept.clear()
    kept[key] = entry
    return entry


def _piece(statement: ast.stmt, pieces: Pieces) -> TreeIndex:
    """What one top-level statement adds to its module's index (`imports` and `functions`
    still keyed for sorting), remembered in `pieces` with the statement."""
    cached = pieces.get(id(statement))
    if cached is not None and cached[0] is statement:
        return cached[1]
    alone = ast.Module(body=[statement], type_ignores=[])
    piece = _walk_index(alone)
    piece.words[_MODULE] = piece.words.pop(id(alone))
    del piece.parents[id(statement)]
    if len(pieces) > MAX_PIECES:  # statements the parser did not keep (a whole-text parse)
        pieces.clear()
    pieces[id(statement)] = (statement, piece)
    return piece


def _walk_index(tree: ast.Module, with_parents: bool = True) -> TreeIndex:
    """The index of `tree` in one depth-first walk, `imports` and `functions` left as
    (depth, line, column, ...) entries for `index_tree` to sort into `ast.walk`'s order;
    `parents` left empty unless `with_parents`."""
    index = TreeIndex(words={id(tree): set()})
    nested: list[tuple[ast.AST, ast.AST | None]] = []  # (function, enclosing function)
    # (node, scope whose words it adds to, enclosing function, class whose body it is in,
    # depth): a depth-first walk, its findings put back in `ast.walk`'s breadth-first order
    stack: list[tuple[ast.AST, ast.AST, ast.AST | None, ast.ClassDef | None, int]] = [
        (tree, tree, None, None, 0)
    ]
    words, parents = index.words, index.parents
    stores, attributes = index.stores, index.attributes
    imports, functions = [], []
    node_fields = NODE_FIELDS
    while stack:
        node, scope, enclosing, owner, depth = stack.pop()
        below = depth + 1
        scope_words = words[id(scope)]
        if with_parents and isinstance(node, BLOCK_OWNERS):
            for name in BLOCK_FIELDS:
                block = getattr(node, name, None)
                if type(block) is list:
                    for statement in block:
                        parents[id(statement)] = (node, block)
        for name in node_fields[type(node)]:
            value = getattr(node, name, None)
            if value is None:
                continue
            children = value if type(value) is list else (value,)
            for child in children:
                kind = type(child)
                if kind in LEAVES or not isinstance(child, ast.AST):
                    continue
                if kind is ast.Name:
                    scope_words.add(child.id)
                    if type(child.ctx) is not ast.Load:
                        stores[child.id] = stores.get(child.id, 0) + 1
                    continue
                if kind is ast.Attribute:
                    scope_words.add(child.attr)
                    attributes.add(child.attr)
                elif kind is ast.arg:  # a parameter binds its name
                    stores[child.arg] = stores.get(child.arg, 0) + 1
                elif kind is ast.Global or kind is ast.Nonlocal:
                    index.declared_global.update(child.names)
                elif kind is ast.keyword and child.arg:
                    scope_words.add(child.arg)
                elif kind is ast.Call and type(child.func) is ast.Attribute:
                    index.attribute_calls.append(child)
                elif kind is ast.Assign and _feeds_back(child):
                    index.recurrent_calls.append(child.value)
                elif kind is ast.Assign and _binds_context(child):
                    index.context_bindings.append(child)
                elif kind is ast.Import or kind is ast.ImportFrom:
                    imports.append((below, child.lineno, child.col_offset, child))
                elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                    words[id(child)] = set()
                    nested.append((child, enclosing))
                    method_of = owner if node is owner else None
                    functions.append((below, child.lineno, child.col_offset, method_of, child))
                    stack.append((child, child, child, None, below))
                    continue
                elif kind is ast.ClassDef:
                    stack.append((child, scope, enclosing, child, below))
                    continue
                stack.append((child, scope, enclosing, owner, below))
    index.imports, index.functions = imports, functions
    for function, enclosing in reversed(nested):  # innermost first
        if enclosing is not None:
            words[id(enclosing)] |= words[id(function)]
    return index


def _feeds_back(node: ast.Assign) -> bool:
    """`out, h = f(x, h)`: a call whose tuple target reassigns one of its arguments. Not a
    call that hands back exactly what it was given, in order (`train_loader, val_loader =
    setup(train_loader, val_loader)`, `model, optimizer = prepare(model, optimizer)`): a
    wrapper, not a recurrent step, which also makes an output of its own."""
    call, target = node.value, node.targets[0]
    if type(call) is not ast.Call or type(target) is not ast.Tuple:
        return False
    fed = [syntax_key(a, context=False) for a in call.args]
    stored = [syntax_key(e, context=False) for e in target.elts]
    return stored != fed and bool(set(stored) & set(fed))


def _binds_context(node: ast.Assign) -> bool:
    """`ctx = mp.get_context("spawn")` (or `get_context(...)` imported): one name bound to
    what a call named `get_context` returns."""
    call, targets = node.value, node.targets
    if type(call) is not ast.Call or len(targets) != 1 or type(targets[0]) is not ast.Name:
        return False
    func = call.func
    name = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
    return name == "get_context"


def syntax_key(node: object, context: bool = True) -> object:
    """A hashable value equal for two nodes exactly when `ast.dump` (positions left out) says
    they are the same syntax; with `context=False`, `x` stored and `x` read are the same.

    `ast.dump` formats through a nested function that calls itself, a reference cycle, so
    each call leaves garbage that only the cyclic collector frees (thousands per file)."""
    if isinstance(node, ast.AST):
        if not context and isinstance(node, ast.expr_context):
            return None
        fields = (syntax_key(getattr(node, name, None), context) for name in node._fields)
        return (type(node).__name__, *fields)
    if type(node) is list:
        return tuple(syntax_key(item, context) for item in node)
    return repr(node)  # a constant, as `ast.dump` shows it: 1, 1.0 and True stay apart


def walk(node: ast.AST) -> Iterable[ast.AST]:
    """Every node below `node` and `node` itself, in `ast.walk`'s breadth-first order.

    The nodes below are worked out once per node and kept on it (`_loopfix_below`): the
    model asks about the same function bodies, loops and statements many times (once per
    call site, loop phase and question), and a tree is not changed once parsed (an edit
    parses a new one; a `ChunkParser` gives back only the statements it did not touch).
    The kept tuple holds only the nodes below, so a tree holds no reference cycle and is
    freed as soon as it is dropped."""
    try:
        below = node._loopfix_below
    except AttributeError:
        below = node._loopfix_below = _below(node)
    return chain((node,), below)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, in the same order, without its two generators
    (the model asks for the children of every expression it evaluates)."""
    found: list[ast.AST] = []
    for name in NODE_FIELDS[type(node)]:
        value = getattr(node, name, None)
        if type(value) is list:
            found += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def _below(node: ast.AST) -> tuple[ast.AST, ...]:
    """The nodes below `node`, breadth first: the list is its own queue."""
    found: list[ast.AST] = []
    append, position, current = found.append, 0, node
    node_fields = NODE_FIELDS
    while True:
        for name in node_fields[type(current)]:
            value = getattr(current, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        append(item)
            elif isinstance(value, ast.AST):
                append(value)
        if position == len(found):
            return tuple(found)
        current = found[position]
        position += 1
