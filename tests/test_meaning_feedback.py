"""Meaning feedback: hybrid search moves the query vector toward its best agreed hits (Rocchio)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.cli.output import explain_lines
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.meaning_feedback import moved_query
from kenning_testing import index_folder, write_files

TOPIC = "The {name} gearbox transmits torque; its planetary gearbox needs synthetic lubricant and bearings."


@pytest.fixture
def gearbox(store, notes, embedder):
    files = {f"gear{i}.md": f"# Gearbox {i}\n\n" + TOPIC.format(name=f"unit{i}") for i in range(3)}
    files.update({f"other{i}.md": f"# Garden {i}\n\ntomatoes like sun and water, day {i}\n" for i in range(20)})
    write_files(notes, files)
    index_folder(store, notes, embedder)
    return SearchEngine(store, embedder)


def test_the_vector_list_is_searched_with_the_moved_query_and_says_so(gearbox, embedder):
    result = gearbox.search("gearbox torque", SearchOptions(limit=10, meaning_feedback=True))
    moved = [h for h in result.hits if "vector" in h.breakdown.lists and h.breakdown.moved_toward]
    assert moved and all(h.breakdown.moved_toward == 3 for h in moved)  # the three gearbox notes agreed
    query = embedder.embed_query("gearbox torque")
    for hit in moved:
        # the reported cosine is to the query as typed; the list's score to the moved query
        assert hit.breakdown.cosine == pytest.approx(gearbox.vectors.cosines(query, [hit.chunk_id])[hit.chunk_id])
        assert hit.breakdown.lists["vector"].score != pytest.approx(hit.breakdown.cosine)
    lines = explain_lines(moved[0].breakdown)
    assert any("moved halfway toward its 3 best first hits" in line for line in lines)


def test_off_by_default_switched_off_or_outside_hybrid_nothing_moves(gearbox):
    """Off by default: leaving one collection out, every fold chose it off (docs/architecture.md §6)."""
    default = gearbox.search("gearbox torque", SearchOptions(limit=10))
    off = gearbox.search("gearbox torque", SearchOptions(limit=10, meaning_feedback=False))
    vector = gearbox.search("gearbox torque", SearchOptions(limit=10, mode="vector", meaning_feedback=True))
    for result in (default, off, vector):
        assert all(h.breakdown.moved_toward == 0 for h in result.hits)
        assert all(h.breakdown.lists["vector"].score == pytest.approx(h.breakdown.cosine) for h in result.hits)


def test_no_move_without_agreement(store, notes, embedder):
    write_files(notes, {"a.md": "kestrel falcon hawk", "b.md": "unrelated words entirely"})
    index_folder(store, notes, embedder)
    result = SearchEngine(store, embedder).search("zebra")
    assert all(h.breakdown.moved_toward == 0 for h in result.hits)


def test_the_meaning_floor_reads_the_cosine_to_the_query_as_typed(gearbox):
    """A meaning-only hit is kept or dropped by its own cosine, whatever the moved query's."""
    result = gearbox.search("gearbox torque", SearchOptions(limit=30, meaning_floor=0.3, meaning_feedback=True))
    for hit in result.hits:
        if hit.breakdown.meaning_only:
            assert hit.breakdown.cosine is not None and hit.breakdown.cosine >= 0.3


unit = st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4).filter(lambda v: np.linalg.norm(v) > 1e-3)


@given(query=unit, feedback=st.lists(unit, min_size=1, max_size=3))
def test_the_moved_query_is_a_unit_vector_between_query_and_centroid(query, feedback):
    q = np.asarray(query, dtype=np.float32) / np.linalg.norm(query)
    vecs = [np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for v in feedback]
    moved = moved_query(q, vecs)
    assert abs(float(np.linalg.norm(moved)) - 1.0) < 1e-4
    centroid = np.mean(vecs, axis=0)
    if np.linalg.norm(q + centroid) > 1e-3:
        # halfway: the moved query is at least as close to the centroid as the query was
        assert float(moved @ centroid) >= float(q @ centroid) - 1e-4
