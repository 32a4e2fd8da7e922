"""Matched words travel as spans beside plain text: brackets in notes are just text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.cli.output import hit_dict, marked_snippet
from kenning.cli.terminal import HIGHLIGHT_OFF as RESET
from kenning.cli.terminal import HIGHLIGHT_ON as BOLD_YELLOW
from kenning.core.types import MatchTerms
from kenning.search.engine import SearchEngine
from kenning.search.highlight import Highlighter, merge_spans
from kenning.search.snippet import collapse_whitespace, make_snippet
from kenning_testing import ANALYZER

BRACKETY = (
    "See [[wiki links]] in Obsidian.\n"
    "Index a[[0]] picks the first store.\n"
    "def register(cb: Callable[[Store], None]) -> None:  # store callback\n"
)


def marked(snippet, spans):
    return [snippet[s:e] for s, e in spans]


def test_snippet_keeps_brackets_and_marks_words_by_span():
    snippet, spans = make_snippet(BRACKETY, Highlighter(MatchTerms(words=("store", "links")), ANALYZER))
    assert "[[wiki links]]" in snippet
    assert "a[[0]]" in snippet
    assert "Callable[[Store], None]" in snippet
    assert [w.lower() for w in marked(snippet, spans)] == ["links", "store", "store", "store"]


def test_substring_terms_are_marked_inside_longer_words():
    text = "class RateLimiter:\n    def acquire(self): ..."
    snippet, spans = make_snippet(
        text, Highlighter(MatchTerms(words=("ratelimi",), substrings=("ratelimi",)), ANALYZER)
    )
    assert marked(snippet, spans) == ["RateLimi"]


def test_window_with_ellipsis_shifts_spans():
    text = "filler " * 100 + "the needle is here " + "filler " * 100
    snippet, spans = make_snippet(text, Highlighter(MatchTerms(words=("needle",)), ANALYZER), max_chars=120)
    assert snippet.startswith("…") and snippet.endswith("…")
    assert marked(snippet, spans) == ["needle"]


def test_collapse_whitespace_moves_spans():
    text = "  a\n\n  bb\t c  "
    out, spans = collapse_whitespace(text, [(2, 3), (7, 9), (11, 12)])
    assert out == "a bb c"
    assert marked(out, spans) == ["a", "bb", "c"]


def _collapse_char_by_char(text, spans):
    """The definition, one character at a time: each whitespace run becomes one space."""
    out, position, pending = [], [0] * (len(text) + 1), False
    for i, ch in enumerate(text):
        if ch.isspace():
            position[i], pending = len(out), bool(out)
            continue
        if pending:
            out.append(" ")
            pending = False
        position[i] = len(out)
        out.append(ch)
    position[len(text)] = len(out)
    moved = [(position[s], position[e - 1] + 1 if e > s else position[s]) for s, e in spans]
    return "".join(out), [(s, e) for s, e in moved if e > s]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \n\t\u00a0\u2003\x1c\u3000."), max_size=40), st.data())
def test_collapse_whitespace_agrees_with_the_character_definition(text, data):
    bounds = st.integers(0, len(text))
    spans = [tuple(sorted(p)) for p in data.draw(st.lists(st.tuples(bounds, bounds), max_size=5))]
    assert collapse_whitespace(text, spans) == _collapse_char_by_char(text, spans)


def test_merge_spans_overlapping_and_touching():
    assert merge_spans([(5, 8), (0, 2), (1, 3), (8, 9), (4, 4)]) == [(0, 3), (5, 9)]


WORDS = st.sampled_from(["store", "stores", "index", "[[", "]]", "a[[0]]", "Callable[[Store],", "None]", "x", "\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=80))
def test_spans_are_sorted_disjoint_and_cover_matched_words(words):
    text = " ".join(words)
    snippet, spans = make_snippet(text, Highlighter(MatchTerms(words=("store",)), ANALYZER))
    assert "[[" not in snippet or "[[" in text  # nothing is added to the text
    previous_end = 0
    for s, e in spans:
        assert previous_end <= s < e <= len(snippet)
        previous_end = e
        assert ANALYZER.tokens(snippet[s:e]) == ("store",)


def test_cli_output_from_spans_never_parses_brackets():
    snippet = "x: Callable[[Store], None] and [[wiki]]"
    spans = ((snippet.index("Store"), snippet.index("Store") + 5),)
    assert marked_snippet(snippet, spans, color=False) == snippet
    coloured = marked_snippet(snippet, spans, color=True)
    assert coloured == f"x: Callable[[{BOLD_YELLOW}Store{RESET}], None] and [[wiki]]"


def test_cli_output_neutralises_control_characters_one_for_one():
    out = marked_snippet("a\x1b[31mred", ((6, 9),), color=True)
    assert "\x1b[31m" not in out and out.endswith(f"{BOLD_YELLOW}red{RESET}")


def test_engine_hits_and_json_carry_plain_text_and_spans(tmp_path):
    from kenning.ingest.indexer import Indexer
    from kenning.ingest.sources import add_source
    from kenning.storage import open_store

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "obsidian.md").write_text("# Vault\n\n" + BRACKETY, encoding="utf-8")
    store = open_store(tmp_path / "k.db")
    add_source(store, notes, name="notes")
    Indexer(store, None).run()
    result = SearchEngine(store, None).search("store", None)
    hit = result.hits[0]
    assert "Callable[[Store], None]" in hit.snippet and "a[[0]]" in hit.snippet
    assert all(hit.snippet[s:e].lower() == "store" for s, e in hit.spans) and hit.spans
    data = json.loads(json.dumps(hit_dict(hit, False)))
    assert data["snippet"] == hit.snippet
    assert [tuple(s) for s in data["spans"]] == list(hit.spans)
    store.close()
