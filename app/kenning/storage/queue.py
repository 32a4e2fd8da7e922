"""The embedding queue: which pending chunk the model embeds next, and how fast it goes.

At ~12 chunks/s (docs/architecture.md §10) a large repository takes hours to embed,
so the order is what decides when semantic search becomes useful.  Pending chunks
are ordered by value (docs/architecture.md §4, phase 2):

1. notes and documents before code (code is found well by its identifiers already);
2. small sources before large ones (a notes folder added beside a big repository is
   fully semantic in its own embedding time);
3. recently changed files (commit time in a repository, else the file's) before old.

The measured rate is kept in the store so that `kenning status` and the app can say
how long until semantic search is complete, whoever is embedding.
"""

from __future__ import annotations

import time
from array import array

from kenning.storage.api import PendingChunk
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.settings import get_json, set_json

RATE_KEY = "embedding_rate"  # {"chunks_per_second": float, "measured_at": epoch seconds}
# A new measurement weighs this much against the remembered rate: a single slow batch
# (the machine busy for a moment) moves the estimate only a little.
RATE_SMOOTHING = 0.3

_QUEUE_SQL = """
WITH pending_per_source AS (
    SELECT d.source_id AS source_id, count(*) AS pending
    FROM chunks c INDEXED BY chunks_pending JOIN documents d ON d.id = c.document_id
    WHERE c.vector_fp IS NULL GROUP BY d.source_id
)
SELECT c.id
FROM chunks c INDEXED BY chunks_pending
JOIN documents d ON d.id = c.document_id
JOIN pending_per_source s ON s.source_id = d.source_id
WHERE c.vector_fp IS NULL
ORDER BY d.kind LIKE 'code:%', s.pending, coalesce(d.updated_at, d.mtime) DESC, d.id, c.ord
"""


def embedding_queue(store: Store) -> array[int]:
    """Ids of every chunk lacking a vector, most valuable first (8 bytes each: 8 MB at 1M)."""
    return array("q", (row[0] for row in store.execute(_QUEUE_SQL)))


def pending_chunks_in_order(store: Store, ids: list[int]) -> list[PendingChunk]:
    """Those of the ids still pending, in ids' order."""
    found: dict[int, PendingChunk] = {}
    for part, marks in in_batches(ids):
        for chunk in store.fetch(
            PendingChunk,
            "SELECT c.id AS chunk_id, c.title, c.text, d.kind AS document_kind, d.rel_path, c.input_sha,"
            " d.source_id, c.doc_words FROM chunks c JOIN documents d ON d.id = c.document_id"
            f" WHERE c.vector_fp IS NULL AND c.id IN ({marks})",
            part,
        ):
            found[chunk.chunk_id] = chunk
    return [found[i] for i in ids if i in found]


def record_rate(store: Store, chunks_per_second: float, now: float | None = None) -> None:
    """Remember the model's measured speed on this machine (smoothed)."""
    if chunks_per_second <= 0:
        return
    previous = embedding_rate(store)
    rate = chunks_per_second if previous is None else previous + RATE_SMOOTHING * (chunks_per_second - previous)
    set_json(store, RATE_KEY, {"chunks_per_second": rate, "measured_at": time.time() if now is None else now})


def embedding_rate(store: Store) -> float | None:
    """Chunks per second last measured here, or None when nothing was embedded yet."""
    value = get_json(store, RATE_KEY)
    try:
        rate = float(value["chunks_per_second"])
    except (TypeError, KeyError, ValueError):
        return None
    return rate if rate > 0 else None
