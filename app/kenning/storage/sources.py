"""The sources table: folders and git repositories the user pointed Kenning at."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core.errors import SourceError
from kenning.core.fsnames import filesystem_name, storable_name
from kenning.core.owndirs import private_file_fd
from kenning.core.types import Source
from kenning.storage.connection import Store

if TYPE_CHECKING:
    from typing import Any

    from kenning.core.types import SourceKind

_COLUMNS = "id, kind, root, name, include_globs, exclude_globs, enabled, added_at, last_indexed_at"


def _source(
    *,
    id: int,
    kind: SourceKind,
    root: str,
    name: str,
    include_globs: str,
    exclude_globs: str,
    enabled: int,
    added_at: float,
    last_indexed_at: float | None,
) -> Source:
    """A sources row (its columns by name) as a Source (its root a path again: storable_root)."""
    return Source(
        id=id,
        kind=kind,
        root=filesystem_name(root),
        name=name,
        include=tuple(json.loads(include_globs)),
        exclude=tuple(json.loads(exclude_globs)),
        enabled=bool(enabled),
        added_at=added_at,
        last_indexed_at=last_indexed_at,
    )


def backup_path(store: Store) -> Path:
    return Path(str(store.path) + ".sources.json")


def _write_backup(store: Store) -> None:
    """Sources are the one thing a user typed in: keep a copy beside the store, so a
    damaged store can be rebuilt without asking the user to add them again."""
    if str(store.path) == ":memory:":
        return
    data = [
        {
            "kind": s.kind,
            "root": s.root,
            "name": s.name,
            "include": list(s.include),
            "exclude": list(s.exclude),
            "enabled": s.enabled,
        }
        for s in list_sources(store)
    ]
    target = backup_path(store)
    # A temporary file of this writer's own: several connections rewrite the backup at
    # once (each open of the store may, sync_backup: the app's threads while a source is
    # added), and with one shared name a writer's replace moved the other's file away.
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    target.with_suffix(".tmp").unlink(missing_ok=True)  # the shared name older versions left
    fd = private_file_fd(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sync_backup(store: Store) -> None:
    """Rewrite the backup when it disagrees with the table (a kill between a source
    change's commit and the backup's rewrite leaves it one step behind).  A backup that
    is not valid is replaced only by a non-empty table: an empty new store must not
    destroy what `kenning rebuild` would need."""
    if str(store.path) == ":memory:":
        return
    current = [(s.kind, s.root, s.name) for s in list_sources(store)]
    entries, problem = load_backup(store.path)
    if problem is not None and not current:
        return
    saved = [(e["kind"], e["root"], e["name"]) for e in entries]
    if problem is not None or (sorted(current) != sorted(saved) and (current or backup_path(store).exists())):
        _write_backup(store)


def read_backup(store_path: Path) -> list[dict[str, Any]]:
    """The backup's valid entries (none when it is missing or not valid)."""
    return load_backup(store_path)[0]


def load_backup(store_path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """(entries, problem): every entry checked, with defaults filled in; problem says
    why the file cannot be trusted as a whole (then entries is empty).  A missing file
    is no problem: there is nothing to restore."""
    path = Path(str(store_path) + ".sources.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError) as exc:
        return [], f"it cannot be read as JSON ({exc})"
    if not isinstance(data, list):
        return [], f"it holds {type(data).__name__}, not a list of sources"
    entries: list[dict[str, Any]] = []
    for number, item in enumerate(data, 1):
        entry, problem = _checked_entry(item)
        if problem:
            return [], f"entry {number}: {problem}"
        entries.append(entry)
    return entries, None


def _checked_entry(item: object) -> tuple[dict[str, Any], str | None]:
    if not isinstance(item, dict):
        return {}, f"{type(item).__name__}, not an object"
    if item.get("kind") not in ("folder", "git"):
        return {}, f"kind {item.get('kind')!r} is neither 'folder' nor 'git'"
    for key in ("root", "name"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            return {}, f"{key} is missing or not text"
    globs: dict[str, list[str]] = {}
    for key in ("include", "exclude"):
        value = item.get(key, [])
        if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
            return {}, f"{key} is not a list of globs"
        globs[key] = value
    enabled = item.get("enabled", True)
    if not isinstance(enabled, bool):
        return {}, "enabled is not true or false"
    return {"kind": item["kind"], "root": item["root"], "name": item["name"], **globs, "enabled": enabled}, None


def list_sources(store: Store) -> list[Source]:
    return store.fetch(_source, f"SELECT {_COLUMNS} FROM sources ORDER BY name")


def get_source(store: Store, name: str) -> Source:
    rows = store.fetch(_source, f"SELECT {_COLUMNS} FROM sources WHERE name = ?", (name,))
    if not rows:
        known = ", ".join(s.name for s in list_sources(store)) or "none yet"
        raise SourceError(f"No source named '{name}' (sources: {known}).")
    return rows[0]


def insert_source(
    store: Store,
    *,
    kind: str,
    root: str,
    name: str,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
) -> Source:
    stored = storable_name(root)  # the one text form of a path that may not be UTF-8 (core.fsnames)
    if store.scalar("SELECT 1 FROM sources WHERE root = ?", (stored,)):
        raise SourceError(f"{stored} is already a source.")
    if store.scalar("SELECT 1 FROM sources WHERE name = ?", (name,)):
        raise SourceError(f"A source named '{name}' exists already; pick another with --name.")
    with store.atomic():
        store.execute(
            "INSERT INTO sources (kind, root, name, include_globs, exclude_globs, added_at) VALUES (?, ?, ?, ?, ?, ?)",
            (kind, stored, name, json.dumps(list(include)), json.dumps(list(exclude)), time.time()),
        )
    _write_backup(store)
    return get_source(store, name)


def delete_source(store: Store, source_id: int) -> None:
    """Remove a source and, through cascades and triggers, all that derives from it."""
    with store.atomic():
        store.execute("DELETE FROM sources WHERE id = ?", (source_id,))
    _write_backup(store)


def set_enabled(store: Store, source_id: int, enabled: bool) -> None:
    with store.atomic():
        store.execute("UPDATE sources SET enabled = ? WHERE id = ?", (int(enabled), source_id))
    _write_backup(store)


def set_globs(store: Store, source_id: int, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    with store.atomic():
        store.execute(
            "UPDATE sources SET include_globs = ?, exclude_globs = ? WHERE id = ?",
            (json.dumps(list(include)), json.dumps(list(exclude)), source_id),
        )
    _write_backup(store)


def mark_indexed(store: Store, source_id: int, when: float) -> None:
    with store.atomic():
        store.execute("UPDATE sources SET last_indexed_at = ? WHERE id = ?", (when, source_id))
