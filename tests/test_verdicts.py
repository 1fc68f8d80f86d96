"""What a verdict says, and what it rests on.

- Every rule's oracle first confirms, in the original run, the bug its finding reports: for
  each rule, one program is reported and fixed alike in two settings that only its run tells
  apart; where the bug does not happen the verdict is `not confirmed: <what was not seen>`,
  where it does the fix gets its normal verdict.
- A patched run that raises an error the original did not raise is refused, whatever else.
- Several rules' fixes in one file are each judged by their own criterion, against the
  original with the other rules' fixes applied, and `apply` writes them all.
- Verdicts use one vocabulary (`compare.Outcome`), read the same in text, JSON, SARIF and the
  editor, and name a notebook's findings by cell and line as `check` does.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loopfix.analysis import analyse_source
from loopfix.cli import app
from loopfix.rules import rule_by_code
from loopfix.rules.compare import MEANINGS, Outcome
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import SCRIPT, collect_runs, judge, verify_file

SETTINGS = RunSettings(device="cpu", iterations=3, timeout=120)
PROGRAMS = Path(__file__).parent / "data" / "verdicts"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@dataclass(frozen=True)
class Pair:
    """`program` (in tests/data/verdicts) with the bug, and the same program with the line
    `buggy` changed to `harmless`: the same finding and fix, a run without the bug."""

    rule: str
    program: str
    buggy: str
    harmless: str
    not_seen: str  # what the `not confirmed` verdict says was not seen


PAIRS = [
    Pair(
        "LF001",
        "lf001_gru_state.py",
        "for _ in range(3)]",
        "for _ in range(1)]",  # one batch: the state is never fed back after a backward
        "held no graph a backward had used",
    ),
    Pair(
        "LF001",
        "lf001_state_cut_by_an_unseen_helper.py",
        'methodcaller("clone")',
        'methodcaller("detach")',  # a helper loopfix does not follow cuts the state
        "no later backward went through the graph the state fed back",
    ),
    Pair(
        "LF002",
        "lf002_step_before_backward.py",
        "model_b = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))",
        "model_b = nn.Linear(4, 4)",  # on the raw input, its weights are not saved
        "did not raise 'modified by an inplace operation'",
    ),
    Pair(
        "LF003",
        "lf003_shared_encoder.py",
        "return x * self.scale",
        "return x + self.scale",  # an addition saves nothing: a second backward is fine
        "did not raise 'Trying to backward through the graph a second time'",
    ),
    Pair(
        "LF004",
        "lf004_retain_after_warmup.py",
        "WARMUP = 0",
        "WARMUP = 10",  # the retaining backward never runs within the capped iterations
        "no backward on line 12 ran with retain_graph=True",
    ),
    Pair(
        "LF004",
        "lf004_table_before_the_loop.py",
        "REBUILD_EACH_STEP = True",
        "REBUILD_EACH_STEP = False",  # the table's graph, built once, serves every 4th step
        "still held the graph the backward on line 17 kept when that backward ran again",
    ),
    Pair(
        "LF005",
        "lf005_scheduler_at_epoch_start.py",
        "WARMUP_BATCHES = 0",
        "WARMUP_BATCHES = 1",  # the optimizer steps once before the scheduler ever does
        "no scheduler had stepped before its optimizer's first step",
    ),
    Pair(
        "LF006",
        "lf006_logged_total.py",
        "KEEP_GRAPH = bool(1)",
        "KEEP_GRAPH = bool(0)",  # the helper hands the total a detached value
        "held no graph in the original run",
    ),
    Pair(
        "LF007",
        "lf007_never_zeroed.py",
        "for _ in range(3)]",
        "for _ in range(1)]",  # one step, from zero: nothing piles up
        "every step of the original used the gradients accumulated since the previous step",
    ),
    Pair(
        "LF008",
        "lf008_gate_changed_in_place.py",
        "LEARN_GATE = True",
        "LEARN_GATE = False",  # the sigmoid of the raw input needs no saved result
        "did not raise 'modified by an inplace operation'",
    ),
    Pair(
        "LF009",
        "lf009_fake_seen_by_the_critic.py",
        "DETACH_FAKE = bool(0)",
        "DETACH_FAKE = bool(1)",  # the critic's loss never reaches the generator
        "no backward's gradients reached two optimizers' steps",
    ),
]


def variant(tmp_path: Path, pair: Pair, buggy: bool) -> Path:
    text = (PROGRAMS / pair.program).read_text()
    assert pair.buggy in text
    path = tmp_path / ("buggy" if buggy else "harmless") / pair.program
    path.parent.mkdir()
    path.write_text(text if buggy else text.replace(pair.buggy, pair.harmless, 1))
    return path


def applied(path: Path):
    result = analyse_source(SourceFile.read(path))
    return result, [f for f in result.findings if f.applied]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.rule)
def test_the_fix_is_not_confirmed_where_the_original_run_does_not_show_the_bug(pair, tmp_path):
    buggy, buggy_findings = applied(variant(tmp_path, pair, buggy=True))
    harmless, harmless_findings = applied(variant(tmp_path, pair, buggy=False))
    # the same report and the same fix: only running the code tells the two apart
    assert {f.rule for f in buggy_findings} == {pair.rule}
    assert [(f.rule, [e.text for e in f.fix.edits]) for f in harmless_findings] == [
        (f.rule, [e.text for e in f.fix.edits]) for f in buggy_findings
    ]

    (without,) = [v for v in verify_file(harmless, SETTINGS) if v.rule == pair.rule]
    assert without.outcome is Outcome.unconfirmed, without
    assert pair.not_seen in without.verdict, without.verdict
    assert not without.writable

    (with_bug,) = [v for v in verify_file(buggy, SETTINGS) if v.rule == pair.rule]
    normal = Outcome.intended if pair.rule == "LF005" else Outcome.equivalent
    assert with_bug.outcome is normal, with_bug
    assert with_bug.writable


def test_a_patched_run_that_raises_what_the_original_did_not_is_refused(tmp_path):
    """Refused by that reason even where the bug itself is not confirmed."""
    pair = next(p for p in PAIRS if p.rule == "LF006")
    result, _ = applied(variant(tmp_path, pair, buggy=False))
    assert "total_loss += logged(loss).detach()" in result.fixed_text
    result.fixed_text = result.fixed_text.replace(
        "logged(loss).detach()", "logged(loss).detached()"
    )
    (verdict,) = judge(result, collect_runs(result, SETTINGS))
    assert verdict.verdict == (
        "not equivalent: patched raised AttributeError: 'Tensor' object has no attribute "
        "'detached', original did not"
    ), verdict.verdict


THREE_RULES = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(3)]

for epoch in range(3):
    scheduler.step()
    total_loss = 0.0
    for x, y in batches:
        loss = criterion(model(x), y)
        loss.backward()
        total_loss += loss
        optimizer.step()
    print(f"epoch {epoch}: mean loss {total_loss / len(batches):.4f}")
"""


