"""Fill a team store from a SQLite store in bulk (bench_pg_scale.py's million chunks).

Not the indexer's path: the rows are the writer's own (documents.chunk_values: the same
cleaned text, tsvector, term counts and trigram arrays as `kenning index` writes), but
they reach the server by COPY, a batch of chunks a statement (the schema's
statement-level triggers keep bm25's statistics and the change token as for any
write), with their vectors in the same rows, and the GIN, postings and HNSW indexes are
built once at the end, side by side (each build timed).  Two worker processes tokenize while the server
copies.  The figures say which path each rate came from.
"""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import time
from pathlib import Path

from kenning.core.types import ChunkDraft
from kenning.storage.postgres import vectors as pg_vectors
from kenning.storage.postgres.documents import CHUNK_COLUMNS, chunk_values, clean_text, write_lock
from kenning.storage.postgres.schema import POSTINGS_INDEX
from kenning.storage.postgres.words import Words

BATCH = 5000  # chunks a COPY statement (one transaction)
GIN_BUILD_MEMORY = "1500MB"  # each word index build's maintenance_work_mem (four builds run at once)
WORD_INDEXES = {
    "chunks_words": "CREATE INDEX chunks_words ON chunks USING gin (words)",
    "chunks_grams": "CREATE INDEX chunks_grams ON chunks USING gin (grams)",
    "postings_by_impact": POSTINGS_INDEX,  # (its rows are the triggers' own, as for any write)
}
_CHUNKS = (
    "SELECT c.id, c.document_id, c.ord, c.title, c.kind, c.text, c.line_start, c.line_end, c.input_sha,"
    " c.doc_words, c.location, c.vector_fp, e.vector FROM chunks c"
    " LEFT JOIN embeddings e ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha"
    " WHERE c.id >= ? AND c.id < ? ORDER BY c.id"
)
_DOCUMENT_COLUMNS = (
    "id, source_id, rel_path, sha256, size, mtime, created_at, updated_at, kind, title, tags, ext, is_test, meta,"
    " chunking_version"
)

_words: Words | None = None
_db: object = None


def _sqlite(path: Path):
    import apsw

    return apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def _start_worker(path: str) -> None:
    global _words, _db
    _words, _db = Words(), _sqlite(Path(path))


def _rows(span: tuple[int, int]) -> list[tuple[object, ...]]:
    """COPY rows (id, CHUNK_COLUMNS..., vector_fp, embedding) of the chunks with ids in span."""
    import numpy as np

    from kenning.storage.vectors import unpack

    assert _words is not None
    out = []
    for cid, doc, ord_, title, kind, text, start, end, sha, doc_words, location, fp, blob in _db.execute(_CHUNKS, span):  # type: ignore[attr-defined]
        draft = ChunkDraft(ord_, title, kind, text, start, end, location)
        values = chunk_values(_words, doc, draft, sha, clean_text(doc_words))
        # numpy's shortest text that reads back as the same float32 (the SQLite store's value)
        vector = None if blob is None else "[" + ",".join(unpack(blob).astype(np.str_).tolist()) + "]"
        out.append((cid, *values, fp if blob is not None else None, vector))
    return out


def _copy(pg, sql: str, rows) -> None:
    with pg.atomic():
        write_lock(pg)
        with pg.conn.cursor() as cur, cur.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)


def _build(target: str, name: str, ddl: str, memory: str | None) -> float:
    """One index built on a connection of its own: its wall-clock seconds."""
    from kenning.storage.postgres.connection import PgStore

    conn = PgStore(target)
    try:
        if memory is not None:
            conn.execute(f"SET maintenance_work_mem = '{memory}'")
        began = time.perf_counter()
        conn.execute(ddl)
        return time.perf_counter() - began
    finally:
        conn.close()


def build_indexes(pg, dim: int, *, progress: bool = True) -> dict[str, float]:
    """The word indexes (two GIN, the postings' B-tree) and the HNSW index, built side by
    side (CREATE INDEX takes a SHARE lock, so the builds do not wait for each other;
    PostgreSQL 16 builds a GIN index in one process, pgvector 0.6 the HNSW graph in the
    parallel maintenance workers): each build's seconds and the whole."""
    from concurrent.futures import ThreadPoolExecutor

    builds = {
        **{name: (ddl, GIN_BUILD_MEMORY) for name, ddl in WORD_INDEXES.items()},
        "hnsw": (pg_vectors.index_ddl(dim), None),  # the server's maintenance_work_mem: the graph in memory
    }
    began = time.perf_counter()
    facts: dict[str, float] = {}
    with ThreadPoolExecutor(len(builds)) as pool:
        running = {name: pool.submit(_build, pg.target, name, ddl, memory) for name, (ddl, memory) in builds.items()}
        for name, future in running.items():
            facts[f"{name}_build_seconds"] = future.result()
            if progress:
                print(f"  {name} built in {facts[f'{name}_build_seconds']:,.0f} s (side by side)", flush=True)
    facts["index_builds_seconds"] = time.perf_counter() - began
    return facts


