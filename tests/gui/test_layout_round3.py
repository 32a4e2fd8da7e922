"""#25 items 10, 13, 15, 16, 19: what a new user saw at 900×600 and 1280×820, checked on the
real window (sizes as the user had them, clicks on the tag pane, keys typed)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel
from tests_gui_helpers import typed

from conftest import index_notes, make_window, wait_for_model
from docfiles import write_pdf

NOTES = {
    "notes/ops/TLS certificate renewal.md": "---\ntags: [ops, security]\n---\n# TLS certificate renewal\n\n"
    "Certificates are renewed by certbot every 60 days.\n\n## When renewal fails\n\n"
    + "The renewal job writes to the log; the HTTP-01 challenge may be blocked.\n"
    * 3,
    "notes/ops/Deploy checklist.md": "---\ntags: [ops, deploy]\n---\n# Deploy checklist\n\nRollback plan ready; "
    "certificate renewal checked.\n",
    "notes/meetings/2024-06-03 Planning.md": "---\ntags: [meeting]\n---\n# Planning\n\nCertificate renewal "
    "automation: Bo. Rollback drill next sprint.\n",
    "notes/todo/Ideas.md": "# Ideas\n\nA dashboard for certificates expiring soon.\n",
    "notes/databases/SQLite WAL.md": "---\ntags: [databases, engineering-practices]\n---\n# SQLite WAL\n\n"
    "Readers continue while a writer commits its renewal of pages.\n",
}


@pytest.fixture
def user_window(qtbot, tmp_path):
    w = make_window(qtbot, index_notes(tmp_path, NOTES))
    wait_for_model(qtbot, w)
    w.show()
    w.activateWindow()
    qtbot.wait_until(lambda: bool(w.page.tag_pane.counts), timeout=10000)
    yield w
    w.shutdown()


def test_related_notes_are_in_view_at_the_default_window_size(qtbot, user_window):
    w = user_window
    w.resize(1280, 820)
    typed(qtbot, w, "certificate renewal")
    qtbot.wait_until(lambda: len(w.page.related_notes) >= 3, timeout=10000)
    qtbot.wait(50)  # the split follows the new size on the next turn
    related = w.page.related
    viewport = related.parentWidget().parentWidget()  # the scroll area's viewport
    bottom = related.mapTo(viewport, QPoint(0, related.height())).y()
    assert bottom <= viewport.height(), "the related notes need no scrolling"
    row = related.visualItemRect(related.item(0)).height()
    assert related.viewport().height() >= 3 * row, "at least three related notes are visible"


def test_a_related_note_wider_than_the_list_is_elided_not_cut_off(qtbot, window_factory, tmp_path):
    """Seen under Xvfb at 1280 px: "…  ·  runbooks:adr/0007-connection-poolin", the line
    cut at the list's edge with nothing to say so; now it is elided within the list."""
    long_name = "notes/ops/load-balancers/certificate renewal for the internal load balancers of staging.md"
    notes = {**NOTES, long_name: "# Load balancer certificates\n\nRenewal of the internal certificates.\n"}
    w = window_factory(index_notes(tmp_path, notes))
    wait_for_model(qtbot, w)
    w.show()
    w.resize(1280, 820)
    typed(qtbot, w, "certificate renewal")
    qtbot.wait_until(lambda: len(w.page.related_notes) >= 2, timeout=10000)
    related = w.page.related
    painted = related.itemDelegate().painted
    painted.clear()
    related.viewport().update()
    qtbot.wait_until(lambda: len(painted) >= 2, timeout=5000)
    visible = related.viewport().width()
    metrics = related.fontMetrics()
    texts = [related.item(row).text() for row in range(related.count())]
    assert any(metrics.horizontalAdvance(t) > visible for t in texts), (visible, texts)
    for row, (width, text) in painted.items():
        assert width <= visible and metrics.horizontalAdvance(text) <= visible, (text, width, visible)
        if text != texts[row]:  # fitted: the title gave way first, the file name stays
            assert "…" in text and text.endswith(".md"), text
    assert related.horizontalScrollBar().maximum() == 0  # nothing to scroll to: the line is whole or elided


