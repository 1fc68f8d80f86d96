"""Benchmark: verification time per rewrite over the corpus (not a test; figures go in the README).

    .venv/bin/python bench/verify_speed.py [--iterations N] [--device cpu]

Runs `loopfix verify` logic on every positive corpus case and prints the seconds per rewrite
(median and max) and per child run. Each file's rewrites share its runs: original, patched and,
for LF002/LF003, the deferred-step reference.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import collect_runs, judge

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    settings = RunSettings(device=args.device, iterations=args.iterations)
    per_rewrite, per_run, verdicts = [], [], []
    started = time.monotonic()
    for before in sorted(CORPUS.glob("*/before.py")):
        result = analyse_source(SourceFile.read(before))
        units = collect_runs(result, settings)
        for runs in units.values():
            if not isinstance(runs, str):
                made = [r for r in (runs.original, runs.patched, runs.reference) if r]
                per_run += [r.seconds for r in made]
        for verdict in judge(result, units):
            per_rewrite.append(verdict.seconds)
            verdicts.append(verdict.verdict)
    total = time.monotonic() - started
    print(f"rewrites verified: {len(per_rewrite)}; equivalent: {verdicts.count('equivalent')}")
    median, worst = statistics.median(per_rewrite), max(per_rewrite)
    print(f"seconds per rewrite: median {median:.1f}, max {worst:.1f}")
    print(f"seconds per child run: median {statistics.median(per_run):.1f}, max {max(per_run):.1f}")
    print(f"wall time: {total:.0f} s for {len(per_run)} child runs")


if __name__ == "__main__":
    main()
