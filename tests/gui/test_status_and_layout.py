"""#14 bugs 6-7: the window fits the screen, the status bar tells one story, dialogs are finished."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QTableWidget

from kenning.core.progress import CancelToken, Progress
from kenning.core.types import EmbedReport, IndexReport, SkippedFile, Source
from kenning.embedding import FakeEmbedder
from kenning.gui.sources_panel import readable_detail, readable_size
from kenning.gui.status import run_summary
from kenning.gui.window_state import first_size, fitted
from kenning.ingest.embedphase import embed_pending
from kenning.ingest.indexer import IndexRun


def test_first_size_fits_any_screen_in_device_independent_pixels():
    # QT_SCALE_FACTOR=2 on 1600×1000: Qt reports an 800×500 available area.
    assert first_size(QRect(0, 0, 800, 470)) == (720, 423)
    assert first_size(QRect(0, 0, 2560, 1400)) == (1280, 820)


def test_saved_geometry_from_a_bigger_screen_is_brought_back_on_screen():
    assert fitted(QRect(900, 700, 2560, 1640), QRect(0, 0, 800, 500)) == QRect(0, 0, 800, 500)
    assert fitted(QRect(-50, 10, 300, 200), QRect(0, 0, 800, 500)) == QRect(0, 10, 300, 200)


def test_window_opens_within_the_available_screen(qtbot, window):
    available = window.screen().availableGeometry()
    assert available.contains(window.frameGeometry()) or available.contains(window.geometry())


def test_one_match_is_one_match(qtbot, window):
    window.search_bar.set_mode("lexical")
    with qtbot.wait_signals([window.search_service.results, window.search_service.totals], timeout=10000):
        window.search_bar.set_text("checkpoints")
    assert window.summary.text().startswith("1 match in 1 file ·")


def test_run_summary_counts_agree_with_their_nouns():
    run = IndexRun(reports=[IndexReport("notes", added=1, errors=["x"])], embedding=EmbedReport(embedded=1))
    assert run_summary(run) == "Index up to date: 1 file new or changed, 0 removed, 1 chunk embedded, 1 error"


def test_embedding_progress_names_files_not_chunk_text(store, notes):
    from kenning_testing import index_folder, write_files

    write_files(notes, {"a.md": "# A\n\nalpha text\n", "sub/b.py": "def beta():\n    return 1\n"})
    index_folder(store, notes)
    seen: list[Progress] = []
    embed_pending(store, FakeEmbedder(), seen.append, CancelToken())
    assert seen and all(p.current.endswith((".md", ".py", ".txt")) for p in seen), [p.current for p in seen]


def test_readable_sizes():
    assert readable_size(3_565_158) == "3.4 MB"
    assert readable_detail("3565158 bytes > cap 2097152") == "3.4 MB > 2 MB cap"
    assert readable_detail("more than 2097152 bytes") == "more than the 2 MB cap"


def test_skipped_dialog_has_close_empty_state_and_readable_sizes(qtbot, window):
    panel = window.sources_panel
    source = Source(1, "folder", "/notes", "notes")
    dialog = panel._skipped_dialog(
        source, [("notes", SkippedFile("big.pdf", "too-large", "3565158 bytes > cap 2097152"))]
    )
    table = dialog.findChild(QTableWidget)
    assert table.item(0, 2).text() == "3.4 MB > 2 MB cap" and table.item(0, 1).text() == "too large"
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons.button(QDialogButtonBox.StandardButton.Close) is not None
    buttons.button(QDialogButtonBox.StandardButton.Close).click()
    assert not dialog.isVisible()
    empty = panel._skipped_dialog(source, [])
    assert empty.findChild(QTableWidget) is None
    assert any("Nothing skipped" in label.text() for label in empty.findChildren(QLabel))
    empty.close()


def test_buttons_need_a_selection_and_matches(qtbot, window):
    preview = window.preview
    assert not preview.open_button.isEnabled() and not preview.next_button.isEnabled()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text("borrow checker")
    qtbot.wait_until(lambda: preview.hit is not None, timeout=3000)
    assert preview.open_button.isEnabled() and preview.next_button.isEnabled()


def test_a_finished_run_never_says_up_to_date_while_another_follows(qtbot, window):
    window.say("Index up to date: 3 files new or changed, 0 removed", kind="index")
    window._index_started()
    assert window.message.text() == ""  # the old summary does not sit beside the new progress
    window.indexer._queued = None  # a run is queued behind this one
    window._index_finished(IndexRun(reports=[IndexReport("notes", added=1)]), "")
    window.indexer._queued = False
    assert "up to date" not in window.message.text()


def test_a_long_summary_or_path_never_widens_the_window_past_900_px(qtbot, tmp_path):
    from conftest import index_notes, make_window, wait_for_model

    deep = "a-rather-long-folder-name/" * 4 + "with-a-long-note-name-about-rollbacks.md"
    files = {f"ops/run-{i:02}.md": f"# Run {i}\n\nrollback {i}\n" for i in range(30)}
    files[deep] = "# Deep\n\nrollback drill\n"
    w = make_window(qtbot, index_notes(tmp_path, files))
    wait_for_model(qtbot, w)
    w.resize(900, 600)
    w.show()
    try:
        w.search_bar.set_mode("vector")  # the longest summary: "… by meaning (cosine ≥ 0.30) in … (best 20 shown)"
        with qtbot.wait_signals([w.search_service.results, w.search_service.totals], timeout=10000):
            w.search_bar.set_text("rollback")
        w.select_row(next(i for i, r in enumerate(w.model.rows) if r.hit.path == deep))
        qtbot.wait_until(lambda: "by meaning" in w.summary.text(), timeout=5000)
        assert w.width() <= 900
        assert w.page.main_split.sizes()[1] >= 300  # the result list keeps a usable width
    finally:
        w.shutdown()
