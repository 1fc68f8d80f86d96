"""The rules, one module each; `ALL_RULES` lists them in code order."""

from loopfix.rules.base import FileContext, Finding, Fix, Rule
from loopfix.rules.lf001_hidden_state import HiddenStateNotDetached
from loopfix.rules.lf002_step_before_backward import StepBeforeBackward
from loopfix.rules.lf003_backward_through_freed_graph import BackwardThroughFreedGraph
from loopfix.rules.lf004_needless_retain_graph import NeedlessRetainGraph
from loopfix.rules.lf005_scheduler_before_step import SchedulerBeforeStep
from loopfix.rules.lf006_loss_accumulated_with_graph import LossAccumulatedWithGraph
from loopfix.rules.lf007_zero_grad_placement import ZeroGradMisplaced
from loopfix.rules.lf008_inplace_on_saved_tensor import InplaceOnSavedTensor
from loopfix.rules.lf009_gradient_leak import GradientLeak

ALL_RULES: list[Rule] = [
    HiddenStateNotDetached(),
    StepBeforeBackward(),
    BackwardThroughFreedGraph(),
    NeedlessRetainGraph(),
    SchedulerBeforeStep(),
    LossAccumulatedWithGraph(),
    ZeroGradMisplaced(),
    InplaceOnSavedTensor(),
    GradientLeak(),
]


# Rules whose findings make training fail; the others only waste memory.
CRASHING_RULES = frozenset({"LF001", "LF002", "LF003", "LF008"})


def rule_by_code(code: str) -> Rule | None:
    return next((r for r in ALL_RULES if r.code == code.upper()), None)


__all__ = ["ALL_RULES", "CRASHING_RULES", "FileContext", "Finding", "Fix", "Rule", "rule_by_code"]
