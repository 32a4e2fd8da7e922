"""Entry points: `kenning` (no arguments), `kenning gui` and the kenning-gui script."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMessageBox

from kenning.core.errors import KenningError
from kenning.gui import style
from kenning.storage.paths import default_store_path

# Workers (indexer, search) run Python code; the UI thread waits up to one switch
# interval each time it wants the GIL back.  1 ms instead of 5 keeps paint and input
# handling smooth during indexing at a small cost in worker throughput.
GIL_SWITCH_SECONDS = 0.001


def make_app(argv: list[str] | None = None) -> QApplication:
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    # Qt's raster engine hands every fill or image draw of 96+ lines (each result row)
    # to a helper thread pool and waits for it.  On a busy 2-core machine the helpers
    # wait for a CPU, and the UI thread with them: profiled, half of the result list's
    # paint time was that wait.  Qt reads this switch once, before the pool exists.
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("Kenning")
    app.setOrganizationName("Kenning")
    app.setDesktopFileName("kenning")
    app.setWindowIcon(style.app_icon())
    style.apply_theme(app)
    # Follow the system when the user flips light/dark while Kenning runs.
    app.styleHints().colorSchemeChanged.connect(lambda _: style.apply_theme(app))
    return app


def run_app(store_path: Path | None = None) -> int:
    from kenning.gui.main_window import MainWindow

    app = make_app()
    try:
        window = MainWindow(Path(store_path) if store_path else default_store_path())
    except KenningError as exc:
        QMessageBox.critical(None, "Kenning cannot start", str(exc))
        return 1
    window.show()
    window.search_bar.focus()
    code = app.exec()
    window.shutdown()
    return code


def main() -> int:
    store = None
    args = sys.argv[1:]
    if "--store" in args and args.index("--store") + 1 < len(args):
        store = Path(args[args.index("--store") + 1])
    return run_app(store)


if __name__ == "__main__":
    sys.exit(main())
