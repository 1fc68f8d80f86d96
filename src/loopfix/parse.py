"""Parsing a source text into an `ast.Module`, optionally reusing the parse of the top-level
statements an edit did not touch (for the language server, where each keystroke re-analyses).

`ChunkParser` splits the text before each line that starts a new top-level statement (a line
at column 0 that is not blank, a comment, a decorator's target, or a clause such as `else:`),
parses each chunk on its own with its line numbers kept (the chunk is preceded by as many
empty lines as come before it), and reuses a chunk's statements while its text and position
are unchanged. A split in the wrong place (inside a multi-line string or bracket) leaves a
chunk that does not parse; then the whole text is parsed at once, so the result is always
exactly `ast.parse(text)`'s.
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict

CLAUSES = re.compile(r"(else|elif|except|finally|case)\b|[)\]}]")
LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    return ast.parse(text, filename=filename)


class ChunkParser:
    """`parse(text)` with a cache of top-level chunks; one instance per open document."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self.cache: OrderedDict[tuple[int, str], list[ast.stmt]] = OrderedDict()
        # the index of each statement in the cache (`loopfix.model.index.index_tree`)
        self.pieces: dict[int, tuple] = {}
        # facts of the statements it gave back, kept for the next analysis: loops' facts
        # (`Interpreter._kept_loop_facts`), functions' saved tensors (`saved._Reuse`)
        self.kept: dict[tuple, object] = {}

    def __call__(self, text: str, filename: str = "<unknown>") -> ast.Module:
        body: list[ast.stmt] = []
        for start, chunk in chunks(text):
            statements = self._chunk(start, chunk, filename)
            if statements is None:
                return ast.parse(text, filename=filename)  # a split in the wrong place
            body.extend(statements)
        return ast.Module(body=body, type_ignores=[])

    def _chunk(self, start: int, chunk: str, filename: str) -> list[ast.stmt] | None:
        key = (start, chunk)
        statements = self.cache.get(key)
        if statements is not None:
            self.cache.move_to_end(key)
            return statements
        try:
            statements = ast.parse("\n" * start + chunk, filename=filename).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        self.cache[key] = statements
        if len(self.cache) > self.capacity:
            for dropped in self.cache.popitem(last=False)[1]:
                self.pieces.pop(id(dropped), None)
        return statements


def chunks(text: str) -> list[tuple[int, str]]:
    """(index of the first line, text) of each top-level chunk."""
    lines = LINES.findall(text)  # the line breaks Python's tokenizer knows, and no others
    starts = [0]
    previous = ""
    for number, line in enumerate(lines):
        if number and _starts_statement(line) and not previous.startswith("@"):
            starts.append(number)
        if line.strip() and not line.lstrip().startswith("#"):
            previous = line
    starts.append(len(lines))
    return [
        (first, "".join(lines[first:last])) for first, last in zip(starts, starts[1:], strict=False)
    ]


def _starts_statement(line: str) -> bool:
    return bool(line) and line[0] not in " \t\r\n#\f\\" and not CLAUSES.match(line)