def test_three_rules_fixes_in_one_file_are_each_judged_by_their_own_criterion(tmp_path):
    """LF005 (the scheduler at the top of the epoch), LF006 (the logged total) and LF007
    (nothing zeroes the gradients) in one loop: each fix changes what the others' runs see
    (the learning rates, the gradients), so each is judged against the original with the
    other two applied, and `apply` writes all three."""
    path = tmp_path / "train.py"
    path.write_text(THREE_RULES)
    result, findings = applied(path)
    assert sorted(f.rule for f in findings) == ["LF005", "LF006", "LF007"]
    units = collect_runs(result, SETTINGS)
    verdicts = {v.rule: v for v in judge(result, units)}
    assert {rule: v.outcome for rule, v in verdicts.items()} == {
        "LF005": Outcome.intended,
        "LF006": Outcome.equivalent,
        "LF007": Outcome.equivalent,
    }
    assert "LF006 line 17" in verdicts["LF005"].against
    assert "LF005 line 12" in verdicts["LF006"].against
    assert "LF007" in verdicts["LF006"].against

    # against the plain original, LF006's fix would carry the other two's changes
    plain = units[SCRIPT]
    (lf006,) = [f for f in findings if f.rule == "LF006"]
    verdict = rule_by_code("LF006").judge(lf006, plain)
    assert verdict.startswith("not equivalent: "), verdict

    copy = tmp_path / "copy" / "train.py"
    copy.parent.mkdir()
    shutil.copy(path, copy)
    done = invoke("apply", "--device", "cpu", "--no-cache", str(copy))
    assert done.exit_code == 0, done.output
    assert copy.read_bytes() == result.fixed_bytes
    assert "Fixed 3 finding(s) in 1 file(s)." in done.stderr
    for rule in ("LF005", "LF006", "LF007"):
        assert f"{rule} line" in done.stderr


def test_the_vocabulary_is_defined_once_in_the_help_and_the_docs():
    help_text = " ".join(invoke("verify", "--help").stdout.split())
    docs = (Path(__file__).parent.parent / "docs" / "verification.md").read_text()
    for word, meaning in MEANINGS.items():
        assert f"{word}: {' '.join(meaning.split())}." in help_text, word
        assert f"| `{word}` | {meaning} |" in docs, word


