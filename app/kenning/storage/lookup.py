"""Finding one indexed document and its chunks (for `read` and `related` in front ends)."""

from __future__ import annotations

from dataclasses import dataclass

from kenning.storage.connection import Store


@dataclass(frozen=True)
class IndexedDocument:
    id: int
    source_id: int
    rel_path: str
    title: str
    kind: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class IndexedChunk:
    id: int
    ord: int
    line_start: int
    line_end: int
    text: str


_DOC_COLUMNS = "id, source_id, rel_path, title, kind, tags"


def _document(row: tuple) -> IndexedDocument:
    return IndexedDocument(row[0], row[1], row[2], row[3], row[4], tuple(row[5].split()))


def find_document(store: Store, source_id: int, rel_path: str) -> IndexedDocument | None:
    rows = store.execute(
        f"SELECT {_DOC_COLUMNS} FROM documents WHERE source_id = ? AND rel_path = ?", (source_id, rel_path)
    )
    return _document(rows[0]) if rows else None


def documents_at(store: Store, rel_path: str) -> list[IndexedDocument]:
    """Every indexed document with this relative path, whatever its source."""
    rows = store.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE rel_path = ? ORDER BY source_id", (rel_path,))
    return [_document(r) for r in rows]


def document_chunks(store: Store, document_id: int) -> list[IndexedChunk]:
    rows = store.execute(
        "SELECT id, ord, line_start, line_end, text FROM chunks WHERE document_id = ? ORDER BY ord", (document_id,)
    )
    return [IndexedChunk(*r) for r in rows]
