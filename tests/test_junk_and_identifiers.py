"""Issue #28 item 6 on a realistic notes + repository workspace (tests/realistic_workspace.py:
real files, a real git repository), in every front end that shows it: feedback words alone
never bring a hit that matches neither a query word nor the query's meaning; the chunk
that defines the identifier the query names comes before the chunks that only use it;
totals count what the query's own words match (the app's summary: tests/gui/test_window.py)."""

from __future__ import annotations

import json

import pytest

import realistic_workspace as rw
from kenning.cli.main import main
from kenning.cli.output import hit_dict
from kenning.core.types import QUERY_WORD_LISTS
from kenning.embedding import FakeEmbedder
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.search import definitions, explain
from kenning.search.engine import MEANING_FLOOR, RELATED_WORDS_FLOOR, SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.workspace import Workspace

# query -> the title of the chunk that defines what it names
DEFINED = {
    "progressbar": "progressbar/bar.py: class ProgressBar",
    "ext:py progressbar": "progressbar/bar.py: class ProgressBar",
    "pass_context": "cli/decorators.py: pass_context",
}
JUNK = "wibblequark"  # a word of exactly one note (inbox.md), whose other words are common ones


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return rw.build_store_file(tmp_path_factory.mktemp("workspace"))


@pytest.fixture(scope="module")
def engine(db):
    store = open_store(db)
    yield SearchEngine(store, FakeEmbedder())
    store.close()


def _cli_json(capsys, db, *args) -> list[dict]:
    code = main(["--store", db, "--model", "fake", "search", "--json", "--explain", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    _, *hits = (json.loads(line) for line in out.splitlines())
    return hits


@pytest.fixture
def service(db):
    ws = Workspace(db, model="fake")
    answer = KenningService(ws, hit_dict, background_model=BackgroundModel(FakeEmbedder).start(), watch=False)
    answer.model.wait(10)
    yield answer
    ws.close()


def _no_query_word(lists) -> bool:
    return not set(QUERY_WORD_LISTS) & set(lists)


# -- feedback words alone bring nothing --------------------------------------------


def test_a_word_of_one_note_finds_that_note_alone(engine):
    unfloored = engine.search(JUNK, SearchOptions(meaning_floor=None)).hits
    junk = [h for h in unfloored if "feedback" in h.breakdown.lists and _no_query_word(h.breakdown.lists)]
    assert junk and all(h.breakdown.cosine < RELATED_WORDS_FLOOR for h in junk)  # what feedback words bring
    hits = engine.search(JUNK).hits
    assert [h.path for h in hits] == ["inbox.md"]


def test_a_hit_no_query_word_matched_always_means_what_the_query_does(engine):
    for text in (*rw.QUERIES, JUNK):
        for hit in engine.search(text, SearchOptions(limit=50)).hits:
            b = hit.breakdown
            floor = RELATED_WORDS_FLOOR if "feedback" in b.lists else MEANING_FLOOR
            assert not _no_query_word(b.lists) or b.cosine >= floor, (text, hit.path, b.lists)


def test_cli_text_and_json_show_the_one_note(capsys, db):
    assert main(["--store", db, "--model", "fake", "search", JUNK]) == 0
    out, _ = capsys.readouterr()
    assert "inbox.md" in out and "sprint-12.md" not in out and "retro.md" not in out
    assert [h["path"] for h in _cli_json(capsys, db, JUNK)] == ["inbox.md"]


def test_mcp_search_shows_the_one_note(service):
    assert [h["path"] for h in service.search(JUNK)["hits"]] == ["inbox.md"]


# -- the definition before its uses ------------------------------------------------


@pytest.mark.parametrize("text", DEFINED)
def test_the_chunk_defining_the_identifier_comes_first(engine, text):
    hits = engine.search(text).hits
    assert hits[0].title == DEFINED[text]
    assert definitions.LIST in hits[0].breakdown.lists
    uses = [h for h in hits if h.kind == "code" and definitions.LIST not in h.breakdown.lists]
    assert uses  # the chunks that only use it are found, below it
    assert all(h.breakdown.final < hits[0].breakdown.final for h in uses)


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_the_definition_list_explains_itself_and_adds_up(engine, mode):
    for text in DEFINED:
        b = engine.search(text, SearchOptions(mode=mode)).hits[0].breakdown
        assert b.lists[definitions.LIST].weight == definitions.WEIGHT
        assert b.lists[definitions.LIST].rank == 1  # one entry a chunk, though both keyword lists found it
        assert b.fused == sum(b.lists[name].contribution for name in sorted(b.lists))


def test_prose_never_gets_a_definition_list(engine):
    for text in ("how do I undo a bad release", "release notes", "meeting notes with decisions", "notes"):
        assert all(definitions.LIST not in h.breakdown.lists for h in engine.search(text).hits)


@pytest.mark.parametrize("text", DEFINED)
def test_cli_and_json_put_the_definition_first(capsys, db, text):
    hits = _cli_json(capsys, db, text)
    assert hits[0]["title"] == DEFINED[text]
    assert definitions.LIST in hits[0]["breakdown"]["lists"]
    assert main(["--store", db, "--model", "fake", "search", "--explain", text]) == 0
    out, _ = capsys.readouterr()
    first = out.split("\n\n")[0]
    assert DEFINED[text].split(": ")[0] in first and explain.DEFINITION_NOTE in first


@pytest.mark.parametrize("text", DEFINED)
def test_mcp_search_puts_the_definition_first(service, text):
    assert service.search(text)["hits"][0]["title"] == DEFINED[text]


# -- totals -------------------------------------------------------------------------


def test_totals_count_what_the_query_words_match(engine):
    counted = SearchOptions(count_total=True)
    junk = engine.search(JUNK, counted).total
    assert (junk.chunks, junk.files) == (1, 1)  # not the chunks the feedback words find
    words = SearchOptions(mode="lexical", limit=500, count_total=True)
    matched = {h.chunk_id for h in engine.search("meeting notes decisions", words).hits}  # every match
    lexical = engine.search("meeting notes decisions", words).total
    assert lexical.chunks == len(matched)
    # "with" is in many notes: it ranks (bm25 weighs it), but a chunk it alone finds is
    # counted only when it is shown, not with every note that says "with"
    with_stop_word = engine.search(
        "meeting notes with decisions", SearchOptions(mode="lexical", limit=3, count_total=True)
    )
    assert with_stop_word.total.chunks == len(matched | {h.chunk_id for h in with_stop_word.hits})
    every_with = engine.search("with", SearchOptions(mode="lexical", limit=500)).hits
    assert with_stop_word.total.chunks < len(matched | {h.chunk_id for h in every_with})
    hybrid = engine.search("meeting notes decisions", SearchOptions(limit=50, count_total=True))
    beyond_words = [h for h in hybrid.hits if _no_query_word(h.breakdown.lists)]
    assert hybrid.total.chunks == lexical.chunks + len(beyond_words)  # the hits shown count, never more
