"""A record or tuple returned as an item of a tuple (`return Losses(...), stats`, rlkit's
SAC) keeps its fields' graphs apart once the caller unpacks it (`losses, stats = ...`). Each
program is run for the truth."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts import rules_reported, run_script

# the corpus case: the temperature loss detaches the log-probabilities
RETURNED_WITH_STATS = (
    Path(__file__).parents[1] / "corpus/lf003_ok_namedtuple_losses_returned_with_stats/before.py"
).read_text()
DETACHED = "(log_prob + 1.0).detach()"


@pytest.mark.parametrize("detached", [True, False], ids=["detached", "shared"])
def test_a_record_unpacked_from_a_returned_tuple_keeps_its_fields_graphs(tmp_path, detached):
    """Detached, the temperature loss shares no graph with the policy loss: the run is
    clean and nothing is reported. Without the detach, its backward frees the policy's
    graph, which the policy loss's backward then needs: the run fails and LF003 says so."""
    assert DETACHED in RETURNED_WITH_STATS
    text = (
        RETURNED_WITH_STATS
        if detached
        else RETURNED_WITH_STATS.replace(DETACHED, "(log_prob + 1.0)")
    )
    run = run_script(text, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is not detached, run.stderr
    assert rules_reported(text) == ([] if detached else ["LF003"])
