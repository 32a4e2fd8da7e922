"""All SQL lives here: the connection factory, migrations and repositories."""

from __future__ import annotations

from pathlib import Path

from kenning.storage.connection import Store
from kenning.storage.migrations import migrate
from kenning.storage.paths import default_store_path
from kenning.storage.sources import sync_backup


def open_store(path: Path | str | None = None, *, load_vec: bool = True) -> Store:
    """Open (creating if needed) and migrate the store."""
    store = Store(path or default_store_path(), load_vec=load_vec)
    try:
        migrate(store)
        sync_backup(store)
    except Exception:
        store.close()
        raise
    return store


__all__ = ["Store", "open_store", "default_store_path"]
