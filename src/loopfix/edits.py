"""Text edits at exact offsets, and the statement-level edits fixes are made of.

A fix never regenerates code it does not change: it inserts whole lines next to a statement
(with that statement's own indentation and line ending) or removes a precise range. Every
offset is an index into the decoded source text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from loopfix.source import dominant_line_break, line_break_at, line_starts, offset_of


@dataclass(frozen=True, order=True)
class Edit:
    start: int
    end: int
    text: str


class EditConflict(Exception):
    """Two edits overlap; the caller keeps the earlier fix and drops the later one."""


def apply_edits(text: str, edits) -> str:
    ordered = sorted(set(edits))
    for previous, current in zip(ordered, ordered[1:], strict=False):
        if current.start < previous.end:
            raise EditConflict(f"edits overlap at offset {current.start}")
    pieces, cursor = [], 0
    for edit in ordered:
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.text)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


class Layout:
    """Where statements sit in one source text, for inserting lines next to them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)
        self.newline = dominant_line_break(text)

    def offset(self, lineno: int, col: int) -> int:
        return offset_of(self.text, self.starts, lineno, col)

    def node_range(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        return start, end

    def line_start(self, lineno: int) -> int:
        return self.starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        """Offset just past the line's line break (or the end of the text)."""
        return self.starts[lineno] if lineno < len(self.starts) else len(self.text)

    def line_text(self, lineno: int) -> str:
        return self.text[self.line_start(lineno) : self.line_end(lineno)]

    def indent(self, statement: ast.stmt) -> str:
        start = self.line_start(statement.lineno)
        return self.text[start : self.offset(statement.lineno, statement.col_offset)]

    def stands_alone(self, statement: ast.stmt) -> bool:
        """Only whitespace before it and only a comment after it on its lines."""
        if self.indent(statement).strip():
            return False
        _, end = self.node_range(statement)
        rest = self.text[end : self.line_end(statement.end_lineno)].strip()
        return rest == "" or rest.startswith("#")

    def indent_unit(self, statement: ast.stmt, owner: ast.AST | None) -> str:
        own = self.indent(statement)
        if isinstance(owner, ast.stmt) and own.startswith(self.indent(owner)):
            unit = own[len(self.indent(owner)) :]
            if unit:
                return unit
        return "\t" if own.startswith("\t") else "    "

    def _line_break(self, lineno: int) -> str:
        return line_break_at(self.text, self.starts, lineno) or self.newline

    def insert_after(self, statement: ast.stmt, lines: list[str]) -> Edit:
        indent = self.indent(statement)
        newline = self._line_break(statement.end_lineno)
        at = self.line_end(statement.end_lineno)
        body = newline.join(indent + line for line in lines)
        if line_break_at(self.text, self.starts, statement.end_lineno):
            return Edit(at, at, body + newline)
        return Edit(at, at, newline + body)  # last line without a final newline stays so

    def leading_start(self, statement: ast.stmt) -> int:
        """Where the statement begins, counting the comment lines that introduce it."""
        indent = self.indent(statement)
        lineno = statement.lineno
        while lineno > 1 and _is_comment_at(self.line_text(lineno - 1), indent):
            lineno -= 1
        return self.line_start(lineno)

    def moved_start(self, statement: ast.stmt) -> int:
        """Where a statement moved elsewhere begins: with the comment lines that introduce
        it, unless another statement of its block follows on the very next line: the
        comment then heads that group (`# backward` above `scheduler.step()`,
        `optimizer.zero_grad()`, `loss.backward()`) and stays with the statements that
        remain."""
        after = statement.end_lineno + 1
        if after <= len(self.starts):
            line = self.line_text(after)
            indent = self.indent(statement)
            stripped = line.strip()
            if stripped and not stripped.startswith("#") and _is_code_at(line, indent):
                return self.line_start(statement.lineno)
        return self.leading_start(statement)

    def insert_before(self, statement: ast.stmt, lines: list[str]) -> Edit:
        """Above the statement and above the comment lines that introduce it."""
        indent = self.indent(statement)
        newline = self._line_break(statement.lineno)
        at = self.leading_start(statement)
        return Edit(at, at, "".join(indent + line + newline for line in lines))

    def insert_top_level(self, after: ast.stmt | None, block: list[str]) -> Edit:
        """A top-level definition after `after` (or at the top), with two blank lines around."""
        newline = self.newline
        if after is None:
            at, before = 0, ""
        else:
            at, before = self.line_end(after.end_lineno), newline * 2
            if not line_break_at(self.text, self.starts, after.end_lineno):
                before = newline * 3
        blank_after = 0
        lineno = (after.end_lineno + 1) if after is not None else 1
        while lineno <= len(self.starts) and not self.line_text(lineno).strip():
            blank_after += 1
            lineno += 1
        after_text = newline * max(0, 2 - blank_after)
        return Edit(at, at, before + newline.join(block) + newline + after_text)

    def remove_keyword(self, call: ast.Call, keyword: ast.keyword) -> Edit | None:
        """Remove one keyword argument and the comma that joins it to its neighbours."""
        items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
        index = items.index(keyword)
        start, end = self.node_range(keyword)
        if index > 0:
            start = self.node_range(items[index - 1])[1]
        elif index + 1 < len(items):
            end = self.node_range(items[index + 1])[0]
        else:
            trailing = re.match(r"\s*,\s*", self.text[end:])
            if trailing:
                end += trailing.end()
        removed = self.text[start:end]
        if "#" in removed or "\\" in removed:
            return None
        return Edit(start, end, "")


def _is_code_at(line: str, indent: str) -> bool:
    return line.startswith(indent) and not line[len(indent) :][:1].isspace()


def _is_comment_at(line: str, indent: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("#") and line.startswith(indent) and not line[len(indent)].isspace()
