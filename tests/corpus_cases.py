"""The corpus: one folder per case with before.py, case.toml and (for fixable cases) after.py."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@dataclass(frozen=True)
class Case:
    name: str
    folder: Path
    rules: tuple[str, ...]
    error: str
    description: str
    fixable: bool = True  # False: reported without a fix, for the reason in `no_fix`
    no_fix: str = ""
    unsafe: bool = False  # its fix is unsafe: after.py is what `apply --unsafe-fixes` writes
    accumulates: str = ""  # LF006: the total that keeps (before) or drops (after) the graphs
    entry: str = ""  # a project case: the script in before/ (and after/) that is run
    # a project case whose findings are in another of its modules (a trainer the entry
    # imports): that module's path in before/; by default the entry
    checked_module: str = ""

    @property
    def before(self) -> Path:
        return self.folder / "before" / self.entry if self.entry else self.folder / "before.py"

    @property
    def after(self) -> Path:
        return self.folder / "after" / self.entry if self.entry else self.folder / "after.py"

    @property
    def checked(self) -> Path:
        """The file whose findings the case specifies (and whose fix `apply` writes)."""
        if self.checked_module:
            return self.folder / "before" / self.checked_module
        return self.before

    @property
    def positive(self) -> bool:
        return bool(self.rules)

    def __str__(self) -> str:
        return self.name


def load_cases() -> list[Case]:
    cases = []
    for folder in sorted(p for p in CORPUS.iterdir() if (p / "case.toml").is_file()):
        meta = tomllib.loads((folder / "case.toml").read_text())
        cases.append(
            Case(
                name=folder.name,
                folder=folder,
                rules=tuple(meta["rules"]),
                error=meta["error"],
                description=meta["description"],
                fixable=meta.get("fixable", True),
                no_fix=meta.get("no_fix", ""),
                unsafe=meta.get("unsafe", False),
                accumulates=meta.get("accumulates", ""),
                entry=meta.get("entry", ""),
                checked_module=meta.get("checked", ""),
            )
        )
    return cases


ALL_CASES = load_cases()
# Project cases (several files in before/ and after/, one of them the `entry` script) are
# specified in test_corpus_projects.py; the rest of the suite takes single-file cases.
PROJECTS = [c for c in ALL_CASES if c.entry]
CASES = [c for c in ALL_CASES if not c.entry]
POSITIVE = [c for c in CASES if c.positive and c.fixable and not c.unsafe]
UNSAFE = [c for c in CASES if c.positive and c.unsafe]
UNFIXABLE = [c for c in CASES if c.positive and not c.fixable]
NEGATIVE = [c for c in CASES if not c.positive]
