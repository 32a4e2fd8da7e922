"""All SQL lives here: the connection factory, migrations and repositories.

The storage seam
----------------
search/ and ingest/ (and every layer above them) reach the store only through the
functions of these modules and the Store's public methods; none of them holds SQL,
FTS5 match syntax, table names or rows read by position (tests/test_sql_in_storage.py).
A second backend (PostgreSQL with pgvector, for teams) implements the same functions
for its own connection type and nothing outside storage/ changes:

- connection.Store: atomic() (a transaction; nested uses are savepoints), version()
  (changes whenever anyone commits: the key of every cache over the store), close(),
  path, vec_available / vec_error.
- sources, settings, documents (replace_document, known_documents, skipped files, the
  chunking version), gitstate (git paths and their last commit), vectors (embedding
  cache, pending chunks, write_vectors, load_all, newest_vectors, generation), stats.
- chunks: ChunkRow (named fields) for the reranker, mentioned paths, counts, the ids
  a ChunkFilter allows.
- lexical: ranked lists of the word index ("porter": stemmed words) and the substring
  index ("trigram") by bm25 with the caller's column weights, with or without a
  ChunkFilter, and the word index's vocabulary.  ftsquery builds the match expression
  from words and phrases (search never writes one), stemming is the word index's own
  tokenizer, which proximity, snippets and the preview use too, so a backend with a
  different stemmer (PostgreSQL's english config is Snowball) changes both together.
- Filters cross the seam as core.filters.ChunkFilter, plain data; filtering.py is this
  backend's translation of it into one SQL condition.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kenning.storage.api import FailureKind, Store
from kenning.storage.connection import sqlite_failure_kind
from kenning.storage.migrations import UpgradeReport, migrate
from kenning.storage.paths import default_store_path
from kenning.storage.sources import sync_backup
from kenning.storage.sqlite_store import SqliteStore


def open_store(
    path: Path | str | None = None, *, load_vec: bool = True, report: UpgradeReport | None = None
) -> SqliteStore:
    """Open (creating if needed) and migrate the store; `report` hears each step of an upgrade."""
    store = SqliteStore(path or default_store_path(), load_vec=load_vec)
    try:
        migrate(store, report)
        sync_backup(store)
    except Exception:
        store.close()
        raise
    return store


# Each backend's classifier of its own database errors (the PostgreSQL backend adds its own).
FAILURE_CLASSIFIERS: list[Callable[[BaseException], FailureKind | None]] = [sqlite_failure_kind]


def failure_kind(exc: BaseException) -> FailureKind | None:
    """What a backend's database error means for the user; None when exc is none of theirs."""
    for classify in FAILURE_CLASSIFIERS:
        kind = classify(exc)
        if kind is not None:
            return kind
    return None


__all__ = ["FAILURE_CLASSIFIERS", "SqliteStore", "Store", "default_store_path", "failure_kind", "open_store"]
