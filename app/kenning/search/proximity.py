"""The bounded rerank contribution: how closely a chunk holds the query's words.

Three parts in [0, 1]: title coverage (weighted more for code, whose titles are
file + symbol names), the tightest span holding the query's words, and a capped count
of query word pairs standing side by side.  Their weighted sum, also in [0, 1], is
scaled to at most half of what one list's first place is worth, so it reorders close
calls but cannot bury strong fused evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.search.textmatch import query_stems, tokens_with_spans

PHRASE_CAP = 3
WEIGHTS = {
    "code": {"title": 0.5, "span": 0.3, "phrase": 0.2},
    "prose": {"title": 0.3, "span": 0.45, "phrase": 0.25},
}


@dataclass(frozen=True)
class Proximity:
    title: float
    span: float
    phrase: float
    raw: float  # weighted sum in [0, 1]


def proximity(stems: list[str], title: str, text: str, kind: str) -> Proximity:
    if not stems:
        return Proximity(0.0, 0.0, 0.0, 0.0)
    wanted = set(stems)
    title_stems = {s for s, _, _ in tokens_with_spans(title)}
    title_part = len(wanted & title_stems) / len(wanted)
    seq = [s for s, _, _ in tokens_with_spans(text)]
    span_part = _span_score(seq, wanted) if len(wanted) > 1 else 0.0
    phrase_part = _phrase_score(seq, stems) if len(stems) > 1 else 0.0
    w = WEIGHTS["code" if kind == "code" else "prose"]
    raw = w["title"] * title_part + w["span"] * span_part + w["phrase"] * phrase_part
    return Proximity(title_part, span_part, phrase_part, raw)


def _span_score(seq: list[str], wanted: set[str]) -> float:
    """coverage × density of the tightest window holding every query stem present."""
    positions = [(i, s) for i, s in enumerate(seq) if s in wanted]
    present = {s for _, s in positions}
    if len(present) < 2:
        return 0.0
    best = _tightest_window(positions, len(present))
    coverage = len(present) / len(wanted)
    return coverage * min(1.0, len(present) / best)


def _tightest_window(positions: list[tuple[int, str]], need: int) -> int:
    counts: dict[str, int] = {}
    best = 1 << 30
    left = 0
    for right, (pos, s) in enumerate(positions):
        counts[s] = counts.get(s, 0) + 1
        while len(counts) == need:
            lpos, ls = positions[left]
            best = min(best, pos - lpos + 1)
            counts[ls] -= 1
            if not counts[ls]:
                del counts[ls]
            left += 1
    return best


def _phrase_score(seq: list[str], stems: list[str]) -> float:
    pairs = {(a, b) for a, b in zip(stems, stems[1:])}
    found = sum(1 for a, b in zip(seq, seq[1:]) if (a, b) in pairs)
    return min(found, PHRASE_CAP) / PHRASE_CAP


__all__ = ["Proximity", "proximity", "query_stems"]
