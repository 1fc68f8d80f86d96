"""Benchmark: the python-lsp-server plugin's code actions on a 2,000-line training script
(not a test; figures go in the README).

    .venv/bin/python bench/pylsp_actions.py [--lines 2000] [--requests 30]

Drives pylsp's own server in process (as `test_pylsp_plugin.py` does): opens the file, lints
it once (what pylsp does on open), then times `textDocument/codeAction` at a line with no
finding, and at the line of a finding, each `--requests` times.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pylsp.python_lsp import PythonLSPServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_files import training_script  # noqa: E402


def timed(call, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    text = training_script(args.lines)
    with tempfile.TemporaryDirectory() as folder:
        server = PythonLSPServer(io.BytesIO(), io.BytesIO())
        server.m_initialize(processId=None, rootUri=Path(folder).as_uri(), initializationOptions={})
        uri = (Path(folder) / "train.py").as_uri()
        server.workspace.put_document(uri, text)
        started = time.perf_counter()
        lint = [d for batch in server._hook("pylsp_lint", uri, is_saved=False) for d in batch]
        first = (time.perf_counter() - started) * 1000
        ours = [d for d in lint if d.get("source") == "loopfix"]
        finding_line = ours[0]["range"]["start"]["line"] if ours else 0
        quiet_line = 2  # an import line: no finding there

        def actions(line: int):
            span = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}
            return lambda: server.code_actions(uri, span, {"diagnostics": []})

        quiet = timed(actions(quiet_line), args.requests)
        at_finding = timed(actions(finding_line), args.requests)
        server.m_shutdown()
    print(f"{len(text.splitlines())} lines, {len(ours)} loopfix findings; lint {first:.0f} ms")
    print(f"code action, no finding: median {statistics.median(quiet):.1f} ms")
    print(f"code action, at a finding: median {statistics.median(at_finding):.1f} ms")


if __name__ == "__main__":
    main()
