"""`act = agent.act`, then `act(...)`: a name bound once to a method of a project object runs
that method on that object when called, as a3c_continuous' worker calls
`action_train = player.action_train`. Each program is run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

WORKER = """\
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.model = nn.LSTMCell(4, 8)
        self.head = nn.Linear(8, 1)

    def action_train(self, state, hx, cx):
        values = []
        for step in range(3):
            hx, cx = self.model(state, (hx, cx))
            values.append(self.head(hx))
            state = torch.randn(1, 4)
        return {returned}, hx, cx, values


torch.manual_seed(0)
player = Agent()
optimizer = torch.optim.Adam([*player.model.parameters(), *player.head.parameters()], lr=1e-3)
action_train = player.action_train
state = torch.randn(1, 4)
hx, cx = torch.zeros(1, 8), torch.zeros(1, 8)
for update in range(4):
    hx, cx = hx.detach(), cx.detach()
    state, hx, cx, values = action_train(state, hx, cx)
    loss = torch.stack(values).pow(2).mean() + state.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
"""


@pytest.mark.parametrize(
    "returned, raises",
    [("state", False), ("state + hx.sum()", True)],
    ids=["observation", "state_built_from_the_lstm"],
)
def test_a_method_called_through_a_name_bound_to_it_runs_on_its_object(returned, raises, tmp_path):
    """The state the method hands back is an observation (no graph), as the worker's is:
    followed into the method, the loop carries no graph. The control hands back a state
    built from the LSTM's output: the next update's backward goes through the previous
    one's freed graph."""
    source = WORKER.format(returned=returned)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])
