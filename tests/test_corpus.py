"""Every corpus case, as a specification of what loopfix finds, writes, and what really runs.

For a positive case: `check` reports exactly the case's rules, `apply` turns before.py into
after.py byte for byte, after.py is clean, before.py really fails with the case's error (or
really runs, for LF004), and after.py really trains, with the gradients each rule promises:
- LF001: the same losses and gradients for every event before.py recorded before failing;
- LF002 / LF003: every optimizer's first step uses exactly the gradients a reference run of
  before.py gives it when every step is deferred and every graph kept (the original "as if no
  parameter changed during the iteration"), optimizer by optimizer; LF003's retain fix (no
  reorder, only `retain_graph=True`): every loss, gradient and step of the whole run equals
  before.py's run with every graph kept;
- LF004: every loss and gradient of the whole run unchanged;
- LF006: every loss and gradient of the whole run unchanged, and the logged total keeps its
  graphs in before.py and none in after.py;
- LF007: in before.py's run some step does not use exactly the gradients accumulated since the
  previous step from zero (zero gradients, a piled-up sum, or only the last micro-batch); in
  after.py's every step does;
- LF005: before.py's first optimizer step already used a later learning rate than the
  schedule's first value, after.py's uses it, with the same gradients.
An unsafe case (`unsafe = true`) has only a fix that changes what the code computes on purpose:
`apply` leaves it alone, `apply --unsafe-fixes` writes after.py, and verification says what
changed ("changed as intended: ...") after the patched code ran every capped iteration.
A negative case runs cleanly and loopfix neither reports nor changes anything in it.
"""

from __future__ import annotations

import pytest

from loopfix.analysis import analyse_source
from loopfix.options import Options, RestrictStyle
from loopfix.rules import update_calls, update_order
from loopfix.rules.base import FileContext, Fix
from loopfix.rules.compare import (
    every_step_difference,
    first_difference,
    first_iteration,
    first_steps,
    step_difference,
)
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import SCRIPT, collect_runs, judge, verify_file

from corpus_cases import CASES, NEGATIVE, POSITIVE, UNFIXABLE, UNSAFE, Case
from tracing import run_traced

VERIFY = RunSettings(device="cpu", iterations=3, timeout=180)


def analyse(path):
    return analyse_source(SourceFile.read(path))


def test_corpus_has_enough_cases():
    lf001 = [c for c in POSITIVE if "LF001" in c.rules]
    lf001_negative = [c for c in NEGATIVE if c.name.startswith("lf001_")]
    assert len(lf001) >= 12 and len(lf001_negative) >= 10
    updates = [c for c in POSITIVE if {"LF002", "LF003", "LF004"} & set(c.rules)]
    updates_negative = [c for c in NEGATIVE if c.name.startswith("lf002_")]
    assert len(updates) >= 12 and len(updates_negative) >= 12
    for code in ("LF005", "LF006", "LF007", "LF008", "LF009"):
        positive = [c for c in POSITIVE + UNSAFE if code in c.rules]
        negative = [c for c in NEGATIVE if c.name.startswith(code.lower() + "_")]
        assert len(positive) >= 4 and len(negative) >= 4, code


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


def moved_update_calls(result) -> bool:
    """Whether a fix moved whole update calls (`update_calls`)."""
    return any(f.fix is not None and f.fix.title == update_calls.FIX_TITLE for f in result.findings)


def steps_by_weights(events: list) -> dict:
    """The gradients each optimizer first stepped with, keyed by the positions of the weights
    it owns (the trace numbers optimizers in the order they first step)."""
    steps: dict = {}
    for event in events:
        if event[0] == "step":
            steps.setdefault(tuple(event[5]), event[2])
    return steps


