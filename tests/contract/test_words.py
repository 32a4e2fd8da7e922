"""Contract: keyword lists, their filters and statistics, the vocabulary and the analyzer."""

from __future__ import annotations

import pytest

from kenning.core.filters import ChunkFilter
from kenning.storage.api import KeywordQuery

from .seed import add_document, add_source

W = (1.0, 1.0)


def _ids(store, index, terms, chunk_filter=None, limit=30, **kw):
    query = KeywordQuery(tuple(terms), **kw)
    return [
        r.chunk_id for r in store.keywords.ranked(index, query, chunk_filter or ChunkFilter(), limit, weights=W).ranked
    ]


@pytest.fixture
def crowded(store):
    """300 chunks shouting "turbine" in one source, one quiet mention in another."""
    noise = add_source(store, "noise")
    for i in range(30):
        add_document(store, noise, f"n{i:02}.md", [f"turbine turbine blades turbine {i}.{j}" for j in range(10)])
    quiet = add_source(store, "quiet")
    [target] = add_document(store, quiet, "quiet.py", ["the turbine is mentioned once among many other words"])
    return target


@pytest.mark.parametrize("index", ["porter", "trigram"])
@pytest.mark.parametrize("selective", [False, True])
@pytest.mark.parametrize(
    "chunk_filter", [ChunkFilter(sources=("quiet",)), ChunkFilter(exts=("py",)), ChunkFilter(paths=("quiet*",))]
)
def test_the_filter_acts_before_the_cut(store, crowded, index, selective, chunk_filter):
    query = KeywordQuery(("turbine",))
    found = store.keywords.ranked(index, query, chunk_filter, 5, weights=W, selective=selective).ranked
    assert [r.chunk_id for r in found] == [crowded]


@pytest.mark.parametrize("index", ["porter", "trigram"])
def test_lists_are_best_first_larger_is_better_ties_by_id(store, crowded, index):
    found = store.keywords.ranked(index, KeywordQuery(("turbine",)), ChunkFilter(), 400, weights=W).ranked
    assert len(found) == 301
    keys = [(-r.score, r.chunk_id) for r in found]
    assert keys == sorted(keys) and all(r.score > 0 for r in found)
    assert found[-1].chunk_id == crowded  # one mention among many words scores least


def test_words_match_by_the_analyzers_stems(store):
    source = add_source(store, "notes")
    [cid] = add_document(store, source, "a.md", ["Indexing the runners"])
    assert _ids(store, "porter", ["indexes"]) == [cid] and _ids(store, "porter", ["runner"]) == [cid]
    assert store.analyzer.tokens("indexes") == store.analyzer.tokens("indexing")


def test_a_repeated_word_weighs_more(store):
    source = add_source(store, "notes")
    [kestrel] = add_document(store, source, "k.md", ["kestrel hovering over a field of grass"])
    [falcon] = add_document(store, source, "f.md", ["falcon stooping over a field of grass"])
    assert _ids(store, "porter", ["falcon", "kestrel"]) == [kestrel, falcon]  # equal: ties by id
    assert _ids(store, "porter", ["falcon", "falcon", "kestrel"]) == [falcon, kestrel]


def test_phrases_find_adjacent_words_only(store):
    source = add_source(store, "notes")
    [together] = add_document(store, source, "a.md", ["the rate limiter drops requests"])
    add_document(store, source, "b.md", ["the limiter has a rate"])
    assert _ids(store, "porter", [], phrases=(("rate", "limiter"),)) == [together]


def test_words_that_only_score_find_nothing_but_reorder(store):
    source = add_source(store, "notes")
    [plain] = add_document(store, source, "a.md", ["kestrel alone here"])
    [both] = add_document(store, source, "b.md", ["kestrel with falcon here"])
    add_document(store, source, "c.md", ["falcon only here"])
    assert _ids(store, "porter", ["kestrel"]) == [plain, both]  # same length: ties by id
    assert _ids(store, "porter", ["kestrel"], also_scoring=("falcon",)) == [both, plain]


@pytest.mark.parametrize(
    "typed", ["AND OR NOT", "NEAR(a b)", '"unbalanced', "col:umn", "star*", "^caret", "(paren", "a-b"]
)
def test_what_a_user_typed_is_only_ever_words(store, typed):
    source = add_source(store, "notes")
    add_document(store, source, "a.md", ["nothing relevant"])
    for index in ("porter", "trigram"):
        assert _ids(store, index, [typed]) == []  # no error, no syntax
    assert store.terms.count_together([typed], [typed], 10) == 0


