"""Every corpus case, as a specification of what loopfix finds, writes, and what really runs.

For a positive case: `check` reports exactly the case's rules, `apply` turns before.py into
after.py byte for byte, after.py is clean, before.py really fails with the case's error, and
after.py really trains with the same losses and gradients for every event before.py managed to
record before failing (its whole first iteration at least). A negative case runs cleanly and
loopfix neither reports nor changes anything in it.
"""

from __future__ import annotations

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

from corpus_cases import CASES, NEGATIVE, POSITIVE, Case
from tracing import first_difference, run_traced


def analyse(path):
    return analyse_source(SourceFile.read(path))


def test_corpus_has_enough_cases():
    lf001 = [c for c in POSITIVE if "LF001" in c.rules]
    lf001_negative = [c for c in NEGATIVE if c.name.startswith("lf001_")]
    assert len(lf001) >= 12 and len(lf001_negative) >= 10


@pytest.mark.parametrize("case", CASES, ids=str)
def test_check_reports_exactly_the_expected_rules(case: Case):
    result = analyse(case.before)
    assert result.errors == []
    assert sorted(f.rule for f in result.findings) == sorted(case.rules)


@pytest.mark.parametrize("case", POSITIVE, ids=str)
def test_apply_turns_before_into_after(case: Case):
    result = analyse(case.before)
    assert all(f.fixable for f in result.findings)
    assert result.fixed_bytes == case.after.read_bytes()


@pytest.mark.parametrize("case", POSITIVE, ids=str)
def test_after_is_clean_so_a_second_apply_changes_nothing(case: Case):
    result = analyse(case.after)
    assert result.findings == []
    assert not result.changed


@pytest.mark.parametrize("case", NEGATIVE, ids=str)
def test_negative_case_is_left_alone(case: Case):
    result = analyse(case.before)
    assert result.findings == [] and not result.changed
    assert not case.after.exists()


@pytest.mark.parametrize("case", POSITIVE, ids=str)
def test_before_fails_and_after_trains_with_identical_gradients(case: Case, tmp_path):
    original = run_traced(case.before, tmp_path)
    assert original.returncode != 0, "before.py must really fail"
    assert case.error in original.stderr, original.stderr[-2000:]
    assert any(e[0] == "backward" for e in original.events), "no iteration completed"
    patched = run_traced(case.after, tmp_path)
    assert patched.returncode == 0, patched.stderr[-2000:]
    assert first_difference(original.events, patched.events) is None
    assert len(patched.events) > len(original.events), "the patched loop must get further"


@pytest.mark.parametrize("case", NEGATIVE, ids=str)
def test_negative_case_really_runs(case: Case, tmp_path):
    run = run_traced(case.before, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.error is None


WRONG_REWRITES = {
    # The state feeds this batch's loss: detaching right after the forward drops the
    # gradient that flows through h_n, which the comparison must notice.
    "lf001_state_feeds_classifier": (
        "    _, hidden = rnn(x, hidden)\n",
        "    _, hidden = rnn(x, hidden)\n    hidden = tuple(s.detach() for s in hidden)\n",
    ),
    # Detaching at every time step inside a K-step window cuts the window's BPTT.
    "lf001_stacked_lstmcell_tbptt_k": (
        "    states = new_states\n",
        "    states = [tuple(s.detach() for s in item) for item in new_states]\n",
    ),
}


@pytest.mark.parametrize("name", sorted(WRONG_REWRITES))
def test_gradient_comparison_rejects_a_wrong_detach(name, tmp_path):
    case = next(c for c in POSITIVE if c.name == name)
    old, new = WRONG_REWRITES[name]
    source = case.before.read_text()
    assert old in source
    wrong = tmp_path / "wrong.py"
    wrong.write_text(source.replace(old, new, 1))
    original = run_traced(case.before, tmp_path)
    patched = run_traced(wrong, tmp_path)
    assert patched.returncode == 0  # it "works", which is exactly why it is dangerous
    assert first_difference(original.events, patched.events) is not None
