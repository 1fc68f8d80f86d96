"""Jupyter notebooks as Python text, and back.

A notebook (nbformat 4, `.ipynb`) is analysed as one script: its code cells in order, each
after a marker comment (`# loopfix: cell 3`, numbered from 1 over every cell, as Jupyter and
Ruff show them), with IPython's line magics, cell magics and shell escapes (`%matplotlib
inline`, `%%time`, `!pip install x`) turned into comments so the text parses and runs. The
way back splits an edited text at the markers and restores the magics; the notebook is written
only when its JSON layout is one that re-serialises to the very bytes read (what nbformat and
Jupyter write: one-space indentation, sorted keys, non-ASCII kept), so every byte outside the
changed cells' `source` stays identical. Outputs, metadata and markdown cells are untouched.

Source of the format: the nbformat 4 schema (`nbformat/v4/nbformat.v4.schema.json`) and
nbformat's JSON writer (`nbformat/v4/nbjson.py`: `indent=1, sort_keys=True,
ensure_ascii=False`, then a newline).
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from dataclasses import dataclass, field

MARKER = "# loopfix: cell {}"
_MARKER_LINE = re.compile(r"^# loopfix: cell (\d+)\n", re.M)
MAGIC = "# loopfix magic: "  # the comment a magic line becomes (after `pass` or `x = None`)
_MAGIC_LINE = re.compile(
    r"^([ \t]*)(?:pass  |[^#\n]*= (?:None|\[\])  )?" + re.escape(MAGIC) + r"(.*)$", re.M
)
_ESCAPE = re.compile(r"^([ \t]*)([%!].*|[\w.]+\?{1,2}[ \t]*)$")  # `nn.Linear?` asks for help
# IPython's built-in line magics (`%lsmagic`, IPython 8) that take shell-like words, its POSIX
# shell aliases, and the extensions' magics notebooks load most (autoreload, tensorboard):
# with automagic on (IPython's and Jupyter's default, Colab's too) a line starting with one
# runs it without its `%` (`cd drive/My\ Drive`, `pip install einops`) unless a variable of
# that name shadows it (IPython's `prefilter.is_shadowed`)
AUTOMAGICS = frozenset(
    {"cd", "ls", "pwd", "pip", "conda", "mamba", "env", "set_env", "mkdir", "rmdir", "rm",
     "mv", "cp", "cat", "less", "more", "man", "clear", "run", "load", "load_ext",
     "reload_ext", "unload_ext", "matplotlib", "pylab", "time", "timeit", "prun", "who",
     "whos", "reset", "history", "pushd", "popd", "dhist", "bookmark", "sx", "system",
     "alias", "autoreload", "aimport", "tensorboard"}
)  # fmt: skip
_AUTOMAGIC = re.compile(r"^([ \t]*)((\w+)[ \t]+([^ \t(\[=,].*)?)$")
# cell magics whose body IPython runs as Python (timed, profiled, captured)
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit"})
# `files = !ls`, `t = %timeit -o f()`: IPython's assignment from a shell command or magic
_ASSIGNED_ESCAPE = re.compile(r"^([ \t]*)([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*[%!]")
# the layouts tried when writing back, nbformat's first
_LAYOUTS = ({"indent": 1, "sort_keys": True}, {"indent": 2, "sort_keys": False},
            {"indent": 1, "sort_keys": False}, {"indent": 2, "sort_keys": True})  # fmt: skip


class NotebookError(Exception):
    """A notebook that cannot be read as one, or an edit that cannot be written back."""


@dataclass
class Notebook:
    document: dict
    code_cells: list[int]  # indices in document["cells"] of the code cells, in order
    ends_with_newline: dict[int, bool] = field(default_factory=dict)  # per code cell
    layout: dict | None = None  # json.dumps arguments that give back the bytes read
    trailing: str = ""  # what follows the JSON in the file (nbformat: a newline)
    # code cell index -> the indentation of its first line, which IPython removes from every
    # line that starts with it (`leading_indent`); whether putting it back on every non-blank
    # line gives the cell's source again (else an edited cell is not written); and the cell
    # as the text holds it (what `cell_codes` reads back while the cell is not edited)
    indents: dict[int, tuple[str, bool, str]] = field(default_factory=dict)
    # cell number (from 1) -> the syntax error that leaves it out: IPython compiles each
    # cell on its own, so a cell that does not parse (an exercise's `n_batches = `) fails
    # alone and the others run; the text holds its lines as comments, written back as read
    unparsable: dict[int, SyntaxError] = field(default_factory=dict)

    def indent_of(self, cell: int) -> str:
        """The indentation removed from cell number `cell` (from 1), or ""."""
        found = self.indents.get(cell - 1)
        return found[0] if found is not None else ""

    def cell_of(self, text: str, line: int) -> tuple[int, int]:
        """(cell number from 1, line within the cell from 1) of a 1-based line of the Python
        text; the marker line itself counts as line 0 of its cell."""
        cell, start = 1, 1
        for marker in _MARKER_LINE.finditer(text):
            marker_line = text.count("\n", 0, marker.start()) + 1
            if marker_line > line:
                break
            cell, start = int(marker.group(1)), marker_line
        return cell, line - start


def to_python(data: bytes) -> tuple[str, Notebook]:
    """The notebook's code as Python text, and what is needed to write an edited text back.
    Raises `NotebookError` for what is not an nbformat 4 notebook."""
    try:
        text = data.decode("utf-8")
        document = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NotebookError(f"not a notebook: invalid JSON ({error})") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list) or document.get("nbformat") != 4:
        raise NotebookError("not an nbformat 4 notebook (no `cells`, or another nbformat)")
    notebook = Notebook(document, [])
    parts = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else str(source)
        notebook.code_cells.append(index)
        notebook.ends_with_newline[index] = code.endswith("\n")
        original, (code, indent) = code, _leading_indent(code)
        if indent:
            read = code if code.endswith("\n") else code + "\n"
            notebook.indents[index] = (indent, _indented(code, indent) == original, read)
        code = _comment_magics(code)
        try:
            ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            if not isinstance(error, SyntaxError):
                error = SyntaxError(str(error) or type(error).__name__)
            notebook.unparsable[index + 1] = error
            code = _commented(code)
        parts.append(MARKER.format(index + 1) + "\n" + code)
        if not code.endswith("\n"):
            parts.append("\n")
    notebook.layout, notebook.trailing = _layout(text, document)
    return "".join(parts), notebook


def from_python(notebook: Notebook, text: str) -> bytes:
    """The notebook with each code cell's source taken from `text` (an edited `to_python`
    text). Raises `NotebookError` when the markers are not all there in order (an edit moved
    code across cells) or the notebook's layout cannot be written back byte for byte."""
    if notebook.layout is None:
        raise NotebookError(
            "its JSON layout is not one loopfix can write back unchanged (save it from Jupyter)"
        )
    markers = list(_MARKER_LINE.finditer(text))
    expected = [index + 1 for index in notebook.code_cells]
    if [int(m.group(1)) for m in markers] != expected or (markers and markers[0].start() != 0):
        raise NotebookError("a fix would move code from one cell to another")
    document = json.loads(json.dumps(notebook.document))  # a copy
    codes = {}
    for number, code in cell_codes(text).items():
        index = number - 1
        if index in notebook.indents:
            code = _put_back_indent(notebook, index, code)
        if not notebook.ends_with_newline[index] and code.endswith("\n"):
            code = code[:-1]
        codes[index] = code
    _refuse_moves(notebook, codes)
    for index, code in codes.items():
        cell, original = document["cells"][index], notebook.document["cells"][index]
        if code != _joined(original.get("source", "")):
            as_list = isinstance(original.get("source"), list)
            cell["source"] = code.splitlines(keepends=True) if as_list else code
    return (json.dumps(document, ensure_ascii=False, **notebook.layout) + notebook.trailing).encode(
        "utf-8"
    )


