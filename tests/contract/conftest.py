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


BACKENDS: dict[str, BackendFactory] = {"sqlite": SqliteFactory()}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request) -> BackendFactory:
    return BACKENDS[request.param]


@pytest.fixture
def store(backend, tmp_path) -> Iterator[api.Store]:
    opened = backend.open(tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def second(backend, store) -> Iterator[api.Store]:
    """Another connection to the same store (another process's view)."""
    other = backend.again(store)
    yield other
    other.close()
