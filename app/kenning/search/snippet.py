"""A short window of a chunk around its densest run of matched words, with their spans.

The snippet is plain text; the matched words travel beside it as (start, end)
offsets, so text that itself contains brackets or markup ([[wiki links]], a[[0]],
Callable[[Store], None]) is shown exactly as written.
"""

from __future__ import annotations

from bisect import bisect_right

from kenning.core.patterns import lazy_pattern
from kenning.search.highlight import Highlighter, Span

LEAD_CHARS = 40  # context shown before the first marked word
ELLIPSIS = "…"
_WORD = lazy_pattern(r"\S+")  # \s is str.isspace() for str patterns


def make_snippet(text: str, highlighter: Highlighter, max_chars: int = 320) -> tuple[str, tuple[Span, ...]]:
    """(snippet, spans): whitespace runs collapsed to one space, spans index the snippet."""
    found = highlighter.spans(text)
    start = _window_start(text, [s for s, _ in found], max_chars)
    end = min(len(text), start + max_chars)
    if end < len(text):
        space = text.rfind(" ", start + max_chars // 2, end)
        end = space if space > 0 else end
    window = [(s - start, e - start) for s, e in found if s >= start and e <= end]
    body, spans = collapse_whitespace(text[start:end], window)
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if text[end:].strip() else ""
    shift = len(prefix)
    return prefix + body + suffix, tuple((s + shift, e + shift) for s, e in spans)


def collapse_whitespace(text: str, spans: list[Span]) -> tuple[str, list[Span]]:
    """The text with each whitespace run as one space (trimmed), spans moved to match.

    Works a word at a time (regex runs of non-space): a character loop cost 0.35 ms a
    snippet, 7 ms of every 20-hit search (bench_gui_responsiveness.py --profile)."""
    words = [m.span() for m in _WORD.finditer(text)]
    starts = [s for s, _ in words]
    out_starts = []  # where each word begins in the output: the words before it, one space each
    length = 0
    for s, e in words:
        out_starts.append(length)
        length += e - s + 1

    def position(i: int) -> int:
        """Where original index i lands: inside a word, its place there; in a space run,
        just after the word before it (as if the space were not yet written)."""
        k = bisect_right(starts, i) - 1
        if k < 0:
            return 0
        s, e = words[k]
        return out_starts[k] + min(i, e) - s

    moved = []
    for s, e in spans:
        # A span's end is the position just after its last character.
        new_s, new_e = position(s), position(e - 1) + 1 if e > s else position(s)
        if new_e > new_s:
            moved.append((new_s, new_e))
    return " ".join(text[s:e] for s, e in words), moved


def _window_start(text: str, starts: list[int], max_chars: int) -> int:
    """Begin a little before the window of max_chars holding the most matches."""
    if not starts:
        return 0
    span = max_chars - LEAD_CHARS
    best, best_count, left = starts[0], 0, 0
    for right, pos in enumerate(starts):
        while pos - starts[left] > span:
            left += 1
        if right - left + 1 > best_count:
            best, best_count = starts[left], right - left + 1
    begin = max(0, best - LEAD_CHARS)
    if begin > 0:
        space = text.find(" ", begin, best)
        begin = space + 1 if space >= 0 else begin
    return begin
