"""The two lexical retrievers over FTS5: porter (words, stems) and trigram (substrings).

User words only ever enter a MATCH expression as double-quoted FTS5 strings, so
AND/OR/NEAR, parentheses, stars and carets typed by the user are plain text.

Speed (docs/architecture.md §10: an OR query's tail is its common words):
- ranking runs on the FTS table alone, and the filter is checked on the ranked ids,
  fetching deeper until `limit` allowed chunks are found or the matches run out.
  The result is exactly the top `limit` allowed chunks — the filter still acts
  before the cut — without joining every matching row to its document first.  With
  user filters (usually selective) the joined query is used directly.
- in a large index, a term found in more than COMMON_SHARE of all chunks is left out
  of the porter query when a rarer term that occurs remains: its bm25 weight is near
  zero, its posting list is the most expensive to score, and the proximity reranker
  and the vector list still see it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.search.filters import JOIN_DOCUMENTS, SqlCondition
from kenning.search.porter import porter_tokens
from kenning.search.query import fts_string
from kenning.storage.connection import Store

TITLE_WEIGHT = 3.0  # bm25 column weight of the heading path / file+symbol title
TEXT_WEIGHT = 1.0
MIN_TRIGRAM_CHARS = 3
COMMON_SHARE = 0.05
ELIDE_FROM_CHUNKS = 20_000  # below this every query is fast: keep every term
FIRST_FETCH_FACTOR = 2
MAX_FETCH = 5000


@dataclass(frozen=True)
class Ranked:
    chunk_id: int
    score: float  # larger is better (bm25 negated)


def match_any(terms, phrases=()) -> str:
    """OR over terms and phrases; a phrase is one quoted string of its words."""
    items = [fts_string(t) for t in terms] + [fts_string(" ".join(p)) for p in phrases]
    return " OR ".join(dict.fromkeys(items))


def search_table(
    store: Store,
    table: str,
    match: str,
    condition: SqlCondition,
    limit: int,
    *,
    selective: bool = False,
) -> list[Ranked]:
    if selective:
        return _joined(store, table, match, condition, limit)
    fetch = max(limit * FIRST_FETCH_FACTOR, 60)
    while fetch <= MAX_FETCH:
        rows = _ranked_only(store, table, match, fetch)
        allowed = _allowed(store, [r[0] for r in rows], condition)
        kept = [r for r in rows if r[0] in allowed]
        if len(kept) >= limit or len(rows) < fetch:
            return [Ranked(int(cid), -float(score)) for cid, score in kept[:limit]]
        fetch *= 4
    return _joined(store, table, match, condition, limit)


def _rank_sql(table: str) -> str:
    return f"bm25({table}, {TITLE_WEIGHT}, {TEXT_WEIGHT})"


def _ranked_only(store: Store, table: str, match: str, fetch: int) -> list[tuple]:
    return store.execute(
        f"SELECT rowid, {_rank_sql(table)} AS r FROM {table} WHERE {table} MATCH ? ORDER BY r, rowid LIMIT ?",
        (match, fetch),
    )


def _allowed(store: Store, ids: list[int], condition: SqlCondition) -> set[int]:
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    rows = store.execute(
        f"SELECT c.id FROM chunks c {JOIN_DOCUMENTS} WHERE c.id IN ({marks}) AND {condition.sql}",
        (*ids, *condition.params),
    )
    return {r[0] for r in rows}


def _joined(store: Store, table: str, match: str, condition: SqlCondition, limit: int) -> list[Ranked]:
    rows = store.execute(
        f"SELECT f.rowid, {_rank_sql(table)} AS r"
        f" FROM {table} f JOIN chunks c ON c.id = f.rowid {JOIN_DOCUMENTS}"
        f" WHERE {table} MATCH ? AND {condition.sql} ORDER BY r, f.rowid LIMIT ?",
        (match, *condition.params, limit),
    )
    return [Ranked(int(cid), -float(score)) for cid, score in rows]


class TermStats:
    """How many chunks each query word occurs in, cached until the store changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version: object = None
        self._counts: dict[str, int] = {}
        self._total = 0

    def _check_version(self) -> None:
        version = self.store.version()
        if version != self._version:
            self._version = version
            self._counts.clear()
            self._total = self.store.scalar("SELECT count(*) FROM chunks") or 0

    def count(self, term: str) -> int:
        """Chunks the porter index finds term in (as a phrase when it is several tokens)."""
        self._check_version()
        if term not in self._counts:
            if len(self._counts) > 20_000:
                self._counts.clear()
            self._counts[term] = self._lookup(term)
        return self._counts[term]

    def _lookup(self, term: str) -> int:
        tokens = porter_tokens(term)
        if not tokens:
            return 0
        if len(tokens) == 1:
            # The vocabulary table knows each term's document count: far cheaper than
            # counting MATCH rows (0.5 ms against 10-30 ms for a common word at 100k).
            return self.store.scalar("SELECT doc FROM chunks_vocab WHERE term = ?", (tokens[0],)) or 0
        return self.store.scalar("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (fts_string(term),)) or 0

    def total(self) -> int:
        self._check_version()
        return self._total

    def without_common(self, terms: tuple[str, ...]) -> tuple[str, ...]:
        """Drop very common terms when at least one rarer term that occurs remains."""
        total = self.total()
        if len(terms) < 2 or total < ELIDE_FROM_CHUNKS:
            return terms
        counts = {t: self.count(t) for t in terms}
        common = {t for t, n in counts.items() if n > COMMON_SHARE * total}
        if not common or not any(n > 0 for t, n in counts.items() if t not in common):
            return terms
        return tuple(t for t in terms if t not in common)

    def known(self, term: str) -> bool:
        return self.count(term) > 0


def is_identifier_like(term: str) -> bool:
    """snake_case, dotted.names, paths, words with digits: where substrings matter.

    Hyphenated words are left to porter, which reads them as a phrase ("re-entry"
    finds "re entry"): in prose they are compound words, not identifiers."""
    return any(ch in term for ch in "_.:/") or any(ch.isdigit() for ch in term)


def trigram_terms(stats: TermStats, terms: tuple[str, ...]) -> list[str]:
    """Words the trigram list is for: identifiers, and words the porter index does
    not know as words (partial words, unusual spellings).  Plain known words are
    the porter list's job; sending them here too only doubles their evidence."""
    return [t for t in terms if len(t) >= MIN_TRIGRAM_CHARS and (is_identifier_like(t) or not stats.known(t))]
