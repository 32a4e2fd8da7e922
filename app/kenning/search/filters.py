"""Filters as one SQL condition over chunks c, documents d and sources s.

Every retriever puts this condition inside its own query, before ranking, so a
matching chunk can win however many non-matching chunks would outscore it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.search.query import ParsedQuery, fts_string

GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class SqlCondition:
    sql: str
    params: tuple

    @property
    def key(self) -> tuple:
        """Identifies the condition, for caching the set of chunks it allows."""
        return (self.sql, self.params)


def build_condition(query: ParsedQuery) -> SqlCondition:
    f = query.filters
    parts = ["s.enabled = 1"]
    params: list = []
    if f.include_tests:
        parts.append("d.is_test = 1")
    else:
        parts.append("d.is_test = 0")
    _any_of(parts, params, "s.name = ?", f.sources)
    _any_of(parts, params, "d.ext = ?", f.exts)
    other_tags = [t for t in f.tags if t != "test"]
    _any_of(parts, params, "instr(d.tags, ?) > 0", [f" {t} " for t in other_tags])
    _paths(parts, params, f.paths)
    if f.after is not None:
        parts.append("coalesce(d.updated_at, d.created_at, d.mtime) >= ?")
        params.append(f.after)
    if f.before is not None:
        parts.append("coalesce(d.updated_at, d.created_at, d.mtime) <= ?")
        params.append(f.before)
    if query.phrases:
        # Quoted words are required in every list, the vector list included: a chunk
        # qualifies when FTS5 (porter) finds each phrase's words side by side in it.
        parts.append("c.id IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)")
        params.append(all_phrases(query.phrases))
    if query.excluded:
        parts.append("c.id NOT IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)")
        params.append(" OR ".join(fts_string(w) for w in query.excluded))
    return SqlCondition(" AND ".join(parts), tuple(params))


def all_phrases(phrases: tuple[tuple[str, ...], ...]) -> str:
    """An FTS5 expression every phrase must match (each one quoted FTS5 string)."""
    return " AND ".join(dict.fromkeys(fts_string(" ".join(p)) for p in phrases))


def is_selective(query: ParsedQuery) -> bool:
    """Whether the condition likely rules out most chunks: then the lexical lists join
    it into their query rather than rank first and check after."""
    return not query.filters.is_empty() or bool(query.phrases)


def _any_of(parts: list[str], params: list, clause: str, values) -> None:
    values = list(values)
    if not values:
        return
    parts.append("(" + " OR ".join([clause] * len(values)) + ")")
    params.extend(values)


def _paths(parts: list[str], params: list, paths: tuple[str, ...]) -> None:
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


JOIN_DOCUMENTS = "JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id"