@pytest.mark.parametrize("case", POSITIVE, ids=str)
def test_rewrite_verifies_live_and_keeps_the_promised_gradients(case: Case):
    """`loopfix verify` judges the rewrite equivalent at level live (LF005's, which moves the
    learning-rate schedule on purpose, changed as intended); the same runs are then checked
    here directly against each rule's promise, independently of its oracle."""
    result = analyse(case.before)
    units = collect_runs(result, VERIFY)
    verdicts = judge(result, units)
    assert [(v.outcome, v.level) for v in verdicts] == [
        (promised(v.rule), LIVE_WORKERS if "mp.Process" in case.before.read_text() else "live")
        for v in verdicts
    ]
    runs = units[SCRIPT]
    original, patched = runs.original, runs.patched
    assert patched.error is None, patched.stderr[-2000:]
    if case.error:
        assert case.error in (original.error or ""), original.stderr[-2000:]
    else:
        assert original.error is None, original.stderr[-2000:]
    if "LF008" in case.rules:  # against the original with every saved tensor copied
        assert runs.cloned.error is None, runs.cloned.stderr[-2000:]
        assert first_difference(runs.cloned.events, patched.events) is None
        assert len(patched.events) == len(runs.cloned.events) > 0
    elif runs.retained is not None:  # LF003's retain fix: the original with every graph kept
        assert runs.retained.error is None, runs.retained.stderr[-2000:]
        assert first_difference(runs.retained.events, patched.events) is None
        assert len(patched.events) == len(runs.retained.events)
    elif moved_update_calls(result):  # optimizers step in another order: by their weights
        reference = steps_by_weights(runs.reference.events)
        assert reference, "the reference must step"
        assert steps_by_weights(patched.events) == reference
    elif {"LF002", "LF003"} & set(case.rules):
        reference = first_steps(runs.reference.events)
        assert reference, "the reference must step"
        deferred = step_difference(reference, first_steps(patched.events))
        if deferred is not None:  # an agent read what an earlier agent's step changed
            assert runs.cloned is not None and runs.cloned.error is None, deferred
            assert every_step_difference(runs.cloned.events, patched.events) is None
    elif "LF009" in case.rules:  # a backward's gradients in two optimizers' steps, then none
        from loopfix.rules.lf009_gradient_leak import shared_backwards

        assert shared_backwards(original.events), "the original must leak"
        assert shared_backwards(patched.events) == {}
    elif "LF007" in case.rules:  # each step: its own gradients, accumulated from zero
        from loopfix.rules.lf007_zero_grad_placement import _broken_window

        assert _broken_window(original.events) is not None, "the original must break it"
        assert _broken_window(patched.events) is None
    elif "LF005" in case.rules:  # the schedule: one step late before, on time after
        ahead = _first_rates(original)[2]
        after_lr, after_start, after_ahead = _first_rates(patched)
        assert ahead == 1, "the original's scheduler must have stepped before its optimizer"
        assert after_ahead == 0 and abs(after_lr - after_start) <= 1e-9 * abs(after_start)
        assert first_steps(original.events)[0] == first_steps(patched.events)[0]
    elif "LF001" in case.rules:
        assert any(e[0] == "backward" for e in original.events), "no iteration completed"
        assert first_difference(original.events, patched.events) is None
        assert len(patched.events) > len(original.events), "the patched loop must get further"
    else:
        assert first_difference(original.events, patched.events) is None
        assert len(patched.events) == len(original.events)


# an A3C worker process runs in the tracing process, so that what it computes is recorded
LIVE_WORKERS = "live (worker processes run in turn, in one process)"


def promised(rule: str) -> str:
    """The verdict a rule's safe fix verifies with: equivalent, but for the fix whose purpose
    is to change a value (LF005's learning-rate schedule)."""
    return "changed as intended" if rule == "LF005" else "equivalent"


def _first_rates(run) -> tuple[float, float]:
    """(learning rate, the schedule's first value, scheduler steps beyond its start) of the
    first optimizer's first step."""
    step = next(e for e in run.events if e[0] == "step" and e[3] == 0)
    return step[4][0]


UNSAFE_OPTIONS = Options(unsafe_fixes=True)


