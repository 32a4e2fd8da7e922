"""The app's team store: Sources → Connect to a team store…, and the status bar's line about it.

A team store is searched together with the personal one (workspace.Workspace.also):
one list, each hit labelled with its store.  The app keeps the connection string
without its password (workspace.teamstore.remembered) in the personal store's state and
connects again at the next start; libpq reads the password from ~/.pgpass each time.

Threads: the dialog and the status bar live on the UI thread; connecting and the
periodic check run on a watcher thread with a Workspace of its own; the search thread
attaches its own connection (gui/workers.py SearchService.attach_team).  An
unreachable server is said in the status bar and the search goes on over the personal
store; the check keeps trying, and searching together resumes when the server answers.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from kenning.core.logger import get_logger
from kenning.core.wording import ago, plural
from kenning.gui.shortcuts import TEAM_STORE_LABEL
from kenning.workspace import Workspace, report
from kenning.workspace.teamstore import PASSWORD_NOT_KEPT, TeamStoreInfo, label, remembered

log = get_logger(__name__)

DIALOG_WIDTH = 560
CHECK_SECONDS = 5.0  # how often the app asks the team store whether anyone wrote to it
EXPLANATION = (
    "A team store is a PostgreSQL database with pgvector that your team indexes into. "
    "It is searched together with your own store: one list, each hit labelled.\n\n"
    "Give a connection URL (postgresql://you@db.example.com/kb?sslmode=verify-full) or a "
    "service name (service=kb, from ~/.pg_service.conf). The password comes from ~/.pgpass; "
    "Kenning never stores it."
)


def status_text(info: TeamStoreInfo, now: float | None = None) -> str:
    """The status bar's words: the store, its size and its last update (core.wording's clock)."""
    updated = "never written to" if info.last_change is None else f"updated {ago(info.last_change, now or time.time())}"
    return f"Team store {info.label} · {info.chunks:,} chunks · {updated}"


class TeamStoreDialog(QDialog):
    """Asks for the connection string; the window connects and tells the dialog how it went."""

    connect_requested = Signal(str)
    disconnect_requested = Signal()

    def __init__(self, current: str | None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TEAM_STORE_LABEL.rstrip("…"))
        self.setMinimumWidth(DIALOG_WIDTH)
        explanation = QLabel(EXPLANATION, self)
        explanation.setWordWrap(True)
        # A wrapped label's height follows its width only if asked: else the dialog clips it.
        explanation.setMinimumHeight(explanation.heightForWidth(DIALOG_WIDTH - 40))
        self.target = QLineEdit(self, objectName="team_target")
        self.target.setPlaceholderText("postgresql://you@db.example.com/kb  or  service=kb")
        self.target.setText(current or "")
        self.state = QLabel(self, objectName="team_state")
        self.state.setWordWrap(True)
        self.state.setMinimumHeight(self.state.fontMetrics().lineSpacing() * 3)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.connect_button = QPushButton("Connect", self, objectName="team_connect")
        self.connect_button.setDefault(True)
        self.disconnect_button = QPushButton("Disconnect", self, objectName="team_disconnect")
        self.disconnect_button.setVisible(bool(current))
        self.buttons.addButton(self.connect_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.disconnect_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.rejected.connect(self.reject)
        self.connect_button.clicked.connect(self._connect)
        self.disconnect_button.clicked.connect(self.disconnect_requested)
        self.target.returnPressed.connect(self._connect)
        layout = QVBoxLayout(self)
        layout.addWidget(explanation)
        layout.addWidget(self.target)
        layout.addWidget(self.state)
        layout.addWidget(self.buttons)

    def _connect(self) -> None:
        text = self.target.text().strip()
        if not text:
            self.state.setText("Type a connection URL or service=NAME first.")
            return
        self.connect_button.setEnabled(False)
        self.state.setText("Connecting…")
        self.connect_requested.emit(text)

    def show_connected(self, info: TeamStoreInfo, password_dropped: bool) -> None:
        self.connect_button.setEnabled(True)
        self.disconnect_button.setVisible(True)
        text = f"Connected: {status_text(info)}, {plural(info.sources, 'source')}."
        self.state.setText(text + (f"\n{PASSWORD_NOT_KEPT}" if password_dropped else ""))

    def show_failed(self, message: str) -> None:
        self.connect_button.setEnabled(True)
        self.state.setText(message)


class _Task(QRunnable):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def run(self) -> None:
        self.fn()


class TeamWatch(QObject):
    """Connects to the team store on its own thread and checks it every CHECK_SECONDS."""

    connected = Signal(object)  # TeamStoreInfo
    failed = Signal(str)  # connecting failed: the message
    updated = Signal(object)  # TeamStoreInfo, after a check (it may hold news)
    lost = Signal(str)  # a check failed: the message (the watch keeps trying)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.workspace: Workspace | None = None  # used on the pool's thread only
        self.target: str | None = None
        self._reachable = True
        self.timer = QTimer(self, interval=int(CHECK_SECONDS * 1000))
        self.timer.timeout.connect(self.check)

    def connect_to(self, target: str) -> None:
        self.target = target
        self.pool.start(_Task(lambda: self._open(target)))

    def _open(self, target: str) -> None:
        self._close()
        try:
            workspace = Workspace(target)
            workspace.open()
            info = workspace.team_info()
        except Exception as exc:  # refused login, no such database, no server: said, never raised
            self._emit(self.failed, report(exc, target, doing=f"connecting to the team store {label(target)}"))
            return
        self.workspace = workspace
        self._reachable = True
        self._emit(self.connected, info)

    def check(self) -> None:
        if self.target is not None and self.pool.activeThreadCount() == 0:
            self.pool.start(_Task(self._check))

    def _check(self) -> None:
        workspace = self.workspace
        if workspace is None:
            if self.target is not None:  # never connected: try again quietly
                try:
                    fresh = Workspace(self.target)
                    fresh.open()
                    self.workspace = workspace = fresh
                except Exception as exc:
                    self._lost(exc)
                    return
            else:
                return
        try:
            info = workspace.team_info()
        except Exception as exc:
            self._lost(exc)
            return
        self._reachable = True
        self._emit(self.updated, info)

    def _lost(self, exc: Exception) -> None:
        message = report(exc, self.target, doing="checking the team store")
        if self._reachable:
            log.info("team store unreachable: %s", message)
        self._reachable = False
        self._emit(self.lost, message)

    def disconnect(self) -> None:
        self.target = None
        self.pool.start(_Task(self._close))

    def _close(self) -> None:
        if self.workspace is not None:
            try:
                self.workspace.close()
            except Exception:
                log.exception("closing the team store connection failed")
            self.workspace = None

    def shutdown(self) -> None:
        self.timer.stop()
        self.target = None
        self.pool.clear()
        self.pool.start(_Task(self._close))
        self.pool.waitForDone(5000)

    def _emit(self, signal, value) -> None:
        try:
            signal.emit(value)
        except RuntimeError:  # the window is gone
            pass


class TeamStoreMixin:
    """What MainWindow does about a team store (kept out of main_window.py); the window's
    own parts it uses are declared here so the type checker knows them."""

    TEAM_STATE = "team_store"

    if TYPE_CHECKING:
        from PySide6.QtWidgets import QStatusBar

        from kenning.gui.workers import SearchService

        workspace: Workspace
        search_service: SearchService
        query: str
        search_bar: Any
        settings: Any

        def statusBar(self) -> QStatusBar: ...  # Qt's name

    def _build_team(self) -> None:
        self.team_status = QLabel(self, objectName="team_status")
        self.team_status.hide()
        self.statusBar().addPermanentWidget(self.team_status)
        self.team_watch = TeamWatch(self)
        self.team_watch.connected.connect(self._team_connected)
        self.team_watch.failed.connect(self._team_failed)
        self.team_watch.updated.connect(self._team_updated)
        self.team_watch.lost.connect(self._team_lost)
        self.search_service.team_lost.connect(self._team_lost)
        self.team_dialog: TeamStoreDialog | None = None
        self.team_target: str | None = None  # this session's (it may hold a password)
        self._team_password_dropped = False
        remembered_target = self.workspace.load_state(self.TEAM_STATE)
        if isinstance(remembered_target, str) and remembered_target:
            self.connect_team(remembered_target)

    def open_team_dialog(self) -> TeamStoreDialog:
        current = self.workspace.load_state(self.TEAM_STATE)
        dialog = TeamStoreDialog(current if isinstance(current, str) else None, self)
        dialog.connect_requested.connect(self.connect_team)
        dialog.disconnect_requested.connect(self.disconnect_team)
        self.team_dialog = dialog
        dialog.open()
        return dialog

    def connect_team(self, target: str) -> None:
        self.team_target = target
        kept, self._team_password_dropped = remembered(target)
        self.team_watch.connect_to(target)

    def _team_connected(self, info: TeamStoreInfo) -> None:
        kept, _ = remembered(self.team_target or "")
        self.workspace.save_state(self.TEAM_STATE, kept)  # never the password
        self.search_service.attach_team(self.team_target or "")
        self.team_watch.timer.start()
        self._team_updated(info)
        if self.team_dialog is not None:
            self.team_dialog.show_connected(info, self._team_password_dropped)
        self._team_last_change = info.last_change
        self.rerun_search()

    def _team_failed(self, message: str) -> None:
        if self.team_dialog is not None and self.team_dialog.isVisible():
            self.team_dialog.show_failed(message)
        else:  # the remembered store at start: keep trying, say so
            self.team_watch.timer.start()
            self._team_lost(message)

    def _team_updated(self, info: TeamStoreInfo) -> None:
        self.team_status.setText(status_text(info))
        self.team_status.setToolTip(f"{plural(info.sources, 'source')}; searched together with your own store")
        self.team_status.show()
        if not self.search_service.team_attached and self.team_target:
            self.search_service.attach_team(self.team_target)  # it answers again
        if info.last_change != getattr(self, "_team_last_change", None):
            self._team_last_change = info.last_change
            self.rerun_search()  # someone indexed: the hits may change

    def _team_lost(self, message: str) -> None:
        self.team_status.setText("Team store unreachable · searching your own store")
        self.team_status.setToolTip(message)
        self.team_status.show()
        self.search_service.detach_team()

    def rerun_search(self) -> None:
        """The shown query once more (the stores searched changed), without leaving the page."""
        if self.query:
            self.search_service.submit(self.query, self.search_bar.mode, self.settings)

    def disconnect_team(self) -> None:
        self.team_target = None
        self.workspace.save_state(self.TEAM_STATE, "")
        self.team_watch.timer.stop()
        self.team_watch.disconnect()
        self.search_service.detach_team()
        self.team_status.hide()
        if self.team_dialog is not None:
            self.team_dialog.accept()
        self.rerun_search()
