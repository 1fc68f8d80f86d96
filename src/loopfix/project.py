"""The project a file belongs to: its root, and the project's own modules that its imports name.

Real repositories split a training job across files (`models.py`, `utils.py`, `trainer.py`,
`train.py`). The loop model of one file can look into the modules it imports from the same
project: `Project.resolver_for(path)` gives it a function from an import to the symbols of
that module (classes, functions, their bodies), parsed once per run and memoised by content.
Third-party and standard-library imports are not the project's and stay opaque; an import
that cannot be resolved, or a module that does not parse, is treated as opaque too (a module
that does not parse is reported once per run, naming it).

Import resolution follows Python's: a script's own folder first (`python train.py` imports
`models.py` beside it), then the project root and a `src/` layout under it; packages through
`__init__.py` (its re-exports included); relative imports from the importing module's package.
A module in a namespace package (a folder without `__init__.py`) that a script above imports
resolves from that script's folder (`namespace_root`).
The texts come from `read` (the disk by default; the language server reads open buffers first),
so the loop model itself reads no file.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from loopfix import relevance
from loopfix.model.index import index_tree
from loopfix.model.symbols import Symbols, collect_symbols
from loopfix.source import MAX_SOURCE_BYTES, SourceError, SourceFile

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
MAX_MODULES = 200  # a file's imports are followed through at most this many project modules
# parsed modules a run keeps between files (about 0.35 MB each); beyond, the ones used least
# recently are dropped once a file's analysis ends (down to half) and parsed again when a
# later file needs them
MAX_KEPT_MODULES = 600
MAX_INDEXED_FILES = 5000  # project files whose imports the reverse index reads
MAX_CALLERS = 8  # modules (importers, their importers...) run for what they pass a file
CALLER_DEPTH = 3  # how far up the import chain callers are looked for
# folders above a file's own (or its top-level package's) where a script that imports it
# through namespace packages is looked for, and the modules such scripts are followed through
NAMESPACE_LEVELS = 4
MAX_NAMESPACE_MODULES = 1000
# the module part of an import statement (a parenthesised name list may follow on other lines)
_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([^#\n]*)|import[ \t]+([^#\n]+))",
    re.MULTILINE,
)

Reader = Callable[[Path], str | None]
Stamp = tuple[int, int] | None  # a file's or folder's (modification time, size); None: absent
Fact = TypeVar("Fact")


_READ: dict[Path, tuple[tuple[int, int], str | None]] = {}  # path -> ((mtime, size), text)


def read_disk(path: Path) -> str | None:
    """A module's text from disk, or None when it cannot be read or decoded (decoded again
    only when the file's modification time or size changed: an editor asks on every edit)."""
    try:
        status = path.stat()
        stamp = (status.st_mtime_ns, status.st_size)
        cached = _READ.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        text = None
        if status.st_size <= MAX_SOURCE_BYTES:
            text = SourceFile.from_bytes(path, path.read_bytes()).text
    except (OSError, SourceError):
        return None
    if len(_READ) > 4096:
        _READ.clear()
    _READ[path] = (stamp, text)
    return text


_DIGESTS: dict[int, tuple[str, str]] = {}  # id(text) -> (text, its digest)


def text_digest(text: str) -> str:
    """The sha256 of a module's text, as reports record it (computed once per text object:
    a run checks one module's digest for every file that depends on it)."""
    cached = _DIGESTS.get(id(text))
    if cached is not None and cached[0] is text:
        return cached[1]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    if len(_DIGESTS) > 4096:
        _DIGESTS.clear()
    _DIGESTS[id(text)] = (text, digest)
    return digest


def disk_digest(path: str | Path) -> str | None:
    """The digest of the text on disk at `path`, None when there is none. Most dependencies
    of a large tree's reports are files an import would be at, which are not there: one
    `stat` says so, without building a `Path`."""
    try:
        os.stat(path)
    except OSError:
        return None
    text = read_disk(Path(path))
    return None if text is None else text_digest(text)


def unchanged(dependencies: dict[str, str | None], read: Reader = read_disk) -> bool:
    """Whether every module of `dependencies` (path -> digest of its text then, or None for
    a file that was not there) still has the same text, or is still not there (editing
    `models.py`, or creating the `networks.py` it imports, re-checks `train.py`)."""
    for path, digest in dependencies.items():
        text = read(Path(path))
        if (None if text is None else text_digest(text)) != digest:
            return False
    return True


