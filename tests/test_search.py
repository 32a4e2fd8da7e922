"""The search pipeline on real stores: filters inside retrievers, fusion, fuzzy, explain."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.search import fts
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.filters import build_condition
from kenning.search.fusion import DEFAULT_FUSION
from kenning.search.query import parse_query
from kenning.search.signals import calibrated_base, final_score, shown_score
from kenning.search.vector import VectorIndex
from kenning_testing import CountingEmbedder, chunk_ids, index_folder, reindex, write_files


@pytest.fixture
def crowded(store, tmp_path):
    """300 notes shouting about turbines in one source, one quiet mention in another."""
    noise = write_files(
        tmp_path / "noise",
        {f"n{i:03}.md": f"# Turbine {i}\n\nturbine turbine turbine blades turbine {i}\n" for i in range(300)},
    )
    target = write_files(
        tmp_path / "target",
        {"quiet.py": "def spin():\n    # the turbine is mentioned once among many other words here\n    return 1\n"},
    )
    embedder = CountingEmbedder()
    index_folder(store, noise, embedder, name="noise")
    index_folder(store, target, embedder, name="target")
    return embedder


@pytest.mark.parametrize("selective", [True, False], ids=["joined", "deepening"])
@pytest.mark.parametrize("filter_text", ["source:target", "ext:py", "path:quiet*", "path:quiet"])
@pytest.mark.parametrize("table", ["porter", "trigram"])
def test_lexical_retrievers_filter_before_the_cut(store, crowded, table, filter_text, selective):
    query = parse_query(f"turbine {filter_text}")
    cond = build_condition(query)
    ranked = fts.keyword_list(store, table, fts.KeywordQuery(("turbine",)), cond, 30, selective=selective).ranked
    assert len(ranked) == 1
    assert store.chunks.rows([ranked[0].chunk_id])[ranked[0].chunk_id].rel_path == "quiet.py"


@pytest.mark.parametrize("filter_text", ["source:target", "ext:py", "path:*.py"])
def test_vector_retriever_filters_before_the_cut(store, crowded, filter_text):
    index = VectorIndex(store, crowded.fingerprint)
    query = parse_query(f"turbine turbine blades {filter_text}")
    ranked = index.search(crowded.embed_query("turbine turbine blades"), build_condition(query), 30)
    assert [r.chunk_id for r in ranked] == chunk_ids(store, "quiet.py")


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "vector"])
def test_engine_finds_the_filtered_chunk_in_every_mode(store, crowded, mode):
    engine = SearchEngine(store, crowded)
    result = engine.search("turbine source:target", SearchOptions(limit=5, mode=mode))
    assert [h.path for h in result.hits] == ["quiet.py"]


def test_repeated_headings_stay_separate_hits(store, notes, embedder):
    write_files(notes, {"log.md": "# Log\n\n## Notes\n\nzebra crossing one\n\n## Notes\n\nzebra crossing two\n"})
    index_folder(store, notes, embedder)
    hits = SearchEngine(store, embedder).search("zebra").hits
    assert len(hits) == 2
    assert {h.title for h in hits} == {"Log > Notes"}
    assert len({h.chunk_id for h in hits}) == 2


def test_fuzzy_layer_only_when_nothing_matches(store, notes):
    write_files(notes, {"a.md": "# Retrieval\n\nretrieval augmented generation explained\n"})
    index_folder(store, notes)
    engine = SearchEngine(store, None)
    exact = engine.search("retrieval")
    assert exact.layer == DEFAULT_FUSION and exact.hits and exact.suggestion is None
    fuzzy = engine.search("retreival")
    assert fuzzy.layer == f"{DEFAULT_FUSION}-fuzzy"
    assert fuzzy.corrections == {"retreival": "retrieval"}
    assert fuzzy.hits and all(h.breakdown.layer == fuzzy.layer for h in fuzzy.hits)
    assert fuzzy.hits[0].breakdown.corrections == {"retreival": "retrieval"}


def test_a_number_is_never_corrected(store, notes):
    """ "1979" is no misspelt "1969" (issue #28: CISI query 92 searched 1969 for it)."""
    write_files(notes, {"a.md": "# Survey\n\nthe citation survey of 1969 and its findings\n"})
    index_folder(store, notes)
    engine = SearchEngine(store, None)
    for query in ("citation survey 1979", "1979"):
        result = engine.search(query)
        assert result.corrections == {} and result.suggestion is None, query
    assert engine.search("citation survey findinsg").corrections == {"findinsg": "findings"}  # words still are


def test_vocabulary_learns_new_words_once_the_reload_interval_passes(store, notes, monkeypatch):
    from kenning.search import fuzzy

    write_files(notes, {"a.md": "retrieval augmented generation explained"})
    index_folder(store, notes)
    engine = SearchEngine(store, None)
    assert engine.search("retreival").corrections == {"retreival": "retrieval"}  # vocabulary loaded
    write_files(notes, {"b.md": "terraform modules and providers"})
    reindex(store)
    clock = [1000.0]
    monkeypatch.setattr(fuzzy.time, "monotonic", lambda: clock[0])
    engine.vocabulary._loaded_at = clock[0]
    assert engine.search("terraformm").corrections == {}  # within the interval: not reloaded yet
    clock[0] += fuzzy.RELOAD_INTERVAL_SECONDS
    assert engine.search("terraformm").corrections == {"terraformm": "terraform"}


def test_did_you_mean_keeps_results_unchanged(store, notes):
    write_files(notes, {"a.md": "# Generation\n\nretrieval augmented generation explained\n"})
    index_folder(store, notes)
    engine = SearchEngine(store, None)
    result = engine.search("generation retreival", SearchOptions(search_corrections=False))
    assert result.layer == DEFAULT_FUSION
    assert result.hits  # "generation" matched, so the results stand
    assert result.suggestion == "generation retrieval"


def test_typo_vocabulary_is_what_a_search_can_return_not_test_files(store, notes):
    write_files(
        notes,
        {
            "a.md": "# Retrieval\n\nretrieval augmented generation explained\n",
            "tests/test_parsing.py": "def test_retreival():\n    kubernetes = 'retreival'  # kubernetes only here\n",
        },
    )
    index_folder(store, notes)
    engine = SearchEngine(store, None)
    # The misspelling occurs only in a test file a search leaves out: it is still a typo.
    typo = engine.search("retreival")
    assert typo.corrections == {"retreival": "retrieval"} and typo.hits
    # A word found only in test files is no correction for a search that cannot show it.
    assert engine.search("kubernetse").corrections == {}
    # Asked for test files, the vocabulary is theirs.
    assert engine.search("retreival tag:test").corrections == {}
    assert engine.search("kubernetse tag:test").corrections == {"kubernetse": "kubernetes"}


def test_nothing_found_and_nothing_to_correct_is_just_empty(store, notes):
    write_files(notes, {"a.md": "alpha"})
    index_folder(store, notes)
    result = SearchEngine(store, None).search("zzzzqqqq")
    assert result.hits == [] and result.layer == DEFAULT_FUSION


HOSTILE = [
    "",
    "   ",
    '"',
    '""',
    '"unbalanced',
    "a AND",
    "OR",
    "NOT x",
    "NEAR(a b)",
    "x*",
    "^start",
    "col:value",
    "title:foo",
    "(((",
    ")))",
    "a -",
    "-",
    '-"x"',
    "'; DROP TABLE chunks; --",
    "\x00\x01",
    "😀🔥",
    "日本語のテスト",
    "Ελληνικά",
    "x" * 10_000,
    "word " * 2000,
    "path:[",
    "path:**/*",
    "after:not-a-date",
    "before:2024-13-45",
    "tag:",
    "source:",
    "ext:",
    "\\",
    "%",
    "_",
    '"a" "b" "c"',
    "a:b:c",
    "c++",
    "foo.bar()",
    "{}[]",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_raise(store, crowded, text):
    engine = SearchEngine(store, crowded)
    for mode in ("hybrid", "lexical", "vector"):
        engine.search(text, SearchOptions(mode=mode))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_arbitrary_queries_never_raise(store, crowded, text):
    SearchEngine(store, crowded).search(text, SearchOptions(mode="hybrid"))


def test_tie_order_is_stable_and_by_chunk_id(store, notes, embedder):
    write_files(notes, {f"same{i}.md": "identical words about kestrels\n" for i in range(6)})
    index_folder(store, notes, embedder)
    engine = SearchEngine(store, embedder, clock=lambda: 2_000_000_000.0)
    orders = {tuple(h.chunk_id for h in engine.search("kestrels").hits) for _ in range(5)}
    assert len(orders) == 1
    (order,) = orders
    assert list(order) == sorted(order)


def _reproduce(b):
    fused = 0.0
    for name in sorted(b.lists):
        fused += b.lists[name].contribution
    assert fused == b.fused
    assert min(1.0, (b.fused + b.proximity) / b.normaliser) == b.relevance
    assert calibrated_base(b.relevance, b.spread) == b.base
    again = final_score(b.base, b.recency, b.git, b.penalty)
    assert (again.recency_bonus, again.git_bonus) == (b.recency_bonus, b.git_bonus)
    assert min(1.0, (b.base + b.recency_bonus + b.git_bonus) * b.penalty) == b.final
    assert shown_score(b.final, b.spread) == b.shown
    for s in b.lists.values():
        assert s.contribution == s.weight / (60 + s.rank) or b.fusion == "linear"


def test_breakdown_reproduces_every_final_score(store, tmp_path, embedder):
    rng = random.Random(7)
    vocab = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "turbine",
        "kestrel",
        "rollback",
        "deploy",
        "index",
        "vector",
        "fusion",
        "query",
    ]
    files = {}
    for i in range(60):
        words = " ".join(rng.choice(vocab) for _ in range(40))
        head = "TODO: " if i % 7 == 0 else ""
        files[f"d{i}.md"] = f"# {head}{rng.choice(vocab)} notes\n\n{words}\n\n## More\n\n{words[::-1]}\n"
    index_folder(store, write_files(tmp_path / "r", files), embedder)
    engine = SearchEngine(store, embedder)
    checked = 0
    for _ in range(40):
        text = " ".join(rng.sample(vocab, rng.randint(1, 3)))
        for fusion in ("rrf", "linear"):
            hits = engine.search(text, SearchOptions(limit=20, fusion=fusion)).hits
            finals = [h.breakdown.final for h in hits]
            assert finals == sorted(finals, reverse=True)  # ordered by final ...
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)  # ... as shown
            for hit in hits:
                _reproduce(hit.breakdown)
                assert hit.score == hit.breakdown.shown
                assert hit.breakdown.cosine is not None  # every hit reports its cosine
                checked += 1
    assert checked > 500


