"""Who is at the other end of a Unix socket: the peer's user id, from the kernel.

Linux: SO_PEERCRED (pid, uid, gid of the peer when it connected or listened).
macOS and the BSDs: LOCAL_PEERCRED (a struct xucred).  Elsewhere the peer cannot be
known, and the service does not run there.  Standard library only.
"""

from __future__ import annotations

import socket
import struct

SOL_LOCAL = 0  # macOS's level for LOCAL_PEERCRED


def supported() -> bool:
    return hasattr(socket, "AF_UNIX") and (hasattr(socket, "SO_PEERCRED") or hasattr(socket, "LOCAL_PEERCRED"))


def peer_uid(sock: socket.socket) -> int | None:
    """The peer's user id, or None when the system cannot say."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
            return int(uid)
        if hasattr(socket, "LOCAL_PEERCRED"):
            creds = sock.getsockopt(SOL_LOCAL, socket.LOCAL_PEERCRED, struct.calcsize("2I") + 2 + 16 * 4)
            _version, uid = struct.unpack_from("2I", creds)
            return int(uid)
    except OSError:
        return None
    return None
