"""#25 item 1: a new query selects its #1, so Enter opens what the list shows first.

Driven as a user does: keys typed into the window (QTest key events), mouse clicks on
the rows, the Recent menu; never by calling the window's slots.
"""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from conftest import index_notes, make_window, wait_for_model

OPS_NOTES = {
    "Restore previous release.md": "# Restore previous release\n\nA rollback restores the previous release.\n"
    "Run the rollback script, then check the certificate of the load balancer.\n",
    "Deploy checklist.md": "# Deploy checklist\n\nTag the release, deploy, and keep the rollback plan at hand.\n",
    "TLS certificate renewal.md": "# TLS certificate renewal\n\nCertificate renewal runs monthly: renew the TLS "
    "certificate before it expires.\nThe renewal job writes the new certificate to the vault.\n",
    "Incident review.md": "# Incident review\n\nWhat failed, the rollback we did, and the renewal we forgot.\n",
    "todo/Ideas.md": "# Ideas\n\nA dashboard for certificates; a rollback button.\n",
}


@pytest.fixture
def ops_window(qtbot, tmp_path):
    w = make_window(qtbot, index_notes(tmp_path, OPS_NOTES))
    wait_for_model(qtbot, w)
    w.show()
    w.activateWindow()
    w.opened = []
    w.opener.open_hit = lambda hit, folder=False: w.opened.append(hit.path) or True  # no editor is started
    yield w
    w.shutdown()


def type_query(qtbot, window, text, *, replace=True):
    """Ctrl+A then the text, as typed; returns once its results are on screen."""
    field = window.search_bar.field
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        if replace:
            qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field, text)
    qtbot.wait_until(lambda: window.page.query == window.search_bar.text, timeout=5000)


def row_rect_centre(window, row):
    return window.list.visualRect(window.model.index(row, 0)).center()


def test_a_new_query_selects_its_first_hit_and_enter_opens_it(qtbot, ops_window):
    w = ops_window
    type_query(qtbot, w, "rollback")
    assert w.list.currentIndex().row() == 0
    old = w.current_hit()
    type_query(qtbot, w, "certificate renewal")
    assert w.model.hits[0].path == "TLS certificate renewal.md"
    assert old.chunk_id in {h.chunk_id for h in w.model.hits[1:]}, "the old hit is still listed, lower down"
    assert w.list.currentIndex().row() == 0 and w.current_hit() is w.model.hits[0]
    qtbot.wait_until(lambda: w.preview.hit is w.model.hits[0], timeout=5000)  # the detail pane explains #1
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Return)
    assert w.opened == ["TLS certificate renewal.md"]


def test_a_clicked_hit_is_not_followed_through_half_typed_queries(qtbot, ops_window):
    w = ops_window
    type_query(qtbot, w, "rollback")
    last = w.model.rowCount() - 1
    qtbot.mouseClick(w.list.viewport(), Qt.MouseButton.LeftButton, pos=row_rect_centre(w, last))
    assert w.list.currentIndex().row() == last
    qtbot.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)  # focus and select the query
    assert w.search_bar.field.hasFocus()
    type_query(qtbot, w, "cert", replace=False)
    assert w.list.currentIndex().row() == 0
    type_query(qtbot, w, "ificate renewal", replace=False)
    assert w.search_bar.text == "certificate renewal"
    assert w.list.currentIndex().row() == 0
    assert w.list.verticalScrollBar().value() == 0, "#1 is in view"
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Return)
    assert w.opened == [w.model.hits[0].path] == ["TLS certificate renewal.md"]


def test_the_same_query_run_again_keeps_the_row_the_user_chose(qtbot, ops_window):
    """A live-index refresh or the model arriving re-runs the query: the user's row stays."""
    w = ops_window
    type_query(qtbot, w, "rollback")
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Down)
    chosen = w.current_hit().chunk_id
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        w.watcher.changed.emit(type("Update", (), {"reports": [], "files": 0, "seconds": 0.0})())
    assert w.current_hit().chunk_id == chosen


def test_enter_before_the_new_results_arrive_opens_the_new_first_hit(qtbot, ops_window):
    w = ops_window
    type_query(qtbot, w, "rollback")
    gate = threading.Event()
    engine = w.search_service.engine
    original = engine.search

    def held(text, options):
        if "certificate" in text:
            gate.wait(10)
        return original(text, options)

    engine.search = held
    field = w.search_bar.field
    try:
        qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field, "certificate renewal")
        qtbot.keyClick(field, Qt.Key.Key_Return)  # searches at once (the debounce had not fired)
        qtbot.keyClick(field, Qt.Key.Key_Return)  # and again: the answer is not there yet
        assert w.opened == [], "nothing opens from the previous query's list"
        with qtbot.wait_signal(w.search_service.results, timeout=10000):
            gate.set()
    finally:
        gate.set()  # never leave the search thread waiting
    qtbot.wait_until(lambda: bool(w.opened), timeout=5000)
    assert w.opened == ["TLS certificate renewal.md"]


def test_up_in_the_empty_field_recalls_the_last_search_with_its_first_hit_selected(qtbot, ops_window):
    w = ops_window
    w.history.add("certificate renewal")
    type_query(qtbot, w, "rollback")
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Down)
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Down)
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Backspace)
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Up)
    assert w.search_bar.text == "certificate renewal"
    assert w.list.currentIndex().row() == 0


def test_picking_from_recent_selects_the_first_hit(qtbot, ops_window):
    w = ops_window
    w.search_bar.set_history(["certificate renewal", "rollback"])
    type_query(qtbot, w, "rollback")
    last = w.model.rowCount() - 1
    qtbot.mouseClick(w.list.viewport(), Qt.MouseButton.LeftButton, pos=row_rect_centre(w, last))
    assert w.list.currentIndex().row() == last

    def choose_first_entry():
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        qtbot.keyClick(menu, Qt.Key.Key_Down)
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(200, choose_first_entry)
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        button = w.search_bar.history_button
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(button.width() // 2, button.height() // 2))
    assert w.search_bar.text == "certificate renewal"
    assert w.list.currentIndex().row() == 0
    assert w.current_hit().path == "TLS certificate renewal.md"
