"""FTS5's own porter tokenizer, for code that must see words exactly as the index does.

The index stores porter stems ("indexing" → "index"), so looking a word up in the
fts5vocab table, or comparing it with vocabulary terms, needs the same stem.  A
scratch in-memory FTS5 table with the same tokenizer produces it, so stemming never
writes to the store (and never looks like a change of the index to the caches).
"""

from __future__ import annotations

import threading
from functools import lru_cache

import apsw

_lock = threading.Lock()
_scratch: list[apsw.Connection] = []  # created on first use, shared by all threads under _lock


def tokenize(text: str) -> tuple[str, ...]:
    """The terms FTS5's porter tokenizer indexes for text, in order."""
    with _lock:
        conn = _scratch[0] if _scratch else _open_scratch()
        conn.execute("DELETE FROM scratch")
        conn.execute("INSERT INTO scratch (w) VALUES (?)", (text,))
        return tuple(r[0] for r in conn.execute("SELECT term FROM scratch_terms ORDER BY offset"))


@lru_cache(maxsize=50_000)
def porter_tokens(word: str) -> tuple[str, ...]:
    """tokenize() for query words, which repeat: cached."""
    return tokenize(word)


def _open_scratch() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE scratch USING fts5(w, tokenize='porter unicode61');"
        "CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, 'instance');"
    )
    _scratch.append(conn)
    return conn
