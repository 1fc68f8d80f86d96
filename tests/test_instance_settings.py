"""A setting of `self` that the class's `__init__` binds once to a literal
(`self.reset_each_step = True`) decides the branches that test it, as a module constant does;
a store to an attribute of that name anywhere else in the module (a method, the training
script) leaves both branches open. Each program is run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

AGENT = """\
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.rnn = nn.GRUCell(4, 8)
        self.head = nn.Linear(8, 1)
        self.optimizer = torch.optim.Adam(
            list(self.rnn.parameters()) + list(self.head.parameters()), lr=1e-3
        )
        self.reset_each_step = {flag}
        self.h = torch.zeros(1, 8)

    def keep_state(self):
        self.{kept} = False

    def step(self, x, y):
        if self.reset_each_step:
            self.h = torch.zeros(1, 8)
        self.h = self.rnn(x, self.h)
        loss = (self.head(self.h) - y).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
agent = Agent()
{after_construction}
for t in range(5):
    agent.step(torch.randn(1, 4), torch.randn(1, 1))
"""

# (flag, attribute `keep_state` stores, what the script does after construction, raises)
PROGRAMS = {
    "reset on every step": ("True", "unused", "", False),
    "never reset (control)": ("False", "unused", "", True),
    "set off by the script (control)": ("True", "unused", "agent.reset_each_step = False", True),
    "set off by a method (control)": ("True", "reset_each_step", "agent.keep_state()", True),
    "set off through object.__setattr__ (control)": (
        "True",
        "unused",
        'object.__setattr__(agent, "reset_each_step", False)',
        True,
    ),
    "set off through the instance's __setattr__ (control)": (
        "True",
        "unused",
        'agent.__setattr__("reset_each_step", False)',
        True,
    ),
    "an attribute of that name set on another object (control)": (
        "True",
        "unused",
        "other = Agent()\nother.reset_each_step = False\nagent = other",
        True,
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_setting_its_class_binds_once_decides_its_branches(name, tmp_path):
    flag, kept, after, raises = PROGRAMS[name]
    source = AGENT.format(flag=flag, kept=kept, after_construction=after)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])


def test_a_private_setting_set_under_its_mangled_name_is_no_constant(tmp_path):
    """`self.__reset` in class `Agent` is the attribute `_Agent__reset` outside it."""
    source = (
        AGENT.format(flag="True", kept="unused", after_construction="agent._Agent__reset = False")
        .replace("self.reset_each_step = True", "self.__reset = True")
        .replace("if self.reset_each_step:", "if self.__reset:")
    )
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr, run.stderr
    assert rules_reported(source) == ["LF001"]
