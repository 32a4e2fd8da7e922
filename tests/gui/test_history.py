"""#14 feature 9: recent searches per store — drop-down, Up in an empty field, clearable."""

from __future__ import annotations

from PySide6.QtCore import Qt

from kenning.gui.history import MAX_ENTRIES, SearchHistory


def test_history_is_most_recent_first_without_duplicates():
    h = SearchHistory()
    for q in ["wal", "borrow  checker", "wal"]:
        h.add(q)
    assert h.entries == ["wal", "borrow checker"]
    for i in range(MAX_ENTRIES + 5):
        h.add(f"q{i}")
    assert len(h.entries) == MAX_ENTRIES and h.last == f"q{MAX_ENTRIES + 4}"


def settle(qtbot, window, text):
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text(text)
    qtbot.wait_until(lambda: window.history.last == text, timeout=4000)


def test_settled_searches_are_kept_per_store_and_recalled_with_up(qtbot, indexed_store, window_factory):
    first = window_factory(indexed_store)
    first.show()
    settle(qtbot, first, "borrow checker")
    settle(qtbot, first, "event loop")
    actions = [a.text() for a in first.search_bar.history_menu.actions() if a.text()]
    assert actions[:2] == ["event loop", "borrow checker"] and "Clear history" in actions
    first.close()
    second = window_factory(indexed_store)
    second.show()
    assert second.history.entries[:2] == ["event loop", "borrow checker"]
    second.search_bar.field.setFocus()
    with qtbot.wait_signal(second.search_service.results, timeout=10000):
        qtbot.keyClick(second.search_bar.field, Qt.Key.Key_Up)  # empty field: the last search comes back
    assert second.search_bar.text == "event loop"
    second.clear_history()
    assert second.history.entries == []
    assert [a.text() for a in second.search_bar.history_menu.actions()] == ["No recent searches"]
