"""The team store ranks keywords with FTS5's own bm25 (issue #23 item 3).

The same chunks are written to a SQLite store and a PostgreSQL store, and the keyword
and substring lists of both are compared score for score: ts_rank would be another
ranking, and the fusion reads the scores' spread, not only their order.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.core.filters import ChunkFilter
from kenning.core.types import ChunkDraft
from kenning.storage import lexical as sqlite_lexical
from kenning.storage import open_store
from kenning.storage import sources as sqlite_sources
from kenning.storage.documents import replace_document as sqlite_replace
from kenning.storage.ftsquery import match_any
from kenning.storage.postgres import documents, lexical, open_pg_store, records
from pgtesting import note_document

TEXTS = [
    ("Rollback plan", "How to roll back a re-entry deploy. Rollbacks happen; roll back again."),
    ("Boundary layer", "The boundary-layer flow over a flat plate; boundary layer transition at high speed."),
    ("Weather", "Nothing about it at all: the weather, the wind, the rain and the re-entry of the capsule."),
    ("RateLimiter", "class RateLimiter: def acquire(self): the rate limiter waits; ratelimit_total += 1"),
    ("Notes", "roll roll roll rollback rollbacks rolling rolled plan planning planned"),
    ("Heat transfer", "Heat transfer at hypersonic speed with boundary layer suction and a flat plate."),
    ("Quotes", "It's a 'quoted' word, a back\\slash, a \"double\" quote and naïve café text."),
    ("Empty-ish", "a"),
]
WEIGHTS = (3.0, 1.0)


def _fill(write, add_source, store):
    source_id = add_source(store)
    for number, (title, text) in enumerate(TEXTS):
        rel = f"tests/t{number}.md" if number == 5 else f"n{number}.md"
        drafts = [ChunkDraft(ord=0, title=title, kind="prose", text=text, line_start=1, line_end=1)]
        write(store, note_document(source_id, rel, tags=("ops",), title_words="ops"), drafts, {}, {0: f"sha{number}"})


@pytest.fixture
def both(tmp_path, pg_url):
    sqlite = open_store(tmp_path / "k.db")
    _fill(
        sqlite_replace,
        lambda s: sqlite_sources.insert_source(s, kind="folder", root="/r", name="notes").id,
        sqlite,
    )
    pg = open_pg_store(pg_url)
    _fill(
        documents.replace_document,
        lambda s: records.insert_source(s, kind="folder", root="/r", name="notes").id,
        pg,
    )
    yield sqlite, pg
    sqlite.close()
    pg.close()


def _sqlite_ranked(sqlite, terms, phrases=(), chunk_filter=None, also=(), limit=20):
    match = match_any(terms, phrases)
    scoring = match_any(also) if also else ""
    if chunk_filter is None:
        rows = sqlite_lexical.ranked(sqlite, "porter", match, WEIGHTS, limit, also_scoring=scoring)
    else:
        rows = sqlite_lexical.ranked_filtered(
            sqlite, "porter", match, WEIGHTS, chunk_filter, limit, also_scoring=scoring
        )
    return [(r.chunk_id, -r.bm25) for r in rows]


def _pg_ranked(pg, terms, phrases=(), chunk_filter=None, also=(), limit=20):
    items = [pg.words.tokens(t) for t in terms] + [pg.words.tokenize(" ".join(p)) for p in phrases]
    also_items = [pg.words.tokens(t) for t in also]
    rows = lexical.ranked(pg, items, WEIGHTS, limit, chunk_filter, also_scoring=also_items)
    return [(r.chunk_id, r.score) for r in rows]


def _same(a, b):
    assert [c for c, _ in a] == [c for c, _ in b]
    for (_, x), (_, y) in zip(a, b):
        assert x == pytest.approx(y, rel=1e-9, abs=1e-12)


QUERIES = [
    (("rollback",), ()),
    (("roll", "back", "plan"), ()),
    (("boundary", "layer", "flat", "plate"), ()),
    (("re-entry",), ()),  # a hyphenated word is a phrase of two tokens
    (("roll", "roll", "plan"), ()),  # repeated words weigh twice
    (("the", "weather"), ()),
    (("boundary",), (("boundary", "layer"),)),
    (("naïve", "café", "it's"), ()),
    (("ratelimiter", "acquire"), ()),
    (("absent",), ()),
]


@pytest.mark.parametrize(("terms", "phrases"), QUERIES)
def test_keyword_scores_are_fts5_bm25(both, terms, phrases):
    sqlite, pg = both
    _same(_sqlite_ranked(sqlite, terms, phrases), _pg_ranked(pg, terms, phrases))


def test_filters_and_words_that_only_score_rank_as_in_sqlite(both):
    sqlite, pg = both
    for chunk_filter in (ChunkFilter(), ChunkFilter(test_files="included"), ChunkFilter(excluded=("weather",))):
        _same(
            _sqlite_ranked(sqlite, ("boundary", "speed"), chunk_filter=chunk_filter),
            _pg_ranked(pg, ("boundary", "speed"), chunk_filter=chunk_filter),
        )
    _same(
        _sqlite_ranked(sqlite, ("boundary",), also=("the", "flat")),
        _pg_ranked(pg, ("boundary",), also=("the", "flat")),
    )


def test_substring_scores_are_those_of_the_sqlite_substring_index(both):
    sqlite, pg = both
    for terms in (["ratelimi"], ["oundary", "ollbac"], ["afé"], ["xyzzy"], ["ra"]):
        expected = sqlite_lexical.ranked(sqlite, "trigram", match_any(terms), WEIGHTS, 20)
        got = lexical.ranked_substrings(pg, terms, WEIGHTS, 20)
        _same([(r.chunk_id, -r.bm25) for r in expected], [(r.chunk_id, r.score) for r in got])


def test_statistics_follow_deletes_and_replacements(both):
    sqlite, pg = both
    doc_ids = [r[0] for r in pg.execute("SELECT id FROM documents ORDER BY id")]
    documents.delete_documents(pg, doc_ids[:3])
    sqlite.execute("DELETE FROM documents WHERE id IN (SELECT id FROM documents ORDER BY id LIMIT 3)")
    _same(_sqlite_ranked(sqlite, ("roll", "boundary", "the")), _pg_ranked(pg, ("roll", "boundary", "the")))
    assert lexical.vocabulary(pg) == sqlite_lexical.vocabulary(sqlite)
    assert records.count_chunks(pg) == len(TEXTS) - 3


_words = st.sampled_from(["roll", "back", "plan", "boundary", "layer", "the", "heat", "flat", "rate", "weather"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(terms=st.lists(_words, min_size=1, max_size=5), phrase=st.lists(_words, max_size=3))
def test_any_query_ranks_as_in_sqlite(both, terms, phrase):
    sqlite, pg = both
    phrases = (tuple(phrase),) if len(phrase) > 1 else ()
    _same(_sqlite_ranked(sqlite, tuple(terms), phrases), _pg_ranked(pg, tuple(terms), phrases))


def test_term_counts_are_those_of_the_sqlite_vocabulary(both):
    sqlite, pg = both
    for term in ("roll", "the", "boundari", "rollback", "absent"):
        expected = sqlite_lexical.term_counts(sqlite, term)
        assert lexical.term_counts(pg, term) == (expected.chunks, expected.occurrences)
