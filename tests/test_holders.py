"""Objects, functions and names that may keep a reference to a module (`LoopModel.holders_of`):
LF002's reorder never moves the module's optimizer step after a statement using one, since
what it reads would be the weights before the step (`ema.update()` of `ema = EMA(D, 0.9)`
averages them). Each template runs: the generator's loss reuses the discriminator's output
from before the discriminator's step (the LF002 bug), and the line after `opt_d.step()` reads
the discriminator through the holder."""

from __future__ import annotations

import pytest
from scripts import run_script

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

GAN = """\
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class EMA:
    def __init__(self, model, decay=0.9):
        self.model = model
        self.shadow = copy.deepcopy(model)
        self.decay = decay

    @torch.no_grad()
    def update(self):
        for average, current in zip(self.shadow.parameters(), self.model.parameters()):
            average.mul_(self.decay).add_(current, alpha=1 - self.decay)


def make_ema(model):
    return EMA(model)


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
{build}
opt_g = torch.optim.Adam(G.parameters(), lr=1e-2)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-2)
for step in range(3):
    fake = G(torch.randn(5, 3))
    pred_real, pred_fake, pred_gen = D(torch.randn(5, 4)), D(fake.detach()), D(fake)
    d_loss = F.softplus(-pred_real).mean() + F.softplus(pred_fake).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    {use}
    g_loss = F.softplus(-pred_gen).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
"""
HOLDERS = {  # -> (what builds it, the statement after the step that reads through it)
    "factory": ("ema = make_ema(D)", "ema.update()"),
    "dict": ("trackers = {'d': EMA(D)}", "trackers['d'].update()"),
    "alias": ("ema = EMA(D)\nholder = ema", "holder.update()"),
    "submodule": ("ema = EMA(D[0])", "ema.update()"),
    "given later": ("ema = EMA(copy.deepcopy(D))\nema.model = D", "ema.update()"),
    "state_dict": ("weights = D.state_dict()", "print(weights['0.weight'].sum().item())"),
    "weight": ("first = D[0].weight", "print(first.sum().item())"),
    "lambda": ("snap = lambda: D[2].weight.sum().item()", "print(snap())"),
}


def _gan(build: str, use: str) -> str:
    return GAN.replace("{build}", build).replace("{use}", use)


@pytest.mark.parametrize("holder", list(HOLDERS))
def test_no_safe_reorder_moves_a_step_past_a_holder_of_its_module(holder, tmp_path):
    text = _gan(*HOLDERS[holder])
    run = run_script(text, tmp_path)
    assert "modified by an inplace operation" in run.stderr, run.stderr
    findings = analyse_source(SourceFile.from_bytes("train.py", text.encode())).findings
    (finding,) = [f for f in findings if f.rule == "LF002"]
    assert finding.fix is None or not finding.fix.safe
    assert "which keeps weights `opt_d`" in (finding.fix_unavailable or "")


def test_a_holder_of_another_module_leaves_the_reorder_safe():
    """An average of the generator: the discriminator's step may move past its update."""
    text = _gan("ema = EMA(G)", "ema.update()")
    findings = analyse_source(SourceFile.from_bytes("train.py", text.encode())).findings
    (finding,) = [f for f in findings if f.rule == "LF002"]
    assert finding.fix is not None and finding.fix.safe
