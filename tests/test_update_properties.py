"""Properties of LF002/LF003/LF004 over generated two-model loops.

- each loop gets exactly its findings: the buggy orders LF002 or LF003 with a fix, the correct
  ones (DCGAN-style recompute, detached input, all backwards first) nothing;
- the rewrite parses, applying it again changes nothing, and no original line is lost: the
  reorder only moves lines and edits backward calls;
- (small budget, runs code) every optimizer's first step in the patched program uses exactly
  the gradients the deferred-update reference run of the original gives it.
"""

from __future__ import annotations

import ast
from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings

from loopfix.analysis import analyse_source
from loopfix.rules.compare import first_steps, step_difference
from loopfix.source import SourceFile

from generated_updates import UpdateProgram, update_programs
from tracing import run_traced

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def analyse(text: str):
    return analyse_source(SourceFile.from_bytes("generated.py", text.encode()))


@SETTINGS
@given(update_programs())
def test_each_loop_gets_exactly_its_findings_and_fixes(program: UpdateProgram):
    result = analyse(program.text)
    assert result.errors == []
    assert tuple(f.rule for f in result.findings) == program.expected_rules, program.description
    if not program.expected_rules:
        assert not result.changed
        return
    assert all(f.fixable for f in result.findings), program.description
    ast.parse(result.fixed_text)
    again = analyse(result.fixed_text)
    assert again.findings == [] and not again.changed, program.description


@SETTINGS
@given(update_programs())
def test_the_reorder_moves_lines_and_only_edits_backward_calls(program: UpdateProgram):
    result = analyse(program.text)
    before = Counter(program.text.splitlines())
    after = Counter(result.fixed_text.splitlines())
    lost = before - after
    added = after - before
    assert all(".backward(" in line for line in lost), (program.description, lost)
    assert all(".backward(" in line for line in added), (program.description, added)


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(program=update_programs().filter(lambda p: {"LF002", "LF003"} & set(p.expected_rules)))
def test_generated_reorder_steps_with_the_reference_gradients(program, tmp_path_factory):
    folder = tmp_path_factory.mktemp("updates")
    original, patched = folder / "before.py", folder / "after.py"
    original.write_text(program.text)
    patched.write_bytes(analyse(program.text).fixed_bytes)
    reference = run_traced(original, folder, defer_steps=True)
    run = run_traced(patched, folder)
    assert reference.returncode == 0 and run.returncode == 0, run.stderr[-1500:]
    expected = first_steps(reference.events)
    assert step_difference(expected, first_steps(run.events)) is None, program.description
