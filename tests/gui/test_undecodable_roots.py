"""#24 case 23 in the app: a source whose folder's path is not valid UTF-8 is shown with
the byte as `\\xNN` (Qt would silently drop it) and is kept live by the app's watcher."""

from __future__ import annotations

import os
from pathlib import Path

from tests_gui_helpers import write_notes

from conftest import make_window
from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.fusion import DEFAULT_FUSION
from kenning.storage import open_store
from kenning.storage.settings import set_setting

SHOWN = "caf\\xe9"


def _odd_store(tmp_path, files=None):
    raw = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(raw)
    folder = write_notes(Path(os.fsdecode(raw)), files or {"a.md": "# Alpha\n\nA quokka on an island.\n"})
    store_path = tmp_path / "store" / "kenning.db"
    store = open_store(store_path)
    set_setting(store, "embedding_model", "fake")
    add_source(store, folder)
    Indexer(store, FakeEmbedder).run()
    store.close()
    return store_path, raw


def test_the_sources_page_shows_such_a_root_escaped_and_live_updates_reach_it(qtbot, tmp_path):
    from PySide6.QtCore import Qt

    store_path, raw = _odd_store(tmp_path)
    window = make_window(qtbot, store_path, watch=True)
    window.show()
    try:
        with qtbot.wait_signal(window.watcher.ready, timeout=20000):
            pass  # the watching process is up and its watches are in place
        qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # the Sources page
        panel = window.sources_panel
        qtbot.wait_until(lambda: panel.table.rowCount() == 1, timeout=10000)
        shown_root = f"{os.fsdecode(os.path.dirname(raw))}/{SHOWN}"
        assert panel.table.item(0, 0).text() == SHOWN
        assert panel.table.item(0, 2).text() == shown_root
        assert panel.detail_info.text().startswith(shown_root + "\n")
        qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)  # back to search
        window.search_bar.set_mode("lexical")
        with open(raw + b"/n\xe9.md", "wb") as f:
            f.write(b"# Capybara\n\nA capybara by the river.\n")
        with qtbot.wait_signal(window.search_service.results, timeout=10000):
            window.search_bar.set_text("capybara")
        qtbot.wait_until(
            lambda: (
                window.result is not None
                and window.result.layer == DEFAULT_FUSION
                and [(h.source, h.path) for h in window.model.hits] == [(SHOWN, "n\\xe9.md")]
            ),
            timeout=15000,
        )
    finally:
        window.shutdown()


def test_add_folder_adds_the_folder_the_dialog_names_without_its_undecodable_byte(
    qtbot, empty_window, tmp_path, monkeypatch
):
    """Qt's folder dialog drops each byte of a name that is not UTF-8 (it offers
    b"caf\\xe9" as "caf"): the folder meant is found among its siblings and added."""
    from PySide6.QtCore import QDir, Qt
    from PySide6.QtWidgets import QFileDialog

    raw = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(raw)
    write_notes(Path(os.fsdecode(raw)), {"a.md": "# Alpha\n\nA quokka on an island.\n"})
    offered = [n for n in QDir(str(tmp_path)).entryList() if n.startswith("caf")]
    assert offered == ["caf"]  # what the dialog shows and returns
    window = empty_window
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: f"{tmp_path}/{offered[0]}")
    panel = window.sources_panel
    qtbot.mouseClick(window.sources_tab, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.wait_until(lambda: panel.table.rowCount() == 1 and not panel.jobs.busy, timeout=15000)
    assert window.told == []
    assert panel.table.item(0, 2).text() == f"{tmp_path}/{SHOWN}"
    store = open_store(window.store_path)
    try:
        assert [os.fsencode(s.root) for s in store.sources.list()] == [raw]
    finally:
        store.close()


def test_the_status_bar_names_such_a_folder_escaped_when_the_live_index_keeps_it(qtbot, tmp_path):
    """The folder emptied under the live index (its disk unmounted, say): nothing is
    removed and the status bar says why, naming the folder with its byte as \\xNN."""
    store_path, raw = _odd_store(tmp_path, {"a.md": "# A\n\nquokka\n", "b.md": "# B\n\nwombat\n"})
    window = make_window(qtbot, store_path, watch=True)
    window.show()
    try:
        with qtbot.wait_signal(window.watcher.ready, timeout=20000):
            pass
        away = tmp_path / "away"
        away.mkdir()
        for name in (b"a.md", b"b.md"):
            os.rename(raw + b"/" + name, os.fsencode(away) + b"/" + name)
        qtbot.wait_until(lambda: "is empty now" in window.message.text(), timeout=15000)
        assert f"/{SHOWN} is empty now" in window.message.text()
        store = open_store(store_path)
        try:
            assert store.stats.per_source() and sum(s.documents for s in store.stats.per_source().values()) == 2
        finally:
            store.close()
    finally:
        window.shutdown()
