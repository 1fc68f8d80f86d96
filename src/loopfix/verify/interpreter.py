"""Which Python runs a project's code for verification, and how it reaches loopfix's tracer.

loopfix may be installed apart from the project (pipx, a pre-commit environment, an editor's
own environment) while the code it verifies needs the project's packages. The interpreter is,
in order: the one given (`--python`, `python = ...` in `[tool.loopfix]`, the editor's
`python` setting); the active virtual environment (`VIRTUAL_ENV`) unless it is loopfix's
own (pre-commit activates the hook's); a `.venv` or `venv` folder at the project's root;
loopfix's own. Nothing is installed into it: its children import
the tracer from a folder that holds only the `loopfix` package (a link to it), put first on
their import path. It must have torch; when it does not, every verdict says so in one line.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VENV_FOLDERS = (".venv", "venv")


def choose(explicit: str | None, root: Path | None) -> str:
    """The interpreter's path (see the module's docstring for the order)."""
    if explicit:
        return explicit if os.sep in explicit else shutil.which(explicit) or explicit
    active = os.environ.get("VIRTUAL_ENV")
    own = os.path.abspath(sys.prefix)
    # an environment that is loopfix's own (a pre-commit hook's, pipx's) is not the project's
    if active and os.path.abspath(active) != own and (found := _python_in(Path(active))):
        return str(found)
    for folder in VENV_FOLDERS if root is not None else ():
        if (found := _python_in(root / folder)) is not None:
            return str(found)
    return sys.executable


def _python_in(environment: Path) -> Path | None:
    for candidate in (environment / "bin" / "python", environment / "Scripts" / "python.exe"):
        if candidate.is_file():
            return candidate
    return None


def is_own(python: str) -> bool:
    """The same interpreter *path* as loopfix's: two virtual environments link to one base
    interpreter, so resolving the links would confuse them."""
    return os.path.abspath(python) == os.path.abspath(sys.executable)


@functools.cache
def missing_torch(python: str) -> str | None:
    """Why `python` cannot run verification (it does not start, or has no torch), or None."""
    if is_own(python):
        try:
            import torch  # noqa: F401 - only whether it imports
        except ImportError:
            return f"{python} has no torch (pip install 'loopfix[verify]', or pass --python)"
        return None
    try:
        done = subprocess.run(
            [python, "-c", "import torch"],
            capture_output=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": ""},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{python} cannot be run: {error}"
    if done.returncode != 0:
        return f"{python} has no torch (install the project's dependencies there)"
    return None


TRACER_PREFIX = "loopfix-tracer-"


@functools.cache
def tracer_path() -> str:
    """A folder holding only a link to the `loopfix` package, for another interpreter's import
    path: the tracer is found without loopfix's other dependencies shadowing the project's.

    It is made once per process, in the temporary folder, and removed when the process exits
    (also on Ctrl-C or `kill`, which exit through cleanup); folders left by a process that was
    killed outright (`kill -9`) are removed by the next one that makes its own."""
    package = Path(__file__).resolve().parent.parent
    remove_stale_tracers()
    folder = Path(tempfile.mkdtemp(prefix=f"{TRACER_PREFIX}{os.getpid()}-"))
    link = folder / "loopfix"
    try:
        link.symlink_to(package, target_is_directory=True)
    except OSError:  # no symlinks (some Windows setups): the package's own parent
        _remove_tracer(folder)
        return str(package.parent)
    atexit.register(_remove_tracer, folder, os.getpid())
    return str(folder)


def _remove_tracer(folder: Path, owner: int | None = None) -> None:
    """Remove a tracer folder: its link (never what the link points to), then the folder.
    `owner`: only in that process, not in a forked child that exits through cleanup."""
    if owner is not None and os.getpid() != owner:
        return
    with contextlib.suppress(OSError):
        (folder / "loopfix").unlink(missing_ok=True)
        folder.rmdir()


def remove_stale_tracers(temporary: Path | None = None) -> list[Path]:
    """Remove the tracer folders in the temporary folder whose process no longer runs (a
    folder is named after its process); the folders removed."""
    if sys.platform == "win32":  # no signal-0 probe of a process there
        return []
    removed = []
    base = temporary or Path(tempfile.gettempdir())
    for folder in base.glob(f"{TRACER_PREFIX}*-*"):
        pid = folder.name[len(TRACER_PREFIX) :].partition("-")[0]
        if pid.isdigit() and not _running(int(pid)) and _only_a_tracer(folder):
            _remove_tracer(folder)
            removed.append(folder)
    return removed


def _only_a_tracer(folder: Path) -> bool:
    """A real folder of this user's that holds nothing but the `loopfix` link."""
    try:
        if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
            return False
        entries = list(folder.iterdir())
    except OSError:
        return False
    return all(entry.name == "loopfix" and entry.is_symlink() for entry in entries)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or no permission to ask: leave its folder
        return True
    return True
