"""What LF002 and LF003 check on a re-analysed, reordered iteration before offering it."""

from __future__ import annotations

import ast

from loopfix.edits import Edit
from loopfix.model.graphs import BackwardSite
from loopfix.rules.base import FileContext


def reported_call(site: BackwardSite) -> ast.AST:
    """The `.backward` attribute (or the whole functional call) to underline."""
    return site.call


def reorder_is_safe(
    before: FileContext, edits: list[Edit] | None, after: FileContext | None = None
) -> bool:
    """After the reorder no backward goes through a freed or stale graph, nothing new is
    carried across iterations, and every backward reaches the graph it reached before."""
    after = after if after is not None else before.with_edits(edits or [])
    if after is None:
        return False
    model = after.model
    for site in model.backwards():
        if model.freed_graph_reused_by(site.id) or model.stale_steps_before(site.id):
            return False
    if len(model.carried_graphs()) > len(before.model.carried_graphs()):
        return False
    return before.model.backward_signatures() == model.backward_signatures()
