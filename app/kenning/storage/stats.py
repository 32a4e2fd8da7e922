"""Counts for `kenning status` and the sources panel."""

from __future__ import annotations

import os

from kenning.storage.api import SourceStats
from kenning.storage.connection import Store


def source_stats(store: Store) -> dict[int, SourceStats]:
    rows = store.fetch(
        SourceStats,
        "SELECT s.id AS source_id,"
        " (SELECT count(*) FROM documents d WHERE d.source_id = s.id) AS documents,"
        " (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
        "   WHERE d.source_id = s.id) AS chunks,"
        # The partial index holds only pending chunks: without it SQLite visits every
        # chunk row of the source to test vector_fp (150 ms at 100k chunks; now ~0).
        " (SELECT count(*) FROM chunks c INDEXED BY chunks_pending JOIN documents d ON d.id = c.document_id"
        "   WHERE d.source_id = s.id AND c.vector_fp IS NULL) AS pending_vectors,"
        " (SELECT count(*) FROM skipped_files k WHERE k.source_id = s.id) AS skipped"
        " FROM sources s",
    )
    return {row.source_id: row for row in rows}


def store_size_bytes(store: Store) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.path.getsize(str(store.path) + suffix)
        except OSError:
            pass
    return total


def tag_counts(store: Store) -> dict[str, int]:
    """Every tag (front matter and inline #tags) with the number of documents carrying it."""
    counts: dict[str, int] = {}
    for (encoded,) in store.execute("SELECT tags FROM documents WHERE tags != ''"):
        for tag in set(encoded.split()):
            counts[tag] = counts.get(tag, 0) + 1
    return counts
