"""Contract: transactions, the change token, several connections, the indexing lock."""

from __future__ import annotations

import threading
import time

import pytest

from kenning.core.errors import StoreLockedError
from kenning.core.filters import ChunkFilter
from kenning.storage import api, failure_kind

from .seed import FINGERPRINT, add_document, add_source, axis_vector, write_vectors


def test_atomic_nests_and_an_error_undoes_only_its_own_level(store):
    with store.atomic():
        store.settings.set("outer", "1")
        with pytest.raises(ValueError), store.atomic():
            store.settings.set("inner", "1")
            raise ValueError
    assert store.settings.get("outer") == "1" and store.settings.get("inner") is None
    with pytest.raises(ValueError), store.atomic():
        store.settings.set("outer", "2")
        raise ValueError
    assert store.settings.get("outer") == "1"


def test_the_change_token_moves_with_any_connections_commit_and_not_with_reads(store, second):
    before = store.version()
    store.sources.list()
    store.keywords.ranked("porter", api.KeywordQuery(("x",)), ChunkFilter(), 5, weights=(1, 1))
    assert store.version() == before
    second.settings.set("k", "v")
    after = store.version()
    assert after != before
    store.settings.set("k", "w")
    assert store.version() != after
    hash(store.version())  # a cache key


def test_another_connections_writes_are_seen(store, second):
    source = add_source(second, "notes")
    [cid] = add_document(second, source, "a.md", ["kestrel"])
    assert [s.name for s in store.sources.list()] == ["notes"]
    found = store.keywords.ranked("porter", api.KeywordQuery(("kestrel",)), ChunkFilter(), 5, weights=(1, 1))
    assert [r.chunk_id for r in found.ranked] == [cid]


def test_a_writer_waits_for_another_and_then_fails_as_busy(store, second):
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with second.atomic():
            second.settings.set("held", "1")
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        with pytest.raises(Exception) as raised, store.atomic(wait_ms=100):
            store.settings.set("mine", "1")
        assert failure_kind(raised.value) == "busy"
        assert time.monotonic() - started < 5
    finally:
        release.set()
        holder.join()
    with store.atomic(wait_ms=2000):
        store.settings.set("mine", "1")
    assert second.settings.get("mine") == "1"


def test_one_indexer_at_a_time(store, second):
    with store.indexing_lock(), pytest.raises(StoreLockedError), second.indexing_lock(wait_seconds=0.0):
        pass
    with second.indexing_lock():
        pass


def test_vectors_written_by_another_connection_join_nearest_whatever_their_chunk_id(store, second):
    """Several writers (or one embedding queue in value order, not id order) commit vectors
    for chunks of any id: nearest() sees each within STALE_SECONDS."""
    source = add_source(store, "notes")
    ids = add_document(store, source, "a.md", [f"chunk {i}" for i in range(12)])
    write_vectors(store, {cid: axis_vector(1) for cid in ids[6:]})  # the higher ids first
    query = axis_vector(0)
    assert ids[0] not in store.vectors.nearest(FINGERPRINT, query, ChunkFilter(), 3).ids.tolist()
    write_vectors(second, {ids[0]: axis_vector(0)})  # a lower id, committed later, elsewhere
    deadline = time.monotonic() + api.STALE_SECONDS + 5
    while ids[0] not in store.vectors.nearest(FINGERPRINT, query, ChunkFilter(), 3).ids.tolist():
        assert time.monotonic() < deadline, "a vector another connection wrote was never found"
        time.sleep(0.05)


def test_indexers_of_the_same_source_or_of_everything_never_run_side_by_side(store, second):
    """An indexer holds the sources it writes (#23 item 4): another indexer of one of them,
    or of the whole store, is refused, on every backend (a backend may lock more)."""
    a, b = add_source(store, "a"), add_source(store, "b")
    with store.indexing_lock(sources=[a.id, b.id]):
        for sources in ([a.id], [b.id, a.id], None):
            with pytest.raises(StoreLockedError), second.indexing_lock(wait_seconds=0.0, sources=sources):
                pass
    with store.indexing_lock(), pytest.raises(StoreLockedError), second.indexing_lock(wait_seconds=0.0, sources=[b.id]):
        pass
    with second.indexing_lock(sources=[a.id]):
        pass  # every lock above was given back
    with store.indexing_lock():
        pass
