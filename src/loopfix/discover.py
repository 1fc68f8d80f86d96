"""Which files a run looks at.

Folders are walked honouring `.gitignore` files (from the repository root down, and
`.git/info/exclude`) and the configured `exclude` patterns, skipping hidden folders, virtual
environments, `site-packages`, `build` and `dist`; folder symlinks are not followed. Explicitly
named files are taken as given, except that `exclude` patterns apply to them too (so a
pre-commit hook passing file names honours them). A file symlink is analysed only when it
resolves inside the paths the run was given (it is written through to that file); one that
leads outside them is reported and never read or written. A file reached twice (a link and its
target, or overlapping paths) is analysed once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from loopfix.config import Config
from loopfix.ignore import rules_for_walk

SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"}


def is_virtual_environment(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta").is_dir()


def python_files(paths: list[Path], config: Config | None = None) -> Iterator[Path | str]:
    """Every `.py` file and Jupyter notebook (`.ipynb`) under `paths`, in a stable order; a
    str is an error message."""
    config = config or Config()
    roots = [Path(os.path.realpath(p if p.is_dir() else p.parent)) for p in paths]
    seen: set[str] = set()
    for path in paths:
        walked = path.is_dir()
        if walked:
            candidates = _walk(path, config)
            real_root, root = os.path.realpath(path), os.fspath(path)
        elif path.is_file() or path.is_symlink():
            candidates = iter([] if config.excluded(path) else [path])
        else:
            yield f"{path}: no such file or folder"
            continue
        for found in candidates:
            link = found.is_symlink()
            problem = _link_problem(found, roots) if link else None
            if problem is not None:
                yield problem
                continue
            if walked and not link:  # the walk follows no folder link
                real = os.path.join(real_root, _below(os.fspath(found), root))
            else:
                real = os.path.realpath(found)
            if real not in seen:
                seen.add(real)
                yield found


def _below(found: str, root: str) -> str:
    """`os.path.relpath(found, root)` for a path the walk of `root` gave (its folder names
    follow `root`'s own, so it is one slice of the text for most)."""
    if root == ".":
        return found
    if found.startswith(root + os.sep):
        return found[len(root) + 1 :]
    return os.path.relpath(found, root)


def _link_problem(path: Path, roots: list[Path]) -> str | None:
    """Why a symlinked file is not analysed (broken, a loop, or outside the given paths)."""
    try:
        target = Path(os.path.realpath(path, strict=True))
    except OSError as error:
        reason = "a symlink loop" if "loop" in str(error).lower() or error.errno == 40 else None
        return f"{path}: {reason or 'a broken symlink'}; skipped"
    if not any(target.is_relative_to(root) for root in roots):
        return f"{path}: a symlink to {target}, outside the given paths; not followed"
    if not target.is_file():
        return f"{path}: a symlink to something that is not a file; skipped"
    return None


def _walk(root: Path, config: Config) -> Iterator[Path]:
    top, ignore = rules_for_walk(Path(os.path.abspath(root)))
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        relative = Path(os.path.abspath(here)).relative_to(top).as_posix()
        relative = "" if relative == "." else relative
        if here != root:  # the root's own .gitignore came with the chain above it
            ignore.add_file(here / ".gitignore", relative)
        inside = (relative + "/") if relative else ""
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in SKIPPED_FOLDERS
            and not is_virtual_environment(here / name)
            and not ignore.ignored(inside + name, is_folder=True)
            and not config.excluded(here / name, is_folder=True)
        )
        for name in sorted(files):
            if not name.endswith((".py", ".ipynb")) or name.startswith("."):
                continue
            if ignore.ignored(inside + name, is_folder=False) or config.excluded(here / name):
                continue
            yield here / name
