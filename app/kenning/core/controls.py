"""Control characters in untrusted text (note text, titles, file and source names, error
messages quoting paths), one rule for the terminal and the log file.

Shown as a visible `\\uXXXX` escape: C0 except newline and tab, DEL, C1, and the Unicode
controls that reorder or break lines (bidi overrides, line/paragraph separators); with
one_line, newline and tab too, so a file name can never forge a line of its own.  The
escape is also valid inside a JSON string, so JSON lines stay JSON.  A byte of a path that
is not UTF-8 (a surrogate escape) is shown as `\\xNN`, as core.fsnames stores it (JSON is
written from core.fsnames.text_only(value), which holds none).
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.fsnames import escaped_char
from kenning.core.patterns import lazy_pattern

if TYPE_CHECKING:
    import re

_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"  # a byte of a name that is not UTF-8 (os.fsdecode's escape), or worse
_UNSAFE_RE = lazy_pattern(f"[{_UNSAFE}{_SURROGATES}]")
_UNSAFE_LINE_RE = lazy_pattern(f"[{_UNSAFE}{_SURROGATES}\n\t]")


def _escape(match: re.Match[str]) -> str:
    return escaped_char(match.group())


def _printable(text: str, *, keeping_lines: bool = False) -> bool:
    """Whether text holds none of the characters above (newline and tab allowed when
    keeping_lines): each is one str.isprintable refuses, so a printable text has none.
    Most texts are, and then neither pattern is compiled: with the surrogates in its
    class each costs ~4.3 M instructions to compile (together ~3% of a lexical search)."""
    if text.isprintable():
        return True
    return keeping_lines and text.replace("\n", "").replace("\t", "").isprintable()


def visible(text: str, *, one_line: bool = False) -> str:
    """`text` with every control character shown as `\\uXXXX` (newline and tab kept
    unless one_line), and a byte of a path that is not UTF-8 as `\\xNN`: never raw."""
    if _printable(text, keeping_lines=not one_line):
        return text
    pattern = _UNSAFE_LINE_RE if one_line else _UNSAFE_RE
    return pattern.sub(_escape, text)


def replace_controls(text: str) -> str:
    """`text` with each control character replaced by U+FFFD, one for one (so offsets
    into the text, like match spans, still line up)."""
    if _printable(text):
        return text
    return _UNSAFE_LINE_RE.sub("\ufffd", text)
