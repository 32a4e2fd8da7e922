"""A question of several sentences read whole and sentence by sentence (search.sentences,
issue #28 round fifteen): in vector mode, explained in every front end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.cli.main import main
from kenning.cli.output import hit_dict
from kenning.embedding import FakeEmbedder
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.search import explain, sentences
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.workspace import Workspace
from kenning_testing import cli_indexed, index_folder, write_files

QUESTION = "How do falcons hover over a ridge in strong wind? Give examples where possible. Which prey do they take?"
NOTES = {
    "kestrel.md": "# Kestrels\n\nA kestrel hovers over the ridge, facing into a strong wind.\n",
    "prey.md": "# Prey\n\nFalcons take voles, mice and beetles as prey.\n",
    "gearbox.md": "# Gearbox\n\nThe gearbox oil is changed every spring.\n",
}


def test_a_question_is_cut_at_the_end_of_each_sentence_that_holds_a_content_word():
    assert sentences.sentences(QUESTION) == [
        "How do falcons hover over a ridge in strong wind?",
        "Give examples where possible.",
        "Which prey do they take?",
    ]
    # A dot inside a name or a number ends no sentence; one of stop words only is no reading.
    assert sentences.sentences("run setup.py for v1.2 now") == ["run setup.py for v1.2 now"]
    assert sentences.sentences("What is a kestrel? Is it?") == ["What is a kestrel?"]
    assert sentences.read_in("kestrel hovering over the ridge") == 0
    assert sentences.read_in(QUESTION) == 3
    many = " ".join(f"Sentence number {n} here." for n in range(20))
    assert sentences.read_in(many) == sentences.MAX_SENTENCES


def test_the_query_vector_is_both_readings_summed():
    embedder = FakeEmbedder()
    vector = sentences.query_vector(embedder.embed_query, QUESTION)
    parts = sentences.sentences(QUESTION)
    weights = np.array([sentences.content_words(p) for p in parts], dtype=np.float64)
    read = weights @ np.array([embedder.embed_query(p) for p in parts], dtype=np.float64)
    expected = embedder.embed_query(QUESTION) + read / np.linalg.norm(read)
    np.testing.assert_allclose(vector, expected / np.linalg.norm(expected), rtol=1e-5, atol=1e-6)
    assert vector.dtype == np.float32
    # One sentence: the model's vector itself.
    one = "kestrel hovering over the ridge"
    assert np.array_equal(sentences.query_vector(embedder.embed_query, one), embedder.embed_query(one))


@given(st.lists(st.text(alphabet="abc xyz.?!;", min_size=0, max_size=30), min_size=1, max_size=6))
def test_the_query_vector_is_always_of_unit_length(parts):
    embedder = FakeEmbedder(dim=16)
    text = " ".join(parts)
    vector = sentences.query_vector(embedder.embed_query, text)
    assert vector.shape == (16,) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert len(sentences.sentences(text)) <= sentences.MAX_SENTENCES


class _Reading(FakeEmbedder):
    """The fake model whose query vector is already search.sentences' reading."""

    def embed_query(self, text: str) -> np.ndarray:
        return sentences.query_vector(super().embed_query, text)


def test_vector_mode_ranks_by_the_two_readings_and_hybrid_by_the_question_whole(store, tmp_path):
    index_folder(store, write_files(tmp_path / "notes", NOTES), FakeEmbedder())
    engine = SearchEngine(store, FakeEmbedder())
    read = engine.search(QUESTION, SearchOptions(mode="vector", limit=10)).hits
    whole = engine.search(QUESTION, SearchOptions(mode="vector", limit=10, sentences=False)).hits
    assert read and all(h.breakdown.sentences == 3 for h in read)
    assert all(h.breakdown.sentences == 0 for h in whole)
    assert [h.breakdown.cosine for h in read] != [h.breakdown.cosine for h in whole]
    # Exactly the ranking of a model whose query vector is that reading.
    reading = SearchEngine(store, _Reading()).search(QUESTION, SearchOptions(mode="vector", limit=10, sentences=False))
    assert [h.chunk_id for h in read] == [h.chunk_id for h in reading.hits]
    assert [h.breakdown.final for h in read] == pytest.approx([h.breakdown.final for h in reading.hits], rel=1e-6)
    hybrid = engine.search(QUESTION, SearchOptions(mode="hybrid", limit=10)).hits
    assert hybrid and all(h.breakdown.sentences == 0 for h in hybrid)
    forced = engine.search(QUESTION, SearchOptions(mode="hybrid", limit=10, sentences=True)).hits  # the knob
    assert {h.breakdown.sentences for h in forced if "vector" in h.breakdown.lists} == {3}
    one = engine.search("falcons hovering over a ridge", SearchOptions(mode="vector", limit=10)).hits
    assert one and all(h.breakdown.sentences == 0 for h in one)


def test_the_json_and_explain_of_a_vector_search_say_how_the_question_was_read(capsys, tmp_path):
    db = cli_indexed(capsys, write_files(tmp_path / "notes", NOTES), tmp_path / "store" / "kenning.db")
    assert main(["--store", db, "--model", "fake", "search", "--json", "--explain", "--mode", "vector", QUESTION]) == 0
    _, *hits = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert hits and all(h["breakdown"]["sentences"] == 3 for h in hits)
    assert main(["--store", db, "--model", "fake", "search", "--explain", "--mode", "vector", QUESTION]) == 0
    out = capsys.readouterr().out
    assert "the question read whole and in its 3 sentences" in out
    assert main(["--store", db, "--model", "fake", "search", "--explain", "--mode", "hybrid", QUESTION]) == 0
    assert "sentences, each weighted" not in capsys.readouterr().out


def test_an_mcp_search_in_vector_mode_says_how_the_question_was_read(store, tmp_path):
    index_folder(store, write_files(tmp_path / "notes", NOTES), FakeEmbedder(), name="notes")
    ws = Workspace(store.path, model="fake")
    ws.__dict__["store"] = store  # share the test's connection
    service = KenningService(ws, hit_dict, background_model=BackgroundModel(FakeEmbedder).start(), watch=False)
    service.model.wait(10)
    answer = service.search(QUESTION, 10, "vector", True)
    assert answer["hits"] and all(h["breakdown"]["sentences"] == 3 for h in answer["hits"])
    first = answer["hits"][0]["breakdown"]
    assert explain.sentences_note(_breakdown(first)).startswith("the question read whole and in its 3 sentences")


def _breakdown(record: dict):
    from kenning.core.types import Breakdown

    return Breakdown(sentences=record["sentences"])
