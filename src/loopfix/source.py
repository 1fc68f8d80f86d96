"""A Python file read once: its bytes, encoding, BOM and text, and offsets into that text.

Everything loopfix changes is expressed as offsets into `SourceFile.text`; `encode` turns an
edited text back into bytes with the file's own encoding and BOM, so untouched bytes survive.
Line endings are never normalised: the text keeps `\\r\\n`, `\\r` and `\\n` exactly as read.
"""

from __future__ import annotations

import bisect
import codecs
import io
import re
import tokenize
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loopfix.notebook import Notebook

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)


MAX_SOURCE_BYTES = 4 << 20  # larger .py files are generated code or data, not training loops


class SourceError(Exception):
    """A file that cannot be read, decoded or parsed; the message names the file."""


@dataclass
class SourceFile:
    path: Path
    data: bytes
    encoding: str
    has_bom: bool
    text: str
    _line_starts: list[int] = field(default_factory=list, repr=False)
    # a Jupyter notebook: `text` is its code cells as Python (`loopfix.notebook`)
    notebook: Notebook | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, path: Path, data: bytes) -> SourceFile:
        if Path(path).suffix == ".ipynb":
            return cls.from_notebook(path, data)
        if b"\x00" in data:
            raise SourceError(f"{path}: contains NUL bytes; not a Python source file")
        has_bom = data.startswith(codecs.BOM_UTF8)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as error:
            if "unknown encoding" in str(error):
                raise SourceError(f"{path}: {error.msg}") from None
            raise SourceError(f"{path}: {_undecodable(data)}") from None
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        body = data[len(codecs.BOM_UTF8) :] if has_bom else data
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError:
            raise SourceError(f"{path}: {_undecodable(body, encoding)}") from None
        except LookupError as error:
            raise SourceError(f"{path}: cannot decode as {encoding}: {error}") from None
        return cls(path=path, data=data, encoding=encoding, has_bom=has_bom, text=text)

    @classmethod
    def from_text(cls, path: Path, text: str) -> SourceFile:
        """An editor's unsaved buffer: the text as it is, bytes in the encoding its coding
        line declares (UTF-8 without one)."""
        declared = _CODING.search("\n".join(text.splitlines()[:2]))
        encoding = declared.group(1) if declared else "utf-8"
        try:
            codecs.lookup(encoding)
            data = text.encode(encoding)
        except (LookupError, UnicodeEncodeError):
            encoding, data = "utf-8", text.encode("utf-8")
        return cls(path=path, data=data, encoding=encoding, has_bom=False, text=text)

    @classmethod
    def read(cls, path: Path) -> SourceFile:
        try:
            size = path.stat().st_size
            if size > MAX_SOURCE_BYTES:
                megabytes = f"{size / (1 << 20):.1f} MB"
                limit = f"{MAX_SOURCE_BYTES >> 20} MB"
                raise SourceError(f"{path}: {megabytes}, over the {limit} limit; skipped")
            data = path.read_bytes()
        except OSError as error:
            raise SourceError(f"{path}: cannot read: {error.strerror or error}") from None
        return cls.from_bytes(path, data)

    @classmethod
    def from_notebook(cls, path: Path, data: bytes) -> SourceFile:
        """A Jupyter notebook, analysed as its code cells joined (`loopfix.notebook`)."""
        from loopfix.notebook import NotebookError, to_python

        try:
            text, notebook = to_python(data)
        except NotebookError as error:
            raise SourceError(f"{path}: {error}") from None
        return cls(path, data, "utf-8", False, text, notebook=notebook)

    def encode(self, text: str) -> bytes:
        """Bytes for `text` written the way this file was written (encoding and BOM; for a
        notebook, its JSON with the cells' new sources). Raises `SourceError` when a notebook
        cannot take the text back."""
        if self.notebook is not None:
            from loopfix.notebook import NotebookError, from_python

            try:
                return from_python(self.notebook, text)
            except NotebookError as error:
                raise SourceError(f"{self.path}: {error}") from None
        body = text.encode(self.encoding)
        return codecs.BOM_UTF8 + body if self.has_bom else body

    def runnable(self, text: str) -> bytes:
        """`text` as a Python script to run (a notebook's cells joined, magics commented)."""
        return text.encode("utf-8") if self.notebook is not None else self.encode(text)

    def cell_position(self, offset: int) -> tuple[int | None, int, int]:
        """(notebook cell number or None, 1-based line within it or the file, 1-based
        column) of a text offset."""
        line, column = self.position(offset)
        if self.notebook is None:
            return None, line, column
        cell, line_in_cell = self.notebook.cell_of(self.text, line)
        if line_in_cell > 0:  # a cell indented as a whole is run without its indentation
            column += len(self.notebook.indent_of(cell))
        return cell, line_in_cell, column

    @property
    def line_starts(self) -> list[int]:
        if not self._line_starts:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def offset(self, lineno: int, utf8_col: int) -> int:
        """Text offset of an `ast` position (1-based line, UTF-8 byte column)."""
        return offset_of(self.text, self.line_starts, lineno, utf8_col)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and 1-based character column of a text offset."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1