def test_semantic_only_hits_join_the_pool(store, notes, embedder):
    write_files(notes, {"a.md": "kestrel falcon hawk", "b.md": "unrelated words entirely"})
    index_folder(store, notes, embedder)
    # "falcons" shares trigrams (the fake embedder's features) but no porter/trigram FTS term
    hits = SearchEngine(store, embedder).search("falconry hawks", SearchOptions(meaning_floor=None)).hits
    assert hits and set(hits[0].breakdown.lists) <= {"vector", "trigram", "porter", "feedback"}
    assert any(set(h.breakdown.lists) == {"vector"} for h in hits)


def test_excluded_words_leave_every_list(store, notes, embedder):
    write_files(notes, {"a.md": "kestrel falcon", "b.md": "kestrel pigeon"})
    index_folder(store, notes, embedder)
    for mode in ("hybrid", "lexical", "vector"):
        hits = SearchEngine(store, embedder).search("kestrel -pigeon", SearchOptions(mode=mode)).hits
        assert [h.path for h in hits] == ["a.md"], mode


def test_disabled_sources_are_not_searched(store, notes, embedder):
    from kenning.storage.sources import set_enabled

    write_files(notes, {"a.md": "kestrel"})
    source, _ = index_folder(store, notes, embedder)
    set_enabled(store, source.id, False)
    assert SearchEngine(store, embedder).search("kestrel").hits == []


