"""Facts the program model must get right for the rules to stay precise: each snippet runs the
way its test says (the corpus holds the full, runnable cases)."""

from __future__ import annotations

import textwrap

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile


def rules_of(text: str) -> list[str]:
    result = analyse_source(SourceFile.from_bytes("snippet.py", textwrap.dedent(text).encode()))
    assert result.errors == []
    return sorted(f.rule for f in result.findings)


LIST_STATE = """
    import torch
    import torch.nn as nn

    gru, head = nn.GRU(4, 8, batch_first=True), nn.Linear(8, 4)
    opt = torch.optim.SGD([*gru.parameters(), *head.parameters()], lr=0.1)
    seq = torch.randn(2, 40, 4)
    state = [torch.zeros(1, 2, 8), None]
    for t in range(0, 35, 5):
        out, h = gru(seq[:, t : t + 5], state[0])
        loss = nn.functional.mse_loss(head(out), seq[:, t + 1 : t + 6])
        opt.zero_grad()
        loss.backward()
        opt.step()
        {carry}
"""


@pytest.mark.parametrize(
    "carry, expected",
    [
        ("state = [h.detach(), head(out)]", []),  # the entry read holds no graph
        ("state = [h, head(out).detach()]", ["LF001"]),
        # entries moved: no position is known any more
        ("state = [head(out).detach(), h]\n        state.reverse()", ["LF001"]),
        ("state = [head(out).detach(), h]\n        state.insert(0, state.pop())", ["LF001"]),
        ("state = [head(out).detach(), h]\n        state = [state[1], state[0]]", ["LF001"]),
        ("state = [h.detach(), None]\n        state[0] = h", ["LF001"]),
    ],
)
def test_a_list_entry_holds_its_own_graphs(carry, expected):
    assert rules_of(LIST_STATE.format(carry=carry)) == expected
