"""The tag pane: every tag with its document count; a click filters the search by it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

TagRole = Qt.ItemDataRole.UserRole + 1


class TagPane(QWidget):
    tag_clicked = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.counts: dict[str, int] = {}
        self.filter = QLineEdit(self, placeholderText="Filter tags…", clearButtonEnabled=True)
        self.list = QListWidget(self, objectName="tags")
        self.list.setToolTip("Click a tag to search within it (click again to drop the filter)")
        self.empty = QLabel("No tags yet: front matter `tags:` and inline #tags appear here.", self, wordWrap=True)
        self.empty.setObjectName("muted")
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

    def _fill(self) -> None:
        self.list.clear()
        for tag, count in self.tags():
            item = QListWidgetItem(f"#{tag}   {count:,}")
            item.setData(TagRole, tag)
            item.setToolTip(f"{count:,} document{'' if count == 1 else 's'} tagged {tag}")
            self.list.addItem(item)
        self.empty.setVisible(not self.counts)


def toggle_tag_filter(query: str, tag: str) -> str:
    """The query with tag:TAG added, or removed when it is there already."""
    token = f"tag:{tag}"
    words = query.split()
    if token in words:
        return " ".join(w for w in words if w != token)
    return f"{query.strip()} {token}".strip()
