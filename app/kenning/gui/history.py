"""Recent searches, per store: a drop-down beside the search field, Up recalls the last.

A query joins the history once its results have been on screen for SETTLE_MS without
more typing (or a result was opened), so half-typed words from live search never do.
"""

from __future__ import annotations

HISTORY_KEY = "search_history"
MAX_ENTRIES = 30
SETTLE_MS = 1500


class SearchHistory:
    def __init__(self, entries: list[str] | None = None) -> None:
        self.entries: list[str] = [e for e in (entries or []) if isinstance(e, str) and e.strip()][:MAX_ENTRIES]

    def add(self, query: str) -> bool:
        """Most recent first, no duplicates; True when the history changed."""
        query = " ".join(query.split())
        if not query or (self.entries and self.entries[0] == query):
            return False
        self.entries = [query] + [e for e in self.entries if e != query]
        del self.entries[MAX_ENTRIES:]
        return True

    def clear(self) -> None:
        self.entries = []

    @property
    def last(self) -> str | None:
        return self.entries[0] if self.entries else None
