"""Copy a SQLite store into a team store through the team store's own writes (benchmarks).

The same documents, chunks (one document a transaction, as the indexer writes them) and
vectors, so the two stores differ only in their backend.
"""

from __future__ import annotations

import time
from pathlib import Path

import apsw

from kenning.core.types import ChunkDraft, Document
from kenning.storage.postgres import vectors as pg_vectors


def _sqlite(path: Path) -> apsw.Connection:
    return apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def copy_store(source: Path, pg, *, progress: bool = False) -> dict:
    """Copy every source, document, chunk and vector of the SQLite store at source into
    the (empty) team store pg, through its own writes; the HNSW index is built at the end."""
    db = _sqlite(source)
    source_ids = {}
    for sid, kind, root, name in db.execute("SELECT id, kind, root, name FROM sources ORDER BY id"):
        source_ids[sid] = pg.sources.add(kind=kind, root=root, name=name).id
    fingerprint = db.execute("SELECT value FROM settings WHERE key = 'vector_fingerprint'").fetchall()[0][0]
    dim = int(db.execute("SELECT value FROM settings WHERE key = 'vector_dim'").fetchall()[0][0])
    pg_vectors.prepare(pg, fingerprint, dim)
    pg_vectors.drop_index(pg, dim)  # built once at the end, as after a bulk load
    started, chunks, docs = time.perf_counter(), 0, 0
    cursor = db.cursor()
    rows = cursor.execute(
        "SELECT d.id, d.source_id, d.rel_path, d.sha256, d.size, d.mtime, d.created_at, d.updated_at, d.kind,"
        " d.title, d.tags, d.ext, d.is_test, d.meta, d.chunking_version, c.ord, c.title, c.kind, c.text,"
        " c.line_start, c.line_end, c.input_sha, c.doc_words, c.location"
        " FROM documents d JOIN chunks c ON c.document_id = d.id ORDER BY d.id, c.ord"
    )
    current, record, drafts, shas = None, None, [], {}

    def flush() -> None:
        nonlocal docs, chunks
        if record is not None:
            pg.documents.replace(record, drafts, {}, shas)
            docs += 1
            chunks += len(drafts)
            if progress and docs % 5000 == 0:
                print(f"  {chunks:,} chunks, {chunks / (time.perf_counter() - started):,.0f}/s", flush=True)

    for row in rows:
        doc_id = row[0]
        if doc_id != current:
            flush()
            current, drafts, shas = doc_id, [], {}
            (_, sid, rel, sha, size, mtime, created, updated, kind, title, tags, ext, is_test, meta, version) = row[:15]
            record = Document(
                source_id=source_ids[sid],
                rel_path=rel,
                sha256=sha,
                size=size,
                mtime=mtime,
                created_at=created,
                updated_at=updated,
                kind=kind,
                title=title,
                tags=tuple(tags.split()),
                ext=ext,
                is_test=bool(is_test),
                title_words=row[22],
                meta=meta,
                chunking_version=version,
            )
        ord_, ctitle, ckind, text, start, end, input_sha, _doc_words, location = row[15:]
        drafts.append(ChunkDraft(ord_, ctitle, ckind, text, start, end, location))
        shas[ord_] = input_sha
    flush()
    text_seconds = time.perf_counter() - started
    vector_seconds = _load_vectors(db, pg, fingerprint)
    started_index = time.perf_counter()
    pg_vectors.create_index(pg, dim)
    index_seconds = time.perf_counter() - started_index
    pg.execute("VACUUM ANALYZE")
    return {
        "documents": docs,
        "chunks": chunks,
        "text_seconds": text_seconds,
        "text_chunks_per_second": chunks / text_seconds,
        "vector_seconds": vector_seconds,
        "hnsw_build_seconds": index_seconds,
    }


def _load_vectors(db: apsw.Connection, pg, fingerprint: str, batch: int = 2000) -> float:
    """Every current vector, matched to the team store's chunk by (source, path, ord)."""
    from kenning.storage.vectors import unpack

    started = time.perf_counter()
    ids = {
        (name, rel, ord_): cid
        for cid, name, rel, ord_ in pg.execute(
            "SELECT c.id, s.name, d.rel_path, c.ord FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN sources s ON s.id = d.source_id"
        )
    }
    rows = db.cursor().execute(
        "SELECT s.name, d.rel_path, c.ord, c.input_sha, e.vector FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN sources s ON s.id = d.source_id"
        " JOIN embeddings e ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha WHERE c.vector_fp = ?",
        (fingerprint,),
    )
    items, written = [], 0
    for name, rel, ord_, sha, blob in rows:
        cid = ids.get((name, rel, ord_))
        if cid is not None:
            items.append((cid, sha, unpack(blob).tobytes()))
        if len(items) >= batch:
            pg_vectors.write_vectors(pg, fingerprint, items)
            written += len(items)
            items = []
            if written % 100_000 < batch:
                print(f"  {written:,} vectors, {written / (time.perf_counter() - started):,.0f}/s", flush=True)
    pg_vectors.write_vectors(pg, fingerprint, items)
    return time.perf_counter() - started