def test_disabled_sources_and_excluded_tests_are_never_returned(store):
    on, off = add_source(store, "on"), add_source(store, "off")
    [kept] = add_document(store, on, "a.md", ["osprey"])
    [test] = add_document(store, on, "test_a.md", ["osprey"], is_test=True)
    add_document(store, off, "b.md", ["osprey"])
    store.sources.set_enabled(off.id, False)
    assert _ids(store, "porter", ["osprey"]) == [kept]
    assert _ids(store, "porter", ["osprey"], ChunkFilter(test_files="only")) == [test]
    assert sorted(_ids(store, "porter", ["osprey"], ChunkFilter(test_files="included"))) == sorted([kept, test])


def test_required_phrases_excluded_words_tags_dates_and_one_document_left_out(store):
    source = add_source(store, "notes")
    [a] = add_document(store, source, "a.md", ["merlin over the moor"], tags=("birds",), updated_at=100.0)
    [b] = add_document(store, source, "b.md", ["merlin the wizard"], updated_at=200.0)

    def only(**kw):
        return _ids(store, "porter", ["merlin"], ChunkFilter(**kw))

    assert only(phrases=(("the", "moor"),)) == [a]
    assert only(excluded=("wizard",)) == [a]
    assert only(tags=("birds",)) == [a]
    assert only(after=150.0) == [b] and only(before=150.0) == [a]
    doc_a = store.documents.find(source.id, "a.md")
    assert only(except_document=doc_a.id) == [b]


def test_substrings_find_identifiers_inside_words(store):
    source = add_source(store, "code")
    [cid] = add_document(store, source, "x.py", ["class RateLimiterPool: pass"])
    assert _ids(store, "trigram", ["ratelimi"]) == [cid] and _ids(store, "porter", ["ratelimi"]) == []
    assert _ids(store, "trigram", ["ra"]) == []  # too short to be looked up


def test_totals_count_every_allowed_match_and_the_extra_chunks(store):
    source = add_source(store, "notes")
    ids = []
    for i in range(12):
        ids += add_document(store, source, f"{i}.md", ["kestrel here", "another chunk"])
    other = add_document(store, source, "z.md", ["unrelated"])
    queries = {"porter": KeywordQuery(("kestrel",))}
    total = store.keywords.count_total(queries, other, ChunkFilter(), 100)
    assert (total.chunks, total.files, total.capped) == (13, 13, False)
    capped = store.keywords.count_total(queries, [], ChunkFilter(), 5)
    assert (capped.chunks, capped.capped) == (5, True)
    assert store.keywords.count_total({"trigram": KeywordQuery(("estre",))}, [], ChunkFilter(), 100).chunks == 12


def test_the_vocabulary_holds_the_analyzers_terms_with_their_counts(store):
    source = add_source(store, "notes")
    add_document(store, source, "a.md", ["Running runners run", "running late"])
    vocabulary = store.terms.vocabulary()
    [run] = store.analyzer.tokens("running")
    assert vocabulary[run] == 2
    assert set(store.analyzer.tokenize("Running runners run")) <= set(vocabulary)
    counts = store.terms.counts(run)
    assert (counts.chunks, counts.occurrences) == (2, 3)
    assert store.terms.counts("zzzz").chunks == 0
    assert store.terms.chunks_with("running") == 2 and store.terms.chunks_with("runners run") == 1
    assert store.terms.chunks_with("") == 0


def test_many_terms_counts_are_each_terms_counts(store):
    source = add_source(store, "notes")
    add_document(store, source, "a.md", ["Running runners run", "running late", "late again"])
    terms = [*store.analyzer.tokenize("running late runners again"), "zzzz"]
    many = store.terms.counts_of([*terms, terms[0]])
    assert set(many) == set(terms)
    assert many == {t: store.terms.counts(t) for t in terms}
    assert many["zzzz"].chunks == 0 and store.terms.counts_of([]) == {}


