"""#25 item 4, on a real X11 display (Xvfb): QLineEdit takes Ctrl+E ("end of line") and
Ctrl+K ("delete to the end of the line") on X11 desktops, which the offscreen platform's
key bindings do not, so the window's shortcuts are checked where users met the fault."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_keyboard import RUNBOOKS

from conftest import index_notes

XVFB = shutil.which("xvfb-run")

PROBE = r"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QSignalSpy, QTest
from PySide6.QtWidgets import QApplication
from kenning.embedding import FakeEmbedder
from kenning.gui.app import make_app
from kenning.gui.main_window import MainWindow

app = make_app()
bound = [k.toString() for k in QKeySequence.keyBindings(QKeySequence.StandardKey.MoveToEndOfLine)]
window = MainWindow(Path(sys.argv[1]), embedder_factory=FakeEmbedder, auto_index=False, watch=False)
window.show()
QTest.qWaitForWindowExposed(window)
window.activateWindow()

def wait(condition, seconds=20):
    for _ in range(seconds * 50):
        if condition():
            return True
        QTest.qWait(20)
    return False

wait(lambda: window.search_service.engine is not None)
window.search_bar.set_mode("lexical")
field = window.search_bar.field
field.setFocus()
QTest.keyClicks(field, "rollback")
wait(lambda: window.page.query == "rollback" and window.model.rowCount() > 0)
rows = window.model.rowCount()
QTest.keyClick(field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
expanded = window.model.rowCount()
field.setCursorPosition(3)
QTest.keyClick(field, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
print(json.dumps({"bound": bound, "rows": rows, "expanded": expanded, "text": field.text(),
                  "selected": field.selectedText()}))
window.shutdown()
"""


@pytest.mark.skipif(XVFB is None, reason="needs xvfb-run (Debian: apt-get install xvfb)")
def test_ctrl_e_and_ctrl_k_reach_the_window_from_the_search_field_on_x11(tmp_path):
    store = index_notes(tmp_path, RUNBOOKS)
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    here = str(Path(__file__).parent)
    proc = subprocess.run(
        [XVFB, "-a", sys.executable, "-c", PROBE, str(store), here],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if "Could not load the Qt platform plugin" in proc.stderr:
        pytest.skip("Qt's xcb platform plugin cannot load here (libxcb-cursor0 missing?)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "Ctrl+E" in seen["bound"], "X11 key bindings: the line edit would take Ctrl+E"
    assert seen["expanded"] > seen["rows"], "Ctrl+E showed the file's other matches"
    assert seen["text"] == "rollback" and seen["selected"] == "rollback", "Ctrl+K focused and selected the query"