def sys_path_entries(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The relative folders a script's text adds to `sys.path`: (those searched before the
    script's own folder, those searched after it), each in Python's search order. An entry
    is a literal (`sys.path.append("model")`, `sys.path.insert(0, "../lib")`: read from the
    working folder, which for such a script is its own) or a literal joined to the script's
    folder (`os.path.join(os.path.dirname(__file__), "model")`, also through
    `os.path.abspath`). `sys.path.insert(0, ...)` puts its folder before the script's (the
    later such call first); `append` and any other `insert` after it. Absolute entries and
    anything computed are left out."""
    if "sys.path" not in text:
        return (), ()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return (), ()
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    before: list[str] = []
    after: list[str] = []
    for node in calls:
        entry = _path_entry(node)
        if entry is None or os.path.isabs(entry) or entry in before or entry in after:
            continue
        first = node.func.attr == "insert" and _is_zero(node.args[0])
        if first:
            before.insert(0, entry)
        else:
            after.append(entry)
    return tuple(before), tuple(after)


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and type(node.value) is int


def _path_entry(node: ast.AST) -> str | None:
    """The relative folder `sys.path.append(entry)` or `sys.path.insert(i, entry)` adds."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    owner = node.func.value
    is_sys_path = (
        isinstance(owner, ast.Attribute)
        and owner.attr == "path"
        and isinstance(owner.value, ast.Name)
        and owner.value.id == "sys"
    )
    position = {"append": 0, "insert": 1}.get(node.func.attr)
    if not is_sys_path or position is None or len(node.args) != position + 1:
        return None
    argument = node.args[position]
    if isinstance(argument, ast.Call) and _joined_to_own_folder(argument):
        argument = argument.args[1]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    return None


def _joined_to_own_folder(node: ast.Call) -> bool:
    """`os.path.join(os.path.dirname(__file__), <one more part>)` (`__file__` also through
    `os.path.abspath` or `os.path.realpath`)."""
    if ast.unparse(node.func) != "os.path.join" or len(node.args) != 2 or node.keywords:
        return False
    folder = node.args[0]
    if not (isinstance(folder, ast.Call) and ast.unparse(folder.func) == "os.path.dirname"):
        return False
    inner = folder.args[0] if len(folder.args) == 1 else None
    if isinstance(inner, ast.Call) and ast.unparse(inner.func) in (
        "os.path.abspath",
        "os.path.realpath",
    ):
        inner = inner.args[0] if len(inner.args) == 1 else None
    return isinstance(inner, ast.Name) and inner.id == "__file__"


@functools.cache
def _installed(module: str | None) -> bool:
    """Whether the top-level package of an absolute import is installed or built in
    (`torch`, `os`): not a project module that may be written later."""
    if not module:
        return False
    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        return True


def root_markers_absent(path: Path, root: Path) -> list[Path]:
    """The root markers (`ROOT_MARKERS`) that are not in the folders from `path`'s up to
    `root`, which `find_root` took: once one is written, the file's project root moves."""
    start = path.resolve().parent
    folders = [start, *start.parents]
    above = folders[: folders.index(root)] if root in folders else []
    return [folder / marker for folder in above for marker in ROOT_MARKERS]


def find_root(path: Path) -> Path:
    """The nearest folder above `path` with a `pyproject.toml`, `setup.py`, `setup.cfg` or
    `.git`; else the folder Python imports the file's top-level package from (the file's
    own folder when it is in no package): `pkg/train.py` with `pkg/__init__.py` imports
    `pkg.models` from the folder holding `pkg`, as a copy of a repository without its
    `.git` does; that folder's own root when a script above it imports it as a namespace
    package (`namespace_root`)."""
    start = path.resolve().parent
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    top = start
    while (top / "__init__.py").exists() and top.parent != top:
        top = top.parent
    return namespace_root(top) or top


def namespace_root(folder: Path) -> Path | None:
    """The nearest folder above `folder` (at most `NAMESPACE_LEVELS` up) whose scripts
    import a module inside `folder` through namespace packages (folders without
    `__init__.py`, PEP 420): `python train.py` beside `src/` imports `src.worker`, and
    `src/worker.py`, run as that module, imports from `train.py`'s folder. None when no
    script there reaches it: a folder of scripts run from where they are keeps its own."""
    for above in folder.parents[:NAMESPACE_LEVELS]:
        if any(module.is_relative_to(folder) for module in _imported_from(above)):
            return above
    return None


# folder -> (the stamps of the files and folders its scripts' imports were read from, the
# modules they reached): a language server asks on every keystroke
_NAMESPACE_IMPORTS: dict[Path, tuple[dict[Path, Stamp], frozenset[Path]]] = {}


def _imported_from(folder: Path) -> frozenset[Path]:
    """The module files that the scripts directly in `folder` import, directly or through
    the modules they import, as Python finds them with `folder` first on its path (where it
    puts a script's own folder): absolute imports from `folder`, relative ones from the
    importing module's package."""
    kept = _NAMESPACE_IMPORTS.get(folder)
    if kept is not None and all(_stamp(path) == stamp for path, stamp in kept[0].items()):
        return kept[1]
    stamps: dict[Path, Stamp] = {folder: _stamp(folder)}
    todo = sorted(folder.glob("*.py"))
    reached: set[Path] = set()
    while todo and len(reached) < MAX_NAMESPACE_MODULES:
        module = todo.pop()
        stamps[module] = _stamp(module)
        for imported in _modules_imported_by(module, folder, stamps):
            if imported not in reached:
                reached.add(imported)
                todo.append(imported)
    _NAMESPACE_IMPORTS[folder] = (stamps, frozenset(reached))
    return frozenset(reached)


