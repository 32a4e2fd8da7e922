"""#25 item 2: related notes open; no exception is ever only printed to stderr.

Every exception nobody caught, on the UI thread (a slot, an event handler) or on a
worker (a pool task, a thread), reaches kenning.log with its traceback and the window
as one line of words.  The related-notes tests press the keys and click the rows.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from test_open_in_editor import fake_editor

from kenning.gui.workers import _Task
from kenning.workspace import logs


def flushed_log(path):
    for handler in logging.getLogger("kenning").handlers:
        handler.flush()
    return path.read_text(encoding="utf-8") if path.exists() else ""


def related_shown(qtbot, window, query="borrow checker"):
    window.search_bar.field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, query)
    qtbot.wait_until(lambda: bool(window.page.related_notes), timeout=10000)
    return window.page.related


@pytest.mark.parametrize("how", ["enter", "double-click"])
def test_a_related_note_opens_in_the_editor(qtbot, window, tmp_path, how):
    script, record = fake_editor(tmp_path)
    window.settings = replace(window.settings, editor=f"{script} {{file}}:{{line}}")
    related = related_shown(qtbot, window)
    note = window.page.related_notes[0]
    rect = related.visualItemRect(related.item(0))
    if how == "enter":
        qtbot.mouseClick(related.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.keyClick(related, Qt.Key.Key_Return)
    else:  # a double-click is a press and release, then QTest's double-click event
        qtbot.mouseClick(related.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(related.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    try:
        qtbot.wait_until(record.exists, timeout=30000)  # a spawned Python: slow to start under load
    except Exception as exc:
        state = (window.problems, window.message.text(), window.page.related_notes[:1], related.currentRow())
        raise AssertionError(f"the editor never ran: {state}") from exc
    assert record.read_text() == f"{note.abs_path}:{note.line_start}"
    assert not window.problems


@pytest.mark.qt_no_exception_capture  # the app's own hook is under test: pytest-qt's would replace it
def test_an_exception_in_a_ui_slot_is_logged_with_its_traceback_and_shown(qtbot, window, monkeypatch):
    path = logs.setup_logging()

    def broken(*_a, **_k):
        raise ValueError("the opener broke on purpose")

    monkeypatch.setattr(window.opener, "open_hit", broken)
    window.search_bar.field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, "borrow checker")
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Return)
    qtbot.wait_until(lambda: "the opener broke on purpose" in window.message.text(), timeout=5000)
    shown = window.message.text()
    assert "\n" not in shown and shown.startswith("Something went wrong inside Kenning (ValueError")
    assert str(path) in shown, "the message says where the details are"
    text = flushed_log(path)
    assert "Traceback (most recent call last)" in text and "ValueError: the opener broke on purpose" in text
    assert "in broken" in text, "the traceback reaches the frame that raised"


@pytest.mark.qt_no_exception_capture
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # pytest's hook hears it too
def test_an_exception_in_a_worker_is_logged_with_its_traceback_and_shown(qtbot, window):
    path = logs.setup_logging()

    def pool_task():
        raise KeyError("a worker broke on purpose")

    window.search_service.pool.start(_Task(pool_task))
    qtbot.wait_until(lambda: "a worker broke on purpose" in window.message.text(), timeout=5000)
    assert window.message.text().startswith("Something went wrong inside Kenning (KeyError")
    assert "in pool_task" in flushed_log(path)

    def thread_body():
        raise LookupError("a thread broke on purpose")

    thread = threading.Thread(target=thread_body, name="probe")
    thread.start()
    thread.join()
    qtbot.wait_until(lambda: "a thread broke on purpose" in window.message.text(), timeout=5000)
    assert "LookupError: a thread broke on purpose" in flushed_log(path)


def test_the_window_gives_the_hook_back_when_it_closes(qtbot, indexed_store):
    import sys

    from conftest import make_window

    before = sys.excepthook, threading.excepthook
    w = make_window(qtbot, indexed_store)
    assert sys.excepthook is not before[0]
    w.close()
    assert (sys.excepthook, threading.excepthook) == before
