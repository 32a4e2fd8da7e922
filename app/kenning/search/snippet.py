"""A short window of a chunk around its densest run of query words, words marked."""

from __future__ import annotations

from kenning.search.textmatch import StemMatcher

MARK_OPEN, MARK_CLOSE = "[[", "]]"
LEAD_CHARS = 40  # context shown before the first marked word


def make_snippet(text: str, matcher: StemMatcher, max_chars: int = 320) -> str:
    found = matcher.matches(text)
    start = _window_start(text, [m.start for m in found], max_chars)
    end = min(len(text), start + max_chars)
    if end < len(text):
        space = text.rfind(" ", start + max_chars // 2, end)
        end = space if space > 0 else end
    out, cursor = [], start
    for m in found:
        if m.start < start or m.end > end:
            continue
        out.append(text[cursor : m.start])
        out.append(MARK_OPEN + text[m.start : m.end] + MARK_CLOSE)
        cursor = m.end
    out.append(text[cursor:end])
    prefix = "…" if start > 0 else ""
    suffix = "…" if text[end:].strip() else ""
    return prefix + " ".join("".join(out).split()) + suffix


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
