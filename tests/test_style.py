"""The code base stays ruff-clean (lint and format), as the style guide asks."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruff", *args, "src", "tests", "bench"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_is_clean():
    result = ruff("check")
    assert result.returncode == 0, result.stdout


def test_ruff_format_is_clean():
    result = ruff("format", "--check")
    assert result.returncode == 0, result.stdout
