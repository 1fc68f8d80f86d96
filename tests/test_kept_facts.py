"""What a `ChunkParser` keeps across the analyses of one document (LF008's results per
function, `saved._Reuse`; loops' facts; the names each statement uses), which makes an
editor's keystroke and each proof of a fix cheap: after any edit of one top-level statement
that leaves the others where they were, what is found with what the analysis before it kept
is exactly what is found from scratch."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.parse import ChunkParser, parse
from loopfix.rules.base import FileContext
from loopfix.source import SourceFile

from corpus_cases import CASES

# in-place spellings an edit turns off (or on): each changes what a function does in place,
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
    # and what a loop carries or tests of its counter
    (".detach()", ".clone()"),
    ("== 0", "== 1"),
    ("% 2", "% 3"),
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


def _findings(text: str, parser) -> list[tuple]:
    source = SourceFile.from_text(Path("case.py"), text)
    result = analyse_source(source, plan_fixes=False, parser=parser, project=None)
    return [(f.rule, f.start, f.end, f.message) for f in result.findings]


# a few cases of every rule: what the parser keeps of loops (their counters, carried names)
# and of statements serves every rule
SAMPLE = [
    case
    for prefix in sorted({c.name.split("_")[0] for c in CASES})
    for case in [c for c in CASES if c.name.startswith(prefix + "_")][:4]
]


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: c.name)
def test_every_finding_after_an_edit_is_the_one_found_afresh(case):
    text = case.before.read_text()
    for variant in _edits(text):
        parser = ChunkParser()
        _findings(text, parser)
        assert _findings(variant, parser) == _findings(variant, parse), variant


LOOP = """\
import torch

model = torch.nn.Linear(2, 1)
for step in range(10):
    loss = model(torch.ones(1, 2)).sum()
    if step == {k}:  # 0: a test of the first iteration, which the loop's counter records
        loss.backward()
"""


def test_a_loop_edited_in_place_is_read_again():
    parser = ChunkParser()
    FileContext.parse(LOOP.format(k=1), parser=parser)
    edited = FileContext.parse(LOOP.format(k=0), parser=parser)
    loop = edited.tree.body[-1]
    _, _, (counter, _, _) = parser.kept[("loop facts", id(loop))]
    assert counter is not None and counter.index == "step" and counter.start == 0


# (file in data/kept, an edit of a statement other than the one with the in-place change):
# each edit changes what that change depends on, through a module-level fact the model
# gathers beyond the statements a function names at the top level
DEPENDENCIES = [
    ("def_inside_if.py", "t.add_(1.0)", "t.add(1.0) "),  # `if True: def bump(t): ...`
    ("layer_class_inside_try.py", "t.add_(1.0)", "t.add(1.0) "),  # `try: class Bump: ...`
    ("import_inside_function.py", "functional as F", "functional as G"),  # imports: any depth
    ("base_method_per_subclass.py", "self.bump(x)", "self.bumq(x)"),  # a base's method
    ("mutual_recursion.py", "return f(x)", "return h(x)"),  # who asks first
]


@pytest.mark.parametrize(("name", "old", "new"), DEPENDENCIES)
def test_an_edit_of_what_a_function_depends_on_is_seen(name, old, new):
    text = (Path(__file__).parent / "data" / "kept" / name).read_text()
    edited = text.replace(old, new)
    assert edited != text
    for before, after in [(text, edited), (edited, text)]:
        parser = ChunkParser()
        FileContext.parse(before, parser=parser).model.saved_tensor_changes()
        kept = FileContext.parse(after, parser=parser)
        assert _signature(kept) == _signature(FileContext.parse(after))