def test_every_output_of_verify_says_the_same_words(tmp_path, monkeypatch):
    """Text, JSON and SARIF give each verdict its word, what was compared over how many
    iterations, and what the original did, in one line that nothing cuts."""
    pair = next(p for p in PAIRS if p.rule == "LF003")
    path = variant(tmp_path, pair, buggy=True)
    monkeypatch.chdir(path.parent)
    (row,) = json.loads(invoke("verify", "--format", "json", "--device", "cpu", path.name).stdout)
    assert row["outcome"] == "equivalent" and row["written"] is True
    assert row["compared"] == rule_by_code("LF003").compared(applied(path)[1][0])
    assert row["original"] == (
        "raised RuntimeError: Trying to backward through the graph a second time (or directly "
        "access saved tensors after they have already been freed). (after 0 iterations)"
    )
    (line,) = invoke("verify", "--device", "cpu", path.name).stdout.splitlines()
    assert line.startswith(f"{path.name}:{row['line']}:{row['column']}: LF003 equivalent | ")
    assert f"| compared {row['compared']} over 3 iterations |" in line
    assert f"| original: {row['original']} |" in line
    sarif = json.loads(invoke("verify", "--format", "sarif", "--device", "cpu", path.name).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["level"] == "note" and result["properties"]["outcome"] == "equivalent"
    seconds = line.rsplit(", ", 1)[0]  # each run takes its own time
    assert result["message"]["text"].rsplit(", ", 1)[0] == seconds.split(": ", 1)[1]


def test_verify_names_a_notebooks_findings_by_cell_and_line(tmp_path, monkeypatch):
    from test_notebook import GAN, notebook

    head, loop = GAN.split("for i in range(3):\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gan.ipynb").write_bytes(notebook(head, "for i in range(3):\n" + loop))
    (checked,) = json.loads(invoke("check", "--no-cache", "--format", "json", ".").stdout)
    (row,) = json.loads(invoke("verify", "--format", "json", "--device", "cpu", ".").stdout)
    assert (row["cell"], row["line"], row["column"]) == (
        checked["cell"],
        checked["line"],
        checked["column"],
    )
    assert row["outcome"] == "equivalent"
    (line,) = invoke("verify", "--device", "cpu", ".").stdout.splitlines()
    assert line.startswith(f"gan.ipynb:cell {row['cell']}:{row['line']}:{row['column']}: LF002 ")
    sarif = json.loads(invoke("verify", "--format", "sarif", "--device", "cpu", ".").stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"]["cell"] == row["cell"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == row["line"]


def test_a_verdict_over_no_iteration_does_not_claim_a_comparison():
    """A run that failed before its first iteration compared nothing: the line says so."""
    from loopfix.report import verdict_line

    row = {
        "path": "train.py", "line": 3, "column": 1, "rule": "LF001", "cell": None,
        "verdict": "unverified: the original failed otherwise: ModuleNotFoundError",
        "compared": "the first iteration's losses", "iterations": 0, "against": "",
        "original": "raised ModuleNotFoundError (after 0 iterations)", "patched": "-",
        "level": "unit", "device": "cpu", "sandbox": "-", "seconds": 0.4,
    }  # fmt: skip
    line = verdict_line(row)
    assert "| no iteration ran to compare the first iteration's losses |" in line
    assert "over 0 iterations" not in verdict_line(row)
    assert "over 2 iterations" in verdict_line({**row, "iterations": 2})


TWO_LOOPS = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
warmup = nn.Linear(4, 1)
warmup_opt = torch.optim.SGD(warmup.parameters(), lr=0.1)
for step in range(20):  # a first training loop that uses up the iteration cap
    warmup_opt.zero_grad()
    warmup(torch.randn(8, 4)).pow(2).mean().backward()
    warmup_opt.step()

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward(retain_graph=True)
    opt.step()
"""


def test_a_finding_the_capped_run_never_reached_is_unverified_not_unconfirmed(tmp_path):
    """The cap counts the first optimizer's steps over the whole script: a later loop does
    not run at all. Its finding is undecided ("unverified"), not "not confirmed", which
    would say the run showed no bug there."""
    path = tmp_path / "two_loops.py"
    path.write_text(TWO_LOOPS)
    (finding,) = analyse_source(SourceFile.read(path), project=None).findings
    assert finding.rule == "LF004"
    (verdict,) = verify_file(analyse_source(SourceFile.read(path), project=None), SETTINGS)
    assert verdict.outcome == Outcome.undecided, verdict
    assert "stopped at its iteration cap (3 steps" in verdict.verdict


EVALUATION_AFTER_AN_EPOCH = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def evaluate():
    total = 0.0
    for step in range(3):
        total += model(torch.randn(8, 4)).pow(2).mean()
    print(f"validation {total:.4f}")


for epoch in range(2):
    for step in range(5):
        opt.zero_grad()
        model(torch.randn(8, 4)).pow(2).mean().backward()
        opt.step()
    evaluate()
"""


def test_an_evaluation_after_the_capped_steps_is_unverified_not_unconfirmed(tmp_path):
    """An evaluation helper runs after an epoch of 5 steps: the run stops at its cap of 3
    first, so LF006's total was never added to. The verdict says so ("unverified"), and
    names `--iterations`, not "not confirmed"."""
    path = tmp_path / "evaluation.py"
    path.write_text(EVALUATION_AFTER_AN_EPOCH)
    (verdict,) = verify_file(analyse_source(SourceFile.read(path), project=None), SETTINGS)
    assert verdict.rule == "LF006" and verdict.outcome == Outcome.undecided, verdict
    assert "before the accumulation on line 12 ran (`--iterations` runs more)" in verdict.verdict
