"""The preview's views: code with line numbers and colours, rendered markdown, a find bar.

Colouring is deliberately generic (keywords shared by the languages Kenning chunks,
strings, comments, numbers): it reads well in every language and costs one regex
pass per visible block, where a per-language lexer would need a dependency.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QSizePolicy, QToolButton, QWidget

from kenning.gui.style import theme

KEYWORDS = [
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "def",
    "default",
    "defer",
    "del",
    "do",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "False",
    "final",
    "finally",
    "fn",
    "for",
    "from",
    "func",
    "function",
    "go",
    "if",
    "impl",
    "implements",
    "import",
    "in",
    "interface",
    "is",
    "lambda",
    "let",
    "loop",
    "match",
    "mod",
    "module",
    "mut",
    "new",
    "nil",
    "None",
    "not",
    "null",
    "or",
    "package",
    "pass",
    "private",
    "protected",
    "pub",
    "public",
    "raise",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "trait",
    "true",
    "True",
    "try",
    "type",
    "typeof",
    "use",
    "var",
    "void",
    "where",
    "while",
    "with",
    "yield",
]
_RULES = (
    ("keyword", re.compile(r"\b(?:" + "|".join(map(re.escape, KEYWORDS)) + r")\b")),
    ("number", re.compile(r"\b\d+(?:\.\d+)?\b")),
    ("string", re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")),
    ("comment", re.compile(r"(?:#|//|--(?=\s)).*$")),
)


_STRING = dict(_RULES)["string"]

# Strings and comments that may span lines, by the language Kenning indexes a file as:
# (opener, closer, format).  Without them every keyword of a docstring's prose ("is",
# "from", "not", "as") was drawn as code.  Per language, as "/*" opens nothing in Python
# ("**/*.py") and triple quotes nothing in C.
_TRIPLE_QUOTES = (('"""', '"""', "string"), ("'''", "'''", "string"))
_BLOCK_COMMENTS = (("/*", "*/", "comment"),)
_C_LIKE = "c cpp objc csharp java kotlin scala swift dart groovy php javascript jsx typescript tsx go rust sql css"
SPANNING_BY_LANGUAGE = {"python": _TRIPLE_QUOTES} | {language: _BLOCK_COMMENTS for language in _C_LIKE.split()}


class CodeHighlighter(QSyntaxHighlighter):
    """Keywords, numbers, strings and comments, in the theme's colours: line by line, and
    Python's triple-quoted strings and C's block comments across lines."""

    def __init__(self, document, dark: bool, language: str | None = None) -> None:
        super().__init__(document)
        # The block state of a line that ends inside a span is the span's index + 1.
        self.spanning = SPANNING_BY_LANGUAGE.get(language or "", ())
        self.state_of = {opener: number for number, (opener, _, _) in enumerate(self.spanning, 1)}
        self.openers = re.compile("|".join(map(re.escape, self.state_of))) if self.state_of else None
        colours = {
            "keyword": "#C792EA" if dark else "#7B30D0",
            "number": "#F78C6C" if dark else "#B15C00",
            "string": "#C3E88D" if dark else "#2E7D32",
            "comment": "#8A93A3" if dark else "#7A8494",
        }
        self.formats = {}
        for name, colour in colours.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            if name == "keyword":
                fmt.setFontWeight(QFont.Weight.DemiBold)
            if name == "comment":
                fmt.setFontItalic(True)
            self.formats[name] = fmt

    def highlightBlock(self, text: str) -> None:
        self.setCurrentBlockState(0)
        at, inside = 0, self.previousBlockState()
        while True:
            if inside > 0:  # in a span from an earlier line (or this one): find its end
                _, closer, name = self.spanning[inside - 1]
                end = text.find(closer, at)
                stop = len(text) if end < 0 else end + len(closer)
                self.setFormat(at, stop - at, self.formats[name])
                if end < 0:
                    self.setCurrentBlockState(inside)
                    return
                at, inside = stop, 0
            opened = self._opener(text, at)
            upto = len(text) if opened is None else opened.start()
            if self._line_rules(text, at, upto) or opened is None:
                return  # the rest of the line is a line comment (an opener there is not one)
            inside = self.state_of[opened.group()]
            self.setFormat(opened.start(), len(opened.group()), self.formats[self.spanning[inside - 1][2]])
            at = opened.end()

    def _opener(self, text: str, at: int) -> re.Match[str] | None:
        """The first opener of a span in text[at:] that no one-line string holds
        (JavaScript's "src/**/*.js" opened a comment to the end of the file)."""
        if self.openers is None:
            return None
        strings = [m.span() for m in _STRING.finditer(text, at)]
        for opened in self.openers.finditer(text, at):
            if not any(start < opened.start() < end for start, end in strings):
                return opened
        return None

    def _line_rules(self, text: str, start: int, end: int) -> bool:
        """The one-line rules over text[start:end]; True when a line comment starts there
        (it runs to the end of the line)."""
        part = text[start:end]
        comment_at = None
        for name, pattern in _RULES:
            for m in pattern.finditer(part):
                self.setFormat(start + m.start(), m.end() - m.start(), self.formats[name])
                if name == "comment":
                    comment_at = start + m.start()
        if comment_at is not None:  # past `end` too: an opener inside a comment opens nothing
            self.setFormat(comment_at, len(text) - comment_at, self.formats["comment"])
        return comment_at is not None


class _Gutter(QWidget):
    def __init__(self, editor: CodeView) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.editor.paint_gutter(event)


class CodeView(QPlainTextEdit):
    """A read-only text view with a line-number gutter (shown for code)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent, readOnly=True)
        self.gutter = _Gutter(self)
        self.numbers = False
        self.blockCountChanged.connect(lambda _: self._update_margin())
        self.updateRequest.connect(self._scroll_gutter)
        self._update_margin()

    def set_line_numbers(self, shown: bool) -> None:
        self.numbers = shown
        self.gutter.setVisible(shown)
        self._update_margin()

    def gutter_width(self) -> int:
        if not self.numbers:
            return 0
        digits = len(str(max(1, self.blockCount())))
        return 14 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_margin(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        area = self.contentsRect()
        self.gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_gutter(self, event) -> None:
        t = theme(self.palette())
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), t.panel)
        painter.setPen(t.muted)
        painter.setFont(self.font())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                painter.drawText(
                    0, top, self.gutter.width() - 6, height, Qt.AlignmentFlag.AlignRight, str(block.blockNumber() + 1)
                )
            block = block.next()
            top = bottom
        painter.end()


class FindBar(QWidget):
    """Ctrl+F in the preview: type, Enter for the next occurrence, Esc to close."""

    find_requested = Signal(str, bool)  # text, backwards
    closed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.field = QLineEdit(self, placeholderText="Find in preview…", clearButtonEnabled=True)
        self.count = QLabel(self, objectName="muted")
        previous = QToolButton(self, text="▲", toolTip="Previous (Shift+Enter)", autoRaise=True)
        following = QToolButton(self, text="▼", toolTip="Next (Enter)", autoRaise=True)
        close = QToolButton(self, text="✕", toolTip="Close (Esc)", autoRaise=True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.field, self.count, previous, following, close):
            layout.addWidget(widget, 1 if widget is self.field else 0)
        self.field.textChanged.connect(lambda text: self.find_requested.emit(text, False))
        self.field.returnPressed.connect(lambda: self.find_requested.emit(self.field.text(), False))
        previous.clicked.connect(lambda: self.find_requested.emit(self.field.text(), True))
        following.clicked.connect(lambda: self.find_requested.emit(self.field.text(), False))
        close.clicked.connect(self.close_bar)
        self.hide()

    def open_bar(self) -> None:
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.closed.emit()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
            return
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.find_requested.emit(self.field.text(), True)
            return
        super().keyPressEvent(event)


class ElidedLabel(QLabel):
    """One line of text cut in the middle with "…" when the label is narrower than it
    (a long path keeps its start and its file name); the tooltip holds it whole.  It
    asks for no width of its own, so it never widens the window."""

    def __init__(self, parent=None, *, words: bool = False, mode=Qt.TextElideMode.ElideMiddle) -> None:
        super().__init__(parent)
        self._full = ""
        self._words = words  # cut at a space, never inside a word (a sentence, not a path)
        self._mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._fit()

    def text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        width = max(self.width(), 0)
        shown = self.fontMetrics().elidedText(self._full, self._mode, width)
        if self._words and shown != self._full and shown.endswith("…"):
            kept = shown[:-1]
            if " " in kept and not self._full[len(kept) : len(kept) + 1].isspace():
                kept = kept[: kept.rindex(" ")]
            shown = kept.rstrip(" ,;:·-") + "…"
        super().setText(shown)
