"""Documents nearest in meaning to one indexed document.

The document is represented by the mean of its chunks' vectors (each chunk already
unit length, so the mean weighs every part of the file alike); other documents are
ranked by their best chunk's cosine to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kenning.core.filters import ChunkFilter
from kenning.search.vector import VectorIndex
from kenning.storage import vectors as vectors_repo
from kenning.storage.chunks import load_chunk_rows
from kenning.storage.lookup import document_chunks

# Chunks fetched per wanted document: one document's several chunks may all rank high.
CHUNKS_PER_DOCUMENT = 8


@dataclass(frozen=True)
class RelatedDocument:
    source: str
    path: str
    abs_path: str
    title: str
    line_start: int  # of the closest chunk
    line_end: int
    similarity: float  # cosine of the closest chunk to the document's mean vector


def related_documents(index: VectorIndex, document_id: int, limit: int = 10) -> list[RelatedDocument] | None:
    """The `limit` nearest other documents, or None when the document has no vectors yet."""
    store = index.store
    chunk_ids = [c.id for c in document_chunks(store, document_id)]
    vectors = vectors_repo.vectors_for_chunks(store, index.fingerprint, chunk_ids)
    if not vectors:
        return None
    centre = np.mean(np.stack(list(vectors.values())), axis=0)
    norm = float(np.linalg.norm(centre))
    if norm == 0.0:
        return []
    condition = ChunkFilter(test_files="included", except_document=document_id)
    ranked = index.search((centre / norm).astype(np.float32), condition, limit * CHUNKS_PER_DOCUMENT)
    rows = load_chunk_rows(store, [r.chunk_id for r in ranked])
    best: dict[tuple[str, str], RelatedDocument] = {}
    for hit in ranked:  # best first, so the first chunk seen of a document is its closest
        row = rows.get(hit.chunk_id)
        if row is None or (row.source, row.rel_path) in best:
            continue
        best[(row.source, row.rel_path)] = RelatedDocument(
            row.source, row.rel_path, row.abs_path, row.title, row.line_start, row.line_end, hit.score
        )
        if len(best) >= limit:
            break
    return list(best.values())