def bulk_load(source: Path, pg, *, workers: int = 2, progress: bool = True) -> dict:
    """Copy every source, document, chunk, vector and cached vector of the SQLite store at
    source into the team store pg; build its indexes; the facts, timed.

    A store partly filled by an earlier (stopped) load of source, or of a larger store
    whose first rows are source's (bench_scale.py grows each size from the previous one),
    is resumed: what source lacks goes, the next batch of chunks follows."""
    db = _sqlite(source)
    facts: dict[str, float] = {}
    names = {name: sid for sid, name in pg.execute("SELECT id, name FROM sources")}
    wanted = list(db.execute("SELECT id, kind, root, name FROM sources ORDER BY id"))
    last_doc = db.execute("SELECT max(id) FROM documents").fetchall()[0][0]
    pg.execute("DELETE FROM documents WHERE id > %s", (last_doc,))
    pg.execute("DELETE FROM sources WHERE NOT (name = ANY(%s))", ([w[3] for w in wanted],))
    source_ids = {}
    for sid, kind, root, name in wanted:
        source_ids[sid] = names[name] if name in names else pg.sources.add(kind=kind, root=root, name=name).id
    fingerprint = db.execute("SELECT value FROM settings WHERE key = 'vector_fingerprint'").fetchall()[0][0]
    dim = int(db.execute("SELECT value FROM settings WHERE key = 'vector_dim'").fetchall()[0][0])
    if pg.settings.get(pg_vectors.FINGERPRINT_KEY) != fingerprint:  # (a resumed load has no index to build)
        pg_vectors.prepare(pg, fingerprint, dim)
    pg_vectors.drop_index(pg, dim)
    for name in WORD_INDEXES:
        pg.execute(f"DROP INDEX IF EXISTS {name}")
    started = time.perf_counter()
    have_doc = int(pg.scalar("SELECT coalesce(max(id), 0) FROM documents"))
    documents = [
        (d[0], source_ids[d[1]], *(clean_text(v) if isinstance(v, str) else v for v in d[2:12]), bool(d[12]), *d[13:])
        for d in db.execute(f"SELECT {_DOCUMENT_COLUMNS} FROM documents WHERE id > ? ORDER BY id", (have_doc,))
    ]
    _copy(pg, f"COPY documents ({_DOCUMENT_COLUMNS}) FROM STDIN", documents)
    high = db.execute("SELECT max(id) FROM chunks").fetchall()[0][0]
    pg.execute("DELETE FROM chunks WHERE id > %s", (high,))
    low = int(pg.scalar("SELECT coalesce(max(id), 0) FROM chunks")) + 1
    facts["chunks_already_there"] = low - 1
    spans = [(at, min(at + BATCH, high + 1)) for at in range(low, high + 1, BATCH)]
    chunks = 0
    sql = f"COPY chunks (id, {CHUNK_COLUMNS}, vector_fp, embedding) FROM STDIN"
    with multiprocessing.get_context("spawn").Pool(workers, _start_worker, (str(source),)) as pool:
        todo = iter(spans)
        waiting = collections.deque(pool.apply_async(_rows, (span,)) for span in itertools.islice(todo, 2 * workers))
        while waiting:  # a few batches ahead of the server, never the whole store in memory
            rows = waiting.popleft().get()
            following = next(todo, None)
            if following is not None:
                waiting.append(pool.apply_async(_rows, (following,)))
            _copy(pg, sql, rows)
            chunks += len(rows)
            if progress and chunks // BATCH % 20 == 0:
                print(f"  {chunks:,} chunks, {chunks / (time.perf_counter() - started):,.0f}/s", flush=True)
    facts["chunks_copied_now"] = chunks
    facts["chunks"] = int(pg.scalar("SELECT count(*) FROM chunks"))
    facts["documents"] = int(pg.scalar("SELECT count(*) FROM documents"))
    pg.execute("DELETE FROM embeddings")
    cached = db.cursor().execute("SELECT fingerprint, input_sha, vector FROM embeddings")
    _copy(pg, "COPY embeddings (fingerprint, input_sha, vector) FROM STDIN", cached)
    for table in ("documents", "chunks"):
        pg.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    facts["copy_seconds"] = time.perf_counter() - started
    facts["copy_chunks_per_second"] = chunks / facts["copy_seconds"]  # of this run's chunks
    facts.update(build_indexes(pg, dim, progress=progress))
    began = time.perf_counter()
    pg.execute("VACUUM ANALYZE")
    facts["vacuum_analyze_seconds"] = time.perf_counter() - began
    return facts
