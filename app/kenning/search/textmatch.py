"""Matching query words against a chunk's text: proximity, snippets and the preview.

One definition of a match: a token matches when the word index would store it under
one of the query's terms — the store's own tokenizer and stemmer (store.analyzer),
so "news" marks "new" exactly as the index finds it for "news", and "fairly" does not
mark "fair", which the index does not find for it either.  Tokens are runs of
letters/digits (identifiers split at _ . - so `parse_query` matches "parse").

Stemming every token of every pooled chunk would dominate query time, so one regex
finds the tokens that start like a query stem and only those are stemmed, many per
call, each word once per process.  Porter only rewrites a word's ending: a stem's
letters are the word's own except a final "i" (from "y": "aay" -> "aai"), a final "e"
(added or replaced: "hoping" -> "hope", "relational" -> "relate") and the "l" of a final
"ble" ("ability" -> "able"), so the candidates start with the stem's letters before
those (at most PREFIX of them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kenning.core.patterns import lazy_pattern
from kenning.core.records import Record
from kenning.storage.api import Analyzer

TOKEN = lazy_pattern(r"[^\W_]+", re.UNICODE)
PREFIX = 3


def query_stems(terms: Iterable[str], analyzer: Analyzer) -> list[str]:
    """Distinct index terms of the query's words, in query order."""
    out: list[str] = []
    for term in terms:
        for stem in analyzer.tokens(term):
            if stem not in out:
                out.append(stem)
    return out


class Match(Record, frozen=True):
    """Where a query term occurs in a text."""

    start: int
    end: int
    stem: str


class StemMatcher:
    """Finds the tokens of a text that the index stores as one of the query's terms."""

    def __init__(self, stems: list[str], analyzer: Analyzer) -> None:
        self.stems = stems
        self.analyzer = analyzer
        self.wanted = set(stems)
        prefixes = sorted({s[: max(1, min(PREFIX, _own_letters(s)))] for s in stems if s}, key=len, reverse=True)
        self._candidates = (
            re.compile(
                r"(?<![^\W_])(?:" + "|".join(map(re.escape, prefixes)) + r")[^\W_]*",
                re.IGNORECASE | re.UNICODE,
            )
            if prefixes
            else None
        )
        self._scanned: dict[str, list[tuple[int, int, str]]] = {}  # prepare()'s scans, by text

    def prepare(self, texts: Iterable[str]) -> None:
        """Find and stem the candidate words of many texts at once (one tokenizer call
        for a whole pool instead of one per text); matches() then reuses both."""
        if self._candidates is None:
            return
        for text in texts:
            if text not in self._scanned:
                self._scanned[text] = self._scan(text)
        self.analyzer.stems({word for found in self._scanned.values() for _, _, word in found})

    def _scan(self, text: str) -> list[tuple[int, int, str]]:
        assert self._candidates is not None
        return [(m.start(), m.end(), m.group(0).lower()) for m in self._candidates.finditer(text)]

    def matches(self, text: str) -> list[Match]:
        if self._candidates is None:
            return []
        found = self._scanned.get(text)
        if found is None:
            found = self._scan(text)
        stems = self.analyzer.known()
        missing = {word for _, _, word in found if word not in stems}
        if missing:
            stems = self.analyzer.stems(missing)
        out = []
        for start, end, word in found:
            terms = stems.get(word)
            if terms is None:  # forgotten meanwhile (the memory is bounded)
                terms = self.analyzer.tokens(word)
            stem = next((s for s in terms if s in self.wanted), None)
            if stem is not None:
                out.append(Match(start, end, stem))
        return out


def holds_run(matcher: StemMatcher, text: str, stems: list[str]) -> bool:
    """Whether the text has the stems on consecutive words (nothing but spaces and
    punctuation between them), as the word index matches a phrase."""
    if not stems:
        return True
    found = matcher.matches(text)
    n = len(stems)
    for i in range(len(found) - n + 1):
        run = found[i : i + n]
        if [m.stem for m in run] == stems and all(
            TOKEN.search(text, a.end, b.start) is None for a, b in zip(run, run[1:])
        ):
            return True
    return False


def _own_letters(stem: str) -> int:
    """How many of the stem's first letters the word it came from certainly has."""
    if stem.endswith("ble"):
        return len(stem) - 2
    return len(stem) - 1 if stem[-1] in "ei" else len(stem)


def tokens_between(text: str, start: int, end: int) -> int:
    return len(TOKEN.findall(text, start, end))