def _stamp(path: Path) -> Stamp:
    """What changes when a file is written, or a folder gains or loses a name."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _modules_imported_by(module: Path, top: Path, stamps: dict[Path, Stamp]) -> list[Path]:
    """The files `module`'s import lines name, with `top` on the path (`from pkg import a`
    also names `pkg.a`, when it is a module); `stamps` gets the folders looked into."""
    found: list[Path] = []
    for name, level, names in _imported_names(read_disk(module) or ""):
        if level:
            base = module.parents[level - 1]
            if base == top or not base.is_relative_to(top):  # beyond the top-level package
                continue
        else:
            base = top
        parts = name.split(".") if name else []
        found += _python_module_files(base, parts, stamps)
        for submodule in (n for n in names if n.isidentifier()):
            found += _python_module_files(base, [*parts, submodule], stamps)[-1:]
    return found


def _python_module_files(base: Path, parts: list[str], stamps: dict[Path, Stamp]) -> list[Path]:
    """The files Python runs to import `.`.join(parts) from `base`: each regular package's
    `__init__.py` on the way, then the module's file. In a folder a package (`a/__init__.py`)
    comes before a module (`a.py`), and a module before a namespace package (a folder `a/`
    without `__init__.py`), which has no file; a module is no package, so `a.b` is not
    imported from `a/b.py` when `a.py` is there. Empty when Python imports no file of ours."""
    files: list[Path] = []
    folder = base
    for position, part in enumerate(parts):
        stamps[folder] = _stamp(folder)
        package, plain = folder / part / "__init__.py", folder / f"{part}.py"
        last = position == len(parts) - 1
        if package.is_file():
            files.append(package)
        elif plain.is_file():
            return [*files, plain] if last else []
        elif not (folder / part).is_dir():
            return []
        folder = folder / part
    return files


@dataclass
class Module:
    path: Path
    digest: str  # sha256 of the text the symbols were built from
    symbols: Symbols | None  # None: the module does not parse
    tree: ast.Module | None = None
    # the project modules its symbols link to, as they were when it was linked
    links: dict[Path, Module] = field(default_factory=dict)
    last_used: int = 0  # `_FILES_DONE` when a file last asked for it


@dataclass
class Project:
    """The project's modules, parsed and summarised at most once each per run."""

    root: Path
    read: Reader = read_disk
    modules: dict[Path, Module] = field(default_factory=dict)
    reported: set[Path] = field(default_factory=set)  # broken modules already reported
    # module file -> the project files that import it (built on first use, once per run)
    _importers: dict[Path, set[Path]] | None = None
    # (importing folder, module, level) -> its file: the same import is looked up from every
    # file of a folder, each lookup a few `stat` calls per folder of the search path
    _files: dict[tuple[Path, str | None, int], Path | None] = field(default_factory=dict)
    # the same key -> the files the import would take first that are not there (cleared
    # with `_files`: a file written since may be one of them)
    _absent_first: dict[tuple[Path, str | None, int], tuple[Path, ...]] = field(
        default_factory=dict
    )
    # the same key -> every file the import looks at, in order (`candidates`: no disk read)
    _candidates: dict[tuple[Path, str | None, int], tuple[Path, ...]] = field(default_factory=dict)
    _folders: dict[Path, Path] = field(default_factory=dict)  # importer -> its folder
    # (module file, fact) -> (the text it was computed from, the fact): see `_remember`
    _text_facts: dict[tuple[Path, str], tuple[str, object]] = field(default_factory=dict)
    # importer -> (epoch, `_path_additions`), asked for every import it makes: found again
    # once per run, as `_files` is
    _additions: dict[Path, tuple[int, tuple]] = field(default_factory=dict)
    # importer -> what its import lines named when `imports_changed` last read them
    _last_imports: dict[Path, list] = field(default_factory=dict)
    # folder -> the names in it (None: not a folder), read once per lookup of new imports:
    # an import is looked for in up to three folders, most of which do not hold it
    _listings: dict[str, frozenset[str] | None] = field(default_factory=dict)
    # module -> (epoch, the module object, whether its links were current then)
    _checked: dict[Path, tuple[int, Module, bool]] = field(default_factory=dict)
    epoch: int = 0
    # folder -> its real path (links followed), for the files found in it: resolving each
    # file's whole path asks the file system once per folder above it
    _real_folders: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_file(cls, path: Path, read: Reader = read_disk) -> Project:
        return cls(find_root(path), read)

    def resolver_for(self, path: Path) -> Resolver:
        return Resolver(self, Path(path).resolve())

    def search_path(self, importer: Path) -> list[Path]:
        """Where an absolute import from `importer` is looked for, in order: its folder, with
        the folders its text adds to `sys.path` before or after it (`sys.path.insert(0,
        'lib')`, `sys.path.append('model')`, taken from its folder, where such a script is
        run), then the project root and its `src`."""
        before, after = self._path_additions(importer)
        folders = [*before, importer.parent, *after, self.root, self.root / "src"]
        unique: list[Path] = []
        for folder in folders:
            if folder not in unique:
                unique.append(folder)
        return unique

    def find(self, importer: Path, module: str | None, level: int) -> Path | None:
        """The file of `from <level dots><module> import ...` / `import <module>`."""
        key = (*self._search_key(importer), module, level)
        if key not in self._files:
            self._files[key] = self._find(importer, module, level)
        return self._files[key]

    def _search_key(self, importer: Path) -> tuple[Path, tuple]:
        """What decides where `importer`'s imports are found: its folder and the folders it
        adds to `sys.path`."""
        return self._folder_of(importer), self._path_additions(importer)

    def _path_additions(self, importer: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
        """The folders `importer` adds to `sys.path` by a literal relative path, from its own
        folder (`sys.path.append('model')` before `from model_loader import CreateModel`):
        (searched before its folder, searched after it), as `sys_path_entries`."""
        if importer.suffix != ".py":
            return (), ()
        cached = self._additions.get(importer)
        if cached is not None and cached[0] == self.epoch:
            return cached[1]
        before, after = self._remember(importer, "sys.path", sys_path_entries)
        folders = (
            tuple(importer.parent / folder for folder in before),
            tuple(importer.parent / folder for folder in after),
        )
        self._additions[importer] = (self.epoch, folders)
        return folders

    def _folder_of(self, importer: Path) -> Path:
        """`importer.parent`, made once per importer: a lookup key built for every import
        of every analysed file and loaded module."""
        folder = self._folders.get(importer)
        if folder is None:
            folder = self._folders[importer] = importer.parent
        return folder

    def _find(self, importer: Path, module: str | None, level: int) -> Path | None:
        parts = module.split(".") if module else []
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            found = self._listed_module_file(base, parts)
            return found if found is not None and self._inside(found, importer) else None
        for base in self.search_path(importer):
            found = self._listed_module_file(base, parts)
            if found is not None and self._inside(found, importer):
                return found
        return None

    def candidates(self, importer: Path, module: str | None, level: int) -> tuple[Path, ...]:
        """The files `find` would take for the import, were they there, in the order it
        looks at them: a module that does not exist yet (`networks.py`, before it is
        written) is one of these once it does."""
        key = (*self._search_key(importer), module, level)
        found = self._candidates.get(key)
        if found is None:
            found = self._candidates[key] = tuple(self._candidate_files(importer, module, level))
        return found

    def absent_first(self, importer: Path, module: str | None, level: int) -> tuple[Path, ...]:
        """The `candidates` of the import before the first one that is there: a module
        written later at one of them is the one Python takes."""
        key = (*self._search_key(importer), module, level)
        found = self._absent_first.get(key)
        if found is None:
            absent = []
            for candidate in self.candidates(importer, module, level):
                if os.path.exists(candidate):
                    break
                absent.append(candidate)
            found = self._absent_first[key] = tuple(absent)
        return found

    def _candidate_files(self, importer: Path, module: str | None, level: int) -> list[Path]:
        parts = module.split(".") if module else []
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = self.search_path(importer)
        found: list[Path] = []  # in the order the import looks at them
        for base in bases:
            target = base.joinpath(*parts) if parts else base
            found += (
                [target / "__init__.py", Path(f"{target}.py")]
                if parts
                else [target / "__init__.py"]
            )
        return found

    def _inside(self, path: Path, importer: Path) -> bool:
        """A project module: under the root, or beside the importing script, and never an
        installed package."""
        if "site-packages" in path.parts or "dist-packages" in path.parts:
            return False
        root, folder = self._real_folder(str(self.root)), self._real_folder(str(importer.parent))
        return path.is_relative_to(root) or path.is_relative_to(folder)

    def _real_folder(self, folder: str) -> str:
        real = self._real_folders.get(folder)
        if real is None:
            real = self._real_folders[folder] = os.path.realpath(folder)
        return real

    def _real_file(self, path: str) -> Path | None:
        """`Path(path).resolve(strict=True)` when that is a file, else None (a broken link, a
        folder): one `lstat` for a file that is not a link, and its folder's real path."""
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return _resolved(Path(path))
        if not stat.S_ISREG(mode):
            return None
        folder, name = os.path.split(path)
        return Path(self._real_folder(folder), name)

    def _listed_module_file(self, base: Path, parts: list[str]) -> Path | None:
        """`_module_file`, asking the file system only where the folder lists the name."""
        folder = os.path.join(base, *parts[:-1]) if parts else str(base)
        names = self._listing(folder)
        if names is None:
            return None
        if parts and f"{parts[-1]}.py" not in names and parts[-1] not in names:
            return None
        return self._module_file(base, parts)

    def _module_file(self, base: Path, parts: list[str]) -> Path | None:
        target = base.joinpath(*parts) if parts else base
        if parts:
            candidate = self._real_file(f"{target}.py")
            if candidate is not None:
                return candidate
        return self._real_file(os.path.join(target, "__init__.py"))

    def _listing(self, folder: str) -> frozenset[str] | None:
        if folder not in self._listings:
            try:
                self._listings[folder] = frozenset(os.listdir(folder))
            except OSError:  # not a folder, or not readable
                self._listings[folder] = None
        return self._listings[folder]

    def load(self, path: Path, resolver: Resolver) -> Module | None:
        """The module at `path`, parsed and its symbols linked to the project's other modules;
        None when it cannot be read. Cycles end at a module still being loaded."""
        text = self.read(path)
        if text is None:
            return None
        digest = text_digest(text)
        cached = self.modules.get(path)
        if cached is not None and cached.digest == digest and self._links_current(cached):
            cached.last_used = _FILES_DONE
            return cached
        module = Module(path, digest, None, last_used=_FILES_DONE)
        self.modules[path] = module  # an import cycle finds it here, still empty
        try:
            tree = ast.parse(text, filename=str(path))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            resolver.broken(path, error)
            return module
        module.tree = tree
        module.symbols = Symbols()  # filled in place: a cycle sees the same object
        child = resolver.child(path)
        collect_symbols(tree, index_tree(tree, parents=False), resolver=child, into=module.symbols)
        module.links = dict(child.linked)
        return module

    def _links_current(self, module: Module) -> bool:
        """Whether every module `module` links to, directly or not, is still the text it
        was linked to (an editor's buffer, a file written since): else its symbols hold
        another version's classes and functions, and it is parsed again. Asked once per
        module in each `epoch` (a run; an editor's analysis)."""
        checked = self._checked.get(module.path)
        if checked is not None and checked[0] == self.epoch and checked[1] is module:
            return checked[2]
        self._checked[module.path] = (self.epoch, module, True)  # a cycle: asked already
        current = True
        for path, linked in module.links.items():
            text = self.read(path)
            if (
                self.modules.get(path) is not linked  # parsed again since, or dropped
                or text is None
                or text_digest(text) != linked.digest
                or not self._links_current(linked)
            ):
                current = False
                break
        self._checked[module.path] = (self.epoch, module, current)
        return current

    def next_epoch(self) -> None:
        """Check the links of the kept modules again (`_links_current`): a text may have
        changed since they were parsed."""
        self.epoch += 1

    # ------------------------------------------------------------ who imports a module
    def importers_of(self, path: Path) -> set[Path]:
        """The project files whose imports resolve to `path` (a cheap reverse index: each
        project file's import lines are read once per run, without parsing the file)."""
        if self._importers is None:
            self._importers = self._reverse_imports()
        return self._importers.get(Path(path).resolve(), set())

    def imports_changed(self, importer: Path) -> None:
        """`importer`'s text changed (an editor's buffer): what it imports is read again,
        and imports not found before are looked up again (a module it names may have been
        created since); every import is, when its import lines changed (or it is new). A
        keystroke elsewhere in the file does not look up again what was found."""
        importer = Path(importer).resolve()
        modules = self._imported_modules(importer)
        self._listings.clear()  # a module it names may have been created since
        self._real_folders.clear()
        if self._last_imports.get(importer) == modules:
            self._files = {key: found for key, found in self._files.items() if found is not None}
            self._absent_first.clear()
        else:
            self._last_imports[importer] = modules
            self._files.clear()
            self._absent_first.clear()
        if self._importers is None:
            return
        for importers in self._importers.values():
            importers.discard(importer)
        for module, level in modules:
            target = self.find(importer, module, level)
            if target is not None and target != importer:
                self._importers.setdefault(target, set()).add(importer)

    def _reverse_imports(self) -> dict[Path, set[Path]]:
        found: dict[Path, set[Path]] = {}
        for importer in self._python_files():
            for module, level in self._imported_modules(importer):
                target = self.find(importer, module, level)
                if target is not None and target != importer:
                    found.setdefault(target, set()).add(importer)
        return found

    def _python_files(self) -> list[Path]:
        from loopfix.discover import SKIPPED_FOLDERS, is_virtual_environment

        files: list[Path] = []
        for folder, subfolders, names in os.walk(self.root):
            here = Path(folder)
            subfolders[:] = sorted(
                name
                for name in subfolders
                if not name.startswith(".")
                and name not in SKIPPED_FOLDERS
                and not is_virtual_environment(here / name)
            )
            for name in sorted(names):
                if name.endswith(".py") and (
                    resolved := self._real_file(os.path.join(folder, name))
                ):
                    files.append(resolved)
            if len(files) >= MAX_INDEXED_FILES:
                break
        return files[:MAX_INDEXED_FILES]

    def _imported_modules(self, importer: Path) -> list[tuple[str | None, int]]:
        """(module, level) for each module an import line of `importer` may name: for
        `from pkg import a, b` also `pkg.a` and `pkg.b` (submodules)."""
        modules: list[tuple[str | None, int]] = []
        for module, level, names in self.imported_names(importer):
            modules.append((module, level))
            for name in names:
                if name.isidentifier():
                    modules.append((f"{module}.{name}" if module else name, level))
        return modules

    def imported_names(self, importer: Path) -> list[tuple[str | None, int, list[str]]]:
        """(module, level, names) for each `from <module> import <names>` line of
        `importer`, and (module, 0, []) for each `import <module>` (once per text: the
        relevance test and the reverse index ask it of the same modules again and again)."""
        return self._remember(importer, "imported names", _imported_names)

    def imports_autograd(self, path: Path, consulted: set[Path] | None = None) -> bool:
        """Whether a name `path` imports from a project module does autograd work for it
        (see `loopfix.relevance`): an agent whose update is `update_params(optim, loss)`
        from `utils.py` does autograd work without saying `backward`. `consulted` collects
        the project modules whose text the answer read."""
        importer = Path(path).resolve()
        consulted = consulted if consulted is not None else set()
        for module, level, names in self.imported_names(importer):
            if not names:  # `import utils`: the whole module
                target = self._find_noting(importer, module, level, consulted)
                if target not in (None, importer) and self._mentions(target, consulted):
                    return True
            elif self._exports_autograd(importer, module, level, names, consulted, True):
                return True
        return False

    def imports_in_place(self, path: Path, consulted: set[Path] | None = None) -> bool:
        """Whether `path` imports by name a function of a project module that changes
        something in place (`from utils import mask_probs`: the model module's `forward`
        may change a saved tensor through it, see `loopfix.relevance`). `consulted`
        collects the project modules whose text the answer read."""
        importer = Path(path).resolve()
        consulted = consulted if consulted is not None else set()
        for module, level, names in self.imported_names(importer):
            if not names:
                continue
            target = self._find_noting(importer, module, level, consulted)
            if target in (None, importer):
                continue
            changing = self._remember(target, "in-place", relevance.in_place_functions, consulted)
            if changing & set(names):
                return True
        return False

    def _exports_autograd(
        self,
        importer: Path,
        module: str | None,
        level: int,
        names: list[str],
        consulted: set[Path],
        reexported: bool,
    ) -> bool:
        """Whether `from <module> import <names>` (seen from `importer`) brings in something
        that does autograd work: one of the module's classes or functions, a submodule
        (`from pkg import utils`), or, once, a name the module imports itself (a package's
        `__init__.py` re-exporting `update_params`)."""
        target = self._find_noting(importer, module, level, consulted)
        if target == importer:
            return False
        if target is not None:
            if "*" in names and self._mentions(target, consulted):
                return True
            autograd = self._remember(target, "autograd", relevance.autograd_names, consulted)
            if autograd & set(names):
                return True
        for name in names:  # submodules
            submodule = self.find(importer, f"{module}.{name}" if module else name, level)
            if submodule not in (None, importer) and self._mentions(submodule, consulted):
                return True
        if target is None or not reexported:
            return False
        defined = self._remember(target, "defined", relevance.defined_names, consulted)
        wanted = set(names) - defined
        factories = self._remember(target, "returned calls", relevance.returned_calls, consulted)
        wanted |= {built for name in names for built in factories.get(name, ())} - defined
        for inner, inner_level, inner_names in self.imported_names(target):
            shared = [n for n in inner_names if n in wanted or n == "*"]
            if shared and self._exports_autograd(
                target, inner, inner_level, shared, consulted, False
            ):
                return True
        return False

    def _find_noting(
        self, importer: Path, module: str | None, level: int, consulted: set[Path]
    ) -> Path | None:
        """`find`; a project module not there yet adds the files it would be at to
        `consulted` (read as absent: once written, the decision is made again)."""
        target = self.find(importer, module, level)
        if target is None and (level or not _installed(module)):
            consulted.update(self.candidates(importer, module, level))
        return target

    def _mentions(self, path: Path, consulted: set[Path]) -> bool:
        consulted.add(path)
        return relevance.mentions_autograd(self.read(path) or "")

    def _remember(
        self,
        path: Path,
        what: str,
        compute: Callable[[str], Fact],
        consulted: set[Path] | None = None,
    ) -> Fact:
        """A text fact of a project module, computed once per text (`consulted` notes that
        the answer read it)."""
        if consulted is not None:
            consulted.add(path)
        text = self.read(path) or ""
        key = (path, what)
        cached = self._text_facts.get(key)
        if cached is None or (cached[0] is not text and cached[0] != text):
            cached = (text, compute(text))
            self._text_facts[key] = cached
        return cached[1]

    def callers_of(self, path: Path) -> list[Path]:
        """The modules that may call into `path`: its importers, theirs, ... up to
        `CALLER_DEPTH` levels and `MAX_CALLERS` modules, nearest first."""
        path = Path(path).resolve()
        chain: list[Path] = []
        level = {path}
        for _ in range(CALLER_DEPTH):
            above = set()
            for module in level:
                above |= self.importers_of(module)
            above -= {path, *chain}
            for importer in sorted(above):
                if len(chain) < MAX_CALLERS:
                    chain.append(importer)
            level = above
            if not level or len(chain) >= MAX_CALLERS:
                break
        return chain


def _imported_names(text: str) -> list[tuple[str | None, int, list[str]]]:
    """`Project.imported_names` of a module's text."""
    if "import" not in text:
        return []
    found: list[tuple[str | None, int, list[str]]] = []
    for match in _IMPORT_LINE.finditer(text):
        source, names, plain = match.groups()
        if plain is not None:
            for part in plain.split(","):
                name = part.split(" as ")[0].strip()
                if name.replace(".", "").replace("_", "").isalnum():
                    found.append((name, 0, []))
            continue
        level = len(source) - len(source.lstrip("."))
        parts = [p.split(" as ")[0].strip() for p in (names or "").replace(")", "").split(",")]
        found.append((source.lstrip(".") or None, level, [p for p in parts if p]))
    return found


@dataclass
class Resolver:
    """Imports of one file (and, transitively, of the modules it imports) -> their symbols;
    records every project module used, for the cache and the language server."""

    project: Project
    importer: Path
    used: dict[Path, str] = field(default_factory=dict)  # path -> digest of what was used
    errors: list[str] = field(default_factory=list)
    found: dict[tuple, Symbols | None] = field(default_factory=dict)  # this importer's answers
    # modules whose symbols are given rather than loaded (the file being analysed, as the
    # modules that call into it must see it: the same nodes, so their call sites bind them)
    overrides: dict[Path, Symbols] = field(default_factory=dict)
    # files a project module would be at, which are not there (see `Project.candidates`):
    # created later, they make what was analysed without them out of date
    absent: set[Path] = field(default_factory=set)
    # the project modules this one resolved, by path
    linked: dict[Path, Module] = field(default_factory=dict)
    # the modules this file's imports reached, as `MAX_MODULES` counts them: those resolved
    # from its own imports and from the imports of each module parsed for it
    reached: set[Path] = field(default_factory=set)
    # the symbols `callers` built for this analysis alone, emptied by `release`
    made: list[Symbols] = field(default_factory=list)

    def child(self, path: Path) -> Resolver:
        """The resolver for a module this one imports: same records, its own position."""
        return Resolver(
            self.project,
            path,
            self.used,
            self.errors,
            overrides=self.overrides,
            absent=self.absent,
            reached=self.reached,
        )

    def callers(self, symbols: Symbols) -> list[tuple[ast.Module, Symbols]]:
        """The project modules that may call into the importer (whose own symbols are
        `symbols`), each with its tree and symbols linked to `symbols`, so that what they
        pass to its functions and classes is recorded against its own nodes. Modules in the
        chain are linked to one another afresh for the same reason."""
        chain = self.project.callers_of(self.importer)
        if not chain:
            return []
        overrides = {self.importer: symbols}
        loaded = []
        for path in chain:
            text = self.project.read(path)
            module = self.project.load(path, self) if text is not None else None
            if module is None or module.tree is None:
                continue
            self.used[path] = module.digest
            self.reached.add(path)
            loaded.append((path, module))
            overrides[path] = Symbols()  # filled below; a cycle sees the same object
            self.made.append(overrides[path])
        callers = []
        for path, module in loaded:
            resolver = Resolver(
                self.project,
                path,
                self.used,
                self.errors,
                overrides=overrides,
                absent=self.absent,
                reached=self.reached,
            )
            index = module.symbols.index if module.symbols is not None else None
            collect_symbols(module.tree, index, resolver=resolver, into=overrides[path])
            callers.append((module.tree, overrides[path]))
        return callers

    def release(self) -> None:
        """The analysis is over: empty the symbols built for it alone (`callers`), which
        link to the analysed file's symbols and to each other."""
        for symbols in self.made:
            symbols.forget()
        self.made.clear()

    def __call__(self, module: str | None, level: int) -> Symbols | None:
        key = (module, level)
        if key in self.found:  # the file's re-analyses (one per candidate fix) ask again
            return self.found[key]
        symbols = self._resolve(module, level)
        self.found[key] = symbols
        return symbols

    def _resolve(self, module: str | None, level: int) -> Symbols | None:
        if len(self.reached) >= MAX_MODULES:
            return None
        path = self.project.find(self.importer, module, level)
        if path is None:
            if level or not _installed(module):
                self.absent.update(self.project.candidates(self.importer, module, level))
            return None
        # a module written later where the import looks first (`sub/models.py` beside
        # `sub/train.py`, which imported the root's `models.py`) is the one Python takes
        self.absent.update(self.project.absent_first(self.importer, module, level))
        if path in self.overrides:
            return self.overrides[path]
        loaded = self.project.load(path, self)
        if loaded is None:
            return None
        self.linked[path] = loaded
        self.reached.add(path)
        self._depends_on(loaded)
        return loaded.symbols

    def _depends_on(self, module: Module) -> None:
        """Record `module`, and the modules it links to, directly or not, as what the
        analysis used: a module parsed for an earlier file is linked already, and what it
        links to is part of what this file sees (a class it re-exports), so a change there
        makes this file's report out of date too."""
        todo = [module]
        while todo:
            current = todo.pop()
            if self.used.get(current.path) == current.digest:
                continue
            self.used[current.path] = current.digest
            todo += current.links.values()

    def broken(self, path: Path, error: Exception) -> None:
        if path in self.project.reported:
            return
        self.project.reported.add(path)
        line = getattr(error, "lineno", None)
        where = f":{line}:{getattr(error, 'offset', 0) or 0}" if line else ""
        reason = getattr(error, "msg", None) or str(error) or type(error).__name__
        self.errors.append(f"{path}{where}: syntax error: {reason}")  # as if checked itself


_PROJECTS: dict[Path, Project] = {}
_ROOTS: dict[Path, Path] = {}  # a file's folder -> its project root, for `project_for`


def forget_roots() -> None:
    """Look for root markers again, for the module each import names (a module written
    since may be one that was not found, or come before the one found), and at whether the
    kept modules' links are current (a run starts: a `pyproject.toml` or an imported module
    may have been written since)."""
    _ROOTS.clear()
    for project in _PROJECTS.values():
        project.next_epoch()
        project._files.clear()
        project._absent_first.clear()
        project._listings.clear()
        project._real_folders.clear()


_FILES_DONE = 0  # files whose analysis ended in this process (`trim_projects` counts them)


def trim_projects() -> bool:
    """Called between two files' analyses: once more than `MAX_KEPT_MODULES` parsed modules
    are kept, drop all but the ones used most recently, at most half of them (a framework's
    tree would otherwise keep every module it has in memory for the rest of the run; the
    modules every file imports, its core, stay). A module is kept with every module its
    symbols link to, so no kept module refers to a dropped one's nodes: a module parsed again
    is one object for every file that uses it after. Returns whether it dropped any."""
    global _FILES_DONE
    _FILES_DONE += 1
    kept = [(m, project) for project in _PROJECTS.values() for m in project.modules.values()]
    if len(kept) <= MAX_KEPT_MODULES:
        return False
    keep: set[int] = set()
    for module, _ in sorted(kept, key=lambda entry: -entry[0].last_used):
        linked = _linked_closure(module)
        if len(keep | linked) <= MAX_KEPT_MODULES // 2:
            keep |= linked
    for project in _PROJECTS.values():
        dropped = [path for path, module in project.modules.items() if id(module) not in keep]
        for path in dropped:
            module = project.modules.pop(path)
            project._checked.pop(path, None)
            if module.symbols is not None:
                module.symbols.forget()  # its links to the other dropped modules go
            module.links.clear()
        project._text_facts = {
            key: fact for key, fact in project._text_facts.items() if key[0] in project.modules
        }
    return True


def _linked_closure(module: Module) -> set[int]:
    """The ids of `module` and of the modules it links to, directly or not."""
    found, todo = {id(module)}, [module]
    while todo:
        for linked in todo.pop().links.values():
            if id(linked) not in found:
                found.add(id(linked))
                todo.append(linked)
    return found


def project_for(path: Path) -> Project | None:
    """The project of a file on disk (one per root in a process, so each module is parsed
    once per run); None for a text that is not a file (a test's, an unsaved buffer's)."""
    try:
        if not Path(path).is_file():
            return None
    except OSError:
        return None
    folder = Path(os.path.abspath(path)).parent  # absolute: `train.py` after a chdir is another
    root = _ROOTS.get(folder)
    if root is None:  # every file of a folder asks: look for the root markers once
        root = _ROOTS[folder] = find_root(Path(path))
    if root not in _PROJECTS:
        _PROJECTS[root] = Project(root)
    return _PROJECTS[root]


def _resolved(path: Path) -> Path | None:
    """`path` with its links followed, or None for a broken link or a link loop."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return resolved if resolved.is_file() else None
