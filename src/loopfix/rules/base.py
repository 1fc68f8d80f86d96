"""What every rule is made of: findings, fixes, and the per-file context rules work on."""

from __future__ import annotations

import ast
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from loopfix.edits import Edit, EditConflict, Layout, apply_edits
from loopfix.model.loop_model import LoopModel, build_model
from loopfix.options import Options
from loopfix.parse import parse


class Applicability(StrEnum):
    """Ruff's fix safety. A `safe` fix keeps what the code computes, and its rule's oracle
    proves that by running it; an `unsafe` fix is the well-known repair that changes what the
    code computes on purpose (it says what in `Fix.changes`), applied only with
    `--unsafe-fixes` and verified by showing what differs."""

    safe = "safe"
    unsafe = "unsafe"


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.safe
    changes: str = ""  # for an unsafe fix: what it changes in what the code computes

    @property
    def safe(self) -> bool:
        return self.applicability is Applicability.safe


@dataclass
class Finding:
    rule: str
    name: str
    message: str
    start: int
    end: int
    fix: Fix | None = None
    detail: Any = field(default=None, repr=False, compare=False)
    # why the finding has no fix, when fixes were planned and none is offered
    fix_unavailable: str | None = None
    # other fixes an editor offers as further code actions (`apply` never writes them)
    alternatives: tuple[Fix, ...] = ()
    # whether `fix` is part of the file's fixed text (an unsafe fix only with --unsafe-fixes)
    applied: bool = False

    @property
    def fixable(self) -> bool:
        return self.fix is not None


@dataclass
class FileContext:
    """One source text with its tree, loop model and layout; built once, shared by rules."""

    text: str
    tree: ast.Module
    model: LoopModel
    layout: Layout
    options: Options = field(default_factory=Options)
    filename: str = "<unknown>"
    resolver: Any = field(default=None, repr=False, compare=False)  # the project's imports
    # parses the patched texts; a `ChunkParser` reuses the statements an edit did not touch
    parser: Callable[[str, str], ast.Module] = field(default=parse, repr=False, compare=False)
    _patched: dict[str, FileContext | None] = field(default_factory=dict, repr=False, compare=False)
    # while fixes are planned together (`analysis._planned_together`): a proof passes
    # unanalysed, the combination of every fix is proven instead
    assume_proven: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def parse(
        cls,
        text: str,
        filename: str = "<unknown>",
        options: Options | None = None,
        parser: Callable[[str, str], ast.Module] = parse,
        resolver=None,
    ) -> FileContext:
        tree = parser(text, filename)
        model = build_model(
            tree,
            resolver=resolver,
            pieces=getattr(parser, "pieces", None),
            kept=getattr(parser, "kept", None),
        )
        options = options or Options()
        return cls(text, tree, model, Layout(text), options, filename, resolver, parser)

    def models_built(self) -> int:
        """Loop models built for this text and the patched texts its planning tried (each a
        full analysis: what planning costs)."""
        return 1 + sum(c.models_built() for c in self._patched.values() if c is not None)

    def with_edits(self, edits) -> FileContext | None:
        """The context of the text after `edits`, or None if they clash or do not parse.
        Remembered per text: a rule's fix and the combination of fixes often build the
        same patched text, and each build is a full re-analysis.

        Raises `NeedsAnalysis` while `assume_proven`: a fix planned then may only ask
        `proven` (yes or no), not look at the patched model."""
        if self.assume_proven:
            raise NeedsAnalysis
        try:
            patched = apply_edits(self.text, edits)
        except EditConflict:
            return None
        if patched not in self._patched:
            try:
                context = FileContext.parse(
                    patched, self.filename, self.options, self.parser, self.resolver
                )
            except (SyntaxError, RecursionError, ValueError):
                context = None
            self._patched[patched] = context
        return self._patched[patched]

    def proven(self, edits, holds: Callable[[FileContext], bool]) -> bool:
        """Whether the text after `edits` parses and `holds` of its context (a fix's proof:
        a full re-analysis). While `assume_proven`, only whether the edits apply: the fixes
        of the file are then proven together, on one analysis of the text with all of them
        (`analysis._planned_together`), and planned again one by one if that fails."""
        if self.assume_proven:
            try:
                apply_edits(self.text, edits)
            except EditConflict:
                return False
            return True
        patched = self.with_edits(edits)
        return patched is not None and holds(patched)


