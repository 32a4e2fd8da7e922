"""The breakdown pane names the neighbours list (search.neighbours) in words: a query
typed into the window, its first hit's bars read."""

from __future__ import annotations

from PySide6.QtCore import Qt

from kenning.core.types import NEIGHBOURS_LIST
from kenning.search import explain

NOTES = {
    f"deploy-{i}.md": f"# Deploy step {i}\n\nRoll back a bad release: run the rollback script, check step {i}.\n"
    for i in range(5)
}


def typed(qtbot, w, text):
    field = w.search_bar.field
    field.setFocus()
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field, text)
    qtbot.wait_until(lambda: w.preview.hit is w.current_hit(), timeout=5000)


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
