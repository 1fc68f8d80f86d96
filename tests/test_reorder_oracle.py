"""The LF002/LF003 oracle first asks whether the diagnosis holds: a reorder of code that does
not fail is never judged equivalent, whatever its gradients (they are compared with a
deferred-update run of the original, which a correct original does not reproduce)."""

from __future__ import annotations

import textwrap

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

from corpus_cases import CORPUS

SETTINGS = RunSettings(device="cpu", iterations=3, timeout=120)

# The backbone is frozen through `setattr`, which loopfix does not read: it believes the two
# heads' backwards share the backbone's graph (LF003). The script runs correctly.
FROZEN_BY_SETATTR = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    for p in backbone.parameters():
        setattr(p, "requires_grad", False)
    head_a, head_b = nn.Linear(8, 1), nn.Linear(8, 1)
    opt_a = torch.optim.SGD(head_a.parameters(), lr=0.1)
    opt_b = torch.optim.SGD(head_b.parameters(), lr=0.1)
    for step in range(3):
        feats = backbone(torch.randn(4, 8))
        opt_a.zero_grad()
        head_a(feats).pow(2).mean().backward()
        opt_a.step()
        opt_b.zero_grad()
        head_b(feats).pow(2).mean().backward()
        opt_b.step()
"""


def test_a_reorder_of_code_that_runs_is_not_confirmed(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(textwrap.dedent(FROZEN_BY_SETATTR))
    result = analyse_source(SourceFile.read(path))
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF003", True)]
    (verdict,) = verify_file(result, SETTINGS)
    assert verdict.verdict.startswith("not confirmed: the original did not raise"), verdict


# A mean teacher (the corpus case): the teacher is an average of the student's weights taken
# right after the student's step. Moving that step after the average (the reorder loopfix once
# proposed) keeps the first iteration's gradients exactly and changes every later one.
MEAN_TEACHER = CORPUS / "lf002_mean_teacher_ema_after_student_step" / "before.py"
STEP_AFTER_THE_AVERAGE = (
    """    opt_s.zero_grad()
    consistency.backward(retain_graph=True)
    opt_s.step()
    ema_update(teacher, student)
    cls_loss = F.cross_entropy(logits, y)
    opt_c.zero_grad()
    cls_loss.backward()
    opt_c.step()
""",
    """    opt_s.zero_grad()
    opt_c.zero_grad()
    consistency.backward(retain_graph=True)
    ema_update(teacher, student)
    cls_loss = F.cross_entropy(logits, y)
    cls_loss.backward(inputs=list(classifier.parameters()))
    opt_s.step()
    opt_c.step()
""",
)


def test_a_step_moved_past_a_read_of_its_weights_is_not_planned_nor_accepted():
    from loopfix.rules.base import Applicability, Fix

    result = analyse_source(SourceFile.read(MEAN_TEACHER))
    (finding,) = result.findings
    assert finding.rule == "LF002" and not finding.fix.safe  # no reorder is planned
    assert "uses `student`" in finding.fix_unavailable
    # the oracle refuses it too, over the whole run, although the first iteration matches
    old, new = STEP_AFTER_THE_AVERAGE
    assert old in result.source.text
    finding.fix = Fix("reorder", (), Applicability.safe)
    finding.applied = True
    result.fixed_text = result.source.text.replace(old, new)
    (verdict,) = verify_file(result, SETTINGS)
    assert verdict.verdict.startswith("not equivalent: against the original with saved"), verdict


# An update helper that clears the gradients after its step: moving the actor's whole call
# before the critic's (the call move, which loopfix does not plan here) would leave the
# actor loss's gradient in the critic's `.grad` for the critic's step.
ZEROES_AFTER_STEP = CORPUS / "lf002_update_helper_zeroes_after_step" / "before.py"
CALLS_IN_ORDER = (
    "    apply_update(critic_opt, critic_loss)\n    apply_update(actor_opt, actor_loss)\n",
    "    apply_update(actor_opt, actor_loss)\n    apply_update(critic_opt, critic_loss)\n",
)


def test_a_call_move_that_leaks_gradients_into_a_later_update_is_not_equivalent():
    from loopfix.rules import update_calls
    from loopfix.rules.base import Applicability, Fix

    result = analyse_source(SourceFile.read(ZEROES_AFTER_STEP))
    (finding,) = result.findings
    # no call move is planned (it would leak); only the unsafe recompute after the step
    assert finding.rule == "LF002" and (finding.fix is None or not finding.fix.safe)
    old, new = CALLS_IN_ORDER
    assert old in result.source.text
    finding.fix = Fix(update_calls.FIX_TITLE, (), Applicability.safe)
    finding.applied = True
    result.fixed_text = result.source.text.replace(old, new)
    (verdict,) = verify_file(result, SETTINGS)
    assert verdict.verdict.startswith("not equivalent:"), verdict


def test_the_call_move_loopfix_plans_is_equivalent():
    path = CORPUS / "lf002_update_helper_called_per_optimizer" / "before.py"
    result = analyse_source(SourceFile.read(path))
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.title.startswith("Run this update before")
    (verdict,) = verify_file(result, SETTINGS)
    assert verdict.verdict == "equivalent", verdict
