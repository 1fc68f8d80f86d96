"""`[tool.loopfix]` in `pyproject.toml`: a project's settings. Command-line flags override them.

```toml
[tool.loopfix]
select = ["LF"]                 # rule codes or prefixes ("LF00", "LF001"); default: every rule
ignore = ["LF004"]
exclude = ["legacy/", "*_pb2.py"]   # gitignore-style patterns, relative to this file's folder
per-file-ignores = { "experiments/*" = ["LF002"] }
restrict-style = "inputs"       # or "autograd-grad"
unsafe-fixes = false            # also apply fixes that change what the code computes
device = "auto"                 # verification: auto, cpu, cuda, mps
python = ".venv/bin/python"     # the interpreter that runs the project's code (relative: here)
iterations = 3
timeout = 120
pass-env = ["WANDB_API_KEY"]    # credential-looking variables verification may see
script-args = ["--data", "/data/tiny", "--epochs", "1"]  # the command line runs give a script
cache-dir = ".loopfix_cache"
```

An unknown key, an unknown rule code or a value of the wrong type is a `ConfigError` whose
one-line message names the file and the key.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from loopfix.options import Options, RestrictStyle
from loopfix.rules import ALL_RULES, Rule

DEVICES = ("auto", "cpu", "cuda", "mps")


class ConfigError(Exception):
    """A setting loopfix cannot use; the message names the file and the key. `key` is the
    `[tool.loopfix]` key at fault ("" for the table itself), `line` the line (from 1) of a
    file that does not parse; None when not known."""

    def __init__(self, message: str, key: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.key, self.line = key, line


@dataclass(frozen=True)
class Config:
    root: Path | None = None  # the folder of the pyproject.toml it came from
    select: tuple[str, ...] = ("LF",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    restrict_style: RestrictStyle = RestrictStyle.inputs
    unsafe_fixes: bool = False
    device: str = "auto"
    python: str | None = None  # None: the active virtual environment, ./.venv, or loopfix's own
    iterations: int = 3
    timeout: float = 120.0
    pass_env: tuple[str, ...] = ()
    # the command line of every script verification runs (empty: the defaults its parser
    # declares, with made-up values for required arguments)
    script_args: tuple[str, ...] = ()
    cache_dir: str = ".loopfix_cache"

    def rules_for(self, path: Path | None = None) -> list[Rule]:
        """The rules that run on `path`: selected, not ignored, not ignored for that file."""
        ignored = set(self.ignore)
        relative = self.relative(path) if path is not None and self.per_file_ignores else None
        for pattern, codes in self.per_file_ignores:
            if relative is not None and matches(relative, pattern):
                ignored |= set(codes)
        return list(_selected_rules(self.select, tuple(sorted(ignored))))

    def relative(self, path: Path) -> str | None:
        """`path` relative to the config's folder, with `/`; None when outside it."""
        if self.root is None:
            return PurePosixPath(*path.parts).as_posix()
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def excluded(self, path: Path, is_folder: bool = False) -> bool:
        """Whether an `exclude` pattern covers `path` (a folder covers everything in it)."""
        if not self.exclude:  # asked for every file and folder a run walks
            return False
        relative = self.relative(path)
        if relative is None:
            return False
        if is_folder:
            relative += "/"  # so that `legacy/` and `src/gen` cover the folder itself
        return any(matches(relative, p) for p in self.exclude)

    def interpreter(self, near: Path | None = None) -> str:
        """The interpreter verification runs the project's code with (see
        `verify.interpreter.choose`); a relative `python` is relative to the config's folder.
        A `.venv` is looked for in the config's folder or, with no `[tool.loopfix]` table, at
        the project root above `near` (a file; by default the current folder, where
        pre-commit runs its hooks)."""
        from loopfix.project import find_root
        from loopfix.verify.interpreter import choose

        explicit = self.python
        relative = explicit and ("/" in explicit or "\\" in explicit)
        if relative and self.root is not None and not Path(explicit).is_absolute():
            explicit = str(self.root / explicit)
        near = near or Path.cwd() / "-"  # find_root starts at a file's folder
        return choose(explicit, self.root or find_root(near))

    def key(self) -> str:
        """What a cached analysis depends on besides the file and loopfix's version."""
        parts = (self.select, self.ignore, self.per_file_ignores, self.options())
        return repr(parts)

    def options(self) -> Options:
        """What changes the planned fixes."""
        return Options(restrict_style=self.restrict_style, unsafe_fixes=self.unsafe_fixes)