def source_spellings(text: str) -> dict[str, str]:
    """Identifiers whose source spelling differs from the NFKC form `ast` gives them
    (`𝛼` is `α` to Python): {normalized: spelling}, so generated code can use the author's."""
    spellings: dict[str, str] = {}
    if text.isascii():  # NFKC changes no ASCII identifier
        return spellings
    for match in re.finditer(r"[^\W\d]\w*", text):
        word = match.group()
        if not word.isascii():
            normalized = unicodedata.normalize("NFKC", word)
            if normalized != word:
                spellings.setdefault(normalized, word)
    return spellings


def respell(fragment: str, spellings: dict[str, str]) -> str:
    """`fragment` (code loopfix generated) with each identifier spelled as in the source."""
    if not spellings:
        return fragment
    return re.sub(r"[^\W\d]\w*", lambda m: spellings.get(m.group(), m.group()), fragment)


def _undecodable(data: bytes, encoding: str = "utf-8") -> str:
    """Where `data` stops being `encoding`, for a one-line message."""
    try:
        data.decode(encoding)
        return f"cannot decode as {encoding}"
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        byte = data[error.start : error.start + 1].hex()
    hint = " and no `# -*- coding: ... -*-` line names another" if encoding == "utf-8" else ""
    return f"cannot decode as {encoding} (byte 0x{byte} on line {line}){hint}"


_LAST_STARTS: tuple[str, list[int]] = ("", [0])


def line_starts(text: str) -> list[int]:
    """The offset where each line begins (read-only: the last text's list is kept, since a
    file's source, its layout and the editor's positions ask for the same text in turn)."""
    global _LAST_STARTS
    last = _LAST_STARTS  # read once: another thread may replace it meanwhile
    if last[0] is not text:
        last = _LAST_STARTS = (text, [0] + [m.end() for m in _LINE_BREAK.finditer(text)])
    return last[1]


def offset_of(text: str, starts: list[int], lineno: int, utf8_col: int) -> int:
    start = starts[lineno - 1]
    line_end = starts[lineno] if lineno < len(starts) else len(text)
    prefix = text[start:line_end].encode("utf-8")[:utf8_col]
    return start + len(prefix.decode("utf-8", errors="ignore"))


def line_break_at(text: str, starts: list[int], lineno: int) -> str:
    """The line ending of line `lineno` ('' on a last line without one)."""
    end = starts[lineno] if lineno < len(starts) else len(text)
    line = text[starts[lineno - 1] : end]
    for ending in ("\r\n", "\r", "\n"):
        if line.endswith(ending):
            return ending
    return ""


def dominant_line_break(text: str) -> str:
    counts = {"\r\n": text.count("\r\n")}
    counts["\r"] = text.count("\r") - counts["\r\n"]
    counts["\n"] = text.count("\n") - counts["\r\n"]
    best = max(counts, key=lambda key: counts[key])
    return best if counts[best] else "\n"
