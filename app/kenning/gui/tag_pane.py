"""The tag pane: every tag with its document count; a click filters the search by it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from kenning.gui.style import theme

TagRole = Qt.ItemDataRole.UserRole + 1
CountRole = Qt.ItemDataRole.UserRole + 2
MIN_WIDTH = 96


class _TagDelegate(QStyledItemDelegate):
    """The count right-aligned and always whole; the tag's name elided to what is left."""

    def paint(self, painter, option, index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect.adjusted(4, 0, -6, 0)
        count = f"{index.data(CountRole) or 0:,}"
        metrics = opt.fontMetrics
        count_w = metrics.horizontalAdvance(count)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setPen(opt.palette.color(text_role))
        name = metrics.elidedText(f"#{index.data(TagRole)}", Qt.TextElideMode.ElideRight, rect.width() - count_w - 8)
        painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, name)
        painter.setPen(opt.palette.color(text_role) if selected else theme(opt.palette).muted)
        painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, count)
        painter.restore()


class TagPane(QWidget):
    tag_clicked = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.counts: dict[str, int] = {}
        self.filter = QLineEdit(self, placeholderText="Filter tags…", clearButtonEnabled=True)
        self.active: set[str] = set()  # the tags the query filters by: shown selected
        self.list = QListWidget(self, objectName="tags")
        self.list.setToolTip("Click a tag to search within it (click again to drop the filter)")
        self.list.setItemDelegate(_TagDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        # The selection shows the query's tag: filters; a click changes the query, which then selects.
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        self.empty = QLabel(
            "No tags yet: a note's front matter <code>tags:</code> and inline <code>#tags</code> appear here.",
            self,
            wordWrap=True,
            textFormat=Qt.TextFormat.RichText,
        )
        self.empty.setObjectName("muted")
        self.setMinimumWidth(MIN_WIDTH)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 0, 4, 0)
        layout.addWidget(QLabel("Tags", self, objectName="sectionTitle"))
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        self.filter.textChanged.connect(lambda _: self._fill())
        self.list.itemClicked.connect(lambda item: self.tag_clicked.emit(item.data(TagRole)))
        self.list.itemActivated.connect(lambda item: self.tag_clicked.emit(item.data(TagRole)))
        self._fill()

    def set_counts(self, counts: dict[str, int] | None) -> None:
        if counts is None or counts == self.counts:
            return
        self.counts = dict(counts)
        self._fill()

    def tags(self) -> list[tuple[str, int]]:
        """Shown order: most used first, then by name."""
        wanted = self.filter.text().strip().lstrip("#").lower()
        items = [(t, n) for t, n in self.counts.items() if wanted in t.lower()]
        return sorted(items, key=lambda tn: (-tn[1], tn[0]))

    def show_active(self, tags: set[str]) -> None:
        """Mark the tags the query filters by (and only those)."""
        self.active = {t.lower() for t in tags}
        self._mark()

    def _mark(self) -> None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setSelected(str(item.data(TagRole)).lower() in self.active)

    def _fill(self) -> None:
        self.list.clear()
        for tag, count in self.tags():
            item = QListWidgetItem(f"#{tag}   {count:,}")
            item.setData(TagRole, tag)
            item.setData(CountRole, count)
            item.setToolTip(f"#{tag}: {count:,} document{'' if count == 1 else 's'}")
            self.list.addItem(item)
        self._mark()
        self.empty.setVisible(not self.counts)


def toggle_tag_filter(query: str, tag: str) -> str:
    """The query with tag:TAG added, or removed when it is there already."""
    token = f"tag:{tag}"
    words = query.split()
    if token in words:
        return " ".join(w for w in words if w != token)
    return f"{query.strip()} {token}".strip()
