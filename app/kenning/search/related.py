"""Related notes: the files nearest in meaning to one hit, for wandering through notes.

The hit's own chunk vector is the query: the exact cosine KNN over every vector
(search.vector) ranks chunks, and each other file is represented by its best chunk.
Its own file is left out (its other chunks are "more in this file", not related).
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.core.filters import ChunkFilter
from kenning.search.vector import VectorIndex
from kenning.storage.api import Store

CANDIDATES_PER_NOTE = 6  # chunks fetched per wanted note: a long file fills several places


@dataclass(frozen=True)
class RelatedNote:
    source: str
    path: str
    abs_path: str
    title: str
    cosine: float
    chunk_id: int
    line_start: int
    root: str = ""  # the source's folder: the file is opened only inside it (core.confine)


def related_notes(store: Store, index: VectorIndex, chunk_id: int, limit: int = 8) -> list[RelatedNote]:
    """Up to `limit` other files, best cosine first; [] when the chunk has no vector yet."""
    found = store.vectors.vectors_of(index.fingerprint, [chunk_id])
    if chunk_id not in found:
        return []
    ranked = index.search(found[chunk_id], ChunkFilter(test_files="included"), limit * CANDIDATES_PER_NOTE + 1)
    rows = store.chunks.rows([r.chunk_id for r in ranked])
    own = rows.get(chunk_id)
    own_file = (own.source, own.rel_path) if own else None
    best: dict[tuple[str, str], RelatedNote] = {}
    for r in ranked:
        row = rows.get(r.chunk_id)
        if row is None or (row.source, row.rel_path) == own_file:
            continue
        key = (row.source, row.rel_path)
        if key not in best:
            best[key] = RelatedNote(
                row.source,
                row.rel_path,
                row.abs_path,
                row.title,
                float(r.score),
                row.chunk_id,
                row.line_start,
                row.root,
            )
    return sorted(best.values(), key=lambda n: (-n.cosine, n.path))[:limit]


def related_to_document(index: VectorIndex, document_id: int, limit: int = 10) -> list[RelatedNote] | None:
    """Files nearest in meaning to a whole document (the mean of its chunks' vectors, each
    unit length, so every part of the file weighs alike); None when it has no vectors yet."""
    import numpy as np

    store = index.store
    vectors = store.vectors.vectors_of(index.fingerprint, [c.id for c in store.documents.chunks(document_id)])
    if not vectors:
        return None
    centre = np.mean(np.stack(list(vectors.values())), axis=0)
    norm = float(np.linalg.norm(centre))
    if norm == 0.0:
        return []
    condition = ChunkFilter(test_files="included", except_document=document_id)
    ranked = index.search((centre / norm).astype(np.float32), condition, limit * CANDIDATES_PER_NOTE)
    rows = store.chunks.rows([r.chunk_id for r in ranked])
    best: dict[tuple[str, str], RelatedNote] = {}
    for r in ranked:  # best first: a file's first chunk seen is its closest
        row = rows.get(r.chunk_id)
        if row is not None and (row.source, row.rel_path) not in best:
            best[(row.source, row.rel_path)] = RelatedNote(
                row.source,
                row.rel_path,
                row.abs_path,
                row.title,
                float(r.score),
                row.chunk_id,
                row.line_start,
                row.root,
            )
    return list(best.values())[:limit]
