"""Keyword ranking in the team store: bm25 computed in SQL from statistics kept in step.

`ts_rank` is not bm25: it has no inverse document frequency and another length
normalisation, and the fusion reads each list's scores (their spread against the
list's best), so the team store ranks with FTS5's own bm25, term for term:

    score = Σ_i idf_i · f_i · (k1 + 1) / (f_i + k1 · (1 - b + b · len / avglen))
    f_i   = title_weight · occurrences in the title + text_weight · occurrences in the text
    idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)), at least 1e-6

N, avglen and n_i come from `corpus` and `terms` (schema.py: triggers keep them exact
under every write); occurrences from the row's `tf` (words.py), each term's read once a
row, its length from `word_count`.  A query item of several tokens (a hyphenated word, a quoted phrase) is
a phrase: its rows are found by `<->` in the tsvector, and its occurrences counted by
the tokenizer in Python over those rows (phrases are rare and narrow).  The GIN index
on `words` finds the candidate rows; the filter is part of the same query.

Items are tuples of tokens as the backend's tokenizer gives them; a repeated item
counts as often as it is repeated (query-term frequency), as in FTS5.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.storage.postgres.connection import PgStore
from kenning.storage.postgres.filtering import JOIN_DOCUMENTS, SqlCondition, filter_condition
from kenning.storage.postgres.schema import K1, TF_SHIFT, B
from kenning.storage.postgres.words import GRAM, any_query, indexed_title, phrase_query

IDF_FLOOR = 1e-6
PHRASE_SCORE_CAP = 2000  # rows of a phrase item scored exactly; beyond, the best by the other words
# A word in more chunks than this offers its keyword list only its PRUNE_DEPTH best postings
# the filter allows (schema.py m007: impact order), and the chunks so found are scored
# exactly; at 1,016,585 chunks 1,500 found 0.967 of the exact top 100 (1,000: 0.930,
# 2,000: 0.985) and cut a list's p95 916 -> 487 ms (docs/architecture.md §10).
PRUNE_DEPTH = 1500
Item = tuple[str, ...]


class Scored(Record, frozen=True):
    chunk_id: int
    score: float  # larger is better


def _idf(rows: int, hits: int) -> float:
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows else 0.0
    return value if value > 0 else IDF_FLOOR


class _Stats(Record, frozen=True):
    rows: int
    mean_length: float
    hits: dict[Item, int]
    # The change token the statistics were read at when they were held from an earlier
    # read: the keyword statement then checks it still reads so (None: read just now).
    held_at: int | None = None


class HeldCounts(Record):
    """The corpus totals and words' chunk counts as one statement read them, at one change
    token (PgStore.held_counts).  The words step reads the counts of the feedback words
    before their list asks for them again: held, that list's statistics cost no round
    trip (3.8 ms median inside a search at 1M chunks, beside the walk's thread)."""

    generation: int
    rows: int
    words: int
    chunks: dict[str, int]  # every word asked at this token; 0 where no chunk holds it

    @property
    def mean_length(self) -> float:
        return self.words / self.rows if self.rows else 0.0


MAX_HELD_WORDS = 50_000


def _read_counts(store: PgStore, terms: list[str]) -> tuple[HeldCounts, dict[str, tuple[int, int]]]:
    """(what is held now, (chunks, occurrences) of each term that occurs): the counts read
    with the corpus totals and the change token in one statement, and held for the
    keyword statements (HeldCounts)."""
    read = store.execute(
        "SELECT g.generation, c.chunks, c.words, t.term, t.chunks, t.occurrences FROM store_state g"
        " JOIN corpus c ON c.id = 1 LEFT JOIN terms t ON t.term = ANY(%s) WHERE g.id = 1",
        (terms,),
    )
    generation, rows, words = (int(v) for v in read[0][:3])
    found = {str(r[3]): (int(r[4]), int(r[5])) for r in read if r[3] is not None}
    held = store.held_counts
    if held is None or held.generation != generation or len(held.chunks) > MAX_HELD_WORDS:
        held = HeldCounts(generation=generation, rows=rows, words=words, chunks={})
        store.held_counts = held
    held.chunks.update({t: found.get(t, (0, 0))[0] for t in terms})
    return held, found


def _stats(store: PgStore, items: Sequence[Item], use_held: bool = True) -> _Stats:
    singles = sorted({i[0] for i in items if len(i) == 1})
    phrases = {i for i in items if len(i) > 1}
    held = store.held_counts
    reused = use_held and held is not None and not phrases and all(t in held.chunks for t in singles)
    if not reused:
        held = _read_counts(store, singles)[0]  # the totals and the words' counts in one round trip
    hits: dict[Item, int] = {(t,): held.chunks[t] for t in singles}
    for phrase in phrases:
        hits[phrase] = int(
            store.scalar("SELECT count(*) FROM chunks WHERE words @@ %s::tsquery", (phrase_query(phrase),))
        )
    return _Stats(held.rows, held.mean_length, hits, held_at=held.generation if reused else None)


def _still(stats: _Stats) -> tuple[str, tuple[object, ...]]:
    """The keyword statement's check that held statistics are still the store's (a one-time
    filter: a write since makes it find nothing, and the list is ranked again)."""
    if stats.held_at is None:
        return "", ()
    return " AND EXISTS (SELECT 1 FROM store_state WHERE id = 1 AND generation = %s)", (stats.held_at,)


def _weights(items: Sequence[Item]) -> dict[Item, int]:
    """Each distinct item with how often the query says it."""
    out: dict[Item, int] = {}
    for item in items:
        if item:
            out[item] = out.get(item, 0) + 1
    return out


def ranked(
    store: PgStore,
    items: Sequence[Item],
    weights: tuple[float, float],
    limit: int,
    chunk_filter: ChunkFilter | None = None,
    *,
    also_scoring: Sequence[Item] = (),
    use_held: bool = True,
) -> list[Scored]:
    """The best `limit` chunks (the filter allows) holding any item, best first, ties by id.

    also_scoring: items that select no chunk but add their bm25 to the chunks `items`
    find (the common words a large index leaves out of the selection).  use_held: the
    words' counts may be the ones held from an earlier read (HeldCounts), checked inside
    the statement; False reads them afresh."""
    selecting = _weights(items)
    if not selecting:
        return []
    every = _weights([*items, *also_scoring])
    stats = _stats(store, list(every), use_held)
    idf = {item: _idf(stats.rows, stats.hits.get(item, 0)) for item in every}
    singles: dict[Item, int] = {i: n for i, n in every.items() if len(i) == 1}
    phrases = {i: n for i, n in every.items() if len(i) > 1}
    score = _single_score_sql(singles, idf, weights, stats.mean_length)
    expression, expr_params = score.select, score.select_params
    condition = filter_condition(chunk_filter) if chunk_filter is not None else None
    join = (JOIN_DOCUMENTS if condition else "") + score.lateral
    where = f" AND {condition.sql}" if condition else ""
    filter_params = condition.params if condition else ()
    select_query = any_query(selecting)
    still, still_params = _still(stats)
    if not phrases and _prunable(chunk_filter) and any(stats.hits.get(i, 0) > PRUNE_DEPTH for i in selecting):
        found = _best_postings(sorted(i[0] for i in selecting), condition)
        # As an array, the candidates are read by a bitmap scan in the table's order; as
        # `IN (subquery)` each was an index probe in the order found (a list's statement
        # 19% less time at 102,665 chunks, the same rows).
        rows = store.execute(
            f"SELECT c.id, {expression} AS score FROM chunks c {score.lateral}"
            f" WHERE c.id = ANY(ARRAY({found.sql})){still} ORDER BY score DESC, c.id LIMIT %s",
            (*expr_params, *score.lateral_params, *found.params, *still_params, limit),
        )
    elif not phrases:
        rows = store.execute(
            f"SELECT c.id, {expression} AS score FROM chunks c {join}"
            f" WHERE c.words @@ %s::tsquery{where}{still} ORDER BY score DESC, c.id LIMIT %s",
            (*expr_params, *score.lateral_params, select_query, *filter_params, *still_params, limit),
        )
    if not phrases:
        if not rows and stats.held_at is not None:  # nothing, or the store changed: read the counts afresh
            return ranked(store, items, weights, limit, chunk_filter, also_scoring=also_scoring, use_held=False)
        return [Scored(int(a), float(b)) for a, b in rows]
    phrase_query_all = any_query(phrases)
    # Rows holding no phrase: the single words' score is their whole score.
    plain = store.execute(
        f"SELECT c.id, {expression} AS score FROM chunks c {join}"
        f" WHERE c.words @@ %s::tsquery AND NOT (c.words @@ %s::tsquery){where} ORDER BY score DESC, c.id LIMIT %s",
        (*expr_params, *score.lateral_params, select_query, phrase_query_all, *filter_params, limit),
    )
    # Rows holding a phrase: phrase occurrences counted by the tokenizer.
    with_phrase = store.execute(
        f"SELECT c.id, {expression} AS score, c.title, c.doc_words, c.text FROM chunks c {join}"
        f" WHERE c.words @@ %s::tsquery AND c.words @@ %s::tsquery{where} ORDER BY score DESC, c.id LIMIT %s",
        (*expr_params, *score.lateral_params, select_query, phrase_query_all, *filter_params, PHRASE_SCORE_CAP),
    )
    scores = {int(r[0]): float(r[1]) for r in plain}
    for chunk_id, single_score, title, doc_words, text in with_phrase:
        scores[int(chunk_id)] = float(single_score) + _phrase_score(
            store, phrases, idf, weights, stats.mean_length, indexed_title(title, doc_words), text
        )
    best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [Scored(c, s) for c, s in best]


def _prunable(chunk_filter: ChunkFilter | None) -> bool:
    """Whether the filter is one of documents only (postings know a chunk's document, not
    its words: a filter on the chunk's own words or phrases keeps the exact path)."""
    return chunk_filter is None or not (chunk_filter.phrases or chunk_filter.excluded)


def _best_postings(terms: list[str], condition: SqlCondition | None) -> SqlCondition:
    """The chunks of each term's PRUNE_DEPTH best postings whose documents the filter
    allows (a subquery of chunk ids).  The documents the filter leaves out are worked out
    once and passed over while each term's postings are read in impact order (a hashed
    NOT IN: as a join, the planner read and sorted every posting of a common word)."""
    allowed = ""
    params: tuple[object, ...] = ()
    if condition is not None:
        allowed = (
            " AND p.document NOT IN (SELECT d.id FROM documents d JOIN sources s ON s.id = d.source_id"
            f" WHERE NOT coalesce(({condition.sql}), false))"
        )
        params = condition.params
    return SqlCondition(
        "SELECT best.chunk FROM unnest(%s::text[]) AS q(term) CROSS JOIN LATERAL"
        f" (SELECT p.chunk FROM postings p WHERE p.term = q.term{allowed}"
        " ORDER BY p.impact DESC, p.chunk LIMIT %s) best",
        (terms, *params, PRUNE_DEPTH),
    )


class _ScoreSql(Record, frozen=True):
    """The bm25 sum over the one-token items: `select` (an expression over f.v, the row's
    weighted term frequencies, and f.norm, its length normalisation) and `lateral`
    (FROM's part computing them once a row)."""

    select: str
    select_params: tuple[object, ...]
    lateral: str
    lateral_params: tuple[object, ...]


def _single_score_sql(
    singles: dict[Item, int], idf: dict[Item, float], weights: tuple[float, float], mean_length: float
) -> _ScoreSql:
    if not singles:
        return _ScoreSql("0.0::float8", (), "", ())
    mask = (1 << TF_SHIFT) - 1
    parts: list[str] = []
    params: list[object] = []
    reads: list[str] = []
    read_params: list[object] = []
    freqs: list[str] = []
    freq_params: list[object] = []
    for number, ((term,), repeats) in enumerate(singles.items(), 1):
        reads.append("coalesce((c.tf ->> %s)::bigint, (c.tf_big ->> %s)::bigint, 0)")
        read_params.extend((term, term))
        freqs.append(f"%s::float8 * (k.v[{number}] >> {TF_SHIFT}) + %s::float8 * (k.v[{number}] & {mask})")
        freq_params.extend(weights)
        parts.append(f"(%s::float8 * f.v[{number}] * {K1 + 1} / (f.v[{number}] + f.norm))")
        params.append(repeats * idf[(term,)])
    # In float8 throughout: the same values as numeric's exact 0.75 * length cast after,
    # without a numeric product per term and row.
    norm = f"{K1}::float8 * ({1 - B}::float8 + {B}::float8 * c.word_count / %s::float8)"
    # OFFSET 0 keeps each subquery a subquery: flattened, every k.v[i] of the sum would
    # become the whole ARRAY[...] again (56 array builds a row for 14 words: 366 ms
    # where 23 ms read each count once, CISI).  Each frequency and the row's
    # normalisation are computed once a row too, not once in the numerator and once in
    # the denominator of each term (a list's statements 9.2 -> 6.9 s over the 163 lists
    # of 120 hybrid searches at 1,016,585 chunks, the same rows and scores).
    lateral = (
        " CROSS JOIN LATERAL (SELECT ARRAY[" + ", ".join(reads) + "] AS v OFFSET 0) k"
        " CROSS JOIN LATERAL (SELECT ARRAY[" + ", ".join(freqs) + "] AS v, " + norm + " AS norm OFFSET 0) f"
    )
    return _ScoreSql(
        "(" + " + ".join(parts) + ")",
        tuple(params),
        lateral,
        (*read_params, *freq_params, max(mean_length, 1e-9)),
    )


def _count_phrase(tokens: Sequence[str], phrase: Item) -> int:
    n = len(phrase)
    return sum(1 for i in range(len(tokens) - n + 1) if tuple(tokens[i : i + n]) == phrase)


def _phrase_score(
    store: PgStore,
    phrases: dict[Item, int],
    idf: dict[Item, float],
    weights: tuple[float, float],
    mean_length: float,
    title: str,
    text: str,
) -> float:
    title_tokens, text_tokens = store.words.tokenize(title), store.words.tokenize(text)
    norm = K1 * (1 - B + B * (len(title_tokens) + len(text_tokens)) / max(mean_length, 1e-9))
    score = 0.0
    for phrase, repeats in phrases.items():
        freq = weights[0] * _count_phrase(title_tokens, phrase) + weights[1] * _count_phrase(text_tokens, phrase)
        if freq:
            score += repeats * idf[phrase] * freq * (K1 + 1) / (freq + norm)
    return score


def count_matching(store: PgStore, items: Sequence[Item], cap: int, chunk_filter: ChunkFilter | None = None) -> int:
    """Chunks (at most cap) holding any item, among those the filter allows when one is given."""
    query = any_query(items)
    return count_query(store, query, cap, chunk_filter) if query else 0


def term_chunks(store: PgStore, term: str) -> int:
    return int(store.scalar("SELECT chunks FROM terms WHERE term = %s", (term,)) or 0)


def term_counts(store: PgStore, term: str) -> tuple[int, int]:
    """(chunks holding the term, its occurrences over the whole index)."""
    return terms_counts(store, [term]).get(term, (0, 0))


def terms_counts(store: PgStore, terms: list[str]) -> dict[str, tuple[int, int]]:
    """(chunks holding the term, its occurrences over the whole index) of each term that
    occurs, in one statement (held for the keyword statements: HeldCounts)."""
    if not terms:
        return {}
    return _read_counts(store, terms)[1]


def vocabulary(store: PgStore) -> dict[str, int]:
    return {str(t): int(n) for t, n in store.execute("SELECT term, chunks FROM terms")}


def texts_with_term(store: PgStore, term: Item, limit: int, chunk_filter: ChunkFilter | None = None) -> list[str]:
    condition = filter_condition(chunk_filter) if chunk_filter is not None else None
    join = JOIN_DOCUMENTS if condition else ""
    where = f" AND {condition.sql}" if condition else ""
    rows = store.execute(
        f"SELECT c.text FROM chunks c {join} WHERE c.words @@ %s::tsquery{where} LIMIT %s",
        (phrase_query(term), *(condition.params if condition else ()), limit),
    )
    return [str(r[0]) for r in rows]


class SubstringIndex:
    """The substring index as storage.substrings.score_substrings reads it.

    Without pg_trgm: the rows whose `grams` hold every trigram of a few spread over
    the term (GIN on text[]), or a two-character CJK word itself (words.row_grams);
    verification counts the real occurrences."""

    def __init__(self, store: PgStore) -> None:
        self.store = store

    def candidates(self, term: str) -> list[int]:
        from kenning.storage.substrings import findable, spread_grams

        if not findable(term):
            return []
        grams = spread_grams(term) if len(term) >= GRAM else [term.lower()]
        rows = self.store.execute("SELECT id FROM chunks WHERE grams @> %s::text[] ORDER BY id", (grams,))
        return [int(r[0]) for r in rows]

    def texts(self, ids: list[int]) -> Iterable[tuple[int, str, str]]:
        rows = self.store.execute("SELECT id, title, doc_words, text FROM chunks WHERE id = ANY(%s)", (list(ids),))
        return [(int(i), indexed_title(t, w), x) for i, t, w, x in rows]

    def averages(self) -> tuple[int, float]:
        rows, grams = self.store.execute("SELECT chunks, grams FROM corpus WHERE id = 1")[0]
        return (int(rows), int(grams) / int(rows)) if rows else (0, 0.0)


def ranked_substrings(
    store: PgStore,
    terms: Sequence[str],
    weights: tuple[float, float],
    limit: int,
    keep: Callable[[list[int]], Collection[int]] | None = None,
) -> list[Scored]:
    from kenning.storage.substrings import score_substrings

    scores = score_substrings(SubstringIndex(store), terms, weights, keep)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [Scored(c, s) for c, s in best]


def count_query(store: PgStore, tsquery: str, cap: int, chunk_filter: ChunkFilter | None = None) -> int:
    """Chunks (at most cap) a tsquery literal built by words.py finds, among those the filter allows."""
    return count_queries(store, [tsquery], cap, chunk_filter)[0]


def count_items(store: PgStore, items: list[Item], cap: int, chunk_filter: ChunkFilter | None = None) -> list[int]:
    """Chunks (at most cap) holding each item (a phrase when it is several tokens), among
    those the filter allows when one is given, in one statement.

    A one-token item under a filter of documents only is counted from its postings (m007:
    one a chunk holding the term, the term's word index row for row), the filter joined
    by each posting's document: the statement cannot become a scan of every chunk.  On
    chunks, a count capped at 1 (the typo check's "is it anywhere I may look") was planned
    as a sequential scan stopping at the first row the word's GIN entry would have given:
    a word whose chunks sit at the end of the table read all the others (250-430 ms at
    102,665 chunks for `s3`, `iam`; docs/architecture.md §10)."""
    if not items:
        return []
    condition = filter_condition(chunk_filter) if chunk_filter is not None else None
    filter_params = condition.params if condition else ()
    by_postings = _prunable(chunk_filter)
    parts: list[str] = []
    params: list[object] = []
    for item in items:
        if len(item) == 1 and by_postings:
            join = " JOIN documents d ON d.id = p.document JOIN sources s ON s.id = d.source_id" if condition else ""
            where = f" AND {condition.sql}" if condition else ""
            parts.append(f"(SELECT count(*) FROM (SELECT 1 FROM postings p{join} WHERE p.term = %s{where} LIMIT %s) f)")
            params.extend((item[0], *filter_params, cap))
        else:
            join = JOIN_DOCUMENTS if condition else ""
            where = f" AND {condition.sql}" if condition else ""
            parts.append(
                f"(SELECT count(*) FROM (SELECT 1 FROM chunks c {join} WHERE c.words @@ %s::tsquery{where} LIMIT %s) f)"
            )
            params.extend((phrase_query(item), *filter_params, cap))
    row = store.execute("SELECT " + ", ".join(parts), params)[0]
    return [int(n or 0) for n in row]


def count_queries(store: PgStore, tsqueries: list[str], cap: int, chunk_filter: ChunkFilter | None = None) -> list[int]:
    """count_query() of each tsquery literal, in one statement."""
    if not tsqueries:
        return []
    condition = filter_condition(chunk_filter) if chunk_filter is not None else None
    join = JOIN_DOCUMENTS if condition else ""
    where = f" AND {condition.sql}" if condition else ""
    one = f"(SELECT count(*) FROM (SELECT 1 FROM chunks c {join} WHERE c.words @@ %s::tsquery{where} LIMIT %s) found)"
    params = [p for q in tsqueries for p in (q, *(condition.params if condition else ()), cap)]
    row = store.execute("SELECT " + ", ".join([one] * len(tsqueries)), params)[0]
    return [int(n or 0) for n in row]
