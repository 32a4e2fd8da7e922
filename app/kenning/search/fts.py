"""The two lexical retrievers over FTS5: porter (words, stems) and trigram (substrings).

User words only ever enter a MATCH expression as double-quoted FTS5 strings, so
AND/OR/NEAR, parentheses, stars and carets typed by the user are plain text.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.search.filters import JOIN_DOCUMENTS
from kenning.search.query import fts_string
from kenning.storage.connection import Store

TITLE_WEIGHT = 3.0  # bm25 column weight of the heading path / file+symbol title
TEXT_WEIGHT = 1.0
MIN_TRIGRAM_CHARS = 3


@dataclass(frozen=True)
class Ranked:
    chunk_id: int
    score: float  # larger is better (bm25 negated)


def match_any(terms, phrases=()) -> str:
    """OR over terms and phrases; a phrase is one quoted string of its words."""
    items = [fts_string(t) for t in terms] + [fts_string(" ".join(p)) for p in phrases]
    return " OR ".join(dict.fromkeys(items))


def match_all(terms) -> str:
    return " AND ".join(fts_string(t) for t in terms)


def search_table(
    store: Store,
    table: str,
    match: str,
    condition_sql: str,
    condition_params: tuple,
    limit: int,
) -> list[Ranked]:
    sql = (
        f"SELECT f.rowid, bm25({table}, {TITLE_WEIGHT}, {TEXT_WEIGHT}) AS rank"
        f" FROM {table} f JOIN chunks c ON c.id = f.rowid {JOIN_DOCUMENTS}"
        f" WHERE {table} MATCH ? AND {condition_sql}"
        " ORDER BY rank, f.rowid LIMIT ?"
    )
    rows = store.execute(sql, (match, *condition_params, limit))
    return [Ranked(int(cid), -float(score)) for cid, score in rows]
