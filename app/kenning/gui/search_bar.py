"""The search field, its mode switch and the filter chips under it."""

from __future__ import annotations

import functools
import re

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kenning import TYPE_CHECKING
from kenning.gui.shortcuts import command_keys
from kenning.search.fusion import DEFAULT_FUSION
from kenning.search.query import FILTER_KEYS
from kenning.workspace.searching import mode_description

if TYPE_CHECKING:
    from kenning.core.types import Fusion

DEBOUNCE_MS = 180  # long enough to skip most keystrokes, short enough to feel live
CHIP_ROW_HEIGHT = 26
MODES = (("hybrid", "Hybrid"), ("lexical", "Lexical"), ("vector", "Semantic"))
_FILTER_TOKEN = re.compile(r'(?<!\S)(\w+):("[^"]*"?|\S+)', re.UNICODE)


def filter_chips(text: str) -> list[tuple[str, str]]:
    """(key, value) of each filter token, in the order typed."""
    if not text:
        return []
    out = []
    for m in _FILTER_TOKEN.finditer(text):
        key = m.group(1).lower()
        if key in FILTER_KEYS:
            out.append((key, m.group(2).strip('"')))
    return out


def remove_filter(text: str, key: str, value: str) -> str:
    """The query without the first `key:value` token (quoted or not)."""
    for m in _FILTER_TOKEN.finditer(text):
        if m.group(1).lower() == key and m.group(2).strip('"') == value:
            return " ".join((text[: m.start()] + text[m.end() :]).split())
    return text


class SearchBar(QWidget):
    """Emits `search_requested(text, mode)` after typing pauses, or at once on Enter."""

    search_requested = Signal(str, str)
    cleared = Signal()
    move_selection = Signal(int)  # -1 up, +1 down: arrows steer the result list
    activate = Signal(bool)  # Enter: open hit (True with Ctrl: open folder)
    recall_requested = Signal()  # Up in an empty field: the last search back
    history_cleared = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.field = QLineEdit(self)
        self.field.setObjectName("searchField")
        self.field.setPlaceholderText(
            'Search notes and code…   source:  path:  ext:  tag:  after:  before:  "phrase"  -exclude'
        )
        self.field.setClearButtonEnabled(True)
        self.field.installEventFilter(self)
        self._command_keys = command_keys()
        self.modes = QButtonGroup(self)
        self.timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self.timer.timeout.connect(self._emit_search)
        self.chip_row = QHBoxLayout()
        self.chip_row.setContentsMargins(2, 0, 0, 0)
        self.chip_row.setSpacing(6)
        self._build()
        self.field.textChanged.connect(self._on_text)

    def _build(self) -> None:
        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.field, 1)
        self.history_button = QToolButton(
            self, text="Recent ▾", toolTip="Recent searches (Up in an empty field recalls the last)"
        )
        self.history_button.setObjectName("history")  # its own arrow: Fusion's overlapped the text
        self.history_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.history_menu = QMenu(self)
        self.history_button.setMenu(self.history_menu)
        self.set_history([])
        top.addWidget(self.history_button)
        for i, (mode, label) in enumerate(MODES):
            button = QToolButton(self, text=label, checkable=True)
            button.setProperty("mode", mode)
            button.setObjectName("modeButton")  # the active mode is drawn in the accent colour
            self.modes.addButton(button, i)
            top.addWidget(button)
        self.modes.button(0).setChecked(True)
        self.set_fusion(DEFAULT_FUSION)
        self.modes.idClicked.connect(lambda _: self._emit_search())
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(top)
        # The chips' row keeps its height when empty: a filter appearing never moves the
        # page under the pointer (a second click on a tag landed in "Filter tags…").
        self.chip_area = QWidget(self)
        self.chip_area.setLayout(self.chip_row)
        self.chip_area.setFixedHeight(CHIP_ROW_HEIGHT)
        outer.addWidget(self.chip_area)

    def set_fusion(self, fusion: Fusion) -> None:
        """The mode buttons' tooltips say how hybrid search combines its lists now."""
        for button in self.modes.buttons():
            button.setToolTip(mode_description(button.property("mode"), fusion))

    # -- state ---------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self.field.text()

    @property
    def mode(self) -> str:
        return self.modes.checkedButton().property("mode")

    def set_mode(self, mode: str) -> None:
        for button in self.modes.buttons():
            button.setChecked(button.property("mode") == mode)

    def set_text(self, text: str, *, immediate: bool = True) -> None:
        self.field.setText(text)
        if immediate:
            self._emit_search()

    def set_history(self, entries: list[str]) -> None:
        self.history_menu.clear()
        for entry in entries:
            self.history_menu.addAction(entry, functools.partial(self.set_text, entry))
        if entries:
            self.history_menu.addSeparator()
            self.history_menu.addAction("Clear history", self.history_cleared.emit)
        else:
            self.history_menu.addAction("No recent searches").setEnabled(False)

    def focus(self) -> None:
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    # -- behaviour -----------------------------------------------------------------

    def _on_text(self, text: str) -> None:
        self._refresh_chips(text)
        if not text.strip():
            self.timer.stop()
            self.cleared.emit()
            return
        self.timer.start()

    def _emit_search(self) -> None:
        self.timer.stop()
        if self.text.strip():
            self.search_requested.emit(self.text, self.mode)
        else:
            self.cleared.emit()

    def _refresh_chips(self, text: str) -> None:
        while self.chip_row.count():
            item = self.chip_row.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        chips = filter_chips(text)
        if chips:
            label = QLabel("Filters:", self.chip_area)
            label.setObjectName("muted")
            self.chip_row.addWidget(label)
        for key, value in chips:
            chip = QToolButton(self.chip_area, text=f"{key}: {value}  ✕")
            chip.setObjectName("chip")
            chip.setToolTip(f"Remove the {key}:{value} filter")
            chip.clicked.connect(lambda _=False, k=key, v=value: self.set_text(remove_filter(self.text, k, v)))
            self.chip_row.addWidget(chip)
        self.chip_row.addStretch(1)

    def eventFilter(self, obj, event) -> bool:
        from PySide6.QtCore import QEvent

        if obj is self.field and event.type() == QEvent.Type.KeyPress:
            return self._key(event)
        if obj is self.field and event.type() == QEvent.Type.ShortcutOverride and self._window_key(event):
            event.ignore()  # not claimed by the line edit: the window's shortcut runs
            return True
        return super().eventFilter(obj, event)

    def _window_key(self, event) -> bool:
        """A key of one of the window's commands (Ctrl+E, Ctrl+K…), which QLineEdit would
        otherwise take as a line-editing key on X11 desktops (end of line, delete to the end)."""
        return QKeySequence(event.keyCombination()).toString() in self._command_keys

    def _key(self, event) -> bool:
        key = event.key()
        if key == Qt.Key.Key_Up and not self.text:
            self.recall_requested.emit()
            return True
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            self.move_selection.emit(1 if key == Qt.Key.Key_Down else -1)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            if self.timer.isActive() and not ctrl:
                self._emit_search()  # Enter before the debounce fires: search now
            else:
                self.activate.emit(ctrl)
            return True
        if key == Qt.Key.Key_Escape:
            self.field.clear()  # on an empty box Esc does nothing (and goes nowhere else)
            return True
        return False
