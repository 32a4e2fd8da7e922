"""A query of filters only (`tag:meeting`, `path:adr after:2024-01`): the matching
documents, newest first, one hit per document (its first allowed chunk).

There are no words to rank by, so the date orders them.  The explain record says so:
one list named "date" whose rank is the document's place by date, fused exactly as a
one-list RRF would be (weight 1), normalised so the newest scores 1.  Signals are not
applied: they would reorder what the user asked to see by date.
"""

from __future__ import annotations

from kenning.core.types import Breakdown, ListScore
from kenning.search.filters import JOIN_DOCUMENTS, SqlCondition
from kenning.search.fusion import RRF_K
from kenning.storage.connection import Store

DATE_LIST = "date"
LAYER = "filter"
FILTER_ONLY_ORDER = "Filters only, no words to rank by: matching documents, newest first."


def newest_documents(store: Store, condition: SqlCondition, limit: int) -> list[tuple[int, float]]:
    """(chunk id, document date) of the newest matching documents' first chunks."""
    # SQLite takes a bare column from the row min() picked: each document's first chunk.
    rows = store.execute(
        "SELECT c.id, min(c.ord), coalesce(d.updated_at, d.created_at, d.mtime) AS t"
        f" FROM chunks c {JOIN_DOCUMENTS} WHERE {condition.sql}"
        " GROUP BY c.document_id ORDER BY t DESC, c.document_id LIMIT ?",
        (*condition.params, limit),
    )
    return [(int(r[0]), float(r[2] or 0.0)) for r in rows]


def date_breakdown(rank: int, date: float) -> Breakdown:
    contribution = 1.0 / (RRF_K + rank)
    normaliser = 1.0 / (RRF_K + 1)
    base = min(1.0, contribution / normaliser)
    return Breakdown(
        lists={DATE_LIST: ListScore(rank=rank, score=date, weight=1.0, contribution=contribution)},
        fused=contribution,
        normaliser=normaliser,
        base=base,
        final=base,
        layer=LAYER,
        fusion="rrf",
    )
