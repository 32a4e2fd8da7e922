"""Thin Qt models and pure helpers, tested without a view."""

from __future__ import annotations

from PySide6.QtCore import Qt

from kenning.core.types import Breakdown, Hit, ListScore
from kenning.gui.breakdown import breakdown_rows
from kenning.gui.results import HitRole, ResultsModel
from kenning.gui.search_bar import filter_chips, remove_filter


def make_hit(i: int) -> Hit:
    b = Breakdown(
        lists={"porter": ListScore(1, 3.2, 1.0, 1 / 61)}, fused=1 / 61, normaliser=2 / 61, base=0.5, final=0.5
    )
    return Hit(
        i, "notes", f"n{i}.md", f"/tmp/n{i}.md", f"Note {i}", "prose", 1, 3, "a [[b]] c", 0.5, b, spans=((4, 5),)
    )


def test_results_model_set_rows(qtbot):
    model = ResultsModel()
    model.set_rows([make_hit(1), make_hit(2)])
    assert model.rowCount() == 2
    assert model.data(model.index(1, 0), Qt.ItemDataRole.DisplayRole) == "Note 2"
    assert model.data(model.index(0, 0), HitRole).chunk_id == 1
    model.set_rows([])
    assert model.rowCount() == 0 and model.hit(0) is None


def test_filter_chips_and_removal():
    text = 'retry ext:md path:"my notes/" -draft'
    assert filter_chips(text) == [("ext", "md"), ("path", "my notes/")]
    assert remove_filter(text, "path", "my notes/") == "retry ext:md -draft"
    assert filter_chips("http://example.com") == []


def test_breakdown_bars_stack_to_base_and_final():
    hit = make_hit(1)
    rows = {r.key: r for r in breakdown_rows(hit.breakdown)}
    assert abs(rows["porter"].end - 0.5) < 1e-9  # 1/61 of a 2/61 ceiling is half the score
    assert rows["final"].value == "0.5000"


def test_breakdown_says_which_wiki_links_were_ambiguous():
    from dataclasses import replace

    hit = make_hit(1)
    link = "Runbook.md (a/Runbook.md, b/Runbook.md)"
    rows = breakdown_rows(replace(hit.breakdown, ambiguous_links=(link,)))
    assert [r.tip for r in rows if r.key == "ambiguous_link"] == [f"ambiguous link, not counted: {link}"]


def test_the_window_embeds_queries_on_one_thread_and_indexes_leaving_a_core(tmp_path):
    from kenning.embedding import QUERY_THREADS
    from kenning.gui.workers import background_threads, index_embedder_factory, query_embedder_factory
    from kenning.workspace import Workspace

    workspace = Workspace(tmp_path / "k.db")
    query_side, index_side = query_embedder_factory(workspace), index_embedder_factory(workspace)
    assert query_side().threads == QUERY_THREADS == 1
    assert index_side().threads == background_threads()  # #14: a core stays free for the window
    assert query_side.name == index_side.name  # the same model either way
