"""Benchmark: `loopfix check` over a large tree of training code (not a test; figures go in
the README).

    .venv/bin/python bench/repo_scale.py [--files 2000] [--out /tmp/loopfix-bench-repo]

Generates a repository of at least `--files` files and 300,000 lines: about a third plain
Python that never mentions torch (utilities, configuration, tooling), about half torch model,
data and metric modules, and the rest training scripts with loops (some buggy, some correct;
`training_files.py`). Then reports, each run in a fresh process:

- the floor: reading and `ast.parse`-ing every file in one process;
- `loopfix check` cold (an empty cache) with 1 job and with every CPU;
- `loopfix check` warm (every file in the cache);
- the peak memory (maximum resident set) of the loopfix process and of each worker.

`--tree PATH` measures an existing tree (a real repository) instead; `ruff check --select E,F`
is measured beside loopfix when ruff is installed, and every figure is also printed as a
ratio to the floor. Targets: cold with 1 job no slower than the floor, `--findings-only` at
most half of it; 2 jobs at most 0.6 of 1 job; warm at most 2% of cold; peak memory at most
300 MB. `--repeat 3` runs each measurement three times and reports the fastest, with the
slowest beside it (on a shared machine one run can be 30% slower than the next). `--split
0.3` moves the classes and functions of 30% of the
training scripts into a module beside each, which the script imports (the project case: the
module is parsed and followed from the script; warm runs check its digest).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_files import HEADER, _pieces, training_script  # noqa: E402

PLAIN = '''\
"""Helpers for {topic}."""

import json
import logging
import re
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class {name}Record:
    key: str
    values: list = field(default_factory=list)
    weight: float = {weight}

    def normalised(self):
        total = sum(self.values) or 1
        return [value / total for value in self.values]

    def describe(self):
        return f"{{self.key}}: {{len(self.values)}} values, weight {{self.weight}}"


def parse_{name_lower}(text):
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, rest = line.partition("=")
        numbers = [float(v) for v in re.findall(r"-?\\d+(?:\\.\\d+)?", rest)]
        records.append({name}Record(key.strip(), numbers))
    log.debug("parsed %d records", len(records))
    return records


def dump_{name_lower}(records, path):
    with open(path, "w") as stream:
        json.dump([r.__dict__ for r in records], stream, indent=2)


def merge_{name_lower}(left, right):
    merged = {{r.key: r for r in left}}
    for record in right:
        if record.key in merged:
            merged[record.key].values.extend(record.values)
        else:
            merged[record.key] = record
    return sorted(merged.values(), key=lambda r: r.key)


'''


def plain_module(rng: random.Random, index: int, lines: int) -> str:
    parts = []
    while sum(p.count("\n") for p in parts) < lines:
        name = f"Topic{index}x{len(parts)}"
        parts.append(
            PLAIN.format(
                topic=rng.choice(["logging", "configuration", "paths", "reports"]),
                name=name,
                name_lower=name.lower(),
                weight=rng.choice([0.5, 1.0, 2.0]),
            )
        )
    return "".join(parts)


def model_module(rng: random.Random, index: int, lines: int) -> str:
    parts, n = [HEADER], index * 1000
    while sum(p.count("\n") for p in parts) < lines:
        n += 1
        parts.append(_pieces(rng, n))
    return "".join(parts)


def split_script(text: str, module: str) -> tuple[str, str]:
    """(the script without its model code, importing it; the module of it)."""
    import ast

    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    moved = [  # the model, data and metric code; the training loops stay in the script
        n
        for n in tree.body
        if isinstance(n, ast.ClassDef | ast.FunctionDef) and "backward" not in ast.unparse(n)
    ]
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    taken = {i for n in moved for i in range(n.lineno - 1 - len(n.decorator_list), n.end_lineno)}
    head = "".join(lines[i] for n in imports for i in range(n.lineno - 1, n.end_lineno))
    kept = "".join(line for i, line in enumerate(lines) if i not in taken)
    names = ", ".join(n.name for n in moved)
    anchor = imports[-1].end_lineno if imports else 0
    script = kept.splitlines(keepends=True)
    script.insert(anchor, f"from {module} import {names}\n")
    body = "".join(lines[i] for i in sorted(taken))
    return "".join(script), head + "\n\n" + body


def generate(out: Path, files: int, seed: int = 0, split: float = 0.0) -> tuple[int, int]:
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    total_lines = 0
    for index in range(files):
        kind = rng.random()
        lines = rng.randint(80, 220)
        if kind < 0.35:
            text, folder = plain_module(rng, index, lines), "tools"
        elif kind < 0.82:
            text, folder = model_module(rng, index, lines), "models"
        else:
            text, folder = training_script(rng.randint(150, 400), seed=index), "train"
        path = out / folder / f"part_{index // 100:02}" / f"module_{index:05}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        if folder == "train" and split and rng.random() < split:
            # the script's classes and helpers go to a module beside it that it imports
            text, imported = split_script(text, f"nets_{index:05}")
            path.with_name(f"nets_{index:05}.py").write_text(imported)
            total_lines += imported.count("\n")
        path.write_text(text)
        total_lines += text.count("\n")
    (out / ".git").mkdir()
    return files, total_lines


FLOOR = textwrap.dedent(
    """
    import ast, os, sys, time
    started = time.perf_counter()
    for folder, folders, names in os.walk(sys.argv[1]):
        folders[:] = [f for f in folders if not f.startswith(".")]
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as stream:
                    try:
                        ast.parse(stream.read())
                    except (SyntaxError, ValueError):
                        pass  # a real tree may hold a file of another Python version
    print(time.perf_counter() - started)
    """
)

MEASURED = textwrap.dedent(
    """
    import resource, subprocess, sys, time
    started = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(seconds, peak)
    """
)


def measured(command: list[str], cwd: Path) -> tuple[float, float]:
    """(seconds, peak MB of the largest process in the run). Python writes and reads its
    bytecode cache, as it does for an installed package (`PYTHONDONTWRITEBYTECODE`, set on
    some machines, would compile loopfix's own modules again in every run: 0.1 s, half of a
    warm check)."""
    environment = {**os.environ, "CI": "true"}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    output = subprocess.run(
        [sys.executable, "-c", MEASURED, *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    ).stdout.split()
    return float(output[0]), float(output[1])


def _spread(seconds: list[float]) -> str:
    """` (slowest 3.10 s of 3)` when a measurement was repeated."""
    return f" (slowest {max(seconds):.2f} s of {len(seconds)})" if len(seconds) > 1 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "loopfix-bench")
    parser.add_argument(
        "--split",
        type=float,
        default=0.0,
        help="share of training scripts split into a script and a module of its classes",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each measurement this many times and report the fastest (and the slowest)",
    )
    parser.add_argument(
        "--tree",
        type=Path,
        default=None,
        help="measure this existing tree (a real repository) instead of a generated one",
    )
    args = parser.parse_args()
    if args.tree is not None:
        args.out = args.tree.resolve()
        sources = [p for p in args.out.rglob("*.py") if ".git" not in p.parts]
        files = len(sources)
        lines = sum(p.read_bytes().count(b"\n") for p in sources)
    else:
        files, lines = generate(args.out, args.files, split=args.split)
    print(f"tree: {files} files, {lines} lines in {args.out}")
    floors = [
        float(
            subprocess.run(
                [sys.executable, "-c", FLOOR, str(args.out)], capture_output=True, text=True
            ).stdout
        )
        for _ in range(args.repeat)
    ]
    floor = min(floors)
    print(f"floor (read + ast.parse every file, one process): {floor:.2f} s{_spread(floors)}")
    loopfix = [sys.executable, "-m", "loopfix", "check", "--exit-zero", "--statistics"]
    measured([sys.executable, "-c", "import loopfix.cli"], args.out)  # bytecode, as installed
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    results = {}
    for name, extra, fresh in [
        ("cold, 1 job, --findings-only", ["--jobs", "1", "--findings-only"], True),
        ("cold, 1 job", ["--jobs", "1"], True),
        (f"cold, {jobs} jobs", ["--jobs", str(jobs)], True),
        (f"warm (cache), {jobs} jobs", ["--jobs", str(jobs)], False),
        ("warm (cache), 1 job", ["--jobs", "1"], False),
    ]:
        runs = []
        for _ in range(args.repeat):
            if fresh:  # each project root in the tree has a cache of its own
                for cache in list(args.out.rglob(".loopfix_cache")):
                    shutil.rmtree(cache)
            runs.append(measured([*loopfix, *extra, "."], args.out))
        seconds, peak = min(s for s, _ in runs), max(p for _, p in runs)
        results[name] = seconds
        spread = _spread([s for s, _ in runs])
        print(f"{name}: {seconds:.2f} s{spread}, peak memory {peak:.0f} MB (largest process)")
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if Path(ruff).exists():
        command = [ruff, "check", "--select", "E,F", "--exit-zero", "--no-cache", "--quiet", "."]
        seconds, peak = measured(command, args.out)
        results["ruff check --select E,F"] = seconds
        print(f"ruff check --select E,F: {seconds:.2f} s, peak memory {peak:.0f} MB")
    else:
        print("ruff: not installed, not measured")
    print("as a ratio to the floor (read + ast.parse):")
    for name, seconds in results.items():
        print(f"  {name}: {seconds / floor:.2f} x")
    cold = results["cold, 1 job"]
    warm = results["warm (cache), 1 job"]
    print(
        f"cold {jobs} jobs / cold 1 job: {results[f'cold, {jobs} jobs'] / cold:.2f} (target <= 0.6)"
    )
    print(f"cold 1 job / floor: {cold / floor:.2f} (target <= 1)")
    findings_only = results["cold, 1 job, --findings-only"]
    print(f"cold 1 job, --findings-only / floor: {findings_only / floor:.2f} (target <= 0.5)")
    print(f"warm / cold (1 job): {warm / cold:.1%} (target <= 2%)")


if __name__ == "__main__":
    main()
