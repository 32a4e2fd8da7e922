"""Matching query words against a chunk's tokens by stem: proximity and snippets.

Tokens are runs of letters/digits (identifiers split at _ . - so `parse_query`
matches "parse"), stemmed with the Snowball English stemmer, so "indexing" in a
query finds "indexes" in a chunk but "dex" finds nothing: stems, not substrings.
"""

from __future__ import annotations

import re
from functools import lru_cache

import py_rust_stemmers

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STEMMER = py_rust_stemmers.SnowballStemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _STEMMER.stem_word(word.lower())


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    return [(stem(m.group(0)), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def query_stems(terms) -> list[str]:
    """Distinct stems of the query's words, in query order."""
    out: list[str] = []
    for term in terms:
        for m in _TOKEN.finditer(term):
            s = stem(m.group(0))
            if s not in out:
                out.append(s)
    return out