def cell_codes(text: str, notebook: Notebook | None = None) -> dict[int, str]:
    """Cell number (from 1, as Jupyter and Ruff count) -> that code cell's source as Jupyter
    shows it (magics restored, and with `notebook` the indentation of a cell indented as a
    whole), read from a `to_python` text or an edited one."""
    markers = list(_MARKER_LINE.finditer(text))
    followers = [*markers[1:], None] if markers else []
    codes = {
        int(marker.group(1)): _MAGIC_LINE.sub(
            r"\1\2", text[marker.end() : following.start() if following else len(text)]
        )
        for marker, following in zip(markers, followers, strict=True)
    }
    if notebook is not None:
        codes = {n: _indented(code, notebook.indent_of(n)) for n, code in codes.items()}
    return codes


def _leading_indent(code: str) -> tuple[str, str]:
    """(the cell without it, the indentation) of a cell whose first line is indented, as
    IPython runs it: that indentation is removed from every line that starts with it
    (IPython's `leading_indent` cleanup transform, `IPython/core/inputtransformer2.py`)."""
    indent = re.match(r"[ \t]+", code)
    if indent is None:
        return code, ""
    prefix = indent.group(0)
    lines = code.splitlines(keepends=True)
    dedented = (line[len(prefix) :] if line.startswith(prefix) else line for line in lines)
    return "".join(dedented), prefix


