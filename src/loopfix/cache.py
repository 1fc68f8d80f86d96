"""The analysis cache on disk, in two layers.

- `Cache`: one JSON entry per (file content, loopfix version and code, settings), holding the
  file's report with the digest of every project module its analysis looked into. It answers
  any file whose text was seen before, wherever it lives (another branch, a copy).
- `Manifest`: in front of it, one JSON file per settings with what the last scans reported
  for each file path, the file's stamp when it was read, and the stamps and digests of the
  project modules each report depends on. A file whose stamp is unchanged, and whose
  dependencies' stamps are unchanged, is answered without reading it or them, as git's
  index and Ruff's cache answer an unchanged file from its status.

A stamp is (modification time in ns, size, inode, status-change time in ns). Every write
sets the status-change time, even one that puts the modification time back (`touch -d`,
`os.utime`, `tar`), so a same-size edit is seen. A stamp is only trusted when both times are
at least `RACY_NS` before the scan started: a file system with coarse timestamps would give
a second write in the same tick the same stamp (git's "racily clean" entries), so a file
changed that recently is read and looked up by its content. (On Windows the status-change
time is the creation time; the modification time in 100 ns steps and the size remain.)

Entries and manifests are written atomically (a temporary file and a rename), so concurrent
runs never read half of one; an unreadable one is a miss. A manifest lost to a concurrent
run's write only costs the next run time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from loopfix import __version__
from loopfix.project import disk_digest

CACHE_SCHEMA = "4"
RACY_NS = 2_000_000_000  # a stamp this recent is not trusted (FAT's times step by 2 s)
MAX_MANIFEST_FILES = 50_000  # a larger run keeps its manifest as it was

Stamp = list[int]  # [st_mtime_ns, st_size, st_ino, st_ctime_ns]


@functools.cache
def code_digest() -> str:
    """loopfix's own source: a development checkout changes between runs without a new
    version, and its findings with it."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def _versioned_digest(*parts: str) -> hashlib._Hash:
    digest = hashlib.sha256()
    for part in (CACHE_SCHEMA, __version__, code_digest(), *parts):
        digest.update(part.encode() + b"\0")
    return digest


def stamp_of(status: os.stat_result) -> Stamp:
    return [status.st_mtime_ns, status.st_size, status.st_ino, status.st_ctime_ns]


def _is_recorded(recorded: object, stamp: Stamp) -> bool:
    """Whether a manifest's `[*stamp, digest]` entry for a module is this stamp's."""
    return (
        isinstance(recorded, list)
        and len(recorded) == 5
        and recorded[:4] == stamp
        and isinstance(recorded[4], str)
    )


def _write_atomically(folder: Path, target: Path, value) -> None:
    """`value` as JSON at `target` under the cache `folder` (created with its `.gitignore`
    and `CACHEDIR.TAG` the first time); a cache that cannot be written only costs time."""
    try:
        if not folder.exists():
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".gitignore").write_text("*\n")
            tag = "Signature: 8a477f597d28d172789f06886806bc55\n# loopfix cache\n"
            (folder / "CACHEDIR.TAG").write_text(tag)
        target.parent.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(value, stream, separators=(",", ":"))
        os.replace(temporary, target)
    except OSError:
        pass


