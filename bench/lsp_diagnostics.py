"""Benchmark: how long `loopfix lsp` takes to send diagnostics for a 2,000-line file (not a
test; figures go in the README).

    .venv/bin/python bench/lsp_diagnostics.py [--lines 2000] [--edits 30]

Starts the server on stdio with a real client, opens the file, warms up, then makes `--edits`
edits (one character typed at the end of the file) and times each one from `didChange` to the
`publishDiagnostics` for that version. Two files: a realistic training script (model, data
and metric code with four training loops; `training_files.py`) and the worst case, a file
that is nothing but training loops. Also prints the in-process cost of the analysis alone.
`--project 50` measures the realistic script inside a project of 50 modules it imports.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_files import all_loops_script, training_script  # noqa: E402

from loopfix.lsp import features  # noqa: E402


async def through_the_server(text: str, edits: int, folder: Path | None = None) -> list[float]:
    client = LanguageClient("bench", "1")
    published: dict[int, asyncio.Event] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.setdefault(params.version, asyncio.Event()).set()

    await client.start_io(sys.executable, "-m", "loopfix", "lsp")
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    uri = ((folder or Path("/tmp/loopfix-bench")) / "train.py").as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="python", version=0, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await published.setdefault(0, asyncio.Event()).wait()
    lines = text.count("\n")
    timings = []
    for version in range(1, edits + 4):
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=lines, character=0),
                end=types.Position(line=lines, character=0),
            ),
            text="#",
        )
        event = published.setdefault(version, asyncio.Event())
        started = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        await event.wait()
        if version > 3:  # the first edits warm the server up
            timings.append((time.perf_counter() - started) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return timings


def in_process(text: str, runs: int) -> list[float]:
    timings = []
    for index in range(runs + 2):
        started = time.perf_counter()
        analysis = features.analyse_buffer("file:///bench.py", text + "#" * index, None, False)
        features.diagnostics(analysis, types.PositionEncodingKind.Utf16)
        if index >= 2:
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def describe(timings: list[float]) -> str:
    ordered = sorted(timings)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"median {statistics.median(ordered):.0f} ms, p90 {p90:.0f} ms, max {ordered[-1]:.0f} ms"


def project_of(modules: int, text: str) -> tuple[Path, str]:
    """A project folder of `modules` model modules beside the script, which imports a class
    from each: the script's analysis follows them (each parsed once per server)."""
    folder = Path(tempfile.gettempdir()) / "loopfix-bench-project"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text("")
    imports = []
    for index in range(modules):
        name = f"nets_{index:02}"
        body = training_script(120, seed=1000 + index)
        (folder / f"{name}.py").write_text(body)
        first = next(line for line in body.splitlines() if line.startswith("class "))
        imports.append(f"from {name} import {first[6:].split('(')[0]}")
    return folder, "\n".join(imports) + "\n" + text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument(
        "--project", type=int, default=0, help="inside a project of this many modules it imports"
    )
    args = parser.parse_args()
    if args.project:
        folder, text = project_of(args.project, training_script(args.lines))
        served = asyncio.run(through_the_server(text, args.edits, folder))
        print(f"realistic training script importing {args.project} project modules: "
              f"{text.count(chr(10))} lines")  # fmt: skip
        print(f"  didChange -> publishDiagnostics (server): {describe(served)}")
        return
    for name, text in [
        ("realistic training script", training_script(args.lines)),
        ("worst case: only training loops", all_loops_script(args.lines)),
    ]:
        findings = len(features.analyse_buffer("file:///b.py", text, None, False).findings)
        print(f"{name}: {text.count(chr(10))} lines, {findings} findings")
        print(f"  analysis alone (in process): {describe(in_process(text, args.edits))}")
        served = asyncio.run(through_the_server(text, args.edits))
        print(f"  didChange -> publishDiagnostics (server): {describe(served)}")


if __name__ == "__main__":
    main()
