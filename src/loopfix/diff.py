"""Unified diffs that `git apply` accepts, including files without a final newline; for a
Jupyter notebook, one diff per changed cell, as Black shows them (`a/PATH:cell N`)."""

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
    return f"diff --git a/{path} b/{path}\n" + _diff(old, new, f"a/{path}", f"b/{path}", context)


def notebook_diff(path: str, old: str, new: str, context: int = 3, notebook=None) -> str:
    """The cells that differ between two `to_python` texts of the notebook at `path`, each
    as a unified diff of the cell's source under `a/PATH:cell N` and `b/PATH:cell N`, its
    lines numbered within the cell as findings are (`lesson.ipynb:cell 7:17:5`). It is not a
    patch of the `.ipynb` file, so it has no `diff --git` line. `notebook` (the `Notebook`
    read) puts back the indentation of a cell indented as a whole."""
    from loopfix.notebook import cell_codes

    before, after = cell_codes(old, notebook), cell_codes(new, notebook)
    return "".join(
        _diff(
            before.get(cell, ""),
            after.get(cell, ""),
            f"a/{path}:cell {cell}",
            f"b/{path}:cell {cell}",
            context,
        )  # fmt: skip
        for cell in sorted(before.keys() | after.keys())
        if before.get(cell, "") != after.get(cell, "")
    )


def source_diff(path: str, source, new: str, context: int = 3) -> str:
    """`unified_diff`, or `notebook_diff` when `source` (a `SourceFile`) is a notebook."""
    if source.notebook is not None:
        return notebook_diff(path, source.text, new, context, source.notebook)
    return unified_diff(path, source.text, new, context)


def _diff(old: str, new: str, before: str, after: str, context: int) -> str:
    output = []
    generated = difflib.unified_diff(
        _lines(old), _lines(new), fromfile=before, tofile=after, n=context, lineterm=""
    )
    for line in generated:
        if line.startswith(("---", "+++", "@@")):
            output.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            output.append(line)
        else:
            output.append(line + "\n" + NO_NEWLINE)
    return "".join(output)
