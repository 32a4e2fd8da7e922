"""A ChunkFilter as one SQL condition over chunks c, documents d and sources s (PostgreSQL).

The same rules as the SQLite backend's storage/filtering.py; every value is a
parameter.  A path glob is matched with SQL's SIMILAR-free translation to a regular
expression anchored at both ends (GLOB semantics: `*` any run, `?` one character,
`[...]` a class), the user's other characters escaped.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.storage.postgres.words import Words, all_query, any_query

GLOB_CHARS = set("*?[")
JOIN_DOCUMENTS = "JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id"
_WORDS = Words()


class SqlCondition(Record, frozen=True):
    sql: str
    params: tuple[Any, ...]


@lru_cache(maxsize=256)
def filter_condition(f: ChunkFilter) -> SqlCondition:
    parts = ["s.enabled"]
    params: list[Any] = []
    if f.test_files != "included":
        parts.append("d.is_test" if f.test_files == "only" else "NOT d.is_test")
    if f.except_document is not None:
        parts.append("d.id <> %s")
        params.append(f.except_document)
    _any_of(parts, params, "s.name = ANY(%s)", f.sources)
    _any_of(parts, params, "d.ext = ANY(%s)", f.exts)
    if f.tags:
        parts.append("(" + " OR ".join(["strpos(d.tags, %s) > 0"] * len(f.tags)) + ")")
        params.extend(f" {t} " for t in f.tags)
    _paths(parts, params, f.paths)
    if f.after is not None:
        parts.append("coalesce(d.updated_at, d.created_at, d.mtime) >= %s")
        params.append(f.after)
    if f.before is not None:
        parts.append("coalesce(d.updated_at, d.created_at, d.mtime) <= %s")
        params.append(f.before)
    if f.phrases:
        query = all_query(_WORDS.tokenize(" ".join(p)) for p in f.phrases)
        if query:
            parts.append("c.words @@ %s::tsquery")
            params.append(query)
        else:  # a phrase of no word at all can match nothing
            parts.append("false")
    if f.excluded:
        query = any_query(_WORDS.tokenize(w) for w in f.excluded)
        if query:
            parts.append("NOT (c.words @@ %s::tsquery)")
            params.append(query)
    return SqlCondition(" AND ".join(parts), tuple(params))


def _any_of(parts: list[str], params: list[Any], clause: str, values: tuple[str, ...]) -> None:
    if values:
        parts.append(clause)
        params.append(list(values))


def glob_regex(glob: str) -> str:
    """SQLite GLOB semantics (case-sensitive, `*` spans `/`) as an anchored POSIX regex."""
    out = ["^"]
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("^", "]") else i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = glob[i + 1 : end]
                negate = body.startswith("^")
                body = body[1:] if negate else body
                escaped = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append("[" + ("^" if negate else "") + escaped + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    out.append("$")
    return "".join(out)


def _paths(parts: list[str], params: list[Any], paths: tuple[str, ...]) -> None:
    """A glob matches the whole relative path or any tail of it; plain text is a substring."""
    clauses = []
    for value in paths:
        value = value.lstrip("./") if value.startswith("./") else value
        if GLOB_CHARS & set(value):
            clauses.append("(d.rel_path ~ %s OR d.rel_path ~ %s)")
            params.extend([glob_regex(value), glob_regex("*/" + value.lstrip("/"))])
        else:
            clauses.append("strpos(d.rel_path, %s) > 0")
            params.append(value)
    if clauses:
        parts.append("(" + " OR ".join(clauses) + ")")
