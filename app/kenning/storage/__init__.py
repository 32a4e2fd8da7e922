"""Storage: the interface every backend implements, and the backends.

- api.py: the interface (the Store protocol and what crosses it).  search/, ingest/
  and workspace/ use nothing else from storage but this package's functions below and
  paths.py (where Kenning's files live); tests/test_layering.py holds them to it.
- The SQLite backend, a store in one file: sqlite_store.py and sqlite_words.py adapt
  the repository modules (sources, documents, lexical, substrings, vectors,
  vector_scan...) that hold its SQL, FTS5 and its vector scan; migrations.py its layout.
- postgres/: the PostgreSQL backend (a team's shared store); combined.py searches
  several stores as one.

All SQL lives in this package (tests/test_sql_in_storage.py).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from kenning.storage.api import FailureKind, Store
from kenning.storage.connection import sqlite_failure_kind
from kenning.storage.migrations import UpgradeReport, migrate
from kenning.storage.paths import default_store_path
from kenning.storage.sources import sync_backup
from kenning.storage.sqlite_store import SqliteStore


def open_store(path: Path | str | None = None, *, report: UpgradeReport | None = None) -> SqliteStore:
    """Open (creating if needed) and migrate the store; `report` hears each step of an upgrade."""
    store = SqliteStore(path or default_store_path())
    try:
        migrate(store, report)
        sync_backup(store)
    except Exception:
        store.close()
        raise
    return store


# Each backend's classifier of its own database errors (the PostgreSQL backend adds its own).
FAILURE_CLASSIFIERS: list[Callable[[BaseException], FailureKind | None]] = [sqlite_failure_kind]


def needs_upgrade(path: Path) -> bool:
    """Whether opening the SQLite store at path first converts it from an older layout (minutes for a large one)."""
    from kenning.storage.migrations import needs_upgrade as sqlite_needs_upgrade

    return sqlite_needs_upgrade(path)


def load_sources_backup(store_path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """(entries, problem) of the sources list kept beside a SQLite store (what `rebuild` re-adds)."""
    from kenning.storage.sources import load_backup

    return load_backup(store_path)


def read_sources_backup(store_path: Path) -> list[dict[str, Any]]:
    """The valid entries of that list (none when it is missing or not valid)."""
    return load_sources_backup(store_path)[0]


def indexing_lock_at(store_path: Path, wait_seconds: float = 0.0) -> AbstractContextManager[None]:
    """The indexing lock of a store file, without opening it (rebuilding a damaged one)."""
    from kenning.storage.lock import indexing_lock

    return indexing_lock(store_path, wait_seconds=wait_seconds)


def failure_kind(exc: BaseException) -> FailureKind | None:
    """What a backend's database error means for the user; None when exc is none of theirs."""
    for classify in FAILURE_CLASSIFIERS:
        kind = classify(exc)
        if kind is not None:
            return kind
    return None


__all__ = ["FAILURE_CLASSIFIERS", "SqliteStore", "Store", "default_store_path", "failure_kind", "open_store"]
