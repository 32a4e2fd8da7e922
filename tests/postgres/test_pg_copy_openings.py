"""The benchmarks' copy of a SQLite store into a team store carries the documents'
openings (pgtesting.copy_store): vector mode mixes a document's opening into each of its
chunks' scores, so without them the team store's figures in bench_pg_quality would not be
the same ranking measured on another backend."""

from __future__ import annotations

from kenning.embedding import FakeEmbedder
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage.postgres import open_pg_store
from kenning_testing import index_folder
from pgtesting import copy_store
from test_openings import QUERY, _chunks, _notes


def test_a_copied_store_ranks_vector_mode_as_the_original(tmp_path, pg_url):
    embedder = FakeEmbedder()
    personal = open_store(tmp_path / "staging" / "kenning.db")
    index_folder(personal, _notes(tmp_path), embedder)
    personal.close()
    team = open_pg_store(pg_url)
    try:
        copy_store(tmp_path / "staging" / "kenning.db", team)
        original = open_store(tmp_path / "staging" / "kenning.db")
        long_ids = _chunks(team, "long.md")
        openings = team.vectors.openings_of(embedder.fingerprint, long_ids)
        assert sorted(openings) == sorted(long_ids)  # every chunk of the prose cut in several
        assert team.vectors.pending_openings(embedder.fingerprint, 0, 100, 8) == []

        def ranked(store):
            hits = SearchEngine(store, embedder).search(QUERY, SearchOptions(mode="vector", limit=20)).hits
            return [
                (h.path, h.breakdown.opening is not None, round(h.breakdown.lists["vector"].score, 5)) for h in hits
            ]

        assert ranked(team) == ranked(original)
        assert any(mixed for _, mixed, _ in ranked(team))
        original.close()
    finally:
        team.close()
