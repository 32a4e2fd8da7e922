"""A private PostgreSQL 16 + pgvector for the tests, started by the tests themselves.

The PyPI package `pgserver` ships the server binaries (PostgreSQL 16 with pgvector, no
contrib extensions), so nothing is installed on the machine and no manual step comes
before `bash packaging/dev.sh test`.  One server is started per test session, on the
first test that asks for it (~1.5-5 s), listening on a Unix socket only; each test gets
a database of its own, copied from a template that already holds the `vector`
extension (a copy takes a few tens of milliseconds), dropped afterwards.

Authentication is what a team's server would ask for: the superuser `postgres`
connects without a password over the socket (the fixture's own administration), every
other role must give its password (scram-sha-256), so the tests of passwords,
`.pgpass` and the reader role mean something.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

TEMPLATE = "kenning_template"
_counter = itertools.count(1)
_lock = threading.Lock()


@dataclass
class PgServer:
    """A running server: where its socket is, and how to administer it."""

    pgdata: Path
    socket_dir: str
    handle: object  # pgserver.PostgresServer

    def url(self, database: str = "postgres", *, user: str = "postgres", password: str | None = None) -> str:
        secret = f":{quote(password, safe='')}" if password else ""
        return f"postgresql://{quote(user, safe='')}{secret}@/{database}?host={quote(self.socket_dir, safe='/')}"

    def admin(self, sql: str, params: tuple[object, ...] = (), *, database: str = "postgres") -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cur = conn.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def new_database(self) -> str:
        with _lock:
            name = f"kenning_test_{os.getpid()}_{next(_counter)}"
        self.admin(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE}')
        return name

    def drop_database(self, name: str) -> None:
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def pg_ctl(self, *args: str) -> None:
        """Run pg_ctl on this server (restart, stop, start), as the server's own user."""
        from pgserver._commands import pg_ctl

        pg_ctl(["-w", *args], pgdata=self.pgdata, user=getattr(self.handle, "system_user", None))

    def restart(self) -> None:
        self.pg_ctl("restart", "-l", str(self.pgdata / "log"))

    def stop(self) -> None:
        self.pg_ctl("stop", "-m", "fast")

    def start(self) -> None:
        """As pgserver starts it: no TCP, the socket where it was."""
        self.pg_ctl("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pgdata / "log"), "start")


def _require_passwords(server: PgServer) -> None:
    hba = server.pgdata / "pg_hba.conf"
    hba.write_text("local all postgres trust\nlocal all all scram-sha-256\n", encoding="utf-8")
    server.admin("SELECT pg_reload_conf()")


def start_server(base: Path) -> PgServer:
    """Start a fresh server with its data in base (which must not exist yet)."""
    # pgserver keeps its lock file in the user's runtime folder; without XDG_RUNTIME_DIR
    # (CI, a root shell) platformdirs warns and falls back to /tmp/runtime-<uid>.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(base.parent))
    import pgserver

    handle = pgserver.get_server(base, cleanup_mode="delete")
    uri = handle.get_uri()
    socket_dir = uri.split("host=", 1)[1]
    server = PgServer(base, socket_dir, handle)
    _require_passwords(server)
    server.admin(f"CREATE DATABASE {TEMPLATE}")
    server.admin("CREATE EXTENSION IF NOT EXISTS vector", database=TEMPLATE)
    return server


def stop_server(server: PgServer) -> None:
    cleanup = getattr(server.handle, "_cleanup", None)
    if cleanup is not None:
        cleanup()
    shutil.rmtree(server.pgdata, ignore_errors=True)


_shared: list[PgServer] = []


def shared_server() -> PgServer:
    """The session's one server, started by whichever test asks first."""
    with _lock:
        if not _shared:
            # A short path: a Unix socket's path is limited to ~100 bytes, and pgserver puts
            # the socket in the data folder when it can.
            _shared.append(start_server(Path(tempfile.mkdtemp(prefix="kenning-pg-")) / "data"))
        return _shared[0]


def stop_shared_server() -> None:
    with _lock:
        while _shared:
            server = _shared.pop()
            stop_server(server)
            shutil.rmtree(server.pgdata.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (started on first use, stopped at the session's end)."""
    yield shared_server()


@pytest.fixture
def pg_database(pg_server: PgServer) -> Iterator[str]:
    """A new empty database (with the vector extension) for one test; its name."""
    name = pg_server.new_database()
    try:
        yield name
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def pg_url(pg_server: PgServer, pg_database: str) -> str:
    """The superuser's URL of the test's own database (who may create the schema)."""
    return pg_server.url(pg_database)


def psql_path() -> str | None:
    """pgserver's psql, for tests that act as a user typing into psql would."""
    try:
        from pgserver._commands import POSTGRES_BIN_PATH
    except ImportError:
        return None
    path = Path(POSTGRES_BIN_PATH) / "psql"
    return str(path) if path.exists() else None


def run_psql(url: str, sql: str) -> subprocess.CompletedProcess[str]:
    path = psql_path()
    assert path, "pgserver's psql is missing"
    return subprocess.run([path, url, "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, check=False)


# -- copying a SQLite store into a team store (tests and benchmarks) ----------------
# The same documents, chunks (one document a transaction, as the indexer writes them)
# and vectors, through the team store's own writes: the two stores then differ only in
# their backend.


def _sqlite(path: Path):
    import apsw

    return apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def copy_store(source: Path, pg, *, progress: bool = False) -> dict:
    from kenning.core.types import ChunkDraft, Document
    from kenning.storage.postgres import vectors as pg_vectors

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
    _load_openings(db, pg, fingerprint)
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


def _load_vectors(db, pg, fingerprint: str, batch: int = 2000) -> float:
    from kenning.storage.postgres import vectors as pg_vectors

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


def _load_openings(db, pg, fingerprint: str) -> None:
    """Every document's opening (its sha, and its vector where embedded), matched to the
    team store's document by (source, path): vector mode mixes it into each chunk's score
    (search.engine.OPENING_WEIGHTS), so a copy without it would not rank as the original."""
    from kenning.storage.postgres import vectors as pg_vectors
    from kenning.storage.vectors import unpack

    ids = {
        (name, rel): did
        for did, name, rel in pg.execute(
            "SELECT d.id, s.name, d.rel_path FROM documents d JOIN sources s ON s.id = d.source_id"
        )
    }
    rows = db.execute(
        "SELECT s.name, d.rel_path, d.opening_sha, e.vector FROM documents d JOIN sources s ON s.id = d.source_id"
        " LEFT JOIN embeddings e ON e.fingerprint = ? AND e.input_sha = d.opening_sha"
        " WHERE d.opening_sha IS NOT NULL",
        (fingerprint,),
    ).fetchall()
    items = [
        (ids[(name, rel)], sha, None if blob is None else unpack(blob).tobytes())
        for name, rel, sha, blob in rows
        if (name, rel) in ids
    ]
    pg_vectors.write_openings(pg, fingerprint, items)


# -- checking a team store -------------------------------------------------------------


def statistics_problems(store) -> list[str]:
    """What differs between the kept statistics (terms, corpus) and a count from the chunks."""
    problems = []
    recount = dict(
        (t, (int(c), int(n)))
        for t, c, n in store.execute(
            "SELECT k.key, count(DISTINCT c.id), sum((k.value::bigint >> 16) + (k.value::bigint & 65535)) FROM chunks c,"
            " LATERAL (SELECT * FROM jsonb_each_text(c.tf) UNION ALL SELECT * FROM jsonb_each_text(coalesce(c.tf_big, '{}'))) k"
            " GROUP BY k.key"
        )
    )
    kept = {t: (int(c), int(n)) for t, c, n in store.execute("SELECT term, chunks, occurrences FROM terms")}
    if recount != kept:
        wrong = sorted(set(recount.items()) ^ set(kept.items()))[:5]
        problems.append(f"terms differ from the chunks: {wrong}")
    totals = store.execute("SELECT count(*), coalesce(sum(word_count), 0), coalesce(sum(gram_count), 0) FROM chunks")[0]
    corpus = store.execute("SELECT chunks, words, grams FROM corpus")[0]
    if tuple(map(int, totals)) != tuple(map(int, corpus)):
        problems.append(f"corpus {corpus} != recount {totals}")
    lexemes = store.execute(
        "SELECT count(*) FROM chunks c WHERE (SELECT count(*) FROM unnest(tsvector_to_array(c.words)))"
        " <> (SELECT count(*) FROM jsonb_object_keys(CASE WHEN c.tf_big IS NULL THEN c.tf ELSE c.tf_big END))"
    )[0][0]
    if lexemes:
        problems.append(f"{lexemes} chunks whose tsvector and term counts disagree")
    if store.scalar("SELECT to_regclass('postings') IS NOT NULL"):  # m007
        recount_postings = (
            "SELECT k.key, posting_impact(k.value::bigint, c.word_count), c.id, c.document_id FROM chunks c,"
            " LATERAL (SELECT * FROM jsonb_each_text(c.tf) UNION ALL SELECT * FROM jsonb_each_text(coalesce(c.tf_big, '{}'))) k"
        )
        kept_postings = "SELECT term, impact, chunk, document FROM postings"
        differ = store.scalar(
            f"SELECT count(*) FROM (({recount_postings} EXCEPT ALL {kept_postings})"
            f" UNION ALL ({kept_postings} EXCEPT ALL {recount_postings})) d"
        )
        if differ:
            problems.append(f"{differ} postings differ from the chunks' term counts")
    return problems


def note_document(source_id: int, rel_path: str, **fields):
    """A markdown note's Document for the team store's tests: titled by its path, a test
    file when under tests/, with any field given instead."""
    from kenning.core.types import Document

    values = {
        "source_id": source_id,
        "rel_path": rel_path,
        "sha256": "x",
        "size": 1,
        "mtime": 1.0,
        "created_at": None,
        "updated_at": None,
        "kind": "markdown",
        "title": rel_path,
        "tags": (),
        "ext": "md",
        "is_test": rel_path.startswith("tests/"),
    }
    return Document(**{**values, **fields})


def add_notes(store, texts: list[tuple[str, str]], source: str = "n") -> None:
    """One document a (title, text), each one chunk, written through the store's own writes."""
    from kenning.core.types import ChunkDraft

    sid = store.sources.add(kind="folder", root=f"/{source}", name=source).id
    for number, (title, text) in enumerate(texts):
        record = note_document(sid, f"d{number}.md", title="t")
        store.documents.replace(record, [ChunkDraft(0, title, "prose", text, 1, 1)], {}, {0: "s"})
