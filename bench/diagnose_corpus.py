"""`loopfix diagnose -- python before.py` over every positive corpus case: does it name the
case's rules at the lines of `loopfix check`'s findings, with the same fixes?

    python bench/diagnose_corpus.py [--limit N]

Prints one line per case that misses, then per rule: cases, named, and the median seconds of a
diagnosis (the instrumented run and the static analysis; no verification).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from loopfix.analysis import analyse_source  # noqa: E402
from loopfix.source import SourceFile  # noqa: E402

from corpus_cases import ALL_CASES  # noqa: E402


def expected(case) -> set[tuple[str, int, str]]:
    result = analyse_source(SourceFile.read(case.before))
    rows = set()
    for finding in result.findings:
        line = result.source.position(finding.start)[0]
        rows.add((finding.rule, line, finding.fix.title if finding.fix else ""))
    return rows


def diagnosed(case) -> tuple[set[tuple[str, int, str]], float, str]:
    folder = case.before.parent
    command = [sys.executable, "-m", "loopfix", "diagnose", "--format", "json", "--no-verify"]
    command += ["--python", sys.executable, "--", "python", case.before.name]
    started = time.monotonic()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - started
    report = json.loads(done.stdout)
    rows = {(r["rule"], r["line"], r["fix"] or "") for r in report["findings"]}
    return rows, seconds, report["summary"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    limit = parser.parse_args().limit
    cases = [c for c in ALL_CASES if c.positive][:limit]
    per_rule: dict[str, list[bool]] = defaultdict(list)
    times: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        want = {row for row in expected(case) if row[0] in case.rules}
        got, seconds, summary = diagnosed(case)
        named = bool(want) and want <= got
        for rule in case.rules:
            per_rule[rule].append(named)
            times[rule].append(seconds)
        if not named:
            print(f"MISS {case.name}: want {sorted(want)}, got {sorted(got)} ({summary[:90]})")
    print("rule   cases  named  median s")
    for rule in sorted(per_rule):
        hits = per_rule[rule]
        median = statistics.median(times[rule])
        print(f"{rule}  {len(hits):5}  {sum(hits):5}  {median:8.1f}")
    total = [hit for hits in per_rule.values() for hit in hits]
    print(f"all    {len(total):5}  {sum(total):5}")


if __name__ == "__main__":
    main()
