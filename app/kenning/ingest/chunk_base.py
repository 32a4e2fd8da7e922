"""Shared pieces of the chunkers: the document with its line index, and the one
generic splitter (paragraphs, then lines, then UTF-8-safe cuts) every kind falls back on.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Iterable
from itertools import accumulate
from typing import Any

MAX_TITLE_CHARS = 200

Span = tuple[int, int]  # [start, end) character offsets
Atom = tuple[int, int, bool]  # span + "is code"
Piece = tuple[int, int, str, bool]  # span + title + "is code"

_LEADING_SPACE = re.compile(r"\s*")
_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class Doc:
    """The normalised text plus a line index (offset -> 1-based line number)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts = list(accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span_of_lines(self, first: int, stop: int) -> Span:
        """Offsets of lines [first, stop) without the final newline."""
        end = self.starts[stop] - 1 if stop < len(self.lines) else len(self.text)
        return self.starts[first], max(end, self.starts[first])


def trim(text: str, start: int, end: int) -> Span:
    """Drop leading blank lines (keeping the first line's indent) and trailing space."""
    leading = _LEADING_SPACE.match(text, start, end)
    first = leading.end() if leading else start
    if first >= end:
        return end, end
    newline = text.rfind("\n", start, first)
    start = newline + 1 if newline >= 0 else start
    if text[end - 1].isspace():
        end = start + len(text[start:end].rstrip())
    return start, end


def nbytes(text: str, start: int, end: int) -> int:
    return len(text[start:end].encode("utf-8"))


def fits(text: str, start: int, end: int, limit: int) -> bool:
    # Character counts bound byte counts (1..4 bytes each): skip encoding when decisive.
    chars = end - start
    if chars > limit:
        return False
    if chars * 4 <= limit:
        return True
    return nbytes(text, start, end) <= limit


def atoms(text: str, start: int, end: int, cap: int, code: bool = False, group: int = 0) -> list[Atom]:
    """Non-blank pieces of [start, end), each within `cap` bytes, split as coarsely as
    possible: at blank lines, then at line ends (consecutive lines grouped up to `group`
    bytes, so a long paragraph costs one step per group, not per line), then inside a line."""
    start, end = trim(text, start, end)
    if start >= end:
        return []
    if fits(text, start, end, cap):
        return [(start, end, code)]
    out: list[Atom] = []
    for a, b in _paragraph_spans(text, start, end):
        a, b = trim(text, a, b)
        if a >= b:
            continue
        if fits(text, a, b, cap):
            out.append((a, b, code))
        else:
            out.extend((x, y, code) for x, y in _line_groups(text, a, b, group or cap, cap))
    return out


def _paragraph_spans(text: str, start: int, end: int) -> Iterable[Span]:
    for match in _BLANK_LINES.finditer(text, start, end):
        yield start, match.start()
        start = match.end()
    yield start, end


def _fit_prefix(text: str, start: int, end: int, limit: int) -> int:
    """The largest stop such that text[start:stop] encodes to at most `limit` bytes."""
    window = text[start : min(end, start + limit)]
    raw = window.encode("utf-8")
    if len(raw) <= limit:
        return start + len(window)
    return start + len(raw[:limit].decode("utf-8", "ignore"))


def _line_groups(text: str, start: int, end: int, limit: int, cap: int) -> Iterable[Span]:
    """Runs of whole lines within `limit` bytes; a line over `cap` is cut inside."""
    while start < end:
        stop = _fit_prefix(text, start, end, limit)
        if stop >= end:
            cut, resume = end, end
        else:
            cut = text.rfind("\n", start, stop + 1)
            resume = cut + 1
            if cut <= start:  # the first line alone is over the limit
                cut = text.find("\n", start, end)
                cut = end if cut < 0 else cut
                resume = cut + 1
                if not fits(text, start, cut, cap):
                    yield from _byte_cuts(text, start, cut, cap)
                    start = resume
                    continue
        piece = trim(text, start, cut)
        if piece[0] < piece[1]:
            yield piece
        start = resume


def _byte_cuts(text: str, start: int, end: int, cap: int) -> Iterable[Span]:
    """Cut one long line at code point boundaries, preferring a space near the end."""
    while start < end:
        cut = _fit_prefix(text, start, end, cap)
        if cut < end:
            cut = _nicer_cut(text, start, cut)
        piece = trim(text, start, cut)
        if piece[0] < piece[1]:
            yield piece
        start = cut


def _nicer_cut(text: str, start: int, cut: int) -> int:
    low = start + (cut - start) // 2
    space = max(text.rfind(" ", low, cut), text.rfind("\t", low, cut), text.rfind("\u3000", low, cut))
    if space >= low:
        return space + 1
    # Keep a combining mark with its base character.
    for _ in range(8):
        if cut - 1 <= start or not unicodedata.combining(text[cut]):
            break
        cut -= 1
    return cut


def pack(text: str, parts: list[Atom], target: int) -> list[Atom]:
    """Join consecutive atoms into chunks of about `target` bytes, evenly sized so a
    section just over the target becomes two halves, not a chunk and a crumb."""
    sizes = [nbytes(text, a, b) for a, b, _ in parts]
    total = sum(sizes)
    aim = total / max(1, math.ceil(total / target)) if total else 0
    out: list[Atom] = []
    current: list[Any] | None = None  # [start, end, code, size]
    for (a, b, code), size in zip(parts, sizes):
        if current is not None:
            joined = current[3] + size + gap_bytes(text, current[1], a, target)
            if current[3] < aim and joined <= target:
                current[1], current[2], current[3] = b, current[2] and code, joined
                continue
            out.append((current[0], current[1], current[2]))
        current = [a, b, code, size]
    if current is not None:
        out.append((current[0], current[1], current[2]))
    return out


def gap_bytes(text: str, end: int, start: int, target: int) -> int:
    return target + 1 if start - end > target else nbytes(text, end, start)


def split_to_fit(text: str, start: int, end: int, target: int, cap: int, code: bool = False) -> list[Atom]:
    """One span as chunks: whole when it fits the target, else atoms packed to it."""
    start, end = trim(text, start, end)
    if start >= end:
        return []
    if fits(text, start, end, target):
        return [(start, end, code)]
    return pack(text, atoms(text, start, end, cap, code, target), target)
