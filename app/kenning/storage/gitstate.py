"""Per git source: every current path and its last commit time (the git signal's data)."""

from __future__ import annotations

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
