"""Unified diffs that `git apply` accepts, including files without a final newline."""

from __future__ import annotations

import difflib

NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    """Lines as git sees them: split after each `\\n` (a `\\r` stays part of its line)."""
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    if old == new:
        return ""
    output = [f"diff --git a/{path} b/{path}\n"]
    generated = difflib.unified_diff(
        _lines(old), _lines(new), fromfile=f"a/{path}", tofile=f"b/{path}", n=context, lineterm=""
    )
    for line in generated:
        if line.startswith(("---", "+++", "@@")):
            output.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            output.append(line)
        else:
            output.append(line + "\n" + NO_NEWLINE)
    return "".join(output)