def test_on_a_tall_window_the_related_notes_take_the_spare_height(qtbot, user_window):
    """Seen under Xvfb at 1920x1080: a meaning-only hit has few bars, and the related notes
    stayed five lines tall above a blank band."""
    w = user_window
    w.resize(1920, 1080)
    w.search_bar.set_mode("vector")
    typed(qtbot, w, "certificate renewal")
    qtbot.wait_until(lambda: len(w.page.related_notes) >= 1, timeout=10000)
    qtbot.wait(0)  # the split follows the new size on the next turn
    related = w.page.related
    viewport = related.parentWidget().parentWidget()  # the scroll area's viewport
    bottom = related.mapTo(viewport, QPoint(0, related.height())).y()
    assert viewport.height() - bottom <= 12, "no blank band under the related notes"
    assert related.height() >= related.minimumHeight()


def test_at_900_by_600_tags_paths_and_the_preview_header_keep_what_matters(qtbot, user_window):
    w = user_window
    w.resize(900, 600)
    typed(qtbot, w, "certificate renewal")
    qtbot.wait_until(lambda: not w.delegate.behind, timeout=5000)
    pane = w.page.tag_pane
    assert not pane.list.horizontalScrollBar().isVisible(), "nothing of a tag's line is out of view"
    hit = w.current_hit()
    name = hit.path.rsplit("/", 1)[-1]
    drawn = w.delegate.locations[hit.chunk_id]
    # The folders and the source's name give way first; what is left of the file name
    # keeps its start and its extension ("not…–22" had neither).
    start = drawn.index(name[:6])
    assert drawn[start:].split(":", 1)[0].endswith(".md"), drawn
    assert f":{hit.line_start}" in drawn, drawn
    shown = QLabel.text(w.preview.header)  # what the elided label displays
    assert name in shown, f"the preview header keeps the file name: {shown!r}"


def test_at_900_px_no_listing_widens_the_window(qtbot, user_window):
    """Seen under Xvfb: after `tag:meeting` the preview's "no matches in file" asked for
    31 px more and the 900 px window grew to 922, past the screen's edge."""
    w = user_window
    w.resize(900, 600)
    for query in ("certificate renewal", "tag:meeting", "rollback tag:ops"):
        typed(qtbot, w, query)
        qtbot.wait(0)  # the layout's pending resize
        assert w.width() == 900, (query, w.width(), w.preview.position.text())
        shown, full = QLabel.text(w.preview.position), w.preview.position.text()
        assert shown == full or (shown.startswith("…") and full.endswith(shown[1:]) and " of " in shown), shown


def test_at_900_px_the_filter_only_explanation_reads_from_its_start(qtbot, user_window):
    """Seen under Xvfb: "Filters only, no wor…ments, newest first." (cut in the middle of
    the sentence, in a line that had the value column's width spare)."""
    from kenning.search.browse import FILTER_ONLY_ORDER

    w = user_window
    w.resize(900, 600)
    typed(qtbot, w, "tag:meeting")
    qtbot.wait_until(lambda: "listing" in w.breakdown.painted, timeout=5000)
    drawn = w.breakdown.painted["listing"]
    assert drawn == FILTER_ONLY_ORDER or FILTER_ONLY_ORDER.startswith(drawn.rstrip("…")), drawn
    assert drawn.startswith("Filters only, no words to rank by"), drawn


