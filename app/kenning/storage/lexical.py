"""The word and substring indexes (FTS5 porter and trigram tables) and their vocabulary.

Search names an index by the list it feeds ("porter": stemmed words, "trigram":
substrings) and passes a match expression built by storage.ftsquery; ranking is bm25
with the column weights search chooses (title, text).  Scores are returned as SQLite
gives them: smaller is better.  The substring index keeps no positions
(detail=none), so it is searched and ranked by storage.substrings with the same bm25.
"""

from __future__ import annotations

import json

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.storage.api import MatchCount, TermCounts
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.filtering import JOIN_DOCUMENTS, filter_condition
from kenning.storage.ftsquery import fts_string, strings_of

if TYPE_CHECKING:
    from kenning.storage.api import LexicalIndex
_TABLES: dict[LexicalIndex, str] = {"porter": "chunks_fts", "trigram": "chunks_tri"}


class Bm25Row(Record, frozen=True):
    """A chunk and its bm25 score in one keyword index."""

    chunk_id: int
    bm25: float  # smaller is better


def _rank_sql(table: str, weights: tuple[float, float]) -> str:
    return f"bm25({table}, {float(weights[0])}, {float(weights[1])})"


def ranked(
    store: Store,
    index: LexicalIndex,
    match: str,
    weights: tuple[float, float],
    limit: int,
    *,
    also_scoring: str = "",
) -> list[Bm25Row]:
    """The best `limit` matches of the whole index, best first (ties by chunk id); no filter.

    also_scoring: words (an OR expression) that select no chunk but add their bm25 to the
    chunks `match` finds, as if the query had been `match OR also_scoring` over those
    chunks only (see _with_words_that_only_score)."""
    if index == "trigram":
        from kenning.storage import substrings  # the substring list alone (identifiers, unknown words)

        return _substring_rows(substrings.bm25_substrings(store, strings_of(match), weights), limit)
    table = _TABLES[index]
    sql = (
        f"SELECT rowid AS chunk_id, {_rank_sql(table, weights)} AS bm25 FROM {table}"
        f" WHERE {table} MATCH ? ORDER BY bm25, rowid LIMIT ?"
    )
    return _fetch_ranked(store, sql, match, (), limit, also_scoring)


def ranked_filtered(
    store: Store,
    index: LexicalIndex,
    match: str,
    weights: tuple[float, float],
    chunk_filter: ChunkFilter,
    limit: int,
    *,
    also_scoring: str = "",
) -> list[Bm25Row]:
    """The best `limit` matches among the chunks the filter allows, best first (also_scoring: see ranked)."""
    if index == "trigram":
        from kenning.storage import substrings

        scores = substrings.bm25_substrings(
            store, strings_of(match), weights, keep=lambda ids: allowed(store, ids, chunk_filter)
        )
        return _substring_rows(scores, limit)
    table = _TABLES[index]
    condition = filter_condition(chunk_filter)
    sql = (
        f"SELECT f.rowid AS chunk_id, {_rank_sql(table, weights)} AS bm25"
        f" FROM {table} f JOIN chunks c ON c.id = f.rowid {JOIN_DOCUMENTS}"
        f" WHERE {table} MATCH ? AND {condition.sql} ORDER BY bm25, f.rowid LIMIT ?"
    )
    return _fetch_ranked(store, sql, match, condition.params, limit, also_scoring)


def _fetch_ranked(
    store: Store, sql: str, match: str, params: tuple[object, ...], limit: int, also_scoring: str
) -> list[Bm25Row]:
    """Runs a ranking query (`sql` takes the match, params, then the limit), with the
    words that only score added when there are any."""
    rows = store.fetch(Bm25Row, sql, (match, *params, limit))
    if not also_scoring:
        return rows
    both = store.fetch(Bm25Row, sql, (f"({match}) AND ({also_scoring})", *params, limit))
    return _with_words_that_only_score(rows, both, limit)


def _with_words_that_only_score(rows: list[Bm25Row], both: list[Bm25Row], limit: int) -> list[Bm25Row]:
    """The best `limit` of the chunks `match` finds, scored with the other words too.

    FTS5's bm25 is a sum over the query's phrases, each with its idf over the whole
    index, so a chunk's score under `(match) AND (others)` is exactly its score under
    `match OR others`.  `both` holds the best `limit` chunks that have words of each;
    `rows` the best `limit` by `match` alone, exact for a chunk with none of the others.
    A chunk of `rows` that has some of them but is not among `both` scores below each of
    `both` (it would be there otherwise), so with its lower score it stays below them too:
    the best `limit` of the two lists together are exactly the best `limit` chunks."""
    scores = {r.chunk_id: r.bm25 for r in rows}
    scores.update((r.chunk_id, r.bm25) for r in both)
    best = sorted(scores.items(), key=lambda item: (item[1], item[0]))[:limit]
    return [Bm25Row(chunk_id, bm25) for chunk_id, bm25 in best]


