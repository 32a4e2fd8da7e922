"""core.controls: every character it escapes is one str.isprintable refuses, which is what
lets a printable text through without compiling either pattern (issue #27)."""

from __future__ import annotations

from kenning.core import controls
from kenning.core.controls import replace_controls, visible

ESCAPED_SOMEWHERE = [chr(c) for c in range(0x10000) if controls._UNSAFE_LINE_RE.fullmatch(chr(c))]


def test_every_character_either_pattern_escapes_is_not_printable():
    assert len(ESCAPED_SOMEWHERE) > 2000  # C0, C1, the bidi controls and the surrogates
    assert [ch for ch in ESCAPED_SOMEWHERE if ch.isprintable()] == []
    for code in range(0x10000, 0x110000, 97):  # the patterns hold nothing beyond the BMP
        assert not controls._UNSAFE_LINE_RE.fullmatch(chr(code))


def test_the_shortcut_gives_what_the_patterns_give():
    texts = [
        "",
        "plain words, tabs\tand\nlines",
        "a\u00a0no-break space and a soft\u00adhyphen",  # not printable, not escaped
        "bidi \u202eevil\u202c and \x1b[31mescape\x1b[0m",
        "bad byte \udcff in a name",
        "\n",
        "\t\n\u2028",
    ]
    for text in texts:
        assert visible(text) == controls._UNSAFE_RE.sub(controls._escape, text)
        assert visible(text, one_line=True) == controls._UNSAFE_LINE_RE.sub(controls._escape, text)
        assert replace_controls(text) == controls._UNSAFE_LINE_RE.sub("\ufffd", text)
    assert visible("tab\there\n") == "tab\there\n"
    assert visible("tab\there", one_line=True) == "tab\\u0009here"
