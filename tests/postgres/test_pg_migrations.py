"""The team store's schema is versioned: each migration converts a store made before it (#23 item 2)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from contract.seed import DIM, FINGERPRINT
from kenning.core.errors import StoreError
from kenning.storage.postgres import open_pg_store, schema
from kenning.storage.postgres.connection import PgStore
from kenning.storage.postgres.words import Words, indexed_title
from pgtesting import add_notes, statistics_problems

TEXTS = [
    ("Rollback plan", "roll back the deploy, roll back again"),
    ("Weather", "the weather and the wind " * 200),
    ("Many words", " ".join(f"word{i} the" for i in range(900))),  # counts too large for the row: tf_big
]


def _m001_store(url: str) -> None:
    """A store as m001 left it, with chunks written the way m001's writer wrote them."""
    store = PgStore(url)
    original = schema.MIGRATIONS
    schema.MIGRATIONS = [schema.m001_team_store]
    try:
        schema.migrate(store)
    finally:
        schema.MIGRATIONS = original
    words = Words()
    with store.atomic():
        sid = store.scalar(
            "INSERT INTO sources (kind, root, name, added_at) VALUES ('folder', '/r', 'n', 0) RETURNING id"
        )
        for number, (title, text) in enumerate(TEXTS):
            did = store.scalar(
                "INSERT INTO documents (source_id, rel_path, sha256, size, mtime, kind, title)"
                " VALUES (%s, %s, 'x', 1, 1, 'markdown', 't') RETURNING id",
                (sid, f"d{number}.md"),
            )
            w = words.chunk_words(indexed_title(title, ""), text)
            title_terms, text_terms = words.tokenize(title), words.tokenize(text)
            store.execute(
                "INSERT INTO chunks (document_id, ord, title, kind, text, line_start, line_end, input_sha,"
                " words, title_tf, text_tf, word_count, grams, gram_count)"
                " VALUES (%s, 0, %s, 'prose', %s, 1, 1, 's', %s::tsvector, %s, %s, %s, %s, %s)",
                (
                    did,
                    title,
                    text,
                    w.words,
                    json.dumps(Counter(title_terms)),
                    json.dumps(Counter(text_terms)),
                    w.word_count,
                    w.grams,
                    w.gram_count,
                ),
            )
    store.close()


def _written_before(migration, url: str, monkeypatch) -> PgStore:
    """The store at url made and written (TEXTS) by a Kenning without `migration`, left
    open; the migrations are whole again, so opening the store anew applies it."""
    monkeypatch.setattr(schema, "MIGRATIONS", [m for m in schema.MIGRATIONS if m is not migration])
    old = open_pg_store(url)
    add_notes(old, TEXTS)
    monkeypatch.undo()
    return old


def test_m002_converts_a_store_made_by_m001(pg_server):
    old_db, new_db = pg_server.new_database(), pg_server.new_database()
    try:
        _m001_store(pg_server.url(old_db))
        converted = open_pg_store(pg_server.url(old_db))  # applies m002
        assert [r[0] for r in converted.execute("SELECT name FROM migrations ORDER BY name")] == [
            m.__name__ for m in schema.MIGRATIONS
        ]
        fresh = open_pg_store(pg_server.url(new_db))
        add_notes(fresh, TEXTS)
        for store in (converted, fresh):
            assert not statistics_problems(store)
        query = [("roll",), ("weather",), ("the",), ("word17",)]
        from kenning.storage.postgres import lexical

        assert [(r.chunk_id, round(r.score, 12)) for r in lexical.ranked(converted, query, (3.0, 1.0), 5)] == [
            (r.chunk_id, round(r.score, 12)) for r in lexical.ranked(fresh, query, (3.0, 1.0), 5)
        ]
        big = converted.scalar("SELECT count(*) FROM chunks WHERE tf_big IS NOT NULL")
        assert big == fresh.scalar("SELECT count(*) FROM chunks WHERE tf_big IS NOT NULL") == 1
        converted.close()
        fresh.close()
    finally:
        pg_server.drop_database(old_db)
        pg_server.drop_database(new_db)


