"""Counts for `kenning status` and the sources panel."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kenning.storage.connection import Store


@dataclass(frozen=True)
class SourceStats:
    source_id: int
    documents: int
    chunks: int
    pending_vectors: int
    skipped: int


def source_stats(store: Store) -> dict[int, SourceStats]:
    rows = store.execute(
        "SELECT s.id,"
        " (SELECT count(*) FROM documents d WHERE d.source_id = s.id),"
        " (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
        "   WHERE d.source_id = s.id),"
        " (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
        "   WHERE d.source_id = s.id AND c.vector_fp IS NULL),"
        " (SELECT count(*) FROM skipped_files k WHERE k.source_id = s.id)"
        " FROM sources s"
    )
    return {r[0]: SourceStats(*r) for r in rows}


def store_size_bytes(store: Store) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.path.getsize(str(store.path) + suffix)
        except OSError:
            pass
    return total