class Cache:
    """One JSON file per (content, version, settings) key under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def key(self, data: bytes, settings_key: str) -> str:
        digest = _versioned_digest(settings_key)
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            return json.loads(self._entry(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict) -> None:
        _write_atomically(self.folder, self._entry(key), value)


class Manifest:
    """The reports of the last scans with one settings key, by file path and stamp (see the
    module docstring). `report` answers a file, `module_digest` gives a dependency's digest
    now (read only when its stamp changed), `record` adds a fresh report and `save` writes
    what changed. One object serves one scan: the digests it hands out are those of the
    moment they were first asked for."""

    def __init__(self, folder: Path, settings_key: str) -> None:
        self.folder = folder
        name = _versioned_digest(settings_key).hexdigest()[:16]
        self.path = folder / "manifests" / f"{name}.json"
        self.started_ns = time.time_ns()
        self._cwd = os.getcwd()
        # path -> [stamp, codes, report, dependency pair indices]
        self._files: dict[str, list] = {}
        self._pairs: list[list] = []  # [module path, its digest when the report was made]
        self._modules: dict[str, list] = {}  # module path -> [*stamp, digest]
        self._load()
        self._pair_current: list[bool | None] = [None] * len(self._pairs)
        self._now: dict[str, tuple[Stamp | None, str | None]] = {}  # module -> stamp, digest
        self._fresh: dict[str, list] = {}  # path -> [stamp, codes, report, dependencies]
        self._looked_up: set[str] = set()  # paths asked for this scan
        self._answered: set[str] = set()  # those the manifest answered

    def _load(self) -> None:
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
            files, pairs, modules = stored["files"], stored["pairs"], stored["modules"]
            if isinstance(files, dict) and isinstance(pairs, list) and isinstance(modules, dict):
                self._files, self._pairs, self._modules = files, pairs, modules
        except (OSError, ValueError, TypeError, KeyError):
            pass  # no manifest yet, or an unreadable one: every file is looked up by content

    def key_of(self, path: Path) -> str:
        return os.path.join(self._cwd, os.fspath(path))

    def trusted(self, stamp: Stamp) -> bool:
        """Whether a stamp tells one text apart from any other (not changed within `RACY_NS`
        of the scan's start, nor after it)."""
        return max(stamp[0], stamp[3]) < self.started_ns - RACY_NS

    def report(self, path: Path, stamp: Stamp, codes: str) -> dict | None:
        """The stored report of the file at `path` (its fields but `path`, `cached` and
        `stamp`) when its stamp, its rules and every dependency are as they were, else None."""
        key = self.key_of(path)
        self._looked_up.add(key)
        entry = self._files.get(key)
        try:
            if entry is None or entry[0] != stamp or entry[1] != codes:
                return None
            if not self.trusted(stamp):
                return None
            # a report has dozens of dependencies, most of them already known to be current:
            # looked up all at once, and those not known yet one by one
            states = list(map(self._pair_current.__getitem__, entry[3]))
            if False in states:
                return None
            if None in states:
                unknown = [i for i, state in zip(entry[3], states, strict=True) if state is None]
                if not all(map(self._pair_is_current, unknown)):
                    return None
            dependencies = dict(map(self._pairs.__getitem__, entry[3]))
            report = {**entry[2], "dependencies": dependencies}
        except (TypeError, ValueError, IndexError):
            return None  # a damaged manifest
        self._answered.add(key)
        return report

    def _pair_is_current(self, index: int) -> bool:
        """Whether the module of dependency pair `index` still has the digest it had."""
        current = self._pair_current[index]
        if current is None:
            module, digest = self._pairs[index]
            current = self._pair_current[index] = self.module_digest(module) == digest
        return current

    def module_digest(self, module: str) -> str | None:
        """The digest of the text at `module` now (None: not there), read only when its stamp
        is not the one recorded with its digest; each module is looked at once per scan."""
        known = self._now.get(module)
        if known is None:
            try:
                stamp = stamp_of(os.stat(module))
            except OSError:
                known = (None, None)
            else:
                recorded = self._modules.get(module)
                if _is_recorded(recorded, stamp) and self.trusted(stamp):
                    known = (stamp, recorded[4])
                else:  # stamped before it is read: a change in between is seen next time
                    known = (stamp, disk_digest(module))
            self._now[module] = known
        return known[1]

    def record(
        self, path: Path, stamp: Stamp, codes: str, report: dict, dependencies: dict
    ) -> None:
        """A report made this scan from the text read at `stamp` (`report` without `path`,
        `cached` and `dependencies`)."""
        if self.trusted(stamp):
            self._fresh[self.key_of(path)] = [stamp, codes, report, dependencies]

    def save(self) -> None:
        """Write the manifest when this scan recorded a report: the entries kept from before,
        the fresh ones, and the stamp and digest of every module they depend on."""
        if not self._fresh:
            return
        pairs: dict[tuple[str, str | None], int] = {}

        def indices(dependencies) -> list[int]:
            return [pairs.setdefault(pair, len(pairs)) for pair in dependencies]

        files = {}
        for path, entry in self._files.items():
            if path in self._looked_up and path not in self._answered:
                continue  # changed, or gone: replaced by a fresh report, if any
            if path not in self._looked_up and not os.path.exists(path):
                continue  # deleted since
            if path not in self._fresh:
                try:
                    stamp, codes, report, old = entry
                    kept = [tuple(self._pairs[index]) for index in old]
                except (TypeError, ValueError, IndexError):
                    continue  # damaged: dropped
                files[path] = [stamp, codes, report, indices(kept)]
        for path, (stamp, codes, report, dependencies) in self._fresh.items():
            files[path] = [stamp, codes, report, indices(dependencies.items())]
        if len(files) > MAX_MANIFEST_FILES:
            return
        modules = {}
        for module in {module for module, _ in pairs}:
            if module not in self._now and module in self._modules:
                modules[module] = self._modules[module]  # not looked at: as recorded then
                continue
            self.module_digest(module)
            stamp, digest = self._now[module]
            if stamp is not None and digest is not None and self.trusted(stamp):
                modules[module] = [*stamp, digest]
        value = {"files": files, "pairs": [list(pair) for pair in pairs], "modules": modules}
        _write_atomically(self.folder, self.path, value)
