"""An item stored into a local list by index name and read back by it (`model.slots`): the
read gives that item, not every graph the list holds, while neither the list nor the index
has changed. Each claim is run: the correct script runs, each bug raises."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

FREED = "backward through the graph a second time"

HEADER = """
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(3, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
"""

# each pass stores its own loss and backwards it at once: no pass reads an earlier one's
PER_CONTEXT = (
    HEADER
    + """
losses = [None] * 3
for step in range(3):
    optimizer.zero_grad()
    for c in range(3):
        losses[c] = net(torch.randn(2, 3)).sum()
        (losses[c] / 3).backward()
    optimizer.step()
    print(sum(loss.item() for loss in losses))
"""
)

# the same through a second list, and with the index of an enumerate
THROUGH_ANOTHER_LIST = (
    HEADER
    + """
outputs, losses = [None] * 3, [None] * 3
for step in range(3):
    optimizer.zero_grad()
    for c, x in enumerate(torch.randn(3, 2, 3)):
        outputs[c] = net(x).sum()
        losses[c] = outputs[c]
        weighted = losses[c] / 3
        weighted.backward()
    optimizer.step()
"""
)

BUGS = {
    # an alias of the list stores a graph freed in the first pass as the item read back
    "alias": """
kept = net(torch.randn(2, 3)).sum()
losses = [None, None]
for step in range(3):
    optimizer.zero_grad()
    for i in range(2):
        losses[i] = net(torch.randn(2, 3)).sum()
        alias = losses
        alias[i] = kept
        losses[i].backward()
    optimizer.step()
""",
    # the index is bound again on one path: the read takes the other pass's item
    "index_rebound": """
losses = [None, None]
for step in range(4):
    optimizer.zero_grad()
    i = step % 2
    losses[i] = net(torch.randn(2, 3)).sum()
    if step > 0:
        i = 1 - i
    losses[i].backward()
    optimizer.step()
""",
    # an alias made before the loop stores a freed graph as the item read back
    "alias_before_the_loop": """
kept = net(torch.randn(2, 3)).sum()
losses = [None, None]
alias = losses
for step in range(3):
    optimizer.zero_grad()
    for i in range(2):
        losses[i] = net(torch.randn(2, 3)).sum()
        alias[i] = kept
        losses[i].backward()
    optimizer.step()
""",
    # an object the list was handed to stores into it between the store and the read
    "held_by_an_object": """
class Log:
    def __init__(self, items):
        self.items = items

    def put(self, i, value):
        self.items[i] = value


kept = net(torch.randn(2, 3)).sum()
losses = [None, None]
log = Log(losses)
for step in range(3):
    optimizer.zero_grad()
    for i in range(2):
        losses[i] = net(torch.randn(2, 3)).sum()
        log.put(i, kept)
        losses[i].backward()
    optimizer.step()
""",
    # `+=` keeps what the item held: every pass's graph, freed by the pass before
    "augmented": """
losses = [torch.zeros(()), torch.zeros(())]
for step in range(3):
    optimizer.zero_grad()
    for i in range(2):
        losses[i] += net(torch.randn(2, 3)).sum()
        losses[i].backward()
    optimizer.step()
""",
    # the list is reordered between the store and the read: the read takes a freed item
    "reordered": """
stale = net(torch.randn(2, 3)).sum()
stale.backward()
losses = [stale, None]
for step in range(3):
    optimizer.zero_grad()
    i = 1
    losses[i] = net(torch.randn(2, 3)).sum()
    losses.reverse()
    losses[i].backward()
    losses.reverse()
    optimizer.step()
""",
}


@pytest.mark.parametrize("source", [PER_CONTEXT, THROUGH_ANOTHER_LIST], ids=["own", "another"])
def test_an_item_read_back_by_its_index_is_that_item(source, tmp_path):
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []


@pytest.mark.parametrize("name", sorted(BUGS))
def test_an_item_the_list_or_index_may_have_changed_is_still_found(name, tmp_path):
    source = HEADER + BUGS[name]
    run = run_script(source, tmp_path)
    assert FREED in run.stderr
    assert rules_reported(source), "the freed graph is not reported"
