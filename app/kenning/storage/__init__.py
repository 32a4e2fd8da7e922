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

from kenning import TYPE_CHECKING
from kenning.storage.api import Store
from kenning.storage.connection import sqlite_failure_kind
from kenning.storage.migrations import UpgradeReport, migrate
from kenning.storage.paths import default_store_path
from kenning.storage.sources import sync_backup
from kenning.storage.sqlite_store import SqliteStore

if TYPE_CHECKING:
    from typing import Any

    from kenning.storage.api import FailureKind


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


# Each backend's classifier of its own database errors, by the store it backs: "personal"
# (SQLite) or "team" (the PostgreSQL backend adds its own when it loads).
FAILURE_CLASSIFIERS: dict[str, Callable[[BaseException], FailureKind | None]] = {"personal": sqlite_failure_kind}


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


# -- team stores (PostgreSQL: storage/postgres/); psycopg loads only when one is used --


def open_team_store(target: str, *, report: UpgradeReport | None = None) -> Store:
    """The team store a PostgreSQL connection string names, migrated when the role may."""
    from kenning.storage.postgres import open_pg_store

    return open_pg_store(target, report=report)


def team_store_label(target: str) -> str:
    """How messages name a team store: user@host/database, never its password."""
    from kenning.storage.postgres.connection import label

    return label(target)


def team_store_short_label(target: str) -> str:
    """The name a team store's hits carry: its database (or service) name."""
    from kenning.storage.postgres.connection import short_label

    return short_label(target)


def without_password(target: str) -> str:
    """A connection string with any password taken out (what may be shown or kept)."""
    from kenning.storage.postgres.connection import without_password as strip

    return strip(target)


def last_change(store: Store) -> float | None:
    """When anyone last wrote to a team store (epoch seconds); None: never, or not a team store."""
    changed = getattr(store, "last_change", None)
    return changed() if callable(changed) else None


def search_together(stores: dict[str, Store]) -> Store:
    """Several stores searched as one (storage.combined): one ranked list, rows labelled."""
    from kenning.storage.combined import CombinedStore

    return CombinedStore(stores)


def model_mismatch(stores: dict[str, Store]) -> dict[str, str] | None:
    """None when every store's vectors come from one model; else each store's model
    fingerprint (workspace.messages.model_mismatch_message words it)."""
    from kenning.storage.combined import differing_models

    return differing_models(stores)


def no_watchers_at(store_path: Path) -> AbstractContextManager[None]:
    """Held while a store file is replaced: StoreLockedError when a watcher is running."""
    from kenning.storage.lock import no_watchers

    return no_watchers(store_path)


def failure_kind(exc: BaseException) -> FailureKind | None:
    """What a backend's database error means for the user; None when exc is none of theirs."""
    found = failure_of(exc)
    return found[1] if found else None


def failure_of(exc: BaseException) -> tuple[str, FailureKind] | None:
    """(the store whose backend raised it: "personal" or "team", what it means), or None
    when exc is no backend's database error."""
    for store, classify in FAILURE_CLASSIFIERS.items():
        kind = classify(exc)
        if kind is not None:
            return store, kind
    return None


__all__ = [
    "FAILURE_CLASSIFIERS",
    "SqliteStore",
    "Store",
    "default_store_path",
    "failure_kind",
    "failure_of",
    "open_store",
]
