"""Jupyter notebooks: checked as their code cells joined, reported by cell, fixed in place
(only the changed cells' sources), verified by running the joined cells, and never written
when a fix would move code across cells or the JSON layout would change."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from loopfix.cli import app
from loopfix.notebook import from_python, to_python
from loopfix.source import SourceFile

from corpus_cases import CORPUS

GAN = (CORPUS / "lf002_gan_generator_reuses_d_output" / "before.py").read_text()
HEAD, LOOP = GAN.split("for i in range(3):\n")


def notebook(*cells: str, markdown: str = "# A GAN on toy data") -> bytes:
    """An nbformat 4 notebook as Jupyter writes it: a markdown cell, then code cells with
    outputs, in nbformat's JSON layout."""
    entries = [{"cell_type": "markdown", "metadata": {}, "source": markdown.splitlines(True)}]
    for number, code in enumerate(cells, start=1):
        entries.append(
            {
                "cell_type": "code",
                "execution_count": number,
                "metadata": {"scrolled": True},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ok\n"]}],
                "source": code.splitlines(True),
            }
        )
    document = {
        "cells": entries,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def gan_notebook(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "gan.ipynb"
    path.write_bytes(notebook("%matplotlib inline\n" + HEAD, "for i in range(3):\n" + LOOP))
    return path


def test_a_notebook_is_checked_and_reported_by_cell(gan_notebook):
    result = invoke("check", "--no-cache", ".")
    assert result.exit_code == 1, result.output
    (line,) = result.stdout.splitlines()
    # cell 3 (the markdown cell is cell 1), line 15 of it: `errG.backward()`
    assert line.startswith("gan.ipynb:cell 3:15:5: LF002 [*]"), line
    assert "(cell 3 line 11)" in line  # the step it names, in the same terms
    (row,) = json.loads(invoke("check", "--no-cache", "--format", "json", ".").stdout)
    assert (row["cell"], row["line"], row["column"]) == (3, 15, 5)


def test_apply_writes_only_the_changed_cell_and_the_fix_verifies(gan_notebook):
    before = json.loads(gan_notebook.read_bytes())
    result = invoke("apply", "--device", "cpu", ".")
    assert result.exit_code == 0, result.output
    assert "wrote gan.ipynb: LF002 cell 3 line 15: equivalent" in result.stderr
    after = json.loads(gan_notebook.read_bytes())
    pairs = zip(before["cells"], after["cells"], strict=True)
    changed = [i for i, (a, b) in enumerate(pairs) if a != b]
    assert changed == [2]  # the loop's cell; its outputs and metadata are untouched
    assert {k: v for k, v in after["cells"][2].items() if k != "source"} == {
        k: v for k, v in before["cells"][2].items() if k != "source"
    }
    assert after["cells"][1]["source"][0] == "%matplotlib inline\n"  # magics come back
    code = "".join("".join(c["source"]) + "\n" for c in after["cells"][1:])
    code = code.replace("%matplotlib inline", "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # the fixed notebook runs top to bottom
    assert invoke("check", "--no-cache", ".").stdout == "All checks passed!\n"


def test_a_dry_run_shows_each_changed_cell_in_its_own_lines(gan_notebook):
    """As findings are reported (`gan.ipynb:cell 3:15:5`): one diff per changed cell, its
    lines numbered within the cell, and no `diff --git` line (it is no patch of the JSON)."""
    result = invoke("apply", "--dry-run", "--no-verify", "--no-cache", ".")
    assert result.exit_code == 0, result.output  # every finding has its fix
    diff = result.stdout
    assert "diff --git" not in diff
    assert diff.startswith("--- a/gan.ipynb:cell 3\n+++ b/gan.ipynb:cell 3\n@@ -"), diff
    cell = "".join(json.loads(gan_notebook.read_bytes())["cells"][2]["source"]).splitlines()
    hunk = diff.splitlines()[2]  # `@@ -first,count +first,count @@`
    first = int(hunk.split()[1].lstrip("-").split(",")[0])
    context = [line[1:] for line in diff.splitlines()[3:] if line.startswith(" ")]
    assert cell[first - 1] == context[0]  # the hunk's lines are the cell's own


def test_a_fix_that_would_move_code_across_cells_is_not_written(tmp_path, monkeypatch):
    """The loop's update split over two cells (the reorder would move `optimizerD.step()`
    into the next cell): reported, and the file left as it was."""
    monkeypatch.chdir(tmp_path)
    first, second = LOOP.split("    # (2) update G")
    flat = [line[4:] for line in (first + "    # (2) update G" + second).splitlines(True)]
    split = "".join(flat).index("# (2) update G")
    body = "".join(flat)
    path = tmp_path / "gan.ipynb"
    data = notebook(HEAD + "i = 0\n" + body[:split], body[split:])
    path.write_bytes(data)
    result = invoke("apply", "--no-verify", ".")
    assert "not written: a fix would move code from one cell to another" in result.stderr
    assert path.read_bytes() == data


def test_a_layout_loopfix_cannot_write_back_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    document = json.loads(notebook("%matplotlib inline\n" + HEAD, "for i in range(3):\n" + LOOP))
    data = json.dumps(document, indent=4).encode()  # nobody's writer: 4 spaces, no newline
    (tmp_path / "gan.ipynb").write_bytes(data)
    result = invoke("apply", "--no-verify", ".")
    assert "not written: its JSON layout is not one loopfix can write back" in result.stderr
    assert (tmp_path / "gan.ipynb").read_bytes() == data


def test_a_syntax_error_in_a_notebook_names_its_cell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.ipynb").write_bytes(notebook("import torch\n", "x = 1\nloss.backward(\n"))
    result = invoke("check", "--no-cache", ".")
    assert result.exit_code == 2 and "n.ipynb:cell 3:2:" in result.stderr, result.stderr


EXERCISE_SETUP = """\
import torch
import torch.nn as nn

rnn = nn.LSTM(3, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
stream = torch.randn(40, 2, 3)
"""
EXERCISE_LOOP = """\
hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
for i in range(0, 30, 10):
    out, hidden = rnn(stream[i:i + 10], hidden)
    loss = head(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_cell_that_does_not_parse_is_left_out_and_the_rest_is_checked_and_fixed(
    tmp_path, monkeypatch
):
    """A course notebook's exercise cell (`n_batches = `) fails on its own when run, as
    IPython compiles each cell apart; the other cells run. It is reported as a syntax error
    naming its cell, and the rest is checked (the hidden state carried undetached is found)
    and fixed, the fix verified by running the other cells; the exercise cell is written
    back as it was."""
    monkeypatch.chdir(tmp_path)
    exercise = "## TODO: your code\nn_batches = \n"
    path = tmp_path / "lesson.ipynb"
    path.write_bytes(notebook(EXERCISE_SETUP, exercise, "%time 1\n" + EXERCISE_LOOP))
    result = invoke("check", "--no-cache", ".")
    assert result.exit_code == 2, result.output
    assert "lesson.ipynb:cell 3:2:13: syntax error: invalid syntax (the cell is left out" in (
        result.stderr
    )
    (line,) = result.stdout.splitlines()
    assert line.startswith("lesson.ipynb:cell 4:4:10: LF001 [*]"), line
    result = invoke("apply", "--device", "cpu", ".")
    assert "Fixed 1 finding(s) in 1 file(s)" in result.output, result.output
    cells = [json.loads(path.read_bytes())["cells"][n]["source"] for n in (1, 2, 3)]
    assert "".join(cells[1]) == exercise and "".join(cells[0]) == EXERCISE_SETUP
    assert ".detach()" in "".join(cells[2]) and cells[2][0] == "%time 1\n"


EXERCISE_FIRST_STEP = """\
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
loss = (model(x) - y).pow(2).mean()
loss.backward()
opt.step()
"""


def test_names_a_cell_left_out_binds_are_not_the_earlier_cells_values(tmp_path, monkeypatch):
    """An exercise cell that does not parse (`loss = <YOUR CODE>`) gives `loss` a value of
    its own once filled in: the next cell's `loss.backward()` is not taken to go through the
    graph the earlier cell's backward freed (Practical_RL's seminar notebook). Run with the
    exercise left out, the notebook fails only because the cell is left out. The cell is
    written back as read."""
    monkeypatch.chdir(tmp_path)
    exercise = "# compute the loss on a fresh batch\nloss = <YOUR CODE>\n"
    data = notebook(EXERCISE_FIRST_STEP, exercise, "opt.zero_grad()\nloss.backward()\n")
    (tmp_path / "seminar.ipynb").write_bytes(data)
    result = invoke("check", "--no-cache", ".")
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert "seminar.ipynb:cell 3:2:" in result.stderr
    text, parsed = to_python(data)
    assert "loss = None  # loopfix magic: loss = <YOUR CODE>" in text
    assert from_python(parsed, text) == data
    filled = notebook(EXERCISE_FIRST_STEP, "loss = <YOUR CODE>\n".replace("<YOUR CODE>", "0"), "")
    assert "loss = 0" in to_python(filled)[0]  # a cell that parses is as written


def test_what_is_not_a_notebook_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.ipynb").write_text('{"cells": ["loss.backward()"')
    result = invoke("check", "--no-cache", ".")
    assert result.exit_code == 2
    assert "broken.ipynb: not a notebook: invalid JSON" in result.stderr


CELL_LINES = st.lists(
    st.sampled_from(
        [
            "x = 1",
            "%matplotlib inline",
            "!pip install x",
            "if x:\n    %time f()",
            "files = !ls",
            "nn.Linear?",
            "print('%d' \\\n      % 3)",
            "print('é')",
            "",
            "#",
            "n_batches = ",  # a cell with it does not parse: left out, written back as read
            "s = 'a\u2028b'\x0c",  # not line ends for Python (`str.splitlines` breaks there)
            "%time x = (",
            "!python train.py \\\n    --epochs 3 \\\n  --lr 0.1",  # a shell line going on
            "if x:\n    !echo a \\\n--flag b\n    y = 2",
        ]
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(CELL_LINES, st.booleans(), st.sampled_from(["", " ", "\t"])), max_size=4),
    st.booleans(),
)
def test_reading_and_writing_back_unchanged_gives_the_same_bytes(cells, as_string):
    """Also for cells indented as a whole, which IPython runs without that indentation, and
    for cells that do not parse."""
    codes = [
        "\n".join(indent + line for line in lines) + ("\n" if newline else "")
        for lines, newline, indent in cells
    ]
    document = json.loads(notebook(*codes))
    if as_string:  # nbformat also allows a cell's source as one string
        for cell in document["cells"]:
            cell["source"] = "".join(cell["source"])
    data = (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    text, parsed = to_python(data)
    assert from_python(parsed, text) == data
    compile(text, "<notebook>", "exec")  # magics are comments: the joined cells parse


def test_a_shell_escape_continued_over_lines_is_one_magic(tmp_path, monkeypatch):
    """`!python train.py \\` goes on in the next lines (IPython joins them for the shell):
    they are part of the escape, not Python."""
    monkeypatch.chdir(tmp_path)
    shell = "!python prepare.py --dataroot ./data \\\n    --name demo \\\n    --gpu_ids -1\n"
    (tmp_path / "gan.ipynb").write_bytes(notebook(shell, HEAD, "for i in range(3):\n" + LOOP))
    result = invoke("check", "--no-cache", ".")
    assert "syntax error" not in result.output, result.output
    assert "gan.ipynb:cell 4:15:5: LF002" in result.stdout, result.output


def test_the_body_of_a_timed_cell_is_checked(tmp_path, monkeypatch):
    """`%%time` runs its cell as Python (a `%%bash` cell is not Python and is skipped)."""
    monkeypatch.chdir(tmp_path)
    loop = "for i in range(3):\n" + LOOP
    path = tmp_path / "gan.ipynb"
    path.write_bytes(notebook(HEAD, "%%time\n" + loop, "%%bash\necho done\n"))
    result = invoke("check", "--no-cache", ".")
    assert "gan.ipynb:cell 3:16:5: LF002 [*]" in result.stdout, result.output


def test_a_notebook_source_maps_offsets_to_cells(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_bytes(notebook("a = 1\nb = 2\n", "c = 3\n"))
    source = SourceFile.read(path)
    assert source.cell_position(source.text.index("b = 2")) == (2, 2, 1)
    assert source.cell_position(source.text.index("c = 3")) == (3, 1, 1)


def test_a_cell_indented_as_a_whole_is_checked_and_fixed_keeping_its_indentation(
    tmp_path, monkeypatch
):
    """IPython runs a cell whose first line is indented without that indentation (its
    `leading_indent` transform); loopfix reads it so, reports columns in the cell's own
    lines, and writes the fix back with the indentation on every line."""
    monkeypatch.chdir(tmp_path)
    loop = "".join(" " + line for line in ("for i in range(3):\n" + LOOP).splitlines(True))
    path = tmp_path / "gan.ipynb"
    path.write_bytes(notebook(HEAD, loop))
    (row,) = json.loads(invoke("check", "--no-cache", "--format", "json", ".").stdout)
    assert (row["cell"], row["line"], row["column"], row["rule"]) == (3, 15, 6, "LF002")
    assert loop.splitlines()[14][5:].startswith("errG.backward()")
    result = invoke("apply", "--device", "cpu", ".")
    assert "wrote gan.ipynb: LF002 cell 3 line 15: equivalent" in result.stderr, result.output
    cell = "".join(json.loads(path.read_bytes())["cells"][2]["source"])
    assert _edited(loop, row["fix_edits"]) == cell  # the JSON's edits are in the cell's lines
    assert cell != loop and all(line.startswith(" ") for line in cell.splitlines() if line)
    code = HEAD + "".join(line[1:] for line in cell.splitlines(True))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert invoke("check", "--no-cache", ".").stdout == "All checks passed!\n"


def test_a_cell_indented_unevenly_is_checked_but_not_rewritten(tmp_path, monkeypatch):
    """A cell whose first line is indented but not every line: IPython removes the
    indentation where it is; a fix could not put it back line for line, so the notebook is
    reported and left as it was."""
    monkeypatch.chdir(tmp_path)
    lines = [" " + line for line in ("for i in range(3):\n" + LOOP).splitlines(True)]
    loop = "".join([lines[0], "# a note at the margin\n", *lines[1:]])
    path = tmp_path / "gan.ipynb"
    data = notebook(HEAD, loop)
    path.write_bytes(data)
    assert "gan.ipynb:cell 3:16:6: LF002 [*]" in invoke("check", "--no-cache", ".").stdout
    result = invoke("apply", "--no-verify", ".")
    assert "cell 3 is indented as a whole but not each of its lines" in result.stderr
    assert path.read_bytes() == data


def _edited(cell: str, edits: list[dict]) -> str:
    """`cell` with JSON `fix_edits` (1-based lines and columns within it) applied."""
    starts = [0] + [i + 1 for i, char in enumerate(cell) if char == "\n"]
    offsets = [
        (starts[e["line"] - 1] + e["column"] - 1, starts[e["end_line"] - 1] + e["end_column"] - 1)
        for e in edits
    ]
    for (start, end), edit in sorted(zip(offsets, edits, strict=True), key=lambda p: p[0])[::-1]:
        cell = cell[:start] + edit["text"] + cell[end:]
    return cell


def test_a_future_import_after_a_shell_escape_cell_verifies(tmp_path, monkeypatch):
    """`!pip install ...` in the first cell, `from __future__ import print_function` opening
    the next, as Jupyter accepts: the joined cells run as a script, so the escape becomes a
    comment only (not `pass`, which would come before the future import) and the fix is
    verified and written."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "gan.ipynb"
    head = "from __future__ import print_function\n" + HEAD
    path.write_bytes(notebook("!pip -q install torch\n", head, "for i in range(3):\n" + LOOP))
    result = invoke("apply", "--device", "cpu", ".")
    assert result.exit_code == 0, result.output
    assert "wrote gan.ipynb: LF002 cell 4 line 15: equivalent" in result.stderr, result.stderr
    cells = json.loads(path.read_bytes())["cells"]
    assert cells[1]["source"] == ["!pip -q install torch\n"]  # the escape comes back


def test_a_magic_called_without_its_percent_is_a_magic(tmp_path, monkeypatch):
    """With automagic on (IPython's default; Colab notebooks lean on it) `cd 'Colab
    Notebooks'` and `pip install einops` run the line magics: they are magics, not syntax
    errors, and come back unchanged when the fixed notebook is written."""
    monkeypatch.chdir(tmp_path)
    setup = "cd 'Colab Notebooks'\ncd drive/My\\ Drive\npip install einops\n"
    path = tmp_path / "gan.ipynb"
    path.write_bytes(notebook(setup + HEAD, "for i in range(3):\n" + LOOP))
    result = invoke("check", "--no-cache", ".")
    assert "syntax error" not in result.output, result.output
    assert "gan.ipynb:cell 3:15:5: LF002" in result.stdout, result.output
    text, parsed = to_python(path.read_bytes())
    assert from_python(parsed, text) == path.read_bytes()
    applied = invoke("apply", "--no-verify", "--no-cache", ".")
    assert applied.exit_code == 0, applied.output
    cell = json.loads(path.read_text())["cells"][1]
    assert "".join(cell["source"]).startswith(setup)


@pytest.mark.parametrize(
    "line",
    [
        "cd = 'data'",  # a variable that shadows the magic
        "time(model)",  # a call of a function of that name
        "ls -la",  # Python (`ls - la`): left to Python, as written
        "run = train(model)",
        "pip",
    ],
)
def test_a_line_that_is_python_is_never_taken_for_a_magic(line):
    text, _ = to_python(notebook(line + "\n"))
    assert line in text
    assert "loopfix magic" not in text
