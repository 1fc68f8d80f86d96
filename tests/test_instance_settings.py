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


def runs_as_reported(source: str, error: str | None, rules: list[str], tmp_path) -> None:
    """`source` runs cleanly (`error` None) or raises `error`, and reports `rules`."""
    run = run_script(source, tmp_path)
    if error is None:
        assert run.returncode == 0, run.stderr
    else:
        assert error in run.stderr, run.stderr
    assert rules_reported(source) == rules


# a recurrent model whose `forward` detaches the state it is given when its setting says so,
# tested together with whether a state was given
TRUNCATING_GRU = """\
import torch
import torch.nn as nn


class StatefulGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 8, batch_first=True)
        self.head = nn.Linear(8, 1)
        self.truncate = {flag}

    def forward(self, x, h=None):
        if h is not None and self.truncate:
            h = h.detach()
        out, h = self.gru(x, h)
        return self.head(out), h


torch.manual_seed(0)
model = StatefulGRU()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
h = None
for t in range(4):
    prediction, h = model(torch.randn(2, 5, 3), h)
    loss = prediction.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

# an actor-critic whose actor head reads the shared features detached when its setting says
# so (in a conditional expression); the critic, encoder included, steps first
DETACHING_ACTOR = """\
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.actor, self.critic = nn.Linear(16, 3), nn.Linear(16, 1)
        self.detach_actor = {flag}

    def forward(self, obs):
        features = self.encoder(obs)
        logits = self.actor(features.detach() if self.detach_actor else features)
        return logits, self.critic(features).squeeze(-1)


torch.manual_seed(0)
net = ActorCritic()
critic_optimizer = torch.optim.SGD([*net.encoder.parameters(), *net.critic.parameters()], lr=0.1)
actor_optimizer = torch.optim.SGD(net.actor.parameters(), lr=0.1)
for it in range(3):
    logits, values = net(torch.randn(8, 6))
    critic_loss = (values - torch.randn(8)).pow(2).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    actor_loss = -logits.log_softmax(-1)[:, 0].mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
"""


@pytest.mark.parametrize(
    ("program", "flag", "error", "rules"),
    [
        (TRUNCATING_GRU, "True", None, []),
        (TRUNCATING_GRU, "False", "backward through the graph a second time", ["LF001"]),
        (DETACHING_ACTOR, "True", None, []),
        (DETACHING_ACTOR, "False", "backward through the graph a second time", ["LF003"]),
    ],
    ids=["truncating", "not_truncating", "detached_actor", "shared_actor"],
)
def test_a_setting_decides_an_and_with_another_test_and_a_conditional_expression(
    program, flag, error, rules, tmp_path
):
    runs_as_reported(program.format(flag=flag), error, rules, tmp_path)


# the setting is a constructor argument: what every construction passes decides it
CONSTRUCTED_GRU = (
    TRUNCATING_GRU.replace("def __init__(self):", "def __init__(self, truncate=True):")
    .replace("self.truncate = {flag}", "self.truncate = truncate")
    .replace("model = StatefulGRU()", "model = StatefulGRU({arguments})")
)


@pytest.mark.parametrize(
    ("arguments", "error", "rules"),
    [
        ("", None, []),  # the literal default
        ("truncate=True", None, []),
        ("False", "backward through the graph a second time", ["LF001"]),
        ("truncate=False", "backward through the graph a second time", ["LF001"]),
    ],
    ids=["default", "keyword", "positional_off", "keyword_off"],
)
def test_a_setting_every_construction_passes_as_a_literal_decides_its_branches(
    arguments, error, rules, tmp_path
):
    runs_as_reported(CONSTRUCTED_GRU.format(arguments=arguments), error, rules, tmp_path)


@pytest.mark.parametrize(
    ("constant", "arguments", "error", "rules"),
    [
        ("True", "TRUNCATE", None, []),
        ("True", "truncate=TRUNCATE", None, []),
        ("False", "TRUNCATE", "backward through the graph a second time", ["LF001"]),
    ],
    ids=["constant_on", "keyword_constant_on", "constant_off"],
)
def test_a_module_constant_every_construction_passes_decides_its_branches(
    constant, arguments, error, rules, tmp_path
):
    """`ImagePool(POOL_SIZE)`: a constant of the constructing module is its value."""
    source = CONSTRUCTED_GRU.format(arguments=arguments).replace(
        "torch.manual_seed(0)", f"TRUNCATE = {constant}\ntorch.manual_seed(0)"
    )
    runs_as_reported(source, error, rules, tmp_path)


def test_a_constant_rebound_in_the_module_is_no_setting(tmp_path):
    """`TRUNCATE` bound again (here: off before the loop) decides nothing."""
    source = CONSTRUCTED_GRU.format(arguments="TRUNCATE").replace(
        "torch.manual_seed(0)", "TRUNCATE = True\nTRUNCATE = False\ntorch.manual_seed(0)"
    )
    runs_as_reported(source, "backward through the graph a second time", ["LF001"], tmp_path)


def test_constructions_that_disagree_leave_both_branches_open(tmp_path):
    """Another instance built with the setting off: the class's setting is no constant."""
    source = CONSTRUCTED_GRU.format(arguments="truncate=True") + (
        "\nmodel = StatefulGRU(truncate=False)\nh = None\n"
        "for t in range(3):\n"
        "    prediction, h = model(torch.randn(2, 5, 3), h)\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    optimizer.zero_grad()\n"
        "    prediction.pow(2).mean().backward()\n"
        "    optimizer.step()\n"
    )
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr, run.stderr
    assert "LF001" in rules_reported(source)
