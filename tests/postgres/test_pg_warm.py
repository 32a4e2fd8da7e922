"""Reading the team store's vector index ahead when the app has the model (issue #23 item 8).

After a server restart the server's shared buffers are empty, and each walk of the
first searches reads thousands of index pages from outside them (architecture §10
round 13).  vectors.warm() walks the index on a connection and a thread of its own,
from stored chunks' vectors, each walk EXPLAINed for the pages it read, until one read
at most WARM_ENOUGH of them there: on a server that holds them, one walk.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

from contract.seed import DIM, FINGERPRINT, add_document, add_source, unit, write_vectors
from kenning.core.filters import ChunkFilter
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres import vectors as pg_vectors


@pytest.fixture
def pg(pg_url):
    store = open_pg_store(pg_url)
    source = add_source(store, "code")
    rng = np.random.default_rng(4)
    vectors = {}
    for doc in range(30):
        ids = add_document(store, source, f"m{doc}.py", [f"c{doc} {i}" for i in range(10)])
        vectors.update({cid: unit(rng.standard_normal(DIM).astype(np.float32)) for cid in ids})
    write_vectors(store, vectors)
    yield store
    store.close()


def _walks_seen(store, monkeypatch) -> list[str]:
    """The walks warm_index sends on `store`."""
    sent: list[str] = []
    execute = store.execute

    def counted(sql, params=()):
        if sql.startswith("EXPLAIN"):
            sent.append(sql)
        return execute(sql, params)

    monkeypatch.setattr(store, "execute", counted)
    return sent


def test_a_server_that_holds_the_index_costs_one_walk(pg, monkeypatch):
    """The rows were just written: the server holds their pages, so the first walk reads
    none from outside its buffers and is the last."""
    walks = _walks_seen(pg, monkeypatch)
    done = pg_vectors.warm_index(pg, FINGERPRINT, ChunkFilter())
    assert done.walks == 1 and len(walks) == 1
    assert done.read_share is not None and done.read_share <= pg_vectors.WARM_ENOUGH
    assert "ORDER BY c.embedding::vector(16) <=>" in walks[0], "not a walk of the index"


def test_walks_go_on_while_they_read_outside_the_buffers_until_the_time_is_up(pg, monkeypatch):
    walks = _walks_seen(pg, monkeypatch)
    ticks = itertools.count()  # one second a reading of the clock
    done = pg_vectors.warm_index(pg, FINGERPRINT, ChunkFilter(), enough=-1.0, seconds=3.5, clock=lambda: next(ticks))
    assert done.walks == len(walks) == 3
    stop = threading.Event()
    stop.set()
    assert pg_vectors.warm_index(pg, FINGERPRINT, ChunkFilter(), enough=-1.0, stop=stop).walks == 0


def test_nothing_to_walk_without_vectors_of_the_model(pg):
    assert pg_vectors.warm_index(pg, "another-model|16|1", ChunkFilter()).walks == 0


def test_warm_reads_ahead_beside_the_caller_on_its_own_connection(pg, monkeypatch):
    """Store.vectors.warm returns at once (a search meanwhile runs beside it); the walks go
    on a connection of their own, never the store's or the searches' walker."""
    started, release = threading.Event(), threading.Event()
    warm_index = pg_vectors.warm_index
    used: list[object] = []

    def held_back(store, *args, **kwargs):
        used.append(store)
        started.set()
        release.wait(10)
        return warm_index(store, *args, **kwargs)

    monkeypatch.setattr(pg_vectors, "warm_index", held_back)
    pg.vectors.warm(FINGERPRINT)
    assert started.wait(10), "no read-ahead started"
    assert pg.vectors.wait_warm(0.05) is None, "warm() waited for the walks"
    assert pg.vectors.nearest(FINGERPRINT, unit(np.ones(DIM, dtype=np.float32)), ChunkFilter(), 5).ids.size
    release.set()
    done = pg.vectors.wait_warm(10)
    assert done is not None and done.walks == 1
    assert used[0] is not pg and used[0] is not pg.vectors._walker
    pg.vectors.warm(FINGERPRINT)  # once a store
    assert len(used) == 1
