"""Reading chunks for ranking: the pooled chunks' text and metadata, and the paths they mention."""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.fsnames import filesystem_name
from kenning.storage.api import ChunkRow, DatedChunk
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.filtering import JOIN_DOCUMENTS, filter_condition

if TYPE_CHECKING:
    from typing import Any


def _chunk_row(**columns: Any) -> ChunkRow:
    columns["root"] = filesystem_name(columns["root"])  # stored as a name (storage.sources.insert_source)
    return ChunkRow(**columns)


def load_chunk_rows(store: Store, ids: list[int]) -> dict[int, ChunkRow]:
    """The given chunks that still exist, by id."""
    out: dict[int, ChunkRow] = {}
    for part, marks in in_batches(ids):
        rows = store.fetch(
            _chunk_row,
            "SELECT c.id AS chunk_id, c.title, c.kind, c.text, c.line_start, c.line_end, d.rel_path, s.root,"
            " s.name AS source, s.id AS source_id, s.kind AS source_kind, d.created_at, d.updated_at, c.location"
            " FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN sources s ON s.id = d.source_id"
            f" WHERE c.id IN ({marks})",
            part,
        )
        out.update((row.chunk_id, row) for row in rows)
    return out


def mentioned_paths(store: Store, ids: list[int]) -> dict[int, list[str]]:
    """Per chunk: the repository paths its text mentions (chunks mentioning none are absent)."""
    out: dict[int, list[str]] = {}
    for part, marks in in_batches(ids):
        for cid, path in store.execute(f"SELECT chunk_id, path FROM chunk_refs WHERE chunk_id IN ({marks})", part):
            out.setdefault(cid, []).append(path)
    return out


def count_chunks(store: Store) -> int:
    return store.scalar("SELECT count(*) FROM chunks") or 0


def allowed_chunk_ids(store: Store, chunk_filter: ChunkFilter) -> list[int]:
    """Every chunk the filter allows."""
    condition = filter_condition(chunk_filter)
    return [
        r[0]
        for r in store.execute(f"SELECT c.id FROM chunks c {JOIN_DOCUMENTS} WHERE {condition.sql}", condition.params)
    ]


def newest_documents(store: Store, chunk_filter: ChunkFilter, limit: int) -> list[DatedChunk]:
    """The first allowed chunk of each of the newest documents holding allowed chunks, newest first."""
    condition = filter_condition(chunk_filter)
    # SQLite takes a bare column from the row min() picked: each document's first chunk.
    return store.fetch(
        DatedChunk,
        "SELECT c.id AS chunk_id, min(c.ord) AS first_ord, coalesce(d.updated_at, d.created_at, d.mtime) AS date"
        f" FROM chunks c {JOIN_DOCUMENTS} WHERE {condition.sql}"
        " GROUP BY c.document_id ORDER BY date DESC, c.document_id LIMIT ?",
        (*condition.params, limit),
    )
