"""Where a text matches a search: (start, end) spans, never markup inside the text.

One definition for every front end: snippets (CLI, JSON, the result list) and the
window's whole-file preview mark the same words.  Whole words match by stem, the
same StemMatcher proximity uses; partial words and identifiers, which the trigram
list finds inside longer tokens ("ratelimi" in "RateLimiter"), match as substrings.
"""

from __future__ import annotations

import re

from kenning.core.types import MatchTerms
from kenning.search.fts import substring_term
from kenning.search.query import ParsedQuery
from kenning.search.textmatch import StemMatcher, query_stems
from kenning.storage.api import Analyzer

__all__ = ["Analyzer", "Highlighter", "Span", "match_terms", "merge_spans"]

Span = tuple[int, int]


def match_terms(query: ParsedQuery, substrings: list[str] | tuple[str, ...] = ()) -> MatchTerms:
    """The words a query matched on; `substrings` are the terms sent to the trigram list."""
    return MatchTerms(
        words=tuple(query.content_terms),
        substrings=tuple(s for s in substrings if substring_term(s)),
    )


class Highlighter:
    """analyzer: the store's (store.analyzer), so a word is marked exactly where the word index finds it."""

    def __init__(self, terms: MatchTerms, analyzer: Analyzer) -> None:
        self.terms = terms
        self.matcher = StemMatcher(query_stems(terms.words, analyzer), analyzer)
        subs = sorted({s.lower() for s in terms.substrings}, key=len, reverse=True)
        self._substrings = re.compile("|".join(map(re.escape, subs)), re.IGNORECASE) if subs else None

    def spans(self, text: str, limit: int | None = None) -> list[Span]:
        """Sorted, disjoint spans of `text` that matched (overlaps merged)."""
        found = [(m.start, m.end) for m in self.matcher.matches(text)]
        if self._substrings is not None:
            found.extend((m.start(), m.end()) for m in self._substrings.finditer(text))
        merged = merge_spans(found)
        return merged[:limit] if limit is not None else merged


def merge_spans(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