def test_the_vector_codes_are_read_while_the_query_is_still_being_embedded(store, notes, embedder):
    """Issue #27 item 4: in a fresh process the model is still loading when the keyword
    lists are done; the scan's codes, which need no query vector, are read meanwhile
    rather than after the vector arrives."""
    import time

    write_files(notes, {"birds.md": "# Birds\n\nkestrel hovering over the field\n"})
    index_folder(store, notes, embedder)
    scan = store.vectors.scan(embedder.fingerprint)  # the SQLite backend's sign codes
    assert scan.rows_held == 0
    seen: list[bool] = []

    class SlowToLoad(type(embedder)):  # type: ignore[misc]
        def embed_query(self, text):
            deadline = time.monotonic() + 5
            while scan.rows_held == 0 and time.monotonic() < deadline:
                time.sleep(0.005)
            seen.append(scan.rows_held > 0)
            return super().embed_query(text)

    hits = SearchEngine(store, SlowToLoad()).search("kestrel", SearchOptions(mode="hybrid")).hits
    assert seen == [True] and [h.path for h in hits] == ["birds.md"]


def test_the_filters_rows_are_read_while_the_query_is_still_being_embedded(store, notes, embedder, monkeypatch):
    """Issue #27 item 4: the rows the filter allows (30-50 ms at 100k chunks) need no
    query vector either: a fresh process reads them while the model loads."""
    import time

    from kenning.storage import vector_scan

    write_files(notes, {"birds.md": "# Birds\n\nkestrel hovering over the field\n"})
    index_folder(store, notes, embedder)
    masks: list[object] = []
    real = vector_scan.allowed_chunk_ids
    monkeypatch.setattr(vector_scan, "allowed_chunk_ids", lambda s, c: masks.append(c) or real(s, c))
    seen: list[int] = []

    class SlowToLoad(type(embedder)):  # type: ignore[misc]
        def embed_query(self, text):
            deadline = time.monotonic() + 5
            while not masks and time.monotonic() < deadline:
                time.sleep(0.005)
            seen.append(len(masks))
            return super().embed_query(text)

    hits = SearchEngine(store, SlowToLoad()).search("kestrel ext:md", SearchOptions(mode="hybrid")).hits
    assert seen == [1] and len(masks) == 1 and [h.path for h in hits] == ["birds.md"]
