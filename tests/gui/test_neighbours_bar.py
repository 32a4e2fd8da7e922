"""The breakdown pane names the neighbours list (search.neighbours) in words: a query
typed into the window, its first hit's bars read."""

from __future__ import annotations

from tests_gui_helpers import typed

from kenning.core.types import NEIGHBOURS_LIST
from kenning.search import explain

NOTES = {
    f"deploy-{i}.md": f"# Deploy step {i}\n\nRoll back a bad release: run the rollback script, check step {i}.\n"
    for i in range(5)
}


def test_the_breakdown_shows_the_neighbours_share_in_words(qtbot, tmp_path, window_factory):
    from conftest import index_notes, wait_for_model

    w = window_factory(index_notes(tmp_path, NOTES))
    w.show()
    wait_for_model(qtbot, w)
    typed(qtbot, w, "roll back a bad release")
    assert NEIGHBOURS_LIST in w.current_hit().breakdown.lists
    rows = {r.key: r for r in w.breakdown.rows}
    bar = rows[NEIGHBOURS_LIST]
    assert bar.label.startswith("Neighbours · #")
    assert explain.NEIGHBOURS_NOTE in bar.tip and bar.end > bar.start
