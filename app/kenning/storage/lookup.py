"""Finding one indexed document and its chunks (for `read` and `related` in front ends)."""

from __future__ import annotations

from kenning.storage.api import IndexedChunk, IndexedDocument
from kenning.storage.connection import Store

_DOC_COLUMNS = "id, source_id, rel_path, title, kind, tags"


def _document(*, id: int, source_id: int, rel_path: str, title: str, kind: str, tags: str) -> IndexedDocument:
    """A documents row (its columns by name); tags are stored as ' tag1 tag2 '."""
    return IndexedDocument(id, source_id, rel_path, title, kind, tuple(tags.split()))


def find_document(store: Store, source_id: int, rel_path: str) -> IndexedDocument | None:
    rows = store.fetch(
        _document, f"SELECT {_DOC_COLUMNS} FROM documents WHERE source_id = ? AND rel_path = ?", (source_id, rel_path)
    )
    return rows[0] if rows else None


def documents_at(store: Store, rel_path: str) -> list[IndexedDocument]:
    """Every indexed document with this relative path, whatever its source."""
    return store.fetch(
        _document, f"SELECT {_DOC_COLUMNS} FROM documents WHERE rel_path = ? ORDER BY source_id", (rel_path,)
    )


def document_chunks(store: Store, document_id: int) -> list[IndexedChunk]:
    return store.fetch(
        IndexedChunk,
        "SELECT id, ord, line_start, line_end, text FROM chunks WHERE document_id = ? ORDER BY ord",
        (document_id,),
    )