class NeedsAnalysis(Exception):
    """A fix planned while proofs are assumed (`FileContext.assume_proven`) needed the
    patched text's model itself: the file's fixes are planned one by one instead."""


class Rule(ABC):
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    docs: ClassVar[str]

    @abstractmethod
    def detect(self, context: FileContext) -> list[Finding]:
        """Findings for this file, from questions to the loop model."""

    def removes(self, before: FileContext, after: FileContext, count: int = 1) -> bool:
        """Whether `after` has at least `count` fewer of this rule's findings than `before`
        (the proof of a fix whose rule counts what is left)."""
        return len(self.detect(after)) <= len(self.detect(before)) - count

    # said of a finding without a fix when the rule gives no more precise reason
    no_fix_reason: ClassVar[str] = "no edit could be proven to keep every backward's graph"

    @abstractmethod
    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        """The edits that fix one finding, or None when no safe fix is known (then
        `finding.fix_unavailable` may say why)."""

    @abstractmethod
    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        """Whether `after` (the text with several fixes applied) fixes `fixed` safely."""

    def judge(self, finding: Finding, runs) -> str:
        """The verdict on `finding`'s applied fix (see `compare.Outcome`): a patched run that
        raised an error the original did not is refused first; then the original must show
        the bug (`confirm`); then its oracle for a safe fix, and for an unsafe one whether
        the patched code runs every capped iteration and what it computes differently."""
        from loopfix.rules.compare import intended_change, new_error

        refused = new_error(runs.original, runs.patched)
        if refused is not None:
            return refused
        unconfirmed = self.confirm(finding, runs)
        if unconfirmed is not None:
            return unconfirmed
        if finding.fix is None or finding.fix.safe:
            return self.oracle(finding, runs)
        return intended_change(runs)

    def confirm(self, finding: Finding, runs) -> str | None:
        """None when the original run shows the bug `finding` reports, else the verdict that
        says what was not seen ("not confirmed: ...", or "unverified: ..." when the original
        could not show it). By default: it raised `predicted_error` (any run, without one)."""
        from loopfix.rules.compare import original_raised

        if not self.predicted_error:
            return None
        return original_raised(runs, (self.predicted_error,))

    def compared(self, finding: Finding) -> str:
        """What the oracle of `finding`'s fix compares, for the verdict's line."""
        if finding.fix is not None and not finding.fix.safe:
            return (
                "every forward output, loss and optimizer step of the original with the "
                "patched run's, to name what changed"
            )
        return self.compares

    # what the oracle of a safe fix compares, as the verdict's line says it
    compares: ClassVar[str] = ""

    def probe(self, finding: Finding) -> ast.expr | bool:
        """The expression of the original whose value verification watches with a probe that
        records whether it holds a graph (`trace.py`): a node of the file's tree, True for
        the expression `finding` spans, False for none."""
        return False

    def watch(self, finding: Finding) -> str | None:
        """An expression (source text, valid where the probed expression is) whose value the
        probe records instead of the probed one's: the state the finding says keeps a graph
        (evaluated when the probed expression is, so it shows the earlier iterations').
        None: the probed value itself."""
        return None

    # whether verification records which backwards go through which graphs (`--graphs`)
    records_graphs: ClassVar[bool] = False

    def needs_runs(self, finding: Finding) -> frozenset[str]:
        """Runs of the original besides the plain one that the oracle of `finding`'s fix
        needs: "deferred" (every step deferred, every graph kept), "retained" (every
        graph kept, steps run) and/or "cloned" (every saved tensor copied when saved)."""
        return frozenset()

    # a text of the error the original must raise for the diagnosis to hold ("": any or none)
    predicted_error: ClassVar[str] = ""

    @abstractmethod
    def oracle(self, finding: Finding, runs) -> str:
        """Judge a safe fix from the runs of the original and the patched code (`verify.Runs`),
        once `confirm` has seen the bug: "equivalent", "changed as intended: ..." for a fix
        whose purpose is to change a value, or why not ("not equivalent: ...",
        "unverified: ...")."""
