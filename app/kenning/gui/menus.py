"""The menu bar, built from the command table (gui/shortcuts.py): where desktop users look
for Quit, Settings and Help, and where every shortcut is written beside its command."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from kenning.gui.shortcuts import COMMANDS, MENUS


def build_menus(window: QMainWindow, handlers: dict[str, Callable[[], object]]) -> dict[str, QAction]:
    """One action per command, in its menu; the keys work wherever the focus is in the window."""
    menus = {name: window.menuBar().addMenu(f"&{name}") for name in MENUS}
    actions: dict[str, QAction] = {}
    for command in COMMANDS:
        action = QAction(command.label, window)
        action.setShortcuts([QKeySequence(k) for k in command.keys])
        action.triggered.connect(lambda _=False, run=handlers[command.name]: run())
        if command.name in ("settings", "quit"):
            menus[command.menu].addSeparator()
        menus[command.menu].addAction(action)
        actions[command.name] = action
    return actions
