"""Related notes: the files nearest in meaning to one hit, for wandering through notes.

The hit's own chunk vector is the query: the exact cosine KNN over every vector
(search.vector) ranks chunks, and each other file is represented by its best chunk.
Its own file is left out (its other chunks are "more in this file", not related), and
test files too unless the hit is in one.  The files a link joins to it (its backlinks,
the notes it links to: workspace.links decides) come first: a link is the author's own
word that two notes belong together, stronger evidence than a cosine (a changelog's
sections were nearer in meaning than the notes that link to the note).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.search.fusion import RELATED_LIMIT, RELATED_TO_DOCUMENT_LIMIT
from kenning.search.vector import VectorIndex
from kenning.storage.api import ChunkRow, Ranked, Store

if TYPE_CHECKING:
    import numpy as np


CANDIDATES_PER_NOTE = 6  # chunks fetched per wanted note: a long file fills several places


class RelatedNote(Record, frozen=True):
    source: str
    path: str
    abs_path: str
    title: str
    cosine: float
    chunk_id: int
    line_start: int
    root: str = ""  # the source's folder: the file is opened only inside it (core.confine)
    link: str = ""  # LINKS_HERE, LINKED_FROM_HERE or LINKED_BOTH_WAYS: a link says they belong together
    store_label: str = ""  # its store's, when several are searched together (ChunkRow.store_label)


# What a related note's link says, in every front end's words.
LINKS_HERE = "links here"
LINKED_FROM_HERE = "linked from here"
LINKED_BOTH_WAYS = "linked both ways"


def related_notes(
    store: Store,
    index: VectorIndex,
    chunk_id: int,
    limit: int = RELATED_LIMIT,
    *,
    tests: bool = False,
    linked: dict[tuple[str, str], str] | None = None,
) -> list[RelatedNote]:
    """Up to `limit` other files: those a link joins to the hit's file first (linked:
    (source, path) -> how), then the nearest by meaning; best cosine first within each.
    Test files are left out, as search leaves them out, unless `tests` (the hit is one).
    [] when the chunk has no vector yet."""
    found = store.vectors.vectors_of(index.fingerprint, [chunk_id])
    if chunk_id not in found:
        return []
    vector = found[chunk_id]
    condition = ChunkFilter(test_files="included" if tests else "excluded")
    ranked = index.search(vector, condition, limit * CANDIDATES_PER_NOTE + 1)
    rows = store.chunks.rows([chunk_id, *(r.chunk_id for r in ranked)])
    own = rows.get(chunk_id)
    own_file = (own.source, own.rel_path) if own else None
    best = _best_per_file(ranked, rows, skip=own_file)
    for key, how in (linked or {}).items():
        if key == own_file:
            continue
        note = best.get(key) or _nearest_chunk_of(store, index, vector, key)
        if note is not None:
            best[key] = replace(note, link=how)
    order = sorted(best.values(), key=lambda n: (not n.link, -n.cosine, n.path))
    return order[: max(limit, sum(1 for n in order if n.link))]


def _best_per_file(
    ranked: Iterable[Ranked], rows: Mapping[int, ChunkRow], skip: tuple[str, str] | None = None
) -> dict[tuple[str, str], RelatedNote]:
    """Each file's closest chunk among ranked (best first), as a RelatedNote."""
    best: dict[tuple[str, str], RelatedNote] = {}
    for r in ranked:
        row = rows.get(r.chunk_id)
        if row is None or (row.source, row.rel_path) == skip or (row.source, row.rel_path) in best:
            continue
        best[(row.source, row.rel_path)] = RelatedNote(
            row.source,
            row.rel_path,
            row.abs_path,
            row.title,
            float(r.score),
            row.chunk_id,
            row.line_start,
            row.root,
            store_label=row.store_label,
        )
    return best


def _nearest_chunk_of(store: Store, index: VectorIndex, vector: np.ndarray, key: tuple[str, str]) -> RelatedNote | None:
    """A linked file the nearest did not include: its chunk closest to the vector."""
    source, path = key
    condition = ChunkFilter(sources=(source,), paths=(path,), test_files="included")
    ranked = index.search(vector, condition, CANDIDATES_PER_NOTE * 4)
    rows = store.chunks.rows([r.chunk_id for r in ranked])
    exact = [r for r in ranked if (row := rows.get(r.chunk_id)) is not None and row.rel_path == path]
    return _best_per_file(exact, rows).get(key)


def related_to_document(
    index: VectorIndex, document_id: int, limit: int = RELATED_TO_DOCUMENT_LIMIT
) -> list[RelatedNote] | None:
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
    return list(_best_per_file(ranked, rows).values())[:limit]
