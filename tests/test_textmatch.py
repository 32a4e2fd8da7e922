"""One definition of a match: proximity, snippets and the preview mark exactly the words
the word index (FTS5 porter) finds for the query, including where porter and Snowball
disagree (porter merges news/new, Snowball merges fairly/fair)."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.core.types import MatchTerms
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.highlight import Highlighter
from kenning.search.proximity import proximity
from kenning.search.snippet import make_snippet
from kenning.search.textmatch import StemMatcher, query_stems
from kenning.storage.ftsquery import fts_string
from kenning_testing import ANALYZER, index_folder, write_files

# (query word, text word): pairs where porter and Snowball English disagree.
PORTER_MERGES = [("news", "new"), ("skies", "ski"), ("universal", "universe"), ("generously", "generate")]
SNOWBALL_ONLY_MERGES = [("fairly", "fair"), ("gently", "gentle"), ("dying", "die"), ("lying", "lie")]
WORDS = sorted({w for pair in PORTER_MERGES + SNOWBALL_ONLY_MERGES for w in pair}) + [
    "indexing",
    "indexes",
    "running",
    "runner",
    "parse_query",
    "parse",
    "Café",
    "cafe",
    "relational",
    "relate",
    "x",
]


@pytest.fixture(scope="module")
def fts():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    return conn


def index_finds(conn: apsw.Connection, word: str, text: str) -> bool:
    with conn:
        conn.execute("DELETE FROM t")
        conn.execute("INSERT INTO t (text) VALUES (?)", (text,))
        return bool(list(conn.execute("SELECT 1 FROM t WHERE t MATCH ?", (fts_string(word),))))


def marks(word: str, text: str) -> bool:
    return bool(StemMatcher(query_stems([word], ANALYZER), ANALYZER).matches(text))


def test_a_word_is_marked_exactly_when_the_index_finds_it(fts):
    disagree = []
    for query in [w for w in WORDS if "_" not in w]:
        for text_word in WORDS:
            text = f"A sentence with {text_word} in it."
            if marks(query, text) != index_finds(fts, query, text):
                disagree.append((query, text_word))
    assert not disagree


@pytest.mark.parametrize(("query", "text_word"), PORTER_MERGES)
def test_porter_merges_are_marked(query, text_word):
    assert marks(query, f"the {text_word} arrived")


@pytest.mark.parametrize(("query", "text_word"), SNOWBALL_ONLY_MERGES)
def test_snowball_only_merges_are_not_marked(query, text_word):
    assert not marks(query, f"the {text_word} arrived")


@settings(max_examples=60, deadline=None)
@given(
    query=st.text(alphabet="abcdeilnorstuyz", min_size=3, max_size=9),
    words=st.lists(st.text(alphabet="abcdeilnorstuyz", min_size=1, max_size=10), min_size=1, max_size=8),
)
def test_agreement_on_generated_words(fts, query, words):
    text = " ".join(words)
    assert marks(query, text) == index_finds(fts, query, text)


def test_a_hit_found_for_news_is_highlighted_and_gets_proximity(store, tmp_path):
    folder = write_files(tmp_path / "n", {"a.md": "# Report\n\nThe new tariffs were announced today in parliament.\n"})
    index_folder(store, folder)
    result = SearchEngine(store).search("news tariffs", SearchOptions(proximity=True))  # off by default
    assert result.hits
    hit = result.hits[0]
    marked = [hit.snippet[start:end] for start, end in hit.spans]
    assert "new" in marked and "tariffs" in marked
    assert hit.breakdown.proximity_parts["phrase"] > 0  # "new tariffs" side by side, as the query's words


def test_proximity_counts_the_index_s_matches(tmp_path):
    matcher = StemMatcher(query_stems(["news", "tariffs"], ANALYZER), ANALYZER)
    assert proximity(matcher, "news", "new tariffs", "prose").span > 0
    unmatched = StemMatcher(query_stems(["fairly", "priced"], ANALYZER), ANALYZER)
    assert proximity(unmatched, "", "fair and priced", "prose").span == 0.0


def test_an_identifier_s_parts_are_marked_on_their_own():
    # The index finds parse_query as the phrase "parse query"; its parts still mark.
    assert marks("parse_query", "parse the query") and marks("parse_query", "call parse_query()")


def test_snippet_marks_words_of_any_case():
    snippet, spans = make_snippet(
        "Indexes are built while INDEXING.", Highlighter(MatchTerms(words=("indexing",)), ANALYZER)
    )
    assert [snippet[start:end] for start, end in spans] == ["Indexes", "INDEXING"]


@pytest.mark.parametrize(
    ("query", "text_word"), [("aai", "aay"), ("sky", "skies"), ("cry", "cries"), ("ability", "able")]
)
def test_short_stems_whose_ending_porter_rewrote(fts, query, text_word):
    text = f"the {text_word} here"
    assert marks(query, text) == index_finds(fts, query, text)
