"""The substring index (FTS5 trigram, detail=none) and its bm25 ranking.

detail=none keeps only which rows hold each trigram: 31 MB at 100k chunks where
detail=full (every position of every trigram) took 197 MB, most of the store
(docs/architecture.md §10).  Without positions FTS5 refuses phrase queries, so a
substring is found as the rows holding all of its trigrams, then verified against
the text (a row may hold the trigrams apart); and FTS5's own bm25 would re-read and
re-tokenize every matching row (0.2-0.3 s for a common identifier), so the verified
rows are scored here with the same formula from the occurrences counted in their
text, which also gives the phrase counts detail=full gave.

A two-character word of Chinese, Japanese or Korean holds no trigram: its candidate rows
come from the index of CJK character pairs (chunks_cjk, migration m012; core/cjk.py),
and are verified and scored the same way.

A substring found in more than SCORE_CAP rows (an identifier like `__init__` in a
large code base) is scored on SCORE_CAP of them, spread evenly over the store: the
list stays fast at a million chunks, and such a common substring weighs little in
the fusion anyway (its idf is small, and the word index searches the same word).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence

from kenning import TYPE_CHECKING
from kenning.core.cjk import is_cjk_pair
from kenning.core.records import Record
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.ftsquery import fts_string

if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # a contract for the type checker only, as storage.api's

TABLE = "chunks_tri"
PAIRS = "chunks_cjk"  # CJK character pairs: the two-character words trigrams cannot hold
GRAM = 3  # the trigram tokenizer's token: shorter strings match nothing, as in FTS5


def findable(term: str) -> bool:
    """Whether the substring index can look term up: three characters, or a CJK pair."""
    return len(term) >= GRAM or is_cjk_pair(term)


def _lookup(term: str) -> tuple[str, str]:
    """(the table that finds term's candidate rows, its match expression)."""
    if len(term) < GRAM:
        return PAIRS, fts_string(term)
    return TABLE, trigram_match(term)


SCORE_CAP = 500
MAX_GRAMS = 8  # trigrams intersected to find a substring's candidate rows
# FTS5's bm25 constants (fts5_aux.c), so the ranking is the one detail=full gave.
K1 = 1.2
B = 0.75
READ_BATCH = 500


class _Counted(Record, frozen=True):
    """One verified row: occurrences of each searched substring per column, and its length."""

    chunk_id: int
    title_counts: tuple[int, ...]
    text_counts: tuple[int, ...]
    tokens: int


def spread_grams(term: str) -> list[str]:
    """A few trigrams of term, spread over it, whose rows are a superset of the rows
    holding term, which verification narrows.  Trigrams side by side (not every
    overlapping one) and at most MAX_GRAMS of them: each is a list of rows to
    intersect, and at a million chunks a long identifier's 60 overlapping trigrams took
    50-100 ms where 8 take a few (docs/architecture.md §10); the rows they leave are as few."""
    low = term.lower()
    starts = list(range(0, len(low) - GRAM + 1, GRAM))
    if starts[-1] != len(low) - GRAM:
        starts.append(len(low) - GRAM)  # the tail, so every character is covered
    if len(starts) > MAX_GRAMS:
        step = (len(starts) - 1) / (MAX_GRAMS - 1)
        starts = [starts[round(i * step)] for i in range(MAX_GRAMS)]
    return list(dict.fromkeys(low[i : i + GRAM] for i in starts))


def trigram_match(term: str) -> str:
    """The FTS5 expression of the rows holding spread_grams(term)."""
    return " AND ".join(fts_string(g) for g in spread_grams(term))


def candidates(store: Store, term: str) -> list[int]:
    """Ids (ascending) of the rows holding every trigram of term (a CJK pair: holding the
    pair); none when term is too short."""
    if not findable(term):
        return []
    table, match = _lookup(term)
    return [r[0] for r in store.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid", (match,))]


def verified_rows_sql(term: str) -> tuple[str, tuple[str, ...]]:
    """(SQL selecting `id`, its parameters): the rows holding term, for counting them all
    in SQL.  SQLite's lower() folds ASCII only, so a non-ASCII capital may be missed."""
    if not findable(term):
        return "SELECT NULL AS id WHERE 0", ()
    needle = term.lower()
    table, match = _lookup(term)
    sql = (
        f"SELECT {table}.rowid AS id FROM {table} JOIN chunks_indexed ci ON ci.id = {table}.rowid"
        f" WHERE {table} MATCH ? AND (instr(lower(ci.title), ?) > 0 OR instr(lower(ci.text), ?) > 0)"
    )
    return sql, (match, needle, needle)


def spread(ids: Sequence[int], cap: int) -> list[int]:
    """At most cap of ids, evenly spaced over them (every part of the store keeps a share)."""
    if len(ids) <= cap:
        return list(ids)
    step = len(ids) / cap
    return [ids[int(i * step)] for i in range(cap)]


def _overlapping_count(haystack: str, needle: str) -> int:
    """Occurrences of needle, overlapping ones too (FTS5 counts a phrase at each position)."""
    count, at = 0, haystack.find(needle)
    while at >= 0:
        count += 1
        at = haystack.find(needle, at + 1)
    return count


def _counter(needle: str) -> Callable[[str], int]:
    """How to count needle in a text: str.count (one C call) unless two occurrences can
    overlap, which only a needle whose start repeats at its end allows ("aaa", "abab")."""
    if any(needle[:k] == needle[-k:] for k in range(1, len(needle))):
        return lambda haystack: _overlapping_count(haystack, needle)
    return lambda haystack: haystack.count(needle)


def _tokens(text: str) -> int:
    return max(len(text) - GRAM + 1, 0)


def _count(rows: Iterable[tuple[int, str, str]], needles: list[str]) -> list[_Counted]:
    """The rows holding at least one needle, with their counts (the indexed title and text)."""
    out = []
    counters = [_counter(n) for n in needles]
    for chunk_id, title, text in rows:
        low_title, low_text = title.lower(), text.lower()
        in_title = tuple(count(low_title) for count in counters)
        in_text = tuple(count(low_text) for count in counters)
        if any(in_title) or any(in_text):
            out.append(_Counted(chunk_id, in_title, in_text, _tokens(title) + _tokens(text)))
    return out


def _averages(store: Store) -> tuple[int, float]:
    """(rows, mean tokens a row) of the substring index, from its docsize table."""
    # The averages record (id 1 of the data table): varints of the row count and of
    # each column's token total (fts5_index.c); read here rather than summing every row.
    block = store.scalar(f"SELECT block FROM {TABLE}_data WHERE id = 1")
    values = _varints(block or b"")
    if len(values) >= 2 and values[0] > 0:
        return values[0], sum(values[1:]) / values[0]
    return 0, 0.0


def _varints(data: bytes) -> list[int]:
    """SQLite's big-endian varints (7 bits a byte, the 9th byte all 8)."""
    values, i = [], 0
    while i < len(data):
        value = 0
        for n in range(9):
            byte = data[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


def _idf(rows: int, hits: int) -> float:
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6  # as FTS5: a substring in most rows still counts a little


class SubstringRows(Protocol):
    """What the substring bm25 needs from a backend's substring index."""

    def candidates(self, term: str) -> list[int]:
        """Ids (ascending) of rows that may hold term (a superset: verified by counting)."""
        ...

    def texts(self, ids: list[int]) -> Iterable[tuple[int, str, str]]:
        """(id, indexed title, text) of the given rows."""
        ...

    def averages(self) -> tuple[int, float]:
        """(rows, mean trigram tokens a row) of the whole index."""
        ...


class _SqliteRows:
    def __init__(self, store: Store) -> None:
        self.store = store

    def candidates(self, term: str) -> list[int]:
        return candidates(self.store, term)

    def texts(self, ids: list[int]) -> Iterable[tuple[int, str, str]]:
        for part, marks in in_batches(ids, READ_BATCH):
            yield from self.store.execute(f"SELECT id, title, text FROM chunks_indexed WHERE id IN ({marks})", part)

    def averages(self) -> tuple[int, float]:
        return _averages(self.store)


def bm25_substrings(
    store: Store,
    terms: Sequence[str],
    weights: tuple[float, float],
    keep: Callable[[list[int]], Collection[int]] | None = None,
) -> dict[int, float]:
    """chunk id -> bm25 score (larger is better) of the rows holding any of terms.

    A term given twice counts twice (query-term frequency, as FTS5 sums over the
    query's phrases); `keep` (candidate ids -> those a filter allows) acts before the cap."""
    return score_substrings(_SqliteRows(store), terms, weights, keep)


def score_substrings(
    index: SubstringRows,
    terms: Sequence[str],
    weights: tuple[float, float],
    keep: Callable[[list[int]], Collection[int]] | None = None,
) -> dict[int, float]:
    """bm25_substrings over any backend's substring index (the same formula and caps)."""
    distinct = [t for t in dict.fromkeys(terms) if findable(t)]
    if not distinct:
        return {}
    repeats = [sum(1 for t in terms if t == d) for d in distinct]
    total_rows, mean_tokens = index.averages()
    found: dict[int, list[int]] = {}  # candidate id -> indexes of the terms whose trigrams it holds
    estimated_hits = []
    for number, term in enumerate(distinct):
        ids = index.candidates(term)
        estimated_hits.append(len(ids))
        for chunk_id in ids:
            found.setdefault(chunk_id, []).append(number)
    pool = sorted(found)
    if keep is not None:
        permitted = keep(pool)
        pool = [c for c in pool if c in permitted]
    scored = spread(pool, SCORE_CAP)
    counted = _count(index.texts(scored), [t.lower() for t in distinct])
    idf = [_idf(total_rows, hits) for hits in _hits(counted, found, scored, estimated_hits)]
    scores = {}
    for row in counted:
        norm = K1 * (1 - B + B * row.tokens / max(mean_tokens, 1.0))
        score = 0.0
        for number in range(len(distinct)):
            freq = weights[0] * row.title_counts[number] + weights[1] * row.text_counts[number]
            if freq:
                score += repeats[number] * idf[number] * freq * (K1 + 1) / (freq + norm)
        scores[row.chunk_id] = score
    return scores


def _hits(
    counted: list[_Counted], found: dict[int, list[int]], scored: list[int], candidate_hits: list[int]
) -> list[int]:
    """Rows of the whole index holding each term (bm25's document frequency, as FTS5
    counts it whatever the filter): the candidates holding its trigrams, times the
    share of the scored ones that really hold it (exact when every candidate was scored)."""
    hits = []
    for index, candidates_holding in enumerate(candidate_hits):
        sampled = sum(1 for c in scored if index in found[c])
        verified = sum(1 for r in counted if r.title_counts[index] or r.text_counts[index])
        hits.append(round(candidates_holding * verified / sampled) if sampled else candidates_holding)
    return hits
