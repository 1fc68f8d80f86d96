"""Shapes from real code that a rule must not report (found by scanning real code bases)."""

from __future__ import annotations

import textwrap

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

SILENT = {
    "retain for a closure reused by the caller (torch.autograd.gradcheck)": """
        import torch

        def jacobian_rows(output, inputs):
            def vjp(grad_output):
                return torch.autograd.grad(output, inputs, grad_output, retain_graph=True)
            return [vjp(row) for row in torch.eye(output.numel())]
    """,
    "retain on a loss built from a parameter": """
        import torch

        def compare(prediction):
            prediction.sum().backward(retain_graph=True)
    """,
    "retain on a loss from a function defined elsewhere": """
        import torch
        import torch.nn as nn
        from losses import build_loss

        model = nn.Linear(2, 2)
        loss = build_loss(model)
        loss.backward(retain_graph=True)
    """,
    "retained graph kept on self for a later call": """
        import torch
        import torch.nn as nn

        class Probe:
            def __init__(self):
                self.net = nn.Linear(2, 1)

            def first(self, x):
                self.loss = self.net(x).sum()
                self.loss.backward(retain_graph=True)
    """,
    # found by the fuzz test: a hand-written Accelerate-like wrapper passes retain_graph on
    # through **kwargs; whatever the wrapper's variable is called, the caller's keyword holds
    "retain_graph passed through a wrapper's **kwargs": """
        import torch
        import torch.nn as nn

        class Wrapper:
            def backward(self, loss, **kwargs):
                loss.backward(**kwargs)

        helper = Wrapper()
        encoder, head = nn.Linear(4, 4), nn.Linear(4, 1)
        optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
        for _ in range(3):
            feats = encoder(torch.randn(2, 4))
            helper.backward(head(feats).sum(), retain_graph=True)
            helper.backward(feats.pow(2).mean())
            optimizer.step()
            optimizer.zero_grad()
    """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_not_reported(name):
    text = textwrap.dedent(SILENT[name])
    result = analyse_source(SourceFile.from_bytes("snippet.py", text.encode()))
    assert result.errors == [] and result.findings == []


def test_the_same_loss_built_in_view_is_reported():
    text = textwrap.dedent(
        """
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 2)
        loss = model(torch.randn(3, 2)).sum()
        loss.backward(retain_graph=True)
        """
    )
    result = analyse_source(SourceFile.from_bytes("snippet.py", text.encode()))
    assert [f.rule for f in result.findings] == ["LF004"]
