"""What the reranker needs about pooled chunks: their rows, and the times of the
repository paths they reference (the git signal's input)."""

from __future__ import annotations

from kenning.storage.chunks import ChunkRow, load_chunk_rows, mentioned_paths
from kenning.storage.connection import Store
from kenning.storage.gitstate import git_path_times, source_path_times

__all__ = ["ChunkRow", "load_chunk_rows", "load_reference_times"]


def load_reference_times(store: Store, rows: list[ChunkRow]) -> dict[int, dict[str, float | None]]:
    """Per chunk: each referenced path existing in a linked repo → its last commit time.

    A chunk's references are its own file when it lives in a git source, plus the
    repository paths its text mentions.
    """
    mentioned = mentioned_paths(store, [r.chunk_id for r in rows])
    all_paths = sorted({p for paths in mentioned.values() for p in paths})
    existing = git_path_times(store, all_paths)
    own = _own_file_times(store, [r for r in rows if r.source_kind == "git"])
    out: dict[int, dict[str, float | None]] = {}
    for row in rows:
        refs = {p: existing[p] for p in mentioned.get(row.chunk_id, ()) if p in existing}
        if row.chunk_id in own:
            refs[row.rel_path] = own[row.chunk_id]
        out[row.chunk_id] = refs
    return out


def _own_file_times(store: Store, rows: list[ChunkRow]) -> dict[int, float | None]:
    """Last commit of each chunk's own file, one lookup per linked repository."""
    by_source: dict[int, list[ChunkRow]] = {}
    for row in rows:
        by_source.setdefault(row.source_id, []).append(row)
    out: dict[int, float | None] = {}
    for source_id, source_rows in by_source.items():
        found = source_path_times(store, source_id, sorted({r.rel_path for r in source_rows}))
        for row in source_rows:
            out[row.chunk_id] = found.get(row.rel_path)
    return out
