"""The neighbours list (search.neighbours, issue #28 round fourteen): score regularisation
over the fused ranking's first chunks, in hybrid mode, explained in every front end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import realistic_workspace as rw
from kenning.cli.main import main
from kenning.cli.output import hit_dict
from kenning.core.types import NEIGHBOURS_LIST, meaning_only
from kenning.embedding import FakeEmbedder
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.search import definitions, explain, neighbours
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.workspace import Workspace

PROSE = ("how do I undo a bad release", "meeting notes with decisions", "postgres tuning", "release notes")


def _unit(rows: list[list[float]]) -> np.ndarray:
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_a_chunk_like_the_strong_ones_gains_and_one_like_the_weak_ones_does_not():
    # chunks 1-3 point one way and score high, 4-6 another and score low; 7 and 8 score
    # the same middling fused score, 7 resembling the strong group and 8 the weak one.
    vectors = _unit(
        [[1, 0.1, 0], [1, 0, 0.1], [1, 0.1, 0.1], [0, 1, 0.1], [0.1, 1, 0], [0, 1, 0], [1, 0.2, 0], [0.2, 1, 0]]
    )
    fused = [3.0, 2.9, 2.8, 1.0, 0.9, 0.8, 2.0, 2.0]
    scores = {r.chunk_id: r.score for r in neighbour_scores_of(fused, vectors)}
    assert scores[7] > scores[8]
    assert scores[7] > 2.0 > scores[8]


def neighbour_scores_of(fused: list[float], vectors: np.ndarray):
    return neighbours.neighbour_scores(list(range(1, len(fused) + 1)), fused, vectors)


def test_a_chunk_is_not_its_own_neighbour():
    # chunk 1 alone in its direction: its neighbours are the others, whatever its own score
    vectors = _unit([[1, 0], [0, 1], [0.1, 1], [0.05, 1]])
    scores = {r.chunk_id: r.score for r in neighbour_scores_of([100.0, 1.0, 1.0, 1.0], vectors)}
    assert scores[1] == pytest.approx(1.0)


def test_too_few_chunks_have_no_neighbourhood():
    assert neighbour_scores_of([1.0, 0.5], _unit([[1, 0], [0, 1]])) == []


@given(
    st.integers(min_value=neighbours.FEWEST, max_value=40).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(0.0, 5.0), min_size=n, max_size=n),
            st.lists(st.lists(st.floats(-1, 1), min_size=4, max_size=4), min_size=n, max_size=n),
        )
    )
)
def test_neighbour_scores_are_a_best_first_mean_of_the_others_fused_scores(case):
    fused, rows = case
    vectors = np.array(rows, dtype=np.float32) + np.float32(1e-3)  # never the zero vector
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    found = neighbour_scores_of(fused, vectors)
    assert sorted(r.chunk_id for r in found) == list(range(1, len(fused) + 1))
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)
    assert all(-1e-9 <= r.score <= max(fused) + 1e-9 for r in found)


def test_the_neighbours_list_is_no_finding_of_its_own():
    assert meaning_only(["vector", NEIGHBOURS_LIST])
    assert not meaning_only(["porter", NEIGHBOURS_LIST])
    assert not meaning_only([NEIGHBOURS_LIST])


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return rw.build_store_file(tmp_path_factory.mktemp("workspace"))


@pytest.fixture(scope="module")
def engine(db):
    store = open_store(db)
    yield SearchEngine(store, FakeEmbedder())
    store.close()


def test_it_reorders_the_first_hits_and_recalls_nothing(engine):
    moved = 0
    for text in PROSE:
        on = engine.search(text, SearchOptions(limit=neighbours.POOL)).hits
        off = engine.search(text, SearchOptions(limit=neighbours.POOL, neighbours=False)).hits
        assert {h.chunk_id for h in on} == {h.chunk_id for h in off}, text
        every = all(NEIGHBOURS_LIST in h.breakdown.lists for h in on)
        assert every or (len(on) < neighbours.FEWEST and not any(NEIGHBOURS_LIST in h.breakdown.lists for h in on))
        moved += [h.chunk_id for h in on] != [h.chunk_id for h in off]
    assert moved, "the stage changed no order at all"


def test_its_share_is_the_lists_and_the_record_adds_up(engine):
    hits = engine.search(PROSE[0]).hits
    best = max(h.breakdown.lists[NEIGHBOURS_LIST].score for h in hits)
    for hit in hits:
        b = hit.breakdown
        share = b.lists[NEIGHBOURS_LIST]
        assert share.weight == neighbours.WEIGHT
        assert share.contribution == pytest.approx(neighbours.WEIGHT * share.score / best)
        assert b.fused == sum(b.lists[name].contribution for name in sorted(b.lists))


@pytest.mark.parametrize("mode", ["lexical", "vector"])
def test_only_in_hybrid_mode(engine, mode):
    for text in PROSE:
        assert all(NEIGHBOURS_LIST not in h.breakdown.lists for h in engine.search(text, SearchOptions(mode=mode)).hits)


def test_not_for_a_symbol_looked_up(engine):
    hits = engine.search("progressbar").hits
    assert definitions.LIST in hits[0].breakdown.lists
    assert all(NEIGHBOURS_LIST not in h.breakdown.lists for h in hits)


def test_the_command_line_explains_it(capsys, db):
    assert main(["--store", db, "--model", "fake", "search", "--explain", PROSE[0]]) == 0
    out, _ = capsys.readouterr()
    assert "neighbours" in out and explain.NEIGHBOURS_NOTE in out
    assert main(["--store", db, "--model", "fake", "search", "--json", "--explain", PROSE[0]]) == 0
    _, *hits = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert hits and all(NEIGHBOURS_LIST in hit["breakdown"]["lists"] for hit in hits)


def test_mcp_explains_it(db):
    ws = Workspace(db, model="fake")
    service = KenningService(ws, hit_dict, background_model=BackgroundModel(FakeEmbedder).start(), watch=False)
    try:
        service.model.wait(10)
        hits = service.search(PROSE[0], explain=True)["hits"]
        assert hits and all(NEIGHBOURS_LIST in hit["breakdown"]["lists"] for hit in hits)
    finally:
        ws.close()


def test_its_weight_is_a_setting_and_zero_turns_it_off(engine):
    from kenning.workspace.settings import parse_text, validate

    assert validate("weights", parse_text("weights", "neighbours=0.5"))[NEIGHBOURS_LIST] == 0.5
    half = engine.search(PROSE[0], SearchOptions(weights={NEIGHBOURS_LIST: 0.5})).hits
    assert {h.breakdown.lists[NEIGHBOURS_LIST].weight for h in half} == {0.5}
    off = engine.search(PROSE[0], SearchOptions(weights={NEIGHBOURS_LIST: 0.0})).hits
    assert off and all(NEIGHBOURS_LIST not in h.breakdown.lists for h in off)


def test_the_neighbours_weight_alone_ranks_nothing_and_is_refused():
    from kenning.workspace.settings import SettingsError, parse_text

    with pytest.raises(SettingsError, match="At least one weight"):
        parse_text("weights", "porter=0 trigram=0 vector=0 feedback=0 neighbours=0.75")
