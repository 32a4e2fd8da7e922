"""One window per store: a second start brings the first window to front instead.

The first window listens on a local socket named after the store's real path (per
user, so two users never meet); a second start on the same store connects, asks the
first to raise itself, and exits.  Another store gets another name: two stores can
be open side by side.  A socket left behind by a crash is removed and taken over.
"""

from __future__ import annotations

import getpass
import hashlib
import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

CONNECT_MS = 500
RAISE = b"raise\n"


def server_name(store_path: Path) -> str:
    real = os.path.realpath(store_path)
    digest = hashlib.sha256(f"{getpass.getuser()}\0{real}".encode()).hexdigest()[:16]
    return f"kenning-{digest}"


def bring_existing_to_front(store_path: Path) -> bool:
    """True when a window on this store is already open (and was asked to come forward)."""
    socket = QLocalSocket()
    socket.connectToServer(server_name(store_path))
    if not socket.waitForConnected(CONNECT_MS):
        return False
    socket.write(RAISE)
    socket.waitForBytesWritten(CONNECT_MS)
    socket.disconnectFromServer()
    return True


class InstanceServer(QObject):
    """Held by the first window: `raise_requested` fires when a second start knocks."""

    raise_requested = Signal()

    def __init__(self, store_path: Path, parent=None) -> None:
        super().__init__(parent)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        name = server_name(store_path)
        if not self.server.listen(name):
            QLocalServer.removeServer(name)  # left by a crashed window: nobody answered
            self.server.listen(name)
        self.server.newConnection.connect(self._knock)

    @property
    def listening(self) -> bool:
        return self.server.isListening()

    def _knock(self) -> None:
        while self.server.hasPendingConnections():
            connection = self.server.nextPendingConnection()
            connection.readyRead.connect(lambda c=connection: self._read(c))
            connection.disconnected.connect(connection.deleteLater)

    def _read(self, connection: QLocalSocket) -> None:
        if bytes(connection.readAll()).startswith(RAISE.strip()):
            self.raise_requested.emit()

    def close(self) -> None:
        self.server.close()


def already_open_message(store_path: Path) -> str:
    return f"Kenning is already open on {Path(store_path)}; that window was brought to the front."