def _put_back_indent(notebook: Notebook, index: int, code: str) -> str:
    """The source of a cell indented as a whole, from its code in the text: the source read
    while the code is as read, else the code with the indentation put back (a
    `NotebookError` when that would not give the lines the cell had)."""
    indent, restorable, read = notebook.indents[index]
    if code == read:
        return _joined(notebook.document["cells"][index].get("source", ""))
    if not restorable:
        raise NotebookError(
            f"cell {index + 1} is indented as a whole but not each of its lines: a fix "
            "cannot put its indentation back"
        )
    return _indented(code, indent)


def _indented(code: str, indent: str) -> str:
    """`code` with `indent` put back on every line that is not blank."""
    if not indent:
        return code
    lines = code.splitlines(keepends=True)
    return "".join(indent + line if line.strip() else line for line in lines)


def _refuse_moves(notebook: Notebook, codes: dict[int, str]) -> None:
    """A cell gaining a line that another cell had and it did not: code moved across cells
    (a reorder of statements that span two cells). Run in order, such a notebook computes the
    same; run cell by cell, it would not: nothing is written."""
    before = {
        index: _statements(_joined(notebook.document["cells"][index].get("source", "")))
        for index in codes
    }
    for index, code in codes.items():
        gained = _statements(code) - before[index]
        elsewhere = set().union(*(lines for other, lines in before.items() if other != index))
        if gained & elsewhere:
            raise NotebookError("a fix would move code from one cell to another")


def _statements(code: str) -> set[str]:
    return {
        line.strip()
        for line in code.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    }