def test_a_store_from_a_newer_kenning_is_refused(pg_url):
    store = open_pg_store(pg_url)
    store.execute("INSERT INTO migrations VALUES ('m999_future', 0)")
    store.close()
    with pytest.raises(StoreError, match="newer Kenning"):
        open_pg_store(pg_url)


def test_m003_makes_two_character_cjk_words_of_a_store_made_before_findable(pg_server):
    """A team store written before m003 kept trigrams only: its CJK pairs are added once."""
    from kenning.storage.postgres import lexical

    database = pg_server.new_database()
    try:
        old = open_pg_store(pg_server.url(database))
        add_notes(old, [("检索评估", "这个系统的召回率很高。"), ("Recall", "Plain English about recall.")])
        # As the writer before m003 left them: trigrams only.
        old.execute("UPDATE chunks SET grams = ARRAY(SELECT g FROM unnest(grams) g WHERE length(g) = 3)")
        old.execute("DELETE FROM migrations WHERE name = 'm003_cjk_pairs'")
        assert lexical.ranked_substrings(old, ["召回"], (3.0, 1.0), 5) == []
        old.close()
        converted = open_pg_store(pg_server.url(database))  # applies m003
        assert [r.chunk_id for r in lexical.ranked_substrings(converted, ["召回"], (3.0, 1.0), 5)] == [
            converted.scalar(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.rel_path = 'd0.md'"
            )
        ]
        assert lexical.ranked_substrings(converted, ["评估"], (3.0, 1.0), 5)  # the title's pairs too
        assert not statistics_problems(converted)
        converted.close()
    finally:
        pg_server.drop_database(database)


def test_m005_restores_the_roots_a_store_made_before_kept_as_they_were(pg_server):
    """Roots were kept as they are before m005; one holding a backslash the escape would
    misread is re-stored, so each still names its own folder (#24 case 23, as SQLite's m014)."""
    roots = ["/old/a\\\\b", "/old/caf\\xe9", "/old/plain", "/old/back\\slash"]
    database = pg_server.new_database()
    try:
        old = open_pg_store(pg_server.url(database))
        for n, root in enumerate(roots):  # as the writer before m005 wrote them
            old.execute(
                "INSERT INTO sources (kind, root, name, added_at) VALUES ('folder', %s, %s, 0)", (root, f"s{n}")
            )
        old.execute("DELETE FROM migrations WHERE name = 'm005_roots_stored_as_names'")
        old.close()
        converted = open_pg_store(pg_server.url(database))  # applies m005
        assert [s.root for s in converted.sources.list()] == roots
        assert converted.scalar("SELECT root FROM sources WHERE name = 's2'") == "/old/plain"
        converted.close()
    finally:
        pg_server.drop_database(database)


def _vector_index_options(store) -> list[str]:
    from kenning.storage.postgres.vectors import INDEX_PREFIX

    rows = store.execute("SELECT reloptions FROM pg_class WHERE relname = %s", (f"{INDEX_PREFIX}{DIM}",))
    return sorted(rows[0][0]) if rows else []


