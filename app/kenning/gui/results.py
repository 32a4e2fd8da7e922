"""The result list: a thin model over Hit rows (Vorta style, set_rows) and its delegate."""

from __future__ import annotations

import html

from PySide6.QtCore import QAbstractListModel, QModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QFont, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from kenning.core.types import Hit
from kenning.gui.style import FINAL_COLOUR, theme

HitRole = Qt.ItemDataRole.UserRole + 1
ROW_HEIGHT = 92
PAD = 10


def snippet_html(snippet: str, mark_bg: str, mark_fg: str) -> str:
    """The engine's [[word]] marks as highlighted HTML, everything else escaped."""
    out, rest = [], snippet
    while "[[" in rest:
        before, _, tail = rest.partition("[[")
        word, found, rest = tail.partition("]]")
        out.append(html.escape(before))
        if not found:  # unbalanced mark: show it literally
            out.append(html.escape("[[" + word))
            continue
        out.append(f'<span style="background:{mark_bg}; color:{mark_fg}; font-weight:600">{html.escape(word)}</span>')
    out.append(html.escape(rest))
    return "".join(out)


def location(hit: Hit) -> str:
    lines = f"{hit.line_start}" if hit.line_start == hit.line_end else f"{hit.line_start}–{hit.line_end}"
    return f"{hit.source} · {hit.path}:{lines}"


class ResultsModel(QAbstractListModel):
    """Rows are Hits; views and tests read them through data() or `hits`."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.hits: list[Hit] = []

    def set_rows(self, hits: list[Hit]) -> None:
        self.beginResetModel()
        self.hits = list(hits)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.hits)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= len(self.hits):
            return None
        hit = self.hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return hit.title or hit.path
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{hit.abs_path}\nlines {hit.line_start}–{hit.line_end}\nscore {hit.score:.4f}"
        if role == HitRole:
            return hit
        return None

    def hit(self, row: int) -> Hit | None:
        return self.hits[row] if 0 <= row < len(self.hits) else None


class ResultDelegate(QStyledItemDelegate):
    """Title, location, highlighted snippet, and the final score as a small bar."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        return QSize(option.rect.width(), ROW_HEIGHT)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        hit: Hit = index.data(HitRole)
        if hit is None:
            return
        t = theme(option.palette)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        self._background(painter, option, selected, t)
        text_colour = option.palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        rect = option.rect.adjusted(PAD + 4, PAD - 2, -PAD, -PAD)
        score_w = 74
        self._score(painter, QRect(rect.right() - score_w + 1, rect.top(), score_w, 34), hit, text_colour, t)
        body = QRect(rect.left(), rect.top(), rect.width() - score_w - 8, rect.height())
        self._title(painter, body, hit, option.font, text_colour)
        muted = text_colour if selected else t.muted
        self._location(painter, body, hit, option.font, muted)
        self._snippet(painter, body, hit, option.font, text_colour, t)
        painter.restore()

    def _background(self, painter, option, selected, t) -> None:
        rect = option.rect.adjusted(4, 2, -4, -2)
        if selected:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(option.palette.color(QPalette.ColorRole.Highlight))
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        elif option.state & QStyle.StateFlag.State_MouseOver:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(t.panel)
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        else:
            painter.setPen(t.border)
            painter.drawLine(rect.bottomLeft(), rect.bottomRight())

    def _title(self, painter, body: QRect, hit: Hit, base_font: QFont, colour: QColor) -> None:
        font = QFont(base_font)
        font.setBold(True)
        font.setPointSizeF(base_font.pointSizeF() + 1)
        painter.setFont(font)
        painter.setPen(colour)
        title = painter.fontMetrics().elidedText(hit.title or hit.path, Qt.TextElideMode.ElideRight, body.width())
        painter.drawText(QRect(body.left(), body.top(), body.width(), 20), Qt.AlignmentFlag.AlignVCenter, title)

    def _location(self, painter, body: QRect, hit: Hit, base_font: QFont, colour: QColor) -> None:
        font = QFont(base_font)
        font.setPointSizeF(base_font.pointSizeF() - 0.5)
        painter.setFont(font)
        painter.setPen(colour)
        text = painter.fontMetrics().elidedText(location(hit), Qt.TextElideMode.ElideMiddle, body.width())
        painter.drawText(QRect(body.left(), body.top() + 21, body.width(), 17), Qt.AlignmentFlag.AlignVCenter, text)

    def _snippet(self, painter, body: QRect, hit: Hit, base_font: QFont, colour: QColor, t) -> None:
        doc = QTextDocument()
        doc.setDefaultFont(base_font)
        doc.setDocumentMargin(0)
        doc.setTextWidth(body.width())
        doc.setHtml(
            f'<div style="color:{colour.name()}">'
            f"{snippet_html(hit.snippet, t.mark_bg.name(), t.mark_fg.name())}</div>"
        )
        top = body.top() + 41
        clip = QRectF(0, 0, body.width(), body.bottom() - top)
        painter.translate(body.left(), top)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.clip = clip
        painter.setClipRect(clip)
        doc.documentLayout().draw(painter, context)
        painter.setClipping(False)
        painter.translate(-body.left(), -top)

    def _score(self, painter, rect: QRect, hit: Hit, colour: QColor, t) -> None:
        font = QFont(painter.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(colour)
        painter.drawText(QRect(rect.left(), rect.top(), rect.width(), 18), Qt.AlignmentFlag.AlignRight, f"{hit.score:.3f}")
        bar = QRectF(rect.left() + 14, rect.top() + 23, rect.width() - 14, 6)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(t.track)
        painter.drawRoundedRect(bar, 3, 3)
        filled = QRectF(bar.left(), bar.top(), bar.width() * max(0.0, min(1.0, hit.score)), bar.height())
        painter.setBrush(QColor(FINAL_COLOUR))
        painter.drawRoundedRect(filled, 3, 3)
        if hit.breakdown.layer == "rrf-fuzzy":
            painter.setPen(t.muted)
            small = QFont(font)
            small.setBold(False)
            small.setPointSizeF(font.pointSizeF() - 1.5)
            painter.setFont(small)
            painter.drawText(QRect(rect.left() - 20, rect.top() + 32, rect.width() + 20, 16), Qt.AlignmentFlag.AlignRight, "fuzzy")
