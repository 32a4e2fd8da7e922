"""Converting an older store before the window opens, with a window saying so.

A store made by an older Kenning is converted once when first opened (a 100k-chunk
store takes about 20 s, a million chunks minutes: docs/architecture.md §10).  The
conversion runs in a thread while this small window shows each step and the event
loop keeps running, so the desktop never sees a frozen, unresponsive app.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QProgressDialog

from kenning.workspace import Workspace, store_needs_upgrade

POLL_SECONDS = 0.05


def upgrade_if_needed(app: QApplication, path: Path) -> None:
    """Convert the store at path when it needs it; raises what opening it raised."""
    if not store_needs_upgrade(path):
        return
    steps: queue.Queue[str] = queue.Queue()
    failure: list[BaseException] = []
    finished = threading.Event()

    def convert() -> None:
        workspace = Workspace(path, on_upgrade=steps.put)
        try:
            workspace.open()  # opening it applies the migrations
        except BaseException as exc:  # handed to the UI thread, which reports it
            failure.append(exc)
        finally:
            workspace.close()
            finished.set()

    dialog = QProgressDialog("Upgrading the index to this version of Kenning…", "", 0, 0)
    dialog.setWindowTitle("Kenning")
    dialog.setCancelButton(None)  # a conversion stopped halfway is rolled back and redone: nothing to gain
    dialog.setWindowModality(Qt.WindowModality.ApplicationModal)
    dialog.setMinimumDuration(0)
    dialog.show()
    threading.Thread(target=convert, name="kenning-upgrade", daemon=True).start()
    while True:
        done = finished.wait(POLL_SECONDS)
        while not steps.empty():
            dialog.setLabelText(steps.get())
        app.processEvents()
        if done:
            break
    dialog.close()
    if failure:
        raise failure[0]
