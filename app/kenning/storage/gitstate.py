"""Per git source: every current path and its last commit time (the git signal's data)."""

from __future__ import annotations

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
    for start in range(0, len(paths), 500):
        part = paths[start : start + 500]
        marks = ",".join("?" * len(part))
        for path, when in store.execute(
            f"SELECT path, max(last_commit) FROM git_recent WHERE path IN ({marks}) GROUP BY path",
            part,
        ):
            out[path] = when
    return out
