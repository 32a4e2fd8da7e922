"""Selecting a hit shows its lines in the preview, however many lines above it wrap.

Seen under Xvfb on Kenning's own repository: the preview of a hit at lines 706–714 of a
Python file showed lines 654–662; the scroll bar of a wrapping editor counts the lines
on screen, and the preview set it from the file's line number."""

from __future__ import annotations

from PySide6.QtCore import Qt

from conftest import index_notes, make_window, wait_for_model

LONG = "    value = compute_the_total_of_every_invoice_in_the_ledger(first_argument, second_argument, third_argument)  # why\n"
CODE = "".join(LONG for _ in range(240)) + "\n\ndef frobnicate_widgets(count):\n    return count * 2\n"


def test_the_preview_scrolls_to_the_hit_below_many_wrapped_lines(qtbot, tmp_path):
    w = make_window(qtbot, index_notes(tmp_path, {"ledger.py": CODE}))
    wait_for_model(qtbot, w)
    w.show()
    try:
        w.resize(1100, 760)
        field = w.search_bar.field
        field.setFocus()
        with qtbot.wait_signal(w.search_service.results, timeout=10000):
            qtbot.keyClicks(field, "frobnicate_widgets")
        qtbot.wait_until(lambda: w.preview.hit is w.current_hit() and w.current_hit() is not None, timeout=5000)
        editor = w.preview.editor
        qtbot.wait(50)  # the preview's layout settles on the next turn
        hit = w.current_hit()
        assert hit.line_start > 200, hit.line_start
        block = editor.document().findBlockByNumber(hit.line_start - 1)
        assert editor.document().findBlockByNumber(0).layout().lineCount() > 1, "the long lines wrap"
        top = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).top()
        assert 0 <= top < editor.viewport().height(), (top, editor.viewport().height())
        assert editor.lineWrapMode() != editor.LineWrapMode.NoWrap
    finally:
        w.shutdown()
