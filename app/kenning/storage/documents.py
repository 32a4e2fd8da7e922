"""Documents, their chunks, chunk references and skipped files."""

from __future__ import annotations

from kenning.core.cjk import cjk_bigrams
from kenning.core.fsnames import part_number
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile
from kenning.storage.api import KnownDocument
from kenning.storage.connection import Store


def known_documents(store: Store, source_id: int) -> dict[str, KnownDocument]:
    rows = store.fetch(
        KnownDocument,
        "SELECT rel_path, id, sha256, size, mtime, chunking_version FROM documents WHERE source_id = ?",
        (source_id,),
    )
    return {row.rel_path: row for row in rows}


def _encode_tags(tags: tuple[str, ...]) -> str:
    return f" {' '.join(tags)} " if tags else ""


def replace_document(
    store: Store,
    record: Document,
    chunks: list[ChunkDraft],
    refs: dict[int, set[str]],
    embed_shas: dict[int, str],
    links: dict[int, list[NoteLink]] | None = None,
) -> int:
    """Write a document and its chunks in one transaction; return the document id.

    refs maps a chunk's ord to the repository paths its text mentions; embed_shas
    maps it to the sha256 of what the model will read for it (the cache key); links
    to the links a note's chunk makes, as written (storage.links resolves nothing).
    """
    with store.atomic():
        doc_id = _upsert_document(store, record)
        store.execute("DELETE FROM chunks WHERE document_id = ?", (doc_id,))
        store.execute("DELETE FROM document_aliases WHERE document_id = ?", (doc_id,))
        store.executemany(
            "INSERT OR IGNORE INTO document_aliases (document_id, alias) VALUES (?, ?)",
            [(doc_id, alias) for alias in record.aliases],
        )
        for draft in chunks:
            chunk_id = _insert_chunk(store, doc_id, draft, embed_shas[draft.ord], record.title_words)
            for path in sorted(refs.get(draft.ord, ())):
                store.execute(
                    "INSERT OR IGNORE INTO chunk_refs (chunk_id, path) VALUES (?, ?)",
                    (chunk_id, path),
                )
            store.executemany(
                "INSERT INTO chunk_links (chunk_id, ord, target, line, embed) VALUES (?, ?, ?, ?, ?)",
                [
                    (chunk_id, n, link.target, link.line, int(link.embed))
                    for n, link in enumerate((links or {}).get(draft.ord, ()))
                ],
            )
    return doc_id


def _upsert_document(store: Store, r: Document) -> int:
    values = (
        r.sha256,
        r.size,
        r.mtime,
        r.created_at,
        r.updated_at,
        r.kind,
        r.title,
        _encode_tags(r.tags),
        r.ext,
        int(r.is_test),
        r.meta,
        r.chunking_version,
    )
    existing = store.scalar("SELECT id FROM documents WHERE source_id = ? AND rel_path = ?", (r.source_id, r.rel_path))
    if existing is not None:
        store.execute(
            "UPDATE documents SET sha256 = ?, size = ?, mtime = ?, created_at = ?, updated_at = ?,"
            " kind = ?, title = ?, tags = ?, ext = ?, is_test = ?, meta = ?, chunking_version = ?,"
            " opening_sha = NULL WHERE id = ?",  # new chunks: the opening is looked at again
            (*values, existing),
        )
        return int(existing)
    store.execute(
        "INSERT INTO documents (sha256, size, mtime, created_at, updated_at, kind, title, tags,"
        " ext, is_test, meta, chunking_version, source_id, rel_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*values, r.source_id, r.rel_path),
    )
    return store.conn.last_insert_rowid()


def _insert_chunk(store: Store, doc_id: int, d: ChunkDraft, embed_sha: str, doc_words: str) -> int:
    store.execute(
        "INSERT INTO chunks (document_id, ord, title, kind, text, line_start, line_end, input_sha, doc_words,"
        " location) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (doc_id, d.ord, d.title, d.kind, d.text, d.line_start, d.line_end, embed_sha, doc_words, d.location),
    )
    chunk_id = store.conn.last_insert_rowid()
    # What the full-text tables index as title (chunks_indexed), and the text: their CJK pairs.
    grams = cjk_bigrams(f"{d.title}\n{doc_words}\n{d.text}")
    if grams:
        store.execute("INSERT INTO chunks_cjk (rowid, grams) VALUES (?, ?)", (chunk_id, " ".join(grams)))
    return chunk_id


