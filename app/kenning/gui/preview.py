"""The whole document of the selected hit, matched words highlighted, next/previous match.

Markdown is shown rendered (a toggle goes back to the plain text, where the hit's
lines are banded), code with line numbers and colours; Ctrl+F finds in either view.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QStackedWidget,
    QTextBrowser,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kenning.core.confine import read_source_file
from kenning.core.formats import extracted_kind
from kenning.core.fsnames import shown
from kenning.core.types import Hit, SearchResult
from kenning.gui.preview_views import CodeHighlighter, CodeView, ElidedLabel, FindBar
from kenning.gui.style import mono_font, theme
from kenning.search.highlight import Analyzer, Highlighter, match_terms
from kenning.search.query import parse_query
from kenning.workspace.documents import code_language

MAX_PREVIEW_BYTES = 4 * 1024 * 1024
MAX_DECORATED_CHARS = 200_000  # larger files: no syntax colours, no rendered markdown
MAX_MARKS = 3000  # beyond this, extra selections cost more than they help
PROSE_EXTS = {".md", ".markdown", ".txt", ".rst", ".org", ".adoc", ""}


def copy_path(path: str) -> None:
    # A byte that is not UTF-8 is copied as the text \xNN (as shown): Qt would drop it.
    QGuiApplication.clipboard().setText(shown(path))


def read_document(hit: Hit, extracted_text: Callable[[Hit], str | None] | None = None) -> tuple[str, str]:
    """(text, note): the file as it is now, or the indexed chunk if it is gone.

    A PDF, notebook, Office file or mail shows the text Kenning extracted from it (as
    indexed: the hit's lines refer to it), never its raw bytes.
    """
    text = extracted_text(hit) if extracted_text is not None else None
    if text is not None:
        return (text, "") if text else (hit.text, "Showing the indexed chunk.")
    if hit.location:  # extracted, but no way to read the index here
        return hit.text, "Showing the indexed chunk."
    try:
        # Confined as the indexer reads: a symlink swapped in since indexing, or a crafted
        # stored path, never shows a file from outside the source.
        raw = read_source_file(hit.root, hit.path, MAX_PREVIEW_BYTES)
    except OSError as exc:
        return hit.text, f"File unavailable ({exc.strerror}); showing the indexed chunk."
    return raw.decode("utf-8", errors="replace"), ""


MARKDOWN_EXTS = {".md", ".markdown"}


def is_markdown(hit: Hit) -> bool:
    return Path(hit.path).suffix.lower() in MARKDOWN_EXTS


def strip_front_matter(text: str) -> str:
    """The note without its YAML front matter (shown as metadata elsewhere, not as prose)."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end >= 0:
            return text[text.find("\n", end + 1) + 1 :] if text.find("\n", end + 1) >= 0 else ""
    return text


def _occurrences(text: str, words: list[str], whole_words: bool = False) -> list[tuple[int, int]]:
    """Case-insensitive (start, end) of each word in text, sorted, without overlaps."""
    words = [w for w in words if w]
    if not words:
        return []
    alternatives = "|".join(map(re.escape, words))
    if whole_words:
        alternatives = r"(?<![^\W_])(?:" + alternatives + r")(?![^\W_])"
    return [(m.start(), m.end()) for m in re.finditer(alternatives, text, re.IGNORECASE)]


def rendered_marks(text: str, words: list[str]) -> list[tuple[int, int]]:
    """Matched words found again in the rendered text: whole words ("lock" never lights up
    inside "block"), except a word matched only inside longer ones (a substring hit)."""
    found = _occurrences(text, words, whole_words=True)
    seen = {text[s:e].lower() for s, e in found}
    partial = [w for w in words if w.lower() not in seen]
    return sorted(set(found) | set(_occurrences(text, partial)))


def is_code(hit: Hit) -> bool:
    """Shown with line numbers and code colours: never the text of a PDF, a web page, a
    notebook or a mail ("and", "for", "in" came out purple)."""
    if extracted_kind(hit.path) or hit.location:
        return False
    return hit.kind == "code" or Path(hit.path).suffix.lower() not in PROSE_EXTS


class PreviewPane(QWidget):
    open_requested = Signal(bool)  # folder: the containing folder rather than the file

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.hit: Hit | None = None
        # Reads an extracted document's indexed text (set by the window: it owns the store).
        self.extracted_text: Callable[[Hit], str | None] | None = None
        # The store's word analyzer, so the preview marks the words its index finds (set by the window).
        self.analyzer: Callable[[], Analyzer] | None = None
        self.matches: list[tuple[int, int]] = []
        self.current = -1
        self.editor = CodeView(self)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.rendered = QTextBrowser(self, openExternalLinks=True)
        self.views = QStackedWidget(self)
        self.views.addWidget(self.editor)
        self.views.addWidget(self.rendered)
        self.render_button = QToolButton(self, text="Rendered", checkable=True, checked=True)
        self.render_button.setToolTip("Markdown rendered; uncheck for the plain text")
        self.render_button.toggled.connect(lambda _: self._show_view())
        self.find_bar = FindBar(self)
        self.find_bar.find_requested.connect(self.find)
        self.find_bar.closed.connect(self._find_closed)
        self._highlighter: CodeHighlighter | None = None
        self.rendered_matches: list[tuple[int, int]] = []
        self.header = ElidedLabel(self)  # a long path never widens the window past a 900 px screen
        self.header.setObjectName("muted")
        # Cut at its start when narrow ("…5 of 8"): its own text widened a 900 px window.
        self.position = ElidedLabel(self, mode=Qt.TextElideMode.ElideLeft)
        self.position.setObjectName("muted")
        self.prev_button = QToolButton(self, text="▲ Prev", toolTip="Previous match (Shift+F3)")
        self.next_button = QToolButton(self, text="▼ Next", toolTip="Next match (F3)")
        self.open_button = QToolButton(self, text="Open", toolTip="Open at this line in your editor (Enter)")
        self.folder_button = QToolButton(self, text="Folder", toolTip="Open the containing folder (Ctrl+Enter)")
        self.copy_button = QToolButton(self, text="Copy path", toolTip="Copy the file's path (Ctrl+Shift+C)")
        self._layout()
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.open_button.clicked.connect(lambda: self.open_requested.emit(False))
        self.folder_button.clicked.connect(lambda: self.open_requested.emit(True))
        self.copy_button.clicked.connect(lambda: self.hit and copy_path(self.hit.abs_path))
        self.set_hit(None, "")

    def _layout(self) -> None:
        # The path has a line of its own: beside six buttons it had no room left at 900 px.
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.position, 1)
        for button in (
            self.render_button,
            self.prev_button,
            self.next_button,
            self.open_button,
            self.folder_button,
            self.copy_button,
        ):
            button.setAutoRaise(True)
            bar.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.header)
        layout.addLayout(bar)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.views, 1)

    def set_hit(self, hit: Hit | None, query: str, result: SearchResult | None = None) -> None:
        self.hit = hit
        for button in (self.prev_button, self.next_button, self.open_button, self.folder_button, self.copy_button):
            button.setEnabled(hit is not None)
        if hit is None:
            self.editor.setPlainText("")
            self.rendered.clear()
            self.render_button.hide()
            self.header.setText("")
            self.position.setText("")
            self.matches, self.current = [], -1
            return
        text, note = read_document(hit, self.extracted_text)
        code = is_code(hit)
        self.editor.setFont(mono_font() if code else self.font())
        self.editor.set_line_numbers(code)
        # Colouring and rendering run over the whole text on the UI thread: big files are
        # shown plain, so selecting one never freezes the window.
        self._colour(code and len(text) <= MAX_DECORATED_CHARS, code_language(hit.path))
        self.editor.setPlainText(text)
        self.markdown = is_markdown(hit) and not hit.location and len(text) <= MAX_DECORATED_CHARS
        self.render_button.setVisible(self.markdown)
        where = hit.location or f"lines {hit.line_start}–{hit.line_end}"
        self.header.setText(note or f"{hit.path}  ·  {where}")
        self.header.setToolTip(hit.abs_path)
        self.matches = self._find_matches(text, query, result)
        self.current = self._first_match_in_hit()
        for button in (self.prev_button, self.next_button):
            button.setEnabled(bool(self.matches))  # nothing to step through
            button.setVisible(bool(self.matches))  # and "no matches in file" has their room (900 px)
        self._paint()
        self._scroll_to_hit()
        self._render(text if self.markdown else "")
        self._show_view()
        if self.find_bar.isVisible() and self.find_bar.field.text():  # the count is this document's
            self._count_found(self.find_bar.field.text())

    # -- views ---------------------------------------------------------------------

    def rendered_shown(self) -> bool:
        return self.markdown and self.render_button.isChecked()

    def current_view(self):
        return self.rendered if self.rendered_shown() else self.editor

    def _show_view(self) -> None:
        self.views.setCurrentWidget(self.current_view())
        if self.rendered_shown():
            self._paint_rendered()

    def _colour(self, code: bool, language: str | None = None) -> None:
        if self._highlighter is not None:
            self._highlighter.setDocument(None)
            self._highlighter = None
        if code:
            dark = theme(self.palette()).base.lightness() < 128
            self._highlighter = CodeHighlighter(self.editor.document(), dark, language)

    def _render(self, text: str) -> None:
        """Markdown as a reader sees it (front matter left out); matches found again in it."""
        if not text:
            self.rendered.clear()
            self.rendered_matches = []
            return
        self.rendered.setMarkdown(strip_front_matter(text))
        doc_text = self.rendered.document().toPlainText()
        words = sorted({self.editor.document().toPlainText()[s:e] for s, e in self.matches}, key=len, reverse=True)
        self.rendered_matches = rendered_marks(doc_text, words)[:MAX_MARKS]

    def _paint_rendered(self, *, to_match: bool = True) -> None:
        t = theme(self.palette())
        mark = QTextCharFormat()
        mark.setBackground(t.mark_bg)
        mark.setForeground(t.mark_fg)
        current = QTextCharFormat(mark)
        current.setBackground(t.accent)
        current.setForeground(t.base)
        selections = []
        for s, e in self.rendered_matches:
            sel = QTextEdit.ExtraSelection()
            sel.cursor = QTextCursor(self.rendered.document())
            sel.cursor.setPosition(s)
            sel.cursor.setPosition(e, QTextCursor.MoveMode.KeepAnchor)
            sel.format = mark
            selections.append(sel)
        if self._finding():
            selections.extend(self._found(self.rendered, current))
        self.rendered.setExtraSelections(selections)
        if self.rendered_matches and to_match:
            index = min(max(self.current, 0), len(self.rendered_matches) - 1)
            cursor = QTextCursor(self.rendered.document())
            cursor.setPosition(self.rendered_matches[index][0])
            self.rendered.setTextCursor(cursor)
            self.rendered.ensureCursorVisible()

    # -- find in preview (Ctrl+F) -------------------------------------------------------

    def show_find(self) -> None:
        if self.hit is not None:
            self.find_bar.open_bar()

    def find(self, text: str, backwards: bool = False) -> bool:
        """Select the next occurrence of text in the shown view (wrapping); count them all."""
        view = self.current_view()
        if not text:
            self.find_bar.count.setText("")
            self._paint_found()
            return False
        flags = QTextDocument.FindFlag.FindBackward if backwards else QTextDocument.FindFlag(0)
        found = view.find(text, flags)
        if not found:  # wrap around
            cursor = view.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End if backwards else QTextCursor.MoveOperation.Start)
            view.setTextCursor(cursor)
            found = view.find(text, flags)
        self._count_found(text)
        self._paint_found()
        return found

    def _paint_found(self) -> None:
        """The marks again, with the find bar's selection (or without it) as the current one;
        the view stays where the find put it."""
        if self.rendered_shown():
            self._paint_rendered(to_match=False)
        else:
            self._paint()

    def _count_found(self, text: str) -> None:
        total = len(_occurrences(self.current_view().document().toPlainText(), [text]))
        self.find_bar.count.setText(f"{total:,} found" if total else "not found")

    def _find_matches(self, text: str, query: str, result: SearchResult | None) -> list[tuple[int, int]]:
        # What the search matched on (corrected words, substrings), not the typed text.
        terms = result.matched if result is not None and result.matched.words else match_terms(parse_query(query))
        if self.analyzer is None:
            return []
        return Highlighter(terms, self.analyzer()).spans(text, limit=MAX_MARKS)

    def _hit_range(self) -> tuple[int, int]:
        doc = self.editor.document()
        first = doc.findBlockByNumber(max(0, self.hit.line_start - 1))
        last = doc.findBlockByNumber(max(0, self.hit.line_end - 1))
        if not last.isValid():
            last = doc.lastBlock()
        return first.position(), last.position() + last.length()

    def _first_match_in_hit(self) -> int:
        if not self.matches:
            return -1
        start, _ = self._hit_range()
        return next((i for i, (s, _) in enumerate(self.matches) if s >= start), 0)

    def _finding(self) -> bool:
        """The find bar is open with text: what it found is the current match, drawn as one
        (the query's current match is a plain mark meanwhile)."""
        return self.find_bar.isVisible() and bool(self.find_bar.field.text())

    @staticmethod
    def _found(view, current: QTextCharFormat) -> list[QTextEdit.ExtraSelection]:
        """The find bar's selection in view, drawn in the current match's colours: the view's
        own selection is pale while the find field has the focus."""
        cursor = view.textCursor()
        if not cursor.hasSelection():
            return []
        # The view draws its own selection over the marks, pale (the light theme's highlight,
        # and the inactive one while the find field has the focus): in the current colours.
        palette = view.palette()
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
            palette.setColor(group, QPalette.ColorRole.Highlight, current.background().color())
            palette.setColor(group, QPalette.ColorRole.HighlightedText, current.foreground().color())
        view.setPalette(palette)
        sel = QTextEdit.ExtraSelection()
        sel.cursor = QTextCursor(cursor)
        sel.format = current
        return [sel]

    def _find_closed(self) -> None:
        self._paint_found()  # the query's current match is the current one again
        self.current_view().setFocus()

    def _paint(self) -> None:
        t = theme(self.palette())
        finding = self._finding()
        selections = [self._band(t)]
        mark = QTextCharFormat()
        mark.setBackground(t.mark_bg)
        mark.setForeground(t.mark_fg)
        current = QTextCharFormat(mark)
        current.setBackground(t.accent)
        current.setForeground(t.base)
        for i, (s, e) in enumerate(self.matches):
            sel = QTextEdit.ExtraSelection()
            sel.cursor = QTextCursor(self.editor.document())
            sel.cursor.setPosition(s)
            sel.cursor.setPosition(e, QTextCursor.MoveMode.KeepAnchor)
            sel.format = current if i == self.current and not finding else mark
            selections.append(sel)
        if finding:
            selections.extend(self._found(self.editor, current))
        self.editor.setExtraSelections(selections)
        total = len(self.matches)
        numbers = f"{self.current + 1} of {total}"
        # Without matches Prev and Next are hidden: the words have their room.
        kept = f"…{numbers}" if total else "no matches in file"
        self.position.setMinimumWidth(self.position.fontMetrics().horizontalAdvance(kept) + 2)
        self.position.setText(f"match {numbers}" if total else "no matches in file")

    def _band(self, t) -> QTextEdit.ExtraSelection:
        """A full-width tint over the hit's lines, so the chunk stands out in its file."""
        start, end = self._hit_range()
        band = QTextEdit.ExtraSelection()
        band.cursor = QTextCursor(self.editor.document())
        band.cursor.setPosition(start)
        band.cursor.setPosition(
            max(start, min(end, self.editor.document().characterCount() - 1)), QTextCursor.MoveMode.KeepAnchor
        )
        band.format.setBackground(t.band)
        band.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        return band

    def _scroll_to_hit(self) -> None:
        start, _ = self._hit_range()
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(start)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()
        # The hit's first line three lines from the top.  A wrapping editor's scroll bar
        # counts lines on screen, not the file's lines: a file whose earlier lines wrap
        # showed lines 654-662 for a hit at 706.
        first = self.editor.document().findBlockByNumber(max(0, self.hit.line_start - 1))
        bar = self.editor.verticalScrollBar()
        bar.setValue(min(bar.maximum(), max(0, first.firstLineNumber() - 3)))

    def step(self, delta: int) -> None:
        if not self.matches:
            return
        self.current = (self.current + delta) % len(self.matches)
        self._paint()
        if self.rendered_shown():
            self._paint_rendered()
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(self.matches[self.current][0])
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()

    def step_or_find(self, delta: int) -> None:
        """F3 / Shift+F3: the find bar's next occurrence while it is open with text, else the query's."""
        text = self.find_bar.field.text()
        if self.find_bar.isVisible() and text:
            self.find(text, backwards=delta < 0)
        else:
            self.step(delta)
