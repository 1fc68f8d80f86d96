"""Settings that change what a fix looks like (never what is detected)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RestrictStyle(StrEnum):
    """How a moved backward is kept from leaking into another optimizer's parameters."""

    inputs = "inputs"  # loss.backward(inputs=list(model.parameters()))
    autograd_grad = "autograd-grad"  # torch.autograd.grad(...) accumulated into .grad


@dataclass(frozen=True)
class Options:
    restrict_style: RestrictStyle = RestrictStyle.inputs
