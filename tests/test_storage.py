import os
import stat

import pytest

from kenning.core.errors import StoreError, StoreUnusable
from kenning.storage import open_store
from kenning.storage.migrations import MIGRATIONS
from kenning.workspace import user_message


def test_fresh_store_is_migrated_with_pragmas(tmp_path):
    store = open_store(tmp_path / "a" / "k.db")
    assert [r[0] for r in store.execute("SELECT name FROM migrations")] == [m.__name__ for m in MIGRATIONS]
    assert store.scalar("PRAGMA journal_mode") == "wal"
    assert store.scalar("PRAGMA foreign_keys") == 1
    store.close()


def test_store_and_folder_are_private(tmp_path):
    path = tmp_path / "private" / "k.db"
    open_store(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_reopening_applies_nothing_twice(tmp_path):
    path = tmp_path / "k.db"
    open_store(path).close()
    store = open_store(path)
    assert store.scalar("SELECT count(*) FROM migrations") == len(MIGRATIONS)
    store.close()


def test_newer_schema_is_refused_clearly(tmp_path):
    path = tmp_path / "k.db"
    store = open_store(path)
    with store.atomic():
        store.execute("INSERT INTO migrations VALUES ('m999_future', 0)")
    store.close()
    with pytest.raises(StoreUnusable) as refused:
        open_store(path)
    # Storage says what happened; the application layer words it (it names CLI commands).
    assert (refused.value.kind, refused.value.detail) == ("newer", "m999_future")
    message = user_message(refused.value)
    assert "written by a newer Kenning (schema m999_future)" in message and "kenning rebuild" in message


def test_garbage_file_is_reported_as_damaged(tmp_path):
    path = tmp_path / "k.db"
    path.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(StoreError, match="damaged"):
        open_store(path)


def test_nested_atomic_rolls_back_only_inner(store):
    with store.atomic():
        store.execute("INSERT INTO settings VALUES ('a', '1')")
        with pytest.raises(RuntimeError), store.atomic():
            store.execute("INSERT INTO settings VALUES ('b', '2')")
            raise RuntimeError("boom")
    assert [r[0] for r in store.execute("SELECT key FROM settings ORDER BY key")] == ["a"]


def test_version_changes_with_any_commit_on_any_connection(tmp_path):
    from kenning.storage.settings import set_setting

    db = tmp_path / "v.db"
    with open_store(db) as mine, open_store(db) as other:
        first = mine.version()
        assert mine.version() == first  # reading changes nothing
        set_setting(other, "k", "1")
        second = mine.version()
        assert second != first
        set_setting(mine, "k", "2")
        assert mine.version() != second


def test_fetch_fills_fields_by_column_name_not_position(tmp_path):
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Pair:
        left: int
        right: str

    with open_store(tmp_path / "f.db") as store:
        assert store.fetch(Pair, "SELECT 'r' AS right, 1 AS left") == [Pair(1, "r")]
        assert store.fetch(Pair, "SELECT 1 AS left, 'r' AS right WHERE 0") == []


def test_in_batches_covers_every_value_once_in_order():
    from kenning.storage.batching import in_batches

    values = list(range(1234))
    parts = list(in_batches(values, size=500))
    assert [len(p) for p, _ in parts] == [500, 500, 234]
    assert [v for p, _ in parts for v in p] == values
    assert all(marks.count("?") == len(p) for p, marks in parts)
    assert list(in_batches([])) == []


def test_m014_restores_the_roots_an_older_store_kept_as_they_were(tmp_path):
    """Roots were kept as they are before m014; one holding a backslash the escape would
    misread (a doubled one, `\\xe9` typed as text) is re-stored, so each still names its
    own folder (#24 case 23); a root without one is left alone."""
    roots = ["/old/a\\\\b", "/old/caf\\xe9", "/old/plain", "/old/back\\slash"]
    path = tmp_path / "k.db"
    store = open_store(path)
    with store.atomic():
        for n, root in enumerate(roots):  # as the code before m014 wrote them
            store.execute(
                "INSERT INTO sources (kind, root, name, include_globs, exclude_globs, added_at)"
                " VALUES ('folder', ?, ?, '[]', '[]', 0)",
                (root, f"s{n}"),
            )
        store.execute("DELETE FROM migrations WHERE name = 'm014_roots_stored_as_names'")
    store.close()
    store = open_store(path)
    try:
        assert [s.root for s in store.sources.list()] == roots
        assert store.scalar("SELECT root FROM sources WHERE name = 's2'") == "/old/plain"
    finally:
        store.close()
