"""Sources, settings, counts and chunk rows in the team store."""

from __future__ import annotations

import json
import time
from typing import Any

from kenning import TYPE_CHECKING
from kenning.core.errors import SourceError
from kenning.core.filters import ChunkFilter
from kenning.core.fsnames import filesystem_name, storable_name
from kenning.core.types import Source
from kenning.storage.postgres.connection import PgStore
from kenning.storage.postgres.documents import clean_text, write_lock
from kenning.storage.postgres.filtering import JOIN_DOCUMENTS, filter_condition

if TYPE_CHECKING:
    from kenning.core.types import SourceKind

_COLUMNS = "id, kind, root, name, include_globs, exclude_globs, enabled, added_at, last_indexed_at"


def _source(row: tuple[Any, ...]) -> Source:
    id_, kind, root, name, include, exclude, enabled, added_at, last = row
    kind_value: SourceKind = kind
    return Source(
        id=int(id_),
        kind=kind_value,
        root=filesystem_name(root),  # stored as a name: insert_source
        name=name,
        include=tuple(json.loads(include)),
        exclude=tuple(json.loads(exclude)),
        enabled=bool(enabled),
        added_at=float(added_at),
        last_indexed_at=last,
    )


def list_sources(store: PgStore) -> list[Source]:
    return [_source(r) for r in store.execute(f"SELECT {_COLUMNS} FROM sources ORDER BY name")]


def get_source(store: PgStore, name: str) -> Source:
    rows = store.execute(f"SELECT {_COLUMNS} FROM sources WHERE name = %s", (name,))
    if not rows:
        known = ", ".join(s.name for s in list_sources(store)) or "none yet"
        raise SourceError(f"No source named '{name}' (sources: {known}).")
    return _source(rows[0])


def insert_source(
    store: PgStore, *, kind: str, root: str, name: str, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
) -> Source:
    with store.atomic():
        write_lock(store)
        stored = storable_name(root)  # the one text form of a path that may not be UTF-8 (core.fsnames)
        if store.scalar("SELECT 1 FROM sources WHERE root = %s", (stored,)):
            raise SourceError(f"{stored} is already a source.")
        if store.scalar("SELECT 1 FROM sources WHERE name = %s", (name,)):
            raise SourceError(f"A source named '{name}' exists already; pick another with --name.")
        store.execute(
            "INSERT INTO sources (kind, root, name, include_globs, exclude_globs, added_at)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (
                kind,
                stored,
                clean_text(name),
                json.dumps(list(include)),
                json.dumps(list(exclude)),
                time.time(),
            ),
        )
    return get_source(store, name)


def delete_source(store: PgStore, source_id: int) -> None:
    with store.atomic():
        write_lock(store)
        store.execute("DELETE FROM sources WHERE id = %s", (source_id,))


def set_enabled(store: PgStore, source_id: int, enabled: bool) -> None:
    with store.atomic():
        write_lock(store)
        store.execute("UPDATE sources SET enabled = %s WHERE id = %s", (enabled, source_id))