def test_words_counted_each_in_one_ask_are_each_words_count(store):
    source = add_source(store, "notes")
    add_document(store, source, "a.md", ["postgres tuning guide", "postgres backup"])
    add_document(store, source, "test_b.py", ["postgres test tuning"], is_test=True)
    words = ["postgres", "tuning", "backup", "re-entry", "zzzz", "...", "postgres"]
    for chunk_filter in (None, ChunkFilter(test_files="excluded"), ChunkFilter(test_files="only")):
        for cap in (1, 200):
            each = store.terms.count_each(words, cap, chunk_filter)
            assert each == {w: store.terms.count_together([w], [], cap, chunk_filter) for w in words}
    assert store.terms.count_each(words, 200, ChunkFilter(test_files="excluded"))["tuning"] == 1
    assert store.terms.count_each([], 1) == {}


def test_words_counted_each_follow_sources_and_deleted_documents(store):
    notes, code = add_source(store, "notes"), add_source(store, "code")
    add_document(store, notes, "a.md", ["postgres tuning guide"])
    add_document(store, code, "b.py", ["postgres tuning", "vacuum postgres"])
    words = ["postgres", "tuning", "vacuum"]
    filters = (ChunkFilter(sources=("notes",)), ChunkFilter(sources=("code",)), ChunkFilter(test_files="excluded"))
    for chunk_filter in filters:
        for cap in (1, 200):
            each = store.terms.count_each(words, cap, chunk_filter)
            assert each == {w: store.terms.count_together([w], [], cap, chunk_filter) for w in words}
    assert store.terms.count_each(words, 200, ChunkFilter(test_files="excluded")) == {
        "postgres": 3,
        "tuning": 2,
        "vacuum": 1,
    }
    gone = store.documents.find(code.id, "b.py")
    assert gone is not None
    store.documents.delete([gone.id])
    assert store.terms.count_each(words, 200, ChunkFilter(test_files="excluded")) == {
        "postgres": 1,
        "tuning": 1,
        "vacuum": 0,
    }


def test_words_together_and_texts_holding_a_word(store):
    source = add_source(store, "notes")
    add_document(store, source, "a.md", ["postgres tuning guide"])
    add_document(store, source, "b.md", ["postgres backup"])
    add_document(store, source, "test_c.md", ["postgres tuning tests"], is_test=True)
    assert store.terms.count_together(["postgres", "tuning"], [], 10) == 2
    assert store.terms.count_together(["postgres", "tuning"], [], 10, ChunkFilter()) == 1  # tests left out
    assert store.terms.count_together(["postgres"], ["backup", "guide"], 10) == 2
    assert store.terms.count_together(["postgres"], [], 1) == 1
    assert store.terms.texts_with("backup", 5) == ["postgres backup"]
    assert store.terms.texts_with("tests", 5, ChunkFilter()) == []


def test_the_analyzer_stems_many_words_at_once_as_one_at_a_time(store):
    words = {"indexes", "running", "Überschrift", "parse_query", "can't", "naïve"}
    many = store.analyzer.stems(words)
    assert all(many[w] == store.analyzer.tokenize(w) for w in words)
    assert all(store.analyzer.known()[w] == many[w] for w in words)


def test_a_two_character_cjk_word_is_found_as_a_substring(store):
    """A two-character Chinese, Japanese or Korean word holds no trigram (#26 item 10): the
    substring list finds it inside a run of CJK characters on every backend, and only
    where it is written; a replaced or removed chunk leaves the index."""
    source = add_source(store, "notes")
    [recall] = add_document(store, source, "recall.md", ["这个系统的召回率很高，排序也不错。"])
    [meeting] = add_document(store, source, "meeting.md", [("会議の記録", "明日、結果を報告します。")])
    [korean] = add_document(store, source, "korean.md", ["내일회의에서 결과를 보고합니다."])
    add_document(store, source, "english.md", ["Plain English about recall and ranking."])
    assert _ids(store, "trigram", ["召回"]) == [recall]
    assert _ids(store, "trigram", ["排序"]) == [recall]
    assert _ids(store, "trigram", ["会議"]) == [meeting]  # in the title
    assert _ids(store, "trigram", ["회의"]) == [korean]
    assert _ids(store, "trigram", ["率排"]) == []  # 率，排: a comma between, never written
    assert _ids(store, "trigram", ["召回", "排序"]) == [recall]
    assert _ids(store, "trigram", ["召回"], ChunkFilter(paths=("english*",))) == []  # the filter applies
    [replaced] = add_document(store, source, "recall.md", ["没有那个词了。"])
    assert _ids(store, "trigram", ["召回"]) == [] and _ids(store, "trigram", ["那个"]) == [replaced]
    store.documents.delete([store.documents.find(source.id, "korean.md").id])
    assert _ids(store, "trigram", ["회의"]) == []