def test_clicking_a_tag_never_moves_the_tag_pane_under_the_pointer(qtbot, user_window):
    w = user_window
    typed(qtbot, w, "rollback")
    tags = w.page.tag_pane.list
    item = next(tags.item(i) for i in range(tags.count()) if tags.item(i).text().startswith("#ops"))
    spot = tags.visualItemRect(item).center()
    before = tags.viewport().mapToGlobal(spot)
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        qtbot.mouseClick(tags.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    assert w.search_bar.text == "rollback tag:ops"
    assert tags.viewport().mapToGlobal(spot) == before, "the Filters row appearing moved the pane"
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        qtbot.mouseClick(tags.viewport(), Qt.MouseButton.LeftButton, pos=spot)  # the same spot again
    assert w.search_bar.text == "rollback", "the second click dropped the filter"


def test_the_tag_pane_marks_the_tags_the_query_filters_by(qtbot, user_window):
    w = user_window
    pane = w.page.tag_pane

    def marked():
        return {
            pane.list.item(i).data(Qt.ItemDataRole.UserRole + 1)
            for i in range(pane.list.count())
            if pane.list.item(i).isSelected()
        }

    typed(qtbot, w, "tag:meeting")
    assert marked() == {"meeting"}
    typed(qtbot, w, "rollback tag:ops tag:deploy")
    assert marked() == {"ops", "deploy"}
    typed(qtbot, w, "rollback")
    assert marked() == set()


def test_a_pdfs_text_is_shown_as_prose_not_coloured_as_code(qtbot, tmp_path):
    """Items 15 and 9: a PDF is prose, and its row is titled by its first line, not by the
    generator's "Enscript Output" in its metadata."""
    folder = tmp_path / "docs"
    folder.mkdir()
    write_pdf(
        folder / "runbook.pdf",
        [["Disaster recovery runbook", "Restore from the snapshot and for the rest"]],
        title="Enscript Output",
    )
    w = make_window(qtbot, index_notes(tmp_path / "x", {"a.md": "# A\n\nalpha\n"}))
    try:
        w.show()
        from kenning.workspace import Workspace

        with Workspace(w.store_path) as ws:
            ws.add_folder(folder, name="docs")
            ws.index(embed=False)
        w.search_bar.set_mode("lexical")
        typed(qtbot, w, "snapshot")
        assert w.current_hit().path == "runbook.pdf"
        assert w.model.index(0, 0).data(Qt.ItemDataRole.DisplayRole) == "Disaster recovery runbook"
        assert w.preview._highlighter is None, "no code colours on a PDF's words"
        assert not w.preview.editor.numbers, "no line numbers either"
    finally:
        w.shutdown()


def test_semantic_mode_says_meaning_only_only_where_no_query_word_shows(qtbot, user_window):
    from kenning.gui.results import row_tag

    w = user_window
    w.search_bar.set_mode("vector")
    typed(qtbot, w, "certificate renewal")
    with_words = [h for h in w.result.hits if h.spans]
    assert with_words, "some snippets show the query's words"
    assert all(row_tag(h) == "" for h in with_words)
    assert all(row_tag(h) == "meaning only" for h in w.result.hits if not h.spans)


def test_a_fitted_related_line_keeps_its_store_and_path_while_the_title_gives_way(qapp):
    """Seen under Xvfb: the middle elision of the whole line took "[kb]" out of
    "ADR 0007: PgBouncer in transaction…] runbooks:adr/0007-connection-pooling.md"."""
    from PySide6.QtGui import QFontMetrics

    from kenning.gui.search_page import RELATED_SEPARATOR, fit_related

    metrics = QFontMetrics(qapp.font())
    what = "0.51   ADR 0007: PgBouncer in transaction mode for every primary"
    where = "[kb] runbooks:adr/0007-connection-pooling.md"
    whole = metrics.horizontalAdvance(f"{what}{RELATED_SEPARATOR}{where}")
    for width in range(200, whole + 40, 7):  # a related list is never narrower
        line = fit_related(what, where, metrics, width)
        assert metrics.horizontalAdvance(line) <= width, (width, line)
        if metrics.horizontalAdvance(f"{RELATED_SEPARATOR}{where}") <= width * 2 // 3:
            assert line.endswith(f"{RELATED_SEPARATOR}{where}"), (width, line)
        assert line.startswith("0.51"), (width, line)
