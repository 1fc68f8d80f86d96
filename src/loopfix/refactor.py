"""The planned fixes of a run as one rope `ChangeSet`, and writing it safely.

Each changed file becomes a `ChangeContents` holding the exact old and new bytes, so rope
writes precisely what was planned (encoding, BOM and line endings included). The rope
`Project` has no `.ropeproject` folder. Writes are atomic (a temporary file in the same
folder, then a rename) and refuse a file whose bytes changed since loopfix read it.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rope.base import fscommands
from rope.base.change import ChangeContents, ChangeSet
from rope.base.project import Project


@dataclass(frozen=True)
class PlannedChange:
    path: Path
    old: bytes
    new: bytes


class StaleFileError(Exception):
    pass


class _AtomicWrites(fscommands.FileSystemCommands):
    """rope's file commands, writing atomically and only over the bytes loopfix planned on."""

    def __init__(self, expected: dict[str, bytes]) -> None:
        super().__init__()
        self.expected = expected

    def write(self, path: str, data: bytes) -> None:
        real = os.path.realpath(path)
        expected = self.expected.get(real)
        if expected is not None and Path(real).read_bytes() != expected:
            raise StaleFileError(f"{path}: changed on disk since it was read; not written")
        write_atomically(Path(real), data)
        self.expected[real] = data  # an undo of this change expects these bytes


def write_atomically(path: Path, data: bytes) -> None:
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".loopfix", dir=path.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def change_set(changes: list[PlannedChange]) -> tuple[Project, ChangeSet]:
    """One rope project over the files' common folder and one change set for all of them."""
    folders = [str(Path(os.path.realpath(c.path)).parent) for c in changes]
    root = os.path.commonpath(folders) if folders else os.getcwd()
    expected = {os.path.realpath(c.path): c.old for c in changes}
    # No .ropeproject, and none of rope's own code analysis: loopfix planned every byte.
    project = Project(
        root,
        ropefolder=None,
        fscommands=_AtomicWrites(expected),
        automatic_soa=False,
        perform_doa=False,
        validate_objectdb=False,
    )
    changes_set = ChangeSet("loopfix: fix autograd bugs in training loops")
    for change in changes:
        relative = os.path.relpath(os.path.realpath(change.path), root)
        resource = project.get_file(relative)
        changes_set.add_change(ChangeContents(resource, change.new, change.old))
    return project, changes_set


def apply_changes(changes: list[PlannedChange]) -> tuple[list[PlannedChange], list[str]]:
    """Write every change whose file is unchanged on disk; return (written, error messages)."""
    fresh, errors = [], []
    for change in changes:
        try:
            current = Path(os.path.realpath(change.path)).read_bytes()
        except OSError as error:
            errors.append(f"{change.path}: cannot read before writing: {error.strerror}")
            continue
        if current != change.old:
            errors.append(f"{change.path}: changed on disk since it was read; not written")
        else:
            fresh.append(change)
    if not fresh:
        return [], errors
    project, changes_set = change_set(fresh)
    try:
        project.do(changes_set)  # rope undoes what it did if one write fails
    except (StaleFileError, OSError) as error:
        return [], [*errors, f"{error}; no file was changed"]
    finally:
        project.close()
    return fresh, errors
