"""Settings that change which fixes are applied and how they look (never what is detected)."""

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
    unsafe_fixes: bool = False  # also apply fixes that change what the code computes
    # also plan each finding's other fixes (the editor's further code actions); each costs a
    # re-analysis of the patched file, and `check` and `apply` never show them
    alternatives: bool = False
