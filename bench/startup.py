"""Benchmark: wall time of `loopfix check` on a one-file clean project (not a test; figures
go in the README).

    .venv/bin/python bench/startup.py [--runs 20]

Runs the installed `loopfix check --no-cache` as a user would, on a folder holding one clean
training script, and prints the median and best wall time; also the time to import
`loopfix.cli` alone.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLEAN = Path(__file__).resolve().parent.parent / "corpus" / "lf001_ok_detach_each_batch"


def wall(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    loopfix = Path(sys.executable).with_name("loopfix")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        shutil.copy(CLEAN / "before.py", project / "train.py")
        checks = [
            wall([str(loopfix), "check", "--no-cache", "."], project) for _ in range(args.runs)
        ]
        imports = [
            wall([sys.executable, "-c", "import loopfix.cli"], project) for _ in range(args.runs)
        ]
    print(
        f"loopfix check (one clean file): median {statistics.median(checks):.3f} s, "
        f"best {min(checks):.3f} s"
    )
    print(f"python -c 'import loopfix.cli': median {statistics.median(imports):.3f} s")


if __name__ == "__main__":
    main()
