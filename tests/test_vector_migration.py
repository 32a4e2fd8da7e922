"""Migrations m006 and m007 (issue #15): stores written by the code before them are
converted in place, every vector carried over and nothing embedded again.

m006: the embedding cache was a WITHOUT ROWID table and sqlite-vec held a float32 copy
of each vector.  m007: the cached vectors were float32 and the trigram index kept
every position (detail=full)."""

from __future__ import annotations

import numpy as np

from kenning.ingest.embedtext import input_sha
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import migrations, open_store
from kenning.storage import vectors as vectors_repo
from kenning.storage.connection import Store
from kenning_testing import CountingEmbedder, load_sqlite_vec, reindex, write_files


def _old_store(tmp_path, monkeypatch, embedder) -> tuple:
    """A store exactly as the code before m006 left it after indexing with embedder."""
    files = {f"n{i}.md": f"# Note {i}\n\nkestrel falcon number {i}\n\n## More\n\nosprey {i}\n" for i in range(15)}
    store, rows, matrix = _indexed_without_vectors(
        tmp_path / "old.db", monkeypatch, migrations.m006_vectors_stored_once, files, embedder
    )

    def vec0_row(cid: int, vec: np.ndarray, blob: bytes) -> None:
        store.execute("INSERT INTO chunk_vectors (chunk_id, embedding) VALUES (?, ?)", (cid, blob))

    load_sqlite_vec(store.conn)  # the code then loaded it; today's converts without it
    with store.atomic():  # what vectors.prepare() and write_vectors() did then
        store.execute(
            "CREATE VIRTUAL TABLE chunk_vectors USING vec0("
            f"chunk_id INTEGER PRIMARY KEY, embedding float[{embedder.dim}] distance_metric=cosine)"
        )
        _write_vectors_as_then(store, embedder, rows, matrix, vec0_row)
    return _closed(store, monkeypatch, tmp_path / "old.db")


def _indexed_without_vectors(db, monkeypatch, first_missing, files: dict, embedder) -> tuple:
    """A store made by the migrations before first_missing, files indexed (phase 1), with
    each chunk's row and the vector embedder gives it (model input as the code then built it)."""
    _only_migrations_before(monkeypatch, first_missing)
    store = open_store(db)
    add_source(store, write_files(db.parent / "notes", files), name="notes")
    Indexer(store, None).run(embed=False)
    rows = store.execute("SELECT id, title, text, input_sha FROM chunks ORDER BY id")
    return store, rows, embedder.embed_batch([f"{title}\n{text}" for _, title, text, _ in rows])


def _write_vectors_as_then(store, embedder, rows, matrix, per_chunk) -> None:
    """The settings, cached float32 vectors and chunk marks every old layout had; per_chunk
    writes what the layout kept beside them."""
    store.execute("INSERT INTO settings (key, value) VALUES ('vector_fingerprint', ?)", (embedder.fingerprint,))
    store.execute("INSERT INTO settings (key, value) VALUES ('vector_dim', ?)", (str(embedder.dim),))
    for (cid, _, _, sha), vec in zip(rows, matrix):
        blob = np.ascontiguousarray(vec, dtype=np.float32).tobytes()
        store.execute(
            "INSERT INTO embeddings (fingerprint, input_sha, vector) VALUES (?, ?, ?)",
            (embedder.fingerprint, sha, blob),
        )
        per_chunk(cid, vec, blob)
        store.execute("UPDATE chunks SET vector_fp = ? WHERE id = ?", (embedder.fingerprint, cid))


def _closed(store, monkeypatch, db) -> tuple:
    """(the store's path, its embedding cache), the store closed and every migration back."""
    cache = dict(store.execute("SELECT input_sha, vector FROM embeddings"))
    store.close()
    monkeypatch.undo()
    return db, cache


# Tables today's indexer writes into, made by migrations after the ones under test: an
# "old" store built by today's indexer has them already (they are independent of these).
WRITTEN_BY_THE_INDEXER = (migrations.m009_note_links, migrations.m012_cjk_bigrams)


def _only_migrations_before(monkeypatch, first_missing) -> None:
    older = migrations.MIGRATIONS[: migrations.MIGRATIONS.index(first_missing)]
    monkeypatch.setattr(migrations, "MIGRATIONS", [*older, *WRITTEN_BY_THE_INDEXER])


def _half(blob: bytes) -> bytes:
    return np.frombuffer(blob, dtype=np.float32).astype(np.float16).tobytes()


