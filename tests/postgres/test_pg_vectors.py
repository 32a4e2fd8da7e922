"""The team store's nearest vectors under the default filter, and beside the keyword
statements (issue #23 item 8).

The default filter leaves test files out, so pgvector's walk of ef_search rows leaves
fewer than the 400 candidates asked for.  That walk is the answer; every such query
used to be followed by an exact scan of every row (1 s a query at 100k chunks)."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import psycopg

from contract.seed import DIM, FINGERPRINT, add_document, add_source, unit, write_vectors
from kenning.core.filters import ChunkFilter
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres import vectors as pg_vectors
from kenning_testing import CountingEmbedder, index_folder, write_files

NOTES = {
    "failover.md": "# Database failover\n\nPromote the replica when the primary is down; the replica takes the writes.\n",
    "deploy.md": "# Deploys\n\nRoll back a bad deploy with the previous image, then tell the on-call engineer.\n",
    "oncall.md": "# On call\n\nThe on-call engineer promotes a replica when the primary database fails.\n",
}


def _store_with_test_files(pg_url, chunks: int = 900, every_test: int = 5):
    store = open_pg_store(pg_url)
    source = add_source(store, "code")
    rng = np.random.default_rng(3)
    vectors = {}
    for doc in range(chunks // 10):
        is_test = doc % every_test == 0
        ids = add_document(
            store, source, f"{'test_' if is_test else ''}m{doc}.py", [f"c{doc} {i}" for i in range(10)], is_test=is_test
        )
        vectors.update({cid: unit(rng.standard_normal(DIM).astype(np.float32)) for cid in ids})
    write_vectors(store, vectors)
    return store


def test_a_walk_the_default_filter_thins_is_the_answer_not_an_exact_scan(pg_server, pg_database, pg_url):
    _store_with_test_files(pg_url).close()
    # As on a large store: the planner walks the index (on 900 rows it would sort them all).
    pg_server.admin(f'ALTER DATABASE "{pg_database}" SET enable_sort = off')
    pg_server.admin("ANALYZE", database=pg_database)
    store = open_pg_store(pg_url)
    statements: list[str] = []
    query = store.query

    def counted(sql, params=(), **kw):
        statements.append(sql)
        return query(sql, params, **kw)

    store.query = counted  # type: ignore[method-assign]
    probe = unit(np.random.default_rng(9).standard_normal(DIM).astype(np.float32))
    found = store.vectors.nearest(FINGERPRINT, probe, ChunkFilter(), 10)
    assert not any("enable_indexscan" in s for s in statements), "fell back to ranking every row"
    assert 200 <= len(found.ids) <= pg_vectors.CANDIDATES
    tests = {
        int(r[0])
        for r in store.execute("SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.is_test")
    }
    assert not tests & set(found.ids.tolist())
    store.close()


def test_a_filter_that_leaves_few_rows_still_gets_the_exact_nearest(pg_url):
    store = _store_with_test_files(pg_url)
    probe = unit(np.random.default_rng(5).standard_normal(DIM).astype(np.float32))
    only = ChunkFilter(test_files="only", paths=("test_m0.py",))
    found = store.vectors.nearest(FINGERPRINT, probe, only, 3)
    rows = store.execute(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.rel_path = 'test_m0.py'"
    )
    assert sorted(found.ids.tolist()) == sorted(int(r[0]) for r in rows)
    store.close()


def test_the_walk_runs_while_a_statement_runs_on_the_store_connection(pg_server, pg_database, pg_url):
    """A search's keyword statements hold the store's connection; its vector walk runs on a
    connection of its own meanwhile (a team server's second process walks the index)."""
    store = _store_with_test_files(pg_url)
    probe = unit(np.random.default_rng(11).standard_normal(DIM).astype(np.float32))
    alone = store.vectors.nearest(FINGERPRINT, probe, ChunkFilter(), 10)
    finished = threading.Event()

    def long_statement():
        with contextlib.suppress(psycopg.errors.QueryCanceled):
            store.execute("SELECT pg_sleep(20)")
        finished.set()

    sleeper = threading.Thread(target=long_statement, daemon=True)
    sleeper.start()
    deadline = time.monotonic() + 20
    while not pg_server.admin(
        "SELECT 1 FROM pg_stat_activity WHERE datname = %s AND state = 'active' AND query LIKE 'SELECT pg_sleep%%'",
        (pg_database,),
    ):
        assert time.monotonic() < deadline, "the long statement never started"
        time.sleep(0.05)  # polling interval
    found = store.vectors.nearest(FINGERPRINT, probe, ChunkFilter(), 10)
    assert not finished.is_set(), "the walk waited for the statement on the store's connection"
    assert found.ids.tolist() == alone.ids.tolist()
    pg_server.admin(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = %s AND query LIKE 'SELECT pg_sleep%%'",
        (pg_database,),
    )
    sleeper.join(20)
    store.close()


def test_a_hybrid_search_finds_the_same_with_the_walk_beside_the_keywords_or_after(tmp_path, pg_url):
    embedder = CountingEmbedder()
    store = open_pg_store(pg_url)
    index_folder(store, write_files(tmp_path / "notes", NOTES), embedder, name="notes")
    engine = SearchEngine(store, embedder)
    found = {}
    for concurrent in (True, False):
        store.vectors.concurrent = concurrent  # type: ignore[misc]
        found[concurrent] = [
            [(h.chunk_id, h.breakdown.lists) for h in engine.search(text, SearchOptions(limit=5, mode="hybrid")).hits]
            for text in ("replica primary failover", "roll back a deploy", "engineer on call")
        ]
    assert found[True] == found[False]
    assert all(found[True])
    store.close()


def test_a_walk_is_two_statements_and_hands_on_the_stored_vectors(pg_url, monkeypatch):
    """The model's settings with the walk's width, then the walk: no transaction around
    them (a BEGIN and a COMMIT are round trips too), and the vectors read in pgvector's
    binary form are the stored float32 values."""
    from psycopg import _connection_base

    store = _store_with_test_files(pg_url)
    sent: list[str] = []
    execute, command = psycopg.Cursor.execute, _connection_base.BaseConnection._exec_command

    def counted_execute(cur, query, *args, **kwargs):
        sent.append(str(query))
        return execute(cur, query, *args, **kwargs)

    def counted_command(conn, cmd, *args, **kwargs):
        sent.append(cmd.decode() if isinstance(cmd, bytes) else str(cmd))
        return (yield from command(conn, cmd, *args, **kwargs))

    monkeypatch.setattr(psycopg.Cursor, "execute", counted_execute)
    monkeypatch.setattr(_connection_base.BaseConnection, "_exec_command", counted_command)
    probe = unit(np.random.default_rng(13).standard_normal(DIM).astype(np.float32))
    everything = ChunkFilter(test_files="included")
    rows = pg_vectors.nearest_rows(store, FINGERPRINT, probe, everything, 50, with_vectors=True)
    assert len(sent) == 2, sent
    assert "hnsw.ef_search" in sent[0] and "<=>" in sent[1]
    monkeypatch.undo()
    assert len(rows) == 50
    as_arrays = store.execute("SELECT id, embedding::real[] FROM chunks WHERE id = ANY(%s)", ([r[0] for r in rows],))
    stored = {int(cid): np.asarray(values, dtype=np.float32) for cid, values in as_arrays}
    assert store.vectors.vectors_of(FINGERPRINT, list(stored)).keys() == stored.keys()
    assert all(np.array_equal(v, stored[c]) for c, v in store.vectors.vectors_of(FINGERPRINT, list(stored)).items())
    for cid, cosine, vector in rows:
        assert vector is not None and vector.dtype == np.float32
        assert np.array_equal(vector, stored[cid])
        assert abs(float(vector @ probe) - cosine) < 1e-5
    (width,) = store.execute("SHOW hnsw.ef_search")[0]
    assert int(width) == pg_vectors.EF_SEARCH
    store.close()


def test_a_walk_under_an_unchanged_token_asks_no_settings_and_sees_a_new_model(pg_url, monkeypatch):
    """While the change token a search read is the same, the walk's settings are known:
    the walk is one statement.  A model changed by another connection since, unseen by
    any token read, is still found: the walk checks the settings inside it."""
    store = _store_with_test_files(pg_url, chunks=200)
    probe = unit(np.random.default_rng(17).standard_normal(DIM).astype(np.float32))
    everything = ChunkFilter(test_files="included")
    store.version()
    first = store.vectors.nearest(FINGERPRINT, probe, everything, 10)
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def counted(cur, query, *args, **kwargs):
        sent.append(str(query))
        return execute(cur, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", counted)
    again = store.vectors.nearest(FINGERPRINT, probe, everything, 10)
    assert [s for s in sent if "<=>" in s] and len(sent) == 1, sent
    monkeypatch.undo()
    assert again.ids.tolist() == first.ids.tolist()
    other = open_pg_store(pg_url)  # another machine's indexer: a new model, every vector anew
    ids = [int(r[0]) for r in other.execute("SELECT id FROM chunks ORDER BY id")]
    write_vectors(other, {cid: unit(np.roll(probe, cid)) for cid in ids}, fingerprint="new-model|16|1")
    other.close()
    found = store.vectors.nearest("new-model|16|1", probe, everything, 10)  # no token read between
    assert len(found.ids) == len(ids)
    assert store.vectors.nearest(FINGERPRINT, probe, everything, 10).ids.tolist() == []
    store.close()