def set_globs(store: PgStore, source_id: int, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    with store.atomic():
        write_lock(store)
        store.execute(
            "UPDATE sources SET include_globs = %s, exclude_globs = %s WHERE id = %s",
            (json.dumps(list(include)), json.dumps(list(exclude)), source_id),
        )


def mark_indexed(store: PgStore, source_id: int, when: float) -> None:
    with store.atomic():
        write_lock(store)
        store.execute("UPDATE sources SET last_indexed_at = %s WHERE id = %s", (when, source_id))


def get_setting(store: PgStore, key: str) -> str | None:
    value = store.scalar("SELECT value FROM settings WHERE key = %s", (key,))
    return None if value is None else str(value)


def set_setting(store: PgStore, key: str, value: str) -> None:
    with store.atomic():
        write_lock(store)
        store.execute(
            "INSERT INTO settings (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, clean_text(value)),
        )


def source_stats(store: PgStore) -> dict[int, tuple[int, int, int, int]]:
    """source id -> (documents, chunks, pending vectors, skipped files)."""
    rows = store.execute(
        "SELECT s.id,"
        " (SELECT count(*) FROM documents d WHERE d.source_id = s.id),"
        " (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.source_id = s.id),"
        " (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
        "   WHERE d.source_id = s.id AND c.vector_fp IS NULL),"
        " (SELECT count(*) FROM skipped_files k WHERE k.source_id = s.id)"
        " FROM sources s"
    )
    return {int(r[0]): (int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows}


def store_size_bytes(store: PgStore) -> int:
    """The team store's tables and indexes on the server."""
    return int(
        store.scalar(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'kenning' AND c.relkind = 'r'"
        )
        or 0
    )


def last_change(store: PgStore) -> float | None:
    """When anyone last wrote to the team store (epoch seconds), None: never."""
    value = store.scalar("SELECT changed_at FROM store_state WHERE id = 1")
    return None if value is None else float(value)


def tag_counts(store: PgStore) -> dict[str, int]:
    counts: dict[str, int] = {}
    for (encoded,) in store.execute("SELECT tags FROM documents WHERE tags <> ''"):
        for tag in set(encoded.split()):
            counts[tag] = counts.get(tag, 0) + 1
    return counts


def count_chunks(store: PgStore) -> int:
    return int(store.scalar("SELECT chunks FROM corpus WHERE id = 1") or 0)


def allowed(store: PgStore, ids: list[int], chunk_filter: ChunkFilter) -> set[int]:
    """Those of the given chunks the filter allows."""
    if not ids:
        return set()
    condition = filter_condition(chunk_filter)
    rows = store.execute(
        f"SELECT c.id FROM chunks c {JOIN_DOCUMENTS} WHERE c.id = ANY(%s) AND {condition.sql}",
        (list(ids), *condition.params),
    )
    return {int(r[0]) for r in rows}


def allowed_chunk_ids(store: PgStore, chunk_filter: ChunkFilter) -> list[int]:
    condition = filter_condition(chunk_filter)
    return [
        int(r[0])
        for r in store.execute(f"SELECT c.id FROM chunks c {JOIN_DOCUMENTS} WHERE {condition.sql}", condition.params)
    ]


_ROW = (
    "SELECT c.id AS chunk_id, c.title, c.kind, c.text, c.line_start, c.line_end, d.rel_path, s.root,"
    " s.name AS source, s.id AS source_id, s.kind AS source_kind, d.created_at, d.updated_at, c.location"
    " FROM chunks c JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id"
)


def chunk_rows(store: PgStore, ids: list[int]) -> list[dict[str, Any]]:
    """The given chunks that still exist, as column -> value (the ChunkRow fields)."""
    if not ids:
        return []
    names, rows = store.query(_ROW + " WHERE c.id = ANY(%s)", (list(ids),))
    out = [dict(zip(names, values)) for values in rows]
    for row in out:
        row["root"] = filesystem_name(row["root"])  # stored as a name: insert_source
    return out


def mentioned_paths(store: PgStore, ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for cid, path in store.execute("SELECT chunk_id, path FROM chunk_refs WHERE chunk_id = ANY(%s)", (list(ids),)):
        out.setdefault(int(cid), []).append(path)
    return out


def newest_documents(store: PgStore, chunk_filter: ChunkFilter, limit: int) -> list[tuple[int, int, float | None]]:
    """(chunk id, ord, date) of the first allowed chunk of each of the newest documents."""
    condition = filter_condition(chunk_filter)
    rows = store.execute(
        "SELECT DISTINCT ON (date, c.document_id) c.id, c.ord, coalesce(d.updated_at, d.created_at, d.mtime) AS date"
        f" FROM chunks c {JOIN_DOCUMENTS} WHERE {condition.sql}"
        " ORDER BY date DESC NULLS LAST, c.document_id, c.ord LIMIT %s",
        (*condition.params, limit),
    )
    return [(int(a), int(b), c) for a, b, c in rows]
