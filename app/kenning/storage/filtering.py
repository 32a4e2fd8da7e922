"""A ChunkFilter as one SQL condition over chunks c, documents d and sources s."""

from __future__ import annotations

from functools import lru_cache

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.storage.ftsquery import fts_string, match_all_phrases

if TYPE_CHECKING:
    from typing import Any

GLOB_CHARS = set("*?[")
JOIN_DOCUMENTS = "JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id"


class SqlCondition(Record, frozen=True):
    """A WHERE clause fragment and its parameters."""

    sql: str
    params: tuple[Any, ...]


@lru_cache(maxsize=256)
def filter_condition(f: ChunkFilter) -> SqlCondition:
    parts = ["s.enabled = 1"]
    params: list[Any] = []
    if f.test_files != "included":
        parts.append("d.is_test = 1" if f.test_files == "only" else "d.is_test = 0")
    if f.except_document is not None:
        parts.append("d.id != ?")
        params.append(f.except_document)
    _any_of(parts, params, "s.name = ?", f.sources)
    _any_of(parts, params, "d.ext = ?", f.exts)
    _any_of(parts, params, "instr(d.tags, ?) > 0", [f" {t} " for t in f.tags])
    _paths(parts, params, f.paths)
    if f.after is not None:
        parts.append("coalesce(d.updated_at, d.created_at, d.mtime) >= ?")
        params.append(f.after)
    if f.before is not None:
        parts.append("coalesce(d.updated_at, d.created_at, d.mtime) <= ?")
        params.append(f.before)
    if f.phrases:
        parts.append("c.id IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)")
        params.append(match_all_phrases(f.phrases))
    if f.excluded:
        parts.append("c.id NOT IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)")
        params.append(" OR ".join(fts_string(w) for w in f.excluded))
    return SqlCondition(" AND ".join(parts), tuple(params))


def _any_of(parts: list[str], params: list[Any], clause: str, values: tuple[str, ...] | list[str]) -> None:
    if not values:
        return
    parts.append("(" + " OR ".join([clause] * len(values)) + ")")
    params.extend(values)


def _paths(parts: list[str], params: list[Any], paths: tuple[str, ...]) -> None:
    """A glob matches the whole relative path or any tail of it; plain text is a substring."""
    clauses = []
    for value in paths:
        value = value.lstrip("./") if value.startswith("./") else value
        if GLOB_CHARS & set(value):
            clauses.append("(d.rel_path GLOB ? OR d.rel_path GLOB ?)")
            params.extend([value, "*/" + value.lstrip("/")])
        else:
            clauses.append("instr(d.rel_path, ?) > 0")
            params.append(value)
    if clauses:
        parts.append("(" + " OR ".join(clauses) + ")")
