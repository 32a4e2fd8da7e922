"""#14 feature 8: a search says how many chunks and files match in all, not just the hits it returns."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.core.types import MatchTotal
from kenning.core.wording import plural
from kenning.ingest.filetypes import is_test_path
from kenning.search import totals
from kenning.search.engine import MEANING_FLOOR, SearchEngine, SearchOptions
from kenning_testing import all_chunks, index_folder, write_files


def _notes(count: int, word: str = "kestrel") -> dict[str, str]:
    """count files whose word occurs in two of their three sections, and one file without it."""
    files = {
        f"birds/n{i:02}.md": f"# Note {i}\n\nthe {word} {i}\n\n## Later\n\nagain a {word}\n\n## Other\n\nfalcon only\n"
        for i in range(count)
    }
    files["tests/test_birds.md"] = f"# Test\n\n{word} in a test file\n"  # left out by the default filter
    files["none.md"] = "# None\n\nharrier\n"
    return files


def _brute_force(store, word: str) -> tuple[int, int]:
    """(chunks, files) whose text holds the word, among non-test documents."""
    rows = [(row.rel_path, f"{row.title} {row.text}") for row in all_chunks(store) if not is_test_path(row.rel_path)]
    hit = [doc for doc, text in rows if re.search(rf"\b{word}\b", text, re.I)]
    return len(hit), len(set(hit))


def test_the_total_counts_every_match_beyond_the_limit(store, notes, embedder):
    index_folder(store, write_files(notes, _notes(25)), embedder)
    engine = SearchEngine(store, embedder)
    result = engine.search("kestrel", SearchOptions(limit=5, mode="lexical", count_total=True))
    assert len(result.hits) == 5
    assert result.total == MatchTotal(50, 25)
    assert (result.total.chunks, result.total.files) == _brute_force(store, "kestrel")
    assert result.total.describe() == "50 matches in 25 files"
    # Hybrid adds what it ranked without the word: found by meaning over the floor, or by
    # the feedback words (at this limit every ranked chunk is shown).
    hybrid = engine.search("kestrel", SearchOptions(limit=500, mode="hybrid", count_total=True))
    other_ways = [h for h in hybrid.hits if not {"porter", "trigram"} & set(h.breakdown.lists)]
    assert other_ways
    assert hybrid.total.chunks == 50 + len(other_ways) == len(hybrid.hits)
    assert hybrid.total.files == len({h.path for h in hybrid.hits})


def test_filters_limit_the_total_as_they_limit_the_hits(store, notes, embedder):
    index_folder(store, write_files(notes, _notes(12)), embedder)
    engine = SearchEngine(store, embedder)
    total = engine.search("kestrel path:n0", SearchOptions(limit=3, mode="lexical", count_total=True)).total
    assert total == MatchTotal(20, 10)  # n00..n09
    assert engine.search("kestrel -again", SearchOptions(mode="lexical", count_total=True)).total == MatchTotal(12, 12)


def test_the_total_is_never_below_the_hits_returned(store, notes, embedder):
    index_folder(store, write_files(notes, _notes(6)), embedder)
    engine = SearchEngine(store, embedder)
    for text in ("kestrel", "falcon kestrel", "harrier", "kestrl", "qwxzv"):
        result = engine.search(text, SearchOptions(limit=50, mode="hybrid", count_total=True))
        assert result.total is not None and result.total.chunks >= len(result.hits)
        assert result.total.files >= len({h.path for h in result.hits})


def test_counting_stops_at_the_cap_and_says_so(store, notes, embedder, monkeypatch):
    index_folder(store, write_files(notes, _notes(8)), embedder)
    monkeypatch.setattr(totals, "COUNT_CAP", 5)
    total = SearchEngine(store, embedder).search("kestrel", SearchOptions(mode="lexical", count_total=True)).total
    assert total.capped and total.chunks == 5
    assert total.describe().startswith("5+ matches in ")


def test_meaning_only_mode_counts_what_reaches_the_similarity_floor(store, notes, embedder):
    index_folder(store, write_files(notes, _notes(6)), embedder)
    engine = SearchEngine(store, embedder)
    result = engine.search("kestrel", SearchOptions(limit=40, mode="vector", count_total=True))
    total = result.total
    assert total.floor == MEANING_FLOOR
    close = [h for h in result.hits if h.breakdown.cosine is not None and h.breakdown.cosine >= MEANING_FLOOR]
    assert total.chunks == len(close)
    assert total.files == len({h.path for h in close})
    assert "by meaning (cosine ≥ 0.30)" in total.describe()


def test_no_total_unless_asked(store, notes, embedder):
    index_folder(store, write_files(notes, _notes(3)), embedder)
    assert SearchEngine(store, embedder).search("kestrel", SearchOptions(mode="lexical")).total is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 100_000), st.sampled_from(["file", "match", "chunk"]), st.booleans())
def test_plural_agrees_with_its_count(n, noun, more):
    text = plural(n, noun, more=more)
    number, word = text.split(" ")
    assert number == f"{n:,}" + ("+" if more else "")
    assert word == (noun if n == 1 and not more else {"match": "matches"}.get(noun, noun + "s"))
