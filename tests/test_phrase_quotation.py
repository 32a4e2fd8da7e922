"""Quotes in a question written out (#28 items 0 and 8): more than PROSE_WORDS words
besides the quotes make them quotation — ranked as words, not required — and every
front end says so, with each hit saying whether it holds the quoted words.  A short
query keeps its phrases required (tests/test_query_semantics.py, test_phrase_fallback.py;
the app's side is in tests/gui/test_window.py)."""

from __future__ import annotations

import json

import pytest

from kenning.cli.main import main
from kenning.cli.output import hit_dict
from kenning.core.types import PROSE_WORDS
from kenning.embedding import FakeEmbedder
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.search import phrases
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.query import parse_query
from kenning.workspace import Workspace
from kenning_testing import cli_indexed, index_folder, write_files

NOTES = {
    "interface.md": "# Translating interfaces\n\nA translating interface lets end users make requests in one common"
    " language to many different online retrieval systems, and translates each request into their commands.\n",
    "online.md": "# Online retrieval\n\nOnline retrieval systems are hard to use for end users: each system has"
    " its own commands and its own language.\n",
    "memory.md": "# Memory\n\nVirtual memory pages for the kernel.\n",
    "bread.md": "# Bread\n\nSourdough starter, flour and water.\n",
}
# 34 words besides the quoted one: a question written out, its quotes are quotation.
QUESTION = (
    "Online retrieval systems are hard to use for end users. A translating interface lets them make requests"
    ' in one common language and makes many different systems look like a single "virtual" system to the user.'
)
BANNER = (
    f"Quotes in a question of more than {PROSE_WORDS} words are read as quotation, not required:"
    ' results without "virtual" are marked'
)
MODES = ("hybrid", "lexical", "vector")


def test_more_than_prose_words_besides_the_quotes_is_prose():
    words = " ".join(f"w{i}" for i in range(PROSE_WORDS))
    assert phrases.words_outside_quotes(parse_query(f'{words} "two words"')) == PROSE_WORDS
    assert not phrases.is_prose(parse_query(f'{words} "two words"'))  # the boundary: still a search
    assert phrases.is_prose(parse_query(f'{words} extra "two words"'))
    assert not phrases.is_prose(parse_query(f"{words} extra more"))  # no quotes: nothing to read
    assert phrases.words_outside_quotes(parse_query(QUESTION)) == 34


@pytest.fixture
def quoted(store, notes, embedder):
    index_folder(store, write_files(notes, NOTES), embedder)
    return embedder


@pytest.mark.parametrize("mode", MODES)
def test_a_long_question_ranks_its_quoted_word_without_requiring_it(store, quoted, mode):
    result = SearchEngine(store, quoted).search(QUESTION, SearchOptions(mode=mode, limit=20, meaning_floor=None))
    paths = [h.path for h in result.hits]
    assert {"interface.md", "online.md"} <= set(paths)
    assert result.banner() == BANNER and result.phrases.quotation == ("virtual",)
    assert result.phrases.first is None and not result.phrases.required
    assert all(h.breakdown.quotation for h in result.hits)
    held = {h.path: not h.breakdown.lacks_phrases for h in result.hits}
    assert held["interface.md"] is False and held["online.md"] is False
    assert held.get("memory.md", True) is True  # the one note holding "virtual", when listed


def test_in_a_long_question_the_best_evidence_ranks_first_not_the_quoted_word(store, quoted):
    """The old rule put the only chunk holding "virtual" (about kernel memory) first."""
    hits = SearchEngine(store, quoted).search(QUESTION, SearchOptions(mode="lexical", limit=20)).hits
    assert hits[0].path in ("interface.md", "online.md") and "memory.md" in [h.path for h in hits]


def test_a_short_query_still_requires_its_phrase(store, quoted):
    """The same quoted word in a search typed to find it: the note holding it first."""
    result = SearchEngine(store, quoted).search(
        'single "virtual" system interface', SearchOptions(mode="lexical", limit=20)
    )
    assert result.hits[0].path == "memory.md" and not result.hits[0].breakdown.quotation
    assert all(h.breakdown.lacks_phrases for h in result.hits[1:])
    assert result.banner() == 'Only 1 result contains "virtual"; results for its words follow'


# -- front ends ------------------------------------------------------------------


@pytest.fixture
def db(tmp_path, capsys):
    notes = write_files(tmp_path / "notes", NOTES)
    return cli_indexed(capsys, notes, tmp_path / "k.db")


def _cli(capsys, db, *args):
    code = main(["--store", db, "--model", "fake", "search", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_cli_says_the_quotes_are_quotation_and_each_hit_whether_it_holds_them(capsys, db):
    out = _cli(capsys, db, "--explain", "-n", "20", QUESTION)
    assert out.splitlines()[0] == BANNER
    assert "— results for the words" not in out  # nothing is ranked after the holders
    titles = {line.split("  ", 1)[1] for line in out.splitlines() if line[:3].strip().rstrip(".").isdigit()}
    assert "Translating interfaces  (lacks the phrase)" in titles and "Memory" in titles
    assert "phrases   lacks the quoted words (in a question of over 20 words quotes are not required)" in out
    memory = out[out.index("memory.md") :]
    assert memory.split("\n      phrases   ", 1)[1].startswith("holds the quoted words")


def test_json_and_mcp_carry_the_notice_and_each_hits_mark(capsys, db):
    summary, *hits = (
        json.loads(line) for line in _cli(capsys, db, "--json", "--explain", "-n", "20", QUESTION).splitlines()
    )
    assert summary["notice"] == BANNER
    marks = {h["path"]: h["lacks_phrases"] for h in hits}
    assert marks["interface.md"] is True and marks["online.md"] is True and marks.get("memory.md") is not True
    assert all(h["breakdown"]["quotation"] is True for h in hits)
    ws = Workspace(db, model="fake")
    service = KenningService(ws, hit_dict, background_model=BackgroundModel(FakeEmbedder).start(), watch=False)
    service.model.wait(10)
    answer = service.search(QUESTION, limit=20)
    assert answer["notice"] == BANNER
    assert {h["path"]: h["lacks_phrases"] for h in answer["hits"]}["interface.md"] is True
    ws.close()