def test_m006_rebuilds_a_vector_index_built_before_with_the_wider_graph(pg_server):
    """Built at ef_construction 64 the index found 0.904 of the true top 100 at 1M chunks
    (#23 item 8): a store made before m006 gets its index rebuilt, under the same name,
    and a writer's next index (make_vector_index) is built with the new options too."""
    import numpy as np

    from contract.seed import add_document, add_source, unit, write_vectors
    from kenning.core.filters import ChunkFilter
    from kenning.storage.postgres.vectors import INDEX_PREFIX, INDEX_RELOPTIONS

    database = pg_server.new_database()
    try:
        old = open_pg_store(pg_server.url(database))
        source = add_source(old, "notes")
        ids = add_document(old, source, "a.md", [f"chunk {n}" for n in range(40)])
        rng = np.random.default_rng(6)
        vectors = {cid: unit(rng.standard_normal(DIM).astype(np.float32)) for cid in ids}
        write_vectors(old, vectors)
        # As a store made before m006: m004's function, and the index it built.
        old.execute(schema._make_vector_index_function("m = 16, ef_construction = 64"))
        old.execute(f"DROP INDEX {INDEX_PREFIX}{DIM}")
        old.execute(f"SELECT make_vector_index({DIM}, NULL)")
        old.execute("DELETE FROM migrations WHERE name = 'm006_vector_index_rebuilt'")
        assert _vector_index_options(old) == ["ef_construction=64", "m=16"]
        old.close()
        converted = open_pg_store(pg_server.url(database))  # applies m006
        assert _vector_index_options(converted) == sorted(INDEX_RELOPTIONS)
        probe = unit(rng.standard_normal(DIM).astype(np.float32))
        nearest = max(ids, key=lambda cid: float(vectors[cid] @ probe))
        assert converted.vectors.nearest(FINGERPRINT, probe, ChunkFilter(), 1).ids.tolist()[0] == nearest
        converted.execute(f"DROP INDEX {INDEX_PREFIX}{DIM}")
        converted.execute(f"SELECT make_vector_index({DIM}, NULL)")  # as vectors.prepare does for a writer
        assert _vector_index_options(converted) == sorted(INDEX_RELOPTIONS)
        converted.close()
    finally:
        pg_server.drop_database(database)


def test_m007_gives_a_store_made_before_its_postings_and_keeps_them(pg_server, monkeypatch):
    """A store written before m007 gets one posting per term of each chunk (tf_big's
    included), and its writes keep them from then on (#23 item 8)."""
    database = pg_server.new_database()
    try:
        old = _written_before(schema.m007_impact_ordered_postings, pg_server.url(database), monkeypatch)
        assert not old.scalar("SELECT to_regclass('postings') IS NOT NULL")
        old.close()
        converted = open_pg_store(pg_server.url(database))  # applies m007
        assert converted.scalar("SELECT sum(chunks) FROM terms") == converted.scalar("SELECT count(*) FROM postings")
        assert converted.scalar("SELECT count(*) FROM postings WHERE term = 'word899'") == 1  # from tf_big
        assert not statistics_problems(converted)
        add_notes(converted, [("Later", "written after the upgrade: replica")], source="later")
        converted.documents.delete(
            [r[0] for r in converted.execute("SELECT id FROM documents WHERE rel_path = 'd1.md'")]
        )
        assert not statistics_problems(converted)
        converted.close()
    finally:
        pg_server.drop_database(database)


def test_m009_lets_the_filter_read_the_documents_from_an_index(pg_server, monkeypatch):
    """A default search's filter (enabled source, no test files) over every document, as the
    pruned keyword lists' statement works it out, is read from m009's index alone on a
    store made before it (#23 item 8: the table's rows cost 13.7-17 ms at 37,705 documents)."""
    database = pg_server.new_database()
    try:
        _written_before(schema.m009_document_filter_index, pg_server.url(database), monkeypatch).close()
        converted = open_pg_store(pg_server.url(database))  # applies m009
        assert not schema.pending(converted)
        converted.execute("VACUUM documents")  # the visibility map an index-only scan reads
        with converted.atomic():
            converted.execute("SET LOCAL enable_seqscan = off")  # a few rows: the planner would scan them
            plan = "\n".join(
                r[0]
                for r in converted.execute(
                    "EXPLAIN SELECT d.id FROM documents d JOIN sources s ON s.id = d.source_id"
                    " WHERE NOT coalesce((s.enabled AND NOT d.is_test), false)"
                )
            )
        assert "Index Only Scan using documents_filter_columns" in plan, plan
        converted.close()
    finally:
        pg_server.drop_database(database)