def document_kind(store: Store, source_name: str, rel_path: str) -> str | None:
    kind = store.scalar(
        "SELECT d.kind FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.name = ? AND d.rel_path = ?",
        (source_name, rel_path),
    )
    return None if kind is None else str(kind)


def document_text(store: Store, source_name: str, rel_path: str) -> str:
    """A document's text as indexed (for extracted documents: the extracted text).

    Chunks are exact slices of the text at known lines, so placing each at its first
    line rebuilds the text the line numbers refer to (blank lines between them aside).
    """
    rows = store.execute(
        "SELECT c.line_start, c.text FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN sources s ON s.id = d.source_id WHERE s.name = ? AND d.rel_path = ? ORDER BY c.ord",
        (source_name, rel_path),
    )
    lines: list[str] = []
    for line_start, text in rows:
        parts = text.split("\n")
        if lines and line_start <= len(lines):  # the rest of a long line cut into several chunks
            lines[-1] += " " + parts.pop(0)  # the cut dropped the space it was made at
        lines.extend([""] * (line_start - 1 - len(lines)))
        lines.extend(parts)
    return "\n".join(lines)


def delete_parts_after(store: Store, source_id: int, container: str, count: int) -> int:
    """Remove the documents of a container's parts numbered above `count` (messages gone from an mbox)."""
    prefix = container + "#"
    rows = store.execute(
        "SELECT id, rel_path FROM documents WHERE source_id = ? AND substr(rel_path, 1, ?) = ?",
        (source_id, len(prefix), prefix),
    )
    # Only the container's own parts ("x.mbox#4"): never "x.mbox#2/note.md" in a folder
    # of that name, nor the parts of a mailbox "x.mbox#2" beside it ("x.mbox#2#1").
    numbers = ((doc_id, part_number(container, rel)) for doc_id, rel in rows)
    gone = [doc_id for doc_id, number in numbers if number is not None and number > count]
    if gone:
        delete_documents(store, gone)
    return len(gone)


def touch_document(store: Store, doc_id: int, mtime: float) -> None:
    """Content unchanged but the file was touched: remember the new mtime."""
    with store.atomic():
        store.execute("UPDATE documents SET mtime = ? WHERE id = ?", (mtime, doc_id))


def delete_documents(store: Store, doc_ids: list[int]) -> None:
    with store.atomic():
        store.executemany("DELETE FROM documents WHERE id = ?", [(i,) for i in doc_ids])


def replace_skipped(store: Store, source_id: int, skipped: list[SkippedFile]) -> None:
    with store.atomic():
        store.execute("DELETE FROM skipped_files WHERE source_id = ?", (source_id,))
        store.executemany(
            "INSERT OR REPLACE INTO skipped_files (source_id, rel_path, reason, detail) VALUES (?, ?, ?, ?)",
            [(source_id, s.rel_path, s.reason, s.detail) for s in skipped],
        )


def update_skipped(store: Store, source_id: int, checked: set[str], skipped: list[SkippedFile]) -> None:
    """The watcher's share of the list: entries of the paths it just checked are replaced
    by what it skipped (a full run rewrites the whole list, replace_skipped)."""
    with store.atomic():
        store.executemany(
            "DELETE FROM skipped_files WHERE source_id = ? AND rel_path = ?", [(source_id, r) for r in checked]
        )
        store.executemany(
            "INSERT OR REPLACE INTO skipped_files (source_id, rel_path, reason, detail) VALUES (?, ?, ?, ?)",
            [(source_id, s.rel_path, s.reason, s.detail) for s in skipped],
        )


def skipped_files(store: Store, source_id: int | None = None) -> list[tuple[str, SkippedFile]]:
    sql = (
        "SELECT s.name AS source, k.rel_path, k.reason, k.detail"
        " FROM skipped_files k JOIN sources s ON s.id = k.source_id"
    )
    params: tuple[int, ...] = ()
    if source_id is not None:
        sql += " WHERE k.source_id = ?"
        params = (source_id,)
    return store.fetch(_skipped_in_source, sql + " ORDER BY s.name, k.rel_path", params)


def _skipped_in_source(*, source: str, rel_path: str, reason: str, detail: str) -> tuple[str, SkippedFile]:
    return source, SkippedFile(rel_path, reason, detail)
