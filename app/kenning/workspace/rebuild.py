"""`kenning rebuild`: move a damaged store aside and re-add its sources from the backup.

Everything is checked before anything is moved: the sources backup must be valid (a
damaged backup would leave the user with an empty store and nothing to re-add), and
no indexer may be working on the store and no watcher watching it (either would keep
writing into the file moved aside).  Each source comes back as it was, enabled or not.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import field
from pathlib import Path
from typing import Any

from kenning.core.errors import KenningError, StoreError
from kenning.core.records import Record
from kenning.ingest.sources import add_source
from kenning.storage import indexing_lock_at, load_sources_backup, no_watchers_at, open_store
from kenning.storage.api import Store


class RebuildResult(Record):
    aside: Path | None = None  # where the old store went (None: there was none)
    added: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "name: why"
    backup_found: bool = True


def rebuild_store(path: Path) -> RebuildResult:
    entries, problem = load_sources_backup(path)
    backup = Path(str(path) + ".sources.json")
    if problem is not None:
        raise StoreError(
            f"The sources backup {backup} is not valid: {problem}. Nothing was moved. "
            "Fix the file (or move it away to rebuild with no sources) and run `kenning rebuild` again."
        )
    result = RebuildResult(backup_found=backup.exists())
    # Refused while an indexer works on this store, or a watcher would index into the old file.
    with indexing_lock_at(path), no_watchers_at(path):
        if path.exists():
            result.aside = _move_aside(path, backup)
        store = open_store(path)
        try:
            for entry in entries:
                _re_add(store, entry, result)
        finally:
            store.close()
    return result


def _move_aside(path: Path, backup: Path) -> Path:
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 2
    while aside.exists():
        aside = aside.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
        n += 1
    if backup.exists():
        shutil.copy2(backup, Path(str(aside) + ".sources.json"))  # the list, kept with its store
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        if Path(str(path) + suffix).exists():
            os.replace(str(path) + suffix, str(aside) + suffix)
    return aside


def _re_add(store: Store, entry: dict[str, Any], result: RebuildResult) -> None:
    try:
        source = add_source(
            store,
            entry["root"],
            git=entry["kind"] == "git",
            name=entry["name"],
            include=tuple(entry["include"]),
            exclude=tuple(entry["exclude"]),
        )
        if not entry["enabled"]:
            store.sources.set_enabled(source.id, False)
    except KenningError as exc:
        result.failed.append(f"{entry['name']}: {exc}")
        return
    result.added.append(entry["name"])
