"""The reorder around a loop of whole updates (a WGAN critic's `for _ in range(n_critic):`):
offered, exact and verified when the loop keeps to its own optimizers; otherwise refused with
a reason a user can act on."""

from __future__ import annotations

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

VERIFY = RunSettings(device="cpu", iterations=3, timeout=180)

CRITIC_LOOP = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=1e-4)
optG = torch.optim.Adam(netG.parameters(), lr=1e-4)
for it in range(3):
    fake = netG(torch.randn(16, 4))
    score_fake = netD(fake)
    for _ in range(2):
        optD.zero_grad()
        errD = netD({critic_input}).mean() - netD(torch.randn(16, 8)).mean()
        errD.backward({retain})
        optD.step()
{between}
    optG.zero_grad()
    errG = {loss}
    errG.backward()
    optG.step()
"""


def analyse(
    tmp_path, critic_input="fake.detach()", retain="", between="", loss="-score_fake.mean()"
):
    text = CRITIC_LOOP.format(
        critic_input=critic_input,
        retain=retain,
        between=between and "    " + between,
        loss=loss,
    )
    path = tmp_path / "train.py"
    path.write_text(text)
    return analyse_source(SourceFile.read(path), project=None)


def test_the_generator_update_runs_around_the_critic_loop_and_verifies(tmp_path):
    result = analyse(tmp_path)
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.safe, finding.fix_unavailable
    assert "errG.backward(inputs=list(netG.parameters()))\n    for _ in range(2):" in (
        result.fixed_bytes.decode()
    )
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.verdict == "equivalent", verdict.verdict


def test_a_statement_reading_what_the_loop_bound_stays_after_it(tmp_path):
    """WGAN's `print(errD.item())` after the critic's loop."""
    result = analyse(tmp_path, between="print(errD.item())")
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.safe, finding.fix_unavailable
    assert "optD.step()\n    print(errD.item())\n    optG.step()" in result.fixed_bytes.decode()
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.verdict == "equivalent", verdict.verdict


@pytest.mark.parametrize(
    "shape, reason",
    [
        (
            dict(critic_input="fake", retain="retain_graph=True"),
            "also reaches `netG`, which no optimizer stepped in that loop owns",
        ),
        # the generator's loss reads the critic's last loss: it cannot run before the loop
        (dict(loss="-score_fake.mean() * errD.detach().abs()"), "both use `errG`"),
    ],
)
def test_a_loop_that_is_not_its_own_update_is_refused_with_why(tmp_path, shape, reason):
    (finding,) = analyse(tmp_path, **shape).findings
    assert finding.fix is None or not finding.fix.safe
    assert reason in finding.fix_unavailable
