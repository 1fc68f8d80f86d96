"""Planning a file's fixes: each rule plans its fix with its proof assumed, and one analysis of
the text with every fix proves them together, each rule accepting its part
(`analysis._planned_together`); when that cannot be done, each fix is proven on its own, on
the text with it alone, and the fixes are then combined (`analysis._combine_fixes`).

The specification is written on files of several training loops, each a corpus case's script
as a function (as `bench/training_files.py` builds them): planned together, a file gets every
fix that planning one by one gets, the same one, and also the fixes that one by one refuses
because another bug of the file is still in the text such a fix is proven on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from loopfix import analysis
from loopfix.analysis import analyse_source
from loopfix.options import Options
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

from corpus_cases import ALL_CASES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from training_files import HEADER, corpus_loop  # noqa: E402

VERIFY = RunSettings(device="cpu", iterations=3, timeout=180)
SINGLE_FILE = [case.folder.name for case in ALL_CASES if case.positive and not case.entry]
# every positive single-file case, in files of three loops
TRIPLES = [tuple(SINGLE_FILE[i : i + 3]) for i in range(0, len(SINGLE_FILE), 3)]
# two GAN loops: each reorder is refused on the text with the other loop's bug still in it
TWO_GANS = ("lf002_wgan_critic_loop_generator_reuses_score", "lf002_gan_discriminator_every_k")


def loops(cases: tuple[str, ...]) -> str:
    return HEADER + "".join(corpus_loop(case, n) for n, case in enumerate(cases))


def planned(text: str, together: bool = True, options: Options | None = None):
    source = SourceFile.from_text(Path("train.py"), text)
    if together:
        return analyse_source(source, options=options, project=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analysis, "_planned_together", lambda *arguments: None)
        return analyse_source(source, options=options, project=None)


def found(finding) -> tuple:
    """What detection says (the message less what planning adds: why there is no fix)."""
    return finding.rule, finding.start, finding.message.split(" (no ")[0]


def fix_of(finding) -> tuple:
    return (finding.fix and finding.fix.title, finding.fix and finding.fix.edits, finding.applied)


@pytest.mark.parametrize("cases", TRIPLES, ids="+".join)
def test_together_plans_every_fix_one_by_one_plans(cases):
    together, alone = planned(loops(cases)), planned(loops(cases), together=False)
    assert [found(f) for f in together.findings] == [found(f) for f in alone.findings]
    for with_all, on_its_own in zip(together.findings, alone.findings, strict=True):
        if on_its_own.applied or not with_all.applied:
            assert fix_of(with_all) == fix_of(on_its_own)
    if all(f.applied == g.applied for f, g in zip(together.findings, alone.findings, strict=True)):
        assert together.fixed_text == alone.fixed_text
    assert together.errors == alone.errors == []


def test_fixes_refused_one_by_one_for_the_other_bug_are_proven_together_and_verify(tmp_path):
    """Each GAN loop's reorder leaves the other loop's stale graph in the file, which one by
    one refuses; with both fixes no backward goes through a stale graph. Running the
    original and the patched file shows each rewrite equivalent."""
    alone = planned(loops(TWO_GANS), together=False)
    assert [(f.rule, f.applied) for f in alone.findings] == [("LF002", False)] * 2
    assert all("would not reach exactly the graphs" in f.fix_unavailable for f in alone.findings)
    script = tmp_path / "train.py"
    script.write_text(loops(TWO_GANS))
    together = analyse_source(SourceFile.read(script), project=None)
    assert [(f.rule, f.applied) for f in together.findings] == [("LF002", True)] * 2
    assert together.models_built == 2
    verdicts = verify_file(together, VERIFY)
    assert [(v.rule, v.outcome, v.level) for v in verdicts] == [("LF002", "equivalent", "live")] * 2


def test_a_fix_that_needs_the_patched_model_to_be_planned_plans_one_by_one():
    """LF001's detach drops the retain_graph=True its backward needed only once the patched
    model says no later backward needs the graph: that fix cannot be planned with its proof
    assumed, and the file's fixes are proven one by one, as before."""
    text = loops(("lf001_retain_graph_band_aid", "lf001_gru_state_init_once"))
    together, alone = planned(text), planned(text, together=False)
    assert [fix_of(f) for f in together.findings] == [fix_of(f) for f in alone.findings]
    assert together.fixed_text == alone.fixed_text
    assert "drop the retain_graph=True" in together.findings[0].fix.title
    assert together.models_built == alone.models_built > 2


def test_a_combination_a_rule_refuses_is_planned_one_by_one(monkeypatch):
    """When a rule does not accept its part of the text with every fix, nothing planned with
    proofs assumed is kept: each fix is proven alone, then combined one at a time."""
    from loopfix.rules.lf001_hidden_state import HiddenStateNotDetached

    text = loops(("lf001_gru_state_init_once", "lf001_lstm_word_lm_slicing"))
    expected = planned(text, together=False)
    seen = []

    def refuse_the_first_combination(rule, before, after, fixed):
        seen.append(len(fixed))
        return len(seen) > 1 and HiddenStateNotDetached._is_safe(
            rule, before, after, [f.detail for f in fixed]
        )

    monkeypatch.setattr(HiddenStateNotDetached, "accepts", refuse_the_first_combination)
    result = planned(text)
    assert seen[0] == 2  # the combination planned with proofs assumed, refused
    assert [fix_of(f) for f in result.findings] == [fix_of(f) for f in expected.findings]
    assert all(f.applied for f in result.findings)


def test_the_editor_plans_each_fix_on_its_own():
    """An editor offers each fix as its own code action, applied alone: each is proven on
    the text with it alone (and the further fixes beside it are planned)."""
    text = loops(TWO_GANS)
    result = planned(text, options=Options(alternatives=True))
    assert not any(f.applied for f in result.findings)