@pytest.mark.parametrize("case", UNSAFE, ids=str)
def test_unsafe_fix_is_offered_but_applied_only_with_unsafe_fixes(case: Case):
    result = analyse(case.before)
    assert result.findings and not result.changed and not any(f.applied for f in result.findings)
    assert all(f.fixable and not f.fix.safe and f.fix.changes for f in result.findings)
    unsafe = analyse_source(SourceFile.read(case.before), options=UNSAFE_OPTIONS)
    assert all(f.applied for f in unsafe.findings)
    assert unsafe.fixed_bytes == case.after.read_bytes()
    assert analyse_source(SourceFile.read(case.after), options=UNSAFE_OPTIONS).findings == []


@pytest.mark.parametrize("case", UNSAFE, ids=str)
def test_unsafe_fix_verifies_as_the_change_it_names(case: Case):
    result = analyse_source(SourceFile.read(case.before), options=UNSAFE_OPTIONS)
    units = collect_runs(result, VERIFY)
    verdicts = judge(result, units)
    assert verdicts and all(v.verdict.startswith("changed as intended: ") for v in verdicts)
    assert all(v.level == "live" and v.writable and not v.equivalent for v in verdicts)
    runs = units[SCRIPT]
    assert case.error in (runs.original.error or ""), runs.original.stderr[-2000:]
    assert runs.patched.error is None, runs.patched.stderr[-2000:]


@pytest.mark.parametrize("case", UNFIXABLE, ids=str)
def test_unfixable_case_is_reported_with_its_reason_and_left_alone(case: Case):
    result = analyse(case.before)
    assert result.findings and not result.changed and not case.after.exists()
    for finding in result.findings:
        assert not finding.fixable
        assert case.no_fix in finding.fix_unavailable
        assert f"(no automatic fix: {finding.fix_unavailable})" in finding.message


@pytest.mark.parametrize("case", UNFIXABLE, ids=str)
def test_unfixable_case_really_fails(case: Case, tmp_path):
    """The script raises the rule's error, or (LF006) its total still holds a graph at the
    end (`KEPT_GRAPH`)."""
    if not case.error and case.accumulates:
        from scripts import run_python

        done = run_python(
            ["-c", str(case.before), case.accumulates], case.before.parent, code=KEPT_GRAPH
        )
        assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "True", done.stderr
        return
    run = run_traced(case.before, tmp_path)
    assert case.error and case.error in (run.error or ""), run.stderr[-2000:]


@pytest.mark.parametrize("case", NEGATIVE, ids=str)
def test_negative_case_has_nothing_to_verify(case: Case):
    assert verify_file(analyse(case.before), VERIFY) == []


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


# A detach that keeps the first iteration exact but, from the second chunk on, also cuts the
# output the loss reads: later backwards no longer reach the GRU's parameters. The first
# iteration matches, so only the check of every iteration's reach sees it.
CUT_FROM_THE_SECOND_ITERATION = (
    "        out, h = gru(chunk, h)\n",
    "        out, h = gru(chunk, h)\n        h = h.detach()\n"
    "        out = out.detach() if start else out\n",
)


def test_the_oracle_rejects_a_detach_that_cuts_later_iterations():
    case = next(c for c in POSITIVE if c.name == "lf001_gru_state_init_once")
    result = analyse(case.before)
    result.fixed_text = result.source.text.replace(*CUT_FROM_THE_SECOND_ITERATION, 1)
    assert result.fixed_text != result.source.text
    units = collect_runs(result, VERIFY)
    runs = units[SCRIPT]
    assert runs.patched.error is None
    first = first_difference(first_iteration(runs.original.events), runs.patched.events)
    assert first is None  # the first iteration is exact...
    (verdict,) = judge(result, units)
    assert "no longer reaches" in verdict.verdict, verdict.verdict  # ...the later ones are not


