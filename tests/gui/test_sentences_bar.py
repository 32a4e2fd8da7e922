"""The breakdown pane says how a question of several sentences was read (search.sentences):
the meaning mode clicked, a question typed into the window, its first hit's bars read."""

from __future__ import annotations

from PySide6.QtCore import Qt
from tests_gui_helpers import typed

NOTES = {
    "kestrel.md": "# Kestrels\n\nA kestrel hovers over the ridge, facing into a strong wind.\n",
    "prey.md": "# Prey\n\nFalcons take voles, mice and beetles as prey.\n",
}
QUESTION = "How do falcons hover over a ridge in strong wind? Which prey do they take?"


def test_the_vector_bar_says_the_question_was_read_in_its_sentences(qtbot, tmp_path, window_factory):
    from conftest import index_notes, wait_for_model

    w = window_factory(index_notes(tmp_path, NOTES))
    w.show()
    wait_for_model(qtbot, w)
    meaning = next(b for b in w.search_bar.modes.buttons() if b.property("mode") == "vector")
    qtbot.mouseClick(meaning, Qt.MouseButton.LeftButton)
    typed(qtbot, w, QUESTION)
    assert w.current_hit().breakdown.sentences == 2
    bar = {r.key: r for r in w.breakdown.rows}["vector"]
    assert "the question read whole and in its 2 sentences" in bar.tip
    typed(qtbot, w, "falcons hovering over a ridge")  # one sentence: the question whole
    assert w.current_hit().breakdown.sentences == 0
    assert "sentences" not in {r.key: r for r in w.breakdown.rows}["vector"].tip
