"""Properties of query parsing and fusion."""

import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.search.fts import Ranked
from kenning.search.fusion import RRF_K, linear_ceiling, linear_fuse, rrf_ceiling, rrf_fuse
from kenning.search.query import parse_query
from kenning.storage.ftsquery import match_any


def test_filters_and_phrases_parse():
    q = parse_query(
        'deploy "blue green" -canary source:ops path:docs/*.md ext:MD tag:#infra after:2024-01-31 before:2024-02'
    )
    assert q.terms == ("deploy", "blue", "green")
    assert q.phrases == (("blue", "green"),)
    assert q.excluded == ("canary",)
    f = q.filters
    assert (f.sources, f.paths, f.exts, f.tags) == (("ops",), ("docs/*.md",), ("md",), ("infra",))
    assert f.after is not None and f.before is not None and f.after < f.before


def test_operators_are_words():
    assert parse_query("a AND b OR NOT near").terms == ("a", "and", "b", "or", "not", "near")


def test_bad_dates_are_reported_not_raised():
    q = parse_query("x after:yesterday")
    assert q.filters.after is None and q.problems


_fts = apsw.Connection(":memory:")
_fts.execute(
    "CREATE VIRTUAL TABLE t USING fts5(a, tokenize='porter unicode61');"
    "CREATE VIRTUAL TABLE u USING fts5(a, tokenize='trigram')"
)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_any_text_makes_a_valid_match_expression(text):
    q = parse_query(text)
    if q.content_terms:
        expr = match_any(q.content_terms, q.phrases)
        list(_fts.execute("SELECT * FROM t WHERE t MATCH ?", (expr,)))
        list(_fts.execute("SELECT * FROM u WHERE u MATCH ?", (expr,)))


ranked_lists = st.dictionaries(
    st.sampled_from(["porter", "trigram", "vector"]),
    st.lists(st.integers(1, 60), unique=True, max_size=40),
    max_size=3,
)


@settings(deadline=None)  # timings on a shared machine are not the property
@given(ranked_lists)
def test_rrf_dominance_and_bounds(lists):
    ranked = {n: [Ranked(c, 1.0 / (i + 1)) for i, c in enumerate(ids)] for n, ids in lists.items()}
    weights = {"porter": 1.0, "trigram": 0.5, "vector": 1.0}
    pool = rrf_fuse(ranked, weights)
    assert set(pool) == {c for ids in lists.values() for c in ids}  # nothing dropped
    ceiling = rrf_ceiling(list(lists), weights)
    for a in pool.values():
        assert 0 < a.fused <= ceiling + 1e-12
        for b in pool.values():
            if set(b.lists) <= set(a.lists) and all(a.lists[n].rank <= b.lists[n].rank for n in b.lists):
                assert a.fused >= b.fused


@given(ranked_lists)
def test_linear_fusion_stays_within_its_ceiling_and_keeps_each_lists_order(lists):
    ranked = {n: [Ranked(c, float(len(ids) - i)) for i, c in enumerate(ids)] for n, ids in lists.items()}
    weights = {"porter": 1.0, "trigram": 0.5, "vector": 1.0}
    pool = linear_fuse(ranked, weights)
    ceiling = linear_ceiling(list(lists), weights)
    for cand in pool.values():
        assert 0.0 <= cand.fused <= ceiling + 1e-12
        for name, s in cand.lists.items():
            assert s.contribution == s.weight * s.score / ranked[name][0].score  # the list's best counts its weight
    for a in pool.values():
        for b in pool.values():
            if set(b.lists) <= set(a.lists) and all(a.lists[n].rank <= b.lists[n].rank for n in b.lists):
                assert a.fused >= b.fused


def test_linear_fusion_keeps_near_equal_scores_near_equal():
    """Unlike min-max, the last of two near-equal items is not sent to 0."""
    pool = linear_fuse({"porter": [Ranked(1, 10.0), Ranked(2, 9.9)]}, {"porter": 1.0})
    assert pool[1].fused == 1.0 and abs(pool[2].fused - 0.99) < 1e-12


def test_linear_fusion_reads_scores_at_fts5s_idf_floor_by_rank():
    """A word in over half the chunks has idf 1e-6: such scores' ratios measure length, not relevance."""
    tiny = {"porter": [Ranked(1, 3.3e-6), Ranked(2, 1.1e-6), Ranked(3, 1.1e-6)]}
    pool = linear_fuse(tiny, {"porter": 1.0}, by_rank={"porter"})
    assert pool[1].fused == 1.0 and pool[2].fused == pool[3].fused == (RRF_K + 1) / (RRF_K + 2)
    assert linear_fuse({"vector": [Ranked(1, 0.0), Ranked(2, -0.1)]}, {"vector": 1.0})[2].fused == 0.0
