"""Migration m006 (issue #15): a store written by the code before it — the embedding cache
in a WITHOUT ROWID table and a float32 copy of each vector in sqlite-vec — is converted
in place, every vector carried over and nothing embedded again."""

from __future__ import annotations

import numpy as np

from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import migrations, open_store
from kenning.storage import vectors as vectors_repo
from kenning.storage.connection import Store
from kenning_testing import CountingEmbedder, reindex, write_files


def _old_store(tmp_path, monkeypatch, embedder) -> tuple:
    """A store exactly as the code before m006 left it after indexing with embedder."""
    monkeypatch.setattr(
        migrations,
        "MIGRATIONS",
        migrations.MIGRATIONS[: migrations.MIGRATIONS.index(migrations.m006_vectors_stored_once)],
    )
    db = tmp_path / "old.db"
    store = open_store(db)
    notes = write_files(
        tmp_path / "notes",
        {f"n{i}.md": f"# Note {i}\n\nkestrel falcon number {i}\n\n## More\n\nosprey {i}\n" for i in range(15)},
    )
    add_source(store, notes, name="notes")
    Indexer(store, None).run(embed=False)
    rows = store.execute("SELECT id, title, text, input_sha FROM chunks ORDER BY id")
    matrix = embedder.embed_batch([f"{title}\n{text}" for _, title, text, _ in rows])
    with store.atomic():  # what vectors.prepare() and write_vectors() did then
        store.execute("INSERT INTO settings (key, value) VALUES ('vector_fingerprint', ?)", (embedder.fingerprint,))
        store.execute("INSERT INTO settings (key, value) VALUES ('vector_dim', ?)", (str(embedder.dim),))
        store.execute(
            "CREATE VIRTUAL TABLE chunk_vectors USING vec0("
            f"chunk_id INTEGER PRIMARY KEY, embedding float[{embedder.dim}] distance_metric=cosine)"
        )
        for (cid, _, _, sha), vec in zip(rows, matrix):
            blob = np.ascontiguousarray(vec, dtype=np.float32).tobytes()
            store.execute(
                "INSERT INTO embeddings (fingerprint, input_sha, vector) VALUES (?, ?, ?)",
                (embedder.fingerprint, sha, blob),
            )
            store.execute("INSERT INTO chunk_vectors (chunk_id, embedding) VALUES (?, ?)", (cid, blob))
            store.execute("UPDATE chunks SET vector_fp = ? WHERE id = ?", (embedder.fingerprint, cid))
    cache = dict(store.execute("SELECT input_sha, vector FROM embeddings"))
    store.close()
    monkeypatch.undo()
    return db, cache


def _without_rowid(store: Store, table: str) -> bool:
    sql = store.scalar("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
    return "WITHOUT ROWID" in sql.upper()


def test_an_old_store_is_converted_without_re_embedding(tmp_path, monkeypatch):
    embedder = CountingEmbedder()
    db, cache = _old_store(tmp_path, monkeypatch, embedder)
    store = open_store(db)  # applies m006
    try:
        applied = [r[0] for r in store.execute("SELECT name FROM migrations")]
        assert applied[-1] == "m006_vectors_stored_once"
        assert not store.scalar("SELECT 1 FROM sqlite_master WHERE name = 'chunk_vectors'")  # the second copy is gone
        assert not _without_rowid(store, "embeddings")  # no more overflow pages per row
        assert dict(store.execute("SELECT input_sha, vector FROM embeddings")) == cache  # every vector, bit for bit
        chunks = store.scalar("SELECT count(*) FROM chunks")
        assert store.scalar("SELECT count(*) FROM vector_codes") == chunks
        for cid, code in store.execute("SELECT chunk_id, code FROM vector_codes"):
            vec = vectors_repo.vectors_for_chunks(store, embedder.fingerprint, [cid])[cid]
            assert code == vectors_repo.sign_bits(vec).tobytes()
        assert vectors_repo.count_pending(store) == 0
        again = CountingEmbedder()
        reindex(store, again)
        assert again.embedded == []  # nothing embedded twice
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
