"""A function that stores an item into a list it is given (`def fill(states, h): states[0] =
h`) stores it into the caller's list: Python passes the list itself. Each program is run
for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

PROGRAM = """\
import torch
import torch.nn as nn


{helper}


torch.manual_seed(0)
rnn = nn.GRUCell(4, 8)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.1)
states = [torch.zeros(1, 8)]
for step in range(3):
    h = rnn(torch.randn(1, 4), states[0])
    {call}
    loss = h.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

# (helper, its call, whether the script raises)
PROGRAMS = {
    "the state stored into the caller's list": (
        "def fill(states, state):\n    states[0] = state",
        "fill(states, h)",
        True,
    ),
    "passed by keyword": (
        "def fill(states, state):\n    states[0] = state",
        "fill(state=h, states=states)",
        True,
    ),
    "stored detached": (
        "def fill(states, state):\n    states[0] = state.detach()",
        "fill(states, h)",
        False,
    ),
    "a copy of the list filled": (
        "def fill(states, state):\n    states = list(states)\n    states[0] = state\n"
        "    return states",
        "fill(states, h)",
        False,
    ),
    "every item detached by a helper after the store": (
        "def repackage(states):\n    for i in range(len(states)):\n"
        "        states[i] = states[i].detach()",
        "states[0] = h\n    repackage(states)",
        False,
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_an_item_stored_through_a_parameter_is_the_callers(name, tmp_path):
    helper, call, raises = PROGRAMS[name]
    source = PROGRAM.format(helper=helper, call=call)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])
