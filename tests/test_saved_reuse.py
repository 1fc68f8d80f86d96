"""LF008's results kept across the analyses of one document (`saved._Reuse`, what makes an
editor's keystroke and each proof of a fix cheap): after any edit of one top-level statement
that leaves the others where they were, the changes found with the results of the analysis
before it are exactly the ones found from scratch."""

from __future__ import annotations

import ast

import pytest

from loopfix.parse import ChunkParser
from loopfix.rules.base import FileContext

from corpus_cases import CASES

# in-place spellings an edit turns off (or on): each changes what a function does in place
TOGGLES = [
    ("inplace=True", "inplace=False"),
    ("inplace=False", "inplace=True"),
    (" += ", " = 1 + "),
    (".add_(", ".add("),
    (".mul_(", ".mul("),
    (".relu_(", ".relu("),
    ("requires_grad = False", "requires_grad = True"),
    ("requires_grad_(False)", "requires_grad_(True)"),
    ("torch.sigmoid(", "torch.neg("),
]
# every LF008 case (its negative ones too), and some of another rule's: their training code
FILES = [case for case in CASES if case.name.startswith("lf008")]
FILES += [case for case in CASES if case.name.startswith("lf001")][:6]


def _signature(context: FileContext) -> list[tuple]:
    return [
        (c.statement.lineno, c.node.lineno, c.node.col_offset, c.var, c.how, c.alias, c.kept_in)
        + (c.saved_here, c.save.statement.lineno, c.save.operation)
        for c in context.model.saved_tensor_changes()
    ]


def _edits(text: str) -> list[str]:
    """Each top-level statement blanked out (`pass` and empty lines) or with one in-place
    spelling toggled: the lines of every other statement stay where they were."""
    lines = text.splitlines(keepends=True)
    variants = []
    for statement in ast.parse(text).body:
        decorators = getattr(statement, "decorator_list", [])
        first = min([statement.lineno] + [d.lineno for d in decorators])
        head, own = lines[: first - 1], lines[first - 1 : statement.end_lineno]
        tail = lines[statement.end_lineno :]
        own_text = "".join(own)
        replacements = ["pass\n" + "\n" * (len(own) - 1)]
        replacements += [own_text.replace(old, new) for old, new in TOGGLES if old in own_text]
        variants += ["".join(head) + r + "".join(tail) for r in replacements]
    return variants


@pytest.mark.parametrize("case", FILES, ids=lambda c: c.name)
def test_results_kept_from_the_last_analysis_are_the_ones_found_afresh(case):
    text = case.before.read_text()
    reused_any = False
    for variant in _edits(text):
        parser = ChunkParser()
        before = FileContext.parse(text, parser=parser)
        earlier = {id(c) for c in before.model.saved_tensor_changes()}
        kept = FileContext.parse(variant, parser=parser)
        fresh = FileContext.parse(variant)  # no parser: nothing is kept
        assert _signature(kept) == _signature(fresh), variant
        reused_any |= any(id(c) in earlier for c in kept.model.saved_tensor_changes())
    if "LF008" in case.rules:  # some edit left the function with the change alone
        assert reused_any
