"""The module index put together from its statements' is the index of one walk over the whole
tree, and a statement a parser reuses is indexed once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from loopfix.model import index as index_module
from loopfix.model.index import index_tree
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
    monkeypatch.setattr(index_module, "_walk_index", lambda t: walked.append(t) or real(t))
    index_tree(first, parser.pieces)
    assert len(walked) == len(first.body)
    walked.clear()
    edited = parser(text + "\nprint('done')\n")
    again = index_tree(edited, parser.pieces)
    # the new statement, and the last one before it (its chunk gained a blank line)
    assert len(walked) <= 2 < len(edited.body)
    assert facts(again) == facts(whole_walk(edited))
