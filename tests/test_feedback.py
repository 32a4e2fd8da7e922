"""Pseudo-relevance feedback: the "feedback" list of hybrid search."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.search import feedback, fts, fuzzy
from kenning.search.engine import RELATED_WORDS_FLOOR, SearchEngine, SearchOptions
from kenning_testing import index_folder, write_files

TOPIC = "The {name} gearbox transmits torque; its planetary gearbox needs synthetic lubricant and bearings."


@pytest.fixture
def mismatch(store, notes, embedder):
    """Notes on one topic that use the query's words, and one that says the same in
    other words only (no query word at all), among unrelated notes."""
    files = {f"gear{i}.md": f"# Gearbox {i}\n\n" + TOPIC.format(name=f"unit{i}") for i in range(3)}
    files["synonyms.md"] = "# Notes\n\nsynthetic lubricant keeps planetary bearings cool\n"
    files.update({f"other{i}.md": f"# Garden {i}\n\ntomatoes like sun and water, day {i}\n" for i in range(20)})
    write_files(notes, files)
    index_folder(store, notes, embedder)
    return SearchEngine(store, embedder)


def test_feedback_finds_a_chunk_that_shares_no_query_word(mismatch):
    # Without the meaning floor: the fake embedder gives a note sharing no word a cosine
    # near 0, which the floor keeps out (next test).
    result = mismatch.search("gearbox torque", SearchOptions(limit=10, meaning_floor=None))
    found = {h.path: h for h in result.hits}
    assert "synonyms.md" in found
    hit = found["synonyms.md"]
    assert "feedback" in hit.breakdown.lists and "porter" not in hit.breakdown.lists
    assert {"lubricant", "planetary", "bearings"} & set(hit.breakdown.expansion)
    assert set(result.expansion) == set(hit.breakdown.expansion)
    assert not {"gearbox", "torque"} & set(result.expansion)  # never the user's own words
    # the chunks with the query's words still rank above it
    assert result.hits[0].path.startswith("gear")


def test_feedback_words_alone_bring_no_hit_under_the_meaning_floor(mismatch):
    """Issue #28 item 6: a chunk that no query word matches is shown only when its meaning
    reaches the floor, whatever the feedback words found it by."""
    unfloored = mismatch.search("gearbox torque", SearchOptions(limit=10, meaning_floor=None)).hits
    synonyms = next(h for h in unfloored if h.path == "synonyms.md")
    assert "feedback" in synonyms.breakdown.lists and "porter" not in synonyms.breakdown.lists
    assert synonyms.breakdown.cosine < RELATED_WORDS_FLOOR
    hits = mismatch.search("gearbox torque", SearchOptions(limit=10)).hits
    assert hits and "synonyms.md" not in {h.path for h in hits}
    assert all(
        {"porter", "trigram"} & set(h.breakdown.lists) or h.breakdown.cosine >= RELATED_WORDS_FLOOR for h in hits
    )


def test_no_feedback_in_lexical_mode(mismatch):
    result = mismatch.search("gearbox torque", SearchOptions(limit=10, mode="lexical"))
    assert result.expansion == ()
    assert "synonyms.md" not in {h.path for h in result.hits}
    assert all("feedback" not in h.breakdown.lists for h in result.hits)


def test_feedback_list_obeys_filters(mismatch):
    result = mismatch.search("gearbox torque path:gear*", SearchOptions(limit=10))
    assert result.hits and all(h.path.startswith("gear") for h in result.hits)


def test_no_feedback_without_agreement(store, notes, embedder):
    # Nothing both lists found: the top of the pool is no evidence of what was meant.
    write_files(notes, {"a.md": "kestrel falcon hawk", "b.md": "unrelated words entirely"})
    index_folder(store, notes, embedder)
    result = SearchEngine(store, embedder).search("zebra")
    assert result.expansion == ()


def test_explain_lists_the_feedback_words(mismatch, capsys, store):
    from kenning.cli.output import explain_lines

    hit = next(h for h in mismatch.search("gearbox torque").hits if "feedback" in h.breakdown.lists)
    lines = explain_lines(hit.breakdown)
    assert any(line.strip().startswith("words of the best first hits:") for line in lines)


@given(
    tf=st.integers(1, 50),
    cf=st.integers(1, 10_000),
    extra=st.integers(1, 1000),
)
def test_bo1_prefers_frequent_in_feedback_and_rare_in_the_index(tf, cf, extra):
    chunks = 100_000
    assert feedback.bo1_weight(tf + 1, cf, chunks) > feedback.bo1_weight(tf, cf, chunks)
    if cf + extra <= chunks:
        assert feedback.bo1_weight(tf, cf, chunks) > feedback.bo1_weight(tf, cf + extra, chunks)


def test_index_counts_are_kept_until_the_index_changes_by_a_tenth(store, notes, embedder):
    write_files(notes, {f"n{i}.md": f"alpha beta note {i}" for i in range(20)})
    index_folder(store, notes, embedder)
    counts = feedback.IndexCounts(store)
    assert counts.get("alpha", 20) == (20, 20)
    store.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks_fts LIMIT 1)")
    assert counts.get("alpha", 20) == (20, 20)  # within tolerance: the kept count
    assert counts.get("alpha", 17) == (19, 19)  # 15% fewer chunks: read again
    assert counts.get("nowhere", 17) == (0, 0)


def _loaded_vocabulary(store) -> fuzzy.Vocabulary:
    vocabulary = fuzzy.Vocabulary(store)
    assert vocabulary.held_chunks("alpha") is None  # not read yet: the caller reads the store
    vocabulary.correct("alpah")  # a typo reads the whole vocabulary
    return vocabulary


def test_held_vocabulary_counts_are_the_stores_and_only_for_its_version(store, notes, embedder):
    write_files(notes, {f"n{i}.md": f"alpha beta note {i}" for i in range(20)})
    index_folder(store, notes, embedder)
    vocabulary = _loaded_vocabulary(store)
    assert vocabulary.held_chunks("alpha") == store.terms.counts("alpha").chunks == 20
    assert vocabulary.held_chunks("nowhere") == 0
    store.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks_fts LIMIT 1)")
    assert vocabulary.held_chunks("alpha") is None  # the store changed since it was read


def test_word_counts_come_from_the_held_vocabulary_with_the_same_values(store, notes, embedder, monkeypatch):
    write_files(notes, {f"n{i}.md": f"alpha beta note {i}" for i in range(20)})
    index_folder(store, notes, embedder)
    read: list[list[str]] = []
    counts_of = type(store.terms).counts_of
    monkeypatch.setattr(
        type(store.terms), "counts_of", lambda self, terms: read.append(list(terms)) or counts_of(self, terms)
    )
    plain = fts.TermStats(store)
    plain.prefetch(["alpha", "nowhere"])
    assert read == [["alpha", "nowher"]]
    held = fts.TermStats(store, held=_loaded_vocabulary(store).held_chunks)
    held.prefetch(["alpha", "nowhere"])
    assert len(read) == 1  # nothing read
    assert [held.count(w) for w in ("alpha", "nowhere")] == [plain.count(w) for w in ("alpha", "nowhere")] == [20, 0]


def test_a_word_the_held_vocabulary_shows_too_common_is_passed_over_unread(store, notes, embedder, monkeypatch):
    monkeypatch.setattr(feedback, "ELIDE_FROM_CHUNKS", 10)  # a large index's rule on 40 chunks,
    monkeypatch.setattr(feedback, "FEEDBACK_WORD_SHARE", 0.5)  # at half of them
    files = {f"n{i}.md": f"everywhere lubricant{i % 4} gearbox" for i in range(40)}
    write_files(notes, files)
    index_folder(store, notes, embedder)
    texts = [files["n0.md"], files["n4.md"], files["n1.md"]]
    read: list[str] = []
    counts_of = type(store.terms).counts_of
    monkeypatch.setattr(
        type(store.terms), "counts_of", lambda self, terms: read.extend(terms) or counts_of(self, terms)
    )
    plain = feedback.expansion_words(feedback.IndexCounts(store), texts, ["gearbox"], 40)
    assert "everywher" in read  # in every chunk: read, then left out as too common
    read.clear()
    vocabulary = _loaded_vocabulary(store)
    held = feedback.expansion_words(feedback.IndexCounts(store, held=vocabulary.held_chunks), texts, ["gearbox"], 40)
    assert held == plain and "everywhere" not in held and "lubricant0" in held
    assert "everywher" not in read and read  # the rarer words are still read


def _written_by_pattern(stem: str, texts: list[str], analyzer) -> str | None:
    """_written_form as it was: a pattern per stem (the ASCII path must find the same)."""
    import re

    prefix = stem[: max(feedback.MIN_CHARS, len(stem) - 1)]
    pattern = re.compile(r"(?<![^\W_])" + re.escape(prefix) + r"[^\W_]*", re.IGNORECASE)
    for text in texts:
        for m in pattern.finditer(text):
            if analyzer.tokens(m.group(0).lower()) == (stem,):
                return m.group(0).lower()
    return stem if analyzer.tokens(stem) == (stem,) else None


_PIECES = ["Planetary", "planets", "PLANE", "run_runner", "x2y", "s3", "EC2instances", "parser's", "ſtar", "Kelvin"]


@given(
    st.lists(st.lists(st.sampled_from(_PIECES + [" ", "_", "-", ".", "\n", "9"]), max_size=14), min_size=1, max_size=3),
    st.sampled_from(["planetari", "planet", "plane", "runner", "run", "x2y", "ec2instanc", "parser", "star", "kelvin"]),
)
def test_written_forms_are_the_patterns_whatever_the_case_separators_and_letters(pieces, stem):
    from kenning.storage.sqlite_store import SqliteAnalyzer

    texts = ["".join(p) for p in pieces]
    analyzer = SqliteAnalyzer()
    words = feedback._ascii_words(texts)
    assert feedback._written_form(stem, texts, analyzer, words) == _written_by_pattern(stem, texts, analyzer)
