"""The PostgreSQL + pgvector backend: a team's shared store (issue #23).

All of its SQL lives in this package.  `open_pg_store(target)` connects with libpq's
conventions (URL, service, .pgpass, sslmode), applies the schema's migrations when the
role may (schema.py), and returns the store.
"""

from __future__ import annotations

from kenning.storage.postgres.connection import PgStore, is_postgres_target, label, without_password
from kenning.storage.postgres.schema import UpgradeReport, migrate


def open_pg_store(target: str, *, report: UpgradeReport | None = None, upgrade: bool = True) -> PgStore:
    """Connect to the team store at target and bring its schema up to date."""
    store = PgStore(target)
    try:
        if upgrade:
            migrate(store, report)
    except Exception:
        store.close()
        raise
    return store


__all__ = ["PgStore", "open_pg_store", "is_postgres_target", "label", "without_password"]
