"""The module index put together from its statements' is the index of one walk over the whole
tree, and a statement a parser reuses is indexed once."""

from __future__ import annotations

import ast
import gc
import weakref
from collections import Counter
from pathlib import Path

import pytest

from loopfix.model import index as index_module
from loopfix.model.index import child_nodes, index_tree, syntax_key, walk
from loopfix.model.symbols import dotted_name
from loopfix.parse import ChunkParser

from corpus_cases import CORPUS

SOURCES = sorted(CORPUS.rglob("*.py"))[::7]  # a spread of the corpus: scripts and projects


def whole_walk(tree: ast.Module):
    """The index as one walk over the whole module gives it (no pieces)."""
    return index_tree(tree)


def facts(index) -> dict:
    return {
        "imports": [id(node) for node in index.imports],
        "functions": [(id(owner), id(function)) for owner, function in index.functions],
        "parents": {key: (id(node), id(block)) for key, (node, block) in index.parents.items()},
        "words": index.words,
        "names": index.names,
        "stores": index.stores,
        "attributes": index.attributes,
        "declared_global": index.declared_global,
        "attribute_calls": sorted(map(id, index.attribute_calls)),
        "recurrent_calls": sorted(map(id, index.recurrent_calls)),
        "context_bindings": sorted(map(id, index.context_bindings)),
    }


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_the_index_of_the_statements_is_the_index_of_the_tree(path: Path):
    tree = ast.parse(path.read_text())
    assert facts(index_tree(tree, pieces={})) == facts(whole_walk(tree))


def test_a_statement_the_parser_reuses_is_indexed_once(monkeypatch):
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    parser = ChunkParser()
    first = parser(text)
    walked = []
    real = index_module._walk_index
    monkeypatch.setattr(
        index_module, "_walk_index", lambda t, *rest: walked.append(t) or real(t, *rest)
    )
    index_tree(first, parser.pieces)
    assert len(walked) == len(first.body)
    walked.clear()
    edited = parser(text + "\nprint('done')\n")
    again = index_tree(edited, parser.pieces)
    # the new statement, and the last one before it (its chunk gained a blank line)
    assert len(walked) <= 2 < len(edited.body)
    assert facts(again) == facts(whole_walk(edited))


EVERY_KIND_OF_FIELD = """
from . import models as m
import torch.nn as nn, os
x: int = 1
def f(a, *args, b=2, **kw):  # type: (int) -> None
    global g
    def inner():
        nonlocal a
    y = f"{a!r:>{b}}" + f"{kw}"
    z = [i async for i in args] if a else {k: v for k, v in kw.items()}
    return obj.attr(key=1, **kw)
class C(nn.Module):
    pass
try:
    pass
except* ValueError as error:
    pass
match command:
    case {"go": where, **rest}:
        pass
    case Point(x=0, y=yy) | [1, *others] | None as whole:
        pass
"""


@pytest.mark.parametrize("path", [*SOURCES, None], ids=str)
def test_walk_visits_what_ast_walk_visits_in_its_order(path):
    """Every node, whatever syntax holds it, in `ast.walk`'s breadth-first order (its
    docstring promises that order)."""
    text = path.read_text() if path is not None else EVERY_KIND_OF_FIELD
    tree = ast.parse(text, type_comments=True)
    assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)]


@pytest.mark.parametrize("path", [*SOURCES, None], ids=str)
def test_the_index_reads_every_name_attribute_and_keyword_of_the_tree(path):
    """The words of all scopes together, the bindings and the attributes are those of every
    node `ast.walk` reaches (the index's walk skips the fields that hold no node)."""
    text = path.read_text() if path is not None else EVERY_KIND_OF_FIELD
    tree = ast.parse(text, type_comments=True)
    nodes = list(ast.walk(tree))
    index = index_tree(tree)
    names = {n.id for n in nodes if isinstance(n, ast.Name)}
    attributes = {n.attr for n in nodes if isinstance(n, ast.Attribute)}
    keywords = {n.arg for n in nodes if isinstance(n, ast.keyword) and n.arg}
    assert set().union(*index.words.values()) == names | attributes | keywords
    assert index.attributes == attributes
    bound = Counter(n.id for n in nodes if isinstance(n, ast.Name) and type(n.ctx) is not ast.Load)
    bound.update(n.arg for n in nodes if isinstance(n, ast.arg))
    assert index.stores == dict(bound)
    imports = [n for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)]
    assert index.imports == imports
    declared = {name for n in nodes if isinstance(n, ast.Global | ast.Nonlocal) for name in n.names}
    assert index.declared_global == declared


@pytest.mark.parametrize("path", [*SOURCES, None], ids=str)
def test_child_nodes_are_ast_iter_child_nodes_in_its_order(path):
    text = path.read_text() if path is not None else EVERY_KIND_OF_FIELD
    tree = ast.parse(text, type_comments=True)
    for node in ast.walk(tree):
        assert [id(c) for c in child_nodes(node)] == [id(c) for c in ast.iter_child_nodes(node)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_an_index_without_parents_differs_only_by_them(path: Path):
    """A project module an analysed file imports is indexed without the block of each
    statement; everything else is the same."""
    tree = ast.parse(path.read_text())
    full, lean = facts(index_tree(tree)), facts(index_tree(tree, parents=False))
    assert lean.pop("parents") == {} != full.pop("parents")
    assert lean == full


@pytest.mark.parametrize("path", [*SOURCES, None], ids=str)
def test_a_dotted_name_kept_on_its_node_is_the_one_worked_out(path):
    text = path.read_text() if path is not None else EVERY_KIND_OF_FIELD
    tree = ast.parse(text, type_comments=True)
    for node in ast.walk(tree):
        if isinstance(node, ast.expr):
            first = dotted_name(node)
            assert dotted_name(node) == first == _spelled(node)


def _spelled(node: ast.expr) -> str | None:
    """A name or a chain of attributes of a name, as its source spells it (no spaces)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and _spelled(node.value) is not None:
        return ast.unparse(node)
    return None


def test_walk_remembered_per_node_gives_the_same_nodes_and_keeps_no_cycle():
    """A node's walk is worked out once and kept on the node: asked again (of the tree, of a
    function in it, of a statement in that) it gives `ast.walk`'s nodes and order, and the
    tree is freed when dropped, without the cyclic collector (nothing kept refers back)."""
    tree = ast.parse(EVERY_KIND_OF_FIELD)
    for node in [tree, *ast.walk(tree)][:200]:
        for _ in range(2):
            assert [id(n) for n in walk(node)] == [id(n) for n in ast.walk(node)]
    gone = weakref.ref(tree)
    gc.disable()
    try:
        del tree, node
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "first, second, context",
    [
        ("x.y[1]", "x.y[1]", True),
        ("x.y[1]", "x.y[2]", True),
        ("f(1)", "f(1.0)", True),  # 1 and 1.0 are equal numbers, not the same syntax
        ("f(1)", "f(True)", True),
        ("not a", "not (a)", True),
        ("(h, c)", "[h, c]", True),
        ("h", "h", False),  # `h` read and `h` stored, when the context is left out
    ],
)
def test_syntax_key_says_the_same_as_ast_dump(first, second, context):
    one, two = ast.parse(first, mode="eval").body, ast.parse(second, mode="eval").body
    if not context:
        two.ctx = ast.Store()
    same = ast.dump(one) == ast.dump(two) if context else True
    assert (syntax_key(one, context) == syntax_key(two, context)) == same
