"""Indexing a source takes an advisory lock on the server, per source (#23 item 4).

Two machines may index different sources of a team store side by side; never the same
source, and never beside an indexer of the whole store.  Each embeds its own sources'
chunks only, so two indexers never compute the same vectors twice."""

from __future__ import annotations

import pytest

from kenning.core.errors import StoreLockedError
from kenning.core.types import ChunkDraft, Document
from kenning.storage.postgres import open_pg_store
from kenning_testing import write_files

from .test_pg_cli import _kenning


def test_two_connections_hold_different_sources_never_the_same_one(pg_url):
    first, second, third = (open_pg_store(pg_url) for _ in range(3))
    try:
        runbooks = first.sources.add(kind="folder", root="/srv/runbooks", name="runbooks")
        adrs = first.sources.add(kind="folder", root="/srv/adrs", name="adrs")
        with first.indexing_lock(sources=[runbooks.id]), second.indexing_lock(sources=[adrs.id]):
            with (
                pytest.raises(StoreLockedError, match="runbooks in the team store"),
                third.indexing_lock(sources=[adrs.id, runbooks.id]),
            ):
                pass
            with pytest.raises(StoreLockedError, match="working on the team store"), third.indexing_lock():
                pass
        # All given back: the whole store may be taken, and then no source.
        with second.indexing_lock(), pytest.raises(StoreLockedError), first.indexing_lock(sources=[adrs.id]):
            pass
        with third.indexing_lock(sources=[adrs.id, runbooks.id]):
            pass
    finally:
        for store in (first, second, third):
            store.close()


def _pending(url: str) -> dict[str, int]:
    store = open_pg_store(url)
    try:
        rows = store.execute(
            "SELECT s.name, count(*) FILTER (WHERE c.vector_fp IS NULL) FROM sources s"
            " JOIN documents d ON d.source_id = s.id JOIN chunks c ON c.document_id = d.id GROUP BY s.name"
        )
        return {name: int(n) for name, n in rows}
    finally:
        store.close()


def _half_indexed(store, source) -> None:
    """What an indexer has written of a source before embedding: a document, no vector."""
    record = Document(source.id, "failover.md", "x", 1, 1.0, None, None, "markdown", "Failover", (), "md", False)
    store.documents.replace(record, [ChunkDraft(0, "Failover", "prose", "Promote the replica.", 1, 1)], {}, {0: "s"})


def test_kenning_index_of_another_source_runs_beside_a_running_indexer(tmp_path, pg_url):
    """Machine 1 is indexing `runbooks` (it holds the lock and has written a chunk not yet
    embedded); machine 2 runs `kenning --store … index` as a user would."""
    home = tmp_path / "home"
    folders = {
        "adrs": write_files(
            tmp_path / "adrs", {"0001-postgres.md": "# Use PostgreSQL\n\nThe team store runs on it.\n"}
        ),
        "runbooks": write_files(tmp_path / "runbooks", {"deploy.md": "# Deploys\n\nRoll back a bad deploy.\n"}),
    }
    for name, folder in folders.items():
        assert _kenning(home, "--store", pg_url, "sources", "add", str(folder), "--name", name).returncode == 0
    machine1 = open_pg_store(pg_url)
    try:
        runbooks = machine1.sources.get("runbooks")
        with machine1.indexing_lock(sources=[runbooks.id]):
            _half_indexed(machine1, runbooks)
            other = _kenning(home, "--store", pg_url, "index", "adrs")
            assert other.returncode == 0, other.stderr
            assert "1 added" in other.stdout
            assert _pending(pg_url) == {"adrs": 0, "runbooks": 1}  # machine 1's chunk is machine 1's to embed
            same = _kenning(home, "--store", pg_url, "index", "runbooks")
            assert same.returncode != 0
            assert "Another Kenning indexer is working on runbooks" in same.stderr
            everything = _kenning(home, "--store", pg_url, "index")
            assert everything.returncode != 0 and "Another Kenning indexer" in everything.stderr
    finally:
        machine1.close()  # its connection ends: so does its lock
    after = _kenning(home, "--store", pg_url, "index", "runbooks")
    assert after.returncode == 0, after.stderr
    assert _pending(pg_url) == {"adrs": 0, "runbooks": 0}
