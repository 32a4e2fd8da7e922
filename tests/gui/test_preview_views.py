"""#14 feature 11: markdown rendered (toggle to plain), code with line numbers and colours, Ctrl+F."""

from __future__ import annotations

from PySide6.QtCore import Qt

from kenning.gui.preview import strip_front_matter


def select(qtbot, window, text, mode="lexical"):
    window.search_bar.set_mode(mode)
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text(text)
    qtbot.wait_until(lambda: window.preview.hit is window.current_hit(), timeout=3000)
    return window.preview


def test_markdown_is_rendered_with_matches_marked_and_a_toggle_to_plain(qtbot, window):
    preview = select(qtbot, window, "borrow checker")
    assert preview.render_button.isVisible() and preview.rendered_shown()
    assert preview.views.currentWidget() is preview.rendered
    rendered = preview.rendered.document().toPlainText()
    assert "# Borrow checker" not in rendered and "Borrow checker" in rendered  # a heading, not markup
    marked = {rendered[s:e].lower() for s, e in preview.rendered_matches}
    assert marked == {"borrow", "checker"}
    preview.render_button.click()
    assert preview.views.currentWidget() is preview.editor
    assert preview.editor.toPlainText().startswith("# Borrow checker")


def test_code_gets_line_numbers_and_colours_prose_does_not(qtbot, window):
    preview = select(qtbot, window, "retry_with_backoff")
    assert window.current_hit().path == "retry.py"
    assert not preview.render_button.isVisible()
    assert preview.editor.numbers and preview.editor.gutter_width() > 0
    block = preview.editor.document().firstBlock()  # "def retry_with_backoff(...)"
    formats = block.layout().formats()
    assert any(f.start == 0 and f.length == 3 for f in formats), "`def` is coloured as a keyword"
    preview = select(qtbot, window, "borrow checker")
    assert not preview.editor.numbers and preview.editor.gutter_width() == 0


def test_ctrl_f_finds_in_the_preview(qtbot, window):
    preview = select(qtbot, window, "event loop")
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert preview.find_bar.isVisible()
    qtbot.keyClicks(preview.find_bar.field, "coroutines")
    view = preview.current_view()
    assert view.textCursor().selectedText().lower() == "coroutines"
    assert preview.find_bar.count.text() == "1 found"
    preview.find_bar.field.setText("zzznothing")
    assert preview.find_bar.count.text() == "not found"
    qtbot.keyClick(preview.find_bar.field, Qt.Key.Key_Escape)
    assert not preview.find_bar.isVisible()


def test_front_matter_is_not_rendered_as_prose():
    assert strip_front_matter("---\ntitle: x\ntags: [a]\n---\n# Body\n") == "# Body\n"
    assert strip_front_matter("# No front matter\n") == "# No front matter\n"


def test_rendered_marks_are_whole_words_unless_only_a_substring_matched():
    from kenning.gui.preview import rendered_marks

    text = "A block holds the lock; RateLimiter waits."
    marks = [text[s:e] for s, e in rendered_marks(text, ["lock", "RateLimi"])]
    assert marks == ["lock", "RateLimi"]


def test_big_files_are_shown_plain_so_the_window_never_freezes(qtbot, window, tmp_path):
    from dataclasses import replace

    from kenning.gui.preview import MAX_DECORATED_CHARS

    preview = select(qtbot, window, "retry_with_backoff")
    big = tmp_path / "big.py"
    big.write_text("def f():\n    return 1\n" * (MAX_DECORATED_CHARS // 20), encoding="utf-8")
    hit = replace(window.current_hit(), abs_path=str(big), path="big.py", root=str(tmp_path))
    preview.set_hit(hit, "f")
    assert preview._highlighter is None and preview.editor.numbers
