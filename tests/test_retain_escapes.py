"""Where a `retain_graph=True` may be needed on a path the model does not follow, LF004 says
nothing: a setting's other values, when the runs take it to be one of the values its tests
list, and a graph a generator yields to its consumer. Each program is run, with the option
that takes the unfollowed path, for the truth."""

from __future__ import annotations

import subprocess
import sys

from scripts import rules_reported

SETTING_LOSSES = """\
import sys

import torch
import torch.nn as nn


class Args:
    loss = int(sys.argv[1])


args = Args()
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    out = model(torch.randn(8, 4)).tanh()
    loss = out.mean()
    {chain}
    loss.backward({keep})
    if args.loss not in (1, 2):
        out.sum().backward()
    opt.step()
    opt.zero_grad()
print(model.weight.sum().item())
"""

SEPARATE = """if args.loss == 1:
        loss = out.pow(2).mean()
    if args.loss == 2:
        loss = out.abs().mean()"""
ELIF = """if args.loss == 1:
        loss = out.pow(2).mean()
    elif args.loss == 2:
        loss = out.abs().mean()"""

GENERATOR = """\
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
regularise = sys.argv[1] == "reg"


def steps(n):
    for _ in range(n):
        out = model(torch.randn(8, 4))
        opt.zero_grad()
        out.pow(2).mean().backward({keep})
        yield out
        del out


for out in steps(4):
    if regularise:
        out.abs().mean().backward()
    opt.step()
    del out
print(model[0].weight.sum().item())
"""


def _runs(source: str, argument: str, tmp_path) -> subprocess.CompletedProcess:
    (tmp_path / "script.py").write_text(source)
    return subprocess.run(
        [sys.executable, "script.py", argument], cwd=tmp_path, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip


def test_a_retain_needed_only_for_a_value_no_test_lists_is_kept(tmp_path):
    """`loss` bound before two blocks of `args.loss` (separate `if`s, or an `if`/`elif`),
    then backpropagated with `retain_graph=True`; only a value neither block names runs the
    second backward through `out`. The runs take the setting to be 1 or 2 (the blocks bind
    `loss`), so no run follows the second backward: without the retain, `--loss 3` fails."""
    for chain in (SEPARATE, ELIF):
        kept = SETTING_LOSSES.format(chain=chain, keep="retain_graph=True")
        dropped = SETTING_LOSSES.format(chain=chain, keep="")
        for value in ("1", "2", "3"):
            assert _runs(kept, value, tmp_path).returncode == 0
        failed = _runs(dropped, "3", tmp_path)
        assert "backward through the graph a second time" in failed.stderr, failed.stderr
        assert "LF004" not in rules_reported(kept)


def test_a_graph_a_generator_yields_after_a_retained_backward_keeps_its_retain(tmp_path):
    """The generator backpropagates its output with `retain_graph=True` and yields it; the
    consumer backpropagates it again when regularising. Without the retain, `reg` fails."""
    kept = GENERATOR.format(keep="retain_graph=True")
    for argument in ("plain", "reg"):
        assert _runs(kept, argument, tmp_path).returncode == 0
    failed = _runs(GENERATOR.format(keep=""), "reg", tmp_path)
    assert "backward through the graph a second time" in failed.stderr, failed.stderr
    assert "LF004" not in rules_reported(kept)
