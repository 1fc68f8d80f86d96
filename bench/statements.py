"""Benchmark: the statements the loop model interprets in a cold check of a tree, counted
instead of timed (a shared machine's wall times vary by 30% between runs; this count does
not). Not a test; figures go in `docs/figures.md`.

    .venv/bin/python bench/statements.py PATH [--plan]

Runs `loopfix check --no-cache --jobs 1 --findings-only` (with `--plan`: fixes planned too)
over PATH in this process and prints the sum of `LoopModel.statements_run` over every loop
model built (the file's own scopes and the modules calling into it, as
`tests/test_complexity.py` counts them), and how many models were built.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from loopfix.cli import main as loopfix_main
from loopfix.model import loop_model
from loopfix.rules import base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree")
    parser.add_argument("--plan", action="store_true", help="plan fixes too (patched texts)")
    args = parser.parse_args()
    counted = {"statements": 0, "models": 0}
    build_model = loop_model.build_model

    def counting(*arguments, **keywords):
        model = build_model(*arguments, **keywords)
        counted["statements"] += model.statements_run
        counted["models"] += 1
        return model

    base.build_model = counting  # what `FileContext.parse` calls for every text it models
    command = ["check", "--no-cache", "--jobs", "1", "--exit-zero", "--quiet", args.tree]
    if not args.plan:
        command.insert(1, "--findings-only")
    sys.argv = ["loopfix", *command]
    with (
        open(os.devnull, "w") as devnull,
        contextlib.redirect_stdout(devnull),
        contextlib.suppress(SystemExit),
    ):
        loopfix_main()
    print(f"statements interpreted: {counted['statements']:,} in {counted['models']:,} models")


if __name__ == "__main__":
    main()
