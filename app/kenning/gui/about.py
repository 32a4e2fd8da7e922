"""About and help: the version, where the store and the log are, the keyboard shortcuts."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from kenning import __version__
from kenning.gui.shortcuts import help_rows
from kenning.workspace import log_file


def about_html(store_path: Path, log_path: Path | None) -> str:
    log_text = html.escape(str(log_path)) if log_path else "not written (its folder cannot be created)"
    rows = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>" for k, v in help_rows())
    return (
        f"<h3>Kenning {html.escape(__version__)}</h3>"
        "<p>Offline hybrid search over your notes and git repositories.</p>"
        f"<p>Index: <code>{html.escape(str(store_path))}</code><br>"
        f"Log: <code>{log_text}</code><br>"
        "When something goes wrong, the log holds the details (attach it to a bug report).</p>"
        f"<table cellspacing='6'>{rows}</table>"
    )


class AboutDialog(QDialog):
    def __init__(self, store_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent, windowTitle="About Kenning")
        self.log_path = log_file()
        self.text = QLabel(about_html(store_path, self.log_path), self, wordWrap=True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        self.open_logs = QPushButton("Open log folder", self)
        self.open_logs.setEnabled(self.log_path is not None)
        self.open_logs.clicked.connect(open_log_folder)
        buttons.addButton(self.open_logs, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)


def open_log_folder() -> None:
    path = log_file()
    if path is not None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent)))


def show_about(parent: QWidget, store_path: Path) -> AboutDialog:
    dialog = AboutDialog(store_path, parent)
    dialog.setModal(False)
    dialog.show()
    setattr(parent, "about_dialog", dialog)  # noqa: B010 (kept alive while shown, reachable for tests; not a QWidget attribute)
    return dialog
