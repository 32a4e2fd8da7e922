"""Enter opens the hit in the user's editor at its line; any failure is said in the window.

The command comes from the editor setting (workspace.editor: presets and custom
commands, run without a shell).  The system default opens the file without a line.
A command that cannot start fails at once; one that starts and exits with an error
within FAILURE_WINDOW_MS (a wrong flag, a missing display) is reported too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices

from kenning.core.confine import path_to_open
from kenning.core.formats import extracted_kind, is_binary_document
from kenning.core.positions import match_position
from kenning.core.types import Hit
from kenning.search.related import RelatedNote
from kenning.workspace.editor import EditorError, command_for, launch

FAILURE_WINDOW_MS = 1500


def no_handler_message(path: str) -> str:
    suffix = Path(path).suffix or "this kind of"
    return (
        f"No application is set to open {suffix} files on this system. Choose an editor in Settings → Editor "
        f"(VS Code, Vim, Emacs, … or your own command), or set a default application for {suffix} files "
        "(Linux: xdg-mime default)."
    )


def where_to_open(hit: Hit | RelatedNote, path: str) -> tuple[int, int]:
    """(line, column) in the file: the match `--format vimgrep` names too."""
    if extracted_kind(path):  # lines of an HTML page, notebook or mail count its extracted text
        return 1, 1
    if isinstance(hit, RelatedNote):
        return hit.line_start, 1
    line, column, _text = match_position(hit)
    return line, column


class Opener(QObject):
    problem = Signal(str)  # what went wrong and what to do

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.editor = "system"
        self.launched: list[Any] = []  # editors started recently, checked once for an early failure

    def open_hit(self, hit: Hit | RelatedNote, folder: bool = False) -> bool:
        """Open a result (at its first matched word) or a related note (at its nearest chunk)."""
        # Another program follows whatever links the path holds now: it is given the
        # file's real path, and only when that is still inside the hit's source.
        try:
            path = path_to_open(hit.root, hit.path)
        except OSError as exc:
            self.problem.emit(f"{hit.path} cannot be opened: {exc.strerror or exc}.")
            return False
        if folder:
            return self._system(str(Path(path).parent), folder=True)
        if is_binary_document(path):  # a PDF or Word file opens in its own application
            return self._system(path)
        line, column = where_to_open(hit, path)
        argv = command_for(self.editor, path, line, column)
        if argv is None:
            return self._system(path)
        try:
            launched = launch(argv)
        except EditorError as exc:
            self.problem.emit(str(exc))
            return False
        self.launched.append(launched)
        QTimer.singleShot(FAILURE_WINDOW_MS, lambda: self._check(launched))
        return True

    def _check(self, launched) -> None:
        if launched in self.launched:
            self.launched.remove(launched)
        message = launched.problem()
        if message:
            self.problem.emit(message)

    def _system(self, path: str, *, folder: bool = False) -> bool:
        if QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
            return True
        if folder:
            self.problem.emit(f"No file manager could open {path}. Copy the path (Ctrl+Shift+C) and open it yourself.")
        else:
            self.problem.emit(no_handler_message(path))
        return False
