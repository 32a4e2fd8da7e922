"""Team stores for the front ends: which store a command or the app means, and what to say.

A store is named by a path (the personal SQLite file) or by a PostgreSQL connection
string (`postgresql://…`, `service=…`: a team store).  `--store`, then the
environment's KENNING_STORE, then the user's default file decide, for every command
alike.  What Kenning may keep of a connection string is what `remembered()` returns:
never its password (libpq reads that from ~/.pgpass or PGPASSWORD each time).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core.errors import StoreError
from kenning.core.records import Record

if TYPE_CHECKING:
    from kenning.storage.api import Store

STORE_ENV = "KENNING_STORE"
TEAM_STORE_STATE = "team_store"  # the app's remembered team store (its connection string, no password)
PASSWORD_NOT_KEPT = (
    "The password is used for this session only: Kenning never stores it. "
    "Put it in ~/.pgpass (or use a service file) to be connected without typing it."
)


def is_team_target(target: str | os.PathLike[str] | None) -> bool:
    """Whether a store name is a PostgreSQL connection string (checked without importing psycopg)."""
    if target is None or isinstance(target, Path):
        return False
    text = str(target).strip()
    return text.startswith(("postgresql://", "postgres://", "service=")) or text == "postgresql:"


def chosen_store(flag: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None) -> str | Path | None:
    """The store a command uses: --store, else KENNING_STORE, else None (the default file)."""
    env = os.environ if environ is None else environ
    value = flag if flag not in (None, "") else env.get(STORE_ENV) or None
    if value is None:
        return None
    return str(value).strip() if is_team_target(value) else Path(value)


def remembered(target: str) -> tuple[str, bool]:
    """(what may be kept of target, whether a password was taken out of it)."""
    from kenning.storage import without_password

    kept = without_password(target)
    return kept, kept != target


def label(target: str) -> str:
    """How messages and the app name a team store: user@host/database, never a password."""
    from kenning.storage import team_store_label

    return team_store_label(target)


def short_label(target: str) -> str:
    """The name a team store's hits carry: its database (or service) name."""
    from kenning.storage import team_store_short_label

    return team_store_short_label(target)


class TeamStoreInfo(Record, frozen=True):
    """What the app's status bar and `kenning status` say about a team store."""

    label: str
    chunks: int
    sources: int
    last_change: float | None  # epoch seconds of the last commit anyone made, None: never
    model: str | None  # the fingerprint of its vectors, None: none yet


def open_team_store(target: str, *, report: Callable[[str], None] | None = None) -> Store:
    """The team store at target, migrated when this role may (storage.postgres)."""
    from kenning.storage import open_team_store as open_team

    if not is_team_target(target):
        raise StoreError(f"{label(target)} is not a PostgreSQL connection string (postgresql://… or service=…).")
    return open_team(target, report=report)


def describe(store: Store) -> TeamStoreInfo:
    """A team store's summary, read in a few small queries (the app polls it)."""
    from kenning.storage import last_change

    return TeamStoreInfo(
        label=store.location,
        chunks=store.chunks.count(),
        sources=len(store.sources.list()),
        last_change=last_change(store),
        model=store.settings.get("vector_fingerprint"),
    )
