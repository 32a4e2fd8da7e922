"""An unreachable or restarting team store: a clear message, and work resumes by itself (#23 item 9)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from kenning.core.errors import StoreError
from kenning.core.filters import ChunkFilter
from kenning.storage.api import KeywordQuery
from kenning.storage.postgres import open_pg_store
from pgtesting import start_server, stop_server


@pytest.fixture(scope="module")
def own_server():
    """A server of this module's own: these tests stop and restart it."""
    server = start_server(Path(tempfile.mkdtemp(prefix="kenning-pg-restart-")) / "data")
    yield server
    stop_server(server)


def _search(store):
    return store.keywords.ranked("porter", KeywordQuery(terms=("failover",)), ChunkFilter(), 5, weights=(3.0, 1.0))


def test_an_unreachable_server_is_said_plainly_without_the_password(tmp_path):
    target = f"postgresql://alice:s3cret-pw@/kb?host={tmp_path}/nowhere&connect_timeout=2"
    with pytest.raises(StoreError) as failed:
        open_pg_store(target)
    message = str(failed.value)
    assert "Cannot reach the team store alice@local socket/kb" in message
    assert "s3cret-pw" not in message and "Your personal store still works" in message


def test_a_restarted_server_is_reconnected_to(own_server):
    database = own_server.new_database()
    store = open_pg_store(own_server.url(database))
    store.sources.add(kind="folder", root="/r", name="runbooks")
    assert _search(store).ranked == []
    own_server.restart()
    assert _search(store).ranked == []  # the dropped connection was made anew
    assert [s.name for s in store.sources.list()] == ["runbooks"]
    own_server.stop()
    try:
        with pytest.raises(StoreError, match="Cannot reach the team store"):
            _search(store)
    finally:
        own_server.start()
    assert [s.name for s in store.sources.list()] == ["runbooks"]
    store.close()


def test_a_connection_lost_while_indexing_ends_the_run_with_a_message(own_server):
    database = own_server.new_database()
    store = open_pg_store(own_server.url(database))
    with pytest.raises(StoreError, match="lost while indexing"), store.indexing_lock():
        own_server.restart()
        store.sources.add(kind="folder", root="/r", name="runbooks")  # its lock would be gone: refused
    assert [s.name for s in store.sources.list()] == []
    store.close()