def matches(relative: str, pattern: str) -> bool:
    """gitignore-style: `dir/` matches a folder anywhere above; a pattern with no `/` matches
    any path component; otherwise a glob from the config's folder. A `relative` ending in `/`
    is a folder."""
    parts = relative.split("/")
    if relative.endswith("/"):
        relative = relative.rstrip("/")
    if pattern.endswith("/"):
        name = pattern.rstrip("/")
        if "/" in name:
            return relative.startswith(name + "/")
        return any(fnmatch.fnmatchcase(part, name) for part in parts[:-1])
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in parts)
    return fnmatch.fnmatchcase(relative, pattern.lstrip("/")) or relative.startswith(
        pattern.strip("/") + "/"
    )


@functools.cache
def _selected_rules(select: tuple[str, ...], ignored: tuple[str, ...]) -> tuple[Rule, ...]:
    """The rules `select` covers and `ignored` does not (asked for every file of a run)."""
    chosen = [rule for rule in ALL_RULES if _covered(rule.code, select)]
    return tuple(rule for rule in chosen if not _covered(rule.code, ignored))


def _covered(code: str, selectors: tuple[str, ...]) -> bool:
    return any(s == "ALL" or code.startswith(s) for s in selectors)


def find_config(start: Path) -> Config:
    """The settings of the nearest `pyproject.toml` with a `[tool.loopfix]` table at or above
    `start` (stopping at the repository root), or the defaults."""
    folder = start.resolve()
    folder = folder if folder.is_dir() else folder.parent
    for candidate in [folder, *folder.parents]:
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError) as error:
                raise ConfigError(f"{pyproject}: cannot read: {error}") from None
            config = config_from_text(text, candidate, str(pyproject))
            if config is not None:
                return config
        if (candidate / ".git").exists():
            break
    return Config()


def config_from_text(text: str, root: Path | None, source: str) -> Config | None:
    """The settings in the text of a `pyproject.toml` (`source` names it in errors), or None
    when it has no `[tool.loopfix]` table."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"at line (\d+)", str(error))
        message = f"{source}: cannot read: {error}"
        raise ConfigError(message, line=int(line[1]) if line else None) from None
    tool = document.get("tool")
    table = tool.get("loopfix") if isinstance(tool, dict) else None
    return None if table is None else parse_config(table, root, source)


def parse_config(table: dict, root: Path | None = None, source: str = "[tool.loopfix]") -> Config:
    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{source}: [tool.loopfix] {key}: {problem}", key=key)

    if not isinstance(table, dict):
        raise fail("", "must be a table")
    values: dict = {"root": root}
    for key, value in table.items():
        if key not in PARSERS:
            known = ", ".join(sorted(PARSERS))
            raise fail(key, f"unknown key (known: {known})")
        try:
            values[key.replace("-", "_")] = PARSERS[key](value)
        except (TypeError, ValueError) as error:
            raise fail(key, str(error)) from None
    return Config(**values)


def with_overrides(config: Config, table: dict, source: str) -> Config:
    """`config` with the keys of `table` (same names as `[tool.loopfix]`) replaced: how
    editor settings and command-line flags win over the project's file."""
    parsed = parse_config(table, config.root, source)
    changed = {key.replace("-", "_"): getattr(parsed, key.replace("-", "_")) for key in table}
    return replace(config, **changed)


def _strings(value) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("must be a list of strings")
    return tuple(value)


def _codes(value) -> tuple[str, ...]:
    codes = tuple(v.upper() for v in _strings(value))
    for code in codes:
        if code != "ALL" and not any(rule.code.startswith(code) for rule in ALL_RULES):
            raise ValueError(f"unknown rule code {code!r}; `loopfix rules` lists them")
    return codes


def _per_file(value) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise TypeError('must be a table of pattern = ["LF001", ...]')
    return tuple((pattern, _codes(codes)) for pattern, codes in value.items())


def _choice(options: tuple[str, ...]):
    def parse(value) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return value

    return parse


def _positive(kind: type):
    def parse(value):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise TypeError("must be a positive number")
        if kind is int and not isinstance(value, int):
            raise TypeError("must be a positive whole number")
        return kind(value)

    return parse


def _boolean(value) -> bool:
    if not isinstance(value, bool):
        raise TypeError("must be true or false")
    return value


def _string(value) -> str:
    if not isinstance(value, str):
        raise TypeError("must be a string")
    return value


PARSERS = {
    "select": _codes,
    "ignore": _codes,
    "exclude": _strings,
    "per-file-ignores": _per_file,
    "restrict-style": lambda v: RestrictStyle(_choice(tuple(s.value for s in RestrictStyle))(v)),
    "unsafe-fixes": _boolean,
    "device": _choice(DEVICES),
    "python": _string,
    "iterations": _positive(int),
    "timeout": _positive(float),
    "pass-env": _strings,
    "script-args": _strings,
    "cache-dir": _string,
}
