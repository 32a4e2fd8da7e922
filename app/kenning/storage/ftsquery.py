"""Words as FTS5 match expressions.

User words only ever enter a MATCH expression as double-quoted FTS5 strings, so
AND/OR/NEAR, parentheses, stars and carets typed by the user are plain text.  Search
passes words and phrases; only this backend knows the syntax they become.
"""

from __future__ import annotations

from collections.abc import Iterable

from kenning.core.patterns import lazy_pattern

_STRING = lazy_pattern(r'"((?:[^"]|"")*)"')


def fts_string(word: str) -> str:
    """A user word as an FTS5 string literal: never parsed as FTS5 syntax."""
    return '"' + word.replace('"', '""') + '"'


def match_any(terms: Iterable[str], phrases: Iterable[Iterable[str]] = ()) -> str:
    """OR over terms and phrases; a phrase is one quoted string of its words.

    A term given twice stays twice: FTS5's bm25 sums over the query's phrases, so a
    word the query repeats weighs as often as it is said (query-term frequency)."""
    items = [fts_string(t) for t in terms] + list(dict.fromkeys(fts_string(" ".join(p)) for p in phrases))
    return " OR ".join(items)


def match_all_phrases(phrases: Iterable[Iterable[str]]) -> str:
    """An expression every phrase must match (each one quoted FTS5 string)."""
    return " AND ".join(dict.fromkeys(fts_string(" ".join(p)) for p in phrases))


def strings_of(match: str) -> list[str]:
    """The quoted strings of an expression made by match_any, in order (the inverse of
    fts_string): the substring index searches each one itself (storage.substrings)."""
    return [m.group(1).replace('""', '"') for m in _STRING.finditer(match)]
