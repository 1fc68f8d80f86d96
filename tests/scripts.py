"""Small training scripts in tests: run them for the truth, analyse them for the claim."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile


def run_script(source: str, tmp_path) -> subprocess.CompletedProcess:
    """`source` run as `train.py` in `tmp_path` by this interpreter (torch on CPU)."""
    script = tmp_path / "train.py"
    script.write_text(source)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )


def rules_reported(source: str) -> list[str]:
    """The rule of each finding `loopfix check` reports on `source`, in order."""
    text = textwrap.dedent(source).encode()
    return [f.rule for f in analyse_source(SourceFile.from_bytes("train.py", text)).findings]
