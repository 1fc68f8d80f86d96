"""Properties that hold for every generated training loop, buggy or already correct.

- analysis never fails; a buggy loop is reported (LF001) with a fix, a correct one not at
  all, except for a leftover retain_graph=True (LF004);
- the rewrite parses, and applying it again changes nothing;
- every original line outside the edits survives byte for byte, in order, and inserted lines
  use the file's own line ending;
- (small budget, runs code) the patched program trains, and its first iteration computes the
  same loss and gradients as the original's (the criterion in `loopfix explain LF001`; with
  the retain_graph band-aid the original's later iterations may silently backpropagate into
  earlier batches, which is what the fix cuts).
"""

from __future__ import annotations

import ast
import difflib
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from loopfix.analysis import analyse_source
from loopfix.rules.compare import first_difference, first_iteration
from loopfix.source import SourceFile

from generated_loops import Program, programs
from tracing import run_traced

PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def analyse(text: str):
    return analyse_source(SourceFile.from_bytes("generated.py", text.encode()))


def lines(text: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


@PROPERTY_SETTINGS
@given(programs())
def test_each_loop_gets_exactly_its_findings_and_fixes(program: Program):
    result = analyse(program.text)
    assert result.errors == []
    assert tuple(f.rule for f in result.findings) == program.expected_rules, program.description
    if not program.expected_rules:
        assert not result.changed
        return
    assert all(f.fixable for f in result.findings), program.description
    ast.parse(result.fixed_text)
    again = analyse(result.fixed_text)
    assert again.findings == [] and not again.changed


@PROPERTY_SETTINGS
@given(programs())
def test_only_inserted_lines_and_dropped_retain_graph_differ(program: Program):
    result = analyse(program.text)
    before, after = lines(program.text), lines(result.fixed_text)
    newline = "\r\n" if "\r\n" in program.text else "\n"
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            assert all("retain_graph=True" in line for line in before[i1:i2])
            assert tag == "replace"
            assert all("retain_graph" not in line for line in after[j1:j2])
        for line in after[j1:j2] if tag in ("insert", "replace") else []:
            assert line.endswith(newline) or line is after[-1]
            assert "\r\n" not in line.replace(newline, "") if newline == "\n" else True
    assert result.fixed_text.endswith(newline) == program.text.endswith(newline)


@pytest.mark.slow
# No shrinking: each example runs two child processes, and a failure is readable as it is.
@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(program=programs().filter(lambda p: p.buggy))
def test_generated_fix_trains_with_identical_first_iteration(program: Program, tmp_path_factory):
    folder = tmp_path_factory.mktemp("generated")
    original, patched = folder / "before.py", folder / "after.py"
    original.write_bytes(program.text.encode())
    patched.write_bytes(analyse(program.text).fixed_bytes)
    run_before, run_after = run_traced(original, folder), run_traced(patched, folder)
    assert run_before.returncode != 0, program.description
    assert run_after.returncode == 0, run_after.stderr[-1500:]
    original_first = first_iteration(run_before.events)
    assert first_difference(original_first, run_after.events) is None, program.description
