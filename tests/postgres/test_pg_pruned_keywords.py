"""A common word's keyword list reads its best postings, and scores what they find exactly
(#23 item 8; schema.py m007, lexical.PRUNE_DEPTH).

Each row such a list returns carries its true bm25 (the exact statement's score for
that chunk, so --explain still adds up); the filter is applied while the postings are
read, so chunks it excludes take no place; while no word is in more chunks than the
depth, the list is the exact one; the postings follow every write.
"""

from __future__ import annotations

import pytest

from kenning.core.filters import ChunkFilter
from kenning.core.types import ChunkDraft
from kenning.storage.postgres import lexical, open_pg_store
from pgtesting import note_document, statistics_problems

WEIGHTS = (3.0, 1.0)


# Chunks of one length (eight words) holding "replica" 1-4 times, some "primary" too: a
# one-word list's order is then its impact order, whatever the mean length.
FILLER = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def _text(number: int) -> str:
    words = list(FILLER)
    for at in range(number % 4 + 1):
        words[at] = "replica"
    if number % 3 == 0:
        words[7] = "primary"
    return " ".join(words)


@pytest.fixture
def pg(pg_url):
    store = open_pg_store(pg_url)
    source = store.sources.add(kind="folder", root="/r", name="notes").id
    for number in range(24):
        rel = f"tests/t{number}.md" if number % 4 == 3 else f"n{number}.md"  # the best (4 each) are test files
        store.documents.replace(
            note_document(source, rel), [ChunkDraft(0, f"note {number}", "prose", _text(number), 1, 1)], {}, {0: "s"}
        )
    yield store
    store.close()


def _ranked(store, terms, limit=30, chunk_filter=None, also=()):
    items = [store.words.tokens(t) for t in terms]
    also_items = [store.words.tokens(t) for t in also]
    rows = lexical.ranked(store, items, WEIGHTS, limit, chunk_filter, also_scoring=also_items)
    return [(r.chunk_id, r.score) for r in rows]


def test_a_word_within_the_depth_ranks_as_the_exact_list(pg, monkeypatch):
    exact = _ranked(pg, ["replica", "primary"], chunk_filter=ChunkFilter())
    monkeypatch.setattr(lexical, "PRUNE_DEPTH", 24)  # no word in more chunks than that
    assert _ranked(pg, ["replica", "primary"], chunk_filter=ChunkFilter()) == exact


def test_a_pruned_list_scores_each_chunk_exactly(pg, monkeypatch):
    exact = dict(_ranked(pg, ["replica", "primary", "gamma"], also=("alpha",)))
    monkeypatch.setattr(lexical, "PRUNE_DEPTH", 5)
    pruned = _ranked(pg, ["replica", "primary", "gamma"], also=("alpha",))
    assert 0 < len(pruned) < len(exact)
    for chunk_id, score in pruned:
        assert score == pytest.approx(exact[chunk_id], rel=1e-9)
    assert [s for _, s in pruned] == sorted((s for _, s in pruned), reverse=True)


def test_a_one_word_list_keeps_the_best_chunks(pg, monkeypatch):
    exact = _ranked(pg, ["replica"], limit=5)
    monkeypatch.setattr(lexical, "PRUNE_DEPTH", 5)
    assert _ranked(pg, ["replica"], limit=5) == exact


def test_the_filter_is_applied_while_the_postings_are_read(pg, monkeypatch):
    """The best postings of "replica" are test files': a filter without them still fills the list."""
    no_tests = ChunkFilter()  # the default: no test files
    exact = _ranked(pg, ["replica"], limit=4, chunk_filter=no_tests)
    monkeypatch.setattr(lexical, "PRUNE_DEPTH", 4)
    pruned = _ranked(pg, ["replica"], limit=4, chunk_filter=no_tests)
    assert pruned == exact and len(pruned) == 4
    tests = {
        int(r[0])
        for r in pg.execute("SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.is_test")
    }
    assert not tests & {c for c, _ in pruned}
    everything = _ranked(pg, ["replica"], limit=4, chunk_filter=ChunkFilter(test_files="included"))
    assert {c for c, _ in everything} <= tests  # (so the test above could fail)


def test_a_filter_on_the_chunks_own_words_keeps_the_exact_path(pg, monkeypatch):
    without = ChunkFilter(excluded=("primary",))
    exact = _ranked(pg, ["replica"], chunk_filter=without)
    monkeypatch.setattr(lexical, "PRUNE_DEPTH", 2)
    assert _ranked(pg, ["replica"], chunk_filter=without) == exact


def test_postings_follow_replacements_and_deletes(pg):
    assert statistics_problems(pg) == []
    assert pg.scalar("SELECT count(*) FROM postings WHERE term = 'replica'") == 24
    doc = pg.documents.find(pg.sources.get("notes").id, "n0.md")
    pg.documents.replace(
        note_document(doc.source_id, "n0.md"),
        [ChunkDraft(0, "rewritten", "prose", "replica lag only", 1, 1)],
        {},
        {0: "t"},
    )
    pg.documents.delete([pg.documents.find(doc.source_id, "n1.md").id])
    assert statistics_problems(pg) == []
    pg.sources.remove(doc.source_id)  # the cascade's deletes too
    assert statistics_problems(pg) == []
    assert pg.scalar("SELECT count(*) FROM postings") == 0
