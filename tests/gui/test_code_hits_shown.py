"""A code hit as the window shows it, seen under Xvfb on Kenning's own repository.

- The preview shows the hit's lines however many lines above it wrap: a hit at lines
  706–714 of a Python file showed lines 654–662 (a wrapping editor's scroll bar counts the
  lines on screen, and the preview set it from the file's line number).
- A narrow row keeps the symbol of a code chunk's title, giving up its folders first.
"""

from __future__ import annotations

from conftest import index_notes, wait_for_model

LONG = "    value = compute_the_total_of_every_invoice_in_the_ledger(first_argument, second_argument, third_argument)  # why\n"
CODE = "".join(LONG for _ in range(240)) + "\n\ndef frobnicate_widgets(count):\n    return count * 2\n"


def _typed_in_a_window(qtbot, window_factory, tmp_path, files: dict[str, str], size: tuple[int, int], query: str):
    """A window of that size over `files`, the query typed into its search box."""
    w = window_factory(index_notes(tmp_path, files))
    wait_for_model(qtbot, w)
    w.show()
    w.resize(*size)
    field = w.search_bar.field
    field.setFocus()
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        qtbot.keyClicks(field, query)
    return w


def test_the_preview_scrolls_to_the_hit_below_many_wrapped_lines(qtbot, window_factory, tmp_path):
    w = _typed_in_a_window(qtbot, window_factory, tmp_path, {"ledger.py": CODE}, (1100, 760), "frobnicate_widgets")
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


def test_a_code_hit_s_title_keeps_its_symbol_when_the_row_is_narrow(qtbot, window_factory, tmp_path):
    """A code chunk's title is its path and its symbol; the row read
    "app/kenning/storage/postgres/sto…" and lost the symbol, which the location line
    below did not have either."""
    path = "app/kenning/storage/postgres/store.py"
    code = "class PostgresStore:\n    def release_indexing_locks(self):\n        return self.unlock_everything()\n"
    w = _typed_in_a_window(qtbot, window_factory, tmp_path, {path: code}, (1000, 700), "release_indexing_locks")
    hit = w.current_hit() or w.model.hits[0]
    assert hit.title.startswith(f"{path}: "), hit.title
    qtbot.wait_until(lambda: hit.chunk_id in w.delegate.titles, timeout=5000)
    drawn = w.delegate.titles[hit.chunk_id]
    assert drawn != hit.title, "the row is narrower than the title"
    assert drawn.startswith("store.py: ") and "PostgresStore" in drawn, drawn


def test_a_related_code_note_names_its_path_once(qtbot, window_factory, tmp_path):
    """A related note's line ends with its source and path; its code title said the path
    again in front ("app/kenning/storage/connection.py:… · repo:app/kenning/storage/connection.py")."""
    files = {
        "app/storage/postgres/store.py": "class PostgresStore:\n    def release_indexing_locks(self):\n        pass\n",
        "app/storage/postgres/connection.py": "class PgConnection:\n    def release_indexing_locks(self):\n        pass\n",
    }
    w = _typed_in_a_window(qtbot, window_factory, tmp_path, files, (1200, 800), "release_indexing_locks")
    qtbot.wait_until(lambda: len(w.page.related_notes) >= 1, timeout=10000)
    note = w.page.related_notes[0]
    assert note.title.startswith(f"{note.path}: "), note.title
    line = w.page.related.item(0).text()
    name = note.path.rpartition("/")[2]
    assert line.count(note.path) == 1 and f"   {name}: " in line, line
