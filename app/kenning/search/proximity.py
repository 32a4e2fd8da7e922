"""The bounded rerank contribution: how closely a chunk holds the query's words.

Three parts in [0, 1]: title coverage (weighted more for code, whose titles are
file + symbol names), the tightest span holding the query's words (coverage ×
density in tokens), and a capped count of query word pairs standing side by side.
Their weighted sum, also in [0, 1], is scaled to at most half of what one list's
first place is worth, so it reorders close calls but cannot bury strong fused
evidence.
"""

from __future__ import annotations

from kenning.core.records import Record
from kenning.search.textmatch import TOKEN, Match, StemMatcher, tokens_between

PHRASE_CAP = 3
WEIGHTS = {
    "code": {"title": 0.5, "span": 0.3, "phrase": 0.2},
    "prose": {"title": 0.3, "span": 0.45, "phrase": 0.25},
}


class Proximity(Record, frozen=True):
    """How close together a chunk holds the query's words."""

    title: float
    span: float
    phrase: float
    raw: float  # weighted sum in [0, 1]


NO_PROXIMITY = Proximity(0.0, 0.0, 0.0, 0.0)  # what a hit records when proximity is switched off


def proximity(matcher: StemMatcher, title: str, text: str, kind: str) -> Proximity:
    wanted = matcher.wanted
    if not wanted:
        return Proximity(0.0, 0.0, 0.0, 0.0)
    title_part = len({m.stem for m in matcher.matches(title)}) / len(wanted)
    span_part = phrase_part = 0.0
    if len(wanted) > 1:
        found = matcher.matches(text)
        span_part = _span_score(text, found, wanted)
        phrase_part = _phrase_score(text, found, matcher.stems)
    w = WEIGHTS["code" if kind == "code" else "prose"]
    raw = w["title"] * title_part + w["span"] * span_part + w["phrase"] * phrase_part
    return Proximity(title_part, span_part, phrase_part, raw)


def _span_score(text: str, found: list[Match], wanted: set[str]) -> float:
    """coverage × density (stems present / tokens) of the tightest window holding them."""
    present = {m.stem for m in found}
    if len(present) < 2:
        return 0.0
    start, end = _tightest_window(found, len(present))
    tokens = max(len(present), tokens_between(text, start, end))
    return (len(present) / len(wanted)) * (len(present) / tokens)


def _tightest_window(found: list[Match], need: int) -> tuple[int, int]:
    counts: dict[str, int] = {}
    best = (0, 1 << 60)
    left = 0
    for m in found:
        counts[m.stem] = counts.get(m.stem, 0) + 1
        while len(counts) == need:
            first = found[left]
            if m.end - first.start < best[1] - best[0]:
                best = (first.start, m.end)
            counts[first.stem] -= 1
            if not counts[first.stem]:
                del counts[first.stem]
            left += 1
    return best


def _phrase_score(text: str, found: list[Match], stems: list[str]) -> float:
    """Query word pairs (in query order) on adjacent tokens, capped at PHRASE_CAP."""
    pairs = set(zip(stems, stems[1:]))
    count = 0
    for a, b in zip(found, found[1:]):
        if (a.stem, b.stem) in pairs and TOKEN.search(text, a.end, b.start) is None:
            count += 1
            if count == PHRASE_CAP:
                break
    return count / PHRASE_CAP
