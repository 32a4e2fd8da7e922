"""The team store (PostgreSQL + pgvector) at a million chunks, beside the SQLite store.

    python tests/benchmarks/bench_pg_scale.py --sqlite STORE_DIR [--pg-data DIR] [--queries 120] [--load-only]

STORE_DIR holds a store built by bench_scale.py (bench.db: its real text, copies of it,
hashed bag-of-words vectors).  The same documents, chunks and vectors are written into
a PostgreSQL store on a private server (pgserver, data kept in --pg-data, so a second
run measures without loading again) through the backend's own writes, one document a
transaction as the indexer writes them; then, in the same run:

- index throughput: chunks written per second (text, words, statistics; and vectors);
- HNSW build time: the index made over all vectors at once (CREATE INDEX, as after a
  bulk load), and the store's size on the server by table;
- HNSW recall: of the exact top 100 (a scan without the index) at the shipped ef_search;
- lexical and hybrid p50/p95 of the same queries on both stores, alternated per query
  (hybrid queries embedded by the real default model, in the figure, on both).

The server is tuned as a small team server would be (shared_buffers 2 GB,
maintenance_work_mem 2 GB for the index build); both are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from kenning.core.types import ChunkDraft, Document
from kenning.storage.postgres import documents as pg_documents
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres import vectors as pg_vectors
from kenning.storage.postgres.records import get_setting, insert_source, set_setting, store_size_bytes

SERVER_SETTINGS = {"shared_buffers": "2GB", "maintenance_work_mem": "2GB", "max_parallel_maintenance_workers": "1"}
LOADED_KEY = "bench_loaded"


def server(data: Path):
    """The benchmark's PostgreSQL server (kept between runs), tuned, with its URL."""
    import pgserver
    from pgserver._commands import pg_ctl

    os.environ.setdefault("XDG_RUNTIME_DIR", str(data.parent))
    handle = pgserver.get_server(data, cleanup_mode=None)
    url = handle.get_uri()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        current = {k: conn.execute(f"SHOW {k}").fetchone()[0] for k in SERVER_SETTINGS}
        changed = [k for k, v in SERVER_SETTINGS.items() if current[k] != v]
        for key in changed:
            conn.execute(f"ALTER SYSTEM SET {key} = '{SERVER_SETTINGS[key]}'")
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'kenning'").fetchone():
            conn.execute("CREATE DATABASE kenning")
    if changed:
        pg_ctl(["-w", "restart", "-l", str(data / "log")], pgdata=data, user=getattr(handle, "system_user", None))
    return handle, url.replace("/postgres?", "/kenning?")


def _sqlite(path: Path) -> apsw.Connection:
    return apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def load(source: Path, url: str) -> dict:
    """Copy every document, chunk and vector of the SQLite store into the team store."""
    pg = open_pg_store(url)
    if get_setting(pg, LOADED_KEY):
        facts = json.loads(get_setting(pg, LOADED_KEY) or "{}")
        pg.close()
        return facts
    db = _sqlite(source)
    source_ids = {}
    for sid, kind, root, name in db.execute("SELECT id, kind, root, name FROM sources ORDER BY id"):
        source_ids[sid] = insert_source(pg, kind=kind, root=root, name=name).id
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
            pg_documents.replace_document(pg, record, drafts, {}, shas)
            docs += 1
            chunks += len(drafts)
            if docs % 5000 == 0:
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
    facts = {
        "documents": docs,
        "chunks": chunks,
        "text_seconds": text_seconds,
        "text_chunks_per_second": chunks / text_seconds,
        "vector_seconds": vector_seconds,
        "hnsw_build_seconds": index_seconds,
    }
    set_setting(pg, LOADED_KEY, json.dumps(facts))
    pg.close()
    return facts


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sqlite", required=True, type=Path, help="a bench_scale.py store folder (bench.db)")
    parser.add_argument("--pg-data", type=Path, default=Path("/tmp/kenning-bench-pg/data"))
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--load-only", action="store_true")
    args = parser.parse_args()
    args.pg_data.parent.mkdir(parents=True, exist_ok=True)
    _, url = server(args.pg_data)
    print(f"load average {os.getloadavg()[0]:.1f}; server settings {SERVER_SETTINGS}")
    facts = load(args.sqlite / "bench.db", url)
    print(
        f"team store: {facts['chunks']:,} chunks of {facts['documents']:,} documents written at"
        f" {facts['text_chunks_per_second']:,.0f} chunks/s ({facts['text_seconds']:.0f} s), vectors in"
        f" {facts['vector_seconds']:.0f} s, HNSW index built in {facts['hnsw_build_seconds']:.0f} s"
    )
    if args.load_only:
        return
    from bench_pg_measure import measure_both

    measure_both(args.sqlite / "bench.db", url, args.queries)
    pg = open_pg_store(url)
    print(f"team store size on the server: {store_size_bytes(pg) / 1e6:,.0f} MB")
    pg.close()
    print(f"load average {os.getloadavg()[0]:.1f} at the end; {statistics.__name__} done")


if __name__ == "__main__":
    main()
