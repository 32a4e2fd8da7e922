"""What the reranker needs about pooled chunks: their rows, and the times of the
repository paths they reference (the git signal's input)."""

from __future__ import annotations

from kenning.storage.api import ANYWHERE, ChunkRow, Store

__all__ = ["ChunkRow", "load_reference_times"]

MAX_AMBIGUOUS_SHOWN = 3


def load_reference_times(
    store: Store, rows: list[ChunkRow], ambiguous: dict[int, list[str]] | None = None
) -> dict[int, dict[str, float | None]]:
    """Per chunk: each referenced path existing in a linked repo → its last commit time.

    A chunk's references are its own file when it lives in a git source, plus the
    repository paths its text mentions.  A wiki link by name (`[[Deploy]]`, stored as
    "**/Deploy.md") is the one path of that name anywhere, as Obsidian reads it, unless
    the link already named an existing path; a name several paths share counts for none
    and is listed in `ambiguous` (chunk id → "Deploy.md (a/Deploy.md, b/Deploy.md)").
    """
    mentioned = store.chunks.mentioned_paths([r.chunk_id for r in rows])
    all_paths = {p for paths in mentioned.values() for p in paths}
    existing = store.git.path_times(sorted(p for p in all_paths if not p.startswith(ANYWHERE)))
    tails = sorted(p[len(ANYWHERE) :] for p in all_paths if p.startswith(ANYWHERE))
    named = store.git.ending_with(tails) if tails else {}
    own = _own_file_times(store, [r for r in rows if r.source_kind == "git"])
    out: dict[int, dict[str, float | None]] = {}
    for row in rows:
        refs = {p: existing[p] for p in mentioned.get(row.chunk_id, ()) if p in existing}
        for path in mentioned.get(row.chunk_id, ()):
            if path.startswith(ANYWHERE):
                _by_name(refs, path[len(ANYWHERE) :], named, ambiguous, row.chunk_id)
        if row.chunk_id in own:
            refs[row.rel_path] = own[row.chunk_id]
        out[row.chunk_id] = refs
    return out


def _by_name(
    refs: dict[str, float | None],
    tail: str,
    named: dict[str, dict[str, float | None]],
    ambiguous: dict[int, list[str]] | None,
    chunk_id: int,
) -> None:
    matches = named.get(tail, {})
    if any(path in refs for path in matches):
        return  # the link named an existing path itself (vault path or beside the note)
    if len(matches) == 1:
        refs.update(matches)
    elif matches and ambiguous is not None:
        shown = sorted(matches)[:MAX_AMBIGUOUS_SHOWN]
        more = f" and {len(matches) - len(shown)} more" if len(matches) > len(shown) else ""
        ambiguous.setdefault(chunk_id, []).append(f"{tail} ({', '.join(shown)}{more})")


def _own_file_times(store: Store, rows: list[ChunkRow]) -> dict[int, float | None]:
    """Last commit of each chunk's own file, one lookup per linked repository."""
    by_source: dict[int, list[ChunkRow]] = {}
    for row in rows:
        by_source.setdefault(row.source_id, []).append(row)
    out: dict[int, float | None] = {}
    for source_id, source_rows in by_source.items():
        found = store.git.source_path_times(source_id, sorted({r.rel_path for r in source_rows}))
        for row in source_rows:
            out[row.chunk_id] = found.get(row.rel_path)
    return out
