"""The SQLite backend's word index members (api.Keywords, api.Terms, api.Chunks): FTS5.

Apart from sqlite_store.py so that what does not search (`kenning status`) never loads
the keyword indexes' modules (tests/test_command_imports.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.storage import api, lexical, stemming
from kenning.storage import chunks as chunks_repo
from kenning.storage.ftsquery import fts_string, match_any

if TYPE_CHECKING:
    from kenning.storage.sqlite_store import SqliteStore

# FTS5 gives a word found in over half the chunks an idf of 1e-6 (fts5_aux.c), so in a
# small index every bm25 score can be of that order: its ratios then mostly measure
# length, and a list whose best score is under this floor is read by rank
# (api.KeywordList.by_rank_only).
RANKS_ONLY_BELOW = 1e-4
# FTS5 scores every match whatever the LIMIT (bm25 reads each row's size: ~0.7 µs a row
# at a million chunks), so an unfiltered ranking is fetched FIRST_FETCH_FACTOR rows per
# row wanted, then checked against the filter, and fetched FETCH_FACTOR times deeper
# again when too few are allowed (in a repository most chunks can be tests, left out by
# default).  The first fetch was 8 rows a row when the lists were 30 deep; at 60 and
# more (search.engine.CANDIDATE_DEPTH) 3 kept the rows checked as few as then, but on
# the 100k store of Python's library (Lib/test is most of its code) 3 of 241
# bench_search queries (with `socket server timeout`) needed the second fetch, a second
# bm25 scan of every match (~10 ms in a fresh process); at 4 none of them does, with the
# same hits for all 241, and their mean time in-process was no higher (38.6 -> 38.3 ms;
# issue #27).  At a million chunks 4 left 33 of a hybrid search's 222 lists short, each
# scanned twice (the slowest lists), and 8 left 5 (issue #23, docs/architecture.md §10
# round 11); but at 100k, where 4 never fell short, 8 cost hybrid p95 ~5 ms (11%) in
# reading the extra rows.  So the first fetch starts at FIRST_FETCH_FACTOR and, once one
# falls short in this store, is DEEP_FIRST_FETCH_FACTOR for the rest of the store's
# life: a store whose filter hides that many top rows will do it again.  Its rows are
# checked CHECK_FACTOR rows a row wanted at a time, as the check (each row joined to its
# document) costs more than a row of the deeper scan and the first rows mostly suffice.
# Either way the result is exactly the top `limit` allowed chunks (only the time
# differs), without joining every match to its document first; a selective filter is
# joined into the query at once.
FETCH_FACTOR = 8
FIRST_FETCH_FACTOR = 4
DEEP_FIRST_FETCH_FACTOR = 8
CHECK_FACTOR = 4
MAX_FETCH = 5000


class SqliteChunks:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def rows(self, chunk_ids: Sequence[int]) -> dict[int, api.ChunkRow]:
        return chunks_repo.load_chunk_rows(self._store, list(chunk_ids))

    def mentioned_paths(self, chunk_ids: Sequence[int]) -> dict[int, list[str]]:
        return chunks_repo.mentioned_paths(self._store, list(chunk_ids))

    def count(self) -> int:
        return chunks_repo.count_chunks(self._store)

    def newest_documents(self, chunk_filter: ChunkFilter, limit: int) -> list[api.DatedChunk]:
        return chunks_repo.newest_documents(self._store, chunk_filter, limit)


def _match(query: api.KeywordQuery) -> str:
    return match_any(query.terms, query.phrases)


class SqliteKeywords:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.first_fetch_factor = FIRST_FETCH_FACTOR  # DEEP_FIRST_FETCH_FACTOR once a first fetch fell short

    def ranked(
        self,
        index: api.LexicalIndex,
        query: api.KeywordQuery,
        chunk_filter: ChunkFilter,
        limit: int,
        *,
        weights: tuple[float, float],
        selective: bool = False,
    ) -> api.KeywordList:
        if query.is_empty or limit <= 0:
            return api.KeywordList([])
        rows = self._rows(index, _match(query), match_any(query.also_scoring), chunk_filter, limit, weights, selective)
        ranked = [api.Ranked(int(r.chunk_id), -float(r.bm25)) for r in rows]  # bm25: smaller is better
        best = max((r.score for r in ranked), default=0.0)
        return api.KeywordList(ranked, by_rank_only=0.0 < best < RANKS_ONLY_BELOW)

    def _rows(
        self,
        index: api.LexicalIndex,
        match: str,
        also_scoring: str,
        chunk_filter: ChunkFilter,
        limit: int,
        weights: tuple[float, float],
        selective: bool,
    ) -> list[lexical.Bm25Row]:
        store, scoring = self._store, {"also_scoring": also_scoring}
        if selective:
            return lexical.ranked_filtered(store, index, match, weights, chunk_filter, limit, **scoring)
        fetch = limit * self.first_fetch_factor
        while fetch <= MAX_FETCH:
            rows = lexical.ranked(store, index, match, weights, fetch, **scoring)
            kept = self._first_allowed(rows, chunk_filter, limit)
            if len(kept) >= limit or len(rows) < fetch:
                return kept
            self.first_fetch_factor = DEEP_FIRST_FETCH_FACTOR
            fetch *= FETCH_FACTOR
        return lexical.ranked_filtered(store, index, match, weights, chunk_filter, limit, **scoring)

    def _first_allowed(
        self, rows: list[lexical.Bm25Row], chunk_filter: ChunkFilter, limit: int
    ) -> list[lexical.Bm25Row]:
        """The first `limit` of the rows the filter allows, in their order: the first
        CHECK_FACTOR rows a row wanted checked, the rest only when those are too few."""
        first = limit * CHECK_FACTOR
        kept: list[lexical.Bm25Row] = []
        for part in (rows[:first], rows[first:]):
            if part and len(kept) < limit:
                allowed = lexical.allowed(self._store, [r.chunk_id for r in part], chunk_filter, batch=MAX_FETCH)
                kept.extend(r for r in part if r.chunk_id in allowed)
        return kept[:limit]

    def count_total(
        self,
        queries: Mapping[api.LexicalIndex, api.KeywordQuery],
        also: Sequence[int],
        chunk_filter: ChunkFilter,
        cap: int,
    ) -> api.MatchCount:
        matches = {index: _match(q) for index, q in queries.items() if not q.is_empty}
        return lexical.count_matches(self._store, matches, list(also), chunk_filter, cap)


class SqliteTerms:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def vocabulary(self) -> dict[str, int]:
        return lexical.vocabulary(self._store)

    def counts(self, term: str) -> api.TermCounts:
        return lexical.term_counts(self._store, term)

    def counts_of(self, terms: Sequence[str]) -> dict[str, api.TermCounts]:
        return {t: lexical.term_counts(self._store, t) for t in dict.fromkeys(terms)}  # local reads

    def chunks_with(self, words: str) -> int:
        tokens = stemming.porter_tokens(words)
        if not tokens:
            return 0
        if len(tokens) == 1:  # the vocabulary table knows: 0.5 ms against 10-30 ms of MATCH rows at 100k
            return lexical.term_chunks(self._store, tokens[0])
        return lexical.count_matching(self._store, words)

    def count_each(self, words: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None) -> dict[str, int]:
        return {w: self.count_together([w], [], cap, chunk_filter) for w in dict.fromkeys(words)}  # local reads

    def count_together(
        self, all_of: Sequence[str], any_of: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None
    ) -> int:
        match = " AND ".join(fts_string(w) for w in all_of)
        if any_of:
            alternatives = " OR ".join(fts_string(w) for w in any_of)
            match = f"{match} AND ({alternatives})" if match else alternatives
        if not match:
            return 0
        return lexical.count_matching_expression(self._store, match, cap, chunk_filter)

    def texts_with(self, word: str, limit: int, chunk_filter: ChunkFilter | None = None) -> list[str]:
        return lexical.texts_with_term(self._store, word, limit, chunk_filter)
