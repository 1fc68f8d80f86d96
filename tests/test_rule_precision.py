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


TWO_RECURRENT_LOOPS = """
    import torch
    import torch.nn as nn


    def train_gru():
        gru, readout = nn.GRU(4, 6), nn.Linear(6, 1)
        opt = torch.optim.SGD([*gru.parameters(), *readout.parameters()], lr=0.1)
        h = torch.zeros(1, 2, 6)
        for step in range(3):
            out, h = gru(torch.randn(5, 2, 4), h)
            loss = readout(out).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


    def train_lstm():
        lstm, readout = nn.LSTM(4, 6), nn.Linear(6, 1)
        opt = torch.optim.SGD([*lstm.parameters(), *readout.parameters()], lr=0.1)
        hidden = (torch.zeros(1, 2, 6), torch.zeros(1, 2, 6))
        for step in range(3):
            out, hidden = lstm(torch.randn(5, 2, 4), hidden)
            loss = readout(out).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()


    train_gru()
    train_lstm()
"""


def test_each_carried_state_has_its_own_backwards(tmp_path):
    """Two recurrent loops in one file, and only the second keeps its graph with
    retain_graph=True: only its finding says so, and only its fix drops the keyword (each
    state's backwards are its own, not the last state's of the file). Both fixes verify."""
    from loopfix.verify.harness import RunSettings
    from loopfix.verify.verifier import verify_file

    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TWO_RECURRENT_LOOPS))
    result = analyse_source(SourceFile.read(script), project=None)
    gru, lstm = result.findings
    assert "retain_graph=True" not in gru.message and "retain_graph" not in gru.fix.title
    assert "retain_graph=True only delays the failure" in lstm.message
    assert lstm.fix.title.endswith("and drop the retain_graph=True it needed")
    assert result.fixed_text.count("retain_graph=True") == 0
    assert result.fixed_text.count(".detach()") == 2
    verdicts = verify_file(result, RunSettings(device="cpu", iterations=3, timeout=180))
    assert [(v.rule, v.outcome) for v in verdicts] == [("LF001", "equivalent")] * 2


KEPT_FOR_AFTER_THE_LOOP = """\
import torch

torch.manual_seed(0)
z = torch.randn(8, requires_grad=True)  # a latent, given its own gradient after the loop
w = torch.randn(8, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    features = z.exp()
    loss = (features * w).sum()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
{after}
"""


@pytest.mark.parametrize(
    ("after", "reported"),
    [("z.grad = None\nfeatures.sum().backward()", []), ("print(loss.item())", ["LF004"])],
    ids=["a backward after the loop", "none after it"],
)
def test_a_retained_graph_a_later_backward_may_use_is_not_needless(after, reported, tmp_path):
    """The loop's last `retain_graph=True` keeps `features`' graph, which the backward after
    the loop goes through (without the keyword it raises "backward through the graph a
    second time"); loopfix does not see that graph (`z.exp()` of a hand-made tensor), so a
    later backward it cannot see keeps the keyword. With nothing after the loop, the keyword
    is needless."""
    from scripts import run_script

    source = KEPT_FOR_AFTER_THE_LOOP.format(after=after)
    assert run_script(source, tmp_path).returncode == 0
    removed = source.replace("retain_graph=True", "")
    second_time = "Trying to backward through the graph a second time"
    assert (second_time in run_script(removed, tmp_path).stderr) is (not reported)
    findings = analyse_source(SourceFile.from_text("train.py", source), project=None).findings
    assert [f.rule for f in findings] == reported
