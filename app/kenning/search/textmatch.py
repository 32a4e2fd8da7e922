"""Matching query words against a chunk's text by stem: proximity and snippets.

Tokens are runs of letters/digits (identifiers split at _ . - so `parse_query`
matches "parse"), compared by their Snowball English stem, so "indexing" in a query
finds "indexes" in a chunk but "dex" finds nothing: stems, not substrings.

Stemming every token of every pooled chunk would dominate query time, so one regex
finds the tokens that start like a query stem (a stem keeps its word's first
letters) and only those are stemmed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import py_rust_stemmers

TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STEMMER = py_rust_stemmers.SnowballStemmer("english")
PREFIX = 3


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _STEMMER.stem_word(word.lower())


def query_stems(terms) -> list[str]:
    """Distinct stems of the query's words, in query order."""
    out: list[str] = []
    for term in terms:
        for token in TOKEN.findall(term.lower()):
            s = stem(token)
            if s not in out:
                out.append(s)
    return out


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    stem: str


class StemMatcher:
    """Finds the tokens of a text that stem to one of the query's stems."""

    def __init__(self, stems: list[str]) -> None:
        self.stems = stems
        self.wanted = set(stems)
        prefixes = sorted({s[:PREFIX] for s in stems if s}, key=len, reverse=True)
        self._candidates = (
            re.compile(
                r"(?<![^\W_])(?:" + "|".join(map(re.escape, prefixes)) + r")[^\W_]*",
                re.IGNORECASE | re.UNICODE,
            )
            if prefixes
            else None
        )

    def matches(self, text: str) -> list[Match]:
        if self._candidates is None:
            return []
        out = []
        for m in self._candidates.finditer(text):
            s = stem(m.group(0))
            if s in self.wanted:
                out.append(Match(m.start(), m.end(), s))
        return out


def tokens_between(text: str, start: int, end: int) -> int:
    return len(TOKEN.findall(text, start, end))
