"""A query of filters only (`tag:meeting`, `path:adr after:2024-01`): the matching
documents, newest first, one hit per document (its first allowed chunk).

There are no words to rank by, so the date orders them.  The explain record says so:
one list named "date" whose rank is the document's place by date, fused exactly as a
one-list RRF would be (weight 1), normalised so the newest scores 1.  Signals are not
applied: they would reorder what the user asked to see by date.
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.types import Breakdown, ListScore
from kenning.search.fusion import RRF_K
from kenning.storage.api import Store

if TYPE_CHECKING:
    from kenning.core.types import Layer

DATE_LIST = "date"
LAYER: Layer = "filter"
FILTER_ONLY_ORDER = "Filters only, no words to rank by: matching documents, newest first."


def newest_documents(store: Store, condition: ChunkFilter, limit: int) -> list[tuple[int, float]]:
    """(chunk id, document date) of the newest matching documents' first chunks."""
    return [(row.chunk_id, float(row.date or 0.0)) for row in store.chunks.newest_documents(condition, limit)]


def date_breakdown(rank: int, date: float) -> Breakdown:
    contribution = 1.0 / (RRF_K + rank)
    normaliser = 1.0 / (RRF_K + 1)
    base = min(1.0, contribution / normaliser)
    return Breakdown(
        lists={DATE_LIST: ListScore(rank=rank, score=date, weight=1.0, contribution=contribution)},
        fused=contribution,
        normaliser=normaliser,
        relevance=base,  # listed by date: base is the relevance itself, never calibrated
        base=base,
        final=base,
        shown=base,  # listed by date: nothing to put back on relevance's scale
        layer=LAYER,
        fusion="rrf",
    )
