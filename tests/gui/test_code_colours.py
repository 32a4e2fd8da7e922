"""The preview's code colours across lines: a docstring's prose is a string, not code
(seen under Xvfb: "is", "from", "not", "as" inside a docstring drawn as keywords)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextDocument

from kenning.gui.preview_views import CodeHighlighter


def _colours(text: str, language: str | None) -> list[dict[str, str]]:
    """Per line: each word's colour name ("" where no rule coloured it)."""
    document = QTextDocument()
    document.setPlainText(text)
    highlighter = CodeHighlighter(document, dark=False, language=language)
    highlighter.rehighlight()
    by_colour = {fmt.foreground().color().name(): name for name, fmt in highlighter.formats.items()}
    lines = []
    block = document.begin()
    while block.isValid():
        ranges = block.layout().formats()
        words = {}
        for word in block.text().split():
            at = block.text().index(word)
            hit = [r for r in ranges if r.start <= at < r.start + r.length]
            words[word] = by_colour.get(hit[-1].format.foreground().color().name(), "") if hit else ""
        lines.append(words)
        block = block.next()
    return lines


PYTHON = '''def empty_root_keeps(root):
    """Why nothing is removed when the files
    of several documents seem gone at once: from a root that is empty.
    """
    return None if root else "x"
'''


def test_a_python_docstring_is_a_string_on_every_line_and_the_code_after_it_is_code(qapp):
    lines = _colours(PYTHON, "python")
    assert lines[0]["def"] == "keyword"
    assert set(lines[1].values()) == {"string"}, lines[1]  # "is" and "when" are prose here
    assert set(lines[2].values()) == {"string"}, lines[2]  # "from", "is"
    assert lines[4]["return"] == "keyword" and lines[4]["None"] == "keyword", lines[4]


def test_a_c_block_comment_spans_lines_and_a_glob_in_a_string_opens_none(qapp):
    code = 'const files = glob("src/**/*.js");\n/* if this\n   returns while */\nreturn files;\n'
    lines = _colours(code, "javascript")
    assert lines[0]["const"] == "keyword" and lines[0]['glob("src/**/*.js");'] in ("", "string")
    assert set(lines[1].values()) == {"comment"} and set(lines[2].values()) == {"comment"}
    assert lines[3]["return"] == "keyword", lines[3]


@pytest.mark.parametrize("language", ["python", None, "shell"])
def test_a_slash_star_opens_nothing_outside_the_c_family(qapp, language):
    lines = _colours('paths = "a/*"\nfor path in paths: pass\n', language)
    assert lines[1]["for"] == "keyword", lines[1]