def _joined(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _comment_magics(code: str) -> str:
    """IPython syntax as Python: a cell magic (`%%time` first) comments the whole cell; a line
    magic or shell escape at the start of a statement (`%pip ...`, `!nvidia-smi`) becomes a
    comment holding the line, after `pass` where it is indented (so a block keeps a
    statement; at the top level nothing, so a `from __future__` import after a `!pip` cell
    still opens the script), and `x = !ls` becomes `x = None`. A `%` starting a line
    inside brackets or after a backslash is the formatting operator of the statement going
    on, not a magic."""
    lines = _lines(code)
    if lines and lines[0].lstrip().startswith("%%"):
        name = lines[0].lstrip()[2:].split(maxsplit=1)[0] if lines[0].strip() != "%%" else ""
        if name not in PYTHON_CELL_MAGICS:  # `%%bash`, `%%writefile`: not Python at all
            return "".join(MAGIC + line if line.strip() else line for line in lines)
        lines = [MAGIC + lines[0], *lines[1:]]  # `%%time`: the body is Python
    out, depth, continued, magic_goes_on = [], 0, False, False
    for line in lines:
        body, end = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")) :]
        if magic_goes_on:  # `!python train.py \` goes on: the shell's line, not Python
            magic_goes_on = body.rstrip().endswith("\\")
            out.append(MAGIC + body + end)
            continue
        assigned = None if continued else _ASSIGNED_ESCAPE.match(body)
        escape = assigned or (None if continued else _ESCAPE.match(body) or _automagic(body))
        if body.startswith(MAGIC):  # a cell magic's first line, already a comment
            pass
        elif assigned:
            # `files = !ls` gives a list of lines; `t = %timeit -o ...` a result object
            empty = "[]" if body[assigned.end() - 1] == "!" else "None"
            body = f"{assigned.group(1)}{assigned.group(2)} = {empty}  {MAGIC}{body.lstrip()}"
        elif escape and escape.group(1):  # an indented block may need the statement
            body = f"{escape.group(1)}pass  {MAGIC}{escape.group(2)}"
        elif escape:  # at the top level, a comment: `from __future__` may follow
            body = f"{MAGIC}{escape.group(2)}"
        else:
            depth = _depth_after(body, depth)
        if escape:  # a comment now: its `\` continues the magic, not a Python statement
            magic_goes_on, continued = body.rstrip().endswith("\\"), False
        else:
            continued = depth > 0 or body.rstrip().endswith("\\")
        out.append(body + end)
    return "".join(out)


def _automagic(body: str) -> re.Match | None:
    """`cd 'Colab Notebooks'`: a line magic called without its `%` (`AUTOMAGICS`), where
    the line is no Python statement (`cd = path`, `time(...)` and `ls -la`, which parses,
    stay Python: loopfix does not know what the notebook shadows)."""
    found = _AUTOMAGIC.match(body)
    if found is None or found.group(3) not in AUTOMAGICS:
        return None
    try:
        compile(body.strip(), "<cell line>", "exec")
    except SyntaxError:
        return found
    return None


def automagic_lines(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets in `text` of each statement line that is a line magic called
    without its `%` (`_automagic`), outside brackets and continued lines: what jupyterlab-lsp
    leaves as it is in a notebook's virtual document (its IPython overrides rewrite only the
    lines that start with `%` or `!`)."""
    spans, offset, depth, continued = [], 0, 0, False
    for line in _lines(text):
        body = line.rstrip("\r\n")
        if not continued and _automagic(body):
            spans.append((offset, offset + len(body)))
        else:
            depth = _depth_after(body, depth)
            continued = depth > 0 or body.rstrip().endswith("\\")
        offset += len(line)
    return spans


def _commented(code: str) -> str:
    """Every line of a cell that does not parse as a comment that gives it back as it was
    (magics already commented come back too: `_MAGIC_LINE` restores each line once). A line
    that binds names at the cell's top level (an exercise's `loss = <YOUR CODE>`) binds them
    to None in front of its comment: filled in, the cell gives them a value of its own, so
    the analysis must not take the values earlier cells left under those names for theirs."""
    restored = _MAGIC_LINE.sub(r"\1\2", code)
    return "".join(_left_out(line) if line.strip() else line for line in _lines(restored))


# a line at a cell's top level that binds plain names: `loss = ...`, `x, y = ...`, `n += ...`
_BINDS = re.compile(r"([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*)[ \t]*(?:[-+*/%@&|^]|//)?=(?!=)")


def _left_out(line: str) -> str:
    """A line of a cell left out, as a comment; bound to None where it binds names."""
    bound = _BINDS.match(line)
    if bound is None or keyword.iskeyword(bound.group(1).split(",")[0].strip()):
        return MAGIC + line
    names = [name.strip() for name in bound.group(1).split(",")]
    return " = ".join(names) + " = None  " + MAGIC + line


def _lines(code: str) -> list[str]:
    """The lines of `code`, each with its `\n`: Python ends lines there only, not at the
    form feeds, `\x85` or `\u2028` that `str.splitlines` also breaks at (and `_MAGIC_LINE`
    restores a line only after a `\n`)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", code)


def _depth_after(line: str, depth: int) -> int:
    """How many brackets are open after `line` (counted outside strings and comments; a
    string spanning lines is not followed)."""
    quote = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 1
            elif line.startswith(quote, index):
                index += len(quote) - 1
                quote = None
        elif char == "#":
            break
        elif char in "\"'":
            quote = char * 3 if line.startswith(char * 3, index) else char
            index += len(quote) - 1
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        index += 1
    return depth


def _layout(text: str, document: dict) -> tuple[dict | None, str]:
    """The `json.dumps` arguments that write `document` back as `text`, and what follows."""
    body = text.rstrip("\n")
    trailing = text[len(body) :]
    for layout in _LAYOUTS:
        if json.dumps(document, ensure_ascii=False, **layout) == body:
            return layout, trailing
    return None, trailing
