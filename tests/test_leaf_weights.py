"""Weights written by hand (`W = nn.Parameter(...)`, `torch.randn(..., requires_grad=True)`,
`.requires_grad_()`) build a graph where an operation keeps a tensor to give them their
gradient (`x @ W`, `h * W`, `torch.mm(h, W)`), as a layer's call does: a recurrent state
computed that way and carried into the next batch without a detach goes back through the
freed graph (LF001). Whether such an operation keeps the weight itself depends on the other
operand, so a step over the weight is not taken to change what those graphs saved: a weight
reached only through `exp()` (SAC's temperature) or an addition, stepped before a backward,
is correct code. Under `torch.no_grad()` they build nothing, and a name bound again (`w -=
lr * w.grad` by hand) is no longer taken for one. Each program is run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

RECURRENT = """\
import torch

torch.manual_seed(0)
{weights}
{optimizer}
h = torch.zeros(2, 8)
for t in range(3):
    x = torch.randn(2, 4)
    {carry}h = torch.tanh(x @ U + h @ W)
    loss = h.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

PARAMETERS = (
    "W = torch.nn.Parameter(torch.randn(8, 8) * 0.1)\n"
    "U = torch.nn.Parameter(torch.randn(4, 8) * 0.1)"
)
REQUIRING = "W = torch.randn(8, 8, requires_grad=True)\nU = torch.randn(4, 8, requires_grad=True)"
REQUIRED = (
    "W = (torch.randn(8, 8) * 0.1).requires_grad_()\nU = (torch.randn(4, 8) * 0.1).requires_grad_()"
)

# name -> (weights, optimizer, what the loop does to the state first, whether it raises)
PROGRAMS = {
    "nn.Parameter, SGD over a list": (
        PARAMETERS,
        "opt = torch.optim.SGD([W, U], lr=0.1)",
        "",
        True,
    ),
    "requires_grad=True, SGD over a named list": (
        REQUIRING,
        "params = [W, U]\nopt = torch.optim.SGD(params, lr=0.1)",
        "",
        True,
    ),
    "requires_grad_(), Adam": (REQUIRED, "opt = torch.optim.Adam([W, U], lr=0.1)", "", True),
    "the state detached each batch": (
        PARAMETERS,
        "opt = torch.optim.SGD([W, U], lr=0.1)",
        "h = h.detach()\n    ",
        False,
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_state_built_from_hand_made_weights_carries_their_graph(name, tmp_path):
    weights, optimizer, carry, raises = PROGRAMS[name]
    source = RECURRENT.format(weights=weights, optimizer=optimizer, carry=carry)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])


BY_HAND = """\
import torch

torch.manual_seed(0)
x, y = torch.randn(16, 3), torch.randn(16, 1)
w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for epoch in range(3):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
"""

BUILT_ONCE = """\
import torch

torch.manual_seed(0)
W = torch.nn.Parameter(torch.randn(4, 4))
scale = W * 2  # built once, before the loop
opt = torch.optim.SGD([W], lr=0.1)
for step in range(3):
    loss = (torch.randn(2, 4) @ scale).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_weights_updated_by_hand_under_no_grad_are_left_alone(tmp_path):
    run = run_script(BY_HAND, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(BY_HAND) == []


def test_a_value_built_once_from_a_weight_is_one_graph_for_every_iteration(tmp_path):
    run = run_script(BUILT_ONCE, tmp_path)
    assert "backward through the graph a second time" in run.stderr, run.stderr
    assert rules_reported(BUILT_ONCE) == ["LF003"]


TEMPERATURE = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(3, 1)
log_alpha = torch.zeros(1, requires_grad=True)
alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-2)
net_optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    out = net(torch.randn(5, 3))
    {scaled}
    alpha_optimizer.zero_grad()
    (-scaled).backward(retain_graph=True)
    alpha_optimizer.step()
    net_loss = (out ** 2).mean() + scaled
    net_optimizer.zero_grad()
    net_loss.backward()
    net_optimizer.step()
"""


@pytest.mark.parametrize(
    "scaled",
    [
        "scaled = log_alpha.exp() * (out.mean() - 1.0)",  # exp keeps its result
        "scaled = (out + log_alpha).mean()",  # an addition keeps nothing
    ],
)
def test_a_step_of_a_weight_its_graph_did_not_keep_is_not_reported(scaled, tmp_path):
    source = TEMPERATURE.format(scaled=scaled)
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []
