"""Reading what the reranker needs about pooled chunks, in a few set-based queries."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kenning.core.fsnames import filesystem_name
from kenning.storage.connection import Store
from kenning.storage.gitstate import git_path_times


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: int
    title: str
    kind: str
    text: str
    line_start: int
    line_end: int
    rel_path: str
    abs_path: str
    source: str
    source_id: int
    source_kind: str
    created_at: float | None
    updated_at: float | None


def _chunks(ids: list[int], size: int = 500):
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def load_chunk_rows(store: Store, ids: list[int]) -> dict[int, ChunkRow]:
    out: dict[int, ChunkRow] = {}
    for part in _chunks(ids):
        marks = ",".join("?" * len(part))
        rows = store.execute(
            "SELECT c.id, c.title, c.kind, c.text, c.line_start, c.line_end, d.rel_path, s.root,"
            " s.name, s.id, s.kind, d.created_at, d.updated_at"
            " FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN sources s ON s.id = d.source_id"
            f" WHERE c.id IN ({marks})",
            part,
        )
        for r in rows:
            abs_path = os.path.join(r[7], *filesystem_name(r[6]).split("/"))
            out[r[0]] = ChunkRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], abs_path, r[8], r[9], r[10], r[11], r[12])
    return out


def load_reference_times(store: Store, rows: list[ChunkRow]) -> dict[int, dict[str, float | None]]:
    """Per chunk: each referenced path existing in a linked repo → its last commit time.

    A chunk's references are its own file when it lives in a git source, plus the
    repository paths its text mentions.
    """
    mentioned = _mentioned_paths(store, [r.chunk_id for r in rows])
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


def _mentioned_paths(store: Store, ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for part in _chunks(ids):
        marks = ",".join("?" * len(part))
        for cid, path in store.execute(f"SELECT chunk_id, path FROM chunk_refs WHERE chunk_id IN ({marks})", part):
            out.setdefault(cid, []).append(path)
    return out


def _own_file_times(store: Store, rows: list[ChunkRow]) -> dict[int, float | None]:
    """Last commit of each chunk's own file, one query per linked repository."""
    by_source: dict[int, list[ChunkRow]] = {}
    for row in rows:
        by_source.setdefault(row.source_id, []).append(row)
    out: dict[int, float | None] = {}
    for source_id, source_rows in by_source.items():
        paths = sorted({r.rel_path for r in source_rows})
        found: dict[str, float | None] = {}
        for part in _chunks(paths):
            marks = ",".join("?" * len(part))
            found.update(
                store.execute(
                    f"SELECT path, last_commit FROM git_recent WHERE source_id = ? AND path IN ({marks})",
                    (source_id, *part),
                )
            )
        for row in source_rows:
            out[row.chunk_id] = found.get(row.rel_path)
    return out
