"""Arguments the harness builds for a function (or method) that no script or fixture calls.

Used only inside a verification child (`trace.py --call NAME` without `--fixture`). The roles
come from how the code uses each parameter (`units.stand_in_plan`, parsing only):

- `recurrent`: a stand-in model of the recurrent kind the file uses (`LSTM`, `GRU`, `RNN` or a
  cell), taking `(input, state)` and returning `(output, state)`, with `init_hidden(batch)`;
  batch and hidden sizes from the file's literal state shape (`torch.zeros(1, 2, 5)`) when it
  has one; `module`: a stand-in `Linear`;
- `optimizer`: SGD over every stand-in model's parameters;
- `loss`: mean squared error (cross-entropy for integer targets);
- `data`: synthetic `[T, B, F]` inputs (and same-shaped targets) for the stand-ins, or, when the
  code builds its own models, batches shaped for those (`synthetic.py`);
- `options` (only attributes read, as of parsed command-line arguments): each attribute by its
  name: a path that does not exist for `data`, `path`, `dir`, `file`, ... (so the data is
  synthetic), the file's recurrent kind for `model`/`rnn_type`, `False` for flags such as
  `cuda`, small fractions for `dropout` and the like, numbers as below otherwise;
- `number`: a learning rate, a clipping norm or a small count by its name.

A run with any stand-in model, optimizer or loss is a *replica*: the function's own statements
over modules of the same kinds, not the author's models. This module imports torch and runs
user code: it is only ever used in a child process.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from loopfix.verify import synthetic
from loopfix.verify.units import Parameter, StandInPlan

FEATURES, STEPS, BATCHES = 4, 5, 8


class StandInModel(nn.Module):
    """A model of the file's recurrent kind (or a `Linear`) in place of one the harness cannot
    build: its input is `[T, B, FEATURES]` (`[B, FEATURES]` for a cell step)."""

    def __init__(self, plan: StandInPlan, recurrent: bool) -> None:
        super().__init__()
        self.kind, self.recurrent = plan.kind, recurrent
        self.batch, self.hidden = plan.batch, plan.hidden
        if recurrent:
            self.rnn = getattr(nn, plan.kind)(FEATURES, plan.hidden)
            self.head = nn.Linear(plan.hidden, FEATURES)
        else:
            self.head = nn.Linear(FEATURES, FEATURES)

    def forward(self, x: torch.Tensor, state=None, *unused):
        if not self.recurrent:
            return self.head(x)
        if not self.kind.endswith("Cell"):
            output, state = self.rnn(x, state)
            return self.head(output), state
        steps = x.unbind(0) if x.dim() == 3 else [x]
        outputs = []
        for step in steps:
            state = self.rnn(step, state)
            outputs.append(state[0] if isinstance(state, tuple) else state)
        output = torch.stack(outputs) if x.dim() == 3 else outputs[0]
        return self.head(output), state

    def init_hidden(self, batch: int | None = None, *unused):
        shape = (batch or self.batch, self.hidden)
        if not self.kind.endswith("Cell"):
            shape = (1, *shape)
        if self.kind.startswith("LSTM"):
            return torch.zeros(shape), torch.zeros(shape)
        return torch.zeros(shape)

    init_state = begin_state = initial_state = init_hidden


class StandInLoss(nn.Module):
    def forward(self, prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if not target.is_floating_point():
            flat = prediction.reshape(-1, prediction.shape[-1])
            return nn.functional.cross_entropy(flat, target.reshape(-1))
        return nn.functional.mse_loss(prediction, target.reshape(prediction.shape))


def build(plan: StandInPlan, namespace: dict, device: str):
    """The callable for `plan.call` and its `(args, kwargs)`, built after seeding."""
    models: list[nn.Module] = []
    if plan.init is None:
        target = namespace[plan.call]
    else:
        owner, method = plan.call.split(".", 1)
        args, kwargs = _arguments(plan.init, plan, models, device)
        target = getattr(namespace[owner](*args, **kwargs), method)
    args, kwargs = _arguments(plan.arguments, plan, models, device)
    return target, args, kwargs


def _arguments(parameters, plan: StandInPlan, models: list[nn.Module], device: str):
    values = {}
    for parameter in sorted(parameters, key=lambda p: p.role == "optimizer"):
        values[parameter.name] = _value(parameter, plan, models, device)
    args = [values[p.name] for p in parameters if not p.keyword]
    kwargs = {p.name: values[p.name] for p in parameters if p.keyword}
    return args, kwargs


def _value(parameter: Parameter, plan: StandInPlan, models: list[nn.Module], device: str):
    role = parameter.role
    if role in ("module", "recurrent"):
        models.append(StandInModel(plan, recurrent=role == "recurrent"))
        return models[-1]
    if role == "optimizer":
        if not models:
            raise RuntimeError("loopfix: no stand-in model for the optimizer to own")
        return torch.optim.SGD([p for m in models for p in m.parameters()], lr=0.01)
    if role == "loss":
        return StandInLoss()
    if role == "options":
        return StandInOptions(plan, device)
    if role == "data":
        if not plan.stands_in:  # the code builds its own models: shape batches for them
            return synthetic.Unavailable(f"argument {parameter.name} built by loopfix")
        return _batches(plan, parameter.unpack)
    return _number(parameter.name, plan, device)


# an option that switches something on, by a part of its name (`use_amp`, `no_cuda`, `gpus`;
# not `sample_rate`, which only contains `amp`)
FLAG = re.compile(
    r"(?:^|_)(?:cuda|gpus?|verbose|debug|resume|dry|amp|fp16|tied|bidirectional)(?:_|$)", re.I
)


class StandInOptions:
    """Parsed command-line options the script was not given: each attribute by its name."""

    def __init__(self, plan: StandInPlan, device: str) -> None:
        self._plan, self._device = plan, device

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if re.search(r"path|dir|file|data|root|save|load|checkpoint|output|log", name, re.I):
            return f"loopfix-unavailable/{name}"  # not on this machine: synthetic data
        if re.search(r"^(model|rnn_type|cell|arch)", name, re.I):
            return self._plan.kind
        if FLAG.search(name):
            return False
        if re.search(r"drop|momentum|decay|eps|beta|gamma|alpha|temperature|ratio", name):
            return 0.1
        return _number(name, self._plan, self._device)


def _batches(plan: StandInPlan, unpack: int) -> list:
    generator = torch.Generator().manual_seed(0)
    shape = (STEPS, plan.batch, FEATURES)
    batches = []
    for _ in range(BATCHES):
        x = torch.randn(shape, generator=generator)
        y = torch.randn(shape, generator=generator)
        batches.append(x if unpack == 1 else (x, y, *[None] * (unpack - 2)))
    return batches


def _number(name: str, plan: StandInPlan, device: str):
    if re.search(r"device", name, re.I):
        return device
    if re.search(r"lr|rate", name, re.I):
        return 0.01
    if re.search(r"clip|norm", name, re.I):
        return 1.0
    if re.search(r"batch", name, re.I):
        return plan.batch
    return FEATURES
