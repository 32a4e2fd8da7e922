"""Per git source: every current path and its last commit time (the git signal's data)."""

from __future__ import annotations

import posixpath
from dataclasses import field

from kenning.core.records import Record
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store


def replace_git_paths(store: Store, source_id: int, last_commit: dict[str, float | None]) -> None:
    with store.atomic():
        store.execute("DELETE FROM git_recent WHERE source_id = ?", (source_id,))
        store.executemany(
            "INSERT INTO git_recent (source_id, path, last_commit) VALUES (?, ?, ?)",
            [(source_id, path, when) for path, when in last_commit.items()],
        )


def git_path_times(store: Store, paths: list[str]) -> dict[str, float | None]:
    """Last commit time of each given path that exists in any linked repository.

    A path present in several repositories takes its most recent commit.
    """
    out: dict[str, float | None] = {}
    for part, marks in in_batches(paths):
        for path, when in store.execute(
            f"SELECT path, max(last_commit) FROM git_recent WHERE path IN ({marks}) GROUP BY path",
            part,
        ):
            out[path] = when
    return out


def source_path_times(store: Store, source_id: int, paths: list[str]) -> dict[str, float | None]:
    """Last commit time of each given path that git lists in one linked repository."""
    out: dict[str, float | None] = {}
    for part, marks in in_batches(paths):
        out.update(
            store.execute(
                f"SELECT path, last_commit FROM git_recent WHERE source_id = ? AND path IN ({marks})",
                (source_id, *part),
            )
        )
    return out


class PathsByName(Record):
    """Every git path by its lower-case file name, rebuilt only when git_recent changed:
    checked (one scan in SQLite) only when the store did."""

    stamp: tuple[object, ...] = ()
    version: object = None
    by_name: dict[str, dict[str, float | None]] = field(default_factory=dict)

    def ending_with(self, store: Store, tails: list[str]) -> dict[str, dict[str, float | None]]:
        """tail -> {path: last commit} for the paths equal to tail or ending in "/tail" (any case)."""
        self._refresh(store)
        out: dict[str, dict[str, float | None]] = {}
        for tail in tails:
            lower = tail.lower()
            candidates = self.by_name.get(posixpath.basename(lower), {})
            out[tail] = {p: t for p, t in candidates.items() if p.lower() == lower or p.lower().endswith("/" + lower)}
        return out

    def _refresh(self, store: Store) -> None:
        version = store.version()
        if version == self.version:
            return
        self.version = version
        stamp = tuple(
            store.execute("SELECT count(*), total(last_commit), total(length(path)), max(path) FROM git_recent")[0]
        )
        if stamp == self.stamp:
            return
        by_name: dict[str, dict[str, float | None]] = {}
        for path, when in store.execute("SELECT path, max(last_commit) FROM git_recent GROUP BY path"):
            by_name.setdefault(posixpath.basename(path).lower(), {})[path] = when
        self.stamp, self.by_name = stamp, by_name