@pytest.mark.parametrize("name", sorted(WRONG_REWRITES))
def test_the_oracle_rejects_a_wrong_detach(name):
    case = next(c for c in POSITIVE if c.name == name)
    old, new = WRONG_REWRITES[name]
    result = analyse(case.before)
    assert old in result.source.text
    result.fixed_text = result.source.text.replace(old, new, 1)  # "works", and is wrong
    units = collect_runs(result, VERIFY)
    assert units[SCRIPT].patched.error is None
    (verdict,) = judge(result, units)
    assert verdict.verdict.startswith("not equivalent"), verdict.verdict


# The popular answer to the GAN error: "zero both, backward both, step both". It runs, but the
# generator loss's gradient leaks into the discriminator's parameters before D steps.
NAIVE_REORDER = (
    """    optimizerD.zero_grad()
    errD = criterion(output_real, torch.ones(8, 1)) + criterion(output_fake, torch.zeros(8, 1))
    errD.backward(retain_graph=True)
    optimizerD.step()
    # (2) update G: maximize log(D(G(z))), reusing D's output on the fakes
    optimizerG.zero_grad()
    errG = criterion(output_fake, torch.ones(8, 1))
    errG.backward()
    optimizerG.step()
""",
    """    optimizerD.zero_grad()
    optimizerG.zero_grad()
    errD = criterion(output_real, torch.ones(8, 1)) + criterion(output_fake, torch.zeros(8, 1))
    errG = criterion(output_fake, torch.ones(8, 1))
    errD.backward(retain_graph=True)
    errG.backward()
    optimizerD.step()
    optimizerG.step()
""",
)


def test_zero_both_backward_both_step_both_is_not_equivalent_but_loopfix_is():
    case = next(c for c in POSITIVE if c.name == "lf002_gan_generator_reuses_d_output")
    result = analyse(case.before)
    assert NAIVE_REORDER[0] in result.source.text
    (loopfix_verdict,) = verify_file(result, VERIFY)
    assert loopfix_verdict.verdict == "equivalent"
    result.fixed_text = result.source.text.replace(*NAIVE_REORDER)
    units = collect_runs(result, VERIFY)
    assert units[SCRIPT].patched.error is None  # it "works"...
    (naive_verdict,) = judge(result, units)
    assert naive_verdict.verdict.startswith("not equivalent")  # ...wrongly
    assert "optimizer 0" in naive_verdict.verdict  # D got G's gradient too


# A reorder judged against the original run with saved tensors copied (the deferred-steps
# reference cannot judge an agent that reads what an earlier agent's steps changed): wrong
# reorders that run must still be refused over the whole run.
WRONG_MULTI_AGENT = {
    "the actor's loss into the critic too": (
        "actor_loss.backward(inputs=list(self.actor.parameters()))",
        "actor_loss.backward()",
    ),
    "the critic stepped before the actor's backward, with it": (
        "        self.critic_optim.step()\n        self.actor_optim.step()\n",
        "        self.actor_optim.step()\n        self.critic_optim.step()\n",
    ),
}


@pytest.mark.parametrize("wrong", sorted(WRONG_MULTI_AGENT))
def test_the_copied_saved_tensors_reference_rejects_a_wrong_reorder(wrong):
    case = next(c for c in POSITIVE if c.name.startswith("lf002_multi_agent"))
    result = analyse(case.before)
    (right,) = verify_file(result, VERIFY)
    assert right.verdict == "equivalent"
    old, new = WRONG_MULTI_AGENT[wrong]
    assert old in result.fixed_text
    result.fixed_text = result.fixed_text.replace(old, new, 1)
    units = collect_runs(result, VERIFY)
    assert units[SCRIPT].patched.error is None
    (verdict,) = judge(result, units)
    assert verdict.verdict.startswith("not equivalent"), verdict.verdict


