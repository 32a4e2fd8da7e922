"""The word index's own tokenizer (FTS5 porter unicode61), for code that must see
words exactly as the index does: vocabulary lookups, typo correction, feedback words,
and what proximity and snippets count as a match.

A scratch in-memory FTS5 table with the same tokenizer produces the terms, so
stemming never writes to the store (and never looks like a change of the index to
the caches).  One statement costs ~0.2 ms whatever it holds, so porter_stems stems
many words per statement and remembers them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from functools import lru_cache

import apsw

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_lock = threading.Lock()
_scratch: list[apsw.Connection] = []  # created on first use, shared by all threads under _lock
_with_table: list[apsw.Connection] = []  # _scratch's, once the scratch table is made in it
_known: dict[str, tuple[str, ...]] = {}  # porter_stems' memory
KNOWN_LIMIT = 200_000
FTS5_MAX_TOKEN_BYTES = 32768  # FTS5 keeps a longer term's first 32 KiB only (fts5_storage.c)
_direct: list[Any] = []  # the porter unicode61 tokenizer itself, bound to the scratch connection


def tokenize(text: str) -> tuple[str, ...]:
    """The terms the word index stores for text, in order.

    The tokenizer is called directly (~30x faster than a row through the scratch table,
    which the PostgreSQL backend's writer pays for every chunk); text it could store
    differently goes through the table: text that is not valid UTF-8 (lone surrogates),
    and a term longer than FTS5 stores whole (FTS5_MAX_TOKEN_BYTES)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return _tokenize_through_table(text)
    with _lock:
        tokenizer = _tokenizer()
        terms = (
            None
            if tokenizer is None  # an apsw without the FTS5 API (before 3.46)
            else tokenizer(data, apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False, include_colocated=False)
        )
    if terms is None:
        return _tokenize_through_table(text)
    if len(data) > FTS5_MAX_TOKEN_BYTES and any(len(t.encode("utf-8")) > FTS5_MAX_TOKEN_BYTES for t in terms):
        return _tokenize_through_table(text)
    return tuple(terms)


def _tokenize_through_table(text: str) -> tuple[str, ...]:
    """tokenize() as the index itself stores the terms (a row of the scratch table)."""
    with _lock:
        conn = _scratch_table()
        conn.execute("DELETE FROM scratch")
        conn.execute("INSERT INTO scratch (w) VALUES (?)", (text,))
        return tuple(r[0] for r in conn.execute("SELECT term FROM scratch_terms ORDER BY offset"))


@lru_cache(maxsize=50_000)
def porter_tokens(word: str) -> tuple[str, ...]:
    """tokenize() for query words, which repeat: cached."""
    return tokenize(word)


def porter_stems(words: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
    """tokenize() of each word (looked up in the returned mapping), the words not seen
    before in one statement.  The mapping is shared and read-only to callers; it may
    hold other words too, and (bounded memory) forget words later."""
    wanted = words if isinstance(words, (set, frozenset)) else set(words)
    missing = [w for w in wanted if w not in _known]
    if missing:
        if len(_known) + len(missing) > KNOWN_LIMIT:
            _known.clear()
            missing = list(wanted)
        _known.update(_tokenize_each(missing))
    return _known


def known_stems() -> Mapping[str, tuple[str, ...]]:
    """porter_stems' memory: what it returned for every word it has stemmed (read-only)."""
    return _known


def _tokenize_each(words: list[str]) -> dict[str, tuple[str, ...]]:
    # An ASCII letters-and-digits word is exactly one token, so many of them can share
    # one text, k-th token for the k-th word (~4 µs a word against ~20 µs a row).
    plain = [w for w in words if w.isascii() and w.isalnum()]
    others = [w for w in words if not (w.isascii() and w.isalnum())]
    out: dict[str, tuple[str, ...]] = {}
    terms = tokenize(" ".join(plain)) if plain else ()
    if len(terms) == len(plain):
        out.update((w, (t,)) for w, t in zip(plain, terms))
    else:  # never expected; stay exact anyway
        others += plain
    if others:
        out.update(_tokenize_rows(others))
    return out


def _tokenize_rows(words: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {w: [] for w in words}
    with _lock:
        conn = _scratch_table()
        with conn:
            conn.execute("DELETE FROM scratch")
            conn.executemany("INSERT INTO scratch (rowid, w) VALUES (?, ?)", list(enumerate(words, 1)))
            for row, term in conn.execute("SELECT doc, term FROM scratch_terms ORDER BY doc, offset"):
                out[words[row - 1]].append(term)
    return {w: tuple(terms) for w, terms in out.items()}


def _tokenizer() -> Any:
    """The scratch table's own tokenizer as a callable (under _lock); None when apsw has
    no FTS5 API (pyproject allows apsw 3.45)."""
    if not _direct:
        make = getattr(_connection(), "fts5_tokenizer", None)
        _direct.append(make("porter", ["unicode61"]) if make is not None else None)
    return _direct[0]


def _connection() -> apsw.Connection:
    """The in-memory connection the tokenizer belongs to (under _lock)."""
    if not _scratch:
        _scratch.append(apsw.Connection(":memory:"))
    return _scratch[0]


def _scratch_table() -> apsw.Connection:
    """_connection() with the scratch table and its terms (under _lock).  Made only when
    text goes through the table: the tokenizer needs no table, and making them cost a
    lexical search 1.4 M of its ~300 M instructions (issue #27)."""
    if not _with_table:
        conn = _connection()
        conn.execute(
            "CREATE VIRTUAL TABLE scratch USING fts5(w, tokenize='porter unicode61');"
            "CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, 'instance');"
        )
        _with_table.append(conn)
    return _with_table[0]
