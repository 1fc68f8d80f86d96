"""The language server's incremental parse is always exactly `ast.parse`'s result."""

from __future__ import annotations

import ast

import pytest

from loopfix.parse import ChunkParser, chunks

TRICKY = [
    "@decorator\n\ndef f():\n    pass\n",
    "if x:\n    a = 1\nelse:\n    a = 2\n",
    "try:\n    a()\nexcept E:\n    pass\nfinally:\n    b()\n",
    'x = """\ndef not_code():\n    pass\n"""\ny = 1\n',
    "value = call(\n1,\n2\n)\nz = 3\n",
    "total = 1 + \\\n2\nw = 4\n",
    "a = 1\r\nb = 2\r\nif a:\r\n    b = 3\r\n",
    "a = 1\rb = 2\r",
    "a = 1\n\x0cb = 2\nc = 3\n",  # a form feed: whitespace to Python, a break to splitlines
    "match x:\n    case 1:\n        pass\ncase = 2\n",
    "",
    "# only a comment\n",
    "class A:\n    x = 1\n\n\n# between\nclass B(A):\n    pass",
]


@pytest.mark.parametrize("text", TRICKY)
def test_the_chunked_parse_equals_a_whole_parse(text):
    expected = ast.dump(ast.parse(text), include_attributes=True)
    assert ast.dump(ChunkParser()(text), include_attributes=True) == expected


def test_a_syntax_error_is_the_whole_parse_s_error():
    text = "a = 1\ndef broken(:\n    pass\nb = 2\n"
    with pytest.raises(SyntaxError) as chunked:
        ChunkParser()(text)
    with pytest.raises(SyntaxError) as whole:
        ast.parse(text)
    assert (chunked.value.lineno, chunked.value.msg) == (whole.value.lineno, whole.value.msg)


def test_statements_an_edit_did_not_touch_are_reused():
    parser = ChunkParser()
    text = "import torch\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    first = parser(text)
    second = parser(text.replace("return 2", "return 3"))
    assert first.body[0] is second.body[0] and first.body[1] is second.body[1]
    assert first.body[2] is not second.body[2]
    assert [start for start, _ in chunks(text)] == [0, 3, 7]
