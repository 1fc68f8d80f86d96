"""Text offsets to LSP positions and back, in the negotiated position encoding.

LSP counts a position's character in code units of the encoding the client and server agreed
on: UTF-16 by default (a character outside the Basic Multilingual Plane counts 2), UTF-8 (bytes)
or UTF-32 (characters). Lines break at `\\n`, `\\r\\n` and `\\r`, as in `source.line_starts`.
"""

from __future__ import annotations

import bisect

from lsprotocol import types

from loopfix.source import line_starts


def units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


class PositionMap:
    """Positions of one text in one encoding."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.text, self.encoding = text, encoding
        self.starts = line_starts(text)

    def position(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        prefix = self.text[self.starts[line] : offset]
        return types.Position(line=line, character=units(prefix, self.encoding))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def offset(self, position: types.Position) -> int:
        """The text offset of `position`; past the end of a line means its end."""
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] if position.line + 1 < len(self.starts) else None
        line = self.text[start:end].rstrip("\r\n")
        count = 0
        for index, character in enumerate(line):
            if count >= position.character:
                return start + index
            count += units(character, self.encoding)
        return start + len(line)
