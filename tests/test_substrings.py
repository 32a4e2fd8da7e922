"""The substring index without positions (detail=none, issue #15): rows holding a
substring's trigrams are verified against the text and ranked by the bm25 FTS5 gave
with every position stored (detail=full), which these tests build beside it to compare."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.core.filters import ChunkFilter
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import lexical, substrings
from kenning.storage.ftsquery import match_any, strings_of
from kenning_testing import index_folder, write_files

WEIGHTS = (3.0, 1.0)

FILES = {
    "limiter.py": "class RateLimiter:\n    '''A ratelimiter ratelimits.'''\n    def ratelimit(self): pass\n",
    "spread.md": "# Apart\n\nA rat sat at the gate; tell the others.\n",  # r-a-t, a-t-e, t-e-l apart
    "aaa.txt": "aaaaa aaaa banana bandana\n",
    "CamelCase.md": "# RateLimiter notes\n\nThe RATELIMITER throttles calls. os.path.join too.\n",
    "path.py": "import os\n\npath = os.path.join(base, name)  # os.path.join again\n",
    "unicode.md": "# Émile\n\nÉcole straße STRASSE naïve ÉCOLE\n",
}


@pytest.fixture
def indexed(store, notes):
    write_files(notes, FILES)
    index_folder(store, notes, name="notes")
    store.execute(
        "CREATE VIRTUAL TABLE tri_full USING fts5(title, text, content='chunks_indexed', content_rowid='id',"
        " tokenize='trigram', detail='full')"
    )
    store.execute("INSERT INTO tri_full(tri_full) VALUES ('rebuild')")
    return store


def _fts5_full(store, terms: list[str]) -> list[tuple[int, float]]:
    rows = store.execute(
        "SELECT rowid, bm25(tri_full, 3.0, 1.0) AS b FROM tri_full WHERE tri_full MATCH ? ORDER BY b, rowid",
        (match_any(terms),),
    )
    return [(int(r[0]), float(r[1])) for r in rows]


def _ours(store, terms: list[str]) -> list[tuple[int, float]]:
    return [(r.chunk_id, r.bm25) for r in lexical.ranked(store, "trigram", match_any(terms), WEIGHTS, 1000)]


def test_the_table_keeps_no_positions(store):
    assert "detail='none'" in store.scalar("SELECT sql FROM sqlite_master WHERE name = 'chunks_tri'")


@pytest.mark.parametrize(
    "terms",
    [
        ["ratelimi"],
        ["RateLimiter"],  # case does not matter, as in FTS5's trigram tokenizer
        ["ratelimit", "ratelimit"],  # a repeated word counts twice (query-term frequency)
        ["os.path.join", "limiter"],
        ["aaa"],  # overlapping occurrences: three in "aaaaa", as FTS5 counts them
        ["aaaa", "anana"],
        ["école", "strasse"],
        ["ratel"],  # the spread file holds its trigrams apart: not a match
    ],
)
def test_ranking_and_scores_are_those_of_fts5_with_positions(indexed, terms):
    expected, got = _fts5_full(indexed, terms), _ours(indexed, terms)
    assert [c for c, _ in got] == [c for c, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-6)


def test_trigrams_found_apart_are_not_a_match(indexed):
    spread_id = indexed.scalar(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.rel_path = 'spread.md'"
    )
    assert spread_id in substrings.candidates(indexed, "ratel")  # the index alone would say yes
    assert spread_id not in {c for c, _ in _ours(indexed, ["ratel"])}


def test_shorter_than_a_trigram_finds_nothing(indexed):
    assert _ours(indexed, ["os"]) == [] == _fts5_full(indexed, ["os"])


def test_a_filter_acts_before_the_cut(indexed):
    only_md = ChunkFilter(exts=("md",))
    rows = lexical.ranked_filtered(indexed, "trigram", match_any(["ratelimiter"]), WEIGHTS, only_md, 10)
    paths = {
        indexed.scalar(
            "SELECT d.rel_path FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?", (r.chunk_id,)
        )
        for r in rows
    }
    assert paths == {"CamelCase.md"}


def test_a_common_substring_is_scored_on_a_spread_sample(indexed, monkeypatch):
    monkeypatch.setattr(substrings, "SCORE_CAP", 2)
    every = {c for c, _ in _fts5_full(indexed, ["ate"])}
    got = _ours(indexed, ["ate"])
    assert len(every) > 2 and len(got) <= 2 and {c for c, _ in got} <= every


def test_spread_keeps_the_ends_and_the_order():
    assert substrings.spread(list(range(10)), 5) == [0, 2, 4, 6, 8]
    assert substrings.spread([3, 4], 5) == [3, 4]


def test_search_finds_a_partial_identifier_and_highlights_it(indexed):
    result = SearchEngine(indexed, None).search("ratelimi", SearchOptions(limit=5, mode="lexical"))
    assert result.hits and result.hits[0].path in {"limiter.py", "CamelCase.md"}
    assert "trigram" in result.hits[0].breakdown.lists


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet='ab"é .', min_size=1, max_size=6), min_size=1, max_size=3))
def test_the_match_strings_come_back_as_given(words):
    assert strings_of(match_any(words)) == words


def test_totals_count_verified_substring_rows_only(indexed):
    ratel = lexical.count_matches(indexed, {"trigram": match_any(["ratel"])}, [], ChunkFilter(), 100)
    expected = {c for c, _ in _fts5_full(indexed, ["ratel"])}
    assert ratel.chunks == len(expected) >= 2  # the spread file, holding the trigrams apart, is not counted
    assert lexical.count_matches(indexed, {"trigram": match_any(["os"])}, [], ChunkFilter(), 100).chunks == 0
