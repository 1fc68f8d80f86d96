"""`# noqa` comments: `# noqa: LF001` (or a bare `# noqa`) on a line a finding spans
suppresses it; a `# loopfix: noqa` comment on a line of its own skips the whole file.

Comments are found with `tokenize`, so `# noqa` inside a string does not count.
"""

from __future__ import annotations

import io
import re
import tokenize

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+\d+(?:\s*,\s*[A-Z]+\d+)*))?", re.I)
FILE_NOQA = re.compile(r"^#\s*loopfix\s*:\s*noqa\s*$", re.I)
EVERY_RULE = frozenset({"*"})


def noqa_lines(text: str) -> tuple[dict[int, frozenset[str]], bool]:
    """({line: codes suppressed there, or {"*"} for a bare noqa}, whether the file is skipped)."""
    lines: dict[int, frozenset[str]] = {}
    skip_file = False
    if "noqa" not in text.lower():
        return lines, False  # most files: no need to tokenize
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return lines, False
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        if FILE_NOQA.match(token.string) and token.line.strip() == token.string.strip():
            skip_file = True
            continue
        match = NOQA.search(token.string)
        if match is None:
            continue
        codes = match.group("codes")
        found = frozenset(re.split(r"\s*,\s*", codes.upper())) if codes else EVERY_RULE
        lines[token.start[0]] = lines.get(token.start[0], frozenset()) | found
    return lines, skip_file


def suppressed(rule: str, first_line: int, last_line: int, lines: dict) -> bool:
    for line in range(first_line, last_line + 1):
        codes = lines.get(line)
        if codes is not None and ("*" in codes or rule in codes):
            return True
    return False