def _substring_rows(scores: dict[int, float], limit: int) -> list[Bm25Row]:
    """As FTS5 gives bm25: smaller is better, ties by chunk id."""
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [Bm25Row(chunk_id, -score) for chunk_id, score in best]


def allowed(store: Store, ids: list[int], chunk_filter: ChunkFilter, batch: int = 5000) -> set[int]:
    """Those of the given chunks the filter allows."""
    condition = filter_condition(chunk_filter)
    out: set[int] = set()
    for part, marks in in_batches(ids, batch):
        rows = store.execute(
            f"SELECT c.id FROM chunks c {JOIN_DOCUMENTS} WHERE c.id IN ({marks}) AND {condition.sql}",
            (*part, *condition.params),
        )
        out.update(r[0] for r in rows)
    return out


def count_matching(store: Store, words: str) -> int:
    """Chunks the word index finds words in (as a phrase when they are several tokens)."""
    return store.scalar("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (fts_string(words),)) or 0


def count_matching_expression(store: Store, match: str, cap: int, chunk_filter: ChunkFilter | None = None) -> int:
    """Chunks (at most cap) an FTS5 expression built from quoted strings finds, among
    those the filter allows when one is given."""
    if chunk_filter is None:
        return (
            store.scalar(
                "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)", (match, cap)
            )
            or 0
        )
    condition = filter_condition(chunk_filter)
    return (
        store.scalar(
            "SELECT count(*) FROM (SELECT 1 FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
            f" {JOIN_DOCUMENTS} WHERE chunks_fts MATCH ? AND {condition.sql} LIMIT ?)",
            (match, *condition.params, cap),
        )
        or 0
    )


def term_counts(store: Store, term: str) -> TermCounts:
    """How often an indexed term (a porter stem, as the index stores it) occurs."""
    rows = store.fetch(TermCounts, "SELECT doc AS chunks, cnt AS occurrences FROM chunks_vocab WHERE term = ?", (term,))
    return rows[0] if rows else TermCounts(0, 0)


def term_chunks(store: Store, term: str) -> int:
    """Chunks holding an indexed term: the vocabulary knows it, far cheaper than
    counting MATCH rows (0.5 ms against 10-30 ms for a common word at 100k)."""
    return store.scalar("SELECT doc FROM chunks_vocab WHERE term = ?", (term,)) or 0


def vocabulary(store: Store) -> dict[str, int]:
    """Every indexed term → the chunks holding it."""
    out: dict[str, int] = {}
    for term, doc in store.execute("SELECT term, doc FROM chunks_vocab"):
        out[term] = out.get(term, 0) + doc
    return out


def texts_with_term(store: Store, term: str, limit: int, chunk_filter: ChunkFilter | None = None) -> list[str]:
    """The texts of up to `limit` chunks the word index finds term in (that the filter allows)."""
    condition = filter_condition(chunk_filter) if chunk_filter is not None else None
    rows = store.execute(
        "SELECT c.text FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
        + (
            f" {JOIN_DOCUMENTS} WHERE chunks_fts MATCH ? AND {condition.sql}"
            if condition
            else " WHERE chunks_fts MATCH ?"
        )
        + " LIMIT ?",
        (fts_string(term), *(condition.params if condition else ()), limit),
    )
    return [r[0] for r in rows]


def count_matches(
    store: Store, matches: dict[LexicalIndex, str], also: list[int], chunk_filter: ChunkFilter, cap: int
) -> MatchCount:
    """Chunks and files (documents) the filter allows among every chunk an index finds its
    expression in, plus the `also` chunks (found another way, e.g. by meaning), counted at
    most to cap (+1, to know there are more)."""
    condition = filter_condition(chunk_filter)
    found: list[str] = []
    params: list[str] = []
    for index, match in matches.items():
        if index == "trigram":  # no positions: each substring's rows, verified (storage.substrings)
            from kenning.storage import substrings

            for term in strings_of(match):
                sql, term_params = substrings.verified_rows_sql(term)
                found.append(sql)
                params.extend(term_params)
        else:
            found.append(f"SELECT rowid AS id FROM {_TABLES[index]} WHERE {_TABLES[index]} MATCH ?")
            params.append(match)
    found.append("SELECT value AS id FROM json_each(?)")
    rows = store.execute(
        "WITH found(id) AS (" + " UNION ".join(found) + "),"
        f" allowed AS (SELECT c.document_id FROM found JOIN chunks c ON c.id = found.id {JOIN_DOCUMENTS}"
        f"   WHERE {condition.sql} LIMIT ?)"
        " SELECT count(*), count(DISTINCT document_id) FROM allowed",
        (*params, json.dumps(also), *condition.params, cap + 1),
    )
    chunks, files = (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)
    return MatchCount(min(chunks, cap), files, chunks > cap)
