"""Which files a run looks at."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"}


def is_virtual_environment(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta").is_dir()


def python_files(paths: list[Path]) -> Iterator[Path | str]:
    """Every `.py` file under `paths`, in a stable order; a str is an error message."""
    seen: set[Path] = set()
    for path in paths:
        if path.is_file() or (path.suffix == ".py" and path.is_symlink()):
            if path not in seen:
                seen.add(path)
                yield path
        elif path.is_dir():
            for found in _walk(path):
                if found not in seen:
                    seen.add(found)
                    yield found
        else:
            yield f"{path}: no such file or folder"


def _walk(root: Path) -> Iterator[Path]:
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in SKIPPED_FOLDERS
            and not is_virtual_environment(here / name)
        )
        for name in sorted(files):
            if name.endswith(".py") and not name.startswith("."):
                yield here / name
