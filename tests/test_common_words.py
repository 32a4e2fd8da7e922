"""In a large index the commonest query words find no chunks of their own (for speed),
but they still score in the chunks the rarer words find: the keyword list is then
exactly the whole query's bm25 ranking of those chunks."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.core.filters import ChunkFilter
from kenning.search import fts
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.filters import build_condition
from kenning.search.query import parse_query
from kenning.storage import lexical
from kenning.storage.ftsquery import match_any
from kenning_testing import index_folder, write_files

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
WEIGHTS = (fts.TITLE_WEIGHT, fts.TEXT_WEIGHT)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """160 notes and scripts of words drawn with very unequal frequencies."""
    from kenning.storage import open_store

    rng = random.Random(7)
    root = tmp_path_factory.mktemp("corpus")
    files = {}
    for i in range(160):
        words = rng.choices(WORDS, weights=[40, 25, 12, 8, 5, 3, 2, 1], k=rng.randint(3, 40))
        suffix = "md" if i % 3 else "py"
        if i % 20 == 0:
            words.append("zulu")  # in 8 of the 160 files: rare
        body = " ".join(words)
        files[f"n{i:03}.{suffix}"] = f"# {words[0]}\n\n{body}\n" if suffix == "md" else f"# {body}\nx = 1\n"
    store = open_store(root / "store" / "kenning.db")
    index_folder(store, write_files(root / "notes", files), name="notes")
    yield store
    store.close()


def _whole_query_ranking(store, words, found_by, chunk_filter: ChunkFilter | None, limit):
    """The reference: bm25 of every word together, over the chunks found_by's words hold."""
    holders = {r[0] for r in store.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (found_by,))}
    every = lexical.ranked(store, "porter", match_any(words), WEIGHTS, 100_000)
    if chunk_filter is not None:
        allowed = lexical.allowed(store, [r.chunk_id for r in every], chunk_filter)
        every = [r for r in every if r.chunk_id in allowed]
    return [(r.chunk_id, pytest.approx(r.bm25, abs=1e-9)) for r in every if r.chunk_id in holders][:limit]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    finding=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    scoring=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    limit=st.integers(min_value=1, max_value=60),
    filtered=st.booleans(),
)
def test_words_that_only_score_give_the_whole_querys_ranking(corpus, finding, scoring, limit, filtered):
    found_by, also = match_any(finding), match_any(scoring)
    if filtered:
        chunk_filter = build_condition(parse_query("x ext:md"))
        got = lexical.ranked_filtered(corpus, "porter", found_by, WEIGHTS, chunk_filter, limit, also_scoring=also)
    else:
        chunk_filter = None
        got = lexical.ranked(corpus, "porter", found_by, WEIGHTS, limit, also_scoring=also)
    expected = _whole_query_ranking(corpus, finding + scoring, found_by, chunk_filter, limit)
    assert [(r.chunk_id, r.bm25) for r in got] == expected


def test_the_engine_scores_the_common_words_it_does_not_search(corpus, monkeypatch):
    """In a large index "alpha", found in most chunks, finds none; yet a chunk holding
    both words ranks by both (as the whole query ranks it)."""
    monkeypatch.setattr(fts, "ELIDE_FROM_CHUNKS", 0)  # this index counts as large
    monkeypatch.setattr(fts, "COMMON_SHARE", 0.3)
    engine = SearchEngine(corpus)
    stats = engine.term_stats
    assert stats.without_common(("alpha", "zulu")) == ("zulu",)
    result = engine.search("alpha zulu", SearchOptions(limit=50, mode="lexical"))
    assert result.hits
    expected = _whole_query_ranking(corpus, ["alpha", "zulu"], match_any(["zulu"]), None, 1000)
    keyword_list = sorted((h.breakdown.lists["porter"].rank, h.chunk_id) for h in result.hits)
    assert [cid for _, cid in keyword_list] == [cid for cid, _ in expected][: len(keyword_list)]
    scores = {h.chunk_id: h.breakdown.lists["porter"].score for h in result.hits}
    assert [(cid, -scores[cid]) for _, cid in keyword_list] == expected[: len(keyword_list)]
