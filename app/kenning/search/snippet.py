"""A short window of a chunk around its densest run of query words, words marked."""

from __future__ import annotations

from kenning.search.textmatch import tokens_with_spans

MARK_OPEN, MARK_CLOSE = "[[", "]]"
WINDOW_TOKENS = 40


def make_snippet(text: str, stems: list[str], max_chars: int = 320) -> str:
    tokens = tokens_with_spans(text)
    if not tokens:
        return _flatten(text[:max_chars])
    wanted = set(stems)
    hits = [i for i, (s, _, _) in enumerate(tokens) if s in wanted]
    start_tok = _best_window_start(hits, len(tokens))
    first = tokens[start_tok][1]
    window = [t for t in tokens[start_tok:] if t[2] - first <= max_chars]
    last = window[-1][2] if window else min(len(text), first + max_chars)
    out, cursor = [], first
    for s, a, b in window:
        if s in wanted:
            out.append(text[cursor:a])
            out.append(MARK_OPEN + text[a:b] + MARK_CLOSE)
            cursor = b
    out.append(text[cursor:last])
    prefix = "…" if first > 0 else ""
    suffix = "…" if last < len(text.rstrip()) else ""
    return prefix + _flatten("".join(out)) + suffix


def _best_window_start(hits: list[int], n_tokens: int) -> int:
    """Start a few tokens before the window of WINDOW_TOKENS holding most hits."""
    if not hits:
        return 0
    best, best_count, left = hits[0], 0, 0
    for right, pos in enumerate(hits):
        while pos - hits[left] >= WINDOW_TOKENS:
            left += 1
        if right - left + 1 > best_count:
            best, best_count = hits[left], right - left + 1
    return max(0, min(best - 4, n_tokens - 1))


def _flatten(text: str) -> str:
    return " ".join(text.split())