@pytest.mark.parametrize("name", ["lf002_gan_generator_reuses_d_output", "lf002_coupled_networks"])
def test_autograd_grad_restriction_style_is_exact_too(name, tmp_path):
    case = next(c for c in POSITIVE if c.name == name)
    options = Options(restrict_style=RestrictStyle.autograd_grad)
    result = analyse_source(SourceFile.read(case.before), options=options)
    assert all(f.fixable for f in result.findings)
    assert "torch.autograd.grad(" in result.fixed_text and "inputs=" not in result.fixed_text
    patched = tmp_path / "patched.py"
    patched.write_bytes(result.fixed_bytes)
    assert analyse_source(SourceFile.read(patched), options=options).findings == []
    reference = first_steps(run_traced(case.before, tmp_path, defer_steps=True).events)
    run = run_traced(patched, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert step_difference(reference, first_steps(run.events)) is None


# The reorder that looks right for a world model stepped before the imagination rollout:
# every optimizer still gets the gradients of a deferred-update run of the original, but the
# rollout now runs on the world model from before its step. Only the forward comparison of
# the oracle sees it (the value and actor losses differ from the original's).
ROLLOUT_MOVED_BEFORE_STEP = (
    """    world_loss.backward(retain_graph=True)
    opt_world.step()
    # imagine one step ahead with the world model just updated
    imagined = world(actor(latent))
    actor_loss = -imagined.mean()
    opt_actor.zero_grad()
    actor_loss.backward()
    opt_actor.step()
""",
    """    world_loss.backward(retain_graph=True)
    # imagine one step ahead with the world model just updated
    imagined = world(actor(latent))
    actor_loss = -imagined.mean()
    opt_actor.zero_grad()
    actor_loss.backward(inputs=list(actor.parameters()))
    opt_world.step()
    opt_actor.step()
""",
)


def test_a_reorder_that_moves_a_forward_across_its_step_is_not_equivalent():
    case = next(c for c in UNSAFE if c.name == "lf002_world_model_stepped_before_rollout")
    result = analyse(case.before)
    (finding,) = result.findings
    context = FileContext.parse(result.source.text, str(case.before))
    reason = update_order.plan_reorder(context, finding.detail.id)
    assert "runs a forward of weights" in str(reason)  # no reorder; only the unsafe recompute
    assert not finding.fix.safe
    # pretend it was offered: the rewrite a planner without the forward guard would make
    finding.fix, finding.applied = Fix("reorder", ()), True
    result.fixed_text = result.source.text.replace(*ROLLOUT_MOVED_BEFORE_STEP)
    assert result.fixed_text != result.source.text
    units = collect_runs(result, VERIFY)
    runs = units[SCRIPT]
    assert runs.patched.error is None  # it runs...
    reference = first_steps(runs.reference.events)
    assert step_difference(reference, first_steps(runs.patched.events)) is None  # ...and fools
    (verdict,) = judge(result, units)  # the gradient check, but not the forward comparison
    assert verdict.verdict.startswith("not equivalent: forward"), verdict.verdict


# The tempting rewrite of a guarded generator update: move the critic's step into the `if`,
# after the generator's backward. It runs, and the first iteration (the only one the original
# completes) is even exact; but the critic now steps only every n_critic iterations, which only
# the comparison of the whole run's step sequence with the reference's sees.
CRITIC_STEP_MOVED_INTO_THE_IF = (
    """    errD.backward(retain_graph=True)
    optD.step()

    if i % n_critic == 0:
        optG.zero_grad()
        errG = -d_fake.mean()
        errG.backward()
        optG.step()
""",
    """    errD.backward(retain_graph=True, inputs=list(netD.parameters()))

    if i % n_critic == 0:
        optG.zero_grad()
        errG = -d_fake.mean()
        errG.backward(inputs=list(netG.parameters()))
        optD.step()
        optG.step()
""",
)


def test_a_step_moved_into_an_if_is_not_equivalent_but_the_guarded_reorder_is():
    case = next(c for c in POSITIVE if c.name == "lf002_wgan_generator_every_n_critic")
    result = analyse(case.before)
    (loopfix_verdict,) = verify_file(result, VERIFY)
    assert loopfix_verdict.verdict == "equivalent"
    result.fixed_text = result.source.text.replace(*CRITIC_STEP_MOVED_INTO_THE_IF)
    assert result.fixed_text != result.source.text
    units = collect_runs(result, VERIFY)
    runs = units[SCRIPT]
    assert runs.patched.error is None  # it runs...
    reference = first_steps(runs.reference.events)
    assert step_difference(reference, first_steps(runs.patched.events)) is None  # ...first steps
    (verdict,) = judge(result, units)  # are exact, but the critic skips every other step
    assert verdict.verdict.startswith("not equivalent: the optimizers stepped"), verdict.verdict


KEPT_GRAPH = """
import runpy, sys
namespace = runpy.run_path(sys.argv[1], run_name="__main__")
name, *attributes = sys.argv[2].split(".")  # `meter.sum`: a total kept on an object
total = namespace[name]
for attribute in attributes:
    total = getattr(total, attribute)
def items(value):  # a dict's entries and a list's items, nested (`history["loss"][k]`)
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [item for entry in value for item in items(entry)]
    return [value]
print(any(getattr(item, "grad_fn", None) is not None for item in items(total)))
"""


@pytest.mark.parametrize("case", [c for c in POSITIVE if c.accumulates], ids=str)
def test_a_logged_total_really_keeps_the_graphs_and_the_fix_drops_them(case: Case):
    """LF006's effect, measured: at the end of before.py the total (or the history's items)
    still holds a graph (`grad_fn`); at the end of after.py it holds none."""
    from scripts import run_python

    def keeps(path) -> str:
        done = run_python(["-c", str(path), case.accumulates], path.parent, code=KEPT_GRAPH)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip().splitlines()[-1]

    assert keeps(case.before) == "True"
    assert keeps(case.after) == "False"


# LF009: restricting the leaking backward to the wrong network's parameters, or clearing the
# wrong optimizer, runs without an error; the oracle must refuse both.
WRONG_LEAK_FIXES = {
    "inputs of the generator": (
        "d_loss.backward(retain_graph=True)",
        "d_loss.backward(retain_graph=True, inputs=list(generator.parameters()))",
    ),
    "the discriminator cleared instead": (
        "    optimizer_d.step()\n",
        "    optimizer_d.step()\n    optimizer_d.zero_grad()\n",
    ),
}


@pytest.mark.parametrize("wrong", sorted(WRONG_LEAK_FIXES))
def test_the_leak_oracle_rejects_a_wrong_fix(wrong):
    case = next(c for c in POSITIVE if c.name == "lf009_gan_retain_graph_band_aid")
    old, new = WRONG_LEAK_FIXES[wrong]
    result = analyse(case.before)
    (right,) = verify_file(result, VERIFY)
    assert right.verdict == "equivalent"
    assert old in result.source.text
    result.fixed_text = result.source.text.replace(old, new, 1)
    units = collect_runs(result, VERIFY)
    assert units[SCRIPT].patched.error is None
    (verdict,) = judge(result, units)
    assert verdict.verdict.startswith("not equivalent"), verdict.verdict


# LF008: rewrites that run but compute something else (another operation, the gate dropped),
# or still change the kept tensor; the oracle must refuse them.
WRONG_OUT_OF_PLACE = {
    "another operation": ("        out *= x  # gate the input\n", "        out = out + x\n"),
    "the gate dropped": ("        out *= x  # gate the input\n", "        out = out.clone()\n"),
    "cloned after the change": (
        "        out *= x  # gate the input\n",
        "        out *= x\n        out = out.clone()\n",
    ),
}


@pytest.mark.parametrize("wrong", sorted(WRONG_OUT_OF_PLACE))
def test_the_out_of_place_oracle_rejects_a_wrong_rewrite(wrong):
    case = next(c for c in POSITIVE if c.name == "lf008_gate_sigmoid_plus_residual")
    old, new = WRONG_OUT_OF_PLACE[wrong]
    result = analyse(case.before)
    assert old in result.source.text
    result.fixed_text = result.source.text.replace(old, new, 1)
    (verdict,) = judge(result, collect_runs(result, VERIFY))
    assert verdict.verdict.startswith("not equivalent"), verdict.verdict