def _without_rowid(store: Store, table: str) -> bool:
    sql = store.scalar("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
    return "WITHOUT ROWID" in sql.upper()


def test_an_old_store_is_converted_without_re_embedding(tmp_path, monkeypatch):
    embedder = CountingEmbedder()
    db, cache = _old_store(tmp_path, monkeypatch, embedder)
    store = open_store(db)  # applies m006, then m007
    try:
        applied = [r[0] for r in store.execute("SELECT name FROM migrations")]
        converted = ["m006_vectors_stored_once", "m007_half_vectors_and_substring_index"]
        assert [name for name in applied if name in converted] == converted  # in this order
        assert not store.scalar("SELECT 1 FROM sqlite_master WHERE name = 'chunk_vectors'")  # the second copy is gone
        assert not _without_rowid(store, "embeddings")  # no more overflow pages per row
        # every vector carried over (m007 keeps it as float16)
        assert dict(store.execute("SELECT input_sha, vector FROM embeddings")) == {
            sha: _half(blob) for sha, blob in cache.items()
        }
        chunks = store.scalar("SELECT count(*) FROM chunks")
        assert store.scalar("SELECT count(*) FROM vector_codes") == chunks
        sha_of = dict(store.execute("SELECT id, input_sha FROM chunks"))
        for cid, code in store.execute("SELECT chunk_id, code FROM vector_codes"):
            assert code == vectors_repo.sign_bits(np.frombuffer(cache[sha_of[cid]], dtype=np.float32)).tobytes()
        assert vectors_repo.count_pending(store) == 0
        again = CountingEmbedder()
        reindex(store, again)
        # Nothing embedded twice: only the two-chunk notes' openings, which stores made
        # before m015 lack (the next index run embeds them, and no chunk again).
        assert len(again.embedded) == 15
        assert not {input_sha(text) for text in again.embedded} & set(sha_of.values())
        result = SearchEngine(store, again).search("kestrel osprey", SearchOptions(limit=5, mode="vector"))
        assert result.hits and all("vector" in h.breakdown.lists for h in result.hits)
    finally:
        store.close()


def test_a_new_store_has_the_compact_layout_from_the_start(tmp_path, notes):
    store = open_store(tmp_path / "new.db")
    try:
        assert not _without_rowid(store, "embeddings")
        assert not store.scalar("SELECT 1 FROM sqlite_master WHERE name = 'chunk_vectors'")
        write_files(notes, {"a.md": "# A\n\nalpha\n"})
        add_source(store, notes)
        reindex(store, CountingEmbedder())
        assert store.scalar("SELECT count(*) FROM vector_codes") == store.scalar("SELECT count(*) FROM chunks") == 1
    finally:
        store.close()


def _store_before_m007(tmp_path, monkeypatch, embedder) -> tuple:
    """A store as the code before m007 left it: float32 vectors, trigram positions kept."""
    files = {
        "limiter.py": "class RateLimiter:\n    def throttle(self):\n        return 'ratelimited'\n",
        **{f"n{i}.md": f"# Note {i}\n\nkestrel falcon number {i}\n" for i in range(12)},
    }
    store, rows, matrix = _indexed_without_vectors(
        tmp_path / "m006.db", monkeypatch, migrations.m007_half_vectors_and_substring_index, files, embedder
    )

    def sign_code(cid: int, vec: np.ndarray, blob: bytes) -> None:
        store.execute(
            "INSERT INTO vector_codes (chunk_id, code) VALUES (?, ?)", (cid, vectors_repo.sign_bits(vec).tobytes())
        )

    with store.atomic():  # what vectors.prepare() and write_vectors() did then
        _write_vectors_as_then(store, embedder, rows, matrix, sign_code)
    assert "detail" not in store.scalar("SELECT sql FROM sqlite_master WHERE name = 'chunks_tri'")
    return _closed(store, monkeypatch, tmp_path / "m006.db")


def test_m007_halves_the_vectors_and_drops_trigram_positions_without_re_embedding(tmp_path, monkeypatch):
    embedder = CountingEmbedder()
    db, cache = _store_before_m007(tmp_path, monkeypatch, embedder)
    heard: list[str] = []
    store = open_store(db, report=heard.append)
    try:
        assert "m007_half_vectors_and_substring_index" in [r[0] for r in store.execute("SELECT name FROM migrations")]
        assert dict(store.execute("SELECT input_sha, vector FROM embeddings")) == {
            sha: _half(blob) for sha, blob in cache.items()
        }
        sha_of = dict(store.execute("SELECT id, input_sha FROM chunks"))
        for cid, vec in vectors_repo.vectors_for_chunks(store, embedder.fingerprint, list(sha_of)).items():
            original = np.frombuffer(cache[sha_of[cid]], dtype=np.float32)
            assert vec.dtype == np.float32 and np.allclose(vec, original, atol=1e-3)
        assert "detail='none'" in store.scalar("SELECT sql FROM sqlite_master WHERE name = 'chunks_tri'")
        store.execute("INSERT INTO chunks_tri(chunks_tri, rank) VALUES ('integrity-check', 1)")
        assert store.scalar("SELECT count(*) FROM chunks_tri") == store.scalar("SELECT count(*) FROM chunks")
        assert any("Upgrading" in m for m in heard) and any("VACUUM" in m for m in heard)
        engine = SearchEngine(store, embedder)
        hits = engine.search("ratelimi", SearchOptions(limit=5, mode="lexical")).hits
        assert [h.path for h in hits] == ["limiter.py"] and "trigram" in hits[0].breakdown.lists
        again = CountingEmbedder()
        reindex(store, again)
        assert again.embedded == []  # nothing embedded again
        result = engine.search("kestrel falcon", SearchOptions(limit=5, mode="vector"))
        assert result.hits and all("vector" in h.breakdown.lists for h in result.hits)
        # The triggers feed the new table: an edit is found by its new substring.
        write_files(tmp_path / "notes", {"limiter.py": "class TokenBucketThrottle:\n    pass\n"})
        reindex(store, again)
        assert [h.path for h in engine.search("tokenbucket", SearchOptions(mode="lexical")).hits] == ["limiter.py"]
        assert engine.search("ratelimi", SearchOptions(mode="lexical")).hits == []
    finally:
        store.close()
