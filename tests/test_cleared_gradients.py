"""A step changes only the parameters that hold a gradient: PyTorch's optimizers skip a
parameter whose `.grad` is None, and `zero_grad()` sets `.grad` to None by default
(`set_to_none=True` since PyTorch 2.0). One optimizer over a GAN's two networks, stepped after
the discriminator's loss on detached fakes, leaves the generator's weights as they were, and
the generator's loss may still go back through the fakes built before that step. Each claim
is run: every script below raises exactly when loopfix reports LF002."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

ONE_OPTIMIZER_GAN = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(list(G.parameters()) + list(D.parameters()), lr=1e-3)
for step in range(3):
    z = torch.randn(16, 4)
    real = torch.randn(16, 4)
    fake = G(z)
    {clear}
    d_loss = D(real).mean() - D({fake_for_d}).mean()
    d_loss.backward({retain})
    opt.step()
    opt.zero_grad()
    g_loss = -D(fake).mean()
    g_loss.backward()
    opt.step()
"""

CASES = {
    # G's gradients are None at the first step: it changes D only
    "cleared": ("opt.zero_grad()", "fake.detach()", False),
    "cleared_explicitly": ("opt.zero_grad(set_to_none=True)", "fake.detach()", False),
    "cleared_per_network": ("G.zero_grad()\n    D.zero_grad()", "fake.detach()", False),
    # zeros are gradients: the step applies them to G (from the second iteration on)
    "zeroed": ("opt.zero_grad(set_to_none=False)", "fake.detach()", True),
    # D's loss goes back through G too (its graph kept for G's loss): G holds gradients
    "reached": ("opt.zero_grad()", "fake", True),
    # cleared on some iterations only: the others step G with the last iteration's gradients
    "cleared_on_some_paths": ("if step % 2 == 0:\n        opt.zero_grad()", "fake.detach()", True),
    # only D cleared: G keeps the last iteration's gradients
    "other_network_cleared": ("D.zero_grad()", "fake.detach()", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_step_changes_only_parameters_holding_gradients(case, tmp_path):
    clear, fake_for_d, raises = CASES[case]
    retain = "" if fake_for_d.endswith(".detach()") else "retain_graph=True"
    source = ONE_OPTIMIZER_GAN.format(clear=clear, fake_for_d=fake_for_d, retain=retain)
    run = run_script(source, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is raises, run.stderr[-600:]
    assert run.returncode == (1 if raises else 0)
    assert ("LF002" in rules_reported(source)) is raises
