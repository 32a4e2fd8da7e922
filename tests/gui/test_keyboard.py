"""#25 items 4, 14, 20: the window's shortcuts work wherever the focus is, as the About box lists them."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from conftest import index_notes, make_window, wait_for_model

RUNBOOKS = {
    "runbook.md": "# Runbook\n\n## Deploy\n\nDeploy with the pipeline; a rollback undoes it.\n\n"
    "## Rollback\n\nRun the rollback job, then verify the rollback worked.\n",
    "notes.md": "# Notes\n\nThe rollback of last week went fine.\n",
}


@pytest.fixture
def runbook_window(qtbot, tmp_path):
    w = make_window(qtbot, index_notes(tmp_path, RUNBOOKS))
    wait_for_model(qtbot, w)
    w.show()
    w.activateWindow()
    yield w
    w.shutdown()


def typed(qtbot, window, text):
    window.search_bar.field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, text)


def test_ctrl_e_expands_the_file_while_the_search_field_has_focus(qtbot, runbook_window):
    w = runbook_window
    w.search_bar.set_mode("lexical")
    typed(qtbot, w, "rollback")
    rows = w.model.rowCount()
    lead = w.model.row_info(w.list.currentIndex().row())
    assert lead.more >= 1 and w.current_hit().path == "runbook.md"
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Down)
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Up)  # arrows leave the focus in the field
    assert w.search_bar.field.hasFocus()
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert w.model.rowCount() == rows + lead.more, "the file's other matches are shown"
    assert w.search_bar.text == "rollback" and w.search_bar.field.hasFocus()
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert w.model.rowCount() == rows


def test_ctrl_k_in_the_search_field_selects_the_query_rather_than_cutting_it(qtbot, runbook_window):
    w = runbook_window
    typed(qtbot, w, "rollback")
    w.search_bar.field.setCursorPosition(3)
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert w.search_bar.text == "rollback" and w.search_bar.field.selectedText() == "rollback"


def test_the_menu_bar_holds_quit_settings_and_help_with_their_keys(qtbot, runbook_window):
    w = runbook_window
    menus = {a.text().replace("&", ""): a.menu() for a in w.menuBar().actions()}
    assert list(menus) == ["File", "Search", "View", "Help"]
    file_items = {a.text(): a.shortcut().toString() for a in menus["File"].actions() if a.text()}
    assert file_items["Quit"] == "Ctrl+Q" and file_items["Settings…"] == "Ctrl+,"
    assert "Add folder…" in file_items and "Link git repository…" in file_items
    help_items = [a.text() for a in menus["Help"].actions()]
    assert any("About" in text for text in help_items)


def test_ctrl_q_quits_from_the_search_field(qtbot, runbook_window):
    w = runbook_window
    w.search_bar.field.setFocus()
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait_until(lambda: not w.isVisible(), timeout=5000)
    assert getattr(w, "_closed", False), "the window shut its workers down"


def test_the_about_box_lists_every_key_the_window_answers(qtbot, runbook_window):
    from kenning.gui.about import show_about
    from kenning.gui.shortcuts import COMMANDS

    text = show_about(runbook_window, runbook_window.store_path).text.text()
    for needed in ("Ctrl+E", "Ctrl+F", "Ctrl+Q", "↑ in an empty search box", "Shift+F3"):
        assert needed in text, needed
    for command in COMMANDS:
        for keys in command.keys:
            assert keys in text or keys == "Ctrl+Return", keys


def test_f3_with_the_find_bar_open_steps_through_what_was_typed_there(qtbot, runbook_window):
    w = runbook_window
    typed(qtbot, w, "deploy")
    qtbot.wait_until(lambda: w.preview.hit is w.current_hit(), timeout=5000)
    w.preview.render_button.setChecked(False)  # the plain text view
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert w.preview.find_bar.field.hasFocus()
    qtbot.keyClicks(w.preview.find_bar.field, "rollback")
    view = w.preview.current_view()
    first = view.textCursor().selectionStart()
    assert view.textCursor().selectedText().lower() == "rollback"
    qtbot.keyClick(w.preview.find_bar.field, Qt.Key.Key_F3)
    cursor = view.textCursor()
    assert cursor.selectedText().lower() == "rollback" and cursor.selectionStart() > first, "the next one found"


def test_what_the_find_bar_found_is_drawn_as_the_current_match(qtbot, runbook_window):
    """Seen under Xvfb: with the find bar open, the query's current match kept the strong
    colour and the find's own selection was pale (its view has no focus)."""
    from kenning.gui.style import theme

    w = runbook_window
    typed(qtbot, w, "deploy")
    qtbot.wait_until(lambda: w.preview.hit is w.current_hit(), timeout=5000)
    for rendered in (False, True):
        w.preview.render_button.setChecked(rendered)
        view = w.preview.current_view()
        accent = theme(w.preview.palette()).accent

        def strong(view=view, accent=accent):
            return [
                (s.cursor.selectionStart(), s.cursor.selectionEnd())
                for s in view.extraSelections()
                if s.format.background().color() == accent
            ]

        qtbot.keyClick(w.search_bar.field, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClick(w.preview.find_bar.field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(w.preview.find_bar.field, "rollback")
        qtbot.keyClick(w.preview.find_bar.field, Qt.Key.Key_F3)
        cursor = view.textCursor()
        assert cursor.selectedText().lower() == "rollback"
        assert strong() == [(cursor.selectionStart(), cursor.selectionEnd())], (rendered, strong())
        palette = view.palette()  # the view's own selection, drawn over it, is not the pale one
        assert palette.color(palette.ColorGroup.Inactive, palette.ColorRole.Highlight) == accent
        qtbot.keyClick(w.preview.find_bar.field, Qt.Key.Key_Escape)
        assert not w.preview.find_bar.isVisible()
        assert all(view.document().toPlainText()[a:b].lower() != "rollback" for a, b in strong()), rendered


def test_the_find_bars_count_is_the_shown_documents_after_the_selection_moves(qtbot, runbook_window):
    """Seen under Xvfb: "1 found" stayed beside the find bar when the next hit, a file
    without the word, was shown."""
    w = runbook_window
    w.search_bar.set_mode("lexical")
    typed(qtbot, w, "rollback")
    qtbot.wait_until(lambda: w.preview.hit is w.current_hit(), timeout=5000)
    assert w.current_hit().path == "runbook.md"
    qtbot.keyClick(w.search_bar.field, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(w.preview.find_bar.field, "pipeline")
    assert w.preview.find_bar.count.text() == "1 found"
    qtbot.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)  # back to the search field
    while w.current_hit().path == "runbook.md":
        row = w.list.currentIndex().row()
        qtbot.keyClick(w.search_bar.field, Qt.Key.Key_Down)
        assert w.list.currentIndex().row() == row + 1
    qtbot.wait_until(lambda: w.preview.hit is w.current_hit(), timeout=5000)
    assert w.preview.find_bar.isVisible() and w.preview.find_bar.count.text() == "not found"


def test_removing_a_source_asks_with_no_as_the_default_answer(qtbot, runbook_window):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    w = runbook_window
    panel = w.sources_panel
    panel.ask = panel._ask_user  # the real question box
    qtbot.wait_until(lambda: bool(panel.sources), timeout=10000)
    qtbot.keyClick(w, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    panel.table.selectRow(0)
    asked = []

    def press_enter():
        box = QApplication.activeModalWidget()
        asked.append(box.windowTitle() if box else None)
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(300, press_enter)
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert asked == ["Remove source?"]
    assert not panel.jobs.busy, "Enter kept the source: nothing is being removed"
    with qtbot.wait_signal(w.stats.ready, timeout=10000):
        w.stats.refresh()
    assert [s.name for s in panel.sources] == ["notes"]
