"""The LF002/LF003 oracle first asks whether the diagnosis holds: a reorder of code that does
not fail is never judged equivalent, whatever its gradients (they are compared with a
deferred-update run of the original, which a correct original does not reproduce)."""

from __future__ import annotations

import textwrap

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

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
    assert verdict.verdict.startswith("not confirmed: the original did not fail"), verdict
