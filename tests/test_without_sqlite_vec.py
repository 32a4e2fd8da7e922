"""When sqlite-vec cannot load, everything still works; semantic search is a capped scan."""

from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage import vector_scan as vector_module
from kenning_testing import CountingEmbedder, reindex, write_files


def test_search_falls_back_to_a_capped_scan_and_says_so(tmp_path, monkeypatch):
    notes = write_files(tmp_path / "notes", {f"n{i}.md": f"# Note {i}\n\nkestrel number {i}\n" for i in range(12)})
    store = open_store(tmp_path / "k.db", load_vec=False)
    assert not store.vec_available
    embedder = CountingEmbedder()
    add_source(store, notes)
    reindex(store, embedder)
    assert store.scalar("SELECT count(*) FROM chunks WHERE vector_fp IS NULL") == 0
    monkeypatch.setattr(vector_module, "FALLBACK_CAP", 5)
    result = SearchEngine(store, embedder).search("kestrel", SearchOptions(limit=20))
    assert any("at most" in note for note in result.notes)
    vector_hits = [h for h in result.hits if "vector" in h.breakdown.lists]
    assert 0 < len(vector_hits) <= 5  # the scan saw at most FALLBACK_CAP rows
    assert all(h.breakdown.vector_capped for h in vector_hits)
    assert all(h.breakdown.cosine is not None for h in result.hits)
    store.close()


def test_vectors_embedded_without_sqlite_vec_reach_it_later_without_the_model(tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n"})
    db = tmp_path / "k.db"
    store = open_store(db, load_vec=False)
    embedder = CountingEmbedder()
    add_source(store, notes)
    reindex(store, embedder)
    store.close()
    store = open_store(db)
    assert store.vec_available
    again = CountingEmbedder()
    reindex(store, again)
    assert again.embedded == []  # filled from the cache, nothing re-embedded
    assert store.scalar("SELECT count(*) FROM vector_codes") == store.scalar("SELECT count(*) FROM chunks")
    store.close()
