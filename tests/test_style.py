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


LOWER_LAYERS = ("model", "rules")  # and project.py, edits.py, source.py below them
UPPER_LAYERS = ("loopfix.analysis", "loopfix.scan", "loopfix.cli", "loopfix.lsp", "loopfix.verify")


def test_the_lower_layers_import_nothing_above_them():
    """source -> parse -> program model -> rules -> consumers (check, apply, LSP, verify):
    the model and the rules never import a consumer, not even inside a function."""
    import ast

    package = Path(__file__).resolve().parent.parent / "src" / "loopfix"
    files = [p for layer in LOWER_LAYERS for p in (package / layer).glob("*.py")]
    files += [package / "project.py", package / "edits.py", package / "source.py"]
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            found += [f"{path.name}: {name}" for name in names if name.startswith(UPPER_LAYERS)]
    assert found == []
