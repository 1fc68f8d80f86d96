"""`.gitignore` patterns, as git reads them: comments, `!` negation, a trailing `/` for
folders only, a `/` anywhere else anchoring the pattern to its file's folder, `*`, `?`,
`[...]` and `**`. Files in an ignored folder are ignored with it (the walk never enters it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern
    negated: bool
    folders_only: bool


def compile_pattern(line: str) -> Pattern | None:
    line = line.rstrip("\r\n")
    line = re.sub(r"(?<!\\)\s+$", "", line)
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    if line.startswith("\\"):
        line = line[1:]
    folders_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = _translate(line.lstrip("/"))
    prefix = "^" if anchored else "^(?:.*/)?"
    return Pattern(re.compile(prefix + body + "$"), negated, folders_only)


def _translate(glob: str) -> str:
    out, index = [], 0
    while index < len(glob):
        character = glob[index]
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("/**", index) and index + 3 == len(glob):
            out.append("/.*")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif character == "*":
            out.append("[^/]*")
            index += 1
        elif character == "?":
            out.append("[^/]")
            index += 1
        elif character == "[" and "]" in glob[index + 1 :]:
            end = glob.index("]", index + 1)
            content = glob[index + 1 : end].replace("\\", "\\\\")
            if content.startswith("!"):
                content = "^" + content[1:]
            out.append(f"[{content}]")
            index = end + 1
        else:
            out.append(re.escape(character))
            index += 1
    return "".join(out)


@dataclass
class IgnoreRules:
    """The patterns in force for a walk: (folder relative to the repository root, patterns)."""

    layers: list[tuple[str, list[Pattern]]] = field(default_factory=list)

    def add_file(self, gitignore: Path, folder: str) -> None:
        try:
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        patterns = [p for p in map(compile_pattern, lines) if p is not None]
        if patterns:
            self.layers.append((folder, patterns))

    def ignored(self, relative: str, is_folder: bool) -> bool:
        verdict = False
        for folder, patterns in self.layers:
            if folder and not relative.startswith(folder + "/"):
                continue
            below = relative[len(folder) + 1 :] if folder else relative
            for pattern in patterns:
                if pattern.folders_only and not is_folder:
                    continue
                if pattern.regex.match(below):
                    verdict = not pattern.negated
        return verdict


def repository_root(folder: Path) -> Path | None:
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def rules_for_walk(root: Path) -> tuple[Path, IgnoreRules]:
    """The repository root a walk of `root` is relative to, and the patterns of the
    `.gitignore` files from that root down to `root` (and `.git/info/exclude`)."""
    top = repository_root(root) or root
    rules = IgnoreRules()
    rules.add_file(top / ".git" / "info" / "exclude", "")
    chain = [root, *root.parents]
    for folder in reversed(chain[: chain.index(top) + 1] if top in chain else [root]):
        relative = folder.relative_to(top).as_posix() if folder != top else ""
        rules.add_file(folder / ".gitignore", relative)
    return top, rules
