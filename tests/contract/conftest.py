"""The storage contract suite: every test here runs against every backend.

A backend joins by adding one entry to BACKENDS: a factory with `open(tmp_path)` (a
new, empty, migrated store) and `again(store)` (a second connection to the same store,
as another process would hold).  Tests write and read through kenning.storage.api only:
no SQL, no backend module, so what passes here is what search, ingest and workspace
can rely on whatever the backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from kenning.storage import api, open_store


class BackendFactory(Protocol):
    name: str

    def open(self, tmp_path: Path) -> api.Store: ...

    def again(self, store: api.Store) -> api.Store: ...


class SqliteFactory:
    name = "sqlite"

    def open(self, tmp_path: Path) -> api.Store:
        return open_store(tmp_path / "contract" / "kenning.db")

    def again(self, store: api.Store) -> api.Store:
        return open_store(store.location)


class PostgresFactory:
    """A database of its own on the session's private PostgreSQL server (tests/pgtesting.py)."""

    name = "postgresql"

    def __init__(self) -> None:
        self._databases: dict[int, str] = {}

    def open(self, tmp_path: Path) -> api.Store:
        from kenning.storage.postgres import open_pg_store
        from pgtesting import shared_server

        server = shared_server()
        database = server.new_database()
        store = open_pg_store(server.url(database))
        self._databases[id(store)] = database
        return store

    def again(self, store: api.Store) -> api.Store:
        from kenning.storage.postgres import open_pg_store

        return open_pg_store(store.target)  # type: ignore[attr-defined]

    def dispose(self, store: api.Store) -> None:
        from pgtesting import shared_server

        database = self._databases.pop(id(store), None)
        if database:
            shared_server().drop_database(database)


BACKENDS: dict[str, BackendFactory] = {"sqlite": SqliteFactory(), "postgresql": PostgresFactory()}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request) -> BackendFactory:
    return BACKENDS[request.param]


@pytest.fixture
def store(backend, tmp_path) -> Iterator[api.Store]:
    opened = backend.open(tmp_path)
    yield opened
    opened.close()
    dispose = getattr(backend, "dispose", None)
    if dispose is not None:  # a server-side store is dropped (sqlite's lives in tmp_path)
        dispose(opened)


@pytest.fixture
def second(backend, store) -> Iterator[api.Store]:
    """Another connection to the same store (another process's view)."""
    other = backend.again(store)
    yield other
    other.close()
