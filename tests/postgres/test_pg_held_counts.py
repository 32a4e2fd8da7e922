"""A keyword list's statistics come from the words' counts read earlier at the same change
token (lexical.HeldCounts, #23 item 8: at 1M chunks the statistics statement cost 3.8 ms
median inside a search), and never from counts a write has since changed.

The words step reads the feedback words' counts (Terms.counts_of) just before their
list is ranked; that list then sends no statement of its own for them.  The keyword
statement checks the change token it was held at, so a write by another connection in
between is seen: the list is ranked with the counts as they are now.
"""

from __future__ import annotations

import pytest

from kenning.core.filters import ChunkFilter
from kenning.core.types import ChunkDraft
from kenning.storage.postgres import lexical, open_pg_store
from pgtesting import note_document

WEIGHTS = (3.0, 1.0)
TEXTS = [
    "the replica takes the writes when the primary fails",
    "promote the replica after a failover",
    "the primary keeps the journal",
    "a deploy rolls back to the previous image",
]


def _add(store, source: int, rel: str, text: str) -> None:
    store.documents.replace(note_document(source, rel), [ChunkDraft(0, rel, "prose", text, 1, 1)], {}, {0: "s"})


@pytest.fixture
def pg(pg_url):
    store = open_pg_store(pg_url)
    source = store.sources.add(kind="folder", root="/r", name="notes").id
    for number, text in enumerate(TEXTS):
        _add(store, source, f"n{number}.md", text)
    yield store, source
    store.close()


def _ranked(store, words, use_held=True):
    items = [store.words.tokens(w) for w in words]
    rows = lexical.ranked(store, items, WEIGHTS, 10, ChunkFilter(), use_held=use_held)
    return [(r.chunk_id, r.score) for r in rows]


def _statements(store, monkeypatch) -> list[str]:
    sent: list[str] = []
    execute = store.execute

    def counted(sql, params=()):
        sent.append(sql)
        return execute(sql, params)

    monkeypatch.setattr(store, "execute", counted)
    return sent


def test_counts_just_read_serve_the_list_statistics(pg, monkeypatch):
    store, _ = pg
    fresh = _ranked(store, ["replica", "primary"], use_held=False)
    store.terms.counts_of(["replica", "primary"])  # as the feedback words' counts are read
    sent = _statements(store, monkeypatch)
    assert _ranked(store, ["replica", "primary"]) == fresh
    assert len(sent) == 1, sent  # the keyword statement alone: no statistics statement


def test_a_word_not_held_is_read_with_the_totals(pg, monkeypatch):
    store, _ = pg
    store.terms.counts_of(["replica"])
    sent = _statements(store, monkeypatch)
    assert _ranked(store, ["replica", "journal"]) == _ranked(store, ["replica", "journal"], use_held=False)
    assert any("FROM store_state g" in sql for sql in sent)


def test_a_write_by_another_connection_since_the_counts_were_read_is_seen(pg, pg_url):
    store, source = pg
    store.terms.counts_of(["replica", "primary"])
    held = _ranked(store, ["replica", "primary"])
    other = open_pg_store(pg_url)
    try:
        for number in range(6):  # replica becomes common: its idf, so every score, changes
            _add(other, source, f"more{number}.md", f"replica replica notes {number}")
    finally:
        other.close()
    now = _ranked(store, ["replica", "primary"])
    assert now != held
    assert now == _ranked(store, ["replica", "primary"], use_held=False)
    reopened = open_pg_store(pg_url)
    try:
        assert now == _ranked(reopened, ["replica", "primary"])
    finally:
        reopened.close()


def test_a_list_that_finds_nothing_is_still_nothing(pg):
    store, _ = pg
    store.terms.counts_of(["zeppelin"])
    assert _ranked(store, ["zeppelin"]) == []
