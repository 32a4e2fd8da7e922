"""Entry points: `kenning` (no arguments), `kenning gui` and the kenning-gui script."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMessageBox

from kenning import APP_ID, __version__
from kenning.core.logger import get_logger
from kenning.gui import style
from kenning.gui.service_host import HandlersFor, ServiceHost
from kenning.gui.single_instance import already_open_message, bring_existing_to_front
from kenning.gui.upgrade import upgrade_if_needed
from kenning.workspace import default_store_path, logs, report

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
    existing = QApplication.instance()  # typed QCoreApplication in the stubs: ours is a QApplication
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    app.setApplicationName("Kenning")
    app.setOrganizationName("Kenning")
    app.setDesktopFileName(APP_ID)  # the desktop file io.github.kenning.Kenning.desktop (Wayland's app id)
    app.setWindowIcon(style.app_icon())
    style.apply_theme(app)
    # Follow the system when the user flips light/dark while Kenning runs.
    app.styleHints().colorSchemeChanged.connect(lambda _: style.apply_theme(app))
    return app


def run_app(
    store_path: Path | None = None, qt_args: list[str] | None = None, service_handlers: HandlersFor | None = None
) -> int:
    """service_handlers: what a service inside the app answers (the launcher hands over
    cli.serving.handlers_for); None: the app serves no CLI or assistant."""
    from kenning.gui.main_window import MainWindow

    if not logs.configured():  # `kenning --verbose` (which opens the app) configured it already
        logs.setup_logging()
    get_logger(__name__).info("the app starts (Kenning %s)", __version__)
    app = make_app([sys.argv[0], *(qt_args or [])])
    path = Path(store_path) if store_path else default_store_path()
    if bring_existing_to_front(path):  # one window per store: the open one comes forward
        print(already_open_message(path), file=sys.stderr)
        return 0
    try:
        upgrade_if_needed(app, path)  # an older store is converted first, with a window saying so
        window = MainWindow(path)
    except Exception as exc:  # a damaged or busy store, a read-only folder: say what to do
        QMessageBox.critical(None, "Kenning cannot start", report(exc, path, doing="opening the window"))
        return 1
    host = ServiceHost.for_window(window, service_handlers).start() if service_handlers else None
    window.show()
    window.search_bar.focus()
    try:
        code = app.exec()
    finally:
        if host is not None:
            host.stop()
        window.shutdown()
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kenning-gui", description="The Kenning desktop app.")
    parser.add_argument("--version", action="version", version=f"kenning {__version__}")
    parser.add_argument("--store", type=Path, metavar="PATH", help="store file (default: $KENNING_HOME/kenning.db)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr too")
    return parser


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """Our options, and the rest for Qt (-platform, -style, ...: one dash), which has its own."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    unknown = [a for a in rest if a.startswith("--")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args, rest


def main(argv: list[str] | None = None, service_handlers: HandlersFor | None = None) -> int:
    args, qt_args = parse_args(sys.argv[1:] if argv is None else argv)
    logs.setup_logging(verbose=args.verbose)
    return run_app(args.store, qt_args, service_handlers)


if __name__ == "__main__":
    sys.exit(main())
