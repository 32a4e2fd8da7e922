"""#25 item 7 in the app: a folder a source indexes already is not added twice; the
window offers what the user can do instead (search in it, leave it out, replace)."""

from __future__ import annotations

import subprocess

from kenning.workspace import Workspace


def sources_now(window):
    with Workspace(window.store_path) as ws:
        return {s.name: s for s in ws.list_sources()}


def wait_for_jobs(qtbot, window):
    qtbot.wait_until(lambda: not window.sources_panel.jobs.busy, timeout=15000)


def test_a_folder_inside_a_source_offers_to_search_in_it_and_adds_nothing(qtbot, window, tmp_path):
    panel = window.sources_panel
    panel.choose = lambda title, text, choices: window.chosen.append((title, text, choices)) or 0
    with qtbot.wait_signal(window.search_service.results, timeout=15000):
        panel.add_folder(str(tmp_path / "notes" / "rust"))
    title, text, choices = window.chosen[-1]
    assert "inside the source “notes”" in text and choices == ["Search only in it"]
    assert window.search_bar.text == "source:notes path:rust/"
    assert all(h.path.startswith("rust/") for h in window.model.hits) and window.model.hits
    wait_for_jobs(qtbot, window)
    assert list(sources_now(window)) == ["notes"]


def test_clicking_add_folder_on_a_folder_inside_a_source_asks_and_the_click_on_the_answer_searches_it(
    qtbot, window, tmp_path, monkeypatch
):
    """The same, as a user does it: the Add folder… button, the folder dialog's answer,
    and a click on the offer in the real question box."""
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

    panel = window.sources_panel
    panel.choose = panel._choose  # the real question box
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path / "notes" / "rust"))
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # the Sources page
    asked = []

    def click_the_offer():
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        asked.append(f"{box.text()}\n{box.informativeText()}")  # the question, then its details
        offer = next(b for b in box.buttons() if b.text() == "Search only in it")
        qtbot.mouseClick(offer, Qt.MouseButton.LeftButton)

    QTimer.singleShot(300, click_the_offer)
    with qtbot.wait_signal(window.search_service.results, timeout=15000):
        qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    assert asked and "inside the source “notes”" in asked[0]
    assert window.search_bar.text == "source:notes path:rust/"
    assert window.model.hits and all(h.path.startswith("rust/") for h in window.model.hits)
    wait_for_jobs(qtbot, window)
    assert list(sources_now(window)) == ["notes"], "nothing was added twice"


def test_a_folder_holding_a_source_can_be_added_without_it(qtbot, window, tmp_path):
    parent = tmp_path
    (parent / "todo.md").write_text("# Todo\n\nwater the plants\n", encoding="utf-8")
    panel = window.sources_panel
    panel.choose = lambda title, text, choices: window.chosen.append((title, text, choices)) or 0
    with qtbot.wait_signal(panel.source_added, timeout=15000) as added:
        panel.add_folder(str(parent))
    assert "holds the source “notes”" in window.chosen[-1][1]
    assert added.args[0].exclude == ("notes/",)
    assert set(sources_now(window)) == {"notes", parent.name}


def test_a_repository_inside_a_folder_source_can_be_left_out_of_it_and_linked(qtbot, window, tmp_path):
    repo = tmp_path / "notes" / "python"
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    panel = window.sources_panel
    panel.choose = lambda title, text, choices: window.chosen.append((title, text, choices)) or 0
    with qtbot.wait_signal(panel.source_added, timeout=15000) as added:
        panel.link_repo(str(repo))
    assert added.args[0].kind == "git" and added.args[0].root == str(repo.resolve())
    assert sources_now(window)["notes"].exclude == ("python/",)


def test_cancel_adds_nothing(qtbot, window, tmp_path):
    window.sources_panel.add_folder(str(tmp_path / "notes" / "rust"))
    qtbot.wait_until(lambda: bool(window.chosen), timeout=15000)
    wait_for_jobs(qtbot, window)
    assert list(sources_now(window)) == ["notes"]
