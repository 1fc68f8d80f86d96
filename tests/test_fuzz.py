"""Fuzzing over mutated corpus files: renamed variables, reformatted code, inserted comments
and blank lines, CRLF, tabs, non-ASCII identifiers and strings.

For every mutant loopfix never raises or reports an internal error, never emits code that does
not parse, is idempotent, and changes only the lines its edits name; mutations that keep the
meaning (all but reformatting) keep the findings too; and the language server's incremental
parse gives exactly `ast.parse`'s tree.

The default budget fits CI (well under 2 minutes); a longer profile runs by hand:
`LOOPFIX_FUZZ_EXAMPLES=3000 .venv/bin/python -m pytest tests/test_fuzz.py`.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import difflib
import io
import keyword
import os
import re
import tokenize

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopfix.analysis import analyse_source
from loopfix.model.calls import FRAMEWORK_OBJECTS
from loopfix.parse import ChunkParser
from loopfix.source import SourceFile, line_starts

from corpus_cases import load_cases

SEEDS = [case.before.read_text() for case in load_cases()]
EXAMPLES = int(os.environ.get("LOOPFIX_FUZZ_EXAMPLES", "300"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
NEW_NAMES = [
    "état",
    "h_ñ",
    "σ_state",
    "renamed_variable",
    "x2",
    "état_caché_ü",
    "𝛼_state",
    "ℌidden",
]


def analyse(text: str):
    return analyse_source(SourceFile.from_bytes("mutant.py", text.encode()))


def lines(text: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def free_lines(text: str) -> list[int]:
    """0-based indexes of lines before which a new line can go: not inside a multi-line
    string, not after a backslash continuation."""
    blocked = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            blocked |= set(range(token.start[0], token.end[0]))  # 0-based: the lines after
    text_lines = text.splitlines()
    for index, line in enumerate(text_lines):
        if line.endswith("\\"):
            blocked.add(index + 1)
    return [i for i in range(len(text_lines) + 1) if i not in blocked]


def renamable(text: str) -> list[str]:
    """Names that only ever appear as plain names (never after `.`, never as a keyword
    argument or an import), so renaming every token keeps the meaning. `self` stays: the loop
    model knows a method's receiver by that name (PEP 8's), a documented limit; nor do the names
    training frameworks give their objects (`accelerator`, `fabric`, `engine`): loopfix tells
    `accelerator.backward(loss)` from a tensor's `backward` by them, another documented limit."""
    tree = ast.parse(text)
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    stored |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    unsafe = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {"self"}
    unsafe |= FRAMEWORK_OBJECTS
    # before Python 3.12 `tokenize` gives an f-string as one token: a name read inside one
    # (`f"{total_loss:.4f}"`) would not be renamed with the others
    unsafe |= {
        n.id
        for f in ast.walk(tree)
        if isinstance(f, ast.JoinedStr)
        for n in ast.walk(f)
        if isinstance(n, ast.Name)
    }
    unsafe |= {k.arg for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            unsafe |= {(a.asname or a.name).split(".")[0] for a in node.names}
            unsafe |= {a.name.split(".")[0] for a in node.names}
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            unsafe.add(node.name)
    strings = " ".join(
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )
    return sorted(
        name
        for name in stored - unsafe - set(dir(builtins))
        if not keyword.iskeyword(name) and not name.startswith("__") and name not in strings
    )


def rename(text: str, old: str, new: str) -> str:
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    starts = line_starts(text)
    out, cursor = [], 0
    for token in tokens:
        if token.type == tokenize.NAME and token.string == old:
            start = starts[token.start[0] - 1] + token.start[1]
            out.append(text[cursor:start] + new)
            cursor = start + len(old)
    return "".join(out) + text[cursor:]


@st.composite
def mutants(draw) -> tuple[str, str, bool]:
    """(original, mutant, whether the mutation keeps the meaning)."""
    original = draw(st.sampled_from(SEEDS))
    text, same_meaning = original, True
    if draw(st.booleans()) and draw(st.integers(0, 4)) == 0:
        text, same_meaning = ast.unparse(ast.parse(text)) + "\n", False
    names = renamable(text)
    if names and draw(st.booleans()):
        old = draw(st.sampled_from(names))
        new = draw(st.sampled_from([n for n in NEW_NAMES if n not in text] or ["zz_unused"]))
        text = rename(text, old, new)
    for _ in range(draw(st.integers(0, 4))):
        text_lines = lines(text)
        at = draw(st.sampled_from(free_lines(text)))
        indent = draw(st.sampled_from(["", "    ", "        ", "\t"]))
        extra = draw(st.sampled_from(["\n", f"{indent}# a comment ☃ 𝛼\n", "\n\n", f"{indent}#\n"]))
        text = "".join(text_lines[:at] + [extra] + text_lines[at:])
    if draw(st.booleans()):
        text = re.sub(r"^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), text, flags=re.M)
    if draw(st.booleans()):
        text = text.rstrip("\n") + '\n_note = "naïve ☃ 𝛼 — ok"\n'
    if draw(st.booleans()):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return original, text, same_meaning


def edited_lines(text: str, result) -> set[int]:
    """0-based lines that some planned edit touches (a line an insertion lands on counts)."""
    starts = line_starts(text)
    touched = set()
    for finding in result.findings:
        for edit in finding.fix.edits if finding.fix else ():
            first = max(0, _line_of(starts, edit.start) - 1)
            last = _line_of(starts, max(edit.start, edit.end - 1)) + 1
            touched |= set(range(first, last + 1))
    return touched


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


@FUZZ_SETTINGS
@given(mutants())
def test_mutants_are_analysed_safely_and_fixed_in_place(mutant):
    original, text, same_meaning = mutant
    ast.parse(text)  # the mutation itself is valid Python
    result = analyse(text)
    assert result.errors == []
    if same_meaning:
        assert [f.rule for f in result.findings] == [f.rule for f in analyse(original).findings]
    ast.parse(result.fixed_text)
    again = analyse(result.fixed_text)
    assert not again.changed and again.errors == []
    touched = edited_lines(text, result)
    before, after = lines(text), lines(result.fixed_text)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(i1, i2)) <= touched, (tag, before[i1:i2])


@FUZZ_SETTINGS
@given(mutants())
def test_the_editor_s_incremental_parse_equals_a_whole_parse(mutant):
    _, text, _ = mutant
    expected = ast.dump(ast.parse(text), include_attributes=True)
    parser = ChunkParser()
    assert ast.dump(parser(text), include_attributes=True) == expected
    edited = text + "\n# typed\n"  # a second parse that reuses every chunk but the last
    assert ast.dump(parser(edited), include_attributes=True) == ast.dump(
        ast.parse(edited), include_attributes=True
    )
