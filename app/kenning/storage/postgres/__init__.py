"""The PostgreSQL + pgvector backend: a team's shared store (issue #23).

All of its SQL lives in this package.  `open_pg_store(target)` connects with libpq's
conventions (URL, service, .pgpass, sslmode), applies the schema's migrations when the
role may (schema.py), and returns the store (store.PostgresStore, a kenning.storage.api.Store).
"""

from __future__ import annotations

from kenning.storage import FAILURE_CLASSIFIERS
from kenning.storage.postgres.connection import (
    PgStore,
    is_postgres_target,
    label,
    pg_failure_kind,
    without_password,
)
from kenning.storage.postgres.schema import UpgradeReport, migrate
from kenning.storage.postgres.store import PostgresStore

FAILURE_CLASSIFIERS.setdefault("team", pg_failure_kind)


def open_pg_store(target: str, *, report: UpgradeReport | None = None, upgrade: bool = True) -> PostgresStore:
    """Connect to the team store at target and bring its schema up to date."""
    store = PostgresStore(target)
    try:
        if upgrade:
            migrate(store, report)
    except Exception:
        store.close()
        raise
    return store


__all__ = ["PgStore", "PostgresStore", "open_pg_store", "is_postgres_target", "label", "without_password"]
