"""The first-run page: no grid of nothing, just the two ways to start."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from kenning.gui.style import app_icon

INTRO = (
    "Point Kenning at folders of notes and link your git repositories. "
    "Everything is indexed into one local file and searched offline, by keywords "
    "and by meaning, and every result shows why it ranks where it does."
)
TIPS = (
    'Search syntax: words, "exact phrases", -exclude, and filters such as '
    "source:notes  path:docs/  ext:md  tag:design  after:2024-01-01"
)


class WelcomePage(QWidget):
    add_folder = Signal()
    link_repo = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        card = QFrame(self)
        card.setObjectName("card")
        card.setMinimumWidth(580)
        card.setMaximumWidth(640)
        icon = QLabel(card)
        pixmap = app_icon().pixmap(64, 64)
        if not pixmap.isNull():
            icon.setPixmap(pixmap)
        title = QLabel("Welcome to Kenning", card)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.8)
        font.setBold(True)
        title.setFont(font)
        intro = QLabel(INTRO, card, wordWrap=True)
        tips = QLabel(TIPS, card, wordWrap=True)
        tips.setObjectName("hint")
        self.add_button = QPushButton("Add folder…", card)
        self.add_button.setObjectName("primary")
        self.link_button = QPushButton("Link git repository…", card)
        self.add_button.clicked.connect(self.add_folder)
        self.link_button.clicked.connect(self.link_repo)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.link_button)
        buttons.addStretch(1)
        inner = QVBoxLayout(card)
        inner.setContentsMargins(32, 28, 32, 28)
        inner.setSpacing(14)
        if not pixmap.isNull():
            inner.addWidget(icon)
        inner.addWidget(title)
        inner.addWidget(intro)
        inner.addLayout(buttons)
        inner.addSpacing(6)
        inner.addWidget(tips)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 0, Qt.AlignmentFlag.AlignCenter)
        row.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)
