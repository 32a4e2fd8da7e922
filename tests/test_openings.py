"""A document's opening as meaning evidence (issue #28 round nine): what the model reads of a
document's start is embedded once per document cut in several chunks, and the vector list
mixes its cosine with the chunk's; the explain record shows the mix and adds up exactly."""

from __future__ import annotations

import json
import math

from kenning.cli.main import main
from kenning.cli.output import explain_lines, hit_dict
from kenning.embedding import FakeEmbedder
from kenning.ingest import embedphase
from kenning.ingest.embedtext import OPENING_CHARS, embedding_input, has_opening, opening_input
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.search.engine import OPENING_WEIGHTS, SearchEngine, SearchOptions
from kenning.workspace import Workspace
from kenning.workspace.searching import search_options
from kenning.workspace.settings import Settings
from kenning_testing import cli_indexed, index_folder, reindex, write_files

MIX = OPENING_WEIGHTS["vector"]  # the shipped weight, vector mode's
QUERY = "kestrel hovering over the ridge"
WORDS = ["kestrel", "falcon", "hovering", "wind", "ridge", "moorland", "vole", "prey", "wing", "tail"]


def _paragraph(seed: int, chars: int) -> str:
    words = [WORDS[(seed * 7 + i * 3) % len(WORDS)] + str(i % 13) for i in range(chars // 8)]
    return " ".join(words)[:chars].rsplit(" ", 1)[0]


def _notes(tmp_path):
    # A short first section the chunker cannot glue to the next (1,600 bytes at most).
    long_note = "## Intro\n\nkestrels hover\n\n" + "\n\n".join(
        f"## Part {n}\n\n{_paragraph(n, 1500)}" for n in range(4)
    )
    return write_files(
        tmp_path / "notes",
        {
            "long.md": f"# Kestrels\n\n{long_note}\n",
            "short.md": "# Voles\n\nvoles hide in moorland grass\n",
            "code.py": "\n\n".join(f"def f{n}():\n    return '{_paragraph(n, 1400)}'\n" for n in range(4)),
        },
    )


def _chunks(store, rel_path):
    doc = next(d for s in store.sources.list() for d in [store.documents.find(s.id, rel_path)] if d)
    return [c.id for c in store.documents.chunks(doc.id)]


def test_opening_reads_on_to_its_window_at_a_words_end():
    parts = (("T", "short start"), ("T", "word " * 400), ("T", "never read"))
    text = opening_input(parts, "markdown", "a.md")
    assert text.startswith("T\nshort start\nword word") and "never" not in text
    body = text.split("\n", 1)[1]
    assert len(body) <= OPENING_CHARS and body.endswith("word")
    full = ("T", "x" * OPENING_CHARS)
    assert opening_input((full, ("T", "more")), "markdown", "a.md") == embedding_input("T", full[1], "markdown", "a.md")
    assert has_opening("markdown", 2) and not has_opening("markdown", 1) and not has_opening("code:python", 5)


def test_only_prose_cut_in_several_chunks_gets_an_opening(store, tmp_path):
    embedder = FakeEmbedder()
    _, run = index_folder(store, _notes(tmp_path), embedder)
    long_ids, short_ids, code_ids = (_chunks(store, p) for p in ("long.md", "short.md", "code.py"))
    assert len(long_ids) > 1 and len(short_ids) == 1 and len(code_ids) > 1
    openings = store.vectors.openings_of(embedder.fingerprint, [*long_ids, *short_ids, *code_ids])
    assert sorted(openings) == sorted(long_ids)
    assert run.embedding.openings == 1
    assert store.vectors.pending_openings(embedder.fingerprint, 0, 100, 8) == []
    # Indexed again with nothing changed: nothing is embedded.
    again = reindex(store, embedder)
    assert again.embedding.openings == 0 and again.embedding.embedded == 0


def test_the_vector_score_mixes_the_opening_and_the_record_adds_up(store, tmp_path):
    embedder = FakeEmbedder()
    index_folder(store, _notes(tmp_path), embedder)
    long_ids = set(_chunks(store, "long.md"))
    engine = SearchEngine(store, embedder)
    for mode in ("vector", "hybrid"):
        options = SearchOptions(mode=mode, limit=20, opening_weight=MIX)
        hits = engine.search("kestrel hovering over the ridge", options).hits
        mixed = [h for h in hits if h.chunk_id in long_ids and "vector" in h.breakdown.lists]
        assert mixed, mode
        for hit in hits:
            b = hit.breakdown
            if hit.chunk_id in long_ids and "vector" in b.lists:
                assert b.opening is not None and b.opening_weight == MIX
                w = b.opening_weight
                assert b.lists["vector"].score == (1 - w) * b.cosine + w * b.opening  # exactly
                assert any("document's opening" in line for line in explain_lines(b))
            else:
                assert b.opening is None
                if "vector" in b.lists:  # the chunk's cosine (read again: float32's last bits may differ)
                    assert math.isclose(b.lists["vector"].score, b.cosine, abs_tol=1e-6)
    plain = engine.search("kestrel hovering over the ridge", SearchOptions(mode="vector", opening_weight=0.0)).hits
    for hit in plain:
        b = hit.breakdown
        assert b.opening is None and math.isclose(b.lists["vector"].score, b.cosine, abs_tol=1e-6)


def test_a_store_indexed_before_openings_keeps_todays_scores_until_indexed_again(store, tmp_path, monkeypatch):
    embedder = FakeEmbedder()
    # What the indexer before openings did (a store made before migration m015): no
    # document's opening looked at.
    monkeypatch.setattr(embedphase, "_embed_openings", lambda *args: None)
    index_folder(store, _notes(tmp_path), embedder)
    monkeypatch.undo()
    query = "kestrel hovering over the ridge"
    engine = SearchEngine(store, embedder)
    without = engine.search(query, SearchOptions(mode="vector", opening_weight=0.0, signals=False)).hits
    before = engine.search(query, SearchOptions(mode="vector", opening_weight=MIX, signals=False)).hits
    assert [(h.chunk_id, h.score) for h in before] == [(h.chunk_id, h.score) for h in without]
    assert all(h.breakdown.opening is None for h in before)
    run = reindex(store, embedder)  # `kenning index`: only the openings are embedded
    assert run.embedding.embedded == 0 and run.embedding.openings == 1
    after = SearchEngine(store, embedder).search(query, SearchOptions(mode="vector", opening_weight=MIX)).hits
    assert any(h.breakdown.opening is not None for h in after)


def test_a_first_chunk_that_fills_the_window_is_its_documents_opening_from_the_cache(store, tmp_path):
    embedder = FakeEmbedder()
    text = "\n\n".join(f"## Part {n}\n\n{_paragraph(n, 1400)}" for n in range(3))
    _, run = index_folder(store, write_files(tmp_path / "n", {"full.md": f"# Full\n\n{text}\n"}), embedder)
    ids = _chunks(store, "full.md")
    [pending] = store.vectors.pending_openings("another-model|1|1", 0, 10, 8)
    assert pending.chunk_count == len(ids) > 1 and len(pending.parts[0][1]) >= OPENING_CHARS
    row = store.chunks.rows([ids[0]])[ids[0]]
    opening = opening_input(pending.parts, "markdown", "full.md")
    assert opening == embedding_input(row.title, row.text, "markdown", "full.md")
    assert run.embedding.openings == 0  # its vector is the first chunk's, from the cache
    assert sorted(store.vectors.openings_of(embedder.fingerprint, ids)) == sorted(ids)


def _adds_up(breakdown: dict) -> bool:
    """The vector list's score is the explain record's mix of its two cosines, exactly."""
    w = breakdown["opening_weight"]
    return breakdown["lists"]["vector"]["score"] == (1 - w) * breakdown["cosine"] + w * breakdown["opening"]


def test_vector_mode_mixes_the_opening_by_default_and_hybrid_does_not(store, tmp_path):
    index_folder(store, _notes(tmp_path), FakeEmbedder())
    long_ids = set(_chunks(store, "long.md"))
    engine = SearchEngine(store, FakeEmbedder())
    assert 0 < MIX < 1 and OPENING_WEIGHTS.get("hybrid", 0.0) == 0.0
    for mode, weight in (("vector", MIX), ("hybrid", 0.0), ("lexical", 0.0)):
        # What the CLI, the app and the MCP server search with (workspace.searching).
        assert search_options(Settings(), mode).opening_mix == weight
    vector = engine.search(QUERY, SearchOptions(mode="vector", limit=20)).hits
    mixed = [h.breakdown for h in vector if h.chunk_id in long_ids]
    assert mixed and all(b.opening is not None and b.opening_weight == MIX for b in mixed)
    assert all(b.lists["vector"].score == (1 - MIX) * b.cosine + MIX * b.opening for b in mixed)
    hybrid = engine.search(QUERY, SearchOptions(mode="hybrid", limit=20)).hits
    assert any(h.chunk_id in long_ids and "vector" in h.breakdown.lists for h in hybrid)
    assert all(h.breakdown.opening is None and h.breakdown.opening_weight == 0.0 for h in hybrid)


def test_the_json_and_explain_of_a_vector_search_carry_the_mix(capsys, tmp_path):
    db = cli_indexed(capsys, _notes(tmp_path), tmp_path / "store" / "kenning.db")
    assert main(["--store", db, "--model", "fake", "search", "--json", "--explain", "--mode", "vector", QUERY]) == 0
    _, *hits = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    mixed = [h["breakdown"] for h in hits if h["path"] == "long.md"]
    assert mixed and all(b["opening_weight"] == MIX and _adds_up(b) for b in mixed)
    assert all(h["breakdown"]["opening"] is None for h in hits if h["path"] != "long.md")
    assert main(["--store", db, "--model", "fake", "search", "--explain", "--mode", "vector", QUERY]) == 0
    assert f"{MIX:g} × the document's opening's cosine" in capsys.readouterr().out


def test_an_mcp_search_in_vector_mode_carries_the_mix(store, tmp_path):
    index_folder(store, _notes(tmp_path), FakeEmbedder(), name="notes")
    ws = Workspace(store.path, model="fake")
    ws.__dict__["store"] = store  # share the test's connection
    service = KenningService(ws, hit_dict, background_model=BackgroundModel(FakeEmbedder).start(), watch=False)
    service.model.wait(10)
    answer = service.search(QUERY, 20, "vector", True)
    assert answer["mode"] == "vector"
    mixed = [h["breakdown"] for h in answer["hits"] if h["path"] == "long.md"]
    assert mixed and all(b["opening_weight"] == MIX and _adds_up(b) for b in mixed)
