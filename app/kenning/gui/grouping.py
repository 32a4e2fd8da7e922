"""Results grouped by file: one row per file with its best chunk, "n more in this file".

A group expands in place (its other chunks follow, indented).  Groups are ordered by
relevance (the engine's order: each file's best chunk), date (newest first, from the
recency the ranking computed from the document's date) or path.
"""

from __future__ import annotations

from kenning.core.records import Record
from kenning.core.types import Hit, SearchResult
from kenning.core.wording import plural

SORTS = (("relevance", "Relevance"), ("date", "Newest first"), ("path", "Path"))


class Row(Record, frozen=True):
    hit: Hit
    more: int  # other chunks of this file among the results (lead rows only)
    child: bool  # one of the "more", shown under its lead row
    expanded: bool

    @property
    def key(self) -> tuple[str, str]:
        return file_key(self.hit)


def file_key(hit: Hit) -> tuple[str, str]:
    return (hit.source, hit.path)


def groups(hits: list[Hit]) -> list[list[Hit]]:
    """Hits per file, in order of each file's best hit; within a file, best first."""
    by_file: dict[tuple[str, str], list[Hit]] = {}
    for hit in hits:
        by_file.setdefault(file_key(hit), []).append(hit)
    return list(by_file.values())


def sort_groups(grouped: list[list[Hit]], sort: str) -> list[list[Hit]]:
    if sort == "date":
        return sorted(grouped, key=lambda g: -max(h.breakdown.recency for h in g))  # stable: ties by relevance
    if sort == "path":
        return sorted(grouped, key=lambda g: (g[0].source, g[0].path.lower()))
    return grouped


def rows(
    hits: list[Hit], expanded: set[tuple[str, str]], sort: str = "relevance", max_files: int | None = None
) -> list[Row]:
    """The best max_files files (by relevance), in the chosen order, each with its hits."""
    out: list[Row] = []
    for group in sort_groups(groups(hits)[:max_files], sort):
        is_open = file_key(group[0]) in expanded
        out.append(Row(group[0], len(group) - 1, False, is_open))
        if is_open:
            out.extend(Row(h, 0, True, True) for h in group[1:])
    return out


def summary(result: SearchResult, max_files: int | None = None) -> str:
    """ "143 matches in 37 files (best 20 files shown)" once the engine's total is counted;
    until then what the list holds ("20 results in 12 files")."""
    shown = groups(result.hits)[:max_files]
    files = len(shown)
    chunks = sum(len(g) for g in shown)
    total = result.total
    if total is None:
        return f"{plural(chunks, 'result')} in {plural(files, 'file')}"
    text = total.describe()
    if total.capped or total.files > files:
        text += f" (best {plural(files, 'file')} shown)"
    elif total.chunks > chunks:
        text += f" (best {plural(chunks, 'match')} shown)"
    elif total.files < files:  # meaning-only: the list goes on past the counted cosine floor
        text += f" (nearest {plural(files, 'file')} shown)"
    return text
