"""A question the app asks says its question in the box, not only in the window title
(seen under Xvfb: a box with a repository's path, its last commit and "Yes / No")."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from gitutil import git, make_repo, write


def _answer_the_box(qtbot, seen: list, button: QMessageBox.StandardButton) -> QTimer:
    """Until a question box is up: note what it says, then click `button` as a user would."""

    def look() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.isVisible():
            timer.stop()
            seen.append((box.text(), box.informativeText()))
            qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)

    timer = QTimer(interval=50, timeout=look)
    timer.start()
    return timer


def test_linking_a_repository_asks_its_question_in_the_box(qtbot, window, tmp_path, monkeypatch):
    repo = make_repo(tmp_path)
    write(repo, "README.md", "# Runbooks\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Runbooks: first")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(repo))
    panel = window.sources_panel
    panel.ask = panel._ask_user  # the real question (the fixture answers Yes to every one)
    seen: list = []
    timer = _answer_the_box(qtbot, seen, QMessageBox.StandardButton.No)
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    qtbot.mouseClick(panel.link_button, Qt.MouseButton.LeftButton)
    qtbot.wait_until(lambda: bool(seen), timeout=10000)
    timer.stop()
    question, details = seen[0]
    assert question == "Link this repository?"
    assert str(repo) in details and "Runbooks: first" in details
    assert all(s.root != str(repo) for s in window.workspace.list_sources()), "No links nothing"
