"""Loop runs remembered (`loopfix.model.memo`): a loop entered again from the state of an
earlier entry is not run to its fixpoint again, and reusing the run gives exactly what
running it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.model import memo
from loopfix.model.loop_model import build_model
from loopfix.parse import parse
from loopfix.source import SourceFile

from corpus_cases import CASES

# `decode`'s loop starts from the same state in every pass of the loops around it (what it
# reads is what it is given), and the training loop calls `sample` in each pass of its own
# fixpoint
SAMPLING = """\
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.cell = nn.GRUCell(6, 6)
        self.out = nn.Linear(6, 10)

    def init_hidden(self, batch):
        return torch.zeros(batch, 6)

    def step(self, inp, hidden):
        hidden = self.cell(self.embed(inp), hidden)
        return self.out(hidden), hidden


def decode(gen, hidden, length):
    inp = torch.zeros(4, dtype=torch.long)
    for t in range(length):
        logits, hidden = gen.step(inp, hidden)
        inp = logits.argmax(dim=-1).detach()
    return inp


def sample(gen, batches, length):
    samples = []
    for b in range(batches):
        samples.append(decode(gen, gen.init_hidden(4), length))
    return samples


def train(gen, dis, opt, data, epochs):
    for epoch in range(epochs):
        for real in data:
            fake = torch.stack(sample(gen, 2, 5)).float()
            loss = dis(fake).mean() - dis(real).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    gen, dis = Generator(), nn.Linear(4, 1)
    opt = torch.optim.Adam(dis.parameters())
    train(gen, dis, opt, [torch.randn(2, 4) for _ in range(3)], 2)
"""


def test_a_nested_loop_entered_again_from_the_same_state_is_not_run_again(monkeypatch):
    with_memo = build_model(parse(SAMPLING)).statements_run
    reported = text_findings(SAMPLING)
    monkeypatch.setattr(memo, "ENABLED", False)
    without = build_model(parse(SAMPLING)).statements_run
    # `decode`'s loop is three loops deep, each run to its fixpoint (two passes at least):
    # without the memo it runs again in every pass of every loop around it
    assert with_memo <= 0.7 * without
    assert reported == text_findings(SAMPLING)


def text_findings(text: str) -> list:
    return findings(SourceFile.from_text(Path("train.py"), text))


def findings(source: SourceFile) -> list:
    result = analyse_source(source, plan_fixes=False, project=None)
    return [(f.rule, f.start, f.end, f.message) for f in result.findings]


@pytest.mark.parametrize("half", [0, 1])
def test_reusing_a_loop_run_gives_what_running_it_gives_on_the_corpus(monkeypatch, half):
    """Every reuse is checked by running the loop again (`CHECK`: another flow, other
    written keys or any change to the observations or the interpreter's state raises), and
    the findings equal those of an analysis that runs every loop."""
    cases = [case.before for case in CASES][half::2]
    monkeypatch.setattr(memo, "CHECK", True)
    checked = {path: findings(SourceFile.read(path)) for path in cases}
    monkeypatch.setattr(memo, "CHECK", False)
    monkeypatch.setattr(memo, "ENABLED", False)
    assert checked == {path: findings(SourceFile.read(path)) for path in cases}


def test_the_runs_kept_are_bounded_and_forgetting_one_changes_nothing(monkeypatch):
    """Each run kept holds its entry's values alive: past `MAX_RUNS` the contexts met
    longest ago are forgotten (and a loop of one of them is run again, checked)."""
    kept = []
    run = memo.LoopMemo.run

    def counted(self, *arguments):
        flow = run(self, *arguments)
        kept.append(self.kept)
        return flow

    monkeypatch.setattr(memo.LoopMemo, "run", counted)
    monkeypatch.setattr(memo, "MAX_RUNS", 2)
    monkeypatch.setattr(memo, "CHECK", True)
    reported = text_findings(SAMPLING)
    assert len(kept) > 2 and max(kept) == 2
    monkeypatch.setattr(memo, "ENABLED", False)
    assert reported == text_findings(SAMPLING)
